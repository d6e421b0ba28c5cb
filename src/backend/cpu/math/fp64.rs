//! The f64 lane functions: `exp`, `expm1` (internal, for `tanh`), `log`, `log1p`, `tanh`, `sigmoid`
//! and `erf` (fdlibm's algorithm), all branch-free, so loops over them vectorise.
//! The algorithms and measured bounds are in the parent module's header.

use super::sel;

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
    (n, expm1_poly(r))
}

/// `e^r - 1` for `|r| <= ln2 / 2 (+ rounding)`: Taylor to degree 13.
#[inline(always)]
fn expm1_poly(r: f64) -> f64 {
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
    q.mul_add(r * r, r)
}

/// `e^(u + w)` for an exact `u` in `[-1000, 700]` and a small `|w| <= 1`, with one reduction:
/// `n = round((u + w) / ln2)`, `r = (u - n ln2) + w` (the FMA steps keep `u - n ln2` exact
/// to its last bit, so `w` is not rounded against the large `u`).
#[inline(always)]
fn exp_sum(u: f64, w: f64) -> f64 {
    let kf = (u + w) * std::f64::consts::LOG2_E + SHIFT;
    let n = (kf.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let nf = kf - SHIFT;
    let r = (-nf).mul_add(LN2_HI, u);
    let r = (-nf).mul_add(LN2_LO, r) + w;
    (1.0 + expm1_poly(r)) * pow2(n)
}

/// `2^n` for `n` in `[-1022, 1023]` (wrapping: a NaN input's garbage `n` is swallowed).
#[inline(always)]
fn pow2(n: i64) -> f64 {
    f64::from_bits((n.wrapping_add(1023) as u64).wrapping_shl(52))
}

/// `e^x`: `x` clamped to `[-746, 710]`, `2^n` applied in two halves.
#[inline(always)]
pub(crate) fn exp(x: f64) -> f64 {
    let xc = sel(x < -746.0, -746.0, x);
    let xc = sel(xc > 710.0, 710.0, xc);
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

/// `field - bias` as an f64, for a biased exponent `field` in `[0, 2048]` and an integral
/// `bias` below 2^11: `2^52 + field` built from its bits, less `2^52 + bias`, both exact. (AVX2
/// has no packed i64 -> f64 conversion: `field as f64` made the logarithms' vector loops
/// convert lane by lane; per-op sweep rows `log2`, `log10`.)
#[inline(always)]
pub(super) fn exponent_value(field: i64, bias: f64) -> f64 {
    f64::from_bits(0x4330_0000_0000_0000 | field as u64) - (4503599627370496.0 + bias)
}

/// `ln x`: as the f32 form (subnormals scaled by `2^54`), series in `s^2` to `s^20/21`
/// (truncation < 1e-18).
#[inline(always)]
pub(crate) fn log(x: f64) -> f64 {
    let tiny = x < f64::MIN_POSITIVE;
    let xs = sel(tiny, x * 18014398509481984.0, x);
    let bits = xs.to_bits() as i64;
    let m = f64::from_bits(((bits & 0x000f_ffff_ffff_ffff) | 0x3ff0_0000_0000_0000) as u64);
    let big = m > SQRT2;
    let m = sel(big, m * 0.5, m);
    let ef = exponent_value(
        ((bits >> 52) & 0x7ff) + big as i64,
        sel(tiny, 1077.0, 1023.0),
    );
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
    let r = sel(x == f64::INFINITY, x, r);
    let r = sel(x == 0.0, f64::NEG_INFINITY, r);
    sel(x < 0.0 || x.is_nan(), f64::NAN, r)
}

/// `ln(1 + x)`: `ln(u) x / (u - 1)` with `u = 1 + x` rounded (the quotient corrects the
/// rounding of `u`; Goldberg's trick), `x` itself where `u == 1`.
#[inline(always)]
pub(crate) fn log1p(x: f64) -> f64 {
    let u = 1.0 + x;
    let r = log(u) * (x / (u - 1.0));
    let r = sel(u == f64::INFINITY, u, r);
    sel(u == 1.0, x, r)
}

/// `tanh x = sign(x) e / (e + 2)`, `e = expm1(2 |x|)`, `|x|` clamped to 20 (tanh is 1 in f64
/// from 19.06 on).
#[inline(always)]
pub(crate) fn tanh(x: f64) -> f64 {
    let a = x.abs();
    let a = sel(a > 20.0, 20.0, a);
    let e = expm1_pos(a + a);
    (e / (e + 2.0)).copysign(x)
}

/// `1 / (1 + e^-x)`, PyTorch's formula.
#[inline(always)]
pub(crate) fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + exp(-x))
}

