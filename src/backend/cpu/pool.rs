//! Pooling kernels over contiguous `[planes, h, w]` elements and the windows of a
//! [`PoolWindows`]: [`max_pool`] (values and plane positions, PyTorch's NaN rule; integers
//! too, a window without taps giving the type's lowest value), [`avg_pool`] (window sums over
//! given divisors, in the dtype's compute type; i64 sums wrap and divide truncating, as
//! PyTorch's) and its adjoint [`avg_pool_transpose`]. One task per block of planes on the rayon pool when the size pays.

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
    idx: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    dt: DType,
) {
    let op = win.out_plane();
    if win.planes * op == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        max_planes::<T>(dst, idx, src, so, win, max_plane::<T, C>)
    }, else match_dtype!(dt, int, T => {
        max_planes::<T>(dst, idx, src, so, win, max_plane_int::<T>)
    }))
}

/// Runs `plane(dst, idx, src, win)` over every plane of a max pooling.
fn max_planes<T: Element>(
    dst: &mut CpuBuffer,
    idx: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    win: &PoolWindows,
    plane: fn(&mut [T], &mut [i64], &[T], &PoolWindows),
) {
    let (ip, op) = (win.in_plane(), win.out_plane());
    let s = elems::<T>(src, so, win.planes * ip);
    let d = elems_mut::<T>(dst, win.planes * op);
    let ix = elems_mut::<i64>(idx, win.planes * op);
    let mut pairs: Vec<(&mut [T], &mut [i64])> = d.chunks_mut(op).zip(ix.chunks_mut(op)).collect();
    let work = op * win.rows.first().map_or(1, |r| r.1) * win.cols.first().map_or(1, |c| c.1);
    planes(&mut pairs, 1, s, ip, work, |pairs, s| {
        for ((d, ix), s) in pairs.iter_mut().zip(s.chunks(ip)) {
            plane(d, ix, s, win);
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

fn max_plane_int<T: IntMax>(d: &mut [T], ix: &mut [i64], s: &[T], win: &PoolWindows) {
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
            ix[i * ow + j] = at as i64;
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

fn max_plane<T, C>(d: &mut [T], ix: &mut [i64], s: &[T], win: &PoolWindows)
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
                    if v > best || v.is_nan() {
                        best = v;
                        at = p;
                    }
                }
            }
            d[i * ow + j] = T::narrow(best);
            ix[i * ow + j] = at as i64;
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
        idx: &mut CpuBuffer,
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
