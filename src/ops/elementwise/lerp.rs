//! Ternary arithmetic: `lerp` / `lerp_` (its own kernel, PyTorch's two-branch formula, and
//! backward), `addcdiv` / `addcdiv_` (one backward node with PyTorch's formula; the value in
//! one ternary pass for one f32/f64 dtype, else composed of `mul`/`div`/`add`) and `addcmul` /
//! `addcmul_` (composed of differentiable `add`/`mul`, so no backward of its own; one ternary
//! pass when no gradient is recorded, as for `addcdiv`).

use crate::autograd::{SavedTensor, record};
use crate::dtype::{Operand, result_type};
use crate::layout::{broadcast_shapes, iter_output_strides};
use crate::ops::elementwise::binary::{binary_map, operand_tensor, scalar_tensor};
use crate::ops::grad::{GradIf, backward, grads};
use crate::ops::util::{tensors, write_back};
use crate::{DType, Element, Result, Scalar, Tensor, bail};

/// PyTorch's lerp (`Lerp.h`), in the compute type (f32 for f16/bf16): for a small weight
/// (`|w| < 0.5`) `s + w (e - s)`, else `e - (e - s)(1 - w)`, so a weight of 1 gives `e`
/// exactly; NaN weights take the second branch.
macro_rules! lerp_real {
    ($s:expr, $e:expr, $w:expr) => {{
        let (s, e, w) = ($s, $e, $w);
        if w.abs() < 0.5 {
            s + w * (e - s)
        } else {
            e - (e - s) * (1.0 - w)
        }
    }};
}

/// [`lerp_real!`] for complex values: the weight is small when `re² + im² < 0.25`, and the
/// products are the plain `(ac - bd, ad + bc)` ones.
macro_rules! lerp_complex {
    ($s:expr, $e:expr, $w:expr) => {{
        let (s, e, w) = ($s, $e, $w);
        if w.re * w.re + w.im * w.im < 0.25 {
            s + w * (e - s)
        } else {
            e - (e - s) * (num_complex::Complex::new(1.0, 0.0) - w)
        }
    }};
}

/// `f(x, e, w)` over the broadcast of three tensors of type `T`, into a fresh tensor whose
/// strides follow the operands' memory order (PyTorch's TensorIterator: self, end, weight;
/// self, tensor1, tensor2).
fn map3_fresh<T: Element>(
    x: &Tensor,
    e: &Tensor,
    w: &Tensor,
    name: &'static str,
    f: impl Fn(T, T, T) -> T + Sync,
) -> Result<Tensor> {
    for t in [x, e, w] {
        t.check_strided(name)?;
    }
    let s1 = broadcast_shapes(&x.shape(), &e.shape(), name)?;
    let shape = broadcast_shapes(&s1, &w.shape(), name)?;
    let (xd, ed, wd) = (x.data(), e.data(), w.data());
    let sx = crate::ops::util::broadcast_strides(&xd.layout, &shape);
    let se = crate::ops::util::broadcast_strides(&ed.layout, &shape);
    let sw = crate::ops::util::broadcast_strides(&wd.layout, &shape);
    let strides = iter_output_strides(
        &shape,
        &[&xd.layout, &ed.layout, &wd.layout],
        &[&sx, &se, &sw],
    );
    let out = Tensor::empty_strided(&shape, &strides, T::DTYPE)?;
    // `out` is fresh: no overlap with the inputs
    crate::backend::map3::<T, T, T>(&out.data(), &xd, &ed, &wd, &f);
    Ok(out)
}