/// Error function: fdlibm's algorithm (the `libm` crate's port; glibc's `erf`) made branch-free
/// so loops over it vectorise (per-op sweep `erf_f64`, and exact `gelu` in f64): the rational
/// fit of each range of `|x|` — `x + x R(x^2)` below 0.84375, `erx + P(s)/Q(s)` with `s = |x| -
/// 1` below 1.25, `1 - exp(-z^2 - 0.5625) exp((z - |x|)(z + |x|) + R(t)/S(t)) / |x|` with `t =
/// 1/x^2` (two fits, split at 1/0.35) and `z` = `|x|` with its low 32 bits cleared below 6,
/// then 1 — is evaluated with fused multiply-adds, the range's polynomials picked by selects,
/// one division for the rational and one exponential ([`exp`]'s polynomial, the two parts of
/// its exponent reduced together). Within 1 ulp of the exact value and of `libm::erf` (tests).
///
/// PyTorch's own f64 `erf` is neither glibc's nor that of the SLEEF it links
/// (`Sleef_erfd4_u10avx2`): on 1M normal inputs (standard deviation 2) it differs from each in
/// the last bit for 4.0% and 0.6% of them (torch 2.15, the SLEEF symbol called from
/// `libtorch_cpu.so`). All three are within 1 ulp of the exact value.
#[inline(always)]
pub(crate) fn erf(x: f64) -> f64 {
    let a = x.abs();
    let small = a < 0.84375;
    let mid = a < 1.25;
    // fdlibm's split of the tail: |x| < 1/0.35 (high word 0x4006db6d)
    let near = a < f64::from_bits(0x4006_db6d_0000_0000);
    let z = a * a;
    let sm = a - 1.0;
    let (p, q) = if small {
        let p = PP4.mul_add(z, PP3).mul_add(z, PP2);
        let q = QQ5.mul_add(z, QQ4).mul_add(z, QQ3).mul_add(z, QQ2);
        (
            p.mul_add(z, PP1).mul_add(z, PP0),
            q.mul_add(z, QQ1).mul_add(z, 1.0),
        )
    } else if mid {
        let p = PA6.mul_add(sm, PA5).mul_add(sm, PA4).mul_add(sm, PA3);
        let q = QA6.mul_add(sm, QA5).mul_add(sm, QA4).mul_add(sm, QA3);
        let p = p.mul_add(sm, PA2).mul_add(sm, PA1).mul_add(sm, PA0);
        (p, q.mul_add(sm, QA2).mul_add(sm, QA1).mul_add(sm, 1.0))
    } else {
        // R(1/z)/S(1/z) = z P(z)/Q(z) with the coefficients reversed (`P(z) = z^7 R(1/z)`,
        // `Q(z) = z^8 S(1/z)`: no division for `1/z`); the two tail fits share one evaluation,
        // coefficients picked per lane (RB and SB have one term fewer)
        let c = |ra: f64, rb: f64| if near { ra } else { rb };
        let p = c(RA0, RB0).mul_add(z, c(RA1, RB1)).mul_add(z, c(RA2, RB2));
        let p = p.mul_add(z, c(RA3, RB3)).mul_add(z, c(RA4, RB4));
        let p = p.mul_add(z, c(RA5, RB5)).mul_add(z, c(RA6, RB6));
        let q = (z + c(SA1, SB1))
            .mul_add(z, c(SA2, SB2))
            .mul_add(z, c(SA3, SB3));
        let q = q.mul_add(z, c(SA4, SB4)).mul_add(z, c(SA5, SB5));
        let q = q.mul_add(z, c(SA6, SB6)).mul_add(z, c(SA7, SB7));
        (z * p.mul_add(z, c(RA7, 0.0)), q.mul_add(z, c(SA8, 0.0)))
    };
    let y = p / q;
    // e^(-x^2 - 0.5625 + y) as fdlibm splits it: `zh * zh` is exact (26 significant bits), so
    // the large part of the exponent is exact and the rounding stays in the small part
    let zh = f64::from_bits(a.to_bits() & 0xffff_ffff_0000_0000);
    let e = exp_sum(-zh * zh - 0.5625, (zh - a).mul_add(zh + a, y)) / a;
    let v = if small {
        a + a * y
    } else if mid {
        ERX + y
    } else {
        1.0 - e
    };
    // below 2^-28: 2x/sqrt(pi) as fdlibm forms it (no underflow in `x R`)
    let v = if a < f64::from_bits(0x3e30_0000_0000_0000) {
        0.125 * EFX8.mul_add(a, 8.0 * a)
    } else {
        v
    };
    let v = if a >= 6.0 { 1.0 } else { v };
    v.copysign(x)
}

