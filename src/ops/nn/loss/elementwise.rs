//! Elementwise regression/binary losses: `mse_loss`, `l1_loss` and
//! `binary_cross_entropy_with_logits`, with their backward formulas (the BCE one built from
//! ops on the saved logits/target, so it is differentiable twice).

use super::{BceWithLogitsOptions, Reduction, reduce};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::ops::grad::{GradIf, backward, grads, zero_grad_link};
use crate::ops::nn::check_float;
use crate::{DType, Result, Tensor, bail};

/// Backward whose derivative w.r.t. each input is a constant tensor (l1_loss: the sign of the
/// difference; its derivative is zero almost everywhere, so this is exact to every order).
struct ConstGradBackward {
    name: &'static str,
    /// d out / d input_k (same shape as out), per input
    grads: Vec<Tensor>,
}

// saved: the inputs (PyTorch's formula reads them, `grad * sgn(d)`: under create_graph the
// gradient is linked to them with a zero derivative)
backward!(ConstGradBackward, self.name, |self, ctx, g: Tensor| {
    let on: Vec<&Tensor> = ctx.saved.iter().collect();
    self.grads
        .iter()
        .enumerate()
        .map(|(i, d)| ctx.grad_if(i, || zero_grad_link(g.mul(d)?, &on, self.name)))
        .collect()
});

/// Backward of the elementwise BCE-with-logits loss `(1-y)x + (1+(pw-1)y)·softplus(-x)`, built
/// from ops on the saved logits and target (so it is differentiable again):
/// d/dx = `(1-y) - (1+(pw-1)y)·sigmoid(-x)`, d/dy = `-x + (pw-1)·softplus(-x)`.
struct BceWithLogitsBackward {
    /// Broadcast pos_weight (a constant), `None` = 1.
    pos_weight: Option<Tensor>,
}

backward!(
    BceWithLogitsBackward,
    "BinaryCrossEntropyWithLogitsBackward0",
    |self, ctx, g: Tensor| {
        let (x, y) = (&ctx.saved[0], &ctx.saved[1]);
        let nx = x.neg()?;
        let gx = ctx.grad_if(0, || {
            let s = nx.sigmoid()?;
            let ls = match &self.pos_weight {
                Some(p) => y.mul(&p.sub(1.0)?)?.add(1.0)?.mul(&s)?,
                None => s,
            };
            g.mul(&y.neg()?.add(1.0)?.sub(&ls)?)
        })?;
        let gy = ctx.grad_if(1, || {
            let d = match &self.pos_weight {
                Some(p) => nx.add(&p.sub(1.0)?.mul(&nx.softplus(1.0, 20.0)?)?)?,
                None => nx.clone(),
            };
            g.mul(&d)
        })?;
        grads([gx, gy])
    }
);

impl Tensor {
    /// Mean squared error `(self - target)^2`, reduced.
    ///
    /// ```
    /// # use tapegrad::{Tensor, Reduction};
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], &[2])?;
    /// let y = Tensor::from_vec(vec![0.0f32, 0.0], &[2])?;
    /// assert_eq!(x.mse_loss(&y, Reduction::Mean)?.item::<f32>()?, 5.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn mse_loss(&self, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
        let d = self.sub(target)?;
        reduce(d.mul(&d)?, reduction)
    }

    /// Mean absolute error `|self - target|`, reduced.
    ///
    /// ```
    /// # use tapegrad::{Tensor, Reduction};
    /// let x = Tensor::from_vec(vec![1.0f32, -3.0], &[2])?;
    /// let y = Tensor::from_vec(vec![0.0f32, 0.0], &[2])?;
    /// assert_eq!(x.l1_loss(&y, Reduction::Sum)?.item::<f32>()?, 4.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn l1_loss(&self, target: &Tensor, reduction: Reduction) -> Result<Tensor> {
        let d = self.sub(target)?;
        check_float(&d, "l1_loss")?;
        let sh = d.shape();
        let (out, sg) = {
            let _g = no_grad();
            // exact in every dtype; the sign's derivative is 0 (NaN: 0, like the former loop)
            let sg = d.sign()?;
            let sg = sg.masked_fill(&sg.ne(&sg)?, 0.0)?;
            (d.abs()?, sg)
        };
        debug_assert_eq!(out.shape(), sh);
        record(
            &[&out],
            &[&d],
            || vec![SavedTensor::input(&d)],
            ConstGradBackward {
                name: "AbsBackward0",
                grads: vec![sg],
            },
        )?;
        reduce(out, reduction)
    }

    /// Binary cross entropy on logits `self` with float `target`, optional `weight` and
    /// `pos_weight` (stable: `(1-y)x + (1+(pw-1)y)·softplus(-x)`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64], &[1])?;
    /// let l = x.binary_cross_entropy_with_logits(&Tensor::from_vec(vec![1.0f64], &[1])?, Default::default())?;
    /// assert!((l.item::<f64>()? - 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn binary_cross_entropy_with_logits(
        &self,
        target: &Tensor,
        opts: BceWithLogitsOptions<'_>,
    ) -> Result<Tensor> {
        let op = "binary_cross_entropy_with_logits";
        check_float(self, op)?;
        if target.shape() != self.shape() {
            bail!(
                ShapeMismatch,
                op,
                "Target size ({:?}) must be the same as input size ({:?})",
                target.shape(),
                self.shape()
            );
        }
        for (w, arg) in [(opts.weight, "weight"), (opts.pos_weight, "pos_weight")] {
            super::check_weight_no_grad(w, op, arg, op)?;
        }
        let sh = self.shape();
        let dt = self.dtype();
        // composed in f64 (the values of the former f64 host loop, bit for bit):
        // (1 - y) x + (1 + (pw - 1) y) softplus(-x), softplus(z) = max(z, 0) + ln_1p(exp(-|z|))
        let (out, pw) = {
            let _g = no_grad();
            let x = self.to_dtype(DType::F64)?;
            let y = target.to_dtype(DType::F64)?;
            let nx = x.neg()?;
            let sp = nx.clamp_min(0.0)?.add(&nx.abs()?.neg()?.exp()?.log1p()?)?;
            let coef = match opts.pos_weight {
                Some(p) => p
                    .broadcast_to(&sh)?
                    .to_dtype(DType::F64)?
                    .sub(1.0)?
                    .mul(&y)?
                    .add(1.0)?,
                // (1 + 0 y, as the former loop: NaN where y is not finite)
                None => y.mul(0.0)?.add(1.0)?,
            };
            let l = y.neg()?.add(1.0)?.mul(&x)?.add(&coef.mul(&sp)?)?;
            let pw = match opts.pos_weight {
                Some(p) => Some(
                    p.broadcast_to(&sh)?
                        .to_dtype(DType::F64)?
                        .to_dtype(dt)?
                        .contiguous()?,
                ),
                None => None,
            };
            (l.to_dtype(dt)?, pw)
        };
        record(
            &[&out],
            &[self, target],
            || vec![SavedTensor::input(self), SavedTensor::input(target)],
            BceWithLogitsBackward { pos_weight: pw },
        )?;
        let out = match opts.weight {
            Some(w) => out.mul(w)?,
            None => out,
        };
        reduce(out, opts.reduction)
    }
}