/// The value of `lerp(x, e, w)` (no autograd): promoted operands, PyTorch's formula per
/// element; integral and bool results are refused as PyTorch's kernel does.
fn lerp_result(x: &Tensor, e: &Tensor, w: &Operand) -> Result<Tensor> {
    let dt = result_type(&[&x.into(), &e.into(), w]);
    if !(dt.is_float() || dt.is_complex()) {
        bail!(
            DTypeMismatch,
            "lerp",
            "lerp is not implemented for {} tensors",
            dt.torch_scalar_name()
        );
    }
    let (tx, te) = (
        operand_tensor(&x.into(), dt)?,
        operand_tensor(&e.into(), dt)?,
    );
    match w {
        Operand::Scalar(s) => {
            let s = *s;
            crate::match_dtype!(dt, float, (T, C) => {
                use crate::dtype::FloatCompute;
                // PyTorch reads the weight in the compute type directly (f32 for f16/bf16)
                let wc: C = s.to::<C>();
                binary_map::<T, T>(&tx, &te, "lerp", move |a, b| {
                    <T as FloatCompute>::narrow(lerp_real!(a.widen(), b.widen(), wc))
                })
            }, else crate::match_dtype!(dt, complex, T => {
                let wc: T = s.to::<T>();
                binary_map::<T, T>(&tx, &te, "lerp", move |a, b| lerp_complex!(a, b, wc))
            }))
        }
        Operand::Tensor(wt) => {
            let tw = operand_tensor(&wt.into(), dt)?;
            crate::match_dtype!(dt, float, (T, C) => {
                use crate::dtype::FloatCompute;
                map3_fresh::<T>(&tx, &te, &tw, "lerp", |a, b, c| {
                    let c: C = c.widen();
                    <T as FloatCompute>::narrow(lerp_real!(a.widen(), b.widen(), c))
                })
            }, else crate::match_dtype!(dt, complex, T => {
                map3_fresh::<T>(&tx, &te, &tw, "lerp", |a, b, c| lerp_complex!(a, b, c))
            }))
        }
    }
}

/// Backward of `lerp` (PyTorch's `LerpBackward0/1`): `g (1 - conj w)` for `self`, `g conj w`
/// for `end`, `g conj(end - self)` for a tensor weight. Saved: `self`, `end` (then `weight`)
/// for a tensor weight, nothing for a scalar one.
struct LerpBackward {
    weight: Option<Scalar>,
}

fn conj_scalar(s: Scalar) -> Scalar {
    match s {
        Scalar::Complex(z) => Scalar::Complex(z.conj()),
        v => v,
    }
}

backward!(
    LerpBackward,
    if self.weight.is_some() {
        "LerpBackward0"
    } else {
        "LerpBackward1"
    },
    |self, ctx, g: Tensor| {
        if let Some(w) = self.weight {
            let wc = conj_scalar(w);
            let one_minus = match wc {
                Scalar::Complex(z) => Scalar::Complex(num_complex::Complex::new(1.0, 0.0) - z),
                v => Scalar::Float(1.0 - v.to_f64()),
            };
            return grads([
                ctx.grad_if(0, || g.mul(one_minus))?,
                ctx.grad_if(1, || g.mul(wc))?,
            ]);
        }
        let s = &ctx.saved;
        let (x, e, w) = (&s[0], &s[1], &s[2]);
        grads([
            ctx.grad_if(0, || {
                let one = scalar_tensor(Scalar::Int(1), w.dtype());
                g.mul(&one.sub(w)?.conj_if_complex()?)
            })?,
            ctx.grad_if(1, || g.mul(&w.conj_if_complex()?))?,
            ctx.grad_if(2, || g.mul(&e.sub(x)?.conj_if_complex()?))?,
        ])
    }
);

fn lerp_op(x: &Tensor, e: &Tensor, w: Operand) -> Result<Tensor> {
    let out = lerp_result(x, e, &w)?;
    if out.dtype().is_differentiable() {
        match &w {
            Operand::Scalar(s) => record(
                &[&out],
                &[x, e],
                Vec::new,
                LerpBackward { weight: Some(*s) },
            )?,
            Operand::Tensor(wt) => record(
                &[&out],
                &[x, e, wt],
                || {
                    vec![
                        SavedTensor::input(x),
                        SavedTensor::input(e),
                        SavedTensor::input(wt),
                    ]
                },
                LerpBackward { weight: None },
            )?,
        }
    }
    Ok(out)
}

