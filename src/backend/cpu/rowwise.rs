//! Row-wise kernels of the nn family ([`RowwiseOp`]: softmax, log_softmax, layer_norm's rsqrt)
//! over contiguous `[outer, n, inner]` elements, typed (f32 in f32, f64 in f64, f16/bf16 in
//! f32) and parallel over row blocks on the rayon pool when the size pays; and [`read_at`],
//! the positional read behind the class losses' target picks.

use crate::backend::RowwiseOp;
use crate::dtype::{Element, FloatCompute, cast};
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Result, dispatch, match_dtype};
use rayon::prelude::*;

/// Elements from which a row kernel runs on the rayon pool.
const PAR_ELEMS: usize = 1 << 15;

/// The arithmetic a row kernel computes in.
trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Sub<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn max(self, o: Self) -> Self;
    fn is_finite(self) -> bool;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INF: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn exp(self) -> Self {
                <$t>::exp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                <$t>::ln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn max(self, o: Self) -> Self {
                <$t>::max(self, o)
            }
            #[inline(always)]
            fn is_finite(self) -> bool {
                <$t>::is_finite(self)
            }
        }
    };
}
real!(f32);
real!(f64);

/// `n` elements of `T` from element `off` of `buf`. Panics if the range lies outside.
pub(super) fn elems<T: Element>(buf: &CpuBuffer, off: usize, n: usize) -> &[T] {
    let size = std::mem::size_of::<T>();
    assert!(
        off.checked_add(n)
            .and_then(|e| e.checked_mul(size))
            .is_some_and(|b| b <= buf.len()),
        "internal: row kernel range outside its buffer"
    );
    // SAFETY: the range lies inside the buffer (asserted); buffers are 16-byte aligned, so
    // every element is aligned; elements are plain old data; the borrow of `buf` keeps the
    // bytes alive and unaliased by writers.
    unsafe { std::slice::from_raw_parts((buf.as_ptr() as *const T).add(off), n) }
}

/// The first `n` elements of `T` of `buf`, mutably. Panics if they lie outside.
pub(super) fn elems_mut<T: Element>(buf: &mut CpuBuffer, n: usize) -> &mut [T] {
    assert!(
        n.checked_mul(std::mem::size_of::<T>())
            .is_some_and(|b| b <= buf.len()),
        "internal: row kernel range outside its buffer"
    );
    // SAFETY: as in `elems`, and `&mut buf` gives exclusive access.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut T, n) }
}

/// See [`Backend::rowwise`](crate::backend::Backend::rowwise).
#[allow(clippy::too_many_arguments)]
pub(super) fn rowwise(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    outer: usize,
    n: usize,
    inner: usize,
    dt: DType,
    op: RowwiseOp,
) {
    let total = outer * n * inner;
    if total == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let s = elems::<T>(src, so, total);
        let d = elems_mut::<T>(dst, total);
        run::<T, C>(d, s, n, inner, op)
    })
}

fn run<T, C>(d: &mut [T], s: &[T], n: usize, inner: usize, op: RowwiseOp)
where
    T: Element + FloatCompute<C = C>,
    C: Real,
{
    if op == RowwiseOp::Rsqrt {
        let f = |(o, &x): (&mut T, &T)| *o = T::narrow(C::ONE / x.widen().sqrt());
        if s.len() >= PAR_ELEMS {
            d.par_iter_mut().zip(s.par_iter()).for_each(f);
        } else {
            d.iter_mut().zip(s.iter()).for_each(f);
        }
        return;
    }
    let log = op == RowwiseOp::LogSoftmax;
    let block = n * inner;
    if s.len() >= PAR_ELEMS && s.len() / block > 1 {
        // enough blocks to share: a few blocks per task
        let per = (PAR_ELEMS / block).max(1) * block;
        d.par_chunks_mut(per)
            .zip(s.par_chunks(per))
            .for_each(|(d, s)| {
                for (d, s) in d.chunks_mut(block).zip(s.chunks(block)) {
                    one_block::<T, C>(d, s, inner, log);
                }
            });
    } else {
        for (d, s) in d.chunks_mut(block).zip(s.chunks(block)) {
            one_block::<T, C>(d, s, inner, log);
        }
    }
}

/// The row maximum as the shift of a stable softmax: an infinite (or empty) max shifts by 0.
#[inline(always)]
fn shift<C: Real>(m: C) -> C {
    if m.is_finite() { m } else { C::ZERO }
}

/// Softmax / log_softmax of one `[n, inner]` block along `n`.
fn one_block<T, C>(d: &mut [T], s: &[T], inner: usize, log: bool)
where
    T: Element + FloatCompute<C = C>,
    C: Real,
{
    if inner == 1 {
        let m = shift(s.iter().fold(C::NEG_INF, |m, &x| m.max(x.widen())));
        let mut sum = C::ZERO;
        for &x in s {
            sum = sum + (x.widen() - m).exp();
        }
        if log {
            let ls = sum.ln();
            for (o, &x) in d.iter_mut().zip(s) {
                *o = T::narrow(x.widen() - m - ls);
            }
        } else {
            for (o, &x) in d.iter_mut().zip(s) {
                *o = T::narrow((x.widen() - m).exp() / sum);
            }
        }
        return;
    }
    // rows along a strided dim: keep `inner` running maxima and sums, walking memory in order
    let mut m = vec![C::NEG_INF; inner];
    for row in s.chunks(inner) {
        for (m, &x) in m.iter_mut().zip(row) {
            *m = m.max(x.widen());
        }
    }
    for m in m.iter_mut() {
        *m = shift(*m);
    }
    let mut sum = vec![C::ZERO; inner];
    for row in s.chunks(inner) {
        for ((a, &m), &x) in sum.iter_mut().zip(&m).zip(row) {
            *a = *a + (x.widen() - m).exp();
        }
    }
    if log {
        for a in sum.iter_mut() {
            *a = a.ln();
        }
    }
    for (orow, row) in d.chunks_mut(inner).zip(s.chunks(inner)) {
        for (((o, &x), &m), &a) in orow.iter_mut().zip(row).zip(&m).zip(&sum) {
            *o = T::narrow(if log {
                x.widen() - m - a
            } else {
                (x.widen() - m).exp() / a
            });
        }
    }
}

/// See [`Backend::read_at`](crate::backend::Backend::read_at).
pub(super) fn read_at<T: Element>(
    buf: &CpuBuffer,
    l: &Layout,
    dt: DType,
    at: &[usize],
) -> Result<Vec<T>> {
    if l.numel() > 0 && l.storage_span() * dt.size() > buf.len() {
        crate::bail!(
            InvalidArgument,
            "read",
            "tensor geometry lies outside its storage"
        );
    }
    let mut out = crate::storage::try_vec(at.len(), "read")?;
    let (sizes, strides) = (l.sizes(), l.strides());
    dispatch!(dt, S => {
        let all = elems::<S>(buf, 0, if l.numel() == 0 { 0 } else { l.storage_span() });
        for &p in at {
            assert!(p < l.numel(), "internal: read_at position out of range");
            let (mut rest, mut off) = (p, l.offset());
            for (&sz, &st) in sizes.iter().zip(strides).rev() {
                off += (rest % sz) * st;
                rest /= sz;
            }
            out.push(cast::<S, T>(all[off]));
        }
    });
    Ok(out)
}
