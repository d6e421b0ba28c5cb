//! Workload benchmark: one line per workload, `name<TAB>figure<TAB>unit`, median of >= 5 timed
//! runs after a warm-up. Positional args select workloads by name; `--flags` are ignored.

use std::time::Instant;
use tapegrad::{DType, Tensor};

type R = tapegrad::Result<()>;

/// Median seconds of `runs` timed calls of `f` after one warm-up call.
fn median(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    f().expect("warm-up");
    let mut ts: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            f().expect("run");
            t.elapsed().as_secs_f64()
        })
        .collect();
    ts.sort_by(|a, b| a.partial_cmp(b).unwrap());
    ts[ts.len() / 2]
}

fn matmul(n: usize, dt: DType, runs: usize) -> f64 {
    let a = Tensor::randn(&[n, n], dt).unwrap();
    let b = Tensor::randn(&[n, n], dt).unwrap();
    let t = median(runs, || a.matmul(&b).map(|_| ()));
    2.0 * (n as f64).powi(3) / t / 1e9
}

fn run(name: &str) -> Option<(f64, &'static str)> {
    const N4M: usize = 1 << 22;
    Some(match name {
        "matmul_f32_256" => (matmul(256, DType::F32, 21), "GFLOP/s"),
        "matmul_f32_512" => (matmul(512, DType::F32, 11), "GFLOP/s"),
        "matmul_f32_1024" => (matmul(1024, DType::F32, 7), "GFLOP/s"),
        "matmul_f32_2048" => (matmul(2048, DType::F32, 5), "GFLOP/s"),
        "matmul_f64_1024" => (matmul(1024, DType::F64, 5), "GFLOP/s"),
        "add_f32_4M" => {
            let a = Tensor::randn(&[N4M], DType::F32).unwrap();
            let b = Tensor::randn(&[N4M], DType::F32).unwrap();
            let t = median(11, || a.add(&b).map(|_| ()));
            (12.0 * N4M as f64 / t / 1e9, "GB/s")
        }
        "add_out_f32_4M" => {
            let a = Tensor::randn(&[N4M], DType::F32).unwrap();
            let b = Tensor::randn(&[N4M], DType::F32).unwrap();
            let out = Tensor::zeros(&[N4M], DType::F32).unwrap();
            let t = median(11, || a.add_out(&b, &out).map(|_| ()));
            (12.0 * N4M as f64 / t / 1e9, "GB/s")
        }
        "add_inplace_f32_4M" => {
            let a = Tensor::randn(&[N4M], DType::F32).unwrap();
            let t = median(11, || a.add_(1.0).map(|_| ()));
            (8.0 * N4M as f64 / t / 1e9, "GB/s")
        }
        "sum_f32_16M" => {
            let n = 1usize << 24;
            let a = Tensor::randn(&[n], DType::F32).unwrap();
            let t = median(11, || a.sum().map(|_| ()));
            (4.0 * n as f64 / t / 1e9, "GB/s")
        }
        "transpose_copy_4096" => {
            let n = 4096usize;
            let a = Tensor::randn(&[n, n], DType::F32).unwrap();
            let t = median(5, || a.t()?.contiguous().map(|_| ()));
            (8.0 * (n * n) as f64 / t / 1e9, "GB/s")
        }
        "autograd_chain_1000ops" => {
            let t = median(11, || {
                let x = Tensor::randn(&[16], DType::F32)?.requires_grad_(true)?;
                let mut y = x.clone();
                for _ in 0..500 {
                    y = y.mul(1.0001)?;
                    y = y.add(0.1)?;
                }
                y.sum()?.backward()
            });
            (t * 1e6 / 1000.0, "us/op")
        }
        "inplace_view_100" => {
            let t = median(11, || {
                let x = Tensor::randn(&[1000], DType::F32)?.requires_grad_(true)?;
                let y = x.copy()?;
                for i in 0..100 {
                    y.narrow(0, 10 * i, 10)?.mul_(2.0)?;
                }
                y.sum()?.backward()
            });
            (t * 1e6 / 100.0, "us/op")
        }
        n if n.starts_with("sparse_slice_") => return sparse_workload(n),
        _ => return None,
    })
}

