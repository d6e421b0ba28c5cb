//! Division with a rounding mode (`torch.div(a, b, rounding_mode="trunc" | "floor")`): the
//! result keeps the promoted dtype (integers stay integers), integer division by zero is an
//! error, and the gradient is zero for both operands (PyTorch's `DivBackward2`).

use crate::autograd::{no_grad, record};
use crate::dtype::{Operand, result_type};
use crate::ops::grad::{GradIf, backward};
use crate::{Result, Tensor};

/// How [`Tensor::div_rounding`] rounds the quotient.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RoundingMode {
    /// Round toward zero (C-style integer division).
    Trunc,
    /// Round toward negative infinity (Python's `//`, same as `floor_divide`).
    Floor,
}

/// Zero gradient for every differentiable input.
struct DivRoundBackward {
    n: usize,
}

backward!(DivRoundBackward, "DivBackward2", |self, ctx, g: Tensor| {
    (0..self.n)
        .map(|i| ctx.grad_if(i, || g.zeros_like()))
        .collect()
});

impl Tensor {
    /// `self / other` rounded by `mode`, in the promoted dtype of the operands (no promotion of
    /// integers to float, unlike [`Tensor::div`]). Integer division by zero errors
    /// (`InvalidArgument`); float division by zero gives ±inf/NaN.
    ///
    /// ```
    /// # use tapegrad::{Tensor, RoundingMode};
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.div_rounding(2, RoundingMode::Trunc)?.to_vec::<i64>()?, vec![3, -3]);
    /// assert_eq!(a.div_rounding(2, RoundingMode::Floor)?.to_vec::<i64>()?, vec![3, -4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn div_rounding(&self, other: impl Into<Operand>, mode: RoundingMode) -> Result<Tensor> {
        let other = other.into();
        let dt = result_type(&[&Operand::Tensor(self.clone()), &other]);
        let out = {
            let _g = no_grad();
            match mode {
                RoundingMode::Floor => self.floor_divide(other.clone())?,
                RoundingMode::Trunc if dt.is_float() || dt.is_complex() => {
                    self.div(other.clone())?.trunc()?
                }
                RoundingMode::Trunc => {
                    // floor and trunc differ exactly where fmod and remainder differ
                    let q = self.floor_divide(other.clone())?;
                    let fix = self
                        .fmod(other.clone())?
                        .ne(self.remainder(other.clone())?)?;
                    q.add(&fix)?
                }
            }
        };
        if dt.is_differentiable() {
            let mut ins = vec![self.clone()];
            if let Operand::Tensor(t) = &other {
                ins.push(t.clone());
            }
            let refs: Vec<&Tensor> = ins.iter().collect();
            record(&[&out], &refs, Vec::new, DivRoundBackward { n: refs.len() })?;
        }
        Ok(out)
    }
}
