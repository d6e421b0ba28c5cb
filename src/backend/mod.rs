//! Backends: the kernels of one device, seen through the [`Backend`] trait. A kernel works on
//! device buffers and [`Layout`](crate::layout::Layout)s (sizes, element strides, element offset) —
//! never on a `Tensor`, never on autograd. Everything above this floor validates arguments,
//! computes the output geometry, calls a kernel through the front door below, and records autograd.
//!
//! # How a call reaches a device
//!
//! A [`Storage`] holds a `DeviceBuffer`, an enum with one variant per
//! device (`Cpu` today). The front door ([`copy_raw`], [`fill`], [`accumulate`], [`read_vec`],
//! [`scalar_update_owned`], in `dispatch.rs`; one module per other family, e.g.
//! [`movement`] in `dispatch/movement.rs`) takes the storages' locks, then matches the
//! buffers' variants in one place, the `on_device!` macro, and calls the [`Backend`] method of
//! that device. Op files never name a device.
//!
//! # What a device implements
//!
//! [`Backend`] is the sum of one trait per kernel family, each in `kernels/<family>.rs` with
//! its methods' contracts, its front door in `dispatch/` and its CPU body in `cpu/`:
//!
//! - [`Device`]: the buffer type, its variant's payload, fresh output storages;
//! - [`CopyKernels`]: strided copy with dtype conversion, fill, accumulate, reads (`to_vec`);
//! - [`ElementwiseKernels`]: closure maps over flat ranges and broadcast strided geometries,
//!   `any`, the in-place scalar update;
//! - [`ReduceKernels`]: row reductions, scans (cumsum/cumprod), sort/topk, `sum`;
//! - [`MovementKernels`]: take/put, index_put_ rows, gather/scatter along a dim,
//!   `index_select`, flip, tril/triu, scatter_reduce, nonzero;
//! - [`LinalgKernels`]: batched strided matmul (`mm`, `bmm`, `matmul`);
//! - [`NnKernels`]: row-wise softmax/log_softmax, layer_norm, the class losses' target picks;
//! - [`ConvKernels`]: convolution forward, input gradient, weight gradient;
//! - [`AttentionKernels`]: fused scaled dot-product attention forward;
//! - [`NormKernels`]: per-channel statistics and affine transform (batch/instance/group norm);
//! - [`PoolKernels`]: max and average pooling windows and the average adjoint;
//! - [`ResampleKernels`]: position-plan gather and scatter (pad, fold, interpolate, shuffle);
//! - [`OptimKernels`]: the fused SGD and Adam/AdamW step;
//! - [`SparseKernels`]: sparse pattern reads and builds, row kernels, spmm/sddmm.
//!
//! # Adding a device
//!
//! A second device (CUDA through `cudarc`) is a folder beside `cpu/` implementing [`Device`]
//! and every family trait for its buffer type (then `impl Backend for ItsType {}`), one variant of
//! `DeviceBuffer` (`storage/mod.rs`), and one arm in each form of `on_device!` (`dispatch.rs`, with
//! an error arm for operands on different devices). Op files do not change. The closure-taking
//! elementwise family (`flat_map1`, `flat_map2`, `update_owned`, `map1`, `map2`, `map3`, `any`: the
//! op's scalar formula is a Rust closure, which a GPU cannot compile) is implemented by host
//! staging: the device implements `staging::HostStaging` (copy a buffer to host memory and back)
//! and forwards each of those methods to the function of the same name in `staging.rs` (operands
//! copied to host, the CPU kernel run, the output copied back). Native kernels for hot ops come
//! later as op-code entries that the family's front door tries first, falling back to the closure
//! form when a device declines (the pattern of [`ElementwiseKernels::scalar_update`] and
//! [`ReduceKernels::sum_dense`]); op files still do not change. Every other family's methods take
//! plain data (layouts, dtypes, positions, op enums) and are implemented natively.
//!
//! # Safety
//!
//! The strided kernels (`copy`, `fill`, `accumulate`, `copy_flipped`) are `unsafe`: the caller
//! (the front door) guarantees that every element the geometries address lies inside the
//! buffers — true of every tensor geometry — and the aliasing rules of each method.
//! [`CopyKernels::read`], [`ElementwiseKernels::scalar_update`], the gather/scatter/index
//! kernels and the sparse kernels check their geometry themselves.

