//! Backends: the kernels of one device, seen through the [`Backend`] trait. A kernel works on
//! device buffers and [`Layout`]s (sizes, element strides, element offset) — never on a `Tensor`,
//! never on autograd. Everything above this floor validates arguments, computes the output
//! geometry, calls a kernel through the front door below, and records autograd.
//!
//! # How a call reaches a device
//!
//! A [`Storage`](crate::storage::Storage) holds a `DeviceBuffer`, an enum with one variant per
//! device (`Cpu` today). The front door ([`copy_raw`], [`fill`], [`accumulate`], [`read_vec`],
//! [`scalar_update_owned`], in `dispatch.rs`) takes the storages' locks, then matches the
//! buffers' variants in one place, the `on_device!` macro, and calls the [`Backend`] method of
//! that device. Op files never name a device.
//!
//! # What a device implements
//!
//! One [`Backend`] method per kernel family entry point, grouped by family:
//!
//! - **strided copy and fill** (migrated): [`Backend::copy`] (any geometry to any geometry,
//!   with dtype conversion; the kernel of `copy_`, `contiguous`, `to_dtype`, `clone` and every
//!   materialisation), [`Backend::fill`], [`Backend::accumulate`] (`dst += src` in logical
//!   order: the scatter of view backward), [`Backend::read`] (elements in logical order, cast:
//!   `to_vec`, `item`);
//! - **elementwise with a scalar** (migrated: the in-place form on a region):
//!   [`Backend::scalar_update`];
//! - to come, family by family (their loops still sit in `ops/`, `index/`, `sparse/` over the
//!   CPU variant's accessors `Storage::read`/`write`/`lock_for_write`): elementwise map with
//!   broadcasting over strided layouts (unary, binary, ternary; the dense fast paths of
//!   `ops/dense.rs`), reductions, scans, gather/scatter/index (`index/kernel.rs`,
//!   `index/put_rows.rs`), row-wise ops (softmax, log_softmax, layer_norm), matmul
//!   (`backend/cpu/matmul.rs` is already here, called directly), and the sparse kernels.
//!
//! # Adding a device
//!
//! A second device (CUDA through `cudarc`) is a folder beside `cpu/` implementing [`Backend`]
//! for its buffer type, one variant of `DeviceBuffer` (`storage/mod.rs`), and one arm in
//! `on_device!` (`dispatch.rs`). Op files do not change. A family not yet migrated to the trait
//! reaches the CPU variant only; it must move into the trait before it can run on another device.
//!
//! # Safety
//!
//! The strided kernels (`copy`, `fill`, `accumulate`) are `unsafe`: the caller (the front door)
//! guarantees that every element the geometries address lies inside the buffers — true of every
//! tensor geometry — and the aliasing rules of each method. [`Backend::read`] and
//! [`Backend::scalar_update`] check their geometry themselves.

pub(crate) mod cpu;
mod dispatch;

pub(crate) use dispatch::{accumulate, copy_raw, fill, read_vec, scalar_update_owned};

use crate::layout::Layout;
use crate::{DType, Element, Result, Scalar};

/// The source of a copy: another buffer, or the destination's own buffer (a copy within one
/// storage, read through the destination's write lock).
pub(crate) enum Source<'a, B> {
    Other(&'a B),
    Same,
}

/// An elementwise update of a region by a real scalar: `x op= s`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScalarArith {
    Mul,
    Div,
}

/// The kernels one device implements, one method per kernel family entry point. Methods see the
/// device's buffers and layouts only. Families not listed yet are in the module docs ("to come").
pub(crate) trait Backend {
    /// The device's buffer type (the payload of its `DeviceBuffer` variant).
    type Buffer;

    // ---- strided copy and fill ----

    /// `dst[dl] = cast(src[sl])` element by element in logical order; `sl` has `dl`'s sizes
    /// (stride 0 on broadcast dims).
    ///
    /// # Safety
    /// Both geometries lie inside their buffers; `dl` has no internal overlap; with
    /// [`Source::Same`] the two geometries are disjoint or identical.
    unsafe fn copy(
        dst: &mut Self::Buffer,
        dl: &Layout,
        ddt: DType,
        src: Source<'_, Self::Buffer>,
        sl: &Layout,
        sdt: DType,
    );

    /// `dst[dl] = v` (converted to `dt`); `dl` may overlap itself.
    ///
    /// # Safety
    /// `dl` lies inside `dst`.
    unsafe fn fill(dst: &mut Self::Buffer, dl: &Layout, dt: DType, v: Scalar);

    /// `dst[dl] += cast(src[sl])` sequentially in logical order, so a `dl` that names an
    /// element several times accumulates every contribution.
    ///
    /// # Safety
    /// Both geometries lie inside their buffers (of equal sizes); the buffers are distinct.
    unsafe fn accumulate(
        dst: &mut Self::Buffer,
        dl: &Layout,
        ddt: DType,
        src: &Self::Buffer,
        sl: &Layout,
        sdt: DType,
    );

    /// The elements of `l` (of dtype `dt`) in logical order, cast to `T`. Errors if `l` lies
    /// outside the buffer or the result cannot be allocated.
    fn read<T: Element>(buf: &Self::Buffer, l: &Layout, dt: DType) -> Result<Vec<T>>;

    // ---- elementwise with a scalar ----

    /// `x = x op s` over the elements `region` names in a buffer borrowed exclusively, with the
    /// values of the general arithmetic kernel (`s` converted to the element type first). False
    /// (nothing done) when the dtype is not f32/f64 or `region` may name an element twice.
    /// Panics (an internal invariant) if a non-empty `region` lies outside the buffer.
    fn scalar_update(
        buf: &mut Self::Buffer,
        region: &Layout,
        dt: DType,
        op: ScalarArith,
        s: Scalar,
    ) -> bool;
}
