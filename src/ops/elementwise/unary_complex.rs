//! The complex forms of the unary math ops ([`UOp`]) with PyTorch's values: principal branches
//! (`log`, `sqrt`, the inverse trigonometric functions), c10's `log1p`/`expm1` formulas (exact
//! near 0), `log2`/`log10` as `log(z)` divided by `ln 2`/`ln 10`, `exp2` as `exp(z ln 2)` and
//! `reciprocal`/`sigmoid`/`rsqrt` through PyTorch's scaled division, and C99 Annex G's values
//! where a part is infinite or NaN or the real part is large (`sinh`, `cosh`, `tanh`, the
//! inverse functions; `sin z = -i sinh(i z)` and the like). complex64 is computed in
//! complex128 and rounded once. Their gradients follow PyTorch's conjugate
//! Wirtinger convention: `grad * conj(f'(z))` (see `unary_grad.rs`).

use crate::dtype::{C64, C128, div_c128};
use crate::ops::elementwise::map::run;
use crate::ops::elementwise::unary::UOp;
use crate::{DType, Result, Tensor, bail};
use std::f64::consts::{LN_2, LN_10};

/// Whether PyTorch computes `op` on complex inputs (and tapegrad does, here).
pub(crate) fn supports(op: UOp) -> bool {
    use UOp::*;
    matches!(
        op,
        Neg | Exp
            | Exp2
            | Log
            | Log2
            | Log10
            | Log1p
            | Expm1
            | Sqrt
            | Rsqrt
            | Reciprocal
            | Sin
            | Cos
            | Tan
            | Asin
            | Acos
            | Atan
            | Sinh
            | Cosh
            | Tanh
            | Sigmoid
            | Silu
    )
}

/// PyTorch's complex reciprocal: `1 / z` by its scaled division.
fn recip(z: C128) -> C128 {
    div_c128(C128::new(1.0, 0.0), z)
}

/// `i z`, and `-i z` (the rotations of the identities `sin z = -i sinh(i z)` and the like).
fn mul_i(z: C128) -> C128 {
    C128::new(-z.im, z.re)
}
fn mul_neg_i(z: C128) -> C128 {
    C128::new(z.im, -z.re)
}

/// The largest `x` with a finite `exp(x)` (as C's `csinh`/`ccosh` bound it).
const EXP_MAX: f64 = 708.0;

/// `sin y, cos y`, with `y, 1` for a tiny `y` (exact).
fn sin_cos(y: f64) -> (f64, f64) {
    if y.abs() > f64::MIN_POSITIVE {
        y.sin_cos()
    } else {
        (y, 1.0)
    }
}

/// `e^|x| (s, c) / 2` without overflowing before the end (the large-`x` branch of C's
/// `csinh`/`ccosh`).
fn exp_half_scaled(x: f64, s: f64, c: f64) -> (f64, f64) {
    let t = EXP_MAX;
    let et = t.exp();
    let (mut rx, mut s, mut c) = (x.abs() - t, s * et / 2.0, c * et / 2.0);
    if rx > t {
        rx -= t;
        s *= et;
        c *= et;
    }
    if rx > t {
        (s * f64::MAX, c * f64::MAX)
    } else {
        let ev = rx.exp();
        (s * ev, c * ev)
    }
}

/// `sinh z` with C99 Annex G's special values (as glibc's `csinh`).
fn sinh(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    if x.is_finite() {
        if y.is_finite() {
            let (s, c) = sin_cos(y);
            if x.abs() > EXP_MAX {
                let c = if x < 0.0 { -c } else { c };
                let (im, re) = exp_half_scaled(x, s, c);
                return C128::new(re, im);
            }
            return C128::new(x.sinh() * c, x.cosh() * s);
        }
        if x == 0.0 {
            return C128::new(x, f64::NAN);
        }
        return C128::new(f64::NAN, f64::NAN);
    }
    if x.is_infinite() {
        if y == 0.0 {
            return z;
        }
        if y.is_finite() {
            let (s, c) = y.sin_cos();
            return C128::new(
                f64::INFINITY.copysign(c) * x.signum(),
                f64::INFINITY.copysign(s),
            );
        }
        return C128::new(x, f64::NAN);
    }
    C128::new(f64::NAN, if y == 0.0 { y } else { f64::NAN })
}

