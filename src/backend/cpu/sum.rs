//! Full sums of flat ranges with PyTorch-like accuracy at memory speed: blocks of [`BLOCK`]
//! elements are summed with [`LANES`] independent accumulators (vectorised; AVX2 or AVX-512
//! when the CPU has it), and block sums are combined pairwise, so the rounding error grows with
//! `log2(n / BLOCK) + BLOCK / LANES` additions instead of `n`. Halves of large ranges run on
//! the kernel team; the pairwise tree does not depend on the split, so the result is the same
//! bit for bit on any number of threads. Also the strided sum over dims ([`sum_into`]) and the
//! dense full sum of a float tensor ([`sum_dense`]), the kernels of `sum`/`sum_dims`, and the
//! one-pass [`dot`] of two vectors on the same tree.
//!
//! The block loops issue no software prefetch. On a Zen 4 the hints (two lines per chunk, 2 KB
//! ahead) cost 5-10% on the `sum_f32_16M` workload (DRAM, 2 threads) and 25% on the per-op
//! sweep's `dot` and `sum_all` rows (in cache), where they only take load slots.

use super::elementwise::{Simd, simd};
use super::reduce::{elems, elems_mut};
use crate::layout::{Layout, for_each_run};
use crate::storage::CpuBuffer;
use crate::{DType, Element};
use smallvec::SmallVec;

/// Elements per leaf block of the pairwise tree.
pub(crate) const BLOCK: usize = 2048;
/// Independent accumulators per block (four AVX2 or two AVX-512 registers of f32).
const LANES: usize = 32;
/// Ranges below this many elements are summed on one thread.
const PAR_MIN: usize = 1 << 18;

/// The lanes' accumulators combined pairwise (lane k with lane k + w, halving w): the order
/// every block of [`sum`] and [`dot`] ends with.
#[inline(always)]
fn fold_lanes<A: Element>(mut acc: [A; LANES]) -> A {
    let mut w = LANES;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            acc[k] = acc[k].add(acc[k + w]);
        }
    }
    acc[0]
}

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
    fold_lanes(acc)
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

/// The leaves of the top `depth` levels of the pairwise tree over `0..n` (each a range summed
/// serially), left to right; ranges below [`PAR_MIN`] are not split further.
fn top_leaves(lo: usize, hi: usize, depth: u32, out: &mut Vec<(usize, usize)>) {
    if depth == 0 || hi - lo < PAR_MIN {
        out.push((lo, hi));
        return;
    }
    let mid = lo + split(hi - lo);
    top_leaves(lo, mid, depth - 1, out);
    top_leaves(mid, hi, depth - 1, out);
}

/// Combines leaf sums up the same tree [`top_leaves`] cut (consuming them left to right).
fn combine<A: Element>(n: usize, depth: u32, sums: &mut impl Iterator<Item = A>) -> A {
    if depth == 0 || n < PAR_MIN {
        return sums.next().expect("internal: one sum per leaf");
    }
    let m = split(n);
    let l = combine(m, depth - 1, sums);
    l.add(combine(n - m, depth - 1, sums))
}

/// The sum of `x` in `A` (each element converted by `conv`, e.g. f16 -> f32), pairwise over
/// blocks; the top levels of large ranges run their halves on the kernel team (see
/// [`super::team::run`] for when it stays on the calling thread). The tree is the same either
/// way, so the result is too.
pub(crate) fn sum<S: Copy + Sync, A: Element>(x: &[S], conv: &(impl Fn(S) -> A + Sync)) -> A {
    let simd = simd();
    let threads = super::team::size();
    if threads < 2 || x.len() < PAR_MIN {
        return pairwise(x, conv, simd);
    }
    let depth = (threads * super::team::PARTS_PER_THREAD)
        .next_power_of_two()
        .trailing_zeros();
    let mut leaves = Vec::new();
    top_leaves(0, x.len(), depth, &mut leaves);
    let sums = super::team::map(leaves.len(), &|i| {
        let (lo, hi) = leaves[i];
        pairwise(&x[lo..hi], conv, simd)
    });
    combine(x.len(), depth, &mut sums.into_iter())
}

