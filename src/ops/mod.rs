//! Tensor ops, one family per file. Each file holds the forward functions (shape/dtype checks,
//! then a backend kernel) and, beside them, the backward structs that save only what their
//! formula reads. In-place ops follow one protocol: `check_inplace` → overlap checks → kernel →
//! version bump → record.

pub(crate) mod activation;
pub(crate) mod arith_scalar;
pub(crate) mod binary;
pub(crate) mod binary_extra;
pub(crate) mod binary_out;
pub(crate) mod compare;
pub(crate) mod copy;
pub(crate) mod dense;
pub mod div_round;
pub(crate) mod gather;
pub(crate) mod loss;
pub(crate) mod matmul;
pub mod nn;
mod nn_loss;
pub(crate) mod pointwise;
pub(crate) mod pointwise_api;
pub(crate) mod reduce;
pub(crate) mod reduce_minmax;
pub(crate) mod reduce_scan;
pub mod reduce_stats;
pub(crate) mod reduce_util;
pub mod scatter_reduce;
pub(crate) mod select;
pub(crate) mod set_resize;
pub(crate) mod shape;
pub(crate) mod sort;
pub(crate) mod unary;
mod unary_grad;
pub(crate) mod util;
