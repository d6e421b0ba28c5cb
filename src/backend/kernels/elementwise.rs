//! The elementwise map: the dense fast paths on flat element ranges (`flat_map1`, `flat_map2`,
//! `update_owned`), the strided map with broadcasting (`map1`, `map2`, `map3`: unary, binary,
//! ternary), the predicate test `any`, and the in-place update of a region by a scalar
//! (`scalar_update`, an op code rather than a closure). The op is a generic closure over element
//! types; the geometry (output strides, promotion, broadcasting) is computed above. Front door
//! `dispatch/elementwise.rs` (and `scalar_update_owned` in `dispatch.rs`); CPU body `cpu/map.rs`
//! (`cpu/scalar.rs` for the scalar update). A device without native closure kernels forwards
//! the closure methods to `staging.rs`.

use crate::backend::{Device, Flat, ScalarArith, Source};
use crate::layout::Layout;
use crate::{DType, Element, Result, Scalar};

/// Elementwise maps (closure kernels over flat ranges and strided geometries) and the in-place
/// scalar update.
pub(crate) trait ElementwiseKernels: Device {
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

    /// [`Self::flat_map1`] with `full`, for an element rule with a cheap form for most inputs:
    /// `fast(x)` is `(full(x), false)` bit for bit, or `(_, true)` where it does not apply
    /// (then `full(x)` is used). A device may evaluate `fast` over blocks and `full` only for
    /// blocks with a flagged element (the CPU's chunk kernel `map1_fallback`); by default,
    /// `full` everywhere.
    fn flat_map1_fallback<T, U, F, G>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        fast: &F,
        full: &G,
    ) where
        T: Element,
        U: Element,
        F: Fn(T) -> (U, bool) + Sync,
        G: Fn(T) -> U + Sync,
    {
        let _ = fast;
        Self::flat_map1(out, o, n, a, full)
    }

    /// `out[o + i] = f(a[i], b[i])` for `i < n`, with the contract of [`Self::flat_map1`]
    /// for each input (a scalar input is read once, before anything is written).
    fn flat_map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        b: Flat<'_, Self::Buffer>,
        f: &F,
    );

    /// [`Self::flat_map2`] of `f(x, y) = if s { slow(x, y) } else { v }` with
    /// `(v, s) = fast(x, y)`: `fast` is a branch-free form of `slow` on part of its domain and
    /// says where it is not (see the CPU's chunked kernel, `cpu::elementwise::map2_fallback`).
    /// The default runs the combined closure through `flat_map2`.
    fn flat_map2_fallback<T, U, F, G>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        b: Flat<'_, Self::Buffer>,
        fast: &F,
        slow: &G,
    ) where
        T: Element,
        U: Element,
        F: Fn(T, T) -> (U, bool) + Sync,
        G: Fn(T, T) -> U + Sync,
    {
        let f = |x: T, y: T| {
            let (v, s) = fast(x, y);
            if s { slow(x, y) } else { v }
        };
        Self::flat_map2(out, o, n, a, b, &f)
    }

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

    /// `out[ol] = f(a[al], b[bl])`, with the contract of [`Self::map1`] for each input.
    ///
    /// # Safety
    /// As [`Self::map1`], for both inputs.
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

    /// `out[ol] = f(c[cl], a[al], b[bl])` (the `where`, `lerp`, `addcmul` and `addcdiv`
    /// kernel), with the contract of [`Self::map1`] for each input; large outputs may be split
    /// into ranges processed in parallel.
    ///
    /// # Safety
    /// As [`Self::map1`], for every input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map3<C: Element, T: Element, U: Element, F: Fn(C, T, T) -> U + Sync>(
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
