//! Channels-last results: PyTorch's CPU convolutions and poolings give a channels-last
//! (channels-last-3d) output and gradients for inputs whose strides suggest that format
//! (`suggest_memory_format`). They compute as for contiguous operands here; [`channels_last`]
//! then copies a result into PyTorch's exact channels-last strides
//! (`empty(.., memory_format=channels_last)`), differentiably (node `CloneBackward0`, the
//! gradient passes as is), and [`suggests`] is the decision on an operand.

use crate::autograd::record;
use crate::layout::{channels_last_strides, suggests_channels_last};
use crate::ops::movement::copy::PassBackward;
use crate::tensor::materialize;
use crate::{Result, Tensor};

/// True when `x` (4 or 5 dims) has strides ordered like channels-last (PyTorch's
/// `suggest_memory_format(x) == ChannelsLast(3d)`).
pub(crate) fn suggests(x: &Tensor) -> bool {
    suggests_channels_last(&x.layout())
}

/// `t` (4 or 5 dims) as a fresh tensor with PyTorch's channels-last strides of its shape;
/// `t` itself when it has them already.
pub(crate) fn channels_last(t: &Tensor) -> Result<Tensor> {
    let strides = channels_last_strides(&t.shape());
    if t.strides() == strides {
        return Ok(t.clone());
    }
    let out = materialize(t, t.dtype(), &strides)?;
    record(
        &[&out],
        &[t],
        Vec::new,
        PassBackward {
            name: "CloneBackward0",
        },
    )?;
    Ok(out)
}
