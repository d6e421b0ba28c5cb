//! `fmod` as PyTorch's vectorised CPU loop computes it (SLEEF's `xfmod`): exact, like C's
//! `fmod`, except that it is NaN where SLEEF's first quotient estimate
//! `toward0(|x|) * toward0(1 / |y|)` overflows (`|x|` and `|y|` scaled by 2^54 in f64, 2^25 in
//! f32, when `|y|` is subnormal), e.g. `fmod(3e38, 1e-38)`. `toward0` is the next float toward
//! zero (0 stays 0). PyTorch runs this body on the vector-width prefix of a contiguous run and
//! C's `fmod` on the tail; `ops/elementwise/binary_extra.rs` picks the prefix.

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
