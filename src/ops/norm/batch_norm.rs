//! `batch_norm`: per-channel normalization of `[N, C, *]` with the batch statistics (training;
//! the running statistics updated in place, unbiased variance, without a version bump, as
//! PyTorch's native kernel) or the running statistics (evaluation). Forward: the backend's
//! `channel_stats` and `channel_affine` kernels; backward `BatchNormBackward` in differentiable
//! ops (the rules are in `norm/mod.rs`).

use super::memory_format::suggests;
use super::{channel_shape, check_param, size_product};
use crate::autograd::{Grads, SavedTensor, no_grad, record};
use crate::layout::Layout;
use crate::ops::channels_last::channels_last as to_channels_last;
use crate::ops::grad::{backward, undefined_grad_link};
use crate::ops::nn::{check_float, from_f64};
use crate::{DType, Result, Tensor, bail};

/// The arguments of one batch-norm call (the functional form's keywords).
pub(super) struct BatchNormArgs<'a> {
    pub(super) running_mean: Option<&'a Tensor>,
    pub(super) running_var: Option<&'a Tensor>,
    pub(super) weight: Option<&'a Tensor>,
    pub(super) bias: Option<&'a Tensor>,
    pub(super) training: bool,
    pub(super) momentum: f64,
    pub(super) eps: f64,
}

struct BatchNormBackward {
    /// The input gradient in channels-last order (the functional form of such an input).
    channels_last: bool,
    /// Training: statistics of the input (recomputed in the backward). Evaluation: the
    /// running mean and `1/sqrt(running_var + eps)`, constants.
    training: bool,
    eval_stats: Option<(Vec<f64>, Vec<f64>)>,
    eps: f64,
    /// Input position of the weight among the recorded inputs; of the bias, with its shape
    /// and dtype.
    w: Option<usize>,
    b: Option<(usize, Vec<usize>, DType)>,
}

backward!(
    BatchNormBackward,
    "NativeBatchNormBackward0",
    |self, ctx, g: Tensor| {
        let x = &ctx.saved[0];
        let w = self.w.map(|_| &ctx.saved[1]);
        let (nd, c) = (x.dim(), x.shape()[1]);
        let dims: Vec<i64> = (0..nd as i64).filter(|&d| d != 1).collect();
        let cs = channel_shape(c, nd);
        let g = g.to_dtype(x.dtype())?;
        let (xhat, invstd) = if self.training {
            let mean = x.mean(&dims, true, None)?;
            let xc = x.sub(&mean)?;
            let invstd = xc
                .mul(&xc)?
                .mean(&dims, true, None)?
                .add(self.eps)?
                .rsqrt()?;
            (xc.mul(&invstd)?, invstd)
        } else {
            let (mean, invstd) = self.eval_stats.as_ref().expect("evaluation statistics");
            // an empty input kept no statistics: any constant broadcasts over its no values
            let per_channel = |v: &Vec<f64>| match v.len() {
                0 => from_f64(vec![0.0], &[1], x.dtype())?.view(&channel_shape(1, nd)),
                _ => from_f64(v.clone(), &[c], x.dtype())?.view(&cs),
            };
            let (mean, invstd) = (per_channel(mean)?, per_channel(invstd)?);
            (x.sub(&mean)?.mul(&invstd)?, invstd)
        };
        let mut out: Grads =
            smallvec::smallvec![None; 1 + self.w.is_some() as usize + self.b.is_some() as usize];
        if ctx.needs(0) {
            let mut gx = if self.training {
                let gm = g.mean(&dims, true, None)?;
                let gxm = g.mul(&xhat)?.mean(&dims, true, None)?;
                g.sub(&gm)?.sub(&xhat.mul(&gxm)?)?.mul(&invstd)?
            } else {
                g.mul(&invstd)?
            };
            if let Some(w) = w {
                gx = gx.mul(&w.to_dtype(x.dtype())?.reshape(&cs)?)?;
            }
            if self.channels_last {
                gx = to_channels_last(&gx)?;
            }
            out[0] = Some(gx);
        }
        if let (Some(i), Some(w)) = (self.w, w)
            && ctx.needs(i)
        {
            let gw = g.mul(&xhat)?.sum_dims(&dims, false)?;
            out[i] = Some(fit(gw.to_dtype(w.dtype())?, w.shape())?);
        }
        if let Some((i, shape, dt)) = &self.b
            && ctx.needs(*i)
        {
            out[*i] = Some(fit(
                g.sum_dims(&dims, false)?.to_dtype(*dt)?,
                shape.clone(),
            )?);
        }
        // PyTorch's `native_batch_norm_backward(g, x, w, ..)` is one node differentiable in
        // `g`, `x` and `w`: every gradient it returns requires grad when one of them does
        let on: Vec<&Tensor> = std::iter::once(x).chain(w).collect();
        out.into_iter()
            .map(|t| {
                t.map(|t| undefined_grad_link(t, &on, "NativeBatchNormBackwardBackward0"))
                    .transpose()
            })
            .collect()
    }
);

