//! The f64 lane functions: `exp`, `expm1` (internal, for `tanh`), `log`, `log1p`, `tanh`, `sigmoid`
//! and `erf`, all branch-free, so loops over them vectorise.
//! The algorithms and measured bounds are in the parent module's header.

use super::sel;

const SHIFT: f64 = 6755399441055744.0; // 1.5 * 2^52
const LN2_HI: f64 = std::f64::consts::LN_2;
const LN2_LO: f64 = 2.319_046_813_846_299_6e-17; // ln 2 - LN2_HI
const SQRT2: f64 = std::f64::consts::SQRT_2;

/// `(n, r)` with `x = n ln2 + r`, `|r| <= ln2 / 2 (+ rounding)`: `n` by the shifter, `r` in
/// two FMA steps (ln 2 split hi/lo); `x` must lie in `[-1100, 1100]`.
#[inline(always)]
pub(super) fn reduce_ln2(x: f64) -> (i64, f64) {
    let kf = x * std::f64::consts::LOG2_E + SHIFT;
    let n = (kf.to_bits() as i64).wrapping_sub(SHIFT.to_bits() as i64);
    let nf = kf - SHIFT;
    let r = (-nf).mul_add(LN2_HI, x);
    (n, (-nf).mul_add(LN2_LO, r))
}

