//! Vectorisable transcendentals: `exp`, `log`, `log1p`, `tanh`, `sigmoid`, `erf` for f32 and
//! f64, for f32 also `exp2`, `log2`, `log10`, and `sin`,
//! `cos`, `tan`, `atan`, `atan2` ([`trig32`]) and `expm1`, `sinh`, `cosh`, `hypot`
//! ([`wide32`]) computed on f64 lanes, and `asin`, `acos` ([`trig32`]); written as branch-free
//! lane functions that LLVM vectorises inside the multi-versioned loops of `elementwise`
//! (AVX-512 or AVX2+FMA picked at run time, a portable baseline otherwise). Every `mul_add` is
//! a true fused multiply-add in every copy (the baseline's is libm's correctly rounded `fma`),
//! so all copies give bit-identical results.
//!
//! # Algorithms
//! - `exp`: `x` clamped to `[-104, 89]` (f64: `[-746, 710]`), `n = round(x log2 e)` by the
//!   add-1.5·2^23 (2^52) shifter, `r = x - n ln2` in two FMA steps (ln 2 split hi/lo),
//!   `e^r - 1 = r + r^2 q(r)` with `q` Taylor to degree 7 (f64: 13), then `(1 + p) 2^n1 2^n2`
//!   with `n1 + n2 = n`, so overflow gives inf, underflow 0 and subnormals round once.
//! - `log`: subnormals scaled by 2^23 (2^54); `x = 2^e m`, `m` in `[sqrt(1/2), sqrt(2))`,
//!   `ln m = 2 atanh(s)`, `s = (m-1)/(m+1)`, odd series to `s^9/9` (f64: `s^21/21`),
//!   plus `e ln2` (hi/lo); selects for 0 (-inf), negatives and NaN (NaN), +inf.
//! - `log1p`: `ln(u) x / (u - 1)`, `u = 1 + x` (the quotient undoes the rounding of `u`).
//! - `tanh`: `sign(x) e/(e+2)` with `e = expm1(2|x|) = 2^n p(r) + (2^n - 1)` (no cancellation
//!   anywhere), `|x|` clamped to 10 (f64: 20) where tanh is already 1.
//! - `sigmoid`: PyTorch's `1/(1+exp(-x))` (0 below -88.72 in f32, where `exp(-x)` overflows,
//!   as PyTorch's kernel).
//! - `erf` (f32): `x P(x^2)/Q(x^2)`, a degree-(6,5) rational least-squares fit of `erf(x)/x` on
//!   `[0, 4]` (2e-9 relative in exact arithmetic), `|x|` clamped to 4, result capped at 1.
//!   `erf` (f64): `a + a S(a^2)` below `a = |x| = 0.875`, `1 - e^(-a^2) T(a - 1.75)` up to 6
//!   (`a^2` kept exact into the exponential, the cancelling sums carried as exact pairs), then
//!   1; both fits evaluated and selected per lane, each polynomial as four Horner chains.
//! - `sin`, `cos`, `tan` (f32): `|x| = n pi/2 + r` on f64 lanes: below `|x| = 8192`
//!   Cody–Waite (`n = round(|x| 2/pi) < 2^13`, `r = |x| - n P1 - n P2 - n P3` with `pi/2` split
//!   into two 40-bit parts and a rest, so each `n Pk` but the last is exact: within 2^-50
//!   relative of the exact `r`), above it (and for inf, NaN) Payne–Hanek in u64, exact for
//!   every finite f32 (the significand times the 96 bits of `2/pi` its exponent needs, from a
//!   table built at compile time); Taylor polynomials of `sin r`, `cos r` in f64 (`tan`: their
//!   quotient). The rule is per element (`|x| < 8192 ? cody_waite : payne_hanek`); a fresh
//!   dense output evaluates it in chunks of 64, Cody–Waite alone unless the chunk holds a large
//!   argument (`elementwise::map1_fallback`), with the same bits as the per-element form.
//! - `atan`, `atan2` (f32): reduced to `[0, 1]` (`1/t`, swap of `|y|`, `|x|`), then above
//!   `tan(pi/8)` by `pi/4 + atan((t-1)/(t+1))`, an odd least-squares polynomial in f64; C99's
//!   quadrant rules.
//! - `asin`, `acos` (f32, on f32 lanes): `s + s z P(z)`, `z = s^2`, on `[0, 1/2]`; above it
//!   `asin x = pi/2 - 2 asin s` with `s = sqrt((1-x)/2)` and the root's residual carried, the
//!   leading difference `pi/2 - 2s` exact (Fast2Sum); `acos` as `pi/2 -+ asin`, `2 asin s` or
//!   `pi - 2 asin s`, so no cancellation near ±1.
//! - `exp2` (f32): `n = round(x)`, `r = x - n` exact, `2^r = 1 + r q(r)` (Taylor, degree 7),
//!   scaled by `2^n` in two halves as `exp`.
//! - `expm1`, `sinh`, `cosh`, `hypot` (f32): from the f64 `exp` and `expm1` lanes (`sinh =
//!   (e + e/(e+1))/2`, `e = expm1|x|`; `hypot` as `sqrt(x^2 + y^2)`, exact squares), rounded
//!   to f32 once.
//! - `log2`, `log10` (f32): `log`'s reduction (`ln m = f - s c`, `f = m - 1` exact), scaled
//!   by `log2 e` or `log10 e` split hi/lo with `f hi` exact inside a fused multiply-add, then
//!   `e +` (exact integers at powers of 2) or `e log10 2 +` (hi/lo, one fused rounding).
//! - `fmod` (f32, f64; [`fmod`]): C's `fmod`, NaN where SLEEF's quotient estimate overflows, as
//!   PyTorch's vectorised `fmod`/`remainder` give it; `fmod32_fast`/`fmod64_fast`: the exact
//!   branch-free form (f64 quotient, `fma` remainder) for `|x| < |y| 2^52`, with a flag for
//!   the elements outside that domain.
//!
//! # Accuracy
//! Checked by `tests.rs` (a sweep over every 4099th f32 bit pattern of both signs, 2^20 points
//! on `[-12, 12]`, edge values; f64: 2^20 random bit patterns and 2^20 points on `[-30, 30]`).
//! f32 error is measured against the exact value (the f64 reference), so 0.5 is correct
//! rounding; f64 against std's (or, for sigmoid, the formula's) f64 result, in whole ulps.
//!
//! | | exp | exp2 | log | log2 | log10 | log1p | tanh | sigmoid | erf |
//! |---|---|---|---|---|---|---|---|---|---|
//! | f32, max ulp (bound / measured) | 1.5 / 1.03 | 1 / 0.83 | 1 / 0.88 | 1 / 0.91 | 1 / 0.92 | 2.5 / 2.24 | 2.5 / 2.29 | 2 / 1.99 | 6 / 5.15 |
//! | f64 vs std, max ulp | 1 | - | 1 | - | - | 2 | 3 | 2 | 1 (vs exact: 0.75 measured; vs fdlibm's) |
//!
//! The f32 lanes on f64 lanes (`trig32`, `wide32`) are within 0.51 ulp of the exact value
//! (checked: one rounding of an f64 result off by well under 2^-30 relative; atan2 and hypot on a
//! grid of both arguments over all magnitudes; measured 0.500 to three places for each, the
//! Cody–Waite `sin`/`cos`/`tan` included); `asin` and `acos`, on f32 lanes, within 0.67 and
//! 0.65 ulp (measured over every f32 in `[-1, 1]`; the tests sweep a sample). Below the
//! Cody–Waite bound the smallest `|r|` of an f32 is 4.2e-9 and the reduction agrees with
//! Payne–Hanek's to 5.5e-11 relative there (Payne–Hanek's 62-bit fixed point limits it; the
//! ignored test `cody_waite_matches_payne_hanek` checks all 1.1e8 arguments).
//!
//! (`erf` is weakest near ±1 — `x P/Q` rounds in both polynomials — where PyTorch's own
//! vectorised `erf`, Abramowitz–Stegun 7.1.26, is off by up to 1.5e-7 ≈ 2.5 ulp, and far more
//! in relative terms near 0.)
//!
//! Edge values are PyTorch's (C99's for the `trig32`/`wide32` lanes, tested in
//! `wide_lane_edge_values_are_pytorchs`): `exp(-inf) = 0`, `exp(inf) = inf`, `log(±0) = -inf`,
//! `log(x < 0) = NaN`, `log(inf) = inf`, `tanh(±inf) = erf(±inf) = ±1`, `±0` kept by `tanh`
//! and `erf`, `sigmoid(inf) = 1`, `sigmoid(-inf) = 0`, NaN propagates.
//!
//! # API (crate-internal)
//! - lane functions, to inline into one's own loops (vectorised when the loop is compiled with
//!   AVX2+FMA or AVX-512, e.g. inside `elementwise::map1`): [`fp32::exp`], `fp32::log`, `fp32::log1p`,
//!   `fp32::tanh`, `fp32::sigmoid`, `fp32::erf`, the same in [`fp64`]; the [`Transcendental`]
//!   trait (`x.vexp()`, `x.vln()`, `x.vsin()`, `y.vatan2(x)`, ...) the elementwise
//!   ops call: the f32 lanes for f32, std's functions for f64 (the f64 ops keep their
//!   results, which tests pin to PyTorch's);
//! - slice kernels, single-threaded (callers split the work), multi-versioned:
//!   `exp_slice_f32(x, out)` / `exp_inplace_f32(x)`, and likewise `log_`, `log1p_`, `tanh_`,
//!   `sigmoid_`, `erf_` for f32 and `_f64` (no f64 `erf`). `x` and `out` must have one length.
//! - fused loss terms (within 3 ulp of the std formulas): [`softplus_f32`] and [`softplus_f64`]
//!   (`binary_cross_entropy_with_logits`, through `Transcendental::vsoftplus`), [`bce_f64`]
//!   (`binary_cross_entropy`, on the f64 lanes).

