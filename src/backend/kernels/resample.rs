//! Resampling over the position plan of a [`PlaneMap`] on contiguous planes: a gather and its
//! adjoint scatter (pad, unfold/fold, interpolate, pixel_shuffle). Front door
//! `dispatch/resample.rs`; CPU body `cpu/resample.rs`.

use crate::DType;
use crate::backend::{Device, PlaneMap};

/// Position plans over contiguous planes.
pub(crate) trait ResampleKernels: Device {
    /// Every output position `o` of every plane of `map`: the weighted sum of its taps over
    /// `src` (`planes * in_plane` contiguous elements of dtype `dt` from element `so`), or
    /// `fill` when all its taps are `PlaneMap::NONE`, into `dst` (`planes * out_plane`, from
    /// 0). A weighted map needs a float dtype; an unweighted one takes any (one tap: a copy).
    /// Buffers are distinct. Panics (an internal invariant) if a range lies outside its buffer.
    fn plane_gather(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        map: &PlaneMap,
        fill: f64,
        dt: DType,
    );

    /// The adjoint of [`Self::plane_gather`]: the zero-filled `dst` (`planes * in_plane`,
    /// from 0) receives `weight * src[o]` at every tap of every output position (`src`:
    /// `planes * out_plane` elements from `so`). Buffers are distinct. Panics (an internal
    /// invariant) if a range lies outside its buffer.
    fn plane_scatter(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        map: &PlaneMap,
        dt: DType,
    );
}