/// `t` (`[C]`) in a parameter's shape of `C` elements: itself when the shapes agree (no view).
fn fit(t: Tensor, shape: Vec<usize>) -> Result<Tensor> {
    if t.shape() == shape {
        Ok(t)
    } else {
        t.reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>())
    }
}

/// `v` rounded to the compute type of `dt` (f32 for every float dtype but f64).
fn round_to(dt: DType, v: f64) -> f64 {
    if dt == DType::F64 { v } else { v as f32 as f64 }
}

/// The values of an optional per-channel tensor, or `fill` per channel.
fn values_or(t: Option<&Tensor>, c: usize, fill: f64) -> Result<Vec<f64>> {
    match t {
        Some(t) => {
            let _g = no_grad();
            t.read_as::<f64>()
        }
        None => {
            let mut v = crate::storage::try_vec(c, "batch_norm")?;
            v.resize(c, fill);
            Ok(v)
        }
    }
}

/// Batch norm of `x` (`[N, C, *]`); `check_single` marks the functional form: it refuses one
/// value per channel in training (group_norm and instance_norm check their own way) and keeps
/// a channels-last input's memory format in its output and input gradient.
pub(super) fn batch_norm_impl(
    x: &Tensor,
    a: &BatchNormArgs<'_>,
    check_single: bool,
    op: &'static str,
) -> Result<Tensor> {
    check_float(x, op)?;
    let sh = x.shape();
    if sh.len() < 2 {
        bail!(
            DimOutOfRange,
            op,
            "Dimension out of range (expected to be in range of [-1, 0], but got 1): {} needs an input of at least 2 dims, got {:?}",
            op,
            sh
        );
    }
    let dt = x.dtype();
    let channels_last = check_single && suggests(x);
    let (outer, c) = (sh[0], sh[1]);
    // saturated: an empty input may have huge sizes; then `n` is 0 or unused (no channel)
    let inner = size_product(&sh[2..]);
    for (t, what) in [
        (a.running_mean, "running_mean"),
        (a.running_var, "running_var"),
    ] {
        if let Some(t) = t {
            check_param(t, what, c, dt, op)?;
        }
    }
    if !a.training && (a.running_mean.is_none() || a.running_var.is_none()) {
        let what = if a.running_mean.is_none() {
            "running_mean"
        } else {
            "running_var"
        };
        bail!(
            InvalidArgument,
            op,
            "{} must be defined in evaluation mode",
            what
        );
    }
    for (t, what) in [(a.weight, "weight"), (a.bias, "bias")] {
        if let Some(t) = t {
            check_param(t, what, c, dt, op)?;
        }
    }
    let n = outer.saturating_mul(inner);
    if check_single && a.training && n == 1 {
        bail!(
            InvalidArgument,
            op,
            "Expected more than 1 value per channel when training, got input size {:?}",
            sh
        );
    }
    // an empty input normalizes nothing and keeps no per-channel values: it may still have
    // 2^40 channels (a fuzzed `[2^26, 4, 0, 2, 3]` instance norm is `[1, 2^28, 0, 2, 3]`)
    let empty = x.numel() == 0;
    let (out, mean, invstd, updates) = if empty {
        // PyTorch still allocates an empty input's per-channel saved mean and invstd, and
        // fails when it cannot (2^40 channels): reserved here the same way, never touched
        drop(crate::storage::try_vec::<(f64, f64)>(c, "batch_norm")?);
        let out = Tensor::empty_strided(&sh, Layout::contiguous(&sh).strides(), dt)?;
        (out, Vec::new(), Vec::new(), Vec::new())
    } else {
        let _g = no_grad();
        let xc = if x.is_contiguous() {
            x.clone()
        } else {
            x.contiguous()?
        };
        let dims = (outer, c, inner);
        let (mean, invstd, updates) = if a.training {
            let stats = if n == 0 {
                // (fallible: an empty input may still have 2^40 channels)
                let mut v = crate::storage::try_vec(c, "batch_norm")?;
                v.resize(c, (f64::NAN, f64::NAN));
                v
            } else {
                crate::backend::norm::channel_stats(&xc.data(), dt, dims)
            };
            let mean: Vec<f64> = stats.iter().map(|s| s.0).collect();
            let invstd: Vec<f64> = stats
                .iter()
                .map(|s| 1.0 / (s.1 / n as f64 + a.eps).sqrt())
                .collect();
            // the new running statistics, computed before anything is written
            let mut updates = Vec::new();
            if n > 0 {
                let m = a.momentum;
                if let Some(rm) = a.running_mean {
                    let old = rm.read_as::<f64>()?;
                    let new: Vec<f64> = old
                        .iter()
                        .zip(&mean)
                        .map(|(o, v)| m * v + (1.0 - m) * o)
                        .collect();
                    updates.push((rm, from_f64(new, &rm.shape(), rm.dtype())?));
                }
                if let Some(rv) = a.running_var {
                    let old = rv.read_as::<f64>()?;
                    let unbiased = |m2: f64| m2 / (n as f64 - 1.0);
                    let new: Vec<f64> = old
                        .iter()
                        .zip(&stats)
                        .map(|(o, s)| m * unbiased(s.1) + (1.0 - m) * o)
                        .collect();
                    updates.push((rv, from_f64(new, &rv.shape(), rv.dtype())?));
                }
            }
            (mean, invstd, updates)
        } else {
            let rm = values_or(a.running_mean, c, 0.0)?;
            let rv = values_or(a.running_var, c, 1.0)?;
            let invstd = rv.iter().map(|v| 1.0 / (v + a.eps).sqrt()).collect();
            (rm, invstd, Vec::new())
        };
        let w = values_or(a.weight, c, 1.0)?;
        let b = values_or(a.bias, c, 0.0)?;
        // PyTorch's alpha = invstd * w, beta = b - mean * invstd * w, in the compute type
        let r = |v| round_to(dt, v);
        let scale: Vec<f64> = (0..c).map(|k| r(r(invstd[k]) * r(w[k]))).collect();
        let shift: Vec<f64> = (0..c)
            .map(|k| r(r(b[k]) - r(r(r(mean[k]) * r(invstd[k])) * r(w[k]))))
            .collect();
        let out = Tensor::empty_strided(&sh, Layout::contiguous(&sh).strides(), dt)?;
        crate::backend::norm::channel_affine(&out.data(), &xc.data(), dt, dims, &scale, &shift);
        (out, mean, invstd, updates)
    };
    let out = if channels_last {
        let _g = no_grad();
        to_channels_last(&out)?
    } else {
        out
    };
    // the running statistics: written in place without a version bump (PyTorch's native
    // batch_norm writes them through the kernel, not through an autograd-visible op)
    for (t, new) in &updates {
        crate::backend::copy_raw(&t.data(), &new.data(), t.dtype(), new.dtype());
    }
    let mut inputs: Vec<&Tensor> = vec![x];
    let w_pos = a.weight.map(|w| {
        inputs.push(w);
        inputs.len() - 1
    });
    let b_pos = a.bias.map(|b| {
        inputs.push(b);
        (inputs.len() - 1, b.shape(), b.dtype())
    });
    let bw = BatchNormBackward {
        channels_last,
        training: a.training,
        eval_stats: (!a.training).then_some((mean, invstd)),
        eps: a.eps,
        w: w_pos,
        b: b_pos,
    };
    record(
        &[&out],
        &inputs,
        || {
            let mut s = vec![SavedTensor::input(x)];
            if let Some(w) = a.weight {
                s.push(SavedTensor::input(w));
            }
            s
        },
        bw,
    )?;
    Ok(out)
}