pub(crate) mod fmod;
pub(crate) mod fp32;
pub(crate) mod fp64;
#[cfg(test)]
mod tests;
pub(crate) mod trig32;
pub(crate) mod wide32;

use super::elementwise::{map1, update1};

/// `if c { a } else { b }` that stays a select. Written as an `if`, LLVM sinks the work of the
/// arm it picks into a branch when that value has no other use (the Payne–Hanek reduction of
/// `sin` behind `|x| >= pi/4`, the `cos` polynomial behind an odd quadrant), and the loop
/// around the lane no longer vectorises: on AVX2 (Zen 3) the f32 `sin`, `cos`, `tan` and
/// `atan` lanes ran 2.5–5× slower so (op-speed sweep rows `sin`, `cos`, `tan`, `atan`; also
/// `log`, `asin`, `acos`, `log2`, `log10` 1.2–1.3×). Both arms are computed; the result is
/// bit for bit the `if`'s.
#[inline(always)]
pub(crate) fn sel<T>(c: bool, a: T, b: T) -> T {
    std::hint::select_unpredictable(c, a, b)
}

/// The element functions of the unary kernels, generic over f32 and f64 (their closures are
/// written once for both): the f32 lanes of [`fp32`]; for f64, std's functions (see `std64`).
pub(crate) trait Transcendental: Copy {
    /// `e^self`.
    fn vexp(self) -> Self;
    /// `ln self`.
    fn vln(self) -> Self;
    /// `ln(1 + self)`.
    fn vln_1p(self) -> Self;
    /// `tanh self`.
    fn vtanh(self) -> Self;
    /// `1 / (1 + e^-self)`.
    fn vsigmoid(self) -> Self;
    /// `erf self`.
    fn verf(self) -> Self;
    /// `e^self - 1`.
    fn vexpm1(self) -> Self;
    /// `2^self`.
    fn vexp2(self) -> Self;
    /// `log2 self`.
    fn vlog2(self) -> Self;
    /// `log10 self`.
    fn vlog10(self) -> Self;
    /// `sin self`.
    fn vsin(self) -> Self;
    /// `cos self`.
    fn vcos(self) -> Self;
    /// `tan self`.
    fn vtan(self) -> Self;
    /// `(sin self, large)`: [`Self::vsin`] bit for bit unless `large` (then the value is not
    /// `sin self`): the cheap form for `ElementwiseKernels::flat_map1_fallback` (f32: the
    /// Cody–Waite path of [`trig32::sin_small`]; f64: std's `sin`, never large).
    fn vsin_small(self) -> (Self, bool);
    /// `(cos self, large)`, as [`Self::vsin_small`].
    fn vcos_small(self) -> (Self, bool);
    /// `(tan self, large)`, as [`Self::vsin_small`].
    fn vtan_small(self) -> (Self, bool);
    /// `asin self`.
    fn vasin(self) -> Self;
    /// `acos self`.
    fn vacos(self) -> Self;
    /// `atan self`.
    fn vatan(self) -> Self;
    /// `atan2(self, x)`.
    fn vatan2(self, x: Self) -> Self;
    /// `sinh self`.
    fn vsinh(self) -> Self;
    /// `cosh self`.
    fn vcosh(self) -> Self;
    /// `hypot(self, y)`.
    fn vhypot(self, y: Self) -> Self;
    /// `self^y` (C99 `pow`).
    fn vpow(self, y: Self) -> Self;
    /// `max(self, 0) + ln(1 + e^-|self|)` (softplus, stable form; [`softplus_f32`] /
    /// [`softplus_f64`]).
    fn vsoftplus(self) -> Self;
    /// `fmod(self, y)` as SLEEF's vector body gives it (NaN where its quotient estimate
    /// overflows: [`fmod`]).
    fn vfmod(self, y: Self) -> Self;
    /// `fmod(self, y)` on its branch-free exact domain, and whether `(self, y)` lies outside it
    /// (then the value is garbage: compute the element with `%` or [`Self::vfmod`]; see
    /// [`fmod::fmod64_fast`]).
    fn vfmod_fast(self, y: Self) -> (Self, bool);
}

