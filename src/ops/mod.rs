//! Tensor ops, grouped by family: one folder per family, one file per concept. An op's public
//! `impl Tensor` method, its forward kernel call and its backward struct (saving only what the
//! formula reads) sit together in one file; each family's `mod.rs` lists its derivative rules.
//! In-place ops follow one protocol: `check_inplace` → overlap checks → kernel → version bump →
//! record.
//!
//! - [`elementwise`]: unary math and activations, binary arithmetic and extras (maximum, fmod,
//!   atan2, …), where/masked_fill/clamp/pow, comparisons, logical and bitwise ops.
//! - [`reduce`]: sum, min/max, statistics, scans, sort/topk.
//! - [`movement`]: copies and fills, cat/stack/flip/roll/repeat/tril, gather/scatter/take,
//!   scatter_reduce, nonzero/masked_select.
//! - [`linalg`]: the matmul family, einsum, baddbmm.
//! - [`conv`]: conv1d/2d/3d and the transposed convolutions.
//! - [`attention`]: scaled dot-product attention (`scaled_dot_product_attention`).
//! - [`nn`]: softmax, log_softmax, dropout, embedding and every loss.
//! - [`norm`]: batch_norm, instance_norm, group_norm, layer_norm.
//! - [`pool`]: max / average / adaptive pooling, max_unpool2d.
//! - [`resample`]: pad, unfold/fold, interpolate, pixel_shuffle / pixel_unshuffle.
//! - [`storage`]: `set_` and `resize_`.
//! - [`grad`]: the helpers every backward rule is written with.
//! - Shared plumbing: [`dense`] (the elementwise fast path for dense operands), [`util`]
//!   (operand geometry, overlap checks, raw-kernel locking), [`channels_last`] (the
//!   channels-last results of convolutions and poolings); the dense scalar arithmetic fast
//!   path is [`elementwise::arith_scalar`].

pub(crate) mod attention;
pub(crate) mod channels_last;
pub(crate) mod conv;
pub(crate) mod dense;
pub(crate) mod elementwise;
pub(crate) mod grad;
pub(crate) mod linalg;
pub(crate) mod movement;
pub(crate) mod nn;
pub(crate) mod norm;
pub(crate) mod pool;
pub(crate) mod reduce;
pub(crate) mod resample;
pub(crate) mod storage;
pub(crate) mod util;
