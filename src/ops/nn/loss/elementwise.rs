//! Elementwise regression/binary losses: `mse_loss` (reduced: one pass over the difference),
//! `l1_loss` and `binary_cross_entropy_with_logits`, with their backward formulas (the BCE one
//! built from ops on the saved logits/target, so it is differentiable twice).

use super::{BceWithLogitsOptions, Reduction, reduce};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::ops::grad::{GradIf, backward, grads, zero_grad_link};
use crate::ops::nn::check_float;
use crate::{DType, Result, Tensor, bail};

/// Backward of `l1_loss`'s `|d|`, `d = input - target`: `g sgn(d)` (NaN: 0), the sign taken
/// from the saved `d` when the gradient is asked for (so the forward is PyTorch's two passes).
/// The sign's derivative is zero almost everywhere, so this is exact to every order: under
/// create_graph the gradient is linked to `d` with a zero derivative.
struct L1Backward;

backward!(L1Backward, "AbsBackward0", |self, ctx, g: Tensor| {
    let d = &ctx.saved[0];
    let gd = ctx.grad_if(0, || {
        let sg = {
            let _g = no_grad();
            let sg = d.sign()?;
            sg.masked_fill(&sg.ne(&sg)?, 0.0)?
        };
        zero_grad_link(g.mul(&sg)?, &[d], "AbsBackward0")
    })?;
    grads([gd])
});

/// Backward of the reduced `mse_loss` on `d = input - target`: `2 d g`, over the element
/// count for the mean (PyTorch's `mse_loss_backward`: `2/n` first), built from ops on the saved
/// `d`, so it is differentiable again.
struct MseLossBackward {
    /// Mean reduction: the number of elements.
    mean_of: Option<f64>,
}

backward!(
    MseLossBackward,
    "MseLossBackward0",
    |self, ctx, g: Tensor| {
        let d = &ctx.saved[0];
        let norm = 2.0 / self.mean_of.unwrap_or(1.0);
        let gd = ctx.grad_if(0, || d.mul(norm)?.mul(&g))?;
        grads([gd])
    }
);

/// `sum(d^2)` (over the count for the mean) of a contiguous f32/f64 `d` in one pass, on the
/// dot kernel (the same bits as `d.mul(&d)` summed; PyTorch's two passes, where the squares
/// made a third: per-op sweep row `mse_loss`); `None` for other inputs and `Reduction::None`.
fn mse_reduced(d: &Tensor, reduction: Reduction) -> Result<Option<Tensor>> {
    let dt = d.dtype();
    if reduction == Reduction::None || !matches!(dt, DType::F32 | DType::F64) || !d.is_contiguous()
    {
        return Ok(None);
    }
    let out = {
        let _g = no_grad();
        let flat = d.reshape(&[-1])?;
        let Some(s) = crate::backend::dot_dense(&flat.data(), &flat.data(), dt) else {
            return Ok(None);
        };
        let s = Tensor::full((), s, dt)?;
        match reduction {
            Reduction::Mean => s.div(d.numel() as f64)?,
            _ => s,
        }
    };
    let bw = MseLossBackward {
        mean_of: (reduction == Reduction::Mean).then_some(d.numel() as f64),
    };
    record(&[&out], &[d], || vec![SavedTensor::input(d)], bw)?;
    Ok(Some(out))
}

/// Backward of `binary_cross_entropy_with_logits` (weight and reduction included), PyTorch's
/// `binary_cross_entropy_with_logits_backward` / `_target_backward` in their order of
/// operations (`g` = the reduced output's gradient; `/ numel` last, for the mean), built from
/// ops on the saved logits and target (so it is differentiable again):
/// d/dx = `(sigmoid(x) - y) g w` (pos_weight: `((pw y + 1 - y) sigmoid(x) - pw y) g w`),
/// d/dy = `-x g w` (pos_weight: `(log_sigmoid(-x) - log_sigmoid(x) pw) g w`). PyTorch's
/// in-place steps under `create_graph` are kept in place: they give its version counts.
struct BceWithLogitsBackward {
    /// Broadcast pos_weight (a constant), `None` = 1.
    pos_weight: Option<Tensor>,
    /// The elementwise weight (a constant).
    weight: Option<Tensor>,
    /// Mean reduction: the number of input elements.
    mean_of: Option<usize>,
}