macro_rules! transcendental {
    (
        $t:ty, $m:ident, $fast:path; $($f:ident = $p:path,)*; $($f2:ident = $p2:path,)*;
        $($fs:ident = $ps:expr,)*
    ) => {
        impl Transcendental for $t {
            $(
                #[inline(always)]
                fn $fs(self) -> (Self, bool) {
                    $ps(self)
                }
            )*
            $(
                #[inline(always)]
                fn $f(self) -> Self {
                    $p(self)
                }
            )*
            $(
                #[inline(always)]
                fn $f2(self, y: Self) -> Self {
                    $p2(self, y)
                }
            )*
            #[inline(always)]
            fn vfmod_fast(self, y: Self) -> (Self, bool) {
                $fast(self, y)
            }
            #[inline(always)]
            fn vexp(self) -> Self {
                $m::exp(self)
            }
            #[inline(always)]
            fn vln(self) -> Self {
                $m::log(self)
            }
            #[inline(always)]
            fn vln_1p(self) -> Self {
                $m::log1p(self)
            }
            #[inline(always)]
            fn vtanh(self) -> Self {
                $m::tanh(self)
            }
            #[inline(always)]
            fn vsigmoid(self) -> Self {
                $m::sigmoid(self)
            }
            #[inline(always)]
            fn verf(self) -> Self {
                $m::erf(self)
            }
        }
    };
}
transcendental!(f32, fp32, fmod::fmod32_fast;
    vsoftplus = softplus_f32, vexpm1 = wide32::expm1, vexp2 = fp32::exp2, vlog2 = fp32::log2,
    vlog10 = fp32::log10, vsinh = wide32::sinh, vcosh = wide32::cosh,
    vsin = trig32::sin, vcos = trig32::cos, vtan = trig32::tan, vasin = trig32::asin,
    vacos = trig32::acos, vatan = trig32::atan,;
    vatan2 = trig32::atan2, vhypot = wide32::hypot, vfmod = fmod::fmod32, vpow = wide32::pow,;
    vsin_small = trig32::sin_small, vcos_small = trig32::cos_small,
    vtan_small = trig32::tan_small,
);
transcendental!(f64, std64, fmod::fmod64_fast;
    vsoftplus = softplus_f64, vexpm1 = f64::exp_m1, vexp2 = f64::exp2, vlog2 = f64::log2,
    vlog10 = f64::log10,
    vsinh = f64::sinh, vcosh = f64::cosh, vsin = f64::sin, vcos = f64::cos, vtan = f64::tan,
    vasin = f64::asin, vacos = f64::acos, vatan = f64::atan,;
    vatan2 = f64::atan2, vhypot = f64::hypot, vfmod = fmod::fmod64, vpow = f64::powf,;
    vsin_small = |x: f64| (x.sin(), false), vcos_small = |x: f64| (x.cos(), false),
    vtan_small = |x: f64| (x.tan(), false),
);