/// [`block_body`] over the products `a[k] * b[k]` (each rounded to `T`): the same lanes and
/// order as `a.mul(b)` summed by [`sum`], so the same bits, without the product's pass.
#[inline(always)]
fn dot_block_body<T: Element>(a: &[T], b: &[T]) -> T {
    let mut acc = [T::zero(); LANES];
    // (the whole chunks end at a multiple of LANES cut from both slices, and the tail is a
    // plain zip: with the tail taken from `chunks_exact`'s remainders instead, LLVM turned the
    // main loop into two-lane vectors with spills, half the speed of the `dot` sweep row)
    let n = a.len().min(b.len()) / LANES * LANES;
    for (x, y) in a[..n].chunks_exact(LANES).zip(b[..n].chunks_exact(LANES)) {
        for k in 0..LANES {
            acc[k] = acc[k].add(x[k].mul(y[k]));
        }
    }
    for (k, (&x, &y)) in a[n..].iter().zip(&b[n..]).enumerate() {
        acc[k] = acc[k].add(x.mul(y));
    }
    fold_lanes(acc)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn dot_block_avx2<T: Element>(a: &[T], b: &[T]) -> T {
    dot_block_body(a, b)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn dot_block_avx512<T: Element>(a: &[T], b: &[T]) -> T {
    dot_block_body(a, b)
}

/// Serial pairwise sum of the products of `a` and `b` (equal lengths), as [`pairwise`].
fn dot_pairwise<T: Element>(a: &[T], b: &[T], simd: Simd) -> T {
    if a.len() <= BLOCK {
        return match simd {
            // SAFETY: the caller detected AVX-512 F/BW/VL/DQ on the running CPU.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx512 => unsafe { dot_block_avx512(a, b) },
            // SAFETY: the caller detected AVX2 on the running CPU.
            #[cfg(target_arch = "x86_64")]
            Simd::Avx2 => unsafe { dot_block_avx2(a, b) },
            _ => dot_block_body(a, b),
        };
    }
    let m = split(a.len());
    let ((al, ar), (bl, br)) = (a.split_at(m), b.split_at(m));
    dot_pairwise(al, bl, simd).add(dot_pairwise(ar, br, simd))
}

/// `sum(a * b)` of equal-length slices in one pass: [`sum`]'s tree (and team split) over the
/// products, so the result equals `a.mul(b).sum()` bit for bit (the per-op sweep row `dot`).
pub(crate) fn dot<T: Element>(a: &[T], b: &[T]) -> T {
    assert_eq!(a.len(), b.len(), "internal: dot of unequal lengths");
    let simd = simd();
    let threads = super::team::size();
    if threads < 2 || a.len() < PAR_MIN {
        return dot_pairwise(a, b, simd);
    }
    let depth = (threads * super::team::PARTS_PER_THREAD)
        .next_power_of_two()
        .trailing_zeros();
    let mut leaves = Vec::new();
    top_leaves(0, a.len(), depth, &mut leaves);
    let sums = super::team::map(leaves.len(), &|i| {
        let (lo, hi) = leaves[i];
        dot_pairwise(&a[lo..hi], &b[lo..hi], simd)
    });
    combine(a.len(), depth, &mut sums.into_iter())
}

/// [`crate::backend::ReduceKernels::dot_dense`] on the CPU: [`dot`] of two unit-stride f32/f64
/// vectors of `n` elements; `None` for other dtypes or geometries, or ones outside the buffers.
pub(crate) fn dot_dense(
    a: &CpuBuffer,
    al: &Layout,
    b: &CpuBuffer,
    bl: &Layout,
    dt: DType,
) -> Option<f64> {
    let n = al.numel();
    let unit = |l: &Layout| l.dim() == 1 && (n < 2 || l.strides()[0] == 1);
    if bl.numel() != n || !unit(al) || !unit(bl) {
        return None;
    }
    let inside = |buf: &CpuBuffer, l: &Layout| (l.offset() + n) * dt.size() <= buf.len();
    if !inside(a, al) || !inside(b, bl) {
        return None;
    }
    match dt {
        DType::F32 => {
            let (x, y) = (elems::<f32>(a), elems::<f32>(b));
            let r = dot(
                &x[al.offset()..al.offset() + n],
                &y[bl.offset()..bl.offset() + n],
            );
            Some(f64::from(r))
        }
        DType::F64 => {
            let (x, y) = (elems::<f64>(a), elems::<f64>(b));
            Some(dot(
                &x[al.offset()..al.offset() + n],
                &y[bl.offset()..bl.offset() + n],
            ))
        }
        _ => None,
    }
}

/// Sums a contiguous run with 8 independent accumulators (vectorisable).
#[inline]
fn sum_run<T: Element>(p: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let chunks = p.chunks_exact(8);
    let rem = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            acc[k] = acc[k].add(c[k]);
        }
    }
    let mut s = T::zero();
    for a in acc {
        s = s.add(a);
    }
    for &v in rem {
        s = s.add(v);
    }
    s
}

