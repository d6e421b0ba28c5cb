//! [`RemovableHandle`]: what registering a hook returns (tensor hooks, module forward hooks);
//! `remove()` takes the hook out again (PyTorch's `torch.utils.hooks.RemovableHandle`).

use std::sync::Arc;

static HOOK_IDS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(1);

/// A fresh hook id (process-wide, never reused).
pub(crate) fn next_hook_id() -> u64 {
    HOOK_IDS.fetch_add(1, std::sync::atomic::Ordering::Relaxed)
}

/// Removes the hook it was returned for. Dropping the handle keeps the hook (as in PyTorch):
/// call [`remove`](RemovableHandle::remove) to take it out. Removing twice, or after the tensor
/// or module is gone, does nothing.
///
/// ```
/// # use tapegrad::{Tensor, DType};
/// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
/// let h = x.register_hook(|g| Ok(Some(g.mul(10.0)?)))?;
/// h.remove();
/// x.sum()?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![1.0, 1.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone)]
pub struct RemovableHandle {
    id: u64,
    remove: Arc<dyn Fn(u64) + Send + Sync>,
}

impl RemovableHandle {
    /// A handle for hook `id`; `remove` takes hook `id` out of wherever it is held (and must do
    /// nothing when it is already gone).
    pub(crate) fn new(id: u64, remove: impl Fn(u64) + Send + Sync + 'static) -> RemovableHandle {
        RemovableHandle {
            id,
            remove: Arc::new(remove),
        }
    }

    /// The hook's id (unique in the process).
    pub fn id(&self) -> u64 {
        self.id
    }

    /// Takes the hook out: it no longer runs.
    pub fn remove(&self) {
        (self.remove)(self.id)
    }
}

impl std::fmt::Debug for RemovableHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "RemovableHandle({})", self.id)
    }
}
