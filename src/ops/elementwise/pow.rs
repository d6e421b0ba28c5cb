//! `pow` (tensor ^ scalar, tensor ^ tensor, scalar ^ tensor) and `pow_`, `square` / `square_`
//! (`pow(2)`, as PyTorch defines it: bool squares to int64), with PyTorch's
//! promotion (an integer tensor to a negative integer scalar is an error) and backward
//! `g * conj(e * x^(e-1))` for the base, `g * y * ln(x)` for the exponent; complex bases to the
//! scalars 0, 1, 2, 3, -2 are one, a copy or products, as PyTorch computes them.

use crate::autograd::{SavedTensor, record};
use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::{binary_map, operand_tensor};
use crate::ops::elementwise::map::unary_map;
use crate::ops::grad::{GradIf, backward, grads, input_grad};
use crate::ops::util::{tensors, write_back};
use crate::{DType, Element, Result, Scalar, Tensor, bail};

fn ipow<T: Copy + PartialEq + Default>(
    mut base: T,
    mut e: i64,
    one: T,
    mul: impl Fn(T, T) -> T,
    neg_one: T,
) -> T {
    if e < 0 {
        return if base == one {
            one
        } else if base == neg_one {
            if e % 2 == 0 { one } else { neg_one }
        } else {
            T::default()
        };
    }
    let mut r = one;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    r
}

/// `f` over `a` and `b`; a scalar exponent (`scalar`: `b` is its 0-dim tensor) runs as a unary
/// map, so the result is laid out like PyTorch's unary iterator lays out `pow(t, s)`.
fn pow_map<T: Element>(
    a: &Tensor,
    b: &Tensor,
    scalar: bool,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Tensor> {
    if scalar {
        let e = b.item::<T>()?;
        unary_map::<T, T>(a, |x| f(x, e))
    } else {
        binary_map::<T, T>(a, b, "pow", f)
    }
}

fn pow_kernel(a: &Tensor, b: &Tensor, dt: DType, scalar: bool) -> Result<Tensor> {
    macro_rules! int {
        ($T:ty) => {
            pow_map::<$T>(a, b, scalar, |x, e| {
                ipow(
                    x,
                    e as i64,
                    1 as $T,
                    |p, q| p.wrapping_mul(q),
                    (0 as $T).wrapping_sub(1),
                )
            })
        };
    }
    use crate::backend::Transcendental;
    use crate::dtype::FloatCompute;
    match dt {
        DType::Bool => pow_map::<bool>(a, b, scalar, |x, e| x || !e),
        // f32 (and f16/bf16, computed in f32) on the vectorised lanes; f64 by std's `powf`
        d if d.is_float() => crate::match_dtype!(d, float, T => {
            pow_map::<T>(
                a,
                b,
                scalar,
                #[inline(always)]
                |x, e| T::narrow(x.widen().vpow(e.widen())),
            )
        }),
        // glibc's cpow (`exp(y log x)` with Annex G's product), as PyTorch's std::pow
        DType::C64 => pow_map(a, b, scalar, crate::dtype::pow_c64),
        DType::C128 => pow_map(a, b, scalar, crate::dtype::pow_c128),
        d => crate::match_dtype!(d, int, T => int!(T)),
    }
}

pub(crate) fn pow_result(a: &Operand, b: &Operand) -> Result<Tensor> {
    let dt = result_type(&[a, b]);
    if let (Operand::Tensor(_), Operand::Scalar(Scalar::Int(e))) = (a, b)
        && dt.is_integral(false)
        && *e < 0
    {
        bail!(
            InvalidArgument,
            "pow",
            "Integers to negative integer powers are not allowed."
        );
    }
    let (ta, tb) = (operand_tensor(a, dt)?, operand_tensor(b, dt)?);
    if let (Operand::Tensor(_), Operand::Scalar(e @ (Scalar::Int(_) | Scalar::Float(_)))) = (a, b)
        && dt.is_complex()
        && let Some(r) = complex_small_power(&ta, e.to_f64(), dt)
    {
        return r;
    }
    if let (Operand::Tensor(_), Operand::Scalar(e @ (Scalar::Int(_) | Scalar::Float(_)))) = (a, b)
        && matches!(dt, DType::F32 | DType::F64)
        && let Some(r) = real_small_power(&ta, e.to_f64(), dt)
    {
        return r;
    }
    let scalar_exp = matches!((a, b), (Operand::Tensor(_), Operand::Scalar(_)));
    pow_kernel(&ta, &tb, dt, scalar_exp)
}

/// PyTorch's f32/f64 `pow` by the scalars 0, 1, 0.5, 2, 3, -0.5, -1 and -2: its CPU kernel's
/// special cases (fill, copy, `sqrt`, `x*x`, `x*x*x`, `1/sqrt(x)`, `1/x`, `1/(x*x)`), so
/// `pow(-0.0, 0.5)` is -0.0 and `pow(-inf, 0.5)` NaN as there, and `square`, `pow(x, 2)` and
/// the backward of `pow` run as one vectorised map instead of an f64 `powf` per element (the
/// per-op speed sweep's `square` and `pow_2`: 0.01x PyTorch). `None` for other exponents.
fn real_small_power(a: &Tensor, e: f64, dt: DType) -> Option<Result<Tensor>> {
    use crate::ops::elementwise::map::float_go;
    Some(if e == 0.0 {
        float_go!(dt, a, None, R, |_x| 1.0)
    } else if e == 1.0 {
        float_go!(dt, a, None, R, |x| x)
    } else if e == 0.5 {
        float_go!(dt, a, None, R, |x| x.sqrt())
    } else if e == 2.0 {
        float_go!(dt, a, None, R, |x| x * x)
    } else if e == 3.0 {
        float_go!(dt, a, None, R, |x| x * x * x)
    } else if e == -0.5 {
        float_go!(dt, a, None, R, |x| 1.0 / x.sqrt())
    } else if e == -1.0 {
        float_go!(dt, a, None, R, |x| 1.0 / x)
    } else if e == -2.0 {
        float_go!(dt, a, None, R, |x| 1.0 / (x * x))
    } else {
        return None;
    })
}

/// PyTorch's complex `pow` by the scalars 0, 1, 2, 3 and -2: one, a copy, products
/// (`z * z`, ...; fused multiply-adds), not `exp(e log z)`, so exact values stay exact. `None`
/// for other exponents.
fn complex_small_power(a: &Tensor, e: f64, dt: DType) -> Option<Result<Tensor>> {
    macro_rules! go {
        ($T:ty, $fma:expr) => {{
            let one = <$T>::new(1.0, 0.0);
            // the complex product as PyTorch's compiled kernels compute it: complex64 with each
            // part one fused multiply-add (so `(1e30 - 1e30i)^2` is `-inf - inf i`, where the
            // textbook formula gives `inf - inf = NaN`), complex128 by the textbook formula
            // (recorded: `(1e30 - 1e30i)^2` has real part exactly 0 there)
            let mul = |x: $T, y: $T| {
                if $fma {
                    <$T>::new(
                        x.re.mul_add(y.re, -(x.im * y.im)),
                        x.re.mul_add(y.im, x.im * y.re),
                    )
                } else {
                    x * y
                }
            };
            if e == 0.0 {
                Some(unary_map::<$T, $T>(a, move |_| one))
            } else if e == 1.0 {
                Some(unary_map::<$T, $T>(a, |z| z))
            } else if e == 2.0 {
                Some(unary_map::<$T, $T>(a, |z| mul(z, z)))
            } else if e == 3.0 {
                Some(unary_map::<$T, $T>(a, |z| mul(mul(z, z), z)))
            } else if e == -2.0 {
                Some(unary_map::<$T, $T>(a, move |z| one / mul(z, z)))
            } else {
                None
            }
        }};
    }
    match dt {
        DType::C64 => go!(crate::dtype::C64, true),
        _ => go!(crate::dtype::C128, false),
    }
}

/// `e >= 0` as PyTorch's pow backward reads it: for a complex `e`, real (zero imaginary part)
/// and with a real part >= 0.
fn real_nonnegative(e: &Tensor) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    match e.dtype() {
        DType::C64 => unary_map::<crate::dtype::C64, bool>(e, |z| z.im == 0.0 && z.re >= 0.0),
        DType::C128 => unary_map::<crate::dtype::C128, bool>(e, |z| z.im == 0.0 && z.re >= 0.0),
        _ => e.ge(0),
    }
}

