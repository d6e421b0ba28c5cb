//! Process-unique ids (node sequence numbers, storage ids) handed out from per-thread blocks:
//! one shared atomic add per [`BLOCK`] ids instead of one per id (an atomic read-modify-write
//! costs about as much as the rest of recording a small op). Ids are unique across threads and
//! increase within one thread, which is all their users rely on: the backward engine orders the
//! nodes of one thread's graph by sequence number (PyTorch's `sequence_nr` is thread-local too),
//! and storage ids give locks a global order.

use std::cell::Cell;
use std::sync::atomic::{AtomicU64, Ordering};
use std::thread::LocalKey;

/// Ids a thread takes from a source at a time.
pub(crate) const BLOCK: u64 = 1024;

/// A shared source of ids (the first is 1).
pub(crate) struct IdSource(AtomicU64);

/// A thread's current block of a source: (next id, end of block).
pub(crate) type LocalBlock = Cell<(u64, u64)>;

impl IdSource {
    pub(crate) const fn new() -> IdSource {
        IdSource(AtomicU64::new(1))
    }

    /// The next id for this thread, from its block `local` of this source.
    pub(crate) fn next(&self, local: &'static LocalKey<LocalBlock>) -> u64 {
        local.with(|c| {
            let (id, end) = c.get();
            if id < end {
                c.set((id + 1, end));
                return id;
            }
            let start = self.0.fetch_add(BLOCK, Ordering::Relaxed);
            c.set((start + 1, start + BLOCK));
            start
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    static SRC: IdSource = IdSource::new();
    thread_local! {
        static LOCAL: LocalBlock = const { Cell::new((0, 0)) };
    }

    #[test]
    fn unique_across_threads_and_increasing_within_one() {
        let per_thread = 3 * BLOCK as usize + 5;
        let runs: Vec<Vec<u64>> = std::thread::scope(|s| {
            let hs: Vec<_> = (0..4)
                .map(|_| s.spawn(|| (0..per_thread).map(|_| SRC.next(&LOCAL)).collect()))
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        for r in &runs {
            assert!(
                r.windows(2).all(|w| w[0] < w[1]),
                "ids decrease within a thread"
            );
            assert!(r[0] >= 1);
        }
        let mut all: Vec<u64> = runs.concat();
        let n = all.len();
        all.sort_unstable();
        all.dedup();
        assert_eq!(all.len(), n, "an id was handed out twice");
    }
}
