//! `CpuBuffer`: an owned, 64-byte aligned, always-initialised byte buffer.

use crate::Result;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

const ALIGN: usize = 64;

/// An owned, zero-initialised, 64-byte aligned allocation of `len` bytes.
pub(crate) struct CpuBuffer {
    ptr: NonNull<u8>,
    len: usize,
    cap: usize,
}

// SAFETY: CpuBuffer owns its allocation exclusively (like Vec<u8>); access is synchronised by the
// RwLock in Storage.
unsafe impl Send for CpuBuffer {}
// SAFETY: shared references only allow reads of initialised bytes.
unsafe impl Sync for CpuBuffer {}

fn layout_for(cap: usize, op: &'static str) -> Result<Layout> {
    Layout::from_size_align(cap.max(1), ALIGN).map_err(|_| {
        crate::err!(
            InvalidArgument,
            op,
            "cannot allocate {} bytes: size overflows the address space",
            cap
        )
    })
}

impl CpuBuffer {
    /// A zero-filled buffer of `len` bytes.
    pub(crate) fn zeroed(len: usize) -> Result<CpuBuffer> {
        if len == 0 {
            return Ok(CpuBuffer {
                ptr: NonNull::<[u8; ALIGN]>::dangling().cast(),
                len: 0,
                cap: 0,
            });
        }
        if len > isize::MAX as usize - ALIGN {
            crate::bail!(
                InvalidArgument,
                "alloc",
                "cannot allocate {} bytes: too large",
                len
            );
        }
        let layout = layout_for(len, "alloc")?;
        // SAFETY: layout has non-zero size and valid alignment.
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(p) else {
            crate::bail!(
                InvalidArgument,
                "alloc",
                "out of memory allocating {} bytes",
                len
            );
        };
        Ok(CpuBuffer { ptr, len, cap: len })
    }

    /// A buffer for a kernel output that will be fully overwritten. Zero-filled as well (calloc
    /// is nearly free for fresh pages), so no uninitialised byte is ever observable.
    pub(crate) fn uninit_for_output(len: usize) -> Result<CpuBuffer> {
        Self::zeroed(len)
    }

    pub(crate) fn len(&self) -> usize {
        self.len
    }
    pub(crate) fn as_ptr(&self) -> *const u8 {
        self.ptr.as_ptr()
    }
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr.as_ptr()
    }
    pub(crate) fn as_bytes(&self) -> &[u8] {
        // SAFETY: ptr is valid for len initialised bytes (or dangling with len 0).
        unsafe { std::slice::from_raw_parts(self.ptr.as_ptr(), self.len) }
    }
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.ptr.as_ptr(), self.len) }
    }

    /// Grows to `new_len` bytes, keeping the old bytes and zero-filling the rest.
    pub(crate) fn grow(&mut self, new_len: usize) -> Result<()> {
        if new_len <= self.len {
            return Ok(());
        }
        let mut fresh = CpuBuffer::zeroed(new_len)?;
        fresh.as_bytes_mut()[..self.len].copy_from_slice(self.as_bytes());
        *self = fresh;
        Ok(())
    }
}

impl Drop for CpuBuffer {
    fn drop(&mut self) {
        if self.cap > 0 {
            let layout = Layout::from_size_align(self.cap, ALIGN)
                .expect("internal: layout was valid at allocation");
            // SAFETY: ptr was allocated with exactly this layout by alloc_zeroed.
            unsafe { alloc::dealloc(self.ptr.as_ptr(), layout) };
        }
    }
}
