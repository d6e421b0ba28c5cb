//! `CpuBuffer`: an owned, aligned, always-initialised byte buffer (large ones recycled
//! through the allocation cache in `pool`).

use super::pool::{self, ALIGN, align_for};
use crate::Result;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// An owned allocation of `len` bytes, 64-byte aligned (16 for buffers under 1 KiB), whose bytes
/// are always initialised (zeros, or a kernel's complete output). Large allocations come from and
/// return to [`pool`].
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
    Layout::from_size_align(cap.max(1), align_for(cap)).map_err(|_| {
        crate::err!(
            InvalidArgument,
            op,
            "cannot allocate {} bytes: size overflows the address space",
            cap
        )
    })
}

/// How a new buffer's bytes start out.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Init {
    Zero,
    /// The caller overwrites every byte before any read (a reused block may hold stale bytes).
    Overwritten,
}

impl CpuBuffer {
    fn empty() -> CpuBuffer {
        CpuBuffer {
            ptr: NonNull::<[u8; ALIGN]>::dangling().cast(),
            len: 0,
            cap: 0,
        }
    }

    fn alloc(len: usize, init: Init) -> Result<CpuBuffer> {
        if len == 0 {
            return Ok(Self::empty());
        }
        if len > isize::MAX as usize - ALIGN {
            crate::bail!(
                InvalidArgument,
                "alloc",
                "cannot allocate {} bytes: too large",
                len
            );
        }
        let cap = pool::class_capacity(len);
        if let Some(ptr) = pool::take(cap) {
            if init == Init::Zero {
                // SAFETY: the cached block is a live allocation of `cap >= len` bytes owned by us.
                unsafe { std::ptr::write_bytes(ptr.as_ptr(), 0, len) };
            }
            return Ok(CpuBuffer { ptr, len, cap });
        }
        let layout = layout_for(cap, "alloc")?;
        // SAFETY: layout has non-zero size and valid alignment. Fresh blocks are always zeroed
        // (calloc of fresh pages costs nothing until they are touched).
        let p = unsafe { alloc::alloc_zeroed(layout) };
        let Some(ptr) = NonNull::new(p) else {
            crate::bail!(
                InvalidArgument,
                "alloc",
                "out of memory allocating {} bytes",
                len
            );
        };
        Ok(CpuBuffer { ptr, len, cap })
    }

    /// A zero-filled buffer of `len` bytes.
    pub(crate) fn zeroed(len: usize) -> Result<CpuBuffer> {
        Self::alloc(len, Init::Zero)
    }

    /// A buffer for a kernel output: the caller promises to overwrite all `len` bytes before any
    /// of them is read. It may be a reused block holding a dead tensor's bytes (never
    /// uninitialised memory), which is what makes out-of-place ops on large tensors cheap.
    pub(crate) fn for_overwrite(len: usize) -> Result<CpuBuffer> {
        Self::alloc(len, Init::Overwritten)
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
            // SAFETY: ptr was allocated (directly or via the pool) with Layout(cap,
            // align_for(cap)) and this buffer is its only owner.
            unsafe { pool::give(self.ptr, self.cap) };
        }
    }
}
