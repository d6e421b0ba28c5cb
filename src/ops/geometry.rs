//! Moving gradients between strided geometries of one storage: the scatter behind every
//! non-reshape view backward (`as_strided_backward`) and the base/slice split of CopySlices.
//! [`scatter_geometry`] is the differentiable form (recorded when building a higher-order
//! graph): its adjoint is the same scatter with the geometries swapped.

use super::util::with_raw;
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
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None; self.views.len()]);
        };
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
    let flat = Tensor::zeros(&[hi.saturating_sub(lo)], dtype)?;
    let fd = flat.data();
    for (g, l) in parts {
        let gd = g.data();
        let target = TensorData {
            storage: fd.storage.clone(),
            layout: Layout::new(l.sizes().to_vec(), l.strides().to_vec(), l.offset() - lo),
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
        let mut count = vec![0.0f64; hi.saturating_sub(lo)];
        for o in base.offsets() {
            count[o - lo] += 1.0;
        }
        let _g = crate::autograd::no_grad();
        let c = Tensor::from_vec(count.into_iter().map(|c| c.max(1.0)).collect(), &[hi - lo])?;
        flat.div(&c.to_dtype(dtype)?)?.to_dtype(dtype)?.data()
    } else {
        fd
    };
    let src = TensorData {
        storage: fd.storage.clone(),
        layout: Layout::new(
            base.sizes().to_vec(),
            base.strides().to_vec(),
            base.offset() - lo,
        ),
    };
    let out = Tensor::zeros(base.sizes(), dtype)?;
    copy_raw(&out.data(), &src, dtype, dtype);
    Ok(out)
}

/// Copies `src` into `dst` (same shape), converting dtypes. Both geometries must be valid.
pub(crate) fn copy_raw(dst: &TensorData, src: &TensorData, ddt: crate::DType, sdt: crate::DType) {
    let shape = dst.layout.sizes().to_vec();
    with_raw(dst, &shape, &[src], |out, ins| {
        // SAFETY: both geometries are tensor layouts, which always lie inside their storages.
        unsafe { copy_cast(&shape, out, ddt, ins[0], sdt) }
    });
}

/// CopySlices' first step: `grad` copied into a fresh buffer with the base's geometry, and the
/// alias of that buffer with the view's geometry (no autograd on either).
pub(crate) fn base_and_slice(
    grad: &Tensor,
    base: &Layout,
    view: &Layout,
) -> Result<(Tensor, Tensor)> {
    if view.offset() < base.offset() {
        bail!(
            Unsupported,
            "CopySlices",
            "view starts before its base in storage"
        );
    }
    let span = base.storage_span().max(view.storage_span()) - base.offset();
    let storage = Storage::zeroed(span * grad.dtype().size())?;
    let result = Tensor::from_parts(
        storage.clone(),
        Layout::new(base.sizes().to_vec(), base.strides().to_vec(), 0),
        grad.dtype(),
    );
    copy_raw(&result.data(), &grad.data(), grad.dtype(), grad.dtype());
    let slice = Tensor::from_parts_with_version(
        storage,
        Layout::new(
            view.sizes().to_vec(),
            view.strides().to_vec(),
            view.offset() - base.offset(),
        ),
        grad.dtype(),
        result.0.version.clone(),
    );
    Ok((result, slice))
}

/// Reads `src` (any geometry) into a dense tensor whose strides keep `src`'s memory order.
pub(crate) fn materialize(src: &Tensor, dtype: crate::DType, strides: &[usize]) -> Result<Tensor> {
    src.check_strided("copy")?;
    let out = Tensor::empty_strided(&src.shape(), strides, dtype)?;
    copy_raw(&out.data(), &src.data(), dtype, src.dtype());
    Ok(out)
}
