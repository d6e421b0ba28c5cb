//! Attention: the fused forward of causal or unmasked `scaled_dot_product_attention` without a
//! graph. Front door `dispatch/attention.rs`; CPU body `cpu/attention.rs`.

use crate::DType;
use crate::backend::{AttnGeom, Device};

/// Fused attention.
pub(crate) trait AttentionKernels: Device {
    /// Scaled dot-product attention forward of an [`AttnGeom`] (f32 or f64, no mask, no
    /// dropout): `out[b, i] = sum_j p[b, i, j] v[b, j]` with `p[b, i, :]` the softmax over the
    /// keys `j < s` (causal: `j <= i`) of `(q[b, i] * scale) . k[b, j]`. `q` `[bh, l, e]`, `k`
    /// `[bh, s, e]`, `v` `[bh, s, ev]` are contiguous from their element offsets; `out`
    /// `[bh, l, ev]` is written from element 0. Panics (an internal invariant) if a range lies
    /// outside its buffer.
    fn sdpa_forward(
        out: &mut Self::Buffer,
        q: (&Self::Buffer, usize),
        k: (&Self::Buffer, usize),
        v: (&Self::Buffer, usize),
        g: &AttnGeom,
        dt: DType,
    );
}
