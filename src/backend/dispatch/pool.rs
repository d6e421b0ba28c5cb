//! Front doors of the pooling family: max / average pooling over the windows of a
//! [`PoolWindows`] and the adjoint of average pooling (see
//! [`PoolKernels::max_pool`](crate::backend::PoolKernels::max_pool),
//! [`PoolKernels::avg_pool`](crate::backend::PoolKernels::avg_pool),
//! [`PoolKernels::avg_pool_transpose`](crate::backend::PoolKernels::avg_pool_transpose)). Sources
//! are contiguous; outputs are fresh contiguous tensors (no other thread can see them, so their
//! locks are taken after the source's without an ordering concern).

use crate::DType;
use crate::backend::PoolWindows;
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;

fn check(src: &TensorData, outs: &[&TensorData]) {
    assert!(
        src.layout.is_contiguous()
            && outs.iter().all(|o| o.layout.is_contiguous()
                && o.layout.offset() == 0
                && !o.storage.same(&src.storage)),
        "internal: pooling operands must be contiguous and outputs fresh"
    );
}

/// `dst` (dtype `dt`) and, when given, `idx` (i64), both `[planes, oh, ow]`: the maxima of
/// the windows of `src` (`[planes, h, w]`) and their positions in the plane.
pub(crate) fn max_pool(
    dst: &TensorData,
    idx: Option<&TensorData>,
    src: &TensorData,
    win: &PoolWindows,
    dt: DType,
) {
    let outs: Vec<&TensorData> = std::iter::once(dst).chain(idx).collect();
    check(src, &outs);
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    let mut wi = idx.map(|i| i.storage.write_device());
    super::assert_inside(r.len(), &src.layout, dt.size());
    super::assert_inside(w.len(), &dst.layout, dt.size());
    if let (Some(i), Some(wi)) = (idx, &wi) {
        super::assert_inside(wi.len(), &i.layout, DType::I64.size());
    }
    on_device!(&mut *w, &*r, |B, d, s| {
        let wi = wi.as_deref_mut().map(B::buffer_mut);
        B::max_pool(d, wi, s, src.layout.offset(), win, dt)
    })
}

/// `dst` (`[planes, oh, ow]`) = the window sums of `src` (`[planes, h, w]`) over `div`.
pub(crate) fn avg_pool(
    dst: &TensorData,
    src: &TensorData,
    win: &PoolWindows,
    div: &[f64],
    dt: DType,
) {
    check(src, &[dst]);
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    super::assert_inside(r.len(), &src.layout, dt.size());
    super::assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        B::avg_pool(d, s, src.layout.offset(), win, div, dt)
    })
}

/// The zero-filled `dst` (`[planes, h, w]`) += the adjoint of [`avg_pool`] applied to `src`
/// (`[planes, oh, ow]`).
pub(crate) fn avg_pool_transpose(
    dst: &TensorData,
    src: &TensorData,
    win: &PoolWindows,
    div: &[f64],
    dt: DType,
) {
    check(src, &[dst]);
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    super::assert_inside(r.len(), &src.layout, dt.size());
    super::assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        B::avg_pool_transpose(d, s, src.layout.offset(), win, div, dt)
    })
}
