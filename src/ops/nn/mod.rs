//! Neural-network functions, one file per concept: [`softmax`] (`softmax`, `log_softmax`),
//! [`dropout`], [`embedding`] and every loss in [`loss`] (`layer_norm` is with the other
//! normalizations in `ops/norm/`). softmax and log_softmax are the backend's row kernels
//! (`Backend::rowwise`: f32 in f32, f64 in f64, f16/bf16 in f32); the class losses read only the picked entries (`Backend::read_at`);
//! the elementwise losses are compositions of ops (BCE in f64, rounded to the input dtype).
//!
//! Derivative rules (`g` = output gradient):
//! - softmax: `y * (g - sum_dim(g * y))` (saved: output `y`)
//! - log_softmax: `g - softmax(x) * sum_dim(g)` (saved: input `x`)
//! - nll_loss: `g * (-w_t)` (mean: `/ sum w`) scattered to the target positions
//! - cross_entropy: composed (`log_softmax` + `nll_loss`, or `-sum(lp * t)`)
//! - mse_loss: composed (`(x - y)^2`, reduced)
//! - l1_loss: `g * sign(x - y)` for the input, `-g * sign(x - y)` for the target (constant, exact
//!   to every order)
//! - binary_cross_entropy: `g (x - y) / max(x (1 - x), 1e-12)` for the input,
//!   `g (log(1 - x) - log x)` (logs clamped at -100) for the target
//! - binary_cross_entropy_with_logits: `g ((1 - y) - (1 + (pw - 1) y) sigmoid(-x))` for the
//!   logits, `g (-x + (pw - 1) softplus(-x))` for the target (`pw` = pos_weight; weight and
//!   reduction composed around it)
//! - dropout: `g * mask` (composed)
//! - embedding: `g` scattered into the looked-up rows, skipping `padding_idx`

mod dropout;
mod embedding;
pub(crate) mod loss;
mod softmax;

pub(crate) use embedding::wrap_padding_idx;
pub use loss::{BceWithLogitsOptions, CrossEntropyOptions, NllLossOptions, Reduction};

use crate::autograd::no_grad;
use crate::{DType, Result, Tensor, bail};

pub(crate) fn check_float(x: &Tensor, op: &'static str) -> Result<()> {
    if !x.dtype().is_float() {
        bail!(
            DTypeMismatch,
            op,
            "\"{}\" not implemented for '{}'",
            op,
            x.dtype().torch_scalar_name()
        );
    }
    Ok(())
}

/// f64 tensor values -> tensor of `dtype` (no autograd).
pub(crate) fn from_f64(v: Vec<f64>, shape: &[usize], dtype: DType) -> Result<Tensor> {
    let _g = no_grad();
    let t = Tensor::from_vec(v, shape)?;
    if dtype == DType::F64 {
        Ok(t)
    } else {
        t.to_dtype(dtype)
    }
}
