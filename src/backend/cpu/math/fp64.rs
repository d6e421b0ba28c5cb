//! The f64 lane functions: `exp`, `expm1` (internal, for `tanh`), `log`, `log1p`, `tanh`, `sigmoid`
//! (branch-free, vectorisable as the f32 ones), and `erf` (fdlibm's, scalar).
//! The algorithms and measured bounds are in the parent module's header.

const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const LN2_HI: f64 = std::f64::consts::LN_2;
const LN2_LO: f64 = 2.319_046_813_846_299_6e-17; // ln 2 - LN2_HI
const SQRT2: f64 = std::f64::consts::SQRT_2;

/// `(n, p)` with `x = n ln2 + r`, `|r| <= ln2 / 2 (+ rounding)` and `p = e^r - 1` (Taylor to
/// degree 13, truncation < 5e-18 relative); `x` must lie in `[-1100, 1100]`.
#[inline(always)]
fn reduce(x: f64) -> (i64, f64) {
    let kf = x * std::f64::consts::LOG2_E + SHIFT;
    let n = (kf.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let nf = kf - SHIFT;
    let r = (-nf).mul_add(LN2_HI, x);
    let r = (-nf).mul_add(LN2_LO, r);
    let q = 1.605_904_383_682_161_3e-10f64.mul_add(r, 2.087_675_698_786_81e-9);
    let q = q.mul_add(r, 2.505_210_838_544_172e-8);
    let q = q.mul_add(r, 2.755_731_922_398_589e-7);
    let q = q.mul_add(r, 2.755_731_922_398_589_3e-6);
    let q = q.mul_add(r, 2.480_158_730_158_73e-5);
    let q = q.mul_add(r, 1.984_126_984_126_984e-4);
    let q = q.mul_add(r, 1.388_888_888_888_889e-3);
    let q = q.mul_add(r, 8.333_333_333_333_333e-3);
    let q = q.mul_add(r, 4.166_666_666_666_666_4e-2);
    let q = q.mul_add(r, 0.166_666_666_666_666_66);
    let q = q.mul_add(r, 0.5);
    (n, q.mul_add(r * r, r))
}

/// `2^n` for `n` in `[-1022, 1023]` (wrapping: a NaN input's garbage `n` is swallowed).
#[inline(always)]
fn pow2(n: i64) -> f64 {
    f64::from_bits((n.wrapping_add(1023) as u64).wrapping_shl(52))
}

/// `e^x`: `x` clamped to `[-746, 710]`, `2^n` applied in two halves.
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    let xc = if x < -746.0 { -746.0 } else { x };
    let xc = if xc > 710.0 { 710.0 } else { xc };
    let (n, p) = reduce(xc);
    let n1 = n >> 1;
    let u = (1.0 + p) * pow2(n1);
    u * pow2(n.wrapping_sub(n1))
}

/// `e^y - 1` for `y` in `[-700, 700]` (for `tanh` and the f32 `expm1`/`sinh` of `wide32`):
/// `2^n p + (2^n - 1)` (`+0` at `y = -0`).
#[inline(always)]
pub(super) fn expm1_pos(y: f64) -> f64 {
    let (n, p) = reduce(y);
    let s = pow2(n);
    s.mul_add(p, s - 1.0)
}

/// `ln x`: as the f32 form (subnormals scaled by `2^54`), series in `s^2` to `s^20/21`
/// (truncation < 1e-18).
#[inline(always)]
pub(crate) fn log(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = if tiny { x * 18014398509481984.0 } else { x };
    let bits = xs.to_bits() as i64;
    let e = ((bits >> 52) & 0x7ff) - if tiny { 1077 } else { 1023 };
    let m = f64::from_bits(((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000) as u64);
    let big = m > SQRT2;
    let m = if big { m * 0.5 } else { m };
    let ef = (e + big as i64) as f64;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let q = (1.0 / 21.0f64).mul_add(z, 1.0 / 19.0);
    let q = q.mul_add(z, 1.0 / 17.0);
    let q = q.mul_add(z, 1.0 / 15.0);
    let q = q.mul_add(z, 1.0 / 13.0);
    let q = q.mul_add(z, 1.0 / 11.0);
    let q = q.mul_add(z, 1.0 / 9.0);
    let q = q.mul_add(z, 1.0 / 7.0);
    let q = q.mul_add(z, 1.0 / 5.0);
    let q = q.mul_add(z, 1.0 / 3.0);
    // ln(1+f) = 2s + 2s z q = f - s (f - 2 z q) (as f = 2s + s f): the rounding error of `s`
    // only reaches the small correction term
    let c = (-(z + z)).mul_add(q, f);
    let lm = (-s).mul_add(c, f);
    let r = ef.mul_add(LN2_HI, ef.mul_add(LN2_LO, lm));
    let r = if x == f64::INFINITY { x } else { r };
    let r = if x == 0.0 { f64::NEG_INFINITY } else { r };
    if x < 0.0 || x.is_nan() { f64::NAN } else { r }
}

/// `ln(1 + x)`: `ln(u) x / (u - 1)` with `u = 1 + x` rounded (the quotient corrects the
/// rounding of `u`; Goldberg's trick), `x` itself where `u == 1`.
#[inline(always)]
pub(crate) fn log1p(x: f64) -> f64 {
    let u = 1.0 + x;
    let r = log(u) * (x / (u - 1.0));
    let r = if u == f64::INFINITY { u } else { r };
    if u == 1.0 { x } else { r }
}

/// `tanh x = sign(x) e / (e + 2)`, `e = expm1(2 |x|)`, `|x|` clamped to 20 (tanh is 1 in f64
/// from 19.06 on).
#[inline(always)]
pub(crate) fn tanh(x: f64) -> f64 {
    let a = x.abs();
    let a = if a > 20.0 { 20.0 } else { a };
    let e = expm1_pos(a + a);
    (e / (e + 2.0)).copysign(x)
}

/// `1 / (1 + e^-x)`, PyTorch's formula.
#[inline(always)]
pub(crate) fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + exp(-x))
}

/// Error function: the `libm` crate's port of fdlibm's `erf` (rational fits on
/// `|x| < 0.84375`, `< 1.25`, `< 1/0.35`, `< 6`, then `±1`; under 1 ulp), the algorithm of
/// glibc's `erf`, which PyTorch's f64 `erf` calls. Scalar (its branches pick the fit), about
/// 20 ns an element; it replaced a series of up to ~200 terms per element (the f64 `erf` and
/// exact `gelu` ops of the per-op speed sweep).
#[inline]
pub(crate) fn erf(x: f64) -> f64 {
    libm::erf(x)
}
