//! Pooling kernels over contiguous `[planes, h, w]` elements and the windows of a
//! [`PoolWindows`]: [`max_pool`] (values and, when asked, plane positions, PyTorch's NaN rule;
//! integers too, a window without taps giving the type's lowest value; f32 / f64 windows
//! tiling the plane, as 2x2 stride 2, row by row in vectorised folds), [`avg_pool`] (window
//! sums over given divisors, in the dtype's compute type; i64 sums wrap and divide
//! truncating, as PyTorch's) and its adjoint [`avg_pool_transpose`]. One task per block of
//! planes on the rayon pool when the size pays.

use super::Cpu;
use super::rowwise::{elems, elems_mut};
use crate::DType;
use crate::backend::PoolKernels;
use crate::backend::PoolWindows;
use crate::dtype::{Element, FloatCompute};
use crate::match_dtype;
use crate::storage::CpuBuffer;
use rayon::prelude::*;

/// Elements from which a kernel runs on the rayon pool.
const PAR_ELEMS: usize = 1 << 14;

/// The compute types (f32, f64).
trait Acc:
    Copy + Send + Sync + PartialOrd + std::ops::Add<Output = Self> + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const NEG_INF: Self;
    fn of_f64(v: f64) -> Self;
    fn is_nan(self) -> bool;
}

