//! Front doors of the nn / linalg / optimizer family: batched matmul, row-wise kernels,
//! positional reads and the fused optimizer step (see [`Backend::bmm`], [`Backend::rowwise`],
//! [`Backend::read_at`], [`Backend::optim_step`]).

use super::lock_pair;
use crate::backend::{Backend, OptimStep, RowwiseOp};
use crate::storage::{DeviceBuffer, Storage};
use crate::tensor::TensorData;
use crate::{DType, Element, Result, bail};
use parking_lot::RwLockWriteGuard;

/// `out[i] = a[i] @ b[i]` over 3-D tensor geometries of dtype `dt` (f16/bf16 widened by the
/// caller). `out` is a fresh tensor in a storage of its own (asserted); `a` and `b` may share
/// one. Locks are taken in ascending storage id order.
pub(crate) fn bmm(out: &TensorData, a: &TensorData, b: &TensorData, dt: DType) {
    assert!(
        !out.storage.same(&a.storage) && !out.storage.same(&b.storage),
        "internal: matmul output aliases an operand"
    );
    let ab_same = a.storage.same(&b.storage);
    let mut order: smallvec::SmallVec<[(u64, u8); 3]> =
        smallvec::smallvec![(out.storage.id(), 0), (a.storage.id(), 1)];
    if !ab_same {
        order.push((b.storage.id(), 2));
    }
    order.sort_unstable();
    let (mut w, mut ra, mut rb) = (None, None, None);
    for &(_, k) in &order {
        match k {
            0 => w = Some(out.storage.write_device()),
            1 => ra = Some(a.storage.read_device()),
            _ => rb = Some(b.storage.read_device()),
        }
    }
    let (mut w, ra) = (w.expect("locked"), ra.expect("locked"));
    let rb: &DeviceBuffer = match &rb {
        Some(g) => g,
        None => &ra,
    };
    super::assert_inside(w.len(), &out.layout, dt.size());
    super::assert_inside(ra.len(), &a.layout, dt.size());
    super::assert_inside(rb.len(), &b.layout, dt.size());
    on_device!(&mut *w, &*ra, |B, o, x| {
        on_device!(rb, |_B2, y| {
            // SAFETY: tensor geometries lie inside their storages (checked); `out` is a distinct storage
            // (asserted above) and a fresh tensor without internal overlap (caller contract).
            unsafe { B::bmm(o, &out.layout, x, &a.layout, y, &b.layout, dt) }
        })
    })
}

/// Row kernel `op` from a contiguous `src` (dtype `dt`, `[outer, n, inner]` elements) into the
/// fresh contiguous `dst` (same dtype and numel, a storage of its own).
pub(crate) fn rowwise(
    dst: &TensorData,
    src: &TensorData,
    dt: DType,
    op: RowwiseOp,
    (outer, n, inner): (usize, usize, usize),
) {
    debug_assert!(src.layout.is_contiguous() && dst.layout.is_contiguous());
    debug_assert!(dst.layout.offset() == 0 && !dst.storage.same(&src.storage));
    if outer * n * inner == 0 {
        return;
    }
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    on_device!(&mut *w, &*r, |B, d, s| {
        B::rowwise(d, s, src.layout.offset(), outer, n, inner, dt, op)
    })
}

/// The elements of `src` (dtype `dt`) at the logical row-major positions `at`, cast to `T`.
pub(crate) fn read_at<T: Element>(src: &TensorData, dt: DType, at: &[usize]) -> Result<Vec<T>> {
    let r = src.storage.read_device();
    on_device!(&*r, |B, b| B::read_at::<T>(b, &src.layout, dt, at))
}

/// Runs the fused optimizer `step` over `parts` (storage, element offset, element count) of
/// dtype `dt`: `[param, grad, states..]`. Errors if two parts share a storage, a range lies
/// outside its storage, or `dt` is not f32/f64. Locks are taken in ascending storage id order.
pub(crate) fn optim_step(
    parts: &[(&Storage, usize, usize)],
    dt: DType,
    step: OptimStep,
) -> Result<()> {
    if !matches!(dt, DType::F32 | DType::F64) {
        bail!(
            Unsupported,
            "optimizer",
            "optimizers support float32 and float64 parameters, got {}",
            dt
        );
    }
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| parts[i].0.id());
    for w in order.windows(2) {
        if parts[w[0]].0.same(parts[w[1]].0) {
            bail!(
                InvalidArgument,
                "optimizer",
                "tensors passed to a fused kernel must not share storage"
            );
        }
    }
    let mut guards: Vec<(usize, RwLockWriteGuard<'_, DeviceBuffer>)> = order
        .iter()
        .map(|&i| (i, parts[i].0.write_device()))
        .collect();
    guards.sort_by_key(|(i, _)| *i);
    for (i, g) in &guards {
        let (_, off, n) = parts[*i];
        if off
            .checked_add(n)
            .and_then(|e| e.checked_mul(dt.size()))
            .is_none_or(|e| e > g.len())
        {
            bail!(
                InvalidArgument,
                "optimizer",
                "tensor geometry lies outside its storage"
            );
        }
    }
    let ranges: Vec<(usize, usize)> = parts.iter().map(|&(_, o, n)| (o, n)).collect();
    // the first part's device runs the step; `buffer_mut` rejects a buffer of another device
    let (first, rest) = guards
        .split_first_mut()
        .expect("a parameter and its gradient");
    let done = on_device!(&mut *first.1, |B, b0| {
        let mut bufs: Vec<&mut <B as Backend>::Buffer> = Vec::with_capacity(parts.len());
        bufs.push(b0);
        bufs.extend(rest.iter_mut().map(|(_, g)| B::buffer_mut(g)));
        B::optim_step(&mut bufs, &ranges, dt, step)
    });
    debug_assert!(done, "internal: dtype checked above");
    Ok(())
}
