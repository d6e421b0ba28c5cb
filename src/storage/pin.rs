//! Read pins: a storage read-locked for as long as an outside borrow of its bytes lives (the
//! zero-copy `ndarray` views of `interop::ndarray`). A pin owns a handle to the storage (so the
//! bytes outlive every tensor that used them) and one read lock, taken when the pin is made and
//! released when it drops: writers (kernels, `resize_`, `set_` growth) wait until then, so the
//! borrowed bytes neither change nor move. A write to the pinned storage from the thread holding
//! the pin therefore blocks forever: drop the pin first.

use super::{DeviceBuffer, Storage};
use crate::{Element, Result};
use std::marker::PhantomData;

/// A storage held read-locked (see the module header). Not `Send`: the read lock is released by
/// the thread that took it.
pub(crate) struct ReadPin {
    storage: Storage,
    _not_send: PhantomData<*const ()>,
}

impl ReadPin {
    /// Read-locks `storage` (waiting for a writer in progress) until the pin drops.
    pub(crate) fn new(storage: Storage) -> ReadPin {
        // the guard is forgotten and its lock released in `Drop` (`force_unlock_read`)
        std::mem::forget(storage.0.buf.read_recursive());
        ReadPin {
            storage,
            _not_send: PhantomData,
        }
    }

    /// The pinned bytes as elements of `T` (a trailing partial element is left out). A bool
    /// read checks that every byte is 0 or 1 (`set_storage` may put any byte under a bool
    /// tensor), so the borrow never holds an invalid `bool`; `op` names the caller in that error.
    pub(crate) fn elements<T: Element>(&self, op: &'static str) -> Result<&[T]> {
        // SAFETY: this pin holds a read lock on the buffer from `new` until `drop`, so no writer
        // can mutate or reallocate it while the returned borrow (tied to `&self`) lives.
        let buf = unsafe { &*self.storage.0.buf.data_ptr() };
        let bytes = match buf {
            DeviceBuffer::Cpu(b) => b.as_bytes(),
        };
        if T::DTYPE == crate::DType::Bool && bytes.iter().any(|&b| b > 1) {
            crate::bail!(
                InvalidArgument,
                op,
                "the storage under this bool tensor holds bytes other than 0 and 1"
            );
        }
        let n = bytes.len() / std::mem::size_of::<T>();
        // SAFETY: the buffer is aligned to at least 16 bytes (enough for every Element) and
        // holds `n * size_of::<T>()` initialised bytes; every bit pattern is a valid value of
        // the numeric Element types, and bool bytes were checked above.
        Ok(unsafe { std::slice::from_raw_parts(bytes.as_ptr() as *const T, n) })
    }
}

impl Drop for ReadPin {
    fn drop(&mut self) {
        // SAFETY: `new` took exactly one read lock on this buffer and forgot its guard; this
        // releases that lock once, on the thread that took it (`ReadPin` is not `Send`).
        unsafe { self.storage.0.buf.force_unlock_read() }
    }
}
