//! Front doors of the normalization family: per-channel statistics and the per-channel affine
//! transform over contiguous `[outer, c, inner]` elements (see
//! [`NormKernels::channel_stats`](crate::backend::NormKernels::channel_stats),
//! [`NormKernels::channel_affine`](crate::backend::NormKernels::channel_affine)).

use super::lock_pair;
use crate::DType;
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;

/// (mean, sum of squared deviations) of every channel of the contiguous float `src` (dtype
/// `dt`) seen as `[outer, c, inner]`; NaN for an empty channel.
pub(crate) fn channel_stats(
    src: &TensorData,
    dt: DType,
    dims: (usize, usize, usize),
) -> Vec<(f64, f64)> {
    assert!(
        src.layout.is_contiguous(),
        "internal: channel_stats of a strided source"
    );
    let r = src.storage.read_device();
    super::assert_inside(r.len(), &src.layout, dt.size());
    on_device!(&*r, |B, b| B::channel_stats(
        b,
        src.layout.offset(),
        dims,
        dt
    ))
}

/// `dst = src * scale[ch] + shift[ch]` from the contiguous float `src` (dtype `dt`, seen as
/// `[outer, c, inner]`) into the fresh contiguous `dst` (same dtype and numel, a storage of its
/// own).
pub(crate) fn channel_affine(
    dst: &TensorData,
    src: &TensorData,
    dt: DType,
    dims: (usize, usize, usize),
    scale: &[f64],
    shift: &[f64],
) {
    assert!(
        src.layout.is_contiguous() && dst.layout.is_contiguous() && dst.layout.offset() == 0,
        "internal: channel_affine of strided operands"
    );
    assert!(
        !dst.storage.same(&src.storage),
        "internal: channel_affine in place"
    );
    if dims.0 * dims.1 * dims.2 == 0 {
        return;
    }
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    super::assert_inside(w.len(), &dst.layout, dt.size());
    super::assert_inside(r.len(), &src.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        B::channel_affine(d, s, src.layout.offset(), dims, dt, scale, shift)
    })
}