/// `(n, p)` with `x = n ln2 + r` ([`reduce_ln2`]) and `p = e^r - 1` (Taylor to degree 13,
/// truncation < 5e-18 relative); `x` must lie in `[-1100, 1100]`.
#[inline(always)]
fn reduce(x: f64) -> (i64, f64) {
    let (n, r) = reduce_ln2(x);
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

/// `2^n` for `n` in `[-1022, 1023]` (wrapping: a NaN input's garbage `n` is swallowed).
#[inline(always)]
pub(super) fn pow2(n: i64) -> f64 {
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

/// Error function, branch-free so loops over it vectorise (per-op sweep `erf_f64`, and exact
/// `gelu` in f64), two fits in `a = |x|` joined at 0.875 (coefficients and their fits in
/// `tools/fit_erf_f64.py`):
/// - below 0.875, `a + a S(a^2)` with one FMA (a subnormal `a` is rounded once). `S` is a fit of
///   `erf(a)/a - 1` and evaluated as `S0 + z V`, `V = S1 + z U(z)`: the two leading terms nearly
///   cancel, so `V` is carried as an exact pair (Fast2Sum; `|z U| < |S1|`).
/// - from 0.875 to 6, `1 - e^(-a^2) T(a - 1.75)`, `T` a fit of `erfc(a) e^(a^2)` weighted by
///   `e^(-a^2)`; `a - 1.75` is exact where `T` must be accurate (Sterbenz, up to 3.5). `a^2` is
///   carried as an exact pair into the reduction `-a^2 = n ln2 + r`, `e^(-a^2) = 2^n (1 + p)`,
///   `p = e^r - 1`; `q = 2^n T` is exact, and `1 - q - q p` is summed with the rounding error
///   of `1 - q` carried, so only the last addition rounds at erf's scale.
/// - from 6 on, 1 (erf rounds to 1 from 5.92).
///
/// Every polynomial runs as four interleaved Horner chains ([`poly4`]): with single chains FMA
/// latency, not FMA count, set the speed (`erf_f64` per 2^20, AVX2 code on one Zen 4 core:
/// about 5 ms with single chains, 3.7 ms with four; fdlibm's four-range rational form, used
/// before, 7.1 ms).
///
/// Measured against a double-double reference (the test `erf_f64_dense_error_is_below_0_75_ulp`,
/// 2^18 points on `[0, 6.5]` and 2^18 across the join) and against mpmath (320,000 points): at
/// most 0.75 ulp from the exact value (fdlibm's form: 0.92), within 1 ulp of `libm::erf`.
///
/// PyTorch's own f64 `erf` is neither glibc's nor that of the SLEEF it links
/// (`Sleef_erfd4_u10avx2`): on 1M normal inputs (standard deviation 2) it differs from each in
/// the last bit for 4.0% and 0.6% of them (torch 2.15, the SLEEF symbol called from
/// `libtorch_cpu.so`). All are within 1 ulp of the exact value.
#[inline(always)]
pub(crate) fn erf(x: f64) -> f64 {
    let a = x.abs();
    let z = a * a;
    let vz = z * poly4(&ERF_S[2..], z);
    let vh = ERF_S[1] + vz;
    let vl = (ERF_S[1] - vh) + vz;
    let small = a.mul_add(z.mul_add(vl, z.mul_add(vh, ERF_S[0])), a);
    // e^(-z - zl) = 2^n (1 + p), with z + zl = a^2 exactly
    let zl = a.mul_add(a, -z);
    let (n, r) = reduce_ln2(-z);
    let r = r - zl;
    let p = poly4(&ERF_E, r).mul_add(r * r, r);
    let u = a - 1.75;
    let t = u.mul_add(u.mul_add(poly4(&ERF_T[2..], u), ERF_T[1]), ERF_T[0]);
    let q = t * pow2(n);
    let h = 1.0 - q;
    let large = h + (-q).mul_add(p, (1.0 - h) - q);
    let v = sel(a < 0.875, small, large);
    let v = sel(a >= 6.0, 1.0, v);
    v.copysign(x)
}

/// `c[0] + c[1] x + c[2] x^2 + ...` as four Horner chains in `x^4`, one per power mod 4, joined
/// as `(c0 + c1 x) + x^2 (c2 + c3 x)`: the same terms with a quarter of the dependency chain.
/// `c` must have at least 4 terms.
#[inline(always)]
fn poly4(c: &[f64], x: f64) -> f64 {
    let x2 = x * x;
    let x4 = x2 * x2;
    let chain = |j: usize| {
        let mut k = j + (c.len() - 1 - j) / 4 * 4;
        let mut p = c[k];
        while k >= j + 4 {
            k -= 4;
            p = p.mul_add(x4, c[k]);
        }
        p
    };
    let lo = chain(1).mul_add(x, chain(0));
    let hi = chain(3).mul_add(x, chain(2));
    hi.mul_add(x2, lo)
}

/// `erf(a)/a - 1` in `a^2` on `[0, 0.875^2]`: worst error 1.2e-17 (at 0: `S0`'s rounding).
const ERF_S: [f64; 12] = [
    0.1283791670955126,
    -0.37612638903183887,
    0.11283791670959352,
    -0.026866170645726887,
    0.005223977629894127,
    -0.0008548327209489246,
    0.00012055336995526909,
    -1.4925665723607891e-05,
    1.6460674917407385e-06,
    -1.632653468385065e-07,
    1.431766456197064e-08,
    -9.109076068221868e-10,
];
/// `erfc(a) e^(a^2)` in `a - 1.75` on `[0.875, 6]`: worst error of `e^(-a^2) T` 0.02 x 2^-53.
const ERF_T: [f64; 23] = [
    0.2849722347374364,
    -0.13097634551448598,
    0.05576363008708524,
    -0.022259995241349882,
    0.008404319207433716,
    -0.0030209746519489792,
    0.0010392045211094578,
    -0.0003435333502089927,
    0.00010950529564130633,
    -3.375536724011982e-05,
    1.008666392922556e-05,
    -2.9279088379132643e-06,
    8.271588987230467e-07,
    -2.2780986551255556e-07,
    6.120726932785242e-08,
    -1.6037396984155134e-08,
    4.1250697979948435e-09,
    -1.0623581193453063e-09,
    2.713211954052068e-10,
    -6.212329469583937e-11,
    1.0814072540077167e-11,
    -1.1834877415427167e-12,
    5.906093389575853e-14,
];
/// `(e^r - 1 - r)/r^2` on `|r| <= ln2/2`: worst error of `e^r - 1` 1.7e-19.
const ERF_E: [f64; 11] = [
    0.5,
    0.1666666666666667,
    0.04166666666666667,
    0.008333333333326141,
    0.0013888888888883752,
    0.00019841269874801073,
    2.480158732553378e-05,
    2.7557255425009614e-06,
    2.7557273660822466e-07,
    2.510520668068106e-08,
    2.0914679595617734e-09,
];
