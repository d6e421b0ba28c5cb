//! The memory format of normalization outputs: PyTorch's CPU `batch_norm` and `group_norm`
//! give a channels-last (channels-last-3d) output and input gradient for an input whose strides
//! suggest that format (`suggest_memory_format`); `instance_norm` and `layer_norm` stay
//! contiguous. The differentiable conversion is `ops::channels_last` (shared with the
//! convolutions and poolings); [`contiguous_channels_last_grad`] is a contiguous copy whose
//! gradient comes back channels-last (for the composed `group_norm`; under `create_graph` as
//! it comes, as PyTorch's).

use crate::autograd::{no_grad, record};
use crate::layout::suggests_channels_last;
use crate::ops::channels_last::channels_last;
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor};

/// True when `x` (4 or 5 dims) has strides ordered like channels-last and is not contiguous
/// (an input both, such as `[N, C, 1, 1]`, keeps contiguous strides: they differ from
/// PyTorch's only in the strides of size-1 dims).
pub(super) fn suggests(x: &Tensor) -> bool {
    !x.is_contiguous() && suggests_channels_last(&x.layout())
}

struct ChannelsLastGrad;

backward!(ChannelsLastGrad, "CloneBackward0", |self, _, g: Tensor| {
    // PyTorch's first-order `native_group_norm_backward` writes a channels-last gradient;
    // under `create_graph` its differentiable composite hands back the contiguous view it
    // computed, as the composed backward here does
    if crate::autograd::is_grad_enabled() {
        input_grad(g)
    } else {
        input_grad(channels_last(&g)?)
    }
});

/// A contiguous copy of `x` (a channels-last input) whose gradient is `g` in channels-last
/// order (`g` itself under `create_graph`), so a normalization composed of other ops hands
/// back PyTorch's gradient strides.
pub(super) fn contiguous_channels_last_grad(x: &Tensor) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        x.contiguous()?
    };
    if out.is_same(x) {
        return Ok(out);
    }
    record(&[&out], &[x], Vec::new, ChannelsLastGrad)?;
    Ok(out)
}
