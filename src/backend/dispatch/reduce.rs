//! Front doors of the reductions, scans and sort: permute the source's layout into rows (kept
//! dims first, reduced dims last), check that every geometry lies inside its storage, take the
//! locks and call the device's [`Backend`](crate::backend::Backend) method. Outputs are fresh
//! tensors (no other thread can see them, so their locks are taken after the sources' without an
//! ordering concern).

use super::super::{ReduceOp, RowOp};
use super::broadcast_to;
use crate::layout::Layout;
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;
use crate::{DType, Result};

/// `l` with the dims not in `dims` first (in order), then `dims` (in the given order).
fn rows_layout(l: &Layout, dims: &[usize]) -> Layout {
    let order: Vec<usize> = (0..l.dim())
        .filter(|d| !dims.contains(d))
        .chain(dims.iter().copied())
        .collect();
    let sizes: Vec<usize> = order.iter().map(|&d| l.sizes()[d]).collect();
    let strides: Vec<usize> = order.iter().map(|&d| l.strides()[d]).collect();
    Layout::new(sizes, strides, l.offset())
}

/// Errors if `l` (of dtype `dt`) addresses an element outside a buffer of `len` bytes (a
/// storage shrunk by `set_`/`resize_`).
fn check_inside(l: &Layout, dt: DType, len: usize, op: &'static str) -> Result<()> {
    if l.storage_span() * dt.size() > len {
        crate::bail!(
            InvalidArgument,
            op,
            "tensor geometry lies outside its storage"
        );
    }
    Ok(())
}

/// `op` over `dims` of `src` (dtype `sdt`) into the fresh contiguous `dst` (dtype `ddt`, one
/// element per kept index) and, for max/min, the fresh contiguous i64 `idx`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    dst: &TensorData,
    ddt: DType,
    idx: Option<&TensorData>,
    src: &TensorData,
    sdt: DType,
    dims: &[usize],
    op: ReduceOp,
    name: &'static str,
) -> Result<()> {
    let sl = rows_layout(&src.layout, dims);
    let r = src.storage.read_device();
    check_inside(&sl, sdt, r.len(), name)?;
    let mut w = dst.storage.write_device();
    let mut wi = idx.map(|i| (i.storage.write_device(), i.layout.offset()));
    on_device!(&mut *w, &*r, |B, d, s| {
        let ib = wi
            .as_mut()
            .map(|(g, off)| on_device!(&mut **g, |_B2, b| (b, *off)));
        B::reduce(d, dst.layout.offset(), ddt, ib, s, &sl, sdt, dims.len(), op)
    });
    Ok(())
}

/// `op` on every row over `dims` of `src` (and of `src2`, whose sizes broadcast to `src`'s)
/// into the fresh `dst` of `src`'s sizes (dtype `ddt`).
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_map(
    dst: &TensorData,
    ddt: DType,
    src: &TensorData,
    sdt: DType,
    src2: Option<(&TensorData, DType)>,
    dims: &[usize],
    op: RowOp,
    name: &'static str,
) -> Result<()> {
    let sl = rows_layout(&src.layout, dims);
    let dl = rows_layout(&dst.layout, dims);
    let l2 = src2.map(|(t, dt)| {
        let b = broadcast_to(&t.layout, src.layout.sizes());
        (rows_layout(&b, dims), dt)
    });
    let r = src.storage.read_device();
    check_inside(&sl, sdt, r.len(), name)?;
    let r2 = src2.map(|(t, _)| t.storage.read_device());
    if let (Some(g), Some((l, dt))) = (&r2, &l2) {
        check_inside(l, *dt, g.len(), name)?;
    }
    let mut w = dst.storage.write_device();
    on_device!(&mut *w, &*r, |B, d, s| {
        let s2 = match (&r2, &l2) {
            (Some(g), Some((l, dt))) => on_device!(&**g, |_B2, b| Some((b, l, *dt))),
            _ => None,
        };
        B::row_map(d, &dl, ddt, s, &sl, sdt, s2, dims.len(), op)
    });
    Ok(())
}

/// Sorts `src` along `dim` (`None`: a 0-dim tensor, one row of one element) keeping `k` per row:
/// writes the row indices to the fresh contiguous i64 `idx` (the output's shape) and returns the
/// logical (row-major) position in `src` of every output element.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort_rows(
    idx: &TensorData,
    src: &TensorData,
    sdt: DType,
    dim: Option<usize>,
    k: usize,
    descending: bool,
    sorted: bool,
) -> Result<Vec<usize>> {
    let one = |l: &Layout| match dim {
        Some(d) => rows_layout(l, &[d]),
        None => Layout::new(vec![1usize], vec![1usize], l.offset()),
    };
    let sl = one(&src.layout);
    let il = one(&idx.layout);
    let pl = one(&Layout::contiguous(src.layout.sizes()));
    let r = src.storage.read_device();
    check_inside(&sl, sdt, r.len(), "sort")?;
    let mut w = idx.storage.write_device();
    Ok(on_device!(&mut *w, &*r, |B, d, s| B::sort(
        d, &il, s, &sl, sdt, &pl, k, descending, sorted
    )))
}

/// `dst += src` summed over the dims `dst` (a fresh contiguous keepdim tensor, zero-filled)
/// has size 1 where `src` does not:
/// [`ReduceKernels::sum_into`](crate::backend::ReduceKernels::sum_into) for `sum`'s accumulation
/// dtype `dt` (both tensors are of it); `full` when every dim is reduced.
pub(crate) fn sum_into(dst: &TensorData, src: &TensorData, dt: DType, full: bool) {
    if src.layout.numel() == 0 {
        return;
    }
    let dl = broadcast_to(&dst.layout, src.layout.sizes());
    let (mut w, r) = super::lock_pair(&dst.storage, &src.storage);
    super::assert_inside(w.len(), &dl, dt.size());
    super::assert_inside(r.len(), &src.layout, dt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        // SAFETY: tensor geometries lie inside their storages (checked), which are distinct (`dst` is
        // fresh).
        unsafe { B::sum_into(d, &dl, s, &src.layout, dt, full) }
    })
}

/// The full sum of a non-overlapping dense float `src` (dtype `dt`) written to the fresh
/// one-element `dst`: [`ReduceKernels::sum_dense`](crate::backend::ReduceKernels::sum_dense); false
/// when it does not apply.
pub(crate) fn sum_dense(dst: &TensorData, src: &TensorData, dt: DType) -> bool {
    let r = src.storage.read_device();
    let mut w = dst.storage.write_device();
    on_device!(&mut *w, &*r, |B, d, s| B::sum_dense(
        d,
        dst.layout.offset(),
        s,
        &src.layout,
        dt
    ))
}

/// The one-pass `sum(a * b)` of two unit-stride float vectors (see
/// `ReduceKernels::dot_dense`); `None` where it does not apply.
pub(crate) fn dot_dense(a: &TensorData, b: &TensorData, dt: DType) -> Option<f64> {
    let ra = a.storage.read_device();
    let rb = b.storage.read_device();
    on_device!(&*ra, |B, x| on_device!(&*rb, |_B2, y| B::dot_dense(
        x, &a.layout, y, &b.layout, dt
    )))
}
