//! The f32 trigonometric lane functions: `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2`.
//! All but `asin`/`acos` are evaluated on f64 lanes (every f32 input is exact in f64, and the
//! f64 error of each step is far below half an f32 ulp, so the one rounding to f32 at the end
//! dominates); `asin`/`acos` run on f32 lanes, twice as many per vector, with the one
//! difference that could cancel (`pi/2 - 2 asin s`) split exactly. Branch-free: the range
//! reductions and polynomials are straight-line code with [`sel`] selects, so loops over them
//! vectorise (the table reads of the reduction become gathers). Serves the op-speed sweep's
//! `sin`, `cos`, `tan`, `asin`, `acos`, `atan`, `atan2` rows.
//!
//! `sin`/`cos`/`tan` reduce `|x|` modulo `pi/2` exactly for every finite f32 (Payne–Hanek in
//! 64-bit integers: the 24-bit significand times the 96 bits of `2/pi` that matter at its
//! exponent, read from a table built at compile time), so huge arguments are as accurate as
//! small ones, as in PyTorch's (SLEEF's) kernels.

use super::sel;
use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};

/// `2/pi` in 32-bit words, most significant first (bit 1 of the fraction is the top bit).
const TWO_OVER_PI: [u32; 10] = [
    0xa2f9836e, 0x4e441529, 0xfc2757d1, 0xf534ddc0, 0xdb629599, 0x3c439041, 0xfe5163ab, 0xdebbc561,
    0xb7246e3a, 0x424dd2e0,
];

/// Bit `i` of the fraction of `2/pi` (weight `2^-i`; zero for `i <= 0`).
const fn bit(i: i32) -> u32 {
    if i <= 0 {
        return 0;
    }
    let k = (i - 1) as usize;
    (TWO_OVER_PI[k / 32] >> (31 - k % 32)) & 1
}

/// For each biased f32 exponent `E`, word `w` (most significant first) of the 96 bits of `2/pi`
/// from weight `2^-(q-1)` on, with `q = E - 150` the exponent of the integer significand: the
/// bits of `x 2/pi` above them are multiples of 4 (whole turns), those below fall under `2^-62`
/// of a quarter turn. One table per word, so each read is a plain 32-bit gather.
const fn window(w: usize) -> [u32; 256] {
    let mut t = [0u32; 256];
    let mut e = 0;
    while e < 256 {
        let i0 = e as i32 - 151;
        let mut v = 0u32;
        let mut j = 0;
        while j < 32 {
            v = (v << 1) | bit(i0 + 32 * w as i32 + j);
            j += 1;
        }
        t[e] = v;
        e += 1;
    }
    t
}
const W0: [u32; 256] = window(0);
const W1: [u32; 256] = window(1);
const W2: [u32; 256] = window(2);

/// The Cody–Waite bound: [`reduce`] takes the small-argument path for `|x| <` this. Below it
/// `n = round(|x| 2/pi) < 2^13`, so `n` times each 40-bit part of `pi/2` is exact in f64.
pub(crate) const CW_BOUND: f32 = 8192.0;
/// `pi/2 = P1 + P2 + P3` (+ 2e-41): `P1` and `P2` are the leading 40-bit pieces, `P3` the rest
/// rounded to f64.
const P1: f64 = f64::from_bits(0x3ff9_21fb_5444_2000);
const P2: f64 = f64::from_bits(0x3d6a_308d_3131_8000);
const P3: f64 = f64::from_bits(0x3ae8_a2e0_3707_344a);
/// Round-to-nearest shifter, `1.5 2^52`.
const SHIFT: f64 = 6755399441055744.0;

/// `(n, r)` with `a = n pi/2 + r`, for `a = |x|` below [`CW_BOUND`] (Cody–Waite): `n =
/// round(a 2/pi)` by the shifter, `r = ((a - n P1) - n P2) - n P3`. The first step is exact
/// (Sterbenz; `n P1` is exact), the second and third round once each, and as `|r| >= 2^-40`
/// for every f32 below the bound (checked exhaustively against [`reduce_ph`] by the ignored
/// test `cody_waite_matches_payne_hanek`), `r` is within `2^-51` relative of `a - n pi/2`
/// (`|r|` may exceed `pi/4` by an f64 rounding of `a 2/pi`, which the polynomials absorb).
#[inline(always)]
pub(super) fn reduce_cw(a: f64) -> (u64, f64) {
    let kf = a.mul_add(std::f64::consts::FRAC_2_PI, SHIFT);
    let n = kf.to_bits().wrapping_sub(SHIFT.to_bits());
    let nf = kf - SHIFT;
    let r = (-nf).mul_add(P1, a);
    let r = (-nf).mul_add(P2, r);
    let r = (-nf).mul_add(P3, r);
    (n, r)
}

