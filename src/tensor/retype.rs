//! In-place dtype change of a tensor object: PyTorch's `param.data = param.data.to(dtype)`, the
//! step behind `Module::to(dtype)`, which keeps the handles an optimizer (or anyone) holds.
//!
//! A tensor's dtype is otherwise fixed, and the backend trusts that a tensor's storage covers
//! its layout at its dtype's element size. [`Tensor::retype_`] keeps that true for every
//! (dtype, storage + layout) pair a reader can observe: it refuses `bool` on either side (the
//! one element type with invalid bit patterns), grows the old storage so the old layout fits at
//! the new element size, and sizes the new storage for the larger of the two.
//!
//! Known limit: an op running on another thread *on the same tensor* while it is converted may
//! read its dtype twice and see both (e.g. allocate its output at the old element size and run
//! the kernel at the new one). That misuse is caught, never undefined: the kernels that check
//! their geometry return an error or panic, and the backend front door asserts that every
//! operand of its unchecked kernels lies inside its buffer at the element size used
//! (`backend::dispatch::assert_inside`), so the race ends in a panic or in values of the
//! wrong dtype. PyTorch's `.data =` has the same race. Convert a module while no other thread
//! uses its tensors.

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
        self.check_strided(op)?;
        // storages are locked only while no tensor lock is held (in-place kernels hold a
        // storage lock and then read their tensor's data: the other order would deadlock)
        loop {
            let old = self.dtype();
            if old == dtype {
                return Ok(());
            }
            if old == DType::Bool || dtype == DType::Bool {
                bail!(
                    Unsupported,
                    op,
                    "cannot convert a {} tensor to {} in place",
                    old,
                    dtype
                );
            }
            let elem = old.size().max(dtype.size());
            let snap = self.data();
            // a reader that took the old storage and layout before the swap may read them as
            // the new dtype: the old storage must hold the old layout at the new element size
            snap.storage
                .grow_to(bytes(snap.layout.storage_span(), elem, op)?, op)?;
            let layout = Layout::new(snap.layout.sizes(), snap.layout.preserved_strides(), 0);
            let storage = Storage::zeroed(bytes(layout.storage_span(), elem, op)?)?;
            // never bool (refused above): this tensor may write any byte into it
            storage.note_reader(false);
            let new = TensorData { storage, layout };
            crate::backend::copy_raw(&new, &snap, dtype, old);
            let mut w = self.0.data.write();
            // a concurrent set_/resize_/retype_ re-pointed the tensor meanwhile: start again
            if !w.storage.same(&snap.storage) || w.layout != snap.layout || self.dtype() != old {
                continue;
            }
            *w = new;
            self.0.dtype.set(dtype);
            break;
        }
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
