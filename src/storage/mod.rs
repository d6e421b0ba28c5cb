//! Storage: a shared, byte-addressed, aligned (64 bytes; 16 under 1 KiB) buffer with an identity and a `resizable`
//! flag. It knows nothing of shapes, strides, dtypes or autograd.
//!
//! Growing a storage (`resize_`, `set_` past the end) reallocates the buffer *inside* the same
//! storage object, so every tensor aliasing it sees the new bytes (PyTorch's StorageImpl rule).
//! New bytes are always zero-filled or fully overwritten by the kernel that asked for them:
//! tapegrad never exposes uninitialised (or recycled) memory.
//!
//! Devices: the bytes are a [`DeviceBuffer`], an enum with one variant per device (only `Cpu`
//! today). Code outside `backend/` never matches on it: the device kernels are reached through
//! `crate::backend`'s front door, which holds the only match. The one CPU accessor below,
//! [`Storage::write`], hands out the CPU variant's [`CpuBuffer`] to the storage's own
//! constructors.
//!
//! `gauge.rs` counts the bytes of live buffers ([`memory_allocated`], [`max_memory_allocated`]).
//!
//! Locking: the buffer sits behind a `parking_lot::RwLock`. Kernels take read locks on inputs and
//! a write lock on the output, in ascending storage-id order, and read inputs that share the
//! output's storage through the write guard (the front door's lock helpers in
//! `backend/dispatch.rs`), so `x.add_(&x)` never deadlocks.

mod buffer;
mod gauge;
#[cfg(feature = "ndarray")]
mod pin;
mod pool;

pub(crate) use buffer::CpuBuffer;
pub use gauge::{max_memory_allocated, memory_allocated, reset_peak_memory_stats};
#[cfg(feature = "ndarray")]
pub(crate) use pin::ReadPin;
pub use pool::release_cached_memory;

use crate::{Device, Result};
use parking_lot::{MappedRwLockWriteGuard, RwLock, RwLockReadGuard, RwLockWriteGuard};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};

static STORAGE_IDS: crate::ids::IdSource = crate::ids::IdSource::new();
thread_local! {
    static LOCAL_STORAGE_IDS: crate::ids::LocalBlock = const { std::cell::Cell::new((0, 0)) };
}

/// The bytes of a storage, by device. Adding a device adds a variant here, an arm to
/// `crate::backend`'s `on_device!` and a folder beside `backend/cpu/`.
pub(crate) enum DeviceBuffer {
    /// Host memory.
    Cpu(CpuBuffer),
}

impl DeviceBuffer {
    /// Current size in bytes.
    pub(crate) fn len(&self) -> usize {
        match self {
            DeviceBuffer::Cpu(b) => b.len(),
        }
    }
    /// Grows to `nbytes` bytes, keeping the old bytes and zero-filling the rest.
    fn grow(&mut self, nbytes: usize) -> Result<()> {
        match self {
            DeviceBuffer::Cpu(b) => b.grow(nbytes),
        }
    }
    /// The CPU variant's buffer, mutably.
    fn cpu_mut(&mut self) -> &mut CpuBuffer {
        match self {
            DeviceBuffer::Cpu(b) => b,
        }
    }
}

/// A write guard on the CPU variant's buffer (see [`Storage::write`]).
pub(crate) type CpuWrite<'a> = MappedRwLockWriteGuard<'a, CpuBuffer>;

struct StorageInner {
    id: u64,
    device: Device,
    resizable: AtomicBool,
    /// The kinds of tensors ever made over this storage ([`READ_AS_BOOL`], [`READ_AS_OTHER`]):
    /// a bool tensor never shares a storage with a tensor of another dtype, which could write
    /// bytes other than 0 and 1 under it (reading one as `bool` is undefined behaviour).
    readers: AtomicU8,
    buf: RwLock<DeviceBuffer>,
}

/// [`Storage::note_reader`] bit: a bool tensor reads the storage.
const READ_AS_BOOL: u8 = 1;
/// [`Storage::note_reader`] bit: a tensor of another dtype reads (and may write) the storage.
const READ_AS_OTHER: u8 = 2;

/// The reader bit of a tensor (a bool one when `is_bool`).
fn reader_bit(is_bool: bool) -> u8 {
    if is_bool { READ_AS_BOOL } else { READ_AS_OTHER }
}

/// A reference-counted handle to a storage. Cloning the handle aliases the same bytes.
#[derive(Clone)]
pub struct Storage(Arc<StorageInner>);

impl std::fmt::Debug for Storage {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Storage(id={}, nbytes={})", self.id(), self.nbytes())
    }
}

impl Storage {
    /// A new zero-filled, resizable storage of `nbytes` bytes on the CPU.
    pub fn zeroed(nbytes: usize) -> Result<Storage> {
        Ok(Self::from_buffer(CpuBuffer::zeroed(nbytes)?))
    }

    /// A storage of `nbytes` whose contents the caller promises to overwrite completely before any
    /// read (kernel outputs): it may reuse a cached block holding a dead tensor's bytes.
    #[inline]
    pub(crate) fn for_output(nbytes: usize) -> Result<Storage> {
        Ok(Self::from_buffer(CpuBuffer::for_overwrite(nbytes)?))
    }

    /// A storage over a filled CPU buffer (inlined: building the storage in place keeps the
    /// buffer's inline bytes from being moved through an extra copy on every op's output).
    #[inline]
    pub(crate) fn from_buffer(buf: CpuBuffer) -> Storage {
        Storage(Arc::new(StorageInner {
            id: STORAGE_IDS.next(&LOCAL_STORAGE_IDS),
            device: Device::Cpu,
            resizable: AtomicBool::new(true),
            readers: AtomicU8::new(0),
            buf: RwLock::new(DeviceBuffer::Cpu(buf)),
        }))
    }

