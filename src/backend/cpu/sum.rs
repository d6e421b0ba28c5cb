//! Full sums of flat ranges with PyTorch-like accuracy at memory speed: blocks of [`BLOCK`]
//! elements are summed with [`LANES`] independent accumulators (vectorised; AVX2 or AVX-512
//! when the CPU has it), and block sums are combined pairwise, so the rounding error grows with
//! `log2(n / BLOCK) + BLOCK / LANES` additions instead of `n`. Halves of large ranges run on
//! the rayon pool; the pairwise tree does not depend on the split, so the result is the same
//! bit for bit on any number of threads.

use super::elementwise::{Simd, simd};
use crate::Element;

/// Elements per leaf block of the pairwise tree.
pub(crate) const BLOCK: usize = 2048;
/// Independent accumulators per block (four AVX2 or two AVX-512 registers of f32).
const LANES: usize = 32;
/// Ranges below this many elements are summed on one thread.
const PAR_MIN: usize = 1 << 18;

/// Sum of one block (any length) in the accumulator type `A`, each element converted by `conv`.
#[inline(always)]
fn block_body<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    let mut acc = [A::zero(); LANES];
    let chunks = x.chunks_exact(LANES);
    let rem = chunks.remainder();
    for c in chunks {
        for k in 0..LANES {
            acc[k] = acc[k].add(conv(c[k]));
        }
    }
    for (k, &v) in rem.iter().enumerate() {
        acc[k] = acc[k].add(conv(v));
    }
    // combine the lanes pairwise
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            acc[k] = acc[k].add(acc[k + w]);
        }
    }
    acc[0]
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn block_avx2<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    block_body(x, conv)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn block_avx512<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    block_body(x, conv)
}

/// [`block_body`], with the widest vectors available (identical results: no contraction, and
/// the lanes are the same accumulators at any width).
#[inline]
fn block<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A, simd: Simd) -> A {
    match simd {
        // SAFETY: the caller detected AVX-512 F/BW/VL/DQ on the running CPU.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { block_avx512(x, conv) },
        // SAFETY: the caller detected AVX2 on the running CPU.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { block_avx2(x, conv) },
        _ => block_body(x, conv),
    }
}

/// Where a range of `n > BLOCK` elements splits: after half of its blocks (rounded down).
fn split(n: usize) -> usize {
    n.div_ceil(BLOCK) / 2 * BLOCK
}

/// Serial pairwise sum.
fn pairwise<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A, simd: Simd) -> A {
    if x.len() <= BLOCK {
        return block(x, conv, simd);
    }
    let (l, r) = x.split_at(split(x.len()));
    pairwise(l, conv, simd).add(pairwise(r, conv, simd))
}

/// Pairwise sum whose top `depth` levels run their halves in parallel.
fn par_pairwise<S: Copy + Sync, A: Element>(
    x: &[S],
    conv: &(impl Fn(S) -> A + Sync),
    simd: Simd,
    depth: u32,
) -> A {
    if depth == 0 || x.len() < PAR_MIN {
        return pairwise(x, conv, simd);
    }
    let (l, r) = x.split_at(split(x.len()));
    let (ls, rs) = rayon::join(
        || par_pairwise(l, conv, simd, depth - 1),
        || par_pairwise(r, conv, simd, depth - 1),
    );
    ls.add(rs)
}

/// The sum of `x` in `A` (each element converted by `conv`, e.g. f16 -> f32), pairwise over
/// blocks; large ranges are split over the rayon pool unless already on a pool thread (the
/// caller may hold storage locks a stolen job would wait for).
pub(crate) fn sum<S: Copy + Sync, A: Element>(x: &[S], conv: &(impl Fn(S) -> A + Sync)) -> A {
    let simd = simd();
    let threads = rayon::current_num_threads();
    let depth = if threads < 2 || rayon::current_thread_index().is_some() {
        0
    } else {
        threads.next_power_of_two().trailing_zeros()
    };
    par_pairwise(x, conv, simd, depth)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pairwise_sum_is_accurate_and_split_independent() {
        // 0.1 added 3M times: naive f32 accumulation is off by thousands, pairwise by a few ulps
        let x = vec![0.1f32; 3_000_001];
        let s: f32 = sum(&x, &|v| v);
        assert!((s as f64 - 3_000_001.0 * 0.1f32 as f64).abs() < 0.5, "{s}");
        let serial: f32 = pairwise(&x, &|v| v, Simd::Baseline);
        assert_eq!(s.to_bits(), serial.to_bits());
        let y: Vec<i64> = (0..5000).collect();
        assert_eq!(sum(&y, &|v| v), 5000 * 4999 / 2);
        let e: f64 = sum(&[] as &[f64], &|v| v);
        assert_eq!(e, 0.0);
    }
}
