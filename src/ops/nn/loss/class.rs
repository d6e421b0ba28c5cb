//! Class losses on class-index targets: `nll_loss` (a pick of the log-probabilities at the
//! targets; backward scatters `-w` (over the summed weight for mean) to the picked positions) and
//! `cross_entropy` (`log_softmax` + NLL, or a product with class-probability targets, with
//! optional label smoothing; composed of differentiable ops except the NLL pick).

use super::{CrossEntropyOptions, NllLossOptions, Reduction};
use crate::autograd::{SavedTensor, record};
use crate::ops::grad::{backward, input_grad, zero_grad_link};
use crate::ops::movement::gather::{SKIP, put_add};
use crate::ops::nn::{check_float, from_f64};
use crate::{DType, Result, Tensor, bail};
use std::sync::Arc;

/// Validated class-target geometry: flat input index per target (SKIP if ignored) and weight.
struct Picks {
    idx: Vec<usize>,
    w: Vec<f64>,
    tshape: Vec<usize>,
}

fn class_picks(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore: i64,
    op: &'static str,
) -> Result<Picks> {
    let ish = input.shape();
    if ish.is_empty() {
        bail!(InvalidArgument, op, "input tensor should be 1D or more");
    }
    if target.dtype() != DType::I64 {
        bail!(
            DTypeMismatch,
            op,
            "expected scalar type Long but found {}",
            target.dtype().torch_scalar_name()
        );
    }
    let cd = if ish.len() == 1 { 0 } else { 1 };
    let c = ish[cd];
    let mut expect = ish.clone();
    expect.remove(cd);
    let tsh = target.shape();
    if tsh != expect {
        bail!(
            ShapeMismatch,
            op,
            "Expected target of shape {:?} for input of shape {:?}, got {:?}",
            expect,
            ish,
            tsh
        );
    }
    let wv = match weight {
        Some(w) => {
            if w.shape() != [c] {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {:?}",
                    c,
                    w.shape()
                );
            }
            // the c class weights, read on the host: the picks weight each target by them
            w.check_strided(op)?;
            Some(crate::backend::read_vec::<f64>(&w.data(), w.dtype())?)
        }
        None => None,
    };
    // the targets, read on the host once: an index list validated against the class count
    target.check_strided(op)?;
    let tv = crate::backend::read_vec::<i64>(&target.data(), target.dtype())?;
    // input position of target `flat` picking class `t`: its outer index (dims before the
    // class dim), the class, its inner index (dims after)
    let inner: usize = ish[cd + 1..].iter().product();
    // (filled in place: pushing to two vectors kept their lengths on the stack, 4 ns a
    // target on the per-op sweep row `nll_loss`)
    let mut idx = vec![SKIP; tv.len()];
    let mut w = vec![0.0; tv.len()];
    let mut bad = None;
    for (flat, ((&t, ix), wt)) in tv.iter().zip(&mut idx).zip(&mut w).enumerate() {
        if t == ignore {
            continue;
        }
        if t < 0 || t as usize >= c {
            bad.get_or_insert(t);
            continue;
        }
        let (o, i) = if inner == 1 {
            (flat, 0)
        } else {
            (flat / inner, flat % inner)
        };
        *ix = (o * c + t as usize) * inner + i;
        *wt = wv.as_ref().map_or(1.0, |wv| wv[t as usize]);
    }
    if let Some(t) = bad {
        bail!(IndexOutOfRange, op, "Target {} is out of bounds.", t);
    }
    Ok(Picks {
        idx,
        w,
        tshape: tsh,
    })
}

struct NllLossBackward {
    idx: Arc<Vec<usize>>,
    /// the class weight of each target (0 where ignored); the gradient at a picked position is
    /// `-w` (`-w / Σw` for the mean: `mean_of` is `Some(Σw)`), made a tensor of `tshape` only
    /// in backward
    w: Vec<f64>,
    mean_of: Option<f64>,
    tshape: Vec<usize>,
    in_shape: Vec<usize>,
}

// saved: the input (PyTorch's `nll_loss_backward` reads it; its derivative w.r.t. it is zero)
backward!(
    NllLossBackward,
    "NllLossBackward0",
    |self, ctx, g: Tensor| {
        let coef: Vec<f64> = match self.mean_of {
            Some(wsum) => self.w.iter().map(|w| -w / wsum).collect(),
            None => self.w.iter().map(|w| -w).collect(),
        };
        let coef = from_f64(coef, &self.tshape, g.dtype())?;
        let gi = g.mul(&coef)?;
        let gi = put_add(&gi, self.idx.clone(), &self.in_shape)?;
        let name = "NllLossBackwardBackward0";
        input_grad(zero_grad_link(gi, &[&ctx.saved[0]], name)?)
    }
);

fn nll_impl(input: &Tensor, p: Picks, reduction: Reduction) -> Result<Tensor> {
    // only the picked entries are read (a positional read kernel, not a copy of the input)
    input.check_strided("nll_loss")?;
    let skipped: Vec<usize>;
    let at: &[usize] = if p.idx.contains(&SKIP) {
        skipped = p.idx.iter().copied().filter(|&i| i != SKIP).collect();
        &skipped
    } else {
        &p.idx
    };
    let xv = crate::backend::read_at::<f64>(&input.data(), input.dtype(), at)?;
    let mut xv = xv.into_iter();
    let vals = p.idx.iter().zip(&p.w).map(|(&i, &w)| {
        if i == SKIP {
            0.0
        } else {
            -w * xv.next().unwrap_or(0.0)
        }
    });
    let wsum: f64 = p.w.iter().sum();
    let dt = input.dtype();
    let out = match reduction {
        Reduction::None => from_f64(vals.collect(), &p.tshape, dt)?,
        Reduction::Sum => from_f64(vec![vals.sum()], &[], dt)?,
        Reduction::Mean => from_f64(vec![vals.sum::<f64>() / wsum], &[], dt)?,
    };
    record(
        &[&out],
        &[input],
        || vec![SavedTensor::input(input)],
        NllLossBackward {
            idx: Arc::new(p.idx),
            w: p.w,
            mean_of: (reduction == Reduction::Mean).then_some(wsum),
            tshape: p.tshape,
            in_shape: input.shape(),
        },
    )?;
    Ok(out)
}