/// `cosh z` with C99 Annex G's special values (as glibc's `ccosh`).
fn cosh(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    if x.is_finite() {
        if y.is_finite() {
            let (s, c) = sin_cos(y);
            if x.abs() > EXP_MAX {
                let s = if x < 0.0 { -s } else { s };
                let (im, re) = exp_half_scaled(x, s, c);
                return C128::new(re, im);
            }
            return C128::new(x.cosh() * c, x.sinh() * s);
        }
        return C128::new(f64::NAN, if x == 0.0 { 0.0 } else { f64::NAN });
    }
    if x.is_infinite() {
        if y == 0.0 {
            return C128::new(f64::INFINITY, y * x.signum());
        }
        if y.is_finite() {
            let (s, c) = y.sin_cos();
            return C128::new(
                f64::INFINITY.copysign(c),
                f64::INFINITY.copysign(s) * x.signum(),
            );
        }
        return C128::new(f64::INFINITY, f64::NAN);
    }
    C128::new(f64::NAN, if y == 0.0 { y } else { f64::NAN })
}

/// `tanh z` with C99 Annex G's special values and no overflow for a large real part (as
/// glibc's `ctanh`).
fn tanh(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    if !x.is_finite() || !y.is_finite() {
        if x.is_infinite() {
            let im = if y.is_finite() && y.abs() > 1.0 {
                let (s, c) = y.sin_cos();
                0.0f64.copysign(s * c)
            } else {
                0.0f64.copysign(y)
            };
            return C128::new(1.0f64.copysign(x), im);
        }
        if y == 0.0 {
            return z;
        }
        return C128::new(if x == 0.0 { x } else { f64::NAN }, f64::NAN);
    }
    let (s, c) = sin_cos(y);
    let t = 354.0; // (the largest exponent) * ln 2 / 2
    if x.abs() > t {
        let e2t = (2.0 * t).exp();
        let rx = x.abs() - t;
        let mut im = 4.0 * s * c / e2t;
        im /= if rx > t { e2t } else { (2.0 * rx).exp() };
        return C128::new(1.0f64.copysign(x), im);
    }
    let (sh, ch) = if x.abs() > f64::MIN_POSITIVE {
        (x.sinh(), x.cosh())
    } else {
        (x, 1.0)
    };
    let den = if sh.abs() > c.abs() * f64::EPSILON {
        sh * sh + c * c
    } else {
        c * c
    };
    C128::new(sh * ch / den, s * c / den)
}

/// `sqrt z` with Annex G's values where a part is infinite or NaN (`sqrt(x + i inf)` is
/// `inf + i inf` even for a NaN `x`; `sqrt(inf + i y)` is `inf + i 0`).
fn sqrt(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    if y.is_infinite() {
        return C128::new(f64::INFINITY, y);
    }
    if x.is_infinite() {
        let inner = if y.is_nan() { y } else { 0.0f64.copysign(y) };
        return if x > 0.0 {
            C128::new(x, inner)
        } else {
            C128::new(if y.is_nan() { y } else { 0.0 }, f64::INFINITY.copysign(y))
        };
    }
    if x.is_nan() || y.is_nan() {
        return C128::new(f64::NAN, f64::NAN);
    }
    z.sqrt()
}

/// `asinh z`: Annex G's values where a part is infinite or NaN, else the principal branch.
fn asinh(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    let (ax, ay) = (x.abs(), y.abs());
    let r = if ax.is_infinite() || ay.is_infinite() {
        if ax.is_nan() || ay.is_nan() {
            C128::new(f64::INFINITY, f64::NAN)
        } else if ax.is_infinite() && ay.is_infinite() {
            C128::new(f64::INFINITY, std::f64::consts::FRAC_PI_4)
        } else if ax.is_infinite() {
            C128::new(f64::INFINITY, 0.0)
        } else {
            C128::new(f64::INFINITY, std::f64::consts::FRAC_PI_2)
        }
    } else if ax.is_nan() || ay.is_nan() {
        return C128::new(f64::NAN, if y == 0.0 { y } else { f64::NAN });
    } else {
        return z.asinh();
    };
    // odd, and conj(asinh z) = asinh(conj z): the signs of the parts follow the input's
    C128::new(r.re.copysign(x), r.im.copysign(y))
}