fn lerp_op_(x: &Tensor, e: &Tensor, w: Operand) -> Result<Tensor> {
    let wt = tensors(&[&w]);
    let mut others = vec![e];
    others.extend(wt.iter());
    let weight = match &w {
        Operand::Scalar(s) => Some(*s),
        Operand::Tensor(_) => None,
    };
    let (se, sw) = (SavedTensor::input(e), wt.first().map(SavedTensor::input));
    write_back(
        x,
        &others,
        "lerp_",
        || lerp_result(x, e, &w),
        |orig, a| match sw {
            Some(sw) => vec![
                orig.unwrap_or_else(|| SavedTensor::private(a.clone())),
                se,
                sw,
            ],
            None => Vec::new(),
        },
        LerpBackward { weight },
    )
}

/// `value * t1 / t2` for `addcdiv` in the dtype PyTorch computes it in (that of `self`, `t1`
/// and `t2` together; `value` does not take part), multiplied before dividing as PyTorch's
/// kernel does. Two integer (or bool) divisors are refused.
/// `value` as PyTorch's `addcmul`/`addcdiv` kernels read it: converted to the result dtype of
/// the three tensors (not promoting it) with the checked conversion (an out-of-range value is
/// an error); an integral result truncates it toward zero.
fn addc_value(
    x: &Tensor,
    t1: &Tensor,
    t2: &Tensor,
    value: Scalar,
    op: &'static str,
) -> Result<Scalar> {
    let dt: DType = result_type(&[&x.into(), &t1.into(), &t2.into()]);
    crate::ops::movement::copy::check_fits(value, dt, op)?;
    Ok(match value {
        Scalar::Float(f) if dt.is_integral(false) => Scalar::Int(f.trunc() as i64),
        v => v,
    })
}

fn addcdiv_term(x: &Tensor, t1: &Tensor, t2: &Tensor, value: Scalar) -> Result<Tensor> {
    if t1.dtype().is_integral(true) && t2.dtype().is_integral(true) {
        bail!(
            DTypeMismatch,
            "addcdiv",
            "Integer division with addcdiv is no longer supported, and in a future release addcdiv will perform a true division of tensor1 and tensor2. The historic addcdiv behavior can be implemented as (input + value * (tensor1 / tensor2).trunc()).to_dtype(input.dtype()) for integer inputs and as (input + value * tensor1 / tensor2) for float inputs."
        );
    }
    let dt: DType = result_type(&[&x.into(), &t1.into(), &t2.into()]);
    let cast = |t: &Tensor| {
        if t.dtype() == dt {
            Ok(t.clone())
        } else {
            t.to_dtype(dt)
        }
    };
    cast(t1)?.mul(value)?.div(&cast(t2)?)
}

/// Backward of `addcdiv` (PyTorch's `AddcdivBackward0`, one node as there, so the engine sums
/// each gradient to its input's shape): `g` for `self`, `g conj(value / t2)` for `t1` (the
/// division of the scalar rounded once, in the compute type), `-g conj(value t1 / (t2 t2))`
/// for `t2`. Saved: `t1`, `t2`.
struct AddcdivBackward {
    value: Scalar,
}

backward!(
    AddcdivBackward,
    "AddcdivBackward0",
    |self, ctx, g: Tensor| {
        let (t1, t2) = (&ctx.saved[0], &ctx.saved[1]);
        let v = self.value;
        grads([
            ctx.grad_if(0, || Ok(g.clone()))?,
            ctx.grad_if(1, || {
                // PyTorch's `value / t2`: a wrapped scalar, read in the compute type (f32 for
                // f16/bf16), one rounding to t2's dtype
                let dt = t2.dtype();
                let q = if matches!(dt, DType::F16 | DType::BF16) {
                    scalar_tensor(v, DType::F32)
                        .div(&t2.to_dtype(DType::F32)?)?
                        .to_dtype(dt)?
                } else {
                    scalar_tensor(v, dt).div(t2)?
                };
                g.mul(&q.conj_if_complex()?)
            })?,
            ctx.grad_if(2, || {
                let q = t1.mul(v)?.div(&t2.mul(t2)?)?;
                g.neg()?.mul(&q.conj_if_complex()?)
            })?,
        ])
    }
);