/// `a + b`, for the multiversioned row updates (inlined into each copy).
#[inline(always)]
fn add<T: Element>(a: T, b: T) -> T {
    a.add(b)
}

/// Full reductions of at least this many contiguous elements are split across the kernel team.
const PAR_SUM_MIN: usize = 1 << 20;

/// The sum of contiguous `x`: a few contiguous ranges per team thread, each summed in
/// 64K-element chunks, the range sums added in order.
fn par_sum_all<T: Element>(x: &[T]) -> T {
    let n = x.len();
    let parts = (super::team::size() * super::team::PARTS_PER_THREAD).min(n.div_ceil(1 << 16));
    let per = n.div_ceil(parts);
    let sums = super::team::map(parts, &|i| {
        let r = &x[(i * per).min(n)..((i + 1) * per).min(n)];
        r.chunks(1 << 16)
            .map(sum_run)
            .fold(T::zero(), |a, b| a.add(b))
    });
    sums.into_iter().fold(T::zero(), |a, b| a.add(b))
}

/// [`crate::backend::ReduceKernels::sum_into`] on the CPU: `dst[dl] += src[sl]` in logical order,
/// `dl` with stride 0 on the reduced dims; runs of the innermost dim that reduce into one
/// element are summed with [`sum_run`], and a `full` sum (over every dim) of a contiguous
/// source of at least [`PAR_SUM_MIN`] elements with [`par_sum_all`].
///
/// # Safety
/// Both geometries lie inside their (distinct) buffers.
pub(crate) unsafe fn sum_into<T: Element>(
    dst: &mut CpuBuffer,
    dl: &Layout,
    src: &CpuBuffer,
    sl: &Layout,
    full: bool,
) {
    let n = sl.numel();
    let (po, px) = (dst.as_mut_ptr() as *mut T, src.as_ptr() as *const T);
    if full && n >= PAR_SUM_MIN && sl.is_contiguous() {
        // SAFETY: a contiguous geometry covers `n` elements from its offset, inside the
        // buffer (caller contract); every Element is plain old data, aligned in the buffer.
        let x = unsafe { std::slice::from_raw_parts(px.add(sl.offset()), n) };
        let s = par_sum_all(x);
        // SAFETY: the one destination element lies inside `dst` (caller contract).
        unsafe { *po.add(dl.offset()) = (*po.add(dl.offset())).add(s) };
        return;
    }
    let ds: SmallVec<[isize; 6]> = dl.strides().iter().map(|&s| s as isize).collect();
    let ss: SmallVec<[isize; 6]> = sl.strides().iter().map(|&s| s as isize).collect();
    let d = sl.dim();
    if !full
        && d >= 2
        && ss[d - 1] == 1
        && ds[d - 1] == 0
        && (0..d - 1).all(|i| ds[i] != 0 || sl.sizes()[i] < 2)
    {
        // fast path (per-op sweep rows `sum`, `mean` and `nansum` over the last dim): each
        // output element is the sum of one contiguous row, in torch's order; rows on the team
        let r = sl.sizes()[d - 1];
        let simd = simd();
        let (po, px) = (po as usize, px as usize);
        crate::layout::par_for_each_run(
            &sl.sizes()[..d - 1],
            [&ds[..d - 1], &ss[..d - 1]],
            [dl.offset() as isize, sl.offset() as isize],
            (crate::layout::PAR_MIN_ELEMS / r.max(1)).max(1),
            |[oo, ox], len, [so, sx]| {
                let (po, px) = (po as *mut T, px as *const T);
                for i in 0..len as isize {
                    // SAFETY: every offset the walk yields lies inside its buffer (caller
                    // contract), a row of `r` elements from each; the buffers are distinct and
                    // no two rows share an output element (its strides are non-zero).
                    unsafe {
                        let x = std::slice::from_raw_parts(px.offset(ox + i * sx), r);
                        let p = po.offset(oo + i * so);
                        *p = (*p).add(super::row_sum::plain(x, simd));
                    }
                }
            },
        );
        return;
    }
    if !full && n > 0 && d >= 2 && ss[d - 1] == 1 && ds[d - 1] == 1 {
        // fast path (per-op sweep row `sum_0`): the last dim is kept and contiguous in both,
        // so every source row adds into one output row. Column strips on the team, each adding
        // whole row slices in the order of the walk below (the same bits) with the
        // multiversioned `update2` (a loop here would be the baseline's 16-byte vectors).
        let c = sl.sizes()[d - 1];
        let strips = if n < 2 * crate::layout::PAR_MIN_ELEMS {
            1
        } else {
            super::team::size().min(c / 64).max(1)
        };
        let (po, px) = (po as usize, px as usize);
        super::team::run(strips, &|k| {
            let (c0, c1) = (k * c / strips, (k + 1) * c / strips);
            let (po, px) = (po as *mut T, px as *const T);
            for_each_run(
                &sl.sizes()[..d - 1],
                [&ds[..d - 1], &ss[..d - 1]],
                [(dl.offset() + c0) as isize, (sl.offset() + c0) as isize],
                |[oo, ox], len, [so, sx]| {
                    for i in 0..len as isize {
                        // SAFETY: every offset the walk yields lies inside its buffer (caller
                        // contract) with its row's `c` elements, so the strip `c0..c1` does too;
                        // the buffers are distinct and strips write disjoint columns.
                        let (o, x) = unsafe {
                            (
                                std::slice::from_raw_parts_mut(po.offset(oo + i * so), c1 - c0),
                                std::slice::from_raw_parts(px.offset(ox + i * sx), c1 - c0),
                            )
                        };
                        super::elementwise::update2(o, x, &add::<T>);
                    }
                },
            );
        });
        return;
    }
    for_each_run(
        sl.sizes(),
        [&ds, &ss],
        [dl.offset() as isize, sl.offset() as isize],
        |[oo, ox], len, [so, sx]| {
            // SAFETY: every offset the walk yields lies inside its buffer (caller contract);
            // the buffers are distinct.
            unsafe {
                if so == 0 && sx == 1 {
                    let s = sum_run(std::slice::from_raw_parts(px.offset(ox), len));
                    *po.offset(oo) = (*po.offset(oo)).add(s);
                } else {
                    for i in 0..len as isize {
                        let p = po.offset(oo + i * so);
                        *p = (*p).add(*px.offset(ox + i * sx));
                    }
                }
            }
        },
    );
}