/// `acos z`: Annex G's values where a part is infinite or NaN, else the principal branch.
fn acos(z: C128) -> C128 {
    use std::f64::consts::{FRAC_PI_2, FRAC_PI_4, PI};
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        if z.norm() > 1e8 {
            // pi/2 - asin z: the textbook formula cancels for a large z
            let s = mul_neg_i(asinh(mul_i(z)));
            return C128::new(FRAC_PI_2 - s.re, -s.im);
        }
        return z.acos();
    }
    let r = if y.is_infinite() {
        let re = if x.is_nan() {
            f64::NAN
        } else if x == f64::INFINITY {
            FRAC_PI_4
        } else if x == f64::NEG_INFINITY {
            3.0 * FRAC_PI_4
        } else {
            FRAC_PI_2
        };
        C128::new(re, f64::NEG_INFINITY)
    } else if x.is_infinite() {
        if y.is_nan() {
            C128::new(f64::NAN, f64::INFINITY)
        } else if x > 0.0 {
            C128::new(0.0, f64::NEG_INFINITY)
        } else {
            C128::new(PI, f64::NEG_INFINITY)
        }
    } else if x == 0.0 {
        C128::new(FRAC_PI_2, f64::NAN)
    } else {
        C128::new(f64::NAN, f64::NAN)
    };
    // conj(acos z) = acos(conj z)
    if y.is_sign_negative() && !r.im.is_nan() {
        C128::new(r.re, -r.im)
    } else {
        r
    }
}

/// `atanh z`: Annex G's values where a part is infinite or NaN, else the principal branch.
fn atanh(z: C128) -> C128 {
    use std::f64::consts::FRAC_PI_2;
    let (x, y) = (z.re, z.im);
    if x.is_finite() && y.is_finite() {
        if x.abs() == 1.0 && y == 0.0 {
            return C128::new(f64::INFINITY.copysign(x), y);
        }
        return z.atanh();
    }
    let r = if y.is_infinite() || x.is_infinite() {
        if y.is_nan() {
            C128::new(0.0, f64::NAN)
        } else {
            C128::new(0.0, FRAC_PI_2)
        }
    } else if x == 0.0 {
        return C128::new(x, f64::NAN);
    } else {
        return C128::new(f64::NAN, f64::NAN);
    };
    C128::new(
        r.re.copysign(x),
        if r.im.is_nan() {
            r.im
        } else {
            r.im.copysign(y)
        },
    )
}

/// c10's `log1p`: `log|1 + z| + i arg(1 + z)`, with `log1p(x (2 + x) + y^2) / 2` near 0.
fn log1p(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    let theta = y.atan2(x + 1.0);
    if z.norm() < 0.5 {
        let r = x * (2.0 + x) + y * y;
        if r == 0.0 {
            return C128::new(x, theta);
        }
        C128::new(0.5 * r.ln_1p(), theta)
    } else {
        C128::new((x + 1.0).hypot(y).ln(), theta)
    }
}

/// c10's `expm1`: `expm1(x) cos(y) - 2 sin(y/2)^2 + i e^x sin(y)`.
fn expm1(z: C128) -> C128 {
    let (x, y) = (z.re, z.im);
    let a = (y / 2.0).sin();
    C128::new(x.exp_m1() * y.cos() - 2.0 * a * a, x.exp() * y.sin())
}

/// `1 / (1 + e^-z)`, by PyTorch's division.
fn sigmoid(z: C128) -> C128 {
    recip((-z).exp() + 1.0)
}

