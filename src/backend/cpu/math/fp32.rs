//! The f32 lane functions: `exp`, `exp2`, `expm1` (internal, for `tanh`), `log`, `log2`,
//! `log10`, `log1p`, `tanh`, `sigmoid`, `erf`. Each is branch-free straight-line code (range
//! reduction, a polynomial in Horner form with `mul_add`, integer exponent arithmetic, selects)
//! so a loop over slices of them vectorises; the algorithms and measured bounds are in the
//! parent module's header.

use super::sel;

/// `round(x * log2(e))` through the add-shifter trick (branch-free, no rounding instruction).
const SHIFT: f32 = 12582912.0; // 1.5 * 2^23
const LN2_HI: f32 = std::f32::consts::LN_2;
const LN2_LO: f32 = -1.904_654_2e-9; // ln 2 - LN2_HI
const SQRT2: f32 = std::f32::consts::SQRT_2;

/// `(n, p)` with `x = n ln2 + r`, `|r| <= ln2 / 2 (+ rounding)` and `p = e^r - 1` (Taylor to
/// degree 7, truncation < 1.6e-8 relative); `x` must lie in `[-150, 150]`.
#[inline(always)]
fn reduce(x: f32) -> (i32, f32) {
    let kf = x * std::f32::consts::LOG2_E + SHIFT;
    let n = (kf.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    let nf = kf - SHIFT;
    let r = (-nf).mul_add(LN2_HI, x);
    let r = (-nf).mul_add(LN2_LO, r);
    let q = (1.0 / 5040.0f32).mul_add(r, 1.0 / 720.0);
    let q = q.mul_add(r, 1.0 / 120.0);
    let q = q.mul_add(r, 1.0 / 24.0);
    let q = q.mul_add(r, 1.0 / 6.0);
    let q = q.mul_add(r, 0.5);
    (n, q.mul_add(r * r, r))
}

/// `2^n` for `n` in `[-126, 127]` (wrapping arithmetic: other `n`, from a NaN input, give some
/// value that the NaN then swallows).
#[inline(always)]
fn pow2(n: i32) -> f32 {
    f32::from_bits((n.wrapping_add(127) as u32).wrapping_shl(23))
}

/// `e^x`: `x` clamped to `[-104, 89]` (beyond: exactly 0 / inf after scaling), `2^n` applied
/// in two halves so subnormal results are rounded once.
#[inline(always)]
pub(crate) fn exp(x: f32) -> f32 {
    let xc = sel(x < -104.0, -104.0, x);
    let xc = sel(xc > 89.0, 89.0, xc);
    let (n, p) = reduce(xc);
    let n1 = n >> 1;
    let u = (1.0 + p) * pow2(n1);
    u * pow2(n.wrapping_sub(n1))
}

/// `2^x`: `n = round(x)`, `r = x - n` (exact, `|r| <= 1/2`), `2^r = 1 + r q(r)` with `q` the
/// Taylor series of `(2^r - 1)/r` to degree 6 (truncation < 6e-9 relative) and the last step
/// one fused multiply-add; `x` clamped to `[-151, 129]` (beyond: exactly 0 / inf after
/// scaling), `2^n` applied in two halves as in [`exp`]. Serves the per-op sweep's `exp2` (on
/// f32 lanes: twice the lanes of the f64 form it replaced, and a shorter polynomial).
#[inline(always)]
pub(crate) fn exp2(x: f32) -> f32 {
    let xc = sel(x < -151.0, -151.0, x);
    let xc = sel(xc > 129.0, 129.0, xc);
    let kf = xc + SHIFT;
    let n = (kf.to_bits() as i32).wrapping_sub(SHIFT.to_bits() as i32);
    let r = xc - (kf - SHIFT);
    // (ln 2)^k / k!
    let q = 1.525_273_4e-5f32.mul_add(r, 1.540_353e-4);
    let q = q.mul_add(r, 1.333_355_8e-3);
    let q = q.mul_add(r, 9.618_129e-3);
    let q = q.mul_add(r, 5.550_411e-2);
    let q = q.mul_add(r, 0.240_226_5);
    let q = q.mul_add(r, std::f32::consts::LN_2);
    let n1 = n >> 1;
    let u = q.mul_add(r, 1.0) * pow2(n1);
    u * pow2(n.wrapping_sub(n1))
}

/// `e^y - 1` for `y` in `[0, 20]` (only `tanh` calls it): `2^n p + (2^n - 1)`, no cancellation.
#[inline(always)]
fn expm1_pos(y: f32) -> f32 {
    let (n, p) = reduce(y);
    let s = pow2(n);
    s.mul_add(p, s - 1.0)
}

/// The reduction of the logarithms: `(e, f, s, c)` with `x = 2^e (1 + f)`, `1 + f` in
/// `[sqrt(1/2), sqrt(2))` (subnormals scaled by `2^23` first; `f` exact), and
/// `ln(1 + f) = f - s c`: `ln m = 2 atanh(s)`, `s = f/(2 + f)`, the series in `s^2` to `s^8/9`
/// (truncation < 3e-9), `c = f - 2 s^2 q` (as `f = 2s + s f`, the rounding of `s` only reaches
/// the small term `s c`). Edge inputs (0, negatives, inf, NaN) give garbage: see [`log_edges`].
#[inline(always)]
fn log_parts(x: f32) -> (f32, f32, f32, f32) {
    let tiny = x < f32::MIN_POSITIVE;
    let xs = sel(tiny, x * 8388608.0, x);
    let bits = xs.to_bits() as i32;
    let e = ((bits >> 23) & 0xff) - sel(tiny, 150, 127);
    let m = f32::from_bits(((bits & 0x007f_ffff) | 0x3f80_0000) as u32);
    let big = m > SQRT2;
    let m = sel(big, m * 0.5, m);
    let ef = (e + big as i32) as f32;
    let f = m - 1.0;
    let s = f / (2.0 + f);
    let z = s * s;
    let q = (1.0 / 9.0f32).mul_add(z, 1.0 / 7.0);
    let q = q.mul_add(z, 1.0 / 5.0);
    let q = q.mul_add(z, 1.0 / 3.0);
    (ef, f, s, (-(z + z)).mul_add(q, f))
}

/// C99's special values of a logarithm on top of `v`: `-inf` at `±0`, `inf` at `inf`, NaN
/// below 0 and for NaN.
#[inline(always)]
fn log_edges(x: f32, v: f32) -> f32 {
    let v = sel(x == f32::INFINITY, x, v);
    let v = sel(x == 0.0, f32::NEG_INFINITY, v);
    sel(x < 0.0 || x.is_nan(), f32::NAN, v)
}

/// `ln x = e ln2 + (f - s c)` ([`log_parts`]; `ln 2` split hi/lo).
#[inline(always)]
pub(crate) fn log(x: f32) -> f32 {
    let (ef, f, s, c) = log_parts(x);
    let lm = (-s).mul_add(c, f);
    log_edges(x, ef.mul_add(LN2_HI, ef.mul_add(LN2_LO, lm)))
}

/// `log2(e)` as f32 and the rest.
const LOG2E: f32 = std::f32::consts::LOG2_E;
const LOG2E_LO: f32 = 1.925_963e-8;
/// `log10(e)` as f32 and the rest.
const LOG10E: f32 = std::f32::consts::LOG10_E;
const LOG10E_LO: f32 = -1.010_305e-8;
/// `log10(2)` as f32 and the rest.
const LOG10_2: f32 = std::f32::consts::LOG10_2;
const LOG10_2_LO: f32 = -1.432_098_9e-8;

/// `(f - s c) k` for a constant `k = hi + lo`: `f hi` exact inside the outer fused
/// multiply-add, so only the small terms round before the last rounding.
#[inline(always)]
fn scaled(f: f32, s: f32, c: f32, hi: f32, lo: f32) -> f32 {
    let t = -s * c;
    f.mul_add(hi, t.mul_add(hi, f * lo))
}

/// `log2 x = e + ln(1 + f) log2(e)` (exact integers at powers of 2).
#[inline(always)]
pub(crate) fn log2(x: f32) -> f32 {
    let (ef, f, s, c) = log_parts(x);
    log_edges(x, ef + scaled(f, s, c, LOG2E, LOG2E_LO))
}

/// `log10 x = e log10(2) + ln(1 + f) log10(e)`.
#[inline(always)]
pub(crate) fn log10(x: f32) -> f32 {
    let (ef, f, s, c) = log_parts(x);
    let l = scaled(f, s, c, LOG10E, LOG10E_LO);
    log_edges(x, ef.mul_add(LOG10_2, ef.mul_add(LOG10_2_LO, l)))
}

/// `ln(1 + x)`: `ln(u) x / (u - 1)` with `u = 1 + x` rounded (the quotient corrects the
/// rounding of `u`; Goldberg's trick), `x` itself where `u == 1`.
#[inline(always)]
pub(crate) fn log1p(x: f32) -> f32 {
    let u = 1.0 + x;
    let r = log(u) * (x / (u - 1.0));
    let r = sel(u == f32::INFINITY, u, r);
    sel(u == 1.0, x, r)
}

/// `tanh x = sign(x) e / (e + 2)`, `e = expm1(2 |x|)`, `|x|` clamped to 10 (tanh is 1 in
/// f32 from 9.01 on).
#[inline(always)]
pub(crate) fn tanh(x: f32) -> f32 {
    let a = x.abs();
    let a = sel(a > 10.0, 10.0, a);
    let e = expm1_pos(a + a);
    (e / (e + 2.0)).copysign(x)
}

/// `1 / (1 + e^-x)`, PyTorch's formula (so below -88.72, where `e^-x` overflows, it is 0).
#[inline(always)]
pub(crate) fn sigmoid(x: f32) -> f32 {
    1.0 / (1.0 + exp(-x))
}

/// `erf(x)/x = P(x^2) / Q(x^2)` on `|x| <= 4` (a rational least-squares fit, 2e-9 relative),
/// `|x|` clamped to 4 (erf is 1 in f32 from 3.92 on), the result capped at 1.
#[inline(always)]
pub(crate) fn erf(x: f32) -> f32 {
    let a = x.abs();
    let a = sel(a > 4.0, 4.0, a);
    let t = a * a;
    let p = (-1.319_700_9e-8f32).mul_add(t, 4.683_694e-6);
    let p = p.mul_add(t, 3.795_702_3e-4);
    let p = p.mul_add(t, 3.849_626_2e-3);
    let p = p.mul_add(t, 5.431_642_6e-2);
    let p = p.mul_add(t, 0.185_206_7);
    let p = p.mul_add(t, std::f32::consts::FRAC_2_SQRT_PI);
    let q = 6.310_02e-5f32.mul_add(t, 1.307_520_1e-3);
    let q = q.mul_add(t, 1.546_199e-2);
    let q = q.mul_add(t, 0.113_959_015);
    let q = q.mul_add(t, 0.497_468_6);
    let q = q.mul_add(t, 1.0);
    let r = a * p / q;
    // from 3.919206 on, erf rounds to 1 in f32
    let r = sel(r > 1.0 || a >= 3.919_206, 1.0, r);
    r.copysign(x)
}
