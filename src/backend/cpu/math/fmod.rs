//! `fmod` as PyTorch's vectorised CPU loop computes it (SLEEF's `xfmod`): exact, like C's
//! `fmod`, except that it is NaN where SLEEF's first quotient estimate
//! `toward0(|x|) * toward0(1 / |y|)` overflows (`|x|` and `|y|` scaled by 2^54 in f64, 2^25 in
//! f32, when `|y|` is subnormal), e.g. `fmod(3e38, 1e-38)`. `toward0` is the next float toward
//! zero (0 stays 0). PyTorch runs this body on the vector-width prefix of a contiguous run and
//! C's `fmod` on the tail; `ops/elementwise/binary_extra.rs` picks the prefix.
//!
//! [`fmod32_fast`] / [`fmod64_fast`] are branch-free exact forms for the common domain (the
//! elementwise kernels run them vectorised and call the functions above only on the elements
//! they flag).

macro_rules! sleef_fmod {
    ($name:ident, $t:ty, $scale:expr) => {
        #[doc = concat!("SLEEF's `fmod` for ", stringify!($t), " (see the module docs).")]
        #[inline(always)]
        pub(crate) fn $name(x: $t, y: $t) -> $t {
            let toward0 = |v: $t| {
                if v == 0.0 {
                    0.0
                } else {
                    <$t>::from_bits(v.to_bits() - 1)
                }
            };
            let s = if y.abs() < <$t>::MIN_POSITIVE {
                $scale
            } else {
                1.0
            };
            let (n, d) = (x.abs() * s, y.abs() * s);
            if (toward0(n) * toward0(1.0 / d)).is_infinite() {
                <$t>::NAN
            } else {
                x % y
            }
        }
    };
}

sleef_fmod!(fmod32, f32, 33554432.0);
sleef_fmod!(fmod64, f64, 18014398509481984.0);

/// Below `2^52` the f64 quotient `|x| / |y|` is within one of the true integer quotient
/// (see [`fmod64_fast`]).
const FAST_RATIO: f64 = 4503599627370496.0; // 2^52

