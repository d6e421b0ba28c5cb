//! In-place dtype change of a tensor object: PyTorch's `param.data = param.data.to(dtype)`, the
//! step behind `Module::to(dtype)`, which keeps the handles an optimizer (or anyone) holds.
//!
//! A tensor's dtype is otherwise fixed, and the backend trusts that a tensor's storage covers
//! its layout at its dtype's element size. [`Tensor::retype_`] keeps that true for every
//! (dtype, storage + layout) pair a concurrent reader can observe: it refuses `bool` on either
//! side (the one element type with invalid bit patterns), grows the old storage so the old
//! layout fits at the new element size, and sizes the new storage for the larger of the two.

use super::{Tensor, TensorData};
use crate::layout::Layout;
use crate::storage::Storage;
use crate::{DType, Result, bail};
use std::sync::atomic::{AtomicU8, Ordering};

/// A [`DType`] that [`Tensor::retype_`] may change under a shared handle.
pub(crate) struct AtomicDType(AtomicU8);

impl AtomicDType {
    pub(crate) fn new(d: DType) -> Self {
        AtomicDType(AtomicU8::new(index(d)))
    }
    #[inline]
    pub(crate) fn get(&self) -> DType {
        DType::ALL[self.0.load(Ordering::Acquire) as usize]
    }
    fn set(&self, d: DType) {
        self.0.store(index(d), Ordering::Release)
    }
}

fn index(d: DType) -> u8 {
    DType::ALL
        .iter()
        .position(|&x| x == d)
        .expect("DType::ALL lists every dtype") as u8
}

impl Tensor {
    /// Converts this tensor's values to `dtype` in place, keeping the tensor object: every
    /// handle (an optimizer's, a state dict's) sees the new dtype, as after PyTorch's
    /// `t.data = t.data.to(dtype)`. The version counter and autograd flags are kept; the
    /// gradient accumulator is dropped (a graph recorded before still sends the old dtype).
    /// Views taken before keep the old storage. Strides are preserved as `to_dtype` does.
    ///
    /// `Unsupported` for sparse tensors and for `bool` on either side.
    pub(crate) fn retype_(&self, dtype: DType, op: &'static str) -> Result<()> {
        let old = self.dtype();
        if old == dtype {
            return Ok(());
        }
        self.check_strided(op)?;
        if old == DType::Bool || dtype == DType::Bool {
            bail!(
                Unsupported,
                op,
                "cannot convert a {} tensor to {} in place",
                old,
                dtype
            );
        }
        let mut w = self.0.data.write();
        let elem = old.size().max(dtype.size());
        // a reader that took the old storage and layout before this call may read them as the
        // new dtype: the old storage must hold the old layout at the new element size
        let old_span = w.layout.storage_span();
        w.storage.grow_to(bytes(old_span, elem, op)?, op)?;
        let layout = Layout::new(w.layout.sizes(), w.layout.preserved_strides(), 0);
        let storage = Storage::zeroed(bytes(layout.storage_span(), elem, op)?)?;
        let new = TensorData { storage, layout };
        crate::backend::copy_raw(&new, &w, dtype, old);
        *w = new;
        self.0.dtype.set(dtype);
        drop(w);
        self.0.meta.lock().grad_accumulator = None;
        Ok(())
    }
}

fn bytes(elems: usize, size: usize, op: &'static str) -> Result<usize> {
    match elems.checked_mul(size) {
        Some(b) => Ok(b),
        None => bail!(InvalidArgument, op, "storage size overflows"),
    }
}