/// `x + value * t1 * t2` (`div`: `x + value * t1 / t2`) in one pass, PyTorch's kernel order
/// (`value * t1` first), when the three tensors share the dtype f32 or f64 and `value` is real;
/// `None` otherwise (the callers compose the value from `mul`/`div`/`add`).
fn addc_fused(
    x: &Tensor,
    t1: &Tensor,
    t2: &Tensor,
    value: Scalar,
    div: bool,
) -> Option<Result<Tensor>> {
    let dt = x.dtype();
    if !matches!(dt, DType::F32 | DType::F64)
        || t1.dtype() != dt
        || t2.dtype() != dt
        || !matches!(value, Scalar::Int(_) | Scalar::Float(_))
    {
        return None;
    }
    let name = if div { "addcdiv" } else { "addcmul" };
    Some(crate::match_dtype!(dt, float, (T, C) => {
        use crate::dtype::FloatCompute;
        let v: C = value.to::<C>();
        if div {
            map3_fresh::<T>(x, t1, t2, name, #[inline(always)] move |s, a, b| {
                T::narrow(s.widen() + v * a.widen() / b.widen())
            })
        } else {
            map3_fresh::<T>(x, t1, t2, name, #[inline(always)] move |s, a, b| {
                T::narrow(s.widen() + v * a.widen() * b.widen())
            })
        }
    }))
}

fn addcdiv_op(x: &Tensor, t1: &Tensor, t2: &Tensor, value: Scalar) -> Result<Tensor> {
    let out = {
        let _g = crate::autograd::no_grad();
        match addc_fused(x, t1, t2, value, true) {
            Some(r) => r?,
            None => x.add(&addcdiv_term(x, t1, t2, value)?)?,
        }
    };
    if out.dtype().is_differentiable() {
        record(
            &[&out],
            &[x, t1, t2],
            || vec![SavedTensor::input(t1), SavedTensor::input(t2)],
            AddcdivBackward { value },
        )?;
    }
    Ok(out)
}

impl Tensor {
    /// `self + weight * (end - self)` (weight: tensor or scalar), computed as PyTorch does:
    /// `end - (end - self) * (1 - weight)` when `|weight| >= 0.5`. Floating and complex only.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// let b = Tensor::from_vec(vec![10.0f32], &[1])?;
    /// assert_eq!(a.lerp(&b, 0.25)?.to_vec::<f32>()?, vec![2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lerp(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        lerp_op(self, end, weight.into())
    }
    /// In-place [`Tensor::lerp`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// a.lerp_(&Tensor::from_vec(vec![10.0f32], &[1])?, 0.5)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lerp_(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        lerp_op_(self, end, weight.into())
    }
    /// `self + value * t1 * t2`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// assert_eq!(a.addcmul(&a, &a, 2.0)?.to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcmul(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let v = addc_value(self, t1, t2, value.into(), "addcmul")?;
        let grad = crate::autograd::is_grad_enabled()
            && (self.requires_grad() || t1.requires_grad() || t2.requires_grad());
        if !grad && let Some(r) = addc_fused(self, t1, t2, v, false) {
            return r;
        }
        self.add(&t1.mul(t2)?.mul(v)?)
    }
    /// In-place [`Tensor::addcmul`] (`self` may alias `t1`/`t2`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// a.addcmul_(&a, &a, 2.0)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcmul_(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let v = addc_value(self, t1, t2, value.into(), "addcmul_")?;
        let p = t1.mul(t2)?.mul(v)?;
        self.add_(&p)
    }
    /// `self + value * t1 / t2` (broadcasting; two integer divisors are an error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// let t2 = Tensor::from_vec(vec![4.0f32], &[1])?;
    /// assert_eq!(a.addcdiv(&a, &t2, 2.0)?.to_vec::<f32>()?, vec![1.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcdiv(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        addcdiv_op(self, t1, t2, value.into())
    }
    /// In-place [`Tensor::addcdiv`] (`self` must hold the promoted result).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// a.addcdiv_(&Tensor::from_vec(vec![1.0f32], &[1])?, &Tensor::from_vec(vec![4.0f32], &[1])?, 1)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![1.25]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcdiv_(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let value = value.into();
        let (s1, s2) = (SavedTensor::input(t1), SavedTensor::input(t2));
        write_back(
            self,
            &[t1, t2],
            "addcdiv_",
            || self.add(&addcdiv_term(self, t1, t2, value)?),
            |_, _| vec![s1, s2],
            AddcdivBackward { value },
        )
    }
}