/// C's `fmod(x, y)` for f64 `x`, `y`, branch-free, and whether `(x, y)` lies outside the fast
/// domain (then the value is garbage and the caller computes the element with `x % y` or
/// [`fmod64`]). The fast domain is `x`, `y` finite, `y != 0`, `|x| < |y| 2^52`; there the value
/// is bit for bit C's (and [`fmod64`]'s: its NaN rule needs `|x| / |y|` near the overflow
/// threshold). NaN, inf and `y = 0` fail the comparisons.
///
/// # Exactness
/// Let `ax = |x|`, `ay = |y|`, `Q = ax / ay` (real), `n = floor(Q)`, `r = ax - n ay`, the exact
/// remainder (`0 <= r < ay`, representable, as every `fmod` result). The algorithm computes
/// `q = trunc(RN(ax / ay))`, `v = fma(-q, ay, ax)`, adds `ay` if `v < 0`, and gives the sign of
/// `x`.
/// 1. `q` is `n` or `n + 1`: `Q < 2^52`, so `n` and `n + 1` are f64 values, and round to
///    nearest is monotone, so `n <= RN(Q) <= n + 1`; `q = n + 1` only when `RN(Q) = n + 1`.
///    Moreover `q = n + 1` implies `r > 0` (if `r = 0`, `Q = n` is exact and `RN(Q) = n`).
/// 2. The exact `ax - q ay` is `r` (`q = n`) or `r - ay` (in `(-ay, 0)`), so `|ax - q ay| < ay`,
///    and it is an f64 value: all of `ax`, `ay`, `q ay` are integer multiples of
///    `u = min(ulp(ax), ulp(ay))`. If `ulp(ay) <= ulp(ax)`, `u = ulp(ay)` and
///    `|ax - q ay| / u < ay / ulp(ay) < 2^53`: representable. Otherwise `ax < ay` (ulp is
///    non-decreasing in the magnitude), so `n = 0`; `q = 0` gives `ax`; `q = 1` would need
///    `RN(Q) = 1`, i.e. `Q >= 1 - 2^-54`, so `0 < ay - ax <= 2^-54 ay < ulp(ay) / 2` — but
///    `ax >= ay / 2` makes `ulp(ax) >= ulp(ay) / 2`, and `ay - ax` is a positive multiple of
///    `ulp(ax)`: impossible. So the single rounding of the `fma` is exact: `v = ax - q ay`.
/// 3. If `v < 0` (`q = n + 1`), `v + ay = r` is representable, so the addition is exact. Then
///    `v = r` in every case, and `fmod(x, y) = copysign(r, x)` (C gives a zero result `x`'s
///    sign). (A zero `ax` gives `fma(-0, ay, +0) = +0`, then `x`'s sign: `fmod(±0, y) = ±0`.)
///
/// Nothing in the argument uses more than `ax`, `ay` being f64 values, so [`fmod32_fast`] runs
/// it on f32 operands widened to f64, where `r`, exact for f32 operands, narrows exactly. Checked
/// bit for bit against `x % y` by `tests::fmod_fast_is_exact` (a dense sweep of pairs).
#[inline(always)]
pub(crate) fn fmod64_fast(x: f64, y: f64) -> (f64, bool) {
    let (ax, ay) = (x.abs(), y.abs());
    // `ay 2^52` is exact (or inf for huge `ay`, where any finite `ax` qualifies: `Q < 2^52`)
    let ok = ax < ay * FAST_RATIO && ay < f64::INFINITY;
    let q = (ax / ay).trunc();
    let v = (-q).mul_add(ay, ax);
    let r = super::sel(v < 0.0, v + ay, v);
    (r.copysign(x), !ok)
}

