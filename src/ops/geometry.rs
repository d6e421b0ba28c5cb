//! Moving gradients between strided geometries of one storage: the scatter behind every
//! non-reshape view backward (`as_strided_backward`) and the base/slice split of CopySlices.
//! [`scatter_geometry`] is the differentiable form (recorded when building a higher-order
//! graph): its adjoint is the same scatter with the geometries swapped.

use super::util::with_raw;
use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, record};
use crate::backend::cpu::copy::{accumulate, copy_cast};
use crate::layout::Layout;
use crate::storage::Storage;
use crate::tensor::TensorData;
use crate::{Result, Tensor, bail, dispatch};

/// [`scatter_to_geometry`] that records its own backward when grad mode is on and a part
/// requires grad (double backward through views, CopySlices and view regeneration).
pub(crate) fn scatter_geometry(parts: &[(&Tensor, &Layout)], base: &Layout) -> Result<Tensor> {
    let out = {
        let _g = crate::autograd::no_grad();
        scatter_to_geometry(parts, base)?
    };
    let inputs: Vec<&Tensor> = parts.iter().map(|p| p.0).collect();
    record(
        &[&out],
        &inputs,
        Vec::new,
        ScatterGeometryBackward {
            base: base.clone(),
            views: parts.iter().map(|p| p.1.clone()).collect(),
        },
    )?;
    Ok(out)
}

/// Backward of [`scatter_geometry`]: part `k` gets `grad` (base geometry) scattered into storage
/// positions and read back with view `k`'s geometry, i.e. the same scatter with roles swapped.
struct ScatterGeometryBackward {
    base: Layout,
    views: Vec<Layout>,
}

