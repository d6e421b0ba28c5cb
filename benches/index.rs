//! Timing of the index family on [1024, 1024] f32: `gather` / out-of-place `scatter` /
//! `scatter_add` along dims 0 and 1 with a random [1024, 1024] index, and `index_select` of
//! 1024 random indices along dims 0 and 1. One line per case, `name<TAB>ms`, median of 15 runs
//! after a warm-up. Positional args select cases by substring. Run with
//! `cargo bench --bench index [name..]`.

use std::time::Instant;
use tapegrad::{DType, Tensor};

/// Median milliseconds of 15 timed calls of `f` after 3 warm-up calls.
fn median_ms(mut f: impl FnMut() -> tapegrad::Result<Tensor>) -> f64 {
    for _ in 0..3 {
        std::hint::black_box(f().expect("warm-up"));
    }
    let mut ts: Vec<f64> = (0..15)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f().expect("run"));
            t.elapsed().as_secs_f64() * 1e3
        })
        .collect();
    ts.sort_by(|a, b| a.total_cmp(b));
    ts[ts.len() / 2]
}

/// `n` pseudo-random indices in `[0, hi)` (a fixed LCG: the same on every build).
fn indices(n: usize, hi: usize) -> Vec<i64> {
    let mut s: u64 = 0x9E37_79B9_7F4A_7C15;
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            ((s >> 33) % hi as u64) as i64
        })
        .collect()
}

fn main() -> tapegrad::Result<()> {
    const N: usize = 1024;
    let want: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let x = Tensor::randn(&[N, N], DType::F32)?;
    let src = Tensor::randn(&[N, N], DType::F32)?;
    let idx2 = Tensor::from_vec(indices(N * N, N), &[N, N])?;
    let idx1 = Tensor::from_vec(indices(N, N), &[N])?;
    type Case<'a> = (String, Box<dyn FnMut() -> tapegrad::Result<Tensor> + 'a>);
    let mut cases: Vec<Case<'_>> = Vec::new();
    for d in 0..2i64 {
        let (x, src, idx2, idx1) = (&x, &src, &idx2, &idx1);
        cases.push((
            format!("gather_dim{d}"),
            Box::new(move || x.gather(d, idx2)),
        ));
        cases.push((
            format!("scatter_dim{d}"),
            Box::new(move || x.scatter(d, idx2, src)),
        ));
        cases.push((
            format!("scatter_add_dim{d}"),
            Box::new(move || x.scatter_add(d, idx2, src)),
        ));
        cases.push((
            format!("index_select_dim{d}"),
            Box::new(move || x.index_select(d, idx1)),
        ));
    }
    for (name, f) in cases.iter_mut() {
        if want.is_empty() || want.iter().any(|w| name.contains(w.as_str())) {
            println!("{name}\t{:.3}\tms", median_ms(f));
        }
    }
    Ok(())
}
