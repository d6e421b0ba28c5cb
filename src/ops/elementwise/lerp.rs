//! Ternary arithmetic composed of differentiable `add`/`mul` (so no backward of their own):
//! `lerp` / `lerp_` and `addcmul` / `addcmul_`.

use crate::dtype::Operand;
use crate::{Result, Scalar, Tensor};

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
        self.add(&t1.mul(t2)?.mul(value.into())?)
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
        let p = t1.mul(t2)?.mul(value.into())?;
        self.add_(&p)
    }
}