/// The f64 form of [`Transcendental`]: std's functions (within 0.5–1 ulp, and equal to
/// PyTorch's f64 results where tests pin them, e.g. `exp(1)`), and [`fp64`]'s `erf`. The f64 lanes
/// of [`fp64`] (up to 1 ulp from std) are for kernels that accept that.
mod std64 {
    #[inline(always)]
    pub(super) fn exp(x: f64) -> f64 {
        x.exp()
    }
    #[inline(always)]
    pub(super) fn log(x: f64) -> f64 {
        x.ln()
    }
    #[inline(always)]
    pub(super) fn log1p(x: f64) -> f64 {
        x.ln_1p()
    }
    #[inline(always)]
    pub(super) fn tanh(x: f64) -> f64 {
        x.tanh()
    }
    #[inline(always)]
    pub(super) fn sigmoid(x: f64) -> f64 {
        1.0 / (1.0 + (-x).exp())
    }
    pub(super) use super::fp64::erf;
}

/// `max(z, 0) + ln(1 + e^-|z|)` (softplus, stable form) on the vectorisable f64 lanes of
/// [`fp64`]: the per-element term of `binary_cross_entropy_with_logits`, fused into one pass
/// (its former f64 composite took 10 passes; per-op sweep `bce_with_logits`). NaN propagates,
/// `softplus(inf) = inf`, `softplus(-inf) = 0`.
#[inline(always)]
pub(crate) fn softplus_f64(z: f64) -> f64 {
    // NaN < 0 is false: NaN stays
    let m = if z < 0.0 { 0.0 } else { z };
    m + fp64::log1p(fp64::exp(-z.abs()))
}

