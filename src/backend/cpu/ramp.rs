//! The ramps of `arange` and `linspace` ([`CopyKernels::ramp`](crate::backend::CopyKernels)),
//! written in place on the kernel team. f32 and f64 take vector loops (AVX2/AVX-512 when the CPU
//! has them) over an `i32` element counter, which converts to a float in one vector instruction
//! (a `usize` index does not below AVX-512DQ, and the per-element scalar conversion was most of
//! the cost: op_speed rows `arange` and `linspace`, 2^20 f32). Other dtypes, and ramps longer
//! than `i32::MAX`, take the scalar loop; every path computes the same values.

use super::elementwise::{Simd, simd};
use crate::backend::Ramp;
use crate::dtype::{Element, cast};
use crate::layout::{PAR_MIN_ELEMS, par_ranges};
use crate::{DType, dispatch};

/// Element `i` of `n` in the scalar formula of `r` (see [`Ramp`]).
#[inline(always)]
fn scalar_value<T: Element>(r: &Ramp, n: usize, i: usize) -> T {
    if r.fused {
        // (only f32/f64 ramps are fused; see `fused_value`)
        return if T::DTYPE == DType::F32 {
            cast::<f32, T>(fused_f32(r, n, i))
        } else {
            cast::<f64, T>(fused_f64(r, n, i))
        };
    }
    if i < r.half {
        cast::<f64, T>(r.start + r.step * i as f64)
    } else {
        cast::<f64, T>(r.end - r.step * (n - 1 - i) as f64)
    }
}

/// The step of a fused f32 ramp: `(end - start) / (n - 1)` in f32 (0 for one element).
#[inline(always)]
fn step_f32(r: &Ramp, n: usize) -> f32 {
    if n > 1 {
        (r.end as f32 - r.start as f32) / (n - 1) as f32
    } else {
        0.0
    }
}

/// The step of a fused f64 ramp.
#[inline(always)]
fn step_f64(r: &Ramp, n: usize) -> f64 {
    if n > 1 {
        (r.end - r.start) / (n - 1) as f64
    } else {
        0.0
    }
}

/// Element `i` of a fused f32 ramp: `fma(step, i, start)` below `half`, else
/// `fma(-step, n - 1 - i, end)`, all in f32.
#[inline(always)]
fn fused_f32(r: &Ramp, n: usize, i: usize) -> f32 {
    let step = step_f32(r, n);
    if i < r.half {
        step.mul_add(i as f32, r.start as f32)
    } else {
        (-step).mul_add((n - 1 - i) as f32, r.end as f32)
    }
}

/// Element `i` of a fused f64 ramp.
#[inline(always)]
fn fused_f64(r: &Ramp, n: usize, i: usize) -> f64 {
    let step = step_f64(r, n);
    if i < r.half {
        step.mul_add(i as f64, r.start)
    } else {
        (-step).mul_add((n - 1 - i) as f64, r.end)
    }
}

/// Elements `lo..hi` of the f32 ramp into `out` (`hi - lo` long; `n <= i32::MAX`).
#[inline(always)]
fn body_f32(out: &mut [f32], r: &Ramp, n: usize, lo: usize) {
    let mid = r.half.clamp(lo, lo + out.len());
    let (a, b) = out.split_at_mut(mid - lo);
    if r.fused {
        let (step, s, e) = (step_f32(r, n), r.start as f32, r.end as f32);
        for (o, i) in a.iter_mut().zip(lo as i32..) {
            *o = step.mul_add(i as f32, s);
        }
        let mut j = (n - mid) as i32 - 1;
        for o in b {
            *o = (-step).mul_add(j as f32, e);
            j -= 1;
        }
    } else {
        for (o, i) in a.iter_mut().zip(lo as i32..) {
            *o = (r.start + r.step * f64::from(i)) as f32;
        }
        let mut j = (n - mid) as i32 - 1;
        for o in b {
            *o = (r.end - r.step * f64::from(j)) as f32;
            j -= 1;
        }
    }
}

/// Elements `lo..hi` of the f64 ramp into `out` (`hi - lo` long; `n <= i32::MAX`).
#[inline(always)]
fn body_f64(out: &mut [f64], r: &Ramp, n: usize, lo: usize) {
    let mid = r.half.clamp(lo, lo + out.len());
    let (a, b) = out.split_at_mut(mid - lo);
    let mut j = (n - mid) as i32 - 1;
    if r.fused {
        let step = step_f64(r, n);
        for (o, i) in a.iter_mut().zip(lo as i32..) {
            *o = step.mul_add(f64::from(i), r.start);
        }
        for o in b {
            *o = (-step).mul_add(f64::from(j), r.end);
            j -= 1;
        }
    } else {
        for (o, i) in a.iter_mut().zip(lo as i32..) {
            *o = r.start + r.step * f64::from(i);
        }
        for o in b {
            *o = r.end - r.step * f64::from(j);
            j -= 1;
        }
    }
}