const ERX: f64 = 0.8450629115104675;
const EFX8: f64 = 1.0270333367641007;
const PP0: f64 = 0.12837916709551256;
const PP1: f64 = -0.3250421072470015;
const PP2: f64 = -0.02848174957559851;
const PP3: f64 = -0.005770270296489442;
const PP4: f64 = -2.3763016656650163e-05;
const QQ1: f64 = 0.39791722395915535;
const QQ2: f64 = 0.0650222499887673;
const QQ3: f64 = 0.005081306281875766;
const QQ4: f64 = 0.00013249473800432164;
const QQ5: f64 = -3.960228278775368e-06;
const PA0: f64 = -0.0023621185607526594;
const PA1: f64 = 0.41485611868374833;
const PA2: f64 = -0.3722078760357013;
const PA3: f64 = 0.31834661990116175;
const PA4: f64 = -0.11089469428239668;
const PA5: f64 = 0.035478304325618236;
const PA6: f64 = -0.002166375594868791;
const QA1: f64 = 0.10642088040084423;
const QA2: f64 = 0.540397917702171;
const QA3: f64 = 0.07182865441419627;
const QA4: f64 = 0.12617121980876164;
const QA5: f64 = 0.01363708391202905;
const QA6: f64 = 0.011984499846799107;
const RA0: f64 = -0.009864944034847148;
const RA1: f64 = -0.6938585727071818;
const RA2: f64 = -10.558626225323291;
const RA3: f64 = -62.375332450326006;
const RA4: f64 = -162.39666946257347;
const RA5: f64 = -184.60509290671104;
const RA6: f64 = -81.2874355063066;
const RA7: f64 = -9.814329344169145;
const SA1: f64 = 19.651271667439257;
const SA2: f64 = 137.65775414351904;
const SA3: f64 = 434.56587747522923;
const SA4: f64 = 645.3872717332679;
const SA5: f64 = 429.00814002756783;
const SA6: f64 = 108.63500554177944;
const SA7: f64 = 6.570249770319282;
const SA8: f64 = -0.0604244152148581;
const RB0: f64 = -0.0098649429247001;
const RB1: f64 = -0.799283237680523;
const RB2: f64 = -17.757954917754752;
const RB3: f64 = -160.63638485582192;
const RB4: f64 = -637.5664433683896;
const RB5: f64 = -1025.0951316110772;
const RB6: f64 = -483.5191916086514;
const SB1: f64 = 30.33806074348246;
const SB2: f64 = 325.7925129965739;
const SB3: f64 = 1536.729586084437;
const SB4: f64 = 3199.8582195085955;
const SB5: f64 = 2553.0504064331644;
const SB6: f64 = 474.52854120695537;
const SB7: f64 = -22.44095244658582;
