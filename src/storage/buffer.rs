//! `CpuBuffer`: an owned, aligned, always-initialised byte buffer. Tiny ones (a scalar, a loss,
//! a bias) live inline in the buffer itself, without an allocation; large ones are recycled
//! through the allocation cache in `pool`.

use super::pool::{self, ALIGN, align_for};
use crate::Result;
use std::alloc::{self, Layout};
use std::cell::UnsafeCell;
use std::ptr::NonNull;

/// Buffers of at most this many bytes are held inline.
const INLINE: usize = 64;

/// The inline bytes, aligned like a small allocation (enough for every element type).
#[repr(C, align(16))]
struct InlineBytes([u8; INLINE]);

/// An owned buffer of `len` bytes, 64-byte aligned (16 for buffers under 1 KiB), whose bytes are
/// always initialised (zeros, or a kernel's complete output). Up to [`INLINE`] bytes sit inline
/// (`cap == 0`; pointers into them are taken afresh on each access, so moving the buffer is fine
/// as long as no pointer is held across the move — buffers are only moved before they are shared
/// or under their storage's write lock); larger allocations come from and return to [`pool`].
pub(crate) struct CpuBuffer {
    ptr: NonNull<u8>,
    len: usize,
    cap: usize,
    /// (an `UnsafeCell`: kernels write through pointers obtained from shared references to a
    /// write-locked buffer, as they do through `ptr`)
    inline: UnsafeCell<InlineBytes>,
}

// SAFETY: CpuBuffer owns its allocation (or inline bytes) exclusively (like Vec<u8>); access is
// synchronised by the RwLock in Storage.
unsafe impl Send for CpuBuffer {}
// SAFETY: shared references only allow reads of initialised bytes; kernels write through
// pointers taken under the storage's write lock, never concurrently with readers.
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
    /// A zero-filled inline buffer of `len <= INLINE` bytes.
    fn inline(len: usize) -> CpuBuffer {
        CpuBuffer {
            ptr: NonNull::<[u8; ALIGN]>::dangling().cast(),
            len,
            cap: 0,
            inline: UnsafeCell::new(InlineBytes([0; INLINE])),
        }
    }

    fn alloc(len: usize, init: Init) -> Result<CpuBuffer> {
        if len <= INLINE {
            // (zeroing 64 bytes costs less than deciding not to)
            return Ok(Self::inline(len));
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
            return Ok(Self::heap(ptr, len, cap));
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
        Ok(Self::heap(ptr, len, cap))
    }

    fn heap(ptr: NonNull<u8>, len: usize, cap: usize) -> CpuBuffer {
        super::gauge::add(cap);
        CpuBuffer {
            ptr,
            len,
            cap,
            inline: UnsafeCell::new(InlineBytes([0; INLINE])),
        }
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
        self.data_ptr()
    }
    pub(crate) fn as_mut_ptr(&mut self) -> *mut u8 {
        self.data_ptr()
    }
    /// The first byte: the inline bytes, or the allocation.
    fn data_ptr(&self) -> *mut u8 {
        if self.cap == 0 {
            self.inline.get().cast()
        } else {
            self.ptr.as_ptr()
        }
    }
    pub(crate) fn as_bytes(&self) -> &[u8] {
        // SAFETY: data_ptr is valid for len initialised bytes (inline: len <= INLINE, all
        // initialised at creation).
        unsafe { std::slice::from_raw_parts(self.data_ptr(), self.len) }
    }
    pub(crate) fn as_bytes_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, and &mut self guarantees exclusivity.
        unsafe { std::slice::from_raw_parts_mut(self.data_ptr(), self.len) }
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
            super::gauge::sub(self.cap);
            // SAFETY: ptr was allocated (directly or via the pool) with Layout(cap,
            // align_for(cap)) and this buffer is its only owner.
            unsafe { pool::give(self.ptr, self.cap) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_buffers_are_inline_zeroed_aligned_and_survive_moves() {
        for len in [0, 1, 15, 16, 63, 64] {
            let mut b = CpuBuffer::for_overwrite(len).unwrap();
            assert_eq!(b.cap, 0, "{len} bytes should be inline");
            assert_eq!(b.as_ptr() as usize % 16, 0);
            assert!(b.as_bytes().iter().all(|&x| x == 0));
            for (i, x) in b.as_bytes_mut().iter_mut().enumerate() {
                *x = i as u8 + 1;
            }
            let moved = [b];
            let expect: Vec<u8> = (0..len).map(|i| i as u8 + 1).collect();
            assert_eq!(moved[0].as_bytes(), &expect[..]);
        }
        assert!(CpuBuffer::zeroed(65).unwrap().cap >= 65);
    }

    #[test]
    fn growing_an_inline_buffer_keeps_the_prefix_and_zero_fills() {
        let mut b = CpuBuffer::zeroed(8).unwrap();
        b.as_bytes_mut().copy_from_slice(&[7; 8]);
        b.grow(40).unwrap();
        assert_eq!(b.cap, 0);
        b.grow(200).unwrap();
        assert!(b.cap >= 200);
        assert_eq!(&b.as_bytes()[..8], &[7; 8]);
        assert!(b.as_bytes()[8..].iter().all(|&x| x == 0));
        assert_eq!(b.len(), 200);
    }
}
