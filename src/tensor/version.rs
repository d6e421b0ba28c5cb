//! The version counter (PyTorch's `VariableVersion`). Shared by a root tensor, all its views at
//! any depth and its `detach()` results; fresh for copies, factories and `unsafe_view`. Every
//! in-place op bumps it exactly once; autograd compares it against the version recorded when a
//! tensor was saved for backward.
//!
//! Most tensors (every op output) never share their counter, so a tensor starts with its own,
//! inline ([`TensorVersion`]); the shared [`VersionCounter`] is allocated the first time a view,
//! `detach()` or an alias asks for it, and from then on the tensor counts there too.

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

/// A shared, monotonically increasing counter of in-place modifications.
#[derive(Clone, Debug, Default)]
pub struct VersionCounter(Arc<AtomicU64>);

impl VersionCounter {
    /// A fresh counter at 0.
    pub fn new() -> Self {
        Self::default()
    }
    fn starting_at(v: u64) -> Self {
        VersionCounter(Arc::new(AtomicU64::new(v)))
    }
    /// The current version.
    pub fn current(&self) -> u64 {
        self.0.load(Ordering::Acquire)
    }
    /// Increments by one (one in-place op).
    pub fn bump(&self) {
        self.0.fetch_add(1, Ordering::AcqRel);
    }
    /// True if both handles share one counter.
    pub fn same(&self, other: &VersionCounter) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

/// Set in [`TensorVersion::own`] once the count has moved to the shared counter.
const MOVED: u64 = 1 << 63;

/// A tensor's version: its own inline count until the counter is first shared, then the shared
/// [`VersionCounter`]. Moving is race-free: [`Self::share`] sets [`MOVED`] in the same atomic
/// step that reads the count it starts the shared counter at, and a bump that lands after that
/// step sees the flag and counts in the shared counter instead (waiting for it to exist).
#[derive(Debug)]
pub(crate) struct TensorVersion {
    own: AtomicU64,
    /// The counter a tensor made as an alias (a view, `detach()`) counts in from the start.
    /// (Kept apart from `shared`: filling a `OnceLock` at construction goes through its
    /// `Once`, a cost paid by every view.)
    fixed: Option<VersionCounter>,
    shared: OnceLock<VersionCounter>,
}

impl TensorVersion {
    /// A fresh, unshared version 0.
    pub(crate) fn new() -> Self {
        TensorVersion {
            own: AtomicU64::new(0),
            fixed: None,
            shared: OnceLock::new(),
        }
    }

    /// A version counting in `counter` (a view's or alias's: its root's counter).
    pub(crate) fn shared(counter: VersionCounter) -> Self {
        TensorVersion {
            own: AtomicU64::new(MOVED),
            fixed: Some(counter),
            shared: OnceLock::new(),
        }
    }

    /// The shared counter if this tensor counts in one already.
    fn counter(&self) -> Option<&VersionCounter> {
        self.fixed.as_ref().or_else(|| self.shared.get())
    }

    /// The shared counter, created (at the current count) on first use.
    pub(crate) fn share(&self) -> VersionCounter {
        if let Some(c) = &self.fixed {
            return c.clone();
        }
        self.shared
            .get_or_init(|| VersionCounter::starting_at(self.own.fetch_or(MOVED, Ordering::AcqRel)))
            .clone()
    }

    /// The current version.
    pub(crate) fn current(&self) -> u64 {
        if let Some(s) = self.counter() {
            return s.current();
        }
        let v = self.own.load(Ordering::Acquire);
        if v & MOVED == 0 {
            v
        } else {
            self.shared.wait().current()
        }
    }

    /// Increments by one (one in-place op).
    pub(crate) fn bump(&self) {
        if let Some(s) = self.counter() {
            return s.bump();
        }
        if self.own.fetch_add(1, Ordering::AcqRel) & MOVED != 0 {
            // moved meanwhile: the inline count is no longer read; count in the shared one
            self.shared.wait().bump();
        }
    }

    /// True if both versions count in one counter.
    pub(crate) fn same(&self, other: &TensorVersion) -> bool {
        if std::ptr::eq(self, other) {
            return true;
        }
        match (self.counter(), other.counter()) {
            (Some(a), Some(b)) => a.same(b),
            _ => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_count_moves_to_the_shared_counter_without_losing_bumps() {
        let v = TensorVersion::new();
        v.bump();
        v.bump();
        assert_eq!(v.current(), 2);
        let c = v.share();
        assert_eq!((c.current(), v.current()), (2, 2));
        v.bump();
        c.bump();
        assert_eq!((c.current(), v.current()), (4, 4));
        let alias = TensorVersion::shared(v.share());
        assert!(alias.same(&v) && v.same(&alias));
        assert!(!TensorVersion::new().same(&v));
    }

    #[test]
    fn bumps_racing_the_move_all_count() {
        for _ in 0..200 {
            let v = TensorVersion::new();
            let shared = std::thread::scope(|s| {
                let bumper = s.spawn(|| (0..500).for_each(|_| v.bump()));
                let sharer = s.spawn(|| v.share());
                bumper.join().unwrap();
                sharer.join().unwrap()
            });
            assert_eq!(shared.current(), 500);
            assert_eq!(v.current(), 500);
        }
    }
}
