//! f32 lane functions evaluated on f64 lanes with the [`fp64`](super::fp64) kernels: `expm1`,
//! `log2`, `log10`, `sinh`, `cosh`, `hypot`. Every f32 input is exact in f64 and each
//! f64 step errs by a few f64 ulps at most, so the one rounding to f32 at the end dominates
//! (within 0.5 ulp + 1e-6 ulp; overflow and subnormal results are rounded once, by that
//! conversion). Branch-free, so loops over them vectorise. Serves the op-speed sweep's `expm1`,
//! `log2`, `log10`, `sinh`, `cosh`, `elu` and `hypot` rows.

use super::fp64;
use super::sel;
use std::f64::consts::{LOG2_E, LOG10_2, LOG10_E};

/// `e^x - 1` (`±0` kept, `-1` below -60, inf above 100): `2^n p + (2^n - 1)`.
#[inline(always)]
pub(crate) fn expm1(x: f32) -> f32 {
    let y = x as f64;
    let y = sel(y < -60.0, -60.0, y);
    let y = sel(y > 100.0, 100.0, y);
    let v = fp64::expm1_pos(y) as f32;
    sel(x == 0.0, x, v)
}

/// `(e, ln m)` with `x = 2^e m`, `m` in `[sqrt(1/2), sqrt 2)`, on f64 lanes (an f32, subnormals
/// included, is a normal f64, so no scaling step): `ln m = 2 atanh s`, `s = (m-1)/(m+1)`,
/// `|s| < 0.1716`, the odd series to `s^11/11` (truncation below `s^13/13 / 2s < 2^-35`
/// relative, enough for one rounding to f32), formed as in `fp64::log`.
#[inline(always)]
fn log_parts(x: f32) -> (f64, f64) {
    let bits = (x as f64).to_bits() as i64;
    let m = f64::from_bits(((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000) as u64);
    let big = m > std::f64::consts::SQRT_2;
    let m = sel(big, m * 0.5, m);
    let ef = fp64::exponent_value(((bits >> 52) & 0x7ff) + big as i64, 1023.0);
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let q = (1.0 / 11.0f64).mul_add(z, 1.0 / 9.0);
    let q = q.mul_add(z, 1.0 / 7.0);
    let q = q.mul_add(z, 1.0 / 5.0);
    let q = q.mul_add(z, 1.0 / 3.0);
    let c = (-(z + z)).mul_add(q, f);
    (ef, (-s).mul_add(c, f))
}

/// C99's special values of a logarithm on top of `v`: `-inf` at `±0`, `inf` at `inf`, NaN
/// below 0 and for NaN.
#[inline(always)]
fn log_edges(x: f32, v: f32) -> f32 {
    let v = sel(x == f32::INFINITY, x, v);
    let v = sel(x == 0.0, f32::NEG_INFINITY, v);
    sel(x < 0.0 || x.is_nan(), f32::NAN, v)
}

/// `log2 x = e + ln m / ln 2` (exact integers at powers of 2; `log2(±0) = -inf`, NaN below 0).
#[inline(always)]
pub(crate) fn log2(x: f32) -> f32 {
    let (e, lm) = log_parts(x);
    log_edges(x, lm.mul_add(LOG2_E, e) as f32)
}

/// `log10 x = e log10 2 + ln m / ln 10` (`log10(±0) = -inf`, NaN below 0).
#[inline(always)]
pub(crate) fn log10(x: f32) -> f32 {
    let (e, lm) = log_parts(x);
    log_edges(x, e.mul_add(LOG10_2, lm * LOG10_E) as f32)
}

/// `sinh x = sign(x) (e + e/(e + 1))/2` with `e = expm1 |x|` (no cancellation near 0; `±0`
/// kept, `|x|` clamped to 100, where it is inf in f32).
#[inline(always)]
pub(crate) fn sinh(x: f32) -> f32 {
    let a = (x as f64).abs();
    let a = sel(a > 100.0, 100.0, a);
    let e = fp64::expm1_pos(a);
    let v = 0.5 * (e + e / (e + 1.0));
    (v as f32).copysign(x)
}

/// `cosh x = (E + 1/E)/2`, `E = e^|x|` (`|x|` clamped to 100).
#[inline(always)]
pub(crate) fn cosh(x: f32) -> f32 {
    let a = (x as f64).abs();
    let a = sel(a > 100.0, 100.0, a);
    let e = fp64::exp(a);
    (0.5 * (e + 1.0 / e)) as f32
}

/// `hypot(x, y) = sqrt(x^2 + y^2)` in f64 (the squares exact, one rounding each for the sum
/// and root): inf if either is infinite, even with a NaN (C99).
#[inline(always)]
pub(crate) fn hypot(x: f32, y: f32) -> f32 {
    let (xd, yd) = (x as f64, y as f64);
    let r = xd.mul_add(xd, yd * yd).sqrt() as f32;
    if x.is_infinite() || y.is_infinite() {
        f32::INFINITY
    } else {
        r
    }
}
