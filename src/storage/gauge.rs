//! A live-bytes gauge: the bytes held by tensor buffers right now and the highest value since
//! the last reset (PyTorch's `memory_allocated` / `max_memory_allocated`). Counts heap buffers
//! by their allocated capacity (buffers of at most 64 bytes live inside their storage object
//! and are not counted; blocks waiting in the allocation cache are not live). Two relaxed
//! atomic updates per heap allocation and one per free.

use std::sync::atomic::{AtomicUsize, Ordering};

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

/// Counts a new heap buffer of `cap` bytes.
#[inline]
pub(crate) fn add(cap: usize) {
    let now = LIVE.fetch_add(cap, Ordering::Relaxed) + cap;
    if now > PEAK.load(Ordering::Relaxed) {
        PEAK.fetch_max(now, Ordering::Relaxed);
    }
}

/// Counts a freed heap buffer of `cap` bytes.
#[inline]
pub(crate) fn sub(cap: usize) {
    LIVE.fetch_sub(cap, Ordering::Relaxed);
}

/// Bytes held by live tensor buffers in this process (all threads), PyTorch's
/// `memory_allocated`.
///
/// ```
/// let t = tapegrad::Tensor::zeros(&[1 << 16], tapegrad::DType::F32)?; // 256 KiB
/// assert!(tapegrad::memory_allocated() >= 1 << 18);
/// # drop(t);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn memory_allocated() -> usize {
    LIVE.load(Ordering::Relaxed)
}

/// The highest [`memory_allocated`] since the process started or the last
/// [`reset_peak_memory_stats`] (PyTorch's `max_memory_allocated`).
pub fn max_memory_allocated() -> usize {
    PEAK.load(Ordering::Relaxed)
}

/// Restarts [`max_memory_allocated`] from the current [`memory_allocated`].
pub fn reset_peak_memory_stats() {
    PEAK.store(LIVE.load(Ordering::Relaxed), Ordering::Relaxed);
}