impl Tensor {
    /// Negative log-likelihood of log-probabilities `self` (`[C]`, `[N, C]` or `[N, C, d..]`)
    /// at i64 class `target`; mean divides by the summed weights of non-ignored targets.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let lp = Tensor::from_vec(vec![-1.0f32, -2.0, -3.0, -4.0], &[2, 2])?;
    /// let y = Tensor::from_vec(vec![1i64, 0], &[2])?;
    /// assert_eq!(lp.nll_loss(&y, Default::default())?.item::<f32>()?, 2.5);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nll_loss(&self, target: &Tensor, opts: NllLossOptions<'_>) -> Result<Tensor> {
        check_float(self, "nll_loss")?;
        super::check_weight_no_grad(opts.weight, "nll_loss_forward", "weight", "nll_loss")?;
        let p = class_picks(self, target, opts.weight, opts.ignore_index, "nll_loss")?;
        nll_impl(self, p, opts.reduction)
    }

    /// Cross entropy of logits `self` with i64 class targets or float class-probability targets
    /// (same shape as `self`): `log_softmax` over dim 1 (dim 0 for 1-D input) + NLL, with
    /// optional label smoothing `(1-ε)·nll + ε/C·smooth`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0], &[1, 2])?;
    /// let y = Tensor::from_vec(vec![1i64], &[1])?;
    /// let l = x.cross_entropy(&y, Default::default())?.item::<f64>()?;
    /// assert!((l - 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cross_entropy(&self, target: &Tensor, opts: CrossEntropyOptions<'_>) -> Result<Tensor> {
        let op = "cross_entropy";
        check_float(self, op)?;
        if self.dim() == 0 {
            bail!(InvalidArgument, op, "input tensor should be 1D or more");
        }
        let eps = opts.label_smoothing;
        if !(0.0..=1.0).contains(&eps) {
            bail!(
                InvalidArgument,
                op,
                "label_smoothing must be between 0.0 and 1.0. Got: {}",
                eps
            );
        }
        let cd: i64 = if self.dim() == 1 { 0 } else { 1 };
        let c = self.shape()[cd as usize];
        // weight broadcast along the class dim
        let wview = |w: &Tensor| -> Result<Tensor> {
            let mut s = vec![1i64; self.dim()];
            s[cd as usize] = c as i64;
            w.to_dtype(self.dtype())?.view(&s)
        };
        if target.dtype().is_float() {
            if target.shape() != self.shape() {
                bail!(
                    ShapeMismatch,
                    op,
                    "Expected target size {:?}, got {:?}",
                    self.shape(),
                    target.shape()
                );
            }
            if let Some(w) = opts.weight
                && w.shape() != [c]
            {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight tensor should be defined for all {} classes",
                    c
                );
            }
            let lp = self.log_softmax(cd)?;
            let t = if eps > 0.0 {
                target.mul(1.0 - eps)?.add(eps / c as f64)?
            } else {
                target.clone()
            };
            let mut prod = lp.mul(&t)?;
            if let Some(w) = opts.weight {
                prod = prod.mul(&wview(w)?)?;
            }
            let per = prod.sum_dims(&[cd], false)?.neg()?;
            return match opts.reduction {
                Reduction::None => Ok(per),
                Reduction::Sum => per.sum(),
                Reduction::Mean => {
                    let n = (self.numel() / c.max(1)) as f64;
                    per.sum()?.div(n)
                }
            };
        }
        super::check_weight_no_grad(opts.weight, "nll_loss_forward", "weight", op)?;
        let p = class_picks(self, target, opts.weight, opts.ignore_index, op)?;
        let lp = self.log_softmax(cd)?;
        let keep: Vec<f64> = p
            .idx
            .iter()
            .map(|&i| if i == SKIP { 0.0 } else { 1.0 })
            .collect();
        let wsum: f64 = p.w.iter().sum();
        let tshape = p.tshape.clone();
        let nll = nll_impl(&lp, p, opts.reduction)?;
        if eps == 0.0 {
            return Ok(nll);
        }
        let mut wl = lp.clone();
        if let Some(w) = opts.weight {
            wl = wl.mul(&wview(w)?)?;
        }
        let mask = from_f64(keep.clone(), &tshape, self.dtype())?;
        let smooth = wl.sum_dims(&[cd], false)?.neg()?.mul(&mask)?;
        let smooth = match opts.reduction {
            Reduction::None => smooth,
            Reduction::Sum => smooth.sum()?,
            Reduction::Mean => {
                let denom = if opts.weight.is_some() {
                    wsum
                } else {
                    keep.iter().sum()
                };
                smooth.sum()?.div(denom)?
            }
        };
        nll.mul(1.0 - eps)?.add(&smooth.mul(eps / c as f64)?)
    }
}
