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
//! - **elementwise map** (migrated): the dense fast paths of `ops/dense.rs` ([`Backend::flat_map1`],
//!   [`Backend::flat_map2`], [`Backend::update_owned`] on flat element ranges), the strided map with
//!   broadcasting of `ops/elementwise` ([`Backend::map1`], [`Backend::map2`], [`Backend::map3`]:
//!   unary, binary, ternary) and the predicate test [`Backend::any`]; the op is a generic closure
//!   over element types, the geometry (output strides, promotion, broadcasting) is computed above;
//! - to come, family by family (their loops still sit in `ops/`, `index/`, `sparse/` over the
//!   CPU variant's accessors `Storage::read`/`write`/`lock_for_write`): reductions, scans, gather/scatter/index (`index/kernel.rs`,
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

pub(crate) use dispatch::{
    FlatArg, any, flat_fresh1, flat_fresh2, flat_into1, flat_into2, map1, map2, map3, update_owned,
};
pub(crate) use dispatch::{accumulate, copy_raw, fill, read_vec, scalar_update_owned};

use crate::layout::Layout;
use crate::storage::{DeviceBuffer, Storage};
use crate::{DType, Element, Result, Scalar};

/// The source of a copy: another buffer, or the destination's own buffer (a copy within one
/// storage, read through the destination's write lock).
pub(crate) enum Source<'a, B> {
    Other(&'a B),
    Same,
}

/// One input of a flat elementwise kernel: the elements of a buffer from `offset` on, or with
/// `scalar` the one element at `offset`, read once and broadcast.
pub(crate) struct Flat<'a, B> {
    pub(crate) src: Source<'a, B>,
    pub(crate) offset: usize,
    pub(crate) scalar: bool,
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

    // ---- elementwise map ----

    /// The payload of this device's variant (an internal error for another device's buffer:
    /// the front door checks that the operands of one call share a device).
    fn buffer(d: &DeviceBuffer) -> &Self::Buffer;

    /// A fresh storage of `nbytes` on this device whose contents the caller overwrites
    /// completely before any read (kernel outputs).
    fn storage_for_output(nbytes: usize) -> Result<Storage>;

    /// `out[o + i] = f(a[i])` for `i < n` (elements of type `U` in `out`, `T` in `a`). A
    /// [`Source::Same`] range input starts at `o` (an in-place update; then `T == U`) or is
    /// disjoint from the output. Panics (an internal invariant) if a range lies outside its
    /// buffer, partially overlaps the output, or an in-place update changes the element type.
    fn flat_map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        f: &F,
    );

    /// `out[o + i] = f(a[i], b[i])` for `i < n`, with the contract of [`Backend::flat_map1`]
    /// for each input (a scalar input is read once, before anything is written).
    fn flat_map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        b: Flat<'_, Self::Buffer>,
        f: &F,
    );

    /// `x = f(x)` over the elements of `region` in a buffer borrowed exclusively; `region` is
    /// non-empty and names each element once (the callers' checks), and with `dense` it is
    /// non-overlapping and dense (a flat range). Panics (an internal invariant) if it lies
    /// outside the buffer.
    fn update_owned<T: Element, F: Fn(T) -> T + Sync>(
        buf: &mut Self::Buffer,
        region: &Layout,
        dense: bool,
        f: &F,
    );

    /// `out[ol] = f(a[al])` element by element; `al` has `ol`'s sizes (stride 0 on broadcast
    /// dims). Large maps are split over the worker team.
    ///
    /// # Safety
    /// Both geometries lie inside their buffers; `ol` has no internal overlap; with
    /// [`Source::Same`] the input geometry is identical to `ol` or disjoint from it.
    unsafe fn map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut Self::Buffer,
        ol: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        f: &F,
    );

    /// `out[ol] = f(a[al], b[bl])`, with the contract of [`Backend::map1`] for each input.
    ///
    /// # Safety
    /// As [`Backend::map1`], for both inputs.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut Self::Buffer,
        ol: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        b: Source<'_, Self::Buffer>,
        bl: &Layout,
        f: &F,
    );

    /// `out[ol] = f(c[cl], a[al], b[bl])` serially (the `where` kernel), with the contract of
    /// [`Backend::map1`] for each input.
    ///
    /// # Safety
    /// As [`Backend::map1`], for every input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map3<C: Element, T: Element, U: Element, F: Fn(C, T, T) -> U>(
        out: &mut Self::Buffer,
        ol: &Layout,
        c: Source<'_, Self::Buffer>,
        cl: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        b: Source<'_, Self::Buffer>,
        bl: &Layout,
        f: &F,
    );

    /// Whether `f` holds for some element of `l` (elements of type `T`; false when empty).
    /// Errors if `l` lies outside the buffer.
    fn any<T: Element, F: Fn(T) -> bool>(buf: &Self::Buffer, l: &Layout, f: &F) -> Result<bool>;
}
