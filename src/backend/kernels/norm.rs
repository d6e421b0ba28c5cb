//! Normalization: per-channel mean and squared deviations (batch_norm, instance_norm,
//! group_norm) and the per-channel affine transform `x * scale[ch] + shift[ch]`. Front door
//! `dispatch/norm.rs`; CPU body `cpu/norm.rs`.

use crate::DType;
use crate::backend::Device;

/// Per-channel statistics and affine transform.
pub(crate) trait NormKernels: Device {
    /// (mean, sum of squared deviations from it) of every channel of `src`: `outer * c *
    /// inner` contiguous float elements of dtype `dt` from element offset `so`, seen as
    /// `[outer, c, inner]` (channel `ch` = every `[o, ch, i]`), accumulated in f64 in two
    /// passes; NaN for an empty channel. Panics (an internal invariant) if the range lies
    /// outside the buffer.
    fn channel_stats(
        src: &Self::Buffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
    ) -> Vec<(f64, f64)>;

    /// `dst[o, ch, i] = src[o, ch, i] * scale[ch] + shift[ch]` over contiguous `[outer, c,
    /// inner]` float elements (`src` from element `so`, `dst` from 0; distinct buffers),
    /// computed in the compute type of `dt` (f32 for f32/f16/bf16) with `scale`/`shift` rounded
    /// to it. Panics (an internal invariant) if a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn channel_affine(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
        scale: &[f64],
        shift: &[f64],
    );
}