macro_rules! acc {
    ($t:ty) => {
        impl Acc for $t {
            const ZERO: Self = 0.0;
            const NEG_INF: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn of_f64(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn is_nan(self) -> bool {
                <$t>::is_nan(self)
            }
        }
    };
}
acc!(f32);
acc!(f64);

/// Runs `f(first_plane, dst_block, src_block)` over blocks of whole planes (`dp` elements
/// per plane of `d`, `sp` of `s`), in parallel when the size pays.
fn planes<A: Send, B: Sync>(
    d: &mut [A],
    dp: usize,
    s: &[B],
    sp: usize,
    work: usize,
    f: impl Fn(&mut [A], &[B]) + Sync,
) {
    let n = d.len().checked_div(dp).unwrap_or(0);
    if n == 0 || sp == 0 {
        return;
    }
    let per = (PAR_ELEMS / work.max(1)).max(1);
    if n > 1 && n * work >= PAR_ELEMS && super::threads::parallel() {
        super::threads::install(|| {
            d.par_chunks_mut(per * dp)
                .zip(s.par_chunks(per * sp))
                .for_each(|(d, s)| f(d, s))
        });
    } else {
        f(d, s);
    }
}

/// See [`PoolKernels::max_pool`].
pub(super) fn max_pool(
    dst: &mut CpuBuffer,
    idx: Option<&mut CpuBuffer>,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    dt: DType,
) {
    let op = win.out_plane();
    if win.planes * op == 0 {
        return;
    }
    if let Some((kh, kw)) = tiling(win) {
        match dt {
            DType::F32 => {
                return max_planes::<f32>(dst, idx, src, so, win, tiled::<f32>(win, (kh, kw)));
            }
            DType::F64 => {
                return max_planes::<f64>(dst, idx, src, so, win, tiled::<f64>(win, (kh, kw)));
            }
            _ => {}
        }
    }
    match_dtype!(dt, float, (T, C) => {
        max_planes::<T>(dst, idx, src, so, win, |d, ix, s| max_plane::<T, C>(d, ix, s, win))
    }, else match_dtype!(dt, int, T => {
        max_planes::<T>(dst, idx, src, so, win, |d, ix, s| max_plane_int::<T>(d, ix, s, win))
    }))
}

/// Runs `plane(dst, idx, src)` over every plane of a max pooling (`idx` only when the
/// positions are asked for).
fn max_planes<T: Element>(
    dst: &mut CpuBuffer,
    idx: Option<&mut CpuBuffer>,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    plane: impl Fn(&mut [T], Option<&mut [i64]>, &[T]) + Sync,
) {
    let (ip, op) = (win.in_plane(), win.out_plane());
    let s = elems::<T>(src, so, win.planes * ip);
    let d = elems_mut::<T>(dst, win.planes * op);
    let mut pairs: Vec<(&mut [T], Option<&mut [i64]>)> = match idx {
        Some(idx) => {
            let ix = elems_mut::<i64>(idx, win.planes * op);
            d.chunks_mut(op)
                .zip(ix.chunks_mut(op))
                .map(|(d, ix)| (d, Some(ix)))
                .collect()
        }
        None => d.chunks_mut(op).map(|d| (d, None)).collect(),
    };
    let work = op * win.rows.first().map_or(1, |r| r.1) * win.cols.first().map_or(1, |c| c.1);
    planes(&mut pairs, 1, s, ip, work, |pairs, s| {
        for ((d, ix), s) in pairs.iter_mut().zip(s.chunks(ip)) {
            plane(d, ix.as_deref_mut(), s);
        }
    });
}

/// The integer element types of max pooling and their lowest value (what a window without
/// taps gives, as PyTorch's `numeric_limits::lowest`).
trait IntMax: Copy + Ord {
    const LOWEST: Self;
}

macro_rules! int_max {
    ($($t:ty),*) => {$(
        impl IntMax for $t {
            const LOWEST: Self = <$t>::MIN;
        }
    )*};
}
int_max!(u8, i8, i16, i32, i64);

fn max_plane_int<T: IntMax>(d: &mut [T], mut ix: Option<&mut [i64]>, s: &[T], win: &PoolWindows) {
    let ow = win.cols.len();
    for (i, &(r0, nr)) in win.rows.iter().enumerate() {
        for (j, &(c0, nc)) in win.cols.iter().enumerate() {
            let mut best = T::LOWEST;
            let mut at = first_tap(win, r0, c0);
            let mut first = true;
            for kr in 0..nr {
                let base = (r0 + kr * win.dh) * win.w;
                for kc in 0..nc {
                    let p = base + c0 + kc * win.dw;
                    if first || s[p] > best {
                        best = s[p];
                        at = p;
                        first = false;
                    }
                }
            }
            d[i * ow + j] = best;
            if let Some(ix) = ix.as_deref_mut() {
                ix[i * ow + j] = at as i64;
            }
        }
    }
}

/// The plane position of a window's first taps at or after 0, PyTorch's index of a window
/// without a tap inside the input (then possibly past the plane; saturated at `i64::MAX`).
fn first_tap(win: &PoolWindows, r0: usize, c0: usize) -> usize {
    r0.saturating_mul(win.w)
        .saturating_add(c0)
        .min(i64::MAX as usize)
}

/// PyTorch's max pooling rule, folding a window's taps in row-major order from `-inf`: a tap
/// replaces the best so far when greater or NaN (so the last NaN wins, else the first of
/// equal maxima).
#[inline(always)]
fn replaces<C: Acc>(v: C, best: C) -> bool {
    v > best || v.is_nan()
}

fn max_plane<T, C>(d: &mut [T], mut ix: Option<&mut [i64]>, s: &[T], win: &PoolWindows)
where
    T: Element + FloatCompute<C = C>,
    C: Acc,
{
    let ow = win.cols.len();
    for (i, &(r0, nr)) in win.rows.iter().enumerate() {
        for (j, &(c0, nc)) in win.cols.iter().enumerate() {
            let mut best = C::NEG_INF;
            let mut at = first_tap(win, r0, c0);
            for kr in 0..nr {
                let base = (r0 + kr * win.dh) * win.w;
                for kc in 0..nc {
                    let p = base + c0 + kc * win.dw;
                    let v = s[p].widen();
                    if replaces(v, best) {
                        best = v;
                        at = p;
                    }
                }
            }
            d[i * ow + j] = T::narrow(best);
            if let Some(ix) = ix.as_deref_mut() {
                ix[i * ow + j] = at as i64;
            }
        }
    }
}

/// The kernel `(kh, kw)` of windows that tile the plane: window `(i, j)` is rows
/// `[i kh, (i + 1) kh)` and columns `[j kw, (j + 1) kw)` (stride = kernel, no dilation, none
/// clipped by padding or ceil_mode), else `None`.
fn tiling(win: &PoolWindows) -> Option<(usize, usize)> {
    let (kh, kw) = (win.rows.first()?.1, win.cols.first()?.1);
    let tiles = |v: &[(usize, usize)], k: usize, dil: usize| {
        k > 0 && (k == 1 || dil == 1) && v.iter().enumerate().all(|(i, &t)| t == (i * k, k))
    };
    (tiles(&win.rows, kh, win.dh) && tiles(&win.cols, kw, win.dw)).then_some((kh, kw))
}

/// [`max_plane`] of windows tiling the plane (see [`tiling`]; f32 / f64), the fast path of
/// the workload `max_pool2d_c64_56` (2x2, stride 2): output row by output row, the row's
/// maxima start at `-inf` (positions at the windows' first taps) and fold in the input rows
/// of the windows one after the other, each output column its `kw` adjacent taps; every
/// window's taps are thus folded in row-major order with [`replaces`], the picks the same
/// as [`max_plane`]'s bit for bit. Across the output columns the folds are independent and
/// vectorise (`kw` 2 and 3 are specialised).
fn tiled<C: Acc>(
    win: &PoolWindows,
    (kh, kw): (usize, usize),
) -> impl Fn(&mut [C], Option<&mut [i64]>, &[C]) + Sync {
    let geo = (win.w, win.cols.len(), kh);
    move |d, ix, s| match kw {
        2 => tiled_plane(d, ix, s, geo, 2),
        3 => tiled_plane(d, ix, s, geo, 3),
        _ => tiled_plane(d, ix, s, geo, kw),
    }
}

/// One plane of [`tiled`]: `(w, ow, kh)` the input width, output width and kernel height.
#[inline(always)]
fn tiled_plane<C: Acc>(
    d: &mut [C],
    ix: Option<&mut [i64]>,
    s: &[C],
    (w, ow, kh): (usize, usize, usize),
    kw: usize,
) {
    let n = ow * kw;
    match ix {
        None => {
            for (i, d) in d.chunks_exact_mut(ow).enumerate() {
                d.fill(C::NEG_INF);
                for kr in 0..kh {
                    let r = &s[(i * kh + kr) * w..][..n];
                    for (best, taps) in d.iter_mut().zip(r.chunks_exact(kw)) {
                        let mut b = *best;
                        for &v in taps {
                            if replaces(v, b) {
                                b = v;
                            }
                        }
                        *best = b;
                    }
                }
            }
        }
        Some(ix) => {
            let rows = d.chunks_exact_mut(ow).zip(ix.chunks_exact_mut(ow));
            for (i, (d, ix)) in rows.enumerate() {
                let top = i * kh * w;
                d.fill(C::NEG_INF);
                for (j, at) in ix.iter_mut().enumerate() {
                    *at = (top + j * kw) as i64;
                }
                for kr in 0..kh {
                    let row = top + kr * w;
                    let r = &s[row..][..n];
                    let cols = d.iter_mut().zip(ix.iter_mut()).zip(r.chunks_exact(kw));
                    for (j, ((best, at), taps)) in cols.enumerate() {
                        let (mut b, mut a) = (*best, *at);
                        for (kc, &v) in taps.iter().enumerate() {
                            if replaces(v, b) {
                                b = v;
                                a = (row + j * kw + kc) as i64;
                            }
                        }
                        (*best, *at) = (b, a);
                    }
                }
            }
        }
    }
}

/// See [`PoolKernels::avg_pool`].
pub(super) fn avg_pool(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    div: &[f64],
    dt: DType,
) {
    let (ip, op) = (win.in_plane(), win.out_plane());
    assert!(div.len() == op, "internal: one divisor per output position");
    if win.planes * op == 0 {
        return;
    }
    let work = op * win.rows.first().map_or(1, |r| r.1) * win.cols.first().map_or(1, |c| c.1);
    if dt == DType::I64 {
        let s = elems::<i64>(src, so, win.planes * ip);
        let d = elems_mut::<i64>(dst, win.planes * op);
        let div: Vec<i64> = div.iter().map(|&v| v as i64).collect();
        planes(d, op, s, ip, work, |d, s| {
            for (d, s) in d.chunks_mut(op).zip(s.chunks(ip)) {
                avg_plane_i64(d, s, win, &div);
            }
        });
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let s = elems::<T>(src, so, win.planes * ip);
        let d = elems_mut::<T>(dst, win.planes * op);
        let div: Vec<C> = div.iter().map(|&v| C::of_f64(v)).collect();
        planes(d, op, s, ip, work, |d, s| {
            for (d, s) in d.chunks_mut(op).zip(s.chunks(ip)) {
                avg_plane::<T, C>(d, s, win, &div);
            }
        });
    })
}

