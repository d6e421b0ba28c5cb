//! Normalization, one file per concept: [`batch_norm`] (training and evaluation, the running
//! statistics updated in place), [`instance_norm`] (batch norm of every sample's channels,
//! composed), [`group_norm`] (PyTorch's `native_group_norm` node) and [`layer_norm`] (over the
//! trailing dims, PyTorch's `native_layer_norm` node); [`fused_backward`] is the backward node
//! group_norm and layer_norm share (fused kernel, or the composite under `create_graph`).
//!
//! batch_norm's forward is two backend kernels of the normalization family
//! (`Backend::channel_stats`: per-channel mean and squared deviations in f64;
//! `Backend::channel_affine`: `x * scale[ch] + shift[ch]` in the dtype's compute type); its
//! backward is written with differentiable ops, so double backward is the backward of those
//! ops. group_norm's forward and backward are the row-wise family's `group_norm` kernels
//! (`backend/cpu/group_norm.rs`), its double backward the composed formula.
//!
//! Derivative rules (`g` = output gradient; per channel: `mean`, `invstd = 1/sqrt(var + eps)`,
//! `xhat = (x - mean) * invstd`; `E[.]` = mean over every dim but the channel's):
//! - batch_norm, training: input `(g - E[g] - xhat E[g xhat]) invstd w` (mean and invstd
//!   recomputed from the saved input with differentiable ops), weight `sum(g xhat)`, bias
//!   `sum(g)`
//! - batch_norm, evaluation: input `g invstd w` (running statistics: constants), weight
//!   `sum(g xhat)`, bias `sum(g)`
//! - batch_norm, both: every gradient linked to the input and weight (no gradient back), as
//!   PyTorch's backward is one node differentiable in them
//! - instance_norm: composed (`reshape` to `[1, N*C, ..]`, batch_norm, `repeat` of the affine
//!   parameters and running statistics; an empty input: batch_norm of the input itself)
//! - group_norm (PyTorch's kernel; per `(n, g)`: `mean`, `rstd`; per `(n, c)`: `ds = sum(g x)`,
//!   `db = sum(g)`; `s = 1 / (D HxW)`): input `rstd w g + c2 x + c3` with `c2 = (sum_c(db w)
//!   mean - sum_c(ds w)) rstd^3 s`, `c3 = -c2 mean - sum_c(db w) rstd s`; weight
//!   `sum_n (ds - db mean) rstd`, bias `sum_n db`; under `create_graph` the same formula
//!   composed (mean and rstd recomputed from the input), not linked (PyTorch's own composite).
//!   With parameters of another dtype or an empty batch: composed (`reshape` to `[1, N*G,
//!   ..]`, batch_norm without affine, then `* w + b` per channel)
//! - layer_norm (per row: `mean`, `rstd`, `xh = (x - mean) rstd`, `gxh = g w`): input
//!   `rstd (gxh - mean(gxh) - xh mean(gxh xh))`, weight `sum_rows(g xh)`, bias `sum_rows(g)`
//!   (the backend's kernel; under `create_graph` composed, its `rsqrt` node `-g y^3 / 2`,
//!   linked to input, weight and bias). Parameters of another dtype: composed forward
//!
//! Memory format ([`memory_format`]): batch_norm and group_norm of an input with channels-last
//! (3d) strides give a channels-last output and input gradient, as PyTorch's CPU kernels;
//! instance_norm and layer_norm stay contiguous.

mod batch_norm;
mod fused_backward;
mod group_norm;
mod instance_norm;
mod layer_norm;
mod memory_format;

use crate::{DType, Result, Tensor, bail};

/// Errors unless `t` (a weight, bias or running statistic of `op`) holds `c` elements of the
/// input's dtype (or f32 beside an f16/bf16 input: PyTorch's mixed-precision parameters).
fn check_param(t: &Tensor, what: &str, c: usize, input: DType, op: &'static str) -> Result<()> {
    if t.numel() != c {
        bail!(
            ShapeMismatch,
            op,
            "{} should contain {} elements not {}",
            what,
            c,
            t.numel()
        );
    }
    let half = matches!(input, DType::F16 | DType::BF16);
    if t.dtype() != input && !(half && t.dtype() == DType::F32) {
        bail!(
            DTypeMismatch,
            op,
            "mixed dtype: {} is {} but the input is {} (expected scalar type {})",
            what,
            t.dtype(),
            input,
            input
        );
    }
    Ok(())
}

/// The product of `sizes`, 0 when one is 0 and saturated above `usize::MAX` (the other sizes
/// of an empty tensor may be huge): exact whenever it is compared with a small count.
fn size_product(sizes: &[usize]) -> usize {
    if sizes.contains(&0) {
        0
    } else {
        sizes.iter().fold(1usize, |a, &d| a.saturating_mul(d))
    }
}

/// The sizes `[1, c, 1, ..]` of a per-channel parameter broadcast against an input of `ndim`
/// dims.
fn channel_shape(c: usize, ndim: usize) -> Vec<i64> {
    (0..ndim)
        .map(|d| if d == 1 { c as i64 } else { 1 })
        .collect()
}
