//! A size-class cache of freed *large* allocations, so that out-of-place ops on big tensors reuse
//! warm, already-mapped pages instead of paying for fresh ones (page faults plus the kernel's
//! zeroing) on every call — the reason PyTorch's CPU `a + b` runs far below memory bandwidth.
//!
//! Only blocks of at least [`MIN_POOLED`] bytes are cached. Their capacity is rounded up to a size
//! class (four classes per power of two, so at most 25% slack), and a freed block waits in its
//! class until an allocation of the same class takes it. The cache is bounded (bytes and blocks per
//! class); beyond that, blocks go back to the system allocator. A reused block holds stale bytes of
//! a dead tensor: [`super::CpuBuffer`] hands it out only to kernels that overwrite every byte before
//! anything reads it, and zero-fills it for everyone else, so no stale or uninitialised byte is
//! ever observable. [`release_cached_memory`] empties the cache.

use parking_lot::Mutex;
use std::alloc::{self, Layout};
use std::ptr::NonNull;

/// Allocations of at least this many bytes go through the cache.
pub(crate) const MIN_POOLED: usize = 128 * 1024;
/// Upper bound on the bytes held by the cache.
const MAX_CACHED_BYTES: usize = 512 * 1024 * 1024;
/// Upper bound on the blocks held per size class.
const MAX_PER_CLASS: usize = 8;

/// Alignment of tapegrad buffers of at least [`SMALL`] bytes (a cache line; AVX-512 friendly).
pub(crate) const ALIGN: usize = 64;
/// Buffers below this many bytes are 16-byte aligned (enough for every element type), which the
/// system allocator serves on its fast path; over-aligning them costs more than the op itself.
const SMALL: usize = 1024;

/// The alignment of a buffer of `cap` bytes.
pub(crate) fn align_for(cap: usize) -> usize {
    if cap < SMALL { 16 } else { ALIGN }
}

/// A cached block: a live allocation of `cap` bytes with alignment [`ALIGN`], owned by the cache.
struct Block {
    ptr: NonNull<u8>,
    cap: usize,
}

// SAFETY: a Block is an exclusively owned allocation (like Box<[u8]>); moving it between threads
// is sound, and the cache only touches it under its mutex.
unsafe impl Send for Block {}

struct Cache {
    /// (class capacity, blocks of that capacity); few classes are ever live, so a small vector.
    classes: Vec<(usize, Vec<Block>)>,
    bytes: usize,
}

static CACHE: Mutex<Cache> = Mutex::new(Cache {
    classes: Vec::new(),
    bytes: 0,
});

/// The capacity actually allocated for a request of `len` bytes: `len` itself for small requests,
/// else `len` rounded up to the next size class (multiples of a quarter of its power of two).
pub(crate) fn class_capacity(len: usize) -> usize {
    if len < MIN_POOLED {
        return len;
    }
    let quarter = 1usize << (usize::BITS - 1 - len.leading_zeros() - 2);
    len.div_ceil(quarter).saturating_mul(quarter)
}

/// Takes a cached block of exactly `cap` bytes (a class capacity), if one is waiting.
pub(crate) fn take(cap: usize) -> Option<NonNull<u8>> {
    if cap < MIN_POOLED {
        return None;
    }
    let mut c = CACHE.lock();
    let i = c
        .classes
        .iter()
        .position(|(k, v)| *k == cap && !v.is_empty())?;
    let b = c.classes[i].1.pop()?;
    c.bytes -= b.cap;
    Some(b.ptr)
}

/// Gives a block back: kept if it is a pooled class and the cache has room, else freed.
///
/// # Safety
/// `ptr` was allocated by the global allocator with `Layout(cap, align_for(cap))` and is not used
/// again by the caller.
pub(crate) unsafe fn give(ptr: NonNull<u8>, cap: usize) {
    if cap >= MIN_POOLED && class_capacity(cap) == cap {
        let mut c = CACHE.lock();
        if c.bytes + cap <= MAX_CACHED_BYTES {
            let i = match c.classes.iter().position(|(k, _)| *k == cap) {
                Some(i) => i,
                None => {
                    c.classes.push((cap, Vec::new()));
                    c.classes.len() - 1
                }
            };
            if c.classes[i].1.len() < MAX_PER_CLASS {
                c.classes[i].1.push(Block { ptr, cap });
                c.bytes += cap;
                return;
            }
        }
    }
    // SAFETY: forwarded contract (allocated with exactly this layout, not used again).
    unsafe { free(ptr, cap) }
}

/// Returns a block to the system allocator.
///
/// # Safety
/// As for [`give`].
unsafe fn free(ptr: NonNull<u8>, cap: usize) {
    let layout = Layout::from_size_align(cap, align_for(cap))
        .expect("internal: layout was valid at allocation");
    // SAFETY: ptr was allocated with exactly this layout (caller contract).
    unsafe { alloc::dealloc(ptr.as_ptr(), layout) };
}

/// Frees every block held by the allocation cache and returns how many bytes were released.
/// tapegrad keeps up to 512 MiB of freed large buffers for reuse (like PyTorch's caching
/// allocators); call this to give that memory back to the system, e.g. after a large job.
///
/// ```
/// let big = tapegrad::Tensor::ones(&[1 << 20], tapegrad::DType::F32)?;
/// drop(big);
/// let released: usize = tapegrad::release_cached_memory();
/// # let _ = released;
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn release_cached_memory() -> usize {
    let blocks: Vec<Block> = {
        let mut c = CACHE.lock();
        c.bytes = 0;
        c.classes.drain(..).flat_map(|(_, v)| v).collect()
    };
    let mut n = 0;
    for b in blocks {
        n += b.cap;
        // SAFETY: cached blocks were allocated with Layout(cap, ALIGN) (cap >= MIN_POOLED >= SMALL,
        // so align_for(cap) == ALIGN) and are owned by the cache,
        // which no longer lists them.
        unsafe { free(b.ptr, b.cap) };
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn classes_round_up_by_at_most_a_quarter() {
        assert_eq!(class_capacity(100), 100);
        assert_eq!(class_capacity(1 << 24), 1 << 24);
        assert_eq!(class_capacity((1 << 24) + 1), (1 << 24) + (1 << 22));
        for len in [MIN_POOLED, 200_000, 3_000_001, 77_777_777] {
            let c = class_capacity(len);
            assert!(c >= len && c <= len + len / 4, "{len} -> {c}");
            assert_eq!(class_capacity(c), c);
        }
    }
}
