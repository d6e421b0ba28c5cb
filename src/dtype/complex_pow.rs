//! PyTorch's complex `pow(x, y)` on the CPU: `std::pow`, i.e. glibc's `cpow`, which is
//! `exp(y * log(x))` with C99 Annex G's complex product (libgcc's `__muldc3`: a product whose
//! parts both come out NaN is recomputed with the infinite factor "boxed", so
//! `(1 + nan i) * (-inf + 0i)` is `-inf + nan i`, not NaN). `0 ^ (1 + nan i)` is therefore `0`
//! and `inf ^ (1 + nan i)` is `inf + nan i`, as PyTorch's.

use crate::dtype::{C64, C128};

macro_rules! annex_g {
    ($mul:ident, $pow:ident, $C:ty, $T:ty) => {
        /// `x * y` by C99 Annex G (libgcc's `__mulsc3` / `__muldc3`).
        fn $mul(x: $C, y: $C) -> $C {
            let (mut a, mut b, mut c, mut d) = (x.re, x.im, y.re, y.im);
            let (ac, bd, ad, bc) = (a * c, b * d, a * d, b * c);
            let (re, im) = (ac - bd, ad + bc);
            if !(re.is_nan() && im.is_nan()) {
                return <$C>::new(re, im);
            }
            let boxed = |v: $T| (if v.is_infinite() { 1.0 as $T } else { 0.0 }).copysign(v);
            let zero_nan = |v: $T| {
                if v.is_nan() {
                    (0.0 as $T).copysign(v)
                } else {
                    v
                }
            };
            let mut recalc = false;
            if a.is_infinite() || b.is_infinite() {
                (a, b) = (boxed(a), boxed(b));
                (c, d) = (zero_nan(c), zero_nan(d));
                recalc = true;
            }
            if c.is_infinite() || d.is_infinite() {
                (c, d) = (boxed(c), boxed(d));
                (a, b) = (zero_nan(a), zero_nan(b));
                recalc = true;
            }
            if !recalc
                && (ac.is_infinite() || bd.is_infinite() || ad.is_infinite() || bc.is_infinite())
            {
                (a, b, c, d) = (zero_nan(a), zero_nan(b), zero_nan(c), zero_nan(d));
                recalc = true;
            }
            if !recalc {
                return <$C>::new(re, im);
            }
            <$C>::new(
                <$T>::INFINITY * (a * c - b * d),
                <$T>::INFINITY * (a * d + b * c),
            )
        }

        /// `x ^ y` with PyTorch's (glibc's `cpow`) values: `exp(y * log(x))`.
        pub(crate) fn $pow(x: $C, y: $C) -> $C {
            $mul(y, x.ln()).exp()
        }
    };
}

annex_g!(mul_c64, pow_c64, C64, f32);
annex_g!(mul_c128, pow_c128, C128, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nan_exponent_edges() {
        let e = C128::new(1.0, f64::NAN);
        let z = pow_c128(C128::new(0.0, 0.0), e);
        assert!(z.re == 0.0 && z.im == 0.0);
        let z = pow_c128(C128::new(f64::INFINITY, 0.0), e);
        assert!(z.re == f64::INFINITY && z.im.is_nan());
        let z = pow_c64(C64::new(2.0, 0.0), C64::new(3.0, 0.0));
        assert!((z.re - 8.0).abs() < 1e-5 && z.im.abs() < 1e-5);
    }
}