/// [`softplus_f64`] on the f32 lanes of [`fp32`] (within 3 ulp of the exact value): the
/// per-element term of f32 `binary_cross_entropy_with_logits` (per-op sweep
/// `bce_with_logits`: twice the lanes of the f64 form, and f32 polynomials).
#[inline(always)]
pub(crate) fn softplus_f32(z: f32) -> f32 {
    let m = if z < 0.0 { 0.0 } else { z };
    m + fp32::log1p(fp32::exp(-z.abs()))
}

/// `-(t max(ln x, -100) + (1 - t) max(ln(1 - x), -100))` on the vectorisable f64 lanes of
/// [`fp64`]: the per-element term of `binary_cross_entropy` (inputs checked to lie in
/// `[0, 1]`), fused into one pass (its former f64 composite took 9 passes with scalar logs;
/// per-op sweep `binary_cross_entropy`). `ln 0 = -inf` clamps to -100.
#[inline(always)]
pub(crate) fn bce_f64(x: f64, t: f64) -> f64 {
    let clamp = |v: f64| if v < -100.0 { -100.0 } else { v };
    let l0 = t * clamp(fp64::log(x));
    let l1 = (-t + 1.0) * clamp(fp64::log(-x + 1.0));
    -(l0 + l1)
}

macro_rules! slice_kernels {
    ($($slice:ident, $inplace:ident, $t:ty, $f:path;)*) => {$(
        #[doc = concat!("`out[i] = ", stringify!($f), "(x[i])` (vectorised; one length).")]
        #[allow(dead_code)]
        pub(crate) fn $slice(x: &[$t], out: &mut [$t]) {
            assert_eq!(x.len(), out.len(), "internal: slice lengths differ");
            map1(out, x, &$f);
        }
        #[doc = concat!("`x[i] = ", stringify!($f), "(x[i])` (vectorised).")]
        #[allow(dead_code)]
        pub(crate) fn $inplace(x: &mut [$t]) {
            update1(x, &$f);
        }
    )*};
}

slice_kernels! {
    exp_slice_f32, exp_inplace_f32, f32, fp32::exp;
    log_slice_f32, log_inplace_f32, f32, fp32::log;
    log1p_slice_f32, log1p_inplace_f32, f32, fp32::log1p;
    tanh_slice_f32, tanh_inplace_f32, f32, fp32::tanh;
    sigmoid_slice_f32, sigmoid_inplace_f32, f32, fp32::sigmoid;
    erf_slice_f32, erf_inplace_f32, f32, fp32::erf;
    exp_slice_f64, exp_inplace_f64, f64, fp64::exp;
    log_slice_f64, log_inplace_f64, f64, fp64::log;
    log1p_slice_f64, log1p_inplace_f64, f64, fp64::log1p;
    tanh_slice_f64, tanh_inplace_f64, f64, fp64::tanh;
    sigmoid_slice_f64, sigmoid_inplace_f64, f64, fp64::sigmoid;
}