impl Backward for ScatterGeometryBackward {
    fn name(&self) -> &'static str {
        "AsStridedScatterBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        self.views
            .iter()
            .enumerate()
            .map(|(k, v)| {
                if ctx.needs(k) {
                    scatter_geometry(&[(&g, &self.base)], v).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect()
    }
}

/// Gradient w.r.t. a tensor of geometry `base` given gradients of views of it (`(grad, view
/// geometry)`): every grad element is added at its storage position, then the base geometry
/// reads the result. Positions outside every view get 0; overlapping views accumulate. When the
/// base geometry itself overlaps (an expanded base), each storage sum is split evenly among the
/// base elements that alias it (PyTorch's `as_strided_backward`), so a later expand backward
/// does not count it once per alias.
pub(crate) fn scatter_to_geometry(parts: &[(&Tensor, &Layout)], base: &Layout) -> Result<Tensor> {
    let dtype = parts[0].0.dtype();
    if base.numel() == 0 {
        // nothing to read back (an empty base may even report overlap through a stride 0,
        // while its span is 0: libFuzzer interp/views finding)
        return Tensor::zeros(base.sizes(), dtype);
    }
    let lo = parts
        .iter()
        .map(|(_, l)| l.offset())
        .chain([base.offset()])
        .min()
        .unwrap_or(0);
    let hi = parts
        .iter()
        .map(|(_, l)| l.storage_span())
        .chain([base.storage_span()])
        .max()
        .unwrap_or(0);
    let span = hi.saturating_sub(lo);
    let flat = Tensor::zeros(&[span], dtype)?;
    let fd = flat.data();
    for (g, l) in parts {
        let gd = g.data();
        let target = TensorData {
            storage: fd.storage.clone(),
            layout: Layout::new(l.sizes(), l.strides(), l.offset() - lo),
        };
        with_raw(&target, l.sizes(), &[&gd], |out, ins| {
            dispatch!(dtype, T => {
                // SAFETY: the target geometry lies inside `flat` (span computed above); grads are
                // fresh tensors that do not alias `flat`.
                unsafe { accumulate::<T>(l.sizes(), out, ins[0], g.dtype()) }
            })
        });
    }
    let fd = if base.has_internal_overlap() {
        let mut count = vec![0.0f64; span];
        for o in base.offsets() {
            count[o - lo] += 1.0;
        }
        let _g = crate::autograd::no_grad();
        let c = Tensor::from_vec(count.into_iter().map(|c| c.max(1.0)).collect(), &[span])?;
        flat.div(&c.to_dtype(dtype)?)?.to_dtype(dtype)?.data()
    } else {
        fd
    };
    let src = TensorData {
        storage: fd.storage.clone(),
        layout: Layout::new(base.sizes(), base.strides(), base.offset() - lo),
    };
    let out = Tensor::zeros(base.sizes(), dtype)?;
    copy_raw(&out.data(), &src, dtype, dtype);
    Ok(out)
}

/// Copies `src` into `dst` (same shape), converting dtypes. Both geometries must be valid.
pub(crate) fn copy_raw(dst: &TensorData, src: &TensorData, ddt: crate::DType, sdt: crate::DType) {
    if dst.layout.numel() == 0 {
        // nothing to copy; an empty geometry may carry any offset (its byte offset can overflow)
        return;
    }
    // same dtype, both contiguous, different storages: one memcpy (the common case in
    // CopySlices, where the per-call bookkeeping of the strided path dominates small copies)
    if ddt == sdt
        && dst.layout.is_contiguous()
        && src.layout.is_contiguous()
        && dst.layout.numel() == src.layout.numel()
        && !dst.storage.same(&src.storage)
    {
        let esz = ddt.size();
        let n = dst.layout.numel() * esz;
        let mut locks = crate::storage::lock_for_write(&dst.storage, &[&src.storage]);
        let (d0, s0) = (dst.layout.offset() * esz, src.layout.offset() * esz);
        // (a geometry outside a storage shrunk by `set_`/`resize_` takes the general path,
        // which checks it element by element)
        if d0 + n <= locks.out_len() && s0 + n <= locks.in_len(&src.storage) {
            let (po, pi) = (locks.out_ptr(), locks.in_ptr(&src.storage));
            // SAFETY: both byte ranges lie inside their locked storages (checked just above)
            // and the storages differ, so the ranges do not overlap.
            unsafe { std::ptr::copy_nonoverlapping(pi.add(s0), po.add(d0), n) };
            return;
        }
    }
    let shape = dst.layout.sizes();
    with_raw(dst, shape, &[src], |out, ins| {
        // SAFETY: both geometries are tensor layouts, which always lie inside their storages.
        unsafe { copy_cast(shape, out, ddt, ins[0], sdt) }
    });
}

/// The tensor over `region` of a gradient buffer CopySlices holds outright (see
/// [`owned_base_grad`]; no autograd). It never leaves CopySlices' non-differentiable step (it is
/// written back or copied out, never saved), so it keeps a version counter of its own.
pub(crate) fn region_of_owned(grad: &mut Tensor, region: Layout) -> Tensor {
    let storage = match std::sync::Arc::get_mut(&mut grad.0) {
        Some(imp) => imp.data.get_mut().storage.clone(),
        None => unreachable!("internal: a CopySlices gradient buffer is shared"),
    };
    Tensor::from_parts(storage, region, grad.dtype())
}

/// `grad` with the base's geometry, held outright (its handle and its storage are nobody
/// else's, so it is written without locks), and the view's geometry inside that buffer. A
/// uniquely owned dense `grad` that already has the base's geometry is reused in place (nobody
/// else can observe it); otherwise it is copied into a fresh buffer.
pub(crate) fn owned_base_grad(
    mut grad: Tensor,
    base: &Layout,
    view: &Layout,
) -> Result<(Tensor, Layout)> {
    if view.offset() < base.offset() {
        bail!(
            Unsupported,
            "CopySlices",
            "view starts before its base in storage"
        );
    }
    let rel = view.offset() - base.offset();
    if let Some(g_off) = reusable_grad_offset(&mut grad, base, view) {
        let region = Layout::new(view.sizes(), view.strides(), g_off + rel);
        return Ok((grad, region));
    }
    let span = base.storage_span().max(view.storage_span()) - base.offset();
    // A dense base geometry covering its whole span is written completely by the copy below.
    let covered = base.is_non_overlapping_and_dense() && span == base.numel();
    let nbytes = span * grad.dtype().size();
    let storage = if covered {
        Storage::for_output(nbytes)?
    } else {
        Storage::zeroed(nbytes)?
    };
    let result = Tensor::from_parts(
        storage,
        Layout::new(base.sizes(), base.strides(), 0),
        grad.dtype(),
    );
    copy_raw(&result.data(), &grad.data(), grad.dtype(), grad.dtype());
    Ok((result, Layout::new(view.sizes(), view.strides(), rel)))
}

/// `grad`'s offset in its storage when CopySlices may write into it: the handle and its
/// storage are held by nobody else, it is dense with exactly the base's sizes and strides, and
/// every element of the view maps onto an element of the base. (Held by nobody else, `grad` is
/// read through an exclusive borrow, without its lock.)
fn reusable_grad_offset(grad: &mut Tensor, base: &Layout, view: &Layout) -> Option<usize> {
    let imp = std::sync::Arc::get_mut(&mut grad.0)?;
    if imp.sparse.is_some() {
        return None;
    }
    let d = imp.data.get_mut();
    let ok = d.storage.ref_count() == 1
        && d.layout.sizes() == base.sizes()
        && d.layout.strides() == base.strides()
        && base.is_non_overlapping_and_dense()
        && view.storage_span() <= base.offset() + base.numel();
    ok.then(|| d.layout.offset())
}

/// Reads `src` (any geometry) into a dense tensor whose strides keep `src`'s memory order.
pub(crate) fn materialize(src: &Tensor, dtype: crate::DType, strides: &[usize]) -> Result<Tensor> {
    src.check_strided("copy")?;
    let out = Tensor::empty_strided(&src.shape(), strides, dtype)?;
    copy_raw(&out.data(), &src.data(), dtype, src.dtype());
    Ok(out)
}