/// Backward of pow. `kind` 0: tensor ^ scalar (saved self), 1: tensor ^ tensor (saved self,
/// exponent, result), 2: scalar ^ tensor (saved result, exponent).
pub(crate) struct PowBackward {
    pub(crate) kind: u8,
    pub(crate) scalar: Scalar,
}

backward!(
    PowBackward,
    ["PowBackward0", "PowBackward1", "PowBackward2"][self.kind as usize],
    |self, ctx, g: Tensor| {
        let s = &ctx.saved;
        match self.kind {
            0 => {
                let e = self.scalar;
                if e.is_zero() {
                    return input_grad(g.zeros_like()?);
                }
                let em1 = match e {
                    Scalar::Int(i) => Scalar::Int(i - 1),
                    Scalar::Complex(z) => Scalar::Complex(z - 1.0),
                    o => Scalar::Float(o.to_f64() - 1.0),
                };
                // PyTorch's `grad * (e * x^(e-1)).conj()` (the conjugate for complex x)
                input_grad(g.mul(&s[0].pow(em1)?.mul(e)?.conj_if_complex()?)?)
            }
            1 => {
                // PyTorch's `where(e == 0, 0, g * conj(e * x^(e-1)))` for the base and
                // `g * where(x == 0 & e >= 0, 0, conj(y * ln x))` for the exponent (`e >= 0`:
                // real and >= 0 for a complex exponent; `x` promoted to the result's dtype)
                let (x, e, y) = (&s[0], &s[1], &s[2]);
                let ga = ctx.grad_if(0, || {
                    let r = g.mul(&e.mul(&x.pow(&e.sub(1)?)?)?.conj_if_complex()?)?;
                    Tensor::where_(&e.eq(0)?, 0.0, &r)
                })?;
                let gb = ctx.grad_if(1, || {
                    let xp = x.to_dtype(y.dtype())?;
                    let r = y.mul(&xp.log()?)?.conj_if_complex()?;
                    let m = x.eq(0)?.logical_and(&real_nonnegative(e)?)?;
                    g.mul(&Tensor::where_(&m, 0.0, &r)?)
                })?;
                grads([ga, gb])
            }
            _ => {
                // PyTorch's `g * conj(y * ln(base))` (the base complex when the exponent is),
                // zero where the base is 0 and the exponent (real and) >= 0
                let (y, e) = (&s[0], &s[1]);
                let r = if e.dtype().is_complex() {
                    let b = match self.scalar {
                        Scalar::Complex(z) => z,
                        o => crate::dtype::C128::new(o.to_f64(), 0.0),
                    };
                    y.mul(Scalar::Complex(b.ln()))?.conj_if_complex()?
                } else {
                    y.mul(self.scalar.to_f64().ln())?
                };
                if self.scalar.is_zero() {
                    g.mul(&Tensor::where_(&real_nonnegative(e)?, 0.0, &r)?)
                        .and_then(input_grad)
                } else {
                    input_grad(g.mul(&r)?)
                }
            }
        }
    }
);

