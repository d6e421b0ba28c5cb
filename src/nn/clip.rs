//! Gradient clipping (`torch.nn.utils.clip_grad_norm_` / `clip_grad_value_`): both rescale or
//! clamp every parameter's `.grad` in place, under `no_grad`.

use crate::{NormOrd, Result, Scalar, Tensor, bail};

/// Options of [`clip_grad_norm_`] (PyTorch's keyword arguments; `Default` = theirs).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ClipGradNorm {
    /// Order of the norm: any p, `f64::INFINITY` for the largest magnitude. Default 2.
    pub norm_type: f64,
    /// Fail (and change nothing) when the total norm is NaN or infinite, instead of scaling the
    /// gradients by it. Default false.
    pub error_if_nonfinite: bool,
}

impl Default for ClipGradNorm {
    fn default() -> Self {
        ClipGradNorm {
            norm_type: 2.0,
            error_if_nonfinite: false,
        }
    }
}

/// Scales the gradients of `params` so that their total norm (the `norm_type` norm of the
/// per-gradient norms) is at most `max_norm`; returns the total norm before clipping, a 0-dim
/// tensor of the first gradient's dtype (f32 0.0 when no parameter has a gradient). As PyTorch
/// (foreach or not), every gradient is multiplied by `min(max_norm / (total + 1e-6), 1)`, so
/// each gradient's version bumps even when nothing is clipped. Parameters without a gradient
/// are skipped.
///
/// ```
/// # use tapegrad::{Tensor, nn::{clip_grad_norm_, ClipGradNorm}};
/// let p = Tensor::from_vec(vec![0.0f64, 0.0], &[2])?.requires_grad_(true)?;
/// p.set_grad(Some(Tensor::from_vec(vec![3.0f64, 4.0], &[2])?))?;
/// let total = clip_grad_norm_(&[p.clone()], 1.0, ClipGradNorm::default())?;
/// assert_eq!(total.item::<f64>()?, 5.0);
/// let g = p.grad().unwrap().to_vec::<f64>()?;
/// assert!((g[0] - 0.6).abs() < 1e-6 && (g[1] - 0.8).abs() < 1e-6);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn clip_grad_norm_(params: &[Tensor], max_norm: f64, opts: ClipGradNorm) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    let grads: Vec<Tensor> = params.iter().filter_map(|p| p.grad()).collect();
    if grads.is_empty() {
        return Ok(Tensor::scalar(0.0f32));
    }
    let ord = NormOrd::P(opts.norm_type);
    let norms = grads
        .iter()
        .map(|g| g.norm(ord, (), false))
        .collect::<Result<Vec<_>>>()?;
    let refs: Vec<&Tensor> = norms.iter().collect();
    let total = Tensor::stack(&refs, 0)?.norm(ord, (), false)?;
    if opts.error_if_nonfinite {
        let t = total.to_dtype(crate::DType::F64)?.item::<f64>()?;
        if !t.is_finite() {
            bail!(
                InvalidArgument,
                "clip_grad_norm_",
                "The total norm of order {} for gradients from `params` is non-finite, so it \
                 cannot be clipped. To disable this error and scale the gradients by the \
                 non-finite norm anyway, set `ClipGradNorm::error_if_nonfinite` to false",
                opts.norm_type
            );
        }
    }
    // PyTorch: `max_norm / (total + 1e-6)` is `reciprocal(total + 1e-6) * max_norm`
    let coef = total
        .add(1e-6)?
        .reciprocal()?
        .mul(max_norm)?
        .clamp(None, Some(Scalar::Float(1.0)))?;
    for g in &grads {
        g.mul_(&coef)?;
    }
    Ok(total)
}

/// Clamps every gradient of `params` into `[-clip_value, clip_value]` in place (PyTorch's
/// `clip_grad_value_`). Parameters without a gradient are skipped.
///
/// ```
/// # use tapegrad::{Tensor, nn::clip_grad_value_};
/// let p = Tensor::from_vec(vec![0.0f32, 0.0, 0.0], &[3])?.requires_grad_(true)?;
/// p.set_grad(Some(Tensor::from_vec(vec![-3.0f32, 0.5, 9.0], &[3])?))?;
/// clip_grad_value_(&[p.clone()], 1.0)?;
/// assert_eq!(p.grad().unwrap().to_vec::<f32>()?, vec![-1.0, 0.5, 1.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn clip_grad_value_(params: &[Tensor], clip_value: f64) -> Result<()> {
    let _g = crate::autograd::no_grad();
    for g in params.iter().filter_map(|p| p.grad()) {
        g.clamp_(Some(Scalar::Float(-clip_value)), None)?;
        g.clamp_(None, Some(Scalar::Float(clip_value)))?;
    }
    Ok(())
}
