//! Convolutions: [`convolution`] (`conv1d`, `conv2d`, `conv3d`, `conv_transpose1d`,
//! `conv_transpose2d`, `conv_transpose3d`: PyTorch's checks, geometry, unbatched inputs), their
//! keyword arguments in [`options`], and the three differentiable products of one geometry in
//! [`core`]. Kernels: `Backend::conv_forward`, `Backend::conv_backward_input`,
//! `Backend::conv_backward_weight` (front door `backend/dispatch/conv.rs`, CPU body
//! `backend/cpu/conv/`: im2col + GEMM); f16/bf16 computed in f32. Memory format as
//! PyTorch's CPU backends (`convolution.rs`'s `format`): a channels-last input or weight gives
//! a channels-last output and gradients (2-d; 3-d through oneDNN only).
//!
//! Derivative rules (`g` = output gradient; `conv`, `conv^T`, `conv_w` = the three products
//! of one geometry; complex operands conjugated as written):
//! - conv2d and every convolution: `conv^T(g, conj w)` for the input, `conv_w(conj x, g)` for
//!   the weight, `g` summed over all dims but 1 for the bias
//! - conv_transpose (= `conv^T`): `conv(g, conj w)` for the input, `conv_w(g, conj x)` for the
//!   weight, `g` summed over all dims but 1 for the bias
//! - `conv_w(x, gy)` (the weight gradient, differentiated again): `conv^T(conj gy, g)` for `x`,
//!   `conv(conj x, g)` for `gy`
//! - an input without channels (PyTorch's `Empty` backend): an output without channels,
//!   zeros for the bias
//! - under `create_graph` every gradient of a convolution's backward is also linked to its
//!   input and weight (no gradient back): PyTorch's `convolution_backward` is one node

mod convolution;
mod core;
mod options;

pub use options::{ConvOptions, ConvPadding, ConvTransposeOptions, Spatial};
