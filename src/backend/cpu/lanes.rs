//! Vectorised folds of contiguous float rows: the fast paths of [`super::reduce`]'s row
//! reductions (per-op sweep rows `prod`, `norm`, `logsumexp`). Each keeps `L` interleaved lane
//! accumulators (enough independent chains to hide the latency of an AVX-512 multiply or add),
//! combines them in lane order, then folds the tail in order; each is compiled for the
//! baseline, AVX2+FMA and AVX-512 and picked at run time, like `elementwise`'s loops.
//!
//! - `prod`: lane products in the element type. PyTorch's vectorised reduction also multiplies
//!   in lanes, so neither order is its exact rounding; the values agree to the last few ulps.
//!   Rows under 64 elements multiply sequentially from 1 (the fold's order).
//! - `abs_sum`: `sum(|x|)` or `sum(x^2)` in f64 lanes: the L1/L2 sums of `norm` up to their
//!   rounding order; an empty row gives the fold's `-0.0` (the zero `Iterator::sum` starts
//!   from).
//! - `logsumexp_f32`: the largest element `m` (NaN ignored) and whether a NaN was seen, then
//!   `m + ln(sum(exp(x - m)))` with `x - m` and `exp` ([`super::math::fp32`]) in f32 (as
//!   PyTorch's f32 kernel) and the sum in f64 lanes; a NaN row gives NaN and an infinite `m`
//!   gives `m`, as the f64 folds do.

use super::elementwise::{Simd, simd};
use super::math::fp32;
use crate::Element;
use crate::dtype::cast;

/// Interleaved lane accumulators of a fold.
const L: usize = 64;

/// Defines `pub(crate) fn $name` dispatching to copies of `$body` compiled for the baseline,
/// AVX2+FMA and AVX-512.
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident<$($g:ident: $b:path),*>($x:ident: $t:ty) -> $r:ty = $body:ident) => {
        $(#[$doc])*
        pub(crate) fn $name<$($g: $b),*>($x: $t) -> $r {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2<$($g: $b),*>($x: $t) -> $r {
                $body::<$($g),*>($x)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,fma")]
            fn avx512<$($g: $b),*>($x: $t) -> $r {
                $body::<$($g),*>($x)
            }
            match simd() {
                // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ and FMA (detected by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => unsafe { avx512::<$($g),*>($x) },
                // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { avx2::<$($g),*>($x) },
                _ => $body::<$($g),*>($x),
            }
        }
    };
}

#[inline(always)]
fn prod_body<T: Element>(x: &[T]) -> T {
    if x.len() < 64 {
        return x.iter().fold(T::one(), |a, &v| a.mul(v));
    }
    let mut acc = [T::one(); L];
    let chunks = x.chunks_exact(L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..L {
            acc[l] = acc[l].mul(ch[l]);
        }
    }
    acc.iter().chain(tail).fold(T::one(), |a, &v| a.mul(v))
}

multiversion!(
    /// The product of an f32/f64 row (see the module doc).
    fn prod<T: Element>(x: &[T]) -> T = prod_body
);

/// A flag type choosing `sum(x^2)` (`true`) or `sum(|x|)` for [`abs_sum`].
pub(crate) trait Squares {
    const SQ: bool;
}
/// `sum(x^2)`.
pub(crate) struct Sq;
impl Squares for Sq {
    const SQ: bool = true;
}
/// `sum(|x|)`.
pub(crate) struct Abs;
impl Squares for Abs {
    const SQ: bool = false;
}

#[inline(always)]
fn abs_sum_body<T: Element, S: Squares>(x: &[T]) -> f64 {
    if x.is_empty() {
        return std::iter::empty::<f64>().sum();
    }
    let term = |v: T| {
        let b = cast::<T, f64>(v);
        if S::SQ { b * b } else { b.abs() }
    };
    let mut acc = [0.0f64; L];
    let chunks = x.chunks_exact(L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..L {
            acc[l] += term(ch[l]);
        }
    }
    acc.iter().sum::<f64>() + tail.iter().map(|&v| term(v)).sum::<f64>()
}

multiversion!(
    /// `sum(x^2)` or `sum(|x|)` of a row in f64 (see the module doc).
    fn abs_sum<T: Element, S: Squares>(x: &[T]) -> f64 = abs_sum_body
);

/// Lanes of the logsumexp folds (each `exp` needs many registers of its own).
const LSE_L: usize = 16;

#[inline(always)]
#[allow(clippy::eq_op)]
fn lse_f32_body(x: &[f32]) -> f64 {
    let mut mx = [f32::NEG_INFINITY; LSE_L];
    let mut nan = [false; LSE_L];
    let chunks = x.chunks_exact(LSE_L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..LSE_L {
            let v = ch[l];
            mx[l] = if v > mx[l] { v } else { mx[l] };
            nan[l] |= v != v;
        }
    }
    let mut m = f32::NEG_INFINITY;
    let mut any_nan = nan.iter().any(|&b| b);
    for &v in mx.iter().chain(tail) {
        m = if v > m { v } else { m };
        any_nan |= v != v;
    }
    if any_nan {
        return f64::NAN;
    }
    if m.is_infinite() {
        return m as f64;
    }
    let mut acc = [0.0f64; LSE_L];
    let chunks = x.chunks_exact(LSE_L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..LSE_L {
            acc[l] += fp32::exp(ch[l] - m) as f64;
        }
    }
    let mut s: f64 = acc.iter().sum();
    for &v in tail {
        s += fp32::exp(v - m) as f64;
    }
    m as f64 + s.ln()
}

multiversion!(
    /// `logsumexp` of an f32 row (see the module doc; an empty row gives `-inf`).
    fn logsumexp_f32<>(x: &[f32]) -> f64 = lse_f32_body
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rows_match_the_f64_formula() {
        let x: Vec<f32> = (0..1000)
            .map(|i| ((i * 37) % 101) as f32 * 0.3 - 15.0)
            .collect();
        let m = x.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
        let want = m + x.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>().ln();
        assert!((logsumexp_f32(&x) - want).abs() < 1e-6 * want.abs());
        assert!(logsumexp_f32(&[1.0, f32::NAN, 2.0]).is_nan());
        assert_eq!(logsumexp_f32(&[f32::INFINITY, 1.0]), f64::INFINITY);
        assert_eq!(logsumexp_f32(&[f32::NEG_INFINITY; 3]), f64::NEG_INFINITY);
        assert_eq!(logsumexp_f32(&[]), f64::NEG_INFINITY);
    }
}