pub(crate) mod cpu;
mod dispatch;
// The fallback of a second device's closure-taking kernels; no device needs it yet, its unit
// test exercises it.
#[allow(dead_code)]
mod staging;

pub(crate) use dispatch::attention;
pub(crate) use dispatch::attention::AttnGeom;
pub(crate) use dispatch::conv;
pub(crate) use dispatch::conv::ConvGeom;
pub(crate) use dispatch::movement;
pub(crate) use dispatch::norm;
pub(crate) use dispatch::pool;
pub(crate) use dispatch::reduce::dot_dense;
pub(crate) use dispatch::reduce::{reduce, row_map, sort_rows, sum_dense, sum_into};
pub(crate) use dispatch::resample;
pub(crate) use dispatch::sparse;
pub(crate) use dispatch::{
    FlatArg, any, flat_fresh1, flat_fresh1_fallback, flat_fresh2_fallback, flat_fresh2_split,
    flat_into1, flat_into2, map1, map2, map3, update_owned,
};
pub(crate) use dispatch::{accumulate, copy_raw, fill, read_vec, scalar_update_owned};
pub(crate) use dispatch::{bmm, optim_step, read_at, rowwise};
pub(crate) use dispatch::{
    group_norm, group_norm_backward, layer_norm, layer_norm_backward, rowwise_backward,
};
// the vectorisable lane math the elementwise closures call (exp, log, tanh, sigmoid, erf, ...)
pub(crate) use cpu::math::Transcendental;
// the fused term of binary_cross_entropy (f64 lanes; that of the `_with_logits` form is
// `Transcendental::vsoftplus`)
pub(crate) use cpu::math::bce_f64;

mod args;
pub(crate) use args::PlaneMap;
pub(crate) use args::PoolWindows;
pub(crate) use args::{
    DimWalk, Flat, OptimStep, Pattern, Put, Reduce, ReduceOp, RowOp, RowPut, RowSel, Rows,
    RowwiseOp, SKIP, ScalarArith, Source, Spmm,
};

mod kernels;
pub(crate) use dispatch::ramp;
pub(crate) use kernels::Ramp;
pub(crate) use kernels::{
    AttentionKernels, ConvKernels, CopyKernels, ElementwiseKernels, LinalgKernels, MovementKernels,
    NnKernels, NormKernels, OptimKernels, PoolKernels, ReduceKernels, ResampleKernels,
    SparseKernels,
};

use crate::Result;
use crate::storage::{DeviceBuffer, Storage};

/// What every device provides besides its kernels: its buffer type, the payload of its
/// `DeviceBuffer` variant, and fresh output storages. Every kernel family trait builds on it.
pub(crate) trait Device {
    /// The device's buffer type (the payload of its `DeviceBuffer` variant).
    type Buffer;

    /// The payload of this device's variant (an internal error for another device's buffer:
    /// the front door checks that the operands of one call share a device).
    fn buffer(d: &DeviceBuffer) -> &Self::Buffer;

    /// [`Self::buffer`], borrowed mutably.
    fn buffer_mut(d: &mut DeviceBuffer) -> &mut Self::Buffer;

    /// A fresh storage of `nbytes` on this device whose contents the caller overwrites
    /// completely before any read (kernel outputs).
    fn storage_for_output(nbytes: usize) -> Result<Storage>;

    /// A fresh zero-filled storage of `nbytes` on this device (outputs that accumulate).
    fn storage_zeroed(nbytes: usize) -> Result<Storage>;
}

/// The kernels one device implements: every kernel family (one supertrait each, listed in the
/// module docs). Methods see the device's buffers and layouts only.
pub(crate) trait Backend:
    Device
    + CopyKernels
    + ElementwiseKernels
    + ReduceKernels
    + MovementKernels
    + LinalgKernels
    + NnKernels
    + ConvKernels
    + AttentionKernels
    + NormKernels
    + PoolKernels
    + ResampleKernels
    + OptimKernels
    + SparseKernels
{
}
