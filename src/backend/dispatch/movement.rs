//! Front door of the gather/scatter/index and data-movement family: `flip`'s reversed copy,
//! `take`/`put` over logical positions, the row scatter of `index_put_`, `index_select`, the
//! triangle zeroing of `tril`/`triu`, `scatter_reduce` and `nonzero`. Each function takes the
//! storages' locks (write before read, in storage-id order) and calls the device's
//! [`Backend`](crate::backend::Backend) method through `on_device!`.

use super::{assert_inside, lock_pair};
use crate::backend::{DimWalk, Put, Reduce, RowPut, Source};
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;
use crate::{DType, Result};
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};

fn assert_distinct(dst: &TensorData, src: &TensorData, op: &str) {
    assert!(
        !dst.storage.same(&src.storage),
        "internal: {op} into the storage it reads"
    );
}

/// `dst = src` with the dims `flip` reversed. Same sizes, same dtype `dt`, distinct storages;
/// `dst` has no internal overlap.
pub(crate) fn copy_flipped(dst: &TensorData, src: &TensorData, flip: &[usize], dt: DType) {
    assert_distinct(dst, src, "flip");
    assert_eq!(dst.layout.sizes(), src.layout.sizes());
    if dst.layout.numel() == 0 {
        return;
    }
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    assert_inside(w.len(), &dst.layout, dt.size());
    assert_inside(r.len(), &src.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        // SAFETY: tensor geometries lie inside their (distinct) storages (checked); `dst` has no internal
        // overlap (caller contract).
        unsafe { B::copy_flipped(d, &dst.layout, s, &src.layout, flip, dt) }
    })
}

/// `dst` (logical order) `= src` at logical positions `idx` (zero at `SKIP`):
/// [`MovementKernels::take`](crate::backend::MovementKernels::take).
pub(crate) fn take(
    dst: &TensorData,
    src: &TensorData,
    idx: &[usize],
    dt: DType,
    op: &'static str,
) -> Result<()> {
    assert_distinct(dst, src, "take");
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    on_device!(&mut *w, &*r, |B, d, s| B::take(
        d,
        &dst.layout,
        s,
        &src.layout,
        idx,
        dt,
        op
    ))
}

/// Scatters `src` into `dst` at the positions of `p`:
/// [`MovementKernels::put`](crate::backend::MovementKernels::put). `src` may share `dst`'s storage
/// (its values are then read first).
pub(crate) fn put(dst: &TensorData, src: &TensorData, p: &Put<'_>, dt: DType) -> Result<()> {
    if dst.storage.same(&src.storage) {
        let mut w = dst.storage.write_device();
        on_device!(&mut *w, |B, d| B::put(
            d,
            &dst.layout,
            Source::Same,
            &src.layout,
            p,
            dt
        ))
    } else {
        let (mut w, r) = lock_pair(&dst.storage, &src.storage);
        on_device!(&mut *w, &*r, |B, d, s| B::put(
            d,
            &dst.layout,
            Source::Other(s),
            &src.layout,
            p,
            dt
        ))
    }
}

/// Row scatter of `index_put_` into `dst`'s storage:
/// [`MovementKernels::put_rows`](crate::backend::MovementKernels::put_rows). The values (`src`,
/// contiguous) lie in another storage.
pub(crate) fn put_rows(
    dst: &TensorData,
    g: &RowPut<'_>,
    src: &TensorData,
    dt: DType,
) -> Result<()> {
    assert_distinct(dst, src, "index_put_");
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    on_device!(&mut *w, &*r, |B, d, s| B::put_rows(
        d,
        g,
        s,
        &src.layout,
        dt
    ))
}

/// `dst = src.index_select(dim, idx)` (indices in range, `dst` a fresh output):
/// [`MovementKernels::index_select`](crate::backend::MovementKernels::index_select).
pub(crate) fn index_select(
    dst: &TensorData,
    src: &TensorData,
    dim: usize,
    idx: &[usize],
    dt: DType,
) -> Result<()> {
    assert_distinct(dst, src, "index_select");
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    on_device!(&mut *w, &*r, |B, d, s| B::index_select(
        d,
        &dst.layout,
        s,
        &src.layout,
        dim,
        idx,
        dt
    ))
}

/// Zeroes `dst` outside the triangle of its last two dims:
/// [`MovementKernels::tri_zero`](crate::backend::MovementKernels::tri_zero).
pub(crate) fn tri_zero(dst: &TensorData, dt: DType, diagonal: i64, lower: bool) {
    let mut w = dst.storage.write_device();
    on_device!(&mut *w, |B, d| B::tri_zero(
        d,
        &dst.layout,
        dt,
        diagonal,
        lower
    ))
}

