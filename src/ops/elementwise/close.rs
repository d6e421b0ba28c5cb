//! Closeness and equality of two tensors, none recording autograd: `isclose` (elementwise,
//! PyTorch's formula: equal, or NaN on both sides with `equal_nan`, or `|a - b|` finite and
//! `<= atol + |rtol * b|`, composed of the same ops PyTorch composes it of, integers in f32),
//! `allclose` (all of `isclose`) and `equal` (same shape and every element equal, after
//! promotion).

use crate::{DType, Result, Tensor, bail};

impl Tensor {
    /// Elementwise `|self - other| <= atol + |rtol * other|` (or equal, or both NaN with
    /// `equal_nan`) as Bool. Both tensors must have one dtype; tolerances must be >= 0.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    /// let b = Tensor::from_vec(vec![1.0f64 + 1e-9, 2.1], &[2])?;
    /// assert_eq!(a.isclose(&b, 1e-5, 1e-8, false)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn isclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<Tensor> {
        if self.dtype() != other.dtype() {
            bail!(
                DTypeMismatch,
                "isclose",
                "{} did not match {}",
                self.dtype().torch_scalar_name(),
                other.dtype().torch_scalar_name()
            );
        }
        if equal_nan && self.dtype().is_complex() {
            // (PyTorch's own check, `equal_nan` spelled as tapegrad's argument)
            bail!(
                Unsupported,
                "isclose",
                "isclose with equal_nan = true is not supported for complex inputs"
            );
        }
        if rtol.is_nan() || rtol < 0.0 {
            bail!(
                InvalidArgument,
                "isclose",
                "rtol must be greater than or equal to zero, but got {}",
                rtol
            );
        }
        if atol.is_nan() || atol < 0.0 {
            bail!(
                InvalidArgument,
                "isclose",
                "atol must be greater than or equal to zero, but got {}",
                atol
            );
        }
        let _g = crate::autograd::no_grad();
        // (PyTorch updates `close` in place: its version counts the updates)
        let close = self.eq(other)?;
        if equal_nan && self.dtype().is_float() {
            close.logical_or_(&self.isnan()?.logical_and(&other.isnan()?)?)?;
        }
        if rtol == 0.0 && atol == 0.0 {
            return Ok(close);
        }
        // integer and bool operands compute in the default float dtype (f32)
        let cast = |t: &Tensor| {
            if t.dtype().is_integral(true) {
                t.to_dtype(DType::F32)
            } else {
                Ok(t.clone())
            }
        };
        let (a, b) = (cast(self)?, cast(other)?);
        let allowed = b.mul(rtol)?.abs()?.add(atol)?;
        let actual = a.sub(&b)?.abs()?;
        let finite_close = actual.isfinite()?.logical_and(&actual.le(&allowed)?)?;
        close.logical_or_(&finite_close)
    }

    /// True if [`Tensor::isclose`] holds everywhere (the shapes must broadcast).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// assert!(a.allclose(&a.add(1e-7)?, 1e-5, 1e-8, false)?);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn allclose(&self, other: &Tensor, rtol: f64, atol: f64, equal_nan: bool) -> Result<bool> {
        let c = self.isclose(other, rtol, atol, equal_nan)?;
        c.all((), false)?.item::<bool>()
    }

    /// True if both tensors have one shape and equal elements (compared after promotion; NaN
    /// is never equal).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert!(a.equal(&Tensor::from_vec(vec![1.0f32, 2.0], &[2])?)?);
    /// assert!(!a.equal(&Tensor::from_vec(vec![1i64], &[1])?)?);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn equal(&self, other: &Tensor) -> Result<bool> {
        if self.shape() != other.shape() {
            return Ok(false);
        }
        let _g = crate::autograd::no_grad();
        self.eq(other)?.all((), false)?.item::<bool>()
    }
}