/// [`fmod64_fast`] for f32 operands (computed in f64; the f32 result is exact, see there).
#[inline(always)]
pub(crate) fn fmod32_fast(x: f32, y: f32) -> (f32, bool) {
    let (r, slow) = fmod64_fast(x as f64, y as f64);
    (r as f32, slow)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// SplitMix64.
    struct Rng(u64);
    impl Rng {
        fn next(&mut self) -> u64 {
            self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
            let mut z = self.0;
            z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
            z ^ (z >> 31)
        }
    }

    /// Edge values: zeros, infinities, NaN, subnormals, the normal boundary, the extremes.
    fn edges32() -> Vec<f32> {
        let mut v = vec![
            0.0,
            f32::INFINITY,
            f32::NAN,
            f32::from_bits(1),
            f32::from_bits(2),
            f32::from_bits(0x007f_ffff),
            f32::MIN_POSITIVE,
            f32::MAX,
            f32::EPSILON,
            1.0,
            1.5,
            3.0,
            0.1,
            1e-38,
            3e38,
            536870912.0, // 2^29
            4503599627370496.0,
        ];
        v.extend(v.clone().iter().map(|x| -x));
        v
    }

    /// Pairs of every kind handed to `check`: every pair of edge values; `iters` random pairs of
    /// bit patterns, each operand also against a random edge value; `iters` random divisors (normal, a quarter
    /// subnormal) with ratios `2^k m` (`k` in `[-8, 64)`, `m` in `[1, 2)`), with dividends a few
    /// ulps around an integer multiple, and a few ulps around the fast domain's bound `2^52`.
    pub(crate) fn sweep32(iters: usize, mut check: impl FnMut(f32, f32)) {
        let mut rng = Rng(0x5eed);
        let e = edges32();
        for &x in &e {
            for &y in &e {
                check(x, y);
            }
        }
        let sign = |r: &mut Rng, v: f32| if r.next() & 1 == 1 { -v } else { v };
        for _ in 0..iters {
            // random bit patterns of both operands (all magnitudes, NaN, inf, subnormals)
            let (x, y) = (
                f32::from_bits(rng.next() as u32),
                f32::from_bits(rng.next() as u32),
            );
            check(x, y);
            // random edge against random bits
            let k = e[(rng.next() % e.len() as u64) as usize];
            check(x, k);
            check(k, y);
        }
        for _ in 0..iters {
            // a random divisor (subnormal a quarter of the time) and a ratio 2^k * m,
            // k in [-8, 64): covers both sides of 2^29 and 2^52
            let y = if rng.next() & 3 == 0 {
                f32::from_bits(rng.next() as u32 & 0x007f_ffff)
            } else {
                f32::from_bits((rng.next() as u32 & 0x07ff_ffff) + 0x2000_0000)
            };
            let k = (rng.next() % 72) as i32 - 8;
            let m = 1.0 + (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            let x = (y as f64 * m * 2f64.powi(k)) as f32;
            check(sign(&mut rng, x), sign(&mut rng, y));
            // near an integer quotient: round(ratio) * y, then a few ulps either side
            let q = (m * 2f64.powi(k.min(60))).round();
            let base = (y as f64 * q) as f32;
            if base.is_finite() {
                let d = (rng.next() % 9) as i32 - 4;
                let xb = f32::from_bits((base.to_bits() as i32 + d).max(0) as u32);
                check(sign(&mut rng, xb), sign(&mut rng, y));
            }
            // ratios right at the domain bound
            let bound = (y as f64 * 4503599627370496.0) as f32;
            let d = (rng.next() % 5) as i32 - 2;
            let xb = f32::from_bits((bound.to_bits() as i32 + d).max(0) as u32);
            check(sign(&mut rng, xb), sign(&mut rng, y));
        }
    }

    #[test]
    fn fmod_fast_is_exact() {
        let (mut fast, mut total) = (0u64, 0u64);
        sweep32(1 << 21, |x, y| {
            total += 1;
            let (v, slow) = fmod32_fast(x, y);
            if slow {
                return;
            }
            fast += 1;
            let want = x % y;
            assert_eq!(v.to_bits(), want.to_bits(), "fmod32_fast({x:e}, {y:e})");
            // SLEEF's NaN rule never fires on the fast domain
            assert_eq!(v.to_bits(), fmod32(x, y).to_bits(), "fmod32({x:e}, {y:e})");
        });
        // most pairs of the ratio sweeps are in the domain; random bit pairs mostly are not
        assert!(fast > total / 3, "{fast} of {total} pairs on the fast path");

        let mut rng = Rng(7);
        let mut fast = 0u64;
        let mut check = |x: f64, y: f64| {
            let (v, slow) = fmod64_fast(x, y);
            if !slow {
                fast += 1;
                assert_eq!(v.to_bits(), (x % y).to_bits(), "fmod64_fast({x:e}, {y:e})");
                assert_eq!(v.to_bits(), fmod64(x, y).to_bits(), "fmod64({x:e}, {y:e})");
            }
        };
        for _ in 0..1 << 20 {
            let (x, y) = (f64::from_bits(rng.next()), f64::from_bits(rng.next()));
            check(x, y);
            let k = (rng.next() % 62) as i32 - 4;
            let m = 1.0 + (rng.next() >> 11) as f64 / (1u64 << 53) as f64;
            let y = f64::from_bits(rng.next() & 0x7fff_ffff_ffff_ffff) * 2f64.powi(-900);
            check(y * m * 2f64.powi(k), -y);
            let q = (m * 2f64.powi(k.min(52))).round();
            let base = y * q;
            let d = (rng.next() % 9) as i64 - 4;
            check(f64::from_bits((base.to_bits() as i64 + d).max(0) as u64), y);
        }
        assert!(fast > 1 << 20, "{fast} f64 pairs on the fast path");
    }
}
