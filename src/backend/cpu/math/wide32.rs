//! f32 lane functions evaluated on f64 lanes with the [`fp64`](super::fp64) kernels: `expm1`,
//! `sinh`, `cosh`, `hypot`, `pow`. Every f32 input is exact in f64 and each f64 step errs by a
//! few f64 ulps at most, so the one rounding to f32 at the end dominates (within 0.5 ulp +
//! 1e-6 ulp; `pow`, whose `e^` stops at 3e-13 relative, within 0.5 ulp + 1e-5 ulp; overflow
//! and subnormal results are rounded once, by that conversion). Branch-free, so loops over
//! them vectorise. Serves the op-speed sweep's `expm1`, `sinh`, `cosh`, `elu`, `hypot` and
//! `pow` rows.

use super::fp64;
use super::sel;

/// `e^x - 1` (`±0` kept, `-1` below -60, inf above 100): `2^n p + (2^n - 1)`.
#[inline(always)]
pub(crate) fn expm1(x: f32) -> f32 {
    let y = x as f64;
    let y = sel(y < -60.0, -60.0, y);
    let y = sel(y > 100.0, 100.0, y);
    let v = fp64::expm1_pos(y) as f32;
    sel(x == 0.0, x, v)
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

/// `e^t` for a result rounded to f32 once: within 3e-13 relative (0.5 + 1e-5 ulp after that
/// rounding), `t` clamped to `[-200, 200]` (`e^-200` and `e^200` are 0 and inf in f32). Taylor
/// to degree 10 on `|r| <= ln2 / 2` and one `2^n`: three terms and a scaling step fewer than
/// [`fp64::exp`] (per-op sweep row `pow`).
#[inline(always)]
fn exp_to_f32(t: f64) -> f64 {
    let t = sel(t < -200.0, -200.0, t);
    let t = sel(t > 200.0, 200.0, t);
    let (n, r) = fp64::reduce_ln2(t);
    let q = (1.0 / 3628800.0f64).mul_add(r, 1.0 / 362880.0);
    let q = q.mul_add(r, 1.0 / 40320.0);
    let q = q.mul_add(r, 1.0 / 5040.0);
    let q = q.mul_add(r, 1.0 / 720.0);
    let q = q.mul_add(r, 1.0 / 120.0);
    let q = q.mul_add(r, 1.0 / 24.0);
    let q = q.mul_add(r, 1.0 / 6.0);
    let q = q.mul_add(r, 0.5);
    let p = q.mul_add(r * r, r);
    (1.0 + p) * fp64::pow2(n)
}

/// `x^y` with C99's `powf` values: `e^(y ln|x|)` in f64 (`y ln|x|` is off by at most a few f64
/// ulps of itself, under 5e-14 while the result is a finite f32, and [`exp_to_f32`] by 3e-13
/// relative, so the one rounding to f32 dominates), negated for a negative `x` (-0 and -inf
/// included) and an odd integer `y`, NaN for a finite negative `x` and a non-integer `y`; 1
/// for `y = ±0` (any `x`), for `x = 1` (any `y`) and for `x = -1`, `y = ±inf`. Zero and
/// infinite `|x|` fall out of `ln` and `exp` (`ln 0 = -inf`, `e^-inf = 0`, ...).
#[inline(always)]
pub(crate) fn pow(x: f32, y: f32) -> f32 {
    let (xd, yd) = (x as f64, y as f64);
    let ax = xd.abs();
    let r = exp_to_f32(yd * fp64::log(ax));
    let int = yd.trunc() == yd;
    let odd = int && (yd * 0.5).trunc() != yd * 0.5;
    let neg = x.is_sign_negative();
    let r = sel(neg && odd, -r, r);
    let r = sel(xd < 0.0 && xd > f64::NEG_INFINITY && !int, f64::NAN, r);
    let one = yd == 0.0 || xd == 1.0 || (ax == 1.0 && yd.is_infinite());
    let r = sel(one, 1.0, r);
    r as f32
}