/// [`crate::backend::ReduceKernels::sum_dense`] on the CPU: the full sum of a non-overlapping dense
/// float geometry in memory order with [`sum`] (f16/bf16 accumulated in f32), narrowed to the
/// element type and written to `dst[doff]`; false (nothing done) for other dtypes, geometries
/// that are not dense, empty ones, or ones outside the buffer.
pub(crate) fn sum_dense(
    dst: &mut CpuBuffer,
    doff: usize,
    src: &CpuBuffer,
    sl: &Layout,
    dt: DType,
) -> bool {
    use crate::dtype::FloatCompute;
    let n = sl.numel();
    if n == 0 || !sl.is_non_overlapping_and_dense() || (sl.offset() + n) * dt.size() > src.len() {
        return false;
    }
    crate::match_dtype!(dt, float, T => {
        let xs = &elems::<T>(src)[sl.offset()..sl.offset() + n];
        let s = sum(xs, &|v: T| v.widen());
        elems_mut::<T>(dst)[doff] = T::narrow(s);
        true
    }, else false)
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
        let (a, b): (Vec<f32>, Vec<f32>) = (0..3_000_001)
            .map(|i| ((i % 7) as f32 * 0.37 - 1.0, (i % 11) as f32 * 0.11 + 0.5))
            .unzip();
        let prod: Vec<f32> = a.iter().zip(&b).map(|(x, y)| x * y).collect();
        let want: f32 = sum(&prod, &|v| v);
        assert_eq!(dot(&a, &b).to_bits(), want.to_bits());
        assert_eq!(
            dot_pairwise(&a[..5000], &b[..5000], Simd::Baseline).to_bits(),
            pairwise(&prod[..5000], &|v| v, Simd::Baseline).to_bits()
        );
        let y: Vec<i64> = (0..5000).collect();
        assert_eq!(sum(&y, &|v| v), 5000 * 4999 / 2);
        let e: f64 = sum(&[] as &[f64], &|v| v);
        assert_eq!(e, 0.0);
    }
}