/// [`avg_plane`] of i64: a wrapping sum divided truncating (PyTorch's int64 average pooling).
fn avg_plane_i64(d: &mut [i64], s: &[i64], win: &PoolWindows, div: &[i64]) {
    let ow = win.cols.len();
    for (i, &(r0, nr)) in win.rows.iter().enumerate() {
        for (j, &(c0, nc)) in win.cols.iter().enumerate() {
            let mut sum = 0i64;
            for kr in 0..nr {
                let base = (r0 + kr * win.dh) * win.w + c0;
                for kc in 0..nc {
                    sum = sum.wrapping_add(s[base + kc * win.dw]);
                }
            }
            d[i * ow + j] = if nr * nc == 0 {
                0
            } else {
                sum.wrapping_div(div[i * ow + j])
            };
        }
    }
}

fn avg_plane<T, C>(d: &mut [T], s: &[T], win: &PoolWindows, div: &[C])
where
    T: Element + FloatCompute<C = C>,
    C: Acc,
{
    let ow = win.cols.len();
    for (i, &(r0, nr)) in win.rows.iter().enumerate() {
        for (j, &(c0, nc)) in win.cols.iter().enumerate() {
            let mut sum = C::ZERO;
            for kr in 0..nr {
                let base = (r0 + kr * win.dh) * win.w + c0;
                for kc in 0..nc {
                    sum = sum + s[base + kc * win.dw].widen();
                }
            }
            d[i * ow + j] = T::narrow(if nr * nc == 0 {
                C::ZERO
            } else {
                sum / div[i * ow + j]
            });
        }
    }
}