/// `(n, r)` with `|x| = n pi/2 + r` (`n` mod 4 exact, `|r| <= pi/4`), `x` finite (Payne–Hanek):
/// `|x|` itself below `pi/4`; otherwise the significand `m` times the exponent's window of
/// `2/pi` gives `|x| 2/pi` mod 4 as a fixed-point number with 62 fraction bits (wrapping u64
/// arithmetic is the mod 4), rounded to the quadrant `n` and the remainder. The remainder's
/// 62-bit integer goes to f64 as two 31-bit halves (AVX2 has no 64-bit integer conversion;
/// `hi 2^31 - 2^61` is exact, so the one rounding is the sum's, as in a direct conversion).
#[inline(always)]
pub(super) fn reduce_ph(x: f32) -> (u64, f64) {
    let bits = x.to_bits() & 0x7fff_ffff;
    let e = (bits >> 23) as usize & 0xff;
    let m = ((bits & 0x007f_ffff) | 0x0080_0000) as u64;
    let f = ((m * W0[e] as u64) << 32)
        .wrapping_add(m * W1[e] as u64)
        .wrapping_add((m * W2[e] as u64) >> 32);
    let g = f.wrapping_add(1 << 61);
    let n = g >> 62;
    let u = g & ((1 << 62) - 1);
    let hi = (u >> 31) as i32 as f64;
    let lo = (u & 0x7fff_ffff) as i32 as f64;
    let r = (hi.mul_add(2147483648.0, -2305843009213693952.0) + lo)
        * (FRAC_PI_2 / 4611686018427387904.0);
    let a = f32::from_bits(bits) as f64;
    let small = a < FRAC_PI_4;
    (sel(small, 0, n), sel(small, a, r))
}

/// The element rule of `sin`/`cos`/`tan`: [`reduce_cw`] for `|x| <` [`CW_BOUND`], else
/// [`reduce_ph`] (both computed, one selected: the per-element form, for strided runs and for
/// chunks that hold a large argument).
#[inline(always)]
fn reduce(x: f32) -> (u64, f64) {
    let a = x.abs() as f64;
    let small = x.abs() < CW_BOUND;
    let (n1, r1) = reduce_cw(a);
    let (n2, r2) = reduce_ph(x);
    (sel(small, n1, n2), sel(small, r1, r2))
}

/// `sin r` on `[-pi/4, pi/4]` (Taylor to `r^13`, error < 3e-14).
#[inline(always)]
fn sin_poly(r: f64) -> f64 {
    let z = r * r;
    let p = (1.0 / 6227020800.0f64).mul_add(z, -1.0 / 39916800.0);
    let p = p.mul_add(z, 1.0 / 362880.0);
    let p = p.mul_add(z, -1.0 / 5040.0);
    let p = p.mul_add(z, 1.0 / 120.0);
    let p = p.mul_add(z, -1.0 / 6.0);
    (p * z).mul_add(r, r)
}

/// `cos r` on `[-pi/4, pi/4]` (Taylor to `r^12`, error < 5e-13).
#[inline(always)]
fn cos_poly(r: f64) -> f64 {
    let z = r * r;
    let p = (1.0 / 479001600.0f64).mul_add(z, -1.0 / 3628800.0);
    let p = p.mul_add(z, 1.0 / 40320.0);
    let p = p.mul_add(z, -1.0 / 720.0);
    let p = p.mul_add(z, 1.0 / 24.0);
    let p = p.mul_add(z, -0.5);
    p.mul_add(z, 1.0)
}

/// `sin x` from the reduction `(n, r)` of `|x|`.
#[inline(always)]
fn sin_of(x: f32, (n, r): (u64, f64)) -> f32 {
    let (s, c) = (sin_poly(r), cos_poly(r));
    let v = sel(n & 1 == 0, s, c);
    let v = sel((n & 2 == 0) != x.is_sign_negative(), v, -v);
    sel(x.is_finite(), v as f32, f32::NAN)
}

/// `cos x` from the reduction `(n, r)` of `|x|`.
#[inline(always)]
fn cos_of(x: f32, (n, r): (u64, f64)) -> f32 {
    let (s, c) = (sin_poly(r), cos_poly(r));
    let v = sel(n & 1 == 0, c, -s);
    let v = sel(n & 2 == 0, v, -v);
    sel(x.is_finite(), v as f32, f32::NAN)
}

