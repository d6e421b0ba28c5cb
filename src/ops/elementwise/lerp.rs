//! Ternary arithmetic composed of differentiable `add`/`mul`/`div` (so no backward of their
//! own): `lerp` / `lerp_`, `addcmul` / `addcmul_` and `addcdiv` / `addcdiv_`.

use crate::dtype::{Operand, result_type};
use crate::{DType, Result, Scalar, Tensor, bail};

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

impl Tensor {
    /// `self + weight * (end - self)` (weight: tensor or scalar). Composed of differentiable ops.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// let b = Tensor::from_vec(vec![10.0f32], &[1])?;
    /// assert_eq!(a.lerp(&b, 0.25)?.to_vec::<f32>()?, vec![2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lerp(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        self.add(&end.sub(self)?.mul(weight)?)
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
        let d = end.sub(self)?.mul(weight)?;
        self.add_(&d)
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
        self.add(&addcdiv_term(self, t1, t2, value.into())?)
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
        let p = addcdiv_term(self, t1, t2, value.into())?;
        self.add_(&p)
    }
}