impl Tensor {
    /// `self ^ exponent` (tensor or scalar exponent, PyTorch promotion; an integer tensor to a
    /// negative integer scalar is an error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![2i64, 3], &[2])?;
    /// assert_eq!(i.pow(2)?.to_vec::<i64>()?, vec![4, 9]);
    /// assert_eq!(i.pow(0.5)?.dtype(), tapegrad::DType::F32);
    /// assert!(i.pow(-1).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let e = exponent.into();
        let a = Operand::Tensor(self.clone());
        let out = pow_result(&a, &e)?;
        if out.dtype().is_differentiable() {
            match &e {
                Operand::Scalar(s) => {
                    let bw = PowBackward {
                        kind: 0,
                        scalar: *s,
                    };
                    record(&[&out], &[self], || vec![SavedTensor::input(self)], bw)?;
                }
                Operand::Tensor(t) => {
                    let bw = PowBackward {
                        kind: 1,
                        scalar: Scalar::Int(0),
                    };
                    record(
                        &[&out],
                        &[self, t],
                        || {
                            vec![
                                SavedTensor::input(self),
                                SavedTensor::input(t),
                                SavedTensor::output(&out, 0),
                            ]
                        },
                        bw,
                    )?;
                }
            }
        }
        Ok(out)
    }
    /// In-place [`Tensor::pow`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![3.0f32], &[1])?;
    /// x.pow_(2)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![9.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow_(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let e = exponent.into();
        let a = Operand::Tensor(self.clone());
        let et = tensors(&[&e]);
        let refs: Vec<&Tensor> = et.iter().collect();
        let (kind, scalar) = match &e {
            Operand::Scalar(s) => (0, *s),
            Operand::Tensor(_) => (1, Scalar::Int(0)),
        };
        let et2 = et.clone();
        write_back(
            self,
            &refs,
            "pow_",
            || pow_result(&a, &e),
            move |o, out| {
                let mut v: Vec<SavedTensor> = o.into_iter().collect();
                if let Some(t) = et2.first() {
                    v.push(SavedTensor::input(t));
                    v.push(SavedTensor::output(out, 0));
                }
                v
            },
            PowBackward { kind, scalar },
        )
    }
    /// `base ^ exponent` for a scalar base (`torch.pow(2, t)`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![0i64, 5], &[2])?;
    /// assert_eq!(Tensor::pow_scalar_base(2, &t)?.to_vec::<i64>()?, vec![1, 32]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow_scalar_base(base: impl Into<Scalar>, exponent: &Tensor) -> Result<Tensor> {
        let s = base.into();
        let out = pow_result(&Operand::Scalar(s), &Operand::Tensor(exponent.clone()))?;
        if out.dtype().is_differentiable() {
            let bw = PowBackward { kind: 2, scalar: s };
            record(
                &[&out],
                &[exponent],
                || vec![SavedTensor::output(&out, 0), SavedTensor::input(exponent)],
                bw,
            )?;
        }
        Ok(out)
    }
    /// `self * self` as PyTorch's `square` (`pow(self, 2)`: integers keep their dtype, bool
    /// gives int64; gradient `2 g x`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![-3i32, 2], &[2])?;
    /// assert_eq!(t.square()?.to_vec::<i32>()?, vec![9, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn square(&self) -> Result<Tensor> {
        self.pow(2)
    }
    /// In-place [`Tensor::square`] (a bool tensor cannot hold the int64 result: an error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![1.5f32], &[1])?;
    /// t.square_()?;
    /// assert_eq!(t.to_vec::<f32>()?, vec![2.25]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn square_(&self) -> Result<Tensor> {
        self.pow_(2)
    }
}
