//! Fused elementwise update kernels for optimizers: parameter, gradient and state buffers are
//! contiguous tensors of one float dtype, processed in one pass.

use crate::storage::with_distinct_slices_mut;
use crate::{DType, Result, Tensor, bail};

/// A real float the fused kernels compute in (f32 or f64).
pub(crate) trait Real: crate::Element + Copy {
    fn f(v: f64) -> Self;
    fn v(self) -> f64;
}
impl Real for f32 {
    fn f(v: f64) -> Self {
        v as f32
    }
    fn v(self) -> f64 {
        self as f64
    }
}
impl Real for f64 {
    fn f(v: f64) -> Self {
        v
    }
    fn v(self) -> f64 {
        self
    }
}

/// A contiguous tensor's (storage, offset, numel), or an error naming `what`.
fn part(t: &Tensor, what: &str) -> Result<(crate::Storage, usize, usize)> {
    if !t.is_contiguous() {
        bail!(InvalidArgument, "optimizer", "{} must be contiguous", what);
    }
    let d = t.data();
    Ok((d.storage, d.layout.offset(), d.layout.numel()))
}

/// Runs `f(param, grad, states)` over typed slices. The gradient is read through a private
/// contiguous copy when it is not contiguous or aliases a state. Bumps the parameter's version.
pub(crate) fn run_fused(
    param: &Tensor,
    grad: &Tensor,
    states: &[&Tensor],
    f32_kernel: impl FnOnce(&mut [&mut [f32]]),
    f64_kernel: impl FnOnce(&mut [&mut [f64]]),
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
    match param.dtype() {
        DType::F32 => with_distinct_slices_mut::<f32, _>(&parts, f32_kernel)?,
        DType::F64 => with_distinct_slices_mut::<f64, _>(&parts, f64_kernel)?,
        d => bail!(
            Unsupported,
            "optimizer",
            "optimizers support float32 and float64 parameters, got {}",
            d
        ),
    }
    param.0.version.bump();
    Ok(())
}
