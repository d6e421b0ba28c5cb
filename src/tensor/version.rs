//! The version counter (PyTorch's `VariableVersion`). Shared by a root tensor, all its views at
//! any depth and its `detach()` results; fresh for copies, factories and `unsafe_view`. Every
//! in-place op bumps it exactly once; autograd compares it against the version recorded when a
//! tensor was saved for backward.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// A shared, monotonically increasing counter of in-place modifications.
#[derive(Clone, Debug, Default)]
pub struct VersionCounter(Arc<AtomicU64>);

impl VersionCounter {
    /// A fresh counter at 0.
    pub fn new() -> Self {
        Self::default()
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