const ALL: [&str; 12] = [
    "matmul_f32_256",
    "matmul_f32_512",
    "matmul_f32_1024",
    "matmul_f32_2048",
    "matmul_f64_1024",
    "add_f32_4M",
    "add_out_f32_4M",
    "add_inplace_f32_4M",
    "sum_f32_16M",
    "transpose_copy_4096",
    "autograd_chain_1000ops",
    "inplace_view_100",
];

fn main() {
    let sel: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    for name in ALL.iter().chain(SPARSE.iter()) {
        if !sel.is_empty() && !sel.iter().any(|s| s == name) {
            continue;
        }
        if let Some((v, unit)) = run(name) {
            println!("{name}\t{v:.3}\t{unit}");
        }
    }
}

/// The sparse workloads (kept apart from `ALL` so other workload lists merge cleanly).
const SPARSE: [&str; 4] = [
    "sparse_slice_csr_1M",
    "sparse_slice_coo_1M",
    "sparse_slice_csr_1M_backward",
    "sparse_slice_coo_1M_backward",
];

/// 10000 x 10000 with 1,000,000 distinct random positions (StdRng seed 0) and f32 values in
/// [0, 1): (coalesced COO, CSR). Same sizes and distribution as benches/torch_workloads.py
/// (numpy's generator cannot be reproduced here, so the positions differ).
fn sparse_1m() -> tapegrad::Result<(Tensor, Tensor)> {
    use rand::{Rng, SeedableRng};
    const N: u64 = 10_000;
    const NNZ: usize = 1_000_000;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut pos: Vec<u64> = Vec::with_capacity(NNZ);
    while pos.len() < NNZ {
        while pos.len() < NNZ {
            pos.push(rng.gen_range(0..N * N));
        }
        pos.sort_unstable();
        pos.dedup();
    }
    let mut ix: Vec<i64> = pos.iter().map(|p| (p / N) as i64).collect();
    ix.extend(pos.iter().map(|p| (p % N) as i64));
    let vals: Vec<f32> = (0..NNZ).map(|_| rng.r#gen::<f32>()).collect();
    let coo = Tensor::sparse_coo(
        &Tensor::from_vec(ix, &[2, NNZ])?,
        &Tensor::from_vec(vals, &[NNZ])?,
        &[N as usize, N as usize],
    )?;
    let csr = coo.to_sparse_csr()?;
    Ok((coo, csr))
}

/// `sparse_slice_{csr,coo}_1M[_backward]`: x[2000:7000, 1000:6000] (ms). The backward figure
/// times `autograd::grad` of the slice w.r.t. x with ones on the output's pattern.
fn sparse_workload(name: &str) -> Option<(f64, &'static str)> {
    let (coo, csr) = sparse_1m().expect("sparse data");
    let x = if name.contains("_csr_") { csr } else { coo };
    let (axes, starts, ends) = ([0i64, 1], [2000i64, 1000], [7000i64, 6000]);
    let t = if name.ends_with("_backward") {
        let x = x.requires_grad_(true).expect("leaf");
        let out = tapegrad::sparse::slice(&x, &axes, &starts, &ends).expect("slice");
        let ones = out
            .values()
            .unwrap()
            .detach()
            .mul(0.0)
            .unwrap()
            .add(1.0)
            .unwrap();
        let seed = if x.layout_kind() == tapegrad::LayoutKind::SparseCsr {
            Tensor::sparse_csr(
                &out.crow_indices().unwrap(),
                &out.col_indices().unwrap(),
                &ones,
                &out.shape(),
            )
        } else {
            Tensor::sparse_coo(&out.indices().unwrap(), &ones, &out.shape())
        }
        .expect("seed");
        median(11, || {
            tapegrad::autograd::grad(
                &[out.clone()],
                &[x.clone()],
                &[Some(seed.clone())],
                true,
                false,
                false,
            )
            .map(|_| ())
        })
    } else {
        median(11, || {
            tapegrad::sparse::slice(&x, &axes, &starts, &ends).map(|_| ())
        })
    };
    Some((t * 1e3, "ms"))
}