backward!(
    BceWithLogitsBackward,
    "BinaryCrossEntropyWithLogitsBackward0",
    |self, ctx, g: Tensor| {
        let (x, y) = (&ctx.saved[0], &ctx.saved[1]);
        let gx = ctx.grad_if(0, || {
            let s = x.sigmoid()?;
            let d = match &self.pos_weight {
                Some(p) => {
                    let t = p.mul(y)?;
                    t.add(1.0)?.sub(y)?.mul(&s)?.sub(&t)?
                }
                None => s.sub(y)?,
            };
            let mut gx = d.mul(&g)?;
            if let Some(w) = &self.weight {
                gx = gx.mul(w)?;
            }
            if let Some(n) = self.mean_of {
                gx.div_(n as f64)?;
            }
            Ok(gx)
        })?;
        let gy = ctx.grad_if(1, || {
            let gy = match &self.pos_weight {
                Some(p) => {
                    // log_sigmoid(z) = -softplus(-z)
                    let gy = x.softplus(1.0, 20.0)?.neg()?;
                    gy.sub_(&x.neg()?.softplus(1.0, 20.0)?.neg()?.mul_(p)?)?;
                    gy.mul_(&g)?;
                    gy
                }
                None => x.neg()?.mul(&g)?,
            };
            if let Some(w) = &self.weight {
                gy.mul_(w)?;
            }
            if let Some(n) = self.mean_of {
                gy.div_(n as f64)?;
            }
            Ok(gy)
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
        if let Some(out) = mse_reduced(&d, reduction)? {
            return Ok(out);
        }
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
        let out = {
            let _g = no_grad();
            d.abs()?
        };
        record(&[&out], &[&d], || vec![SavedTensor::input(&d)], L1Backward)?;
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
        // (1 - y) x + (1 + (pw - 1) y) softplus(-x), softplus(z) = max(z, 0) +
        // ln_1p(exp(-|z|)); without pos_weight one fused pass on the backend's lanes in the
        // compute type, else in f64
        let (out, pw) = {
            let _g = no_grad();
            let out = match opts.pos_weight {
                None if target.dtype() == dt => bce_logits_term(self, target, op)?,
                _ => {
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
                        // (1 + 0 y: NaN where y is not finite, as the fused term)
                        None => y.mul(0.0)?.add(1.0)?,
                    };
                    let l = y.neg()?.add(1.0)?.mul(&x)?.add(&coef.mul(&sp)?)?;
                    l.to_dtype(dt)?
                }
            };
            let pw = match opts.pos_weight {
                Some(p) => Some(
                    p.broadcast_to(&sh)?
                        .to_dtype(DType::F64)?
                        .to_dtype(dt)?
                        .contiguous()?,
                ),
                None => None,
            };
            let out = match opts.weight {
                Some(w) => out.mul(w)?,
                None => out,
            };
            (reduce(out, opts.reduction)?, pw)
        };
        let bw = BceWithLogitsBackward {
            pos_weight: pw,
            weight: opts.weight.cloned(),
            mean_of: (opts.reduction == Reduction::Mean).then(|| self.numel()),
        };
        record(
            &[&out],
            &[self, target],
            || vec![SavedTensor::input(self), SavedTensor::input(target)],
            bw,
        )?;
        Ok(out)
    }
}

/// `(1 - y) x + (1 + 0 y) softplus(-x)` elementwise (`x`, `y` of one float dtype and shape),
/// computed in the compute type (as PyTorch's f32 kernel) on the backend's vectorised lanes:
/// the unweighted term of [`Tensor::binary_cross_entropy_with_logits`] in one pass.
fn bce_logits_term(x: &Tensor, y: &Tensor, op: &'static str) -> Result<Tensor> {
    use crate::backend::Transcendental;
    use crate::dtype::FloatCompute;
    use crate::ops::elementwise::binary::binary_map;
    // in the compute type (f32 for f16/bf16), softplus on the backend's lanes
    crate::match_dtype!(x.dtype(), float, (T, C) => {
        binary_map::<T, T>(x, y, op, #[inline(always)] |a, b| {
            let (a, b): (C, C) = (a.widen(), b.widen());
            T::narrow((-b + 1.0) * a + (b * 0.0 + 1.0) * (-a).vsoftplus())
        })
    }, else unreachable!("internal: checked float"))
}
