//! Per-channel normalization kernels (batch_norm, instance_norm, group_norm) over contiguous
//! `[outer, c, inner]` elements: [`channel_stats`] (mean and sum of squared deviations of every
//! channel, two passes accumulated in f64 as PyTorch's CPU kernels do) and [`channel_affine`]
//! (`y = x * scale[ch] + shift[ch]`, computed in the dtype's compute type: f32 for
//! f32/f16/bf16, f64 for f64). Both run on the rayon pool when the size pays: the statistics
//! one task per channel, the transform over blocks of rows.

use super::Cpu;
use super::rowwise::{elems, elems_mut};
use crate::DType;
use crate::backend::NormKernels;
use crate::dtype::{Element, FloatCompute};
use crate::match_dtype;
use crate::storage::CpuBuffer;
use rayon::prelude::*;

/// Elements from which a kernel runs on the rayon pool.
const PAR_ELEMS: usize = 1 << 15;

/// The compute types of the transform.
trait Fma: Copy + Send + Sync {
    fn of_f64(v: f64) -> Self;
    fn fma(self, a: Self, b: Self) -> Self;
}

impl Fma for f32 {
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v as f32
    }
    #[inline(always)]
    fn fma(self, a: Self, b: Self) -> Self {
        self * a + b
    }
}

impl Fma for f64 {
    #[inline(always)]
    fn of_f64(v: f64) -> Self {
        v
    }
    #[inline(always)]
    fn fma(self, a: Self, b: Self) -> Self {
        self * a + b
    }
}

/// Sum of `f(x)` over a run, in 8 f64 lanes (vectorizable, a fixed summation order).
#[inline(always)]
fn lane_sum<T: Element>(s: &[T], f: impl Fn(f64) -> f64) -> f64 {
    let mut acc = [0.0f64; 8];
    let mut it = s.chunks_exact(8);
    for ch in &mut it {
        for (a, &x) in acc.iter_mut().zip(ch) {
            *a += f(x.to_f64());
        }
    }
    let mut tail = 0.0;
    for &x in it.remainder() {
        tail += f(x.to_f64());
    }
    ((acc[0] + acc[4]) + (acc[1] + acc[5])) + ((acc[2] + acc[6]) + (acc[3] + acc[7])) + tail
}

/// See [`NormKernels::channel_stats`].
pub(super) fn channel_stats(
    src: &CpuBuffer,
    so: usize,
    (outer, c, inner): (usize, usize, usize),
    dt: DType,
) -> Vec<(f64, f64)> {
    let total = outer * c * inner;
    match_dtype!(dt, float, T => {
        let s = elems::<T>(src, so, total);
        let one = |ch: usize| -> (f64, f64) {
            let n = (outer * inner) as f64;
            if n == 0.0 {
                return (f64::NAN, f64::NAN);
            }
            let run = |o: usize| &s[(o * c + ch) * inner..(o * c + ch + 1) * inner];
            let sum: f64 = (0..outer).map(|o| lane_sum(run(o), |x| x)).sum();
            let mean = sum / n;
            let m2: f64 = (0..outer)
                .map(|o| lane_sum(run(o), |x| (x - mean) * (x - mean)))
                .sum();
            (mean, m2)
        };
        if total >= PAR_ELEMS && c > 1 && super::threads::parallel() {
            super::threads::install(|| (0..c).into_par_iter().map(one).collect())
        } else {
            (0..c).map(one).collect()
        }
    })
}

/// See [`NormKernels::channel_affine`].
pub(super) fn channel_affine(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    (outer, c, inner): (usize, usize, usize),
    dt: DType,
    scale: &[f64],
    shift: &[f64],
) {
    let total = outer * c * inner;
    assert!(
        scale.len() == c && shift.len() == c,
        "internal: one scale and shift per channel"
    );
    if total == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let s = elems::<T>(src, so, total);
        let d = elems_mut::<T>(dst, total);
        affine::<T, C>(d, s, c, inner, scale, shift)
    })
}

fn affine<T, C>(d: &mut [T], s: &[T], c: usize, inner: usize, scale: &[f64], shift: &[f64])
where
    T: Element + FloatCompute<C = C>,
    C: Fma,
{
    let a: Vec<C> = scale.iter().map(|&v| C::of_f64(v)).collect();
    let b: Vec<C> = shift.iter().map(|&v| C::of_f64(v)).collect();
    // rows of `inner` elements, row `r` in channel `r % c`
    let rows_per_task = (PAR_ELEMS / inner.max(1)).max(1);
    let block = rows_per_task * inner;
    let run = |(k, (d, s)): (usize, (&mut [T], &[T]))| {
        for (j, (d, s)) in d.chunks_mut(inner).zip(s.chunks(inner)).enumerate() {
            let ch = (k * rows_per_task + j) % c;
            let (a, b) = (a[ch], b[ch]);
            for (o, &x) in d.iter_mut().zip(s) {
                *o = T::narrow(x.widen().fma(a, b));
            }
        }
    };
    if s.len() >= PAR_ELEMS && s.len() > block && super::threads::parallel() {
        super::threads::install(|| {
            d.par_chunks_mut(block)
                .zip(s.par_chunks(block))
                .enumerate()
                .for_each(run)
        });
    } else {
        d.chunks_mut(block)
            .zip(s.chunks(block))
            .enumerate()
            .for_each(run);
    }
}

impl NormKernels for Cpu {
    fn channel_stats(
        src: &CpuBuffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
    ) -> Vec<(f64, f64)> {
        channel_stats(src, so, dims, dt)
    }

    fn channel_affine(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
        scale: &[f64],
        shift: &[f64],
    ) {
        channel_affine(dst, src, so, dims, dt, scale, shift)
    }
}