impl Tensor {
    /// Batch normalization of an `[N, C, *]` input over every dim but the channel dim `1`, as
    /// `torch.nn.functional.batch_norm(input, running_mean, running_var, weight, bias,
    /// training, momentum, eps)`.
    ///
    /// In training the batch's mean and biased variance normalize; `running_mean` and
    /// `running_var` (when given) are updated in place (without a version bump, as PyTorch's
    /// native kernel) to `(1 - momentum) * running + momentum * batch`, with the unbiased
    /// batch variance. In evaluation the running statistics (required) normalize. `weight` and
    /// `bias` (`C` elements each) scale and shift.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 2.0, 6.0], &[2, 2])?;
    /// let (rm, rv) = (Tensor::zeros(&[2], x.dtype())?, Tensor::ones(&[2], x.dtype())?);
    /// let y = x.batch_norm(Some(&rm), Some(&rv), None, None, true, 0.5, 0.0)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, -1.0, 1.0, 1.0]);
    /// assert_eq!(rm.to_vec::<f64>()?, vec![0.75, 2.25]);
    /// assert_eq!(rv.to_vec::<f64>()?, vec![0.75, 2.75]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn batch_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        training: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<Tensor> {
        let a = BatchNormArgs {
            running_mean,
            running_var,
            weight,
            bias,
            training,
            momentum,
            eps,
        };
        batch_norm_impl(self, &a, true, "batch_norm")
    }
}
