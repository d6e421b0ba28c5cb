//! PyTorch's complex division (c10's `operator/`, the algorithm NumPy uses): the divisor is
//! scaled by its larger part, so that no intermediate overflows or underflows needlessly, with
//! fused multiply-adds as c10's compiled kernel has them; a zero divisor divides each part by
//! zero (`(1 + 0i) / 0` is `inf + nan i`).

use crate::dtype::{C64, C128};

macro_rules! c10_div {
    ($name:ident, $C:ty, $T:ty) => {
        /// `x / y` with PyTorch's values.
        pub(crate) fn $name(x: $C, y: $C) -> $C {
            let (a, b, c, d) = (x.re, x.im, y.re, y.im);
            let (abs_c, abs_d) = (c.abs(), d.abs());
            if abs_c >= abs_d {
                if abs_c == 0.0 && abs_d == 0.0 {
                    return <$C>::new(a / abs_c, b / abs_d);
                }
                let rat = d / c;
                let scl = 1.0 / d.mul_add(rat, c);
                <$C>::new(b.mul_add(rat, a) * scl, (-a).mul_add(rat, b) * scl)
            } else {
                let rat = c / d;
                let scl = 1.0 / c.mul_add(rat, d);
                <$C>::new(a.mul_add(rat, b) * scl, b.mul_add(rat, -a) * scl)
            }
        }
    };
}

c10_div!(div_c64, C64, f32);
c10_div!(div_c128, C128, f64);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn zero_and_infinite_divisors() {
        let r = div_c128(C128::new(1.0, 0.0), C128::new(0.0, 0.0));
        assert!(r.re == f64::INFINITY && r.im.is_nan());
        let r = div_c128(C128::new(1.0, 0.0), C128::new(f64::INFINITY, 0.0));
        assert_eq!((r.re, r.im), (0.0, 0.0));
        let r = div_c64(C64::new(1.0, 1.0), C64::new(0.0, 2.0));
        assert_eq!((r.re, r.im), (0.5, -0.5));
    }
}
