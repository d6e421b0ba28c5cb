//! `binary_cross_entropy` on probabilities (PyTorch's `F.binary_cross_entropy`): logs clamped
//! at -100, input checked to lie in `[0, 1]`, gradients for both input and target. (The logits
//! form lives in [`super::elementwise`].)

use super::Reduction;
use crate::autograd::{SavedTensor, no_grad, record};
use crate::ops::grad::{GradIf, backward, grads};
use crate::{DType, Result, Tensor, bail};

/// PyTorch's `EPSILON` in `binary_cross_entropy_backward`.
const EPS: f64 = 1e-12;

/// Backward of the elementwise loss; saved: input, target.
struct BinaryCrossEntropyBackward;

backward!(
    BinaryCrossEntropyBackward,
    "BinaryCrossEntropyBackward0",
    |self, ctx, g: Tensor| {
        let (x, t) = (&ctx.saved[0], &ctx.saved[1]);
        let gx = ctx.grad_if(0, || {
            let one_minus = x.neg()?.add(1.0)?;
            let den = x.mul(&one_minus)?.clamp_min(EPS)?;
            g.mul(&x.sub(t)?)?.div(&den)
        })?;
        // PyTorch's `binary_cross_entropy_target_backward`: `-logit(x) g`, unclamped (±inf at
        // x = 0 / 1), `logit(x) = log(x / (1 - x))`
        let gt = ctx.grad_if(1, || {
            let logit = x.div(&x.neg()?.add(1.0)?)?.log()?;
            g.mul(&logit.neg()?)
        })?;
        grads([gx, gt])
    }
);

impl Tensor {
    /// Binary cross entropy between probabilities `self` (in `[0, 1]`) and `target` of the same
    /// shape and dtype: `-w (t ln x + (1 - t) ln(1 - x))` with each log clamped at -100,
    /// optionally weighted (broadcast) and reduced.
    ///
    /// ```
    /// # use tapegrad::{Tensor, Reduction};
    /// let p = Tensor::from_vec(vec![0.5f64, 1.0], &[2])?;
    /// let t = Tensor::from_vec(vec![1.0f64, 0.0], &[2])?;
    /// let l = p.binary_cross_entropy(&t, None, Reduction::None)?;
    /// let v = l.to_vec::<f64>()?;
    /// assert!((v[0] - 2f64.ln()).abs() < 1e-12 && v[1] == 100.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn binary_cross_entropy(
        &self,
        target: &Tensor,
        weight: Option<&Tensor>,
        reduction: Reduction,
    ) -> Result<Tensor> {
        let op = "binary_cross_entropy";
        if !self.dtype().is_float() {
            bail!(
                DTypeMismatch,
                op,
                "\"binary_cross_entropy\" not implemented for '{}'",
                self.dtype().torch_scalar_name()
            );
        }
        if target.shape() != self.shape() {
            bail!(
                ShapeMismatch,
                op,
                "Using a target size ({:?}) that is different to the input size ({:?}) is deprecated. Please ensure they have the same size.",
                target.shape(),
                self.shape()
            );
        }
        super::check_weight_no_grad(weight, op, "weight", op)?;
        if target.dtype() != self.dtype() {
            bail!(
                DTypeMismatch,
                op,
                "expected scalar type {} but found {}",
                self.dtype().torch_scalar_name(),
                target.dtype().torch_scalar_name()
            );
        }
        let loss = {
            let _g = no_grad();
            // computed in f64 per element (one pass, the backend's f64 log lanes), rounded
            // back to the input dtype
            // PyTorch checks input then target element by element: the first element out of
            // [0, 1] (NaN included) names the tensor, the input when both are out there
            let (bad_x, bad_t) = (outside_unit(self)?, outside_unit(target)?);
            if bad_x || bad_t {
                let first_outside = |v: &Tensor| -> Result<Option<usize>> {
                    let mask = v.ge(0.0)?.logical_and(&v.le(1.0)?)?.logical_not()?;
                    let hits = crate::backend::movement::nonzero(&mask.data(), DType::Bool)?;
                    Ok(hits.first().copied())
                };
                let (bad_x, bad_t) = (first_outside(self)?, first_outside(target)?);
                let which = match (bad_x, bad_t) {
                    (Some(i), Some(j)) if j < i => "target",
                    (None, _) => "target",
                    _ => "input",
                };
                bail!(
                    InvalidArgument,
                    op,
                    "all elements of {} should be between 0 and 1",
                    which
                );
            }
            bce_term(self, target, op)?
        };
        record(
            &[&loss],
            &[self, target],
            || vec![SavedTensor::input(self), SavedTensor::input(target)],
            BinaryCrossEntropyBackward,
        )?;
        let loss = match weight {
            Some(w) => loss.mul(w)?,
            None => loss,
        };
        match reduction {
            Reduction::None => Ok(loss),
            Reduction::Sum => loss.sum(),
            Reduction::Mean => loss.mean((), false, None),
        }
    }
}

/// Whether some element of float tensor `v` lies outside `[0, 1]` (NaN included).
fn outside_unit(v: &Tensor) -> Result<bool> {
    use crate::dtype::cast;
    crate::match_dtype!(v.dtype(), float, (T, _C) => {
        crate::backend::any::<T>(&v.data(), &|e: T| {
            let e = cast::<T, f64>(e);
            !(0.0..=1.0).contains(&e)
        })
    }, else unreachable!("internal: checked float"))
}

/// `-(t max(ln x, -100) + (1 - t) max(ln(1 - x), -100))` elementwise (`x`, `t` of one float
/// dtype and shape, in `[0, 1]`), computed in f64 and rounded once.
fn bce_term(x: &Tensor, t: &Tensor, op: &'static str) -> Result<Tensor> {
    use crate::backend::bce_f64;
    use crate::dtype::cast;
    use crate::ops::elementwise::binary::binary_map;
    crate::match_dtype!(x.dtype(), float, (T, _C) => {
        binary_map::<T, T>(x, t, op, #[inline(always)] |a, b| {
            cast::<f64, T>(bce_f64(cast::<T, f64>(a), cast::<T, f64>(b)))
        })
    }, else unreachable!("internal: checked float"))
}
