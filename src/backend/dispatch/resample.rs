//! Front doors of the resampling family: the gather of a [`PlaneMap`] and its adjoint scatter
//! (see [`ResampleKernels::plane_gather`](crate::backend::ResampleKernels::plane_gather),
//! [`ResampleKernels::plane_scatter`](crate::backend::ResampleKernels::plane_scatter)). Sources are
//! contiguous; outputs are fresh contiguous tensors (no other thread can see them, so their locks
//! are taken after the source's without an ordering concern).

use crate::DType;
use crate::backend::PlaneMap;
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;

fn check(src: &TensorData, dst: &TensorData) {
    assert!(
        src.layout.is_contiguous()
            && dst.layout.is_contiguous()
            && dst.layout.offset() == 0
            && !dst.storage.same(&src.storage),
        "internal: resampling operands must be contiguous and outputs fresh"
    );
}

/// `dst` (`[planes, out_plane]`) = the gather of `src` (`[planes, in_plane]`) through `map`,
/// `fill` where a position has no input.
pub(crate) fn plane_gather(
    dst: &TensorData,
    src: &TensorData,
    map: &PlaneMap,
    fill: f64,
    dt: DType,
) {
    check(src, dst);
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    super::assert_inside(r.len(), &src.layout, dt.size());
    super::assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        B::plane_gather(d, s, src.layout.offset(), map, fill, dt)
    })
}

/// The zero-filled `dst` (`[planes, in_plane]`) += the adjoint of [`plane_gather`] applied to
/// `src` (`[planes, out_plane]`).
pub(crate) fn plane_scatter(dst: &TensorData, src: &TensorData, map: &PlaneMap, dt: DType) {
    check(src, dst);
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    super::assert_inside(r.len(), &src.layout, dt.size());
    super::assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        B::plane_scatter(d, s, src.layout.offset(), map, dt)
    })
}
