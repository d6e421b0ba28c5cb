//! Front doors of the nn / linalg / optimizer family: batched matmul, row-wise kernels,
//! positional reads and the fused optimizer step (see
//! [`LinalgKernels::bmm`](crate::backend::LinalgKernels::bmm),
//! [`NnKernels::rowwise`](crate::backend::NnKernels::rowwise),
//! [`NnKernels::read_at`](crate::backend::NnKernels::read_at),
//! [`OptimKernels::optim_step`](crate::backend::OptimKernels::optim_step)).

use super::elementwise::{find, lock};
use super::lock_pair;
use crate::backend::{Device, OptimStep, RowwiseOp};
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

/// The size of the compute type of float dtype `dt` (f64 for f64, else f32): the element of
/// layer_norm's statistics.
fn compute_size(dt: DType) -> usize {
    if dt == DType::F64 { 8 } else { 4 }
}

/// A fresh storage of `nbytes` on `like`'s device, for a kernel to fill.
fn fresh(like: &DeviceBuffer, nbytes: usize) -> Result<Storage> {
    on_device!(like, |B, _b| B::storage_for_output(nbytes))
}

/// The device buffer of a fresh output storage, if any.
fn dev(o: &mut Option<Storage>) -> Option<&mut DeviceBuffer> {
    o.as_mut().map(|s| {
        s.get_mut_device()
            .expect("internal: a fresh storage is shared")
    })
}

/// Backward of row kernel `op` from the contiguous forward output `y` and output gradient `g`
/// (dtype `dt`, `[outer, n, inner]` elements) into a fresh storage
/// ([`NnKernels::rowwise_backward`](crate::backend::NnKernels::rowwise_backward)).
pub(crate) fn rowwise_backward(
    y: &TensorData,
    g: &TensorData,
    dt: DType,
    op: RowwiseOp,
    (outer, n, inner): (usize, usize, usize),
) -> Result<Storage> {
    debug_assert!(y.layout.is_contiguous() && g.layout.is_contiguous());
    let (_, reads) = lock(None, &[&y.storage, &g.storage]);
    let (ry, rg) = (find(&reads, &y.storage), find(&reads, &g.storage));
    super::assert_inside(ry.len(), &y.layout, dt.size());
    super::assert_inside(rg.len(), &g.layout, dt.size());
    let mut out = fresh(ry, outer * n * inner * dt.size())?;
    let w = out
        .get_mut_device()
        .expect("internal: a fresh storage is shared");
    on_device!(w, ry, |B, d, by| {
        let g = (B::buffer(rg), g.layout.offset());
        B::rowwise_backward(d, (by, y.layout.offset()), g, outer, n, inner, dt, op)
    });
    Ok(out)
}

/// Layer normalisation of the contiguous `x` (`rows` rows of `n`, dtype `dt`) with optional
/// contiguous `w`/`b` of `n` elements
/// ([`NnKernels::layer_norm`](crate::backend::NnKernels::layer_norm)): fresh storages of the output
/// and of the statistics (means then rstds, [`compute_size`] bytes each).
pub(crate) fn layer_norm(
    x: &TensorData,
    w: Option<&TensorData>,
    b: Option<&TensorData>,
    (rows, n): (usize, usize),
    eps: f64,
    dt: DType,
) -> Result<(Storage, Storage)> {
    let mut ss: smallvec::SmallVec<[&Storage; 3]> = smallvec::smallvec![&x.storage];
    ss.extend(w.iter().chain(b.iter()).map(|t| &t.storage));
    let (_, reads) = lock(None, &ss);
    let rx = find(&reads, &x.storage);
    for t in std::iter::once(x).chain(w).chain(b) {
        super::assert_inside(find(&reads, &t.storage).len(), &t.layout, dt.size());
    }
    let mut out = fresh(rx, rows * n * dt.size())?;
    let mut stats = fresh(rx, 2 * rows * compute_size(dt))?;
    let o = out
        .get_mut_device()
        .expect("internal: a fresh storage is shared");
    let s = stats
        .get_mut_device()
        .expect("internal: a fresh storage is shared");
    on_device!(o, rx, |B, o, bx| {
        let arg = |t: &TensorData| (B::buffer(find(&reads, &t.storage)), t.layout.offset());
        let (w, b) = (w.map(arg), b.map(arg));
        let x = (bx, x.layout.offset());
        B::layer_norm(o, B::buffer_mut(s), x, w, b, rows, n, eps, dt)
    });
    Ok((out, stats))
}