/// `scatter_reduce` of `src` into `dst` (a fresh copy of `self`):
/// [`MovementKernels::scatter_reduce`](crate::backend::MovementKernels::scatter_reduce).
pub(crate) fn scatter_reduce(
    dst: &TensorData,
    src: &TensorData,
    r: &Reduce<'_>,
    dt: DType,
) -> Result<()> {
    assert_distinct(dst, src, "scatter_reduce");
    let (mut w, s) = lock_pair(&dst.storage, &src.storage);
    on_device!(&mut *w, &*s, |B, d, s| B::scatter_reduce(
        d,
        &dst.layout,
        s,
        &src.layout,
        r,
        dt
    ))
}

/// Logical positions of the nonzero elements of `src`:
/// [`MovementKernels::nonzero`](crate::backend::MovementKernels::nonzero).
pub(crate) fn nonzero(src: &TensorData, dt: DType) -> Result<Vec<usize>> {
    let r = src.storage.read_device();
    on_device!(&*r, |B, b| B::nonzero(b, &src.layout, dt))
}

/// The coordinates of the positions `hits` of a tensor of `sizes`, written into the fresh
/// storage of `dst` (the `[n, d]` i64 result of `nonzero`):
/// [`MovementKernels::nonzero_coords`](crate::backend::MovementKernels::nonzero_coords).
pub(crate) fn nonzero_coords(dst: &TensorData, hits: &[usize], sizes: &[usize]) {
    let mut w = dst.storage.write_device();
    on_device!(&mut *w, |B, d| B::nonzero_coords(d, hits, sizes))
}

/// The write lock of `dst` and the read locks of `a` and `b` (`None` when `b` shares `a`'s
/// storage), taken in ascending storage id order. `dst` is distinct from both.
#[allow(clippy::type_complexity)]
fn lock3<'a>(
    dst: &'a TensorData,
    a: &'a TensorData,
    b: &'a TensorData,
) -> (
    RwLockWriteGuard<'a, DeviceBuffer>,
    RwLockReadGuard<'a, DeviceBuffer>,
    Option<RwLockReadGuard<'a, DeviceBuffer>>,
) {
    let same = a.storage.same(&b.storage);
    let mut order = vec![(dst.storage.id(), 0u8), (a.storage.id(), 1)];
    if !same {
        order.push((b.storage.id(), 2));
    }
    order.sort_unstable();
    let (mut w, mut ra, mut rb) = (None, None, None);
    for &(_, k) in &order {
        match k {
            0 => w = Some(dst.storage.write_device()),
            1 => ra = Some(a.storage.read_device()),
            _ => rb = Some(b.storage.read_device()),
        }
    }
    (w.expect("locked"), ra.expect("locked"), rb)
}

/// `dst = src.gather(w.dim, index)` into the fresh `dst` (dtype `dt`; `index` i64):
/// [`MovementKernels::gather_dim`](crate::backend::MovementKernels::gather_dim).
pub(crate) fn gather_dim(
    dst: &TensorData,
    src: &TensorData,
    index: &TensorData,
    w: &DimWalk<'_>,
    dt: DType,
) -> Result<()> {
    assert_distinct(dst, src, "gather");
    assert_distinct(dst, index, "gather");
    let (mut wg, rs, ri) = lock3(dst, src, index);
    let ri: &DeviceBuffer = ri.as_deref().unwrap_or(&rs);
    on_device!(&mut *wg, &*rs, |B, d, s| {
        on_device!(ri, |_B2, i| B::gather_dim(
            d,
            &dst.layout,
            s,
            &src.layout,
            i,
            w,
            dt
        ))
    })
}

/// Scatters `src` into the fresh `dst` (a copy of `self`) along `w.dim` at `index` (i64),
/// adding with `accumulate`:
/// [`MovementKernels::scatter_dim`](crate::backend::MovementKernels::scatter_dim).
pub(crate) fn scatter_dim(
    dst: &TensorData,
    src: &TensorData,
    index: &TensorData,
    w: &DimWalk<'_>,
    dt: DType,
    accumulate: bool,
) -> Result<()> {
    assert_distinct(dst, src, "scatter");
    assert_distinct(dst, index, "scatter");
    let (mut wg, rs, ri) = lock3(dst, src, index);
    let ri: &DeviceBuffer = ri.as_deref().unwrap_or(&rs);
    on_device!(&mut *wg, &*rs, |B, d, s| {
        on_device!(ri, |_B2, i| B::scatter_dim(
            d,
            &dst.layout,
            s,
            &src.layout,
            i,
            w,
            dt,
            accumulate
        ))
    })
}