/// `tan x` from the reduction `(n, r)` of `|x|`: `sin r / cos r` for an even quadrant,
/// `-cos r / sin r` for an odd one (both quotients formed, one selected).
#[inline(always)]
fn tan_of(x: f32, (n, r): (u64, f64)) -> f32 {
    let (s, c) = (sin_poly(r), cos_poly(r));
    let v = sel(n & 1 == 0, s / c, -c / s);
    let v = sel(x.is_sign_negative(), -v, v);
    sel(x.is_finite(), v as f32, f32::NAN)
}

/// `sin x = ±sin |x|` (`sin(±0) = ±0`, NaN for `±inf` and NaN).
#[inline(always)]
pub(crate) fn sin(x: f32) -> f32 {
    sin_of(x, reduce(x))
}

/// `cos x` (`cos(±0) = 1`, NaN for `±inf` and NaN).
#[inline(always)]
pub(crate) fn cos(x: f32) -> f32 {
    cos_of(x, reduce(x))
}

/// `tan x` (`tan(±0) = ±0`, NaN for `±inf` and NaN).
#[inline(always)]
pub(crate) fn tan(x: f32) -> f32 {
    tan_of(x, reduce(x))
}

/// `|x| >=` [`CW_BOUND`], infinite or NaN: where the `_small` lanes below are not the element
/// rule's value.
#[inline(always)]
fn large(x: f32) -> bool {
    x.abs() >= CW_BOUND || x.is_nan()
}

/// `(sin x, large)`: [`sin`] bit for bit where `large` is false (the Cody–Waite path alone,
/// for the chunk kernel `map1_fallback`, which recomputes a chunk with [`sin`] when some
/// element is large).
#[inline(always)]
pub(crate) fn sin_small(x: f32) -> (f32, bool) {
    (sin_of(x, reduce_cw(x.abs() as f64)), large(x))
}

/// `(cos x, large)`, as [`sin_small`].
#[inline(always)]
pub(crate) fn cos_small(x: f32) -> (f32, bool) {
    (cos_of(x, reduce_cw(x.abs() as f64)), large(x))
}

/// `(tan x, large)`, as [`sin_small`].
#[inline(always)]
pub(crate) fn tan_small(x: f32) -> (f32, bool) {
    (tan_of(x, reduce_cw(x.abs() as f64)), large(x))
}

/// `atan u / u = P(u^2)` on `[0, tan(pi/8)]` (least-squares fit, 7e-13 relative).
#[inline(always)]
fn atan_poly(u: f64) -> f64 {
    let z = u * u;
    let p = (-0.03771323783431385f64).mul_add(z, 0.0697769640392941);
    let p = p.mul_add(z, -0.08993380507476655);
    let p = p.mul_add(z, 0.11103554035558602);
    let p = p.mul_add(z, -0.1428539240940331);
    let p = p.mul_add(z, 0.19999993221837384);
    let p = p.mul_add(z, -0.3333333327873878);
    let p = p.mul_add(z, 0.9999999999992766);
    u * p
}

/// `atan t` for `t` in `[0, 1]`: the polynomial, or `pi/4 + atan((t-1)/(t+1))` above
/// `tan(pi/8)`.
#[inline(always)]
fn atan01(t: f64) -> f64 {
    let big = t > 0.414_213_562_373_095_1;
    let u = sel(big, (t - 1.0) / (t + 1.0), t);
    let a = atan_poly(u);
    sel(big, a + FRAC_PI_4, a)
}

/// `atan x` (`±0` kept, `atan(±inf) = ±pi/2`): `atan |x|` from [`atan01`] of `|x|` or, above
/// 1, `pi/2 - atan(1/|x|)`.
#[inline(always)]
pub(crate) fn atan(x: f32) -> f32 {
    let a = (x as f64).abs();
    let inv = a > 1.0;
    let t = sel(inv, 1.0 / a, a);
    let v = atan01(t);
    let v = sel(inv, FRAC_PI_2 - v, v);
    (v as f32).copysign(x)
}

/// `atan2(y, x)`, C99's (and PyTorch's) special values: `atan |y|/|x|` (or `pi/2 - atan
/// |x|/|y|`) in the first quadrant — 0 for two zeros, `pi/4` for two infinities — mirrored to
/// `pi - v` when `x`'s sign bit is set, signed like `y`; NaN if either is.
#[inline(always)]
pub(crate) fn atan2(y: f32, x: f32) -> f32 {
    let (ay, ax) = ((y as f64).abs(), (x as f64).abs());
    let swap = ax < ay || ax.is_nan() || ay.is_nan();
    let t = sel(swap, ax / ay, ay / ax);
    let t = sel(ay == 0.0 && ax == 0.0, 0.0, t);
    let t = sel(ay.is_infinite() && ax.is_infinite(), 1.0, t);
    let v = atan01(t);
    let v = sel(swap, FRAC_PI_2 - v, v);
    let v = sel(x.is_sign_negative(), PI - v, v);
    (v as f32).copysign(y)
}