    /// A storage holding a copy of `data`'s bytes.
    pub fn from_bytes(data: &[u8]) -> Result<Storage> {
        let buf = CpuBuffer::for_overwrite(data.len())?;
        let s = Self::from_buffer(buf);
        s.write().as_bytes_mut().copy_from_slice(data);
        Ok(s)
    }

    /// Records that a tensor (a bool one when `is_bool`) is made over this storage.
    pub(crate) fn note_reader(&self, is_bool: bool) {
        self.0
            .readers
            .fetch_or(reader_bit(is_bool), Ordering::Relaxed);
    }

    /// Records a tensor (a bool one when `is_bool`) set over this storage, if it may be: a bool
    /// tensor only over a storage no tensor of another dtype was made over and whose bytes are
    /// all 0 or 1; a tensor of another dtype only over a storage no bool tensor was made over.
    /// `false`: refused, nothing recorded.
    pub(crate) fn try_admit_reader(&self, is_bool: bool) -> bool {
        let conflict = reader_bit(!is_bool);
        if is_bool {
            let buf = self.read_device();
            let DeviceBuffer::Cpu(b) = &*buf;
            if b.as_bytes().iter().any(|&v| v > 1) {
                return false;
            }
        }
        // atomically with the other setters: once one kind is in, the other is refused (so no
        // tensor of another dtype can have written since the bytes were checked)
        self.0
            .readers
            .fetch_update(Ordering::AcqRel, Ordering::Acquire, |r| {
                (r & conflict == 0).then_some(r | reader_bit(is_bool))
            })
            .is_ok()
    }

    /// Unique identity of this storage object (stable across reallocation by `resize_`).
    pub fn id(&self) -> u64 {
        self.0.id
    }
    /// Current size in bytes.
    pub fn nbytes(&self) -> usize {
        self.0.buf.read_recursive().len()
    }
    /// The device the bytes live on.
    pub fn device(&self) -> Device {
        self.0.device
    }
    /// Whether the storage may grow.
    pub fn resizable(&self) -> bool {
        self.0.resizable.load(Ordering::Relaxed)
    }
    /// Marks the storage (non-)resizable, like storages from external memory in PyTorch.
    pub fn set_resizable(&self, resizable: bool) {
        self.0.resizable.store(resizable, Ordering::Relaxed)
    }
    /// True if both handles point to the same storage object.
    pub fn same(&self, other: &Storage) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }

    /// Grows the buffer in place to at least `nbytes` (zero-filling new bytes), keeping the old
    /// bytes as a prefix. Never shrinks. Errors if the storage is not resizable.
    pub(crate) fn grow_to(&self, nbytes: usize, op: &'static str) -> Result<()> {
        let mut g = self.0.buf.write();
        if g.len() >= nbytes {
            return Ok(());
        }
        if !self.resizable() {
            crate::bail!(
                NotResizable,
                op,
                "Trying to resize storage that is not resizable (storage of {} bytes, {} needed)",
                g.len(),
                nbytes
            );
        }
        g.grow(nbytes)
    }

    /// Read access to the device buffer (the backend front door's accessor).
    pub(crate) fn read_device(&self) -> RwLockReadGuard<'_, DeviceBuffer> {
        self.0.buf.read_recursive()
    }
    /// Write access to the device buffer (the backend front door's accessor).
    pub(crate) fn write_device(&self) -> RwLockWriteGuard<'_, DeviceBuffer> {
        self.0.buf.write()
    }
    /// Write access to the bytes of the CPU variant (the storage's constructors).
    pub(crate) fn write(&self) -> CpuWrite<'_> {
        RwLockWriteGuard::map(self.0.buf.write(), DeviceBuffer::cpu_mut)
    }
}

impl Storage {
    /// A storage holding `data` (element bytes in native order).
    pub(crate) fn from_elements<T: crate::Element>(data: &[T]) -> Result<Storage> {
        let nbytes = std::mem::size_of_val(data);
        let s = Self::from_buffer(CpuBuffer::for_overwrite(nbytes)?);
        {
            let mut g = s.write();
            // SAFETY: the buffer holds exactly nbytes bytes, is at least 16-byte aligned (enough for every
            // Element) and does not overlap `data`; Element types are plain old data.
            unsafe {
                std::ptr::copy_nonoverlapping(data.as_ptr() as *const u8, g.as_mut_ptr(), nbytes)
            };
        }
        Ok(s)
    }
}

/// An empty `Vec` with room for `n` elements, or an error (never an abort) when `n` elements
/// cannot be allocated: the size overflows or the allocator refuses.
pub(crate) fn try_vec<T>(n: usize, op: &'static str) -> Result<Vec<T>> {
    let mut v = Vec::new();
    v.try_reserve_exact(n).map_err(|_| {
        crate::err!(
            InvalidArgument,
            op,
            "cannot allocate {} elements of {} bytes",
            n,
            std::mem::size_of::<T>()
        )
    })?;
    Ok(v)
}

impl Storage {
    /// True if this handle is the only one (plus the caller's temporary) to the storage.
    /// How many `Storage` handles share this buffer (1: only the caller's).
    pub(crate) fn ref_count(&self) -> usize {
        Arc::strong_count(&self.0)
    }

    pub(crate) fn is_unique(&self) -> bool {
        Arc::strong_count(&self.0) <= 2
    }

    /// The device buffer, borrowed exclusively without its lock when this is the only handle.
    pub(crate) fn get_mut_device(&mut self) -> Option<&mut DeviceBuffer> {
        Arc::get_mut(&mut self.0).map(|inner| inner.buf.get_mut())
    }
}