/// The complex function of `op` (in complex128).
fn math(op: UOp) -> fn(C128) -> C128 {
    use UOp::*;
    match op {
        Neg => |z| -z,
        Exp => |z| z.exp(),
        Exp2 => |z| (z * LN_2).exp(),
        Log => |z| z.ln(),
        Log2 => |z| z.ln() / LN_2,
        Log10 => |z| z.ln() / LN_10,
        Log1p => log1p,
        Expm1 => expm1,
        Sqrt => sqrt,
        Rsqrt => |z| recip(sqrt(z)),
        Reciprocal => recip,
        Sin => |z| mul_neg_i(sinh(mul_i(z))),
        Cos => |z| cosh(mul_i(z)),
        Tan => |z| mul_neg_i(tanh(mul_i(z))),
        Asin => |z| mul_neg_i(asinh(mul_i(z))),
        Acos => acos,
        Atan => |z| mul_neg_i(atanh(mul_i(z))),
        Sinh => sinh,
        Cosh => cosh,
        Tanh => tanh,
        Sigmoid => sigmoid,
        Silu => |z| div_c128(z, (-z).exp() + 1.0),
        _ => unreachable!("internal: {op:?} has no complex form"),
    }
}

/// Runs `op` on the complex tensor `a` (into `out` for in-place); the caller has checked
/// [`supports`]. `neg` and `exp` of complex64 stay in complex64 (exact / as before).
pub(crate) fn kernel(op: UOp, a: &Tensor, out: Option<&Tensor>) -> Result<Tensor> {
    match (op, a.dtype()) {
        (UOp::Neg, DType::C64) => run::<C64>(a, out, |x| -x),
        (UOp::Exp, DType::C64) => run::<C64>(a, out, |x| x.exp()),
        (UOp::Exp2, DType::C64) => run::<C64>(a, out, |x| {
            // `z ln 2` rounded to complex64 first, as PyTorch scales before its `exp`
            let l = std::f32::consts::LN_2;
            let r = C128::new((x.re * l) as f64, (x.im * l) as f64).exp();
            C64::new(r.re as f32, r.im as f32)
        }),
        (_, DType::C64) => {
            let f = math(op);
            run::<C64>(a, out, move |x| {
                let r = f(C128::new(x.re as f64, x.im as f64));
                C64::new(r.re as f32, r.im as f32)
            })
        }
        (_, DType::C128) => run::<C128>(a, out, math(op)),
        (_, d) => bail!(
            InvalidArgument,
            "unary op",
            "internal: complex kernel for {}",
            d.torch_scalar_name()
        ),
    }
}

/// `grad * conj(f'(z))` for the complex ops (PyTorch's derivatives.yaml formulas); `s` is the
/// saved input or output (see `UOp::save`).
pub(crate) fn grad(op: UOp, g: &Tensor, s: &Tensor) -> Result<Tensor> {
    use UOp::*;
    let c = |t: Tensor| t.conj_if_complex();
    Ok(match op {
        Neg => g.neg()?,
        Exp => g.mul(&c(s.clone())?)?,
        Exp2 => g.mul(&c(s.clone())?)?.mul(LN_2)?,
        Log => g.div(&c(s.clone())?)?,
        Log2 => g.div(&c(s.clone())?.mul(LN_2)?)?,
        Log10 => g.div(&c(s.clone())?.mul(LN_10)?)?,
        Log1p => g.div(&c(s.add(1.0)?)?)?,
        Expm1 => g.mul(&c(s.clone())?.add(1.0)?)?,
        Sqrt => g.div(&c(s.clone())?.mul(2.0)?)?,
        Rsqrt => g.mul(&c(s.mul(s)?.mul(s)?)?)?.mul(-0.5)?,
        Reciprocal => g.mul(&c(s.mul(s)?)?)?.neg()?,
        Sin => g.mul(&c(s.cos()?)?)?,
        Cos => g.mul(&c(s.sin()?)?.neg()?)?,
        Tan => g.mul(&c(s.mul(s)?.add(1.0)?)?)?,
        Asin => g.mul(&c(s.mul(s)?.neg()?.add(1.0)?.rsqrt()?)?)?,
        Acos => g.mul(&c(s.mul(s)?.neg()?.add(1.0)?.rsqrt()?)?.neg()?)?,
        Atan => g.div(&c(s.mul(s)?.add(1.0)?)?)?,
        Sinh => g.mul(&c(s.cosh()?)?)?,
        Cosh => g.mul(&c(s.sinh()?)?)?,
        Tanh => g.mul(&c(s.mul(s)?.neg()?.add(1.0)?)?)?,
        Sigmoid => g.mul(&c(s.neg()?.add(1.0)?.mul(s)?)?)?,
        _ => unreachable!("internal: {op:?} has no complex gradient"),
    })
}