/// `pi/2` and `pi` rounded to f32, and what rounding left out (`pi/2 - PIO2_HI`).
const PIO2_HI: f32 = std::f32::consts::FRAC_PI_2;
const PIO2_LO: f32 = -4.371_139e-8;
const PI_HI: f32 = std::f32::consts::PI;
const PI_LO: f32 = -8.742_278e-8;

/// The parts of `asin |x|` on f32 lanes: `(hi, s, lo, t)` with `asin s = s + t`. For `|x| <=
/// 1/2`, `s = |x|` and `z = x^2` (`hi = false`, `lo = 0`); above it `z = (1 - |x|)/2` (exact:
/// `1 - |x|` is) and `s + lo = sqrt(z)` (`hi = true`): `s` the rounded root and `lo` its
/// residual `(z - s^2)/2s`, so that `asin |x| = pi/2 - 2 asin(s + lo)` loses nothing to the
/// rounding of `s`. `t = s z P(z)`, `P` a least-squares fit of `(asin s / s - 1)/s^2` on
/// `[0, 1/4]` (6e-8 relative with these f32 coefficients; `t` is at most 5% of the result).
#[inline(always)]
fn asin_parts(x: f32) -> (bool, f32, f32, f32) {
    let a = x.abs();
    let hi = a > 0.5;
    let z = sel(hi, (1.0 - a) * 0.5, a * a);
    let r = z.sqrt();
    let lo = sel(hi && r != 0.0, (-r).mul_add(r, z) / (r + r), 0.0);
    let s = sel(hi, r, a);
    let p = 0.033_684_83f32.mul_add(z, 0.017_153);
    let p = p.mul_add(z, 0.031_099_84);
    let p = p.mul_add(z, 0.044_599_473);
    let p = p.mul_add(z, 0.075_000_94);
    let p = p.mul_add(z, 0.166_666_66);
    (hi, s, lo, (s * z) * p)
}

/// `c - u - lo - t` for `c = c.0 + c.1` (`pi/2` or `pi` in two f32 parts, `c.0 >= |u|`): the
/// leading difference `c.0 - u` and its exact error (Fast2Sum), the small terms added to that
/// error, one rounding.
#[inline(always)]
fn minus(c: (f32, f32), u: f32, lo: f32, t: f32) -> f32 {
    let h = c.0 - u;
    let err = (c.0 - h) - u;
    h + (((err + c.1) - lo) - t)
}

/// `asin x` on f32 lanes (`±0` kept, `asin(±1) = ±pi/2`, NaN outside `[-1, 1]`): `s + t`
/// up to `|x| = 1/2`, above it `pi/2 - 2 asin s` ([`asin_parts`], [`minus`]). Within 0.67 ulp
/// of the exact value over every f32 in `[-1, 1]` (checked once exhaustively; the tests sweep a
/// sample). Per-op sweep row `asin`: twice the lanes of the f64 form it replaced.
#[inline(always)]
pub(crate) fn asin(x: f32) -> f32 {
    let (hi, s, lo, t) = asin_parts(x);
    let v = sel(hi, minus((PIO2_HI, PIO2_LO), s + s, lo + lo, t + t), s + t);
    sel(x.abs() > 1.0, f32::NAN, v.copysign(x))
}

/// `acos x` on f32 lanes: `pi/2 -+ (s + t)` up to `|x| = 1/2` (the leading difference exact,
/// by [`minus`]), above it `2 asin s` for positive `x` and `pi - 2 asin s` for
/// negative, so no cancellation near ±1 (`acos 1 = +0`, `acos -1 = pi`, NaN outside `[-1,
/// 1]`). Within 0.65 ulp over every f32 in `[-1, 1]` (checked once exhaustively).
#[inline(always)]
pub(crate) fn acos(x: f32) -> f32 {
    let (hi, s, lo, t) = asin_parts(x);
    let neg = x < 0.0;
    // `lo = 0` below 1/2, where `pi/2 -+ (s + t)` is `minus` of the signed parts
    let near0 = minus((PIO2_HI, PIO2_LO), s.copysign(x), lo, t.copysign(x));
    let (s2, lo2, t2) = (s + s, lo + lo, t + t);
    let pos = s2 + (lo2 + t2);
    let v = sel(hi, sel(neg, minus((PI_HI, PI_LO), s2, lo2, t2), pos), near0);
    sel(x.abs() > 1.0, f32::NAN, v)
}
