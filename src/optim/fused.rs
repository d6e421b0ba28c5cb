//! Fused optimizer updates: parameter, gradient and state buffers are contiguous tensors of one
//! float dtype, processed in one pass by the backend's optimizer step ([`OptimStep`]).

pub(crate) use crate::backend::OptimStep;
use crate::{Result, Tensor, bail};

/// A contiguous tensor's (storage, offset, numel), or an error naming `what`.
fn part(t: &Tensor, what: &str) -> Result<(crate::Storage, usize, usize)> {
    if !t.is_contiguous() {
        bail!(InvalidArgument, "optimizer", "{} must be contiguous", what);
    }
    let d = t.data();
    Ok((d.storage, d.layout.offset(), d.layout.numel()))
}

/// Runs `step` over `[param, grad, states..]`. The gradient is read through a private
/// contiguous copy when it is not contiguous or aliases a state. Bumps the parameter's version.
pub(crate) fn run_fused(
    param: &Tensor,
    grad: &Tensor,
    states: &[&Tensor],
    step: OptimStep,
) -> Result<()> {
    if grad.shape() != param.shape() || grad.dtype() != param.dtype() {
        bail!(
            ShapeMismatch,
            "optimizer",
            "gradient {:?} {} does not match parameter {:?} {}",
            grad.shape(),
            grad.dtype(),
            param.shape(),
            param.dtype()
        );
    }
    let g = if grad.is_contiguous() && !grad.shares_storage(param) {
        grad.clone()
    } else {
        grad.detach().contiguous()?.detach().copy()?
    };
    let mut owned = vec![part(param, "parameter")?, part(&g, "gradient")?];
    for s in states {
        owned.push(part(s, "optimizer state")?);
    }
    let parts: Vec<(&crate::Storage, usize, usize)> =
        owned.iter().map(|(s, o, n)| (s, *o, *n)).collect();
    crate::backend::optim_step(&parts, param.dtype(), step)?;
    param.0.version.bump();
    Ok(())
}