/// See [`PoolKernels::avg_pool_transpose`].
pub(super) fn avg_pool_transpose(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    div: &[f64],
    dt: DType,
) {
    let (ip, op) = (win.in_plane(), win.out_plane());
    assert!(div.len() == op, "internal: one divisor per output position");
    if win.planes * op == 0 || ip == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let s = elems::<T>(src, so, win.planes * op);
        let d = elems_mut::<T>(dst, win.planes * ip);
        let div: Vec<C> = div.iter().map(|&v| C::of_f64(v)).collect();
        let work = op * win.rows.first().map_or(1, |r| r.1) * win.cols.first().map_or(1, |c| c.1);
        planes(d, ip, s, op, work, |d, s| {
            for (d, s) in d.chunks_mut(ip).zip(s.chunks(op)) {
                let ow = win.cols.len();
                for (i, &(r0, nr)) in win.rows.iter().enumerate() {
                    for (j, &(c0, nc)) in win.cols.iter().enumerate() {
                        let g = s[i * ow + j].widen() / div[i * ow + j];
                        for kr in 0..nr {
                            let base = (r0 + kr * win.dh) * win.w + c0;
                            for kc in 0..nc {
                                let p = base + kc * win.dw;
                                d[p] = T::narrow(d[p].widen() + g);
                            }
                        }
                    }
                }
            }
        });
    })
}

impl PoolKernels for Cpu {
    fn max_pool(
        dst: &mut CpuBuffer,
        idx: Option<&mut CpuBuffer>,
        src: &CpuBuffer,
        so: usize,
        win: &PoolWindows,
        dt: DType,
    ) {
        max_pool(dst, idx, src, so, win, dt)
    }

    fn avg_pool(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    ) {
        avg_pool(dst, src, so, win, div, dt)
    }

    fn avg_pool_transpose(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    ) {
        avg_pool_transpose(dst, src, so, win, div, dt)
    }
}