/// Backward of [`layer_norm`] from the contiguous output gradient `g`, input `x`, statistics
/// and weight ([`NnKernels::layer_norm_backward`](crate::backend::NnKernels::layer_norm_backward)):
/// fresh storages of the input, weight and bias gradients, each only if `need`ed.
#[allow(clippy::too_many_arguments)]
pub(crate) fn layer_norm_backward(
    g: &TensorData,
    x: &TensorData,
    stats: &TensorData,
    w: Option<&TensorData>,
    (rows, n): (usize, usize),
    dt: DType,
    need: [bool; 3],
) -> Result<[Option<Storage>; 3]> {
    let mut ss: smallvec::SmallVec<[&Storage; 4]> =
        smallvec::smallvec![&g.storage, &x.storage, &stats.storage];
    ss.extend(w.iter().map(|t| &t.storage));
    let (_, reads) = lock(None, &ss);
    let rg = find(&reads, &g.storage);
    for t in [g, x].into_iter().chain(w) {
        super::assert_inside(find(&reads, &t.storage).len(), &t.layout, dt.size());
    }
    let cs = compute_size(dt);
    super::assert_inside(find(&reads, &stats.storage).len(), &stats.layout, cs);
    let sizes = [rows * n, n, n];
    let mut outs: [Option<Storage>; 3] = [None, None, None];
    for (k, o) in outs.iter_mut().enumerate() {
        if need[k] {
            *o = Some(fresh(rg, sizes[k] * dt.size())?);
        }
    }
    let [ox, ow, ob] = &mut outs;
    let (dx, dw, db) = (dev(ox), dev(ow), dev(ob));
    on_device!(rg, |B, bg| {
        let arg = |t: &TensorData| (B::buffer(find(&reads, &t.storage)), t.layout.offset());
        B::layer_norm_backward(
            dx.map(B::buffer_mut),
            dw.map(B::buffer_mut),
            db.map(B::buffer_mut),
            (bg, g.layout.offset()),
            arg(x),
            arg(stats),
            w.map(arg),
            rows,
            n,
            dt,
        )
    });
    Ok(outs)
}

/// Group normalisation of the contiguous `x` (`dims = (n, c, hxw, groups)`, dtype `dt`) with
/// optional contiguous `w`/`b` of `c` elements
/// ([`NnKernels::group_norm`](crate::backend::NnKernels::group_norm)): fresh storages of the
/// output and of the statistics (means then rstds, [`compute_size`] bytes each).
pub(crate) fn group_norm(
    x: &TensorData,
    w: Option<&TensorData>,
    b: Option<&TensorData>,
    dims: (usize, usize, usize, usize),
    eps: f64,
    dt: DType,
) -> Result<(Storage, Storage)> {
    let (n, c, hxw, groups) = dims;
    let mut ss: smallvec::SmallVec<[&Storage; 3]> = smallvec::smallvec![&x.storage];
    ss.extend(w.iter().chain(b.iter()).map(|t| &t.storage));
    let (_, reads) = lock(None, &ss);
    let rx = find(&reads, &x.storage);
    for t in std::iter::once(x).chain(w).chain(b) {
        super::assert_inside(find(&reads, &t.storage).len(), &t.layout, dt.size());
    }
    let mut out = fresh(rx, n * c * hxw * dt.size())?;
    let mut stats = fresh(rx, 2 * n * groups * compute_size(dt))?;
    let o = out
        .get_mut_device()
        .expect("internal: a fresh storage is shared");
    let s = stats
        .get_mut_device()
        .expect("internal: a fresh storage is shared");
    on_device!(o, rx, |B, o, bx| {
        let arg = |t: &TensorData| (B::buffer(find(&reads, &t.storage)), t.layout.offset());
        let (w, b) = (w.map(arg), b.map(arg));
        let x = (bx, x.layout.offset());
        B::group_norm(o, B::buffer_mut(s), x, w, b, dims, eps, dt)
    });
    Ok((out, stats))
}

/// Backward of [`group_norm`] from the contiguous output gradient `g`, input `x`, statistics
/// and weight ([`NnKernels::group_norm_backward`](crate::backend::NnKernels::group_norm_backward)):
/// fresh storages of the input, weight and bias gradients, each only if `need`ed.
pub(crate) fn group_norm_backward(
    g: &TensorData,
    x: &TensorData,
    stats: &TensorData,
    w: Option<&TensorData>,
    dims: (usize, usize, usize, usize),
    dt: DType,
    need: [bool; 3],
) -> Result<[Option<Storage>; 3]> {
    let (n, c, hxw, _) = dims;
    let mut ss: smallvec::SmallVec<[&Storage; 4]> =
        smallvec::smallvec![&g.storage, &x.storage, &stats.storage];
    ss.extend(w.iter().map(|t| &t.storage));
    let (_, reads) = lock(None, &ss);
    let rg = find(&reads, &g.storage);
    for t in [g, x].into_iter().chain(w) {
        super::assert_inside(find(&reads, &t.storage).len(), &t.layout, dt.size());
    }
    super::assert_inside(
        find(&reads, &stats.storage).len(),
        &stats.layout,
        compute_size(dt),
    );
    let sizes = [n * c * hxw, c, c];
    let mut outs: [Option<Storage>; 3] = [None, None, None];
    for (k, o) in outs.iter_mut().enumerate() {
        if need[k] {
            *o = Some(fresh(rg, sizes[k] * dt.size())?);
        }
    }
    let [ox, ow, ob] = &mut outs;
    let (dx, dw, db) = (dev(ox), dev(ow), dev(ob));
    on_device!(rg, |B, bg| {
        let arg = |t: &TensorData| (B::buffer(find(&reads, &t.storage)), t.layout.offset());
        B::group_norm_backward(
            dx.map(B::buffer_mut),
            dw.map(B::buffer_mut),
            db.map(B::buffer_mut),
            (bg, g.layout.offset()),
            arg(x),
            arg(stats),
            w.map(arg),
            dims,
            dt,
        )
    });
    Ok(outs)
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
        let mut bufs: Vec<&mut <B as Device>::Buffer> = Vec::with_capacity(parts.len());
        bufs.push(b0);
        bufs.extend(rest.iter_mut().map(|(_, g)| B::buffer_mut(g)));
        B::optim_step(&mut bufs, &ranges, dt, step)
    });
    debug_assert!(done, "internal: dtype checked above");
    Ok(())
}
