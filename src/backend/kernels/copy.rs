//! Strided copy and fill: the kernel of `copy_`, `contiguous`, `to_dtype`, `clone` and every
//! materialisation (any geometry to any geometry, with dtype conversion), `fill`, the
//! accumulation behind the scatter of view backward, and the element reads of `to_vec` and
//! `item`, and the ramp of `arange`/`linspace`. Front door: `copy_raw`, `fill`, `accumulate`,
//! `read_vec`, `ramp` (`dispatch.rs`); CPU body `cpu/copy.rs`.

use crate::backend::{Device, Source};
use crate::layout::Layout;
use crate::{DType, Element, Result, Scalar};

/// Strided copy, fill, accumulation and reads over any geometry.
pub(crate) trait CopyKernels: Device {
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

    /// The values of `arange` and `linspace` as PyTorch's CPU kernels compute them: element `i`
    /// of the `n` contiguous elements from `off` is `start + step * i` for `i < half`, else
    /// `end - step * (n - 1 - i)`; see [`Ramp`] for the precision.
    ///
    /// # Safety
    /// The `n` elements from `off` lie inside `dst`.
    unsafe fn ramp(dst: &mut Self::Buffer, off: usize, n: usize, dt: DType, r: Ramp);
}

/// The line [`CopyKernels::ramp`] writes: `start + step * i` below `half`, then
/// `end - step * (n - 1 - i)` (`linspace` fills its second half backwards from `end`).
///
/// Not `fused`: computed in f64 (mul, then add) and cast to the dtype (`arange`, and `linspace`
/// of dtypes other than f32/f64). `fused` (`linspace` of f32 and f64): computed in the dtype
/// itself, `start` and `end` cast to it, `step = (end - start) / (n - 1)` (in the dtype;
/// `step` is ignored) and each element one fused multiply-add, `fma(step, i, start)` or
/// `fma(-step, n - 1 - i, end)`: PyTorch's `linspace_kernel` as its x86 builds compile it (with
/// FMA contraction), checked element for element against torch 2.15.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ramp {
    pub start: f64,
    pub end: f64,
    pub step: f64,
    pub half: usize,
    pub fused: bool,
}
