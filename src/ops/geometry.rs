//! Moving gradients between strided geometries of one storage: the scatter behind every
//! non-reshape view backward (`as_strided_backward`) and the base/slice split of CopySlices.

use super::util::with_raw;
use crate::backend::cpu::copy::{Raw, accumulate, copy_cast};
use crate::layout::Layout;
use crate::storage::Storage;
use crate::tensor::TensorData;
use crate::{Result, Tensor, bail, dispatch};

/// Gradient w.r.t. a tensor of geometry `base` given gradients of views of it (`(grad, view
/// geometry)`): every grad element is added at its storage position, then the base geometry
/// reads the result. Positions outside every view get 0; overlapping views accumulate.
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
