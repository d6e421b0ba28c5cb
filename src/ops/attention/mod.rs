//! Attention: [`sdpa`] (`scaled_dot_product_attention` with its options
//! [`SdpaOptions`]: boolean or additive mask, `is_causal`, dropout, scale, grouped-query
//! heads), composed of `matmul`, `masked_fill`/`add`, `softmax`, `dropout` and `matmul`, so its
//! backward and double backward are theirs; without a graph to record, causal or unmasked
//! attention runs the backend's fused forward (`Backend::sdpa_forward`, fast path F13).
//!
//! Derivative rules (`g` = output gradient):
//! - scaled_dot_product_attention: composed (`softmax(q k^T s + bias) v`); a fully masked row
//!   is zero in the output (PyTorch 2.15's CPU kernel) and passes no gradient

mod sdpa;

pub use sdpa::SdpaOptions;
