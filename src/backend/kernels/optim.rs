//! The fused optimizer step (SGD, Adam/AdamW) over a parameter, its gradient and its state
//! buffers. Front door `optim_step` (`dispatch/nn.rs`); CPU body `cpu/optim.rs`.

use crate::DType;
use crate::backend::{Device, OptimStep};

/// Fused optimizer steps.
pub(crate) trait OptimKernels: Device {
    /// Runs `step` over `bufs[i]`'s elements `[parts[i].0, parts[i].0 + parts[i].1)` (all of
    /// dtype `dt`, equal counts; order as in [`OptimStep`]). False (nothing done) when `dt` is
    /// not f32/f64. Panics (an internal invariant) if a range lies outside its buffer.
    fn optim_step(
        bufs: &mut [&mut Self::Buffer],
        parts: &[(usize, usize)],
        dt: DType,
        step: OptimStep,
    ) -> bool;
}