/// Defines `$name(out, r, n, lo, simd)`: `$body` compiled for AVX-512, AVX2+FMA and the
/// baseline, picked by `simd` (the same operations, so the same values, on each).
macro_rules! dispatched {
    ($name:ident, $body:ident, $t:ty) => {
        fn $name(out: &mut [$t], r: &Ramp, n: usize, lo: usize, level: Simd) {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2(out: &mut [$t], r: &Ramp, n: usize, lo: usize) {
                $body(out, r, n, lo)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,fma")]
            fn avx512(out: &mut [$t], r: &Ramp, n: usize, lo: usize) {
                $body(out, r, n, lo)
            }
            match level {
                // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected by `simd()`).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => unsafe { avx512(out, r, n, lo) },
                // SAFETY: the CPU supports AVX2 and FMA (detected by `simd()`).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { avx2(out, r, n, lo) },
                _ => $body(out, r, n, lo),
            }
        }
    };
}

dispatched!(ramp_f32, body_f32, f32);
dispatched!(ramp_f64, body_f64, f64);

/// Writes the `n` elements of ramp `r` as dtype `dt` to `base + off` (in elements).
///
/// # Safety
/// The `n` elements of `dt` from element `off` of `base` lie inside one live allocation that
/// nothing else reads or writes during the call.
pub(crate) unsafe fn ramp(base: *mut u8, off: usize, n: usize, dt: DType, r: Ramp) {
    // (the address as an integer so the range closure can run on other threads)
    let base = base as usize;
    let level = simd();
    let vector = n <= i32::MAX as usize;
    dispatch!(dt, T => {
        par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
            if vector && T::DTYPE == DType::F32 {
                // SAFETY: T is f32 (checked just above); `off + lo .. off + hi` lies inside the
                // allocation (caller contract) and the team's ranges are disjoint.
                let out = unsafe {
                    std::slice::from_raw_parts_mut((base as *mut f32).add(off + lo), hi - lo)
                };
                ramp_f32(out, &r, n, lo, level);
            } else if vector && T::DTYPE == DType::F64 {
                // SAFETY: as above, T is f64.
                let out = unsafe {
                    std::slice::from_raw_parts_mut((base as *mut f64).add(off + lo), hi - lo)
                };
                ramp_f64(out, &r, n, lo, level);
            } else {
                // SAFETY: as above, in T.
                let out = unsafe {
                    std::slice::from_raw_parts_mut((base as *mut T).add(off + lo), hi - lo)
                };
                for (k, o) in out.iter_mut().enumerate() {
                    *o = scalar_value::<T>(&r, n, lo + k);
                }
            }
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every path (vector levels, scalar) writes the scalar formula's values.
    #[test]
    fn vector_paths_equal_the_scalar_formula() {
        for &(start, end, n, fused) in &[
            (-1.0, 3.0, 100_003usize, true),
            (0.1, 7.3, 12_345, true),
            (0.5, 1e5, 399_998, false),
            (0.0, 1.0, 1, true),
            (-0.0, 1.0, 2, true),
        ] {
            let half = if fused { n / 2 } else { n };
            let step = if fused { 0.0 } else { 0.25 };
            let r = Ramp {
                start,
                end,
                step,
                half,
                fused,
            };
            let want32: Vec<f32> = (0..n).map(|i| scalar_value::<f32>(&r, n, i)).collect();
            let want64: Vec<f64> = (0..n).map(|i| scalar_value::<f64>(&r, n, i)).collect();
            for level in [Simd::Baseline, simd()] {
                for lo in [0, 17.min(n)] {
                    let mut o32 = vec![0f32; n - lo];
                    ramp_f32(&mut o32, &r, n, lo, level);
                    assert!(
                        o32.iter()
                            .zip(&want32[lo..])
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    );
                    let mut o64 = vec![0f64; n - lo];
                    ramp_f64(&mut o64, &r, n, lo, level);
                    assert!(
                        o64.iter()
                            .zip(&want64[lo..])
                            .all(|(a, b)| a.to_bits() == b.to_bits())
                    );
                }
            }
        }
    }
}
