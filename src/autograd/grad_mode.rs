//! Thread-local grad mode and its RAII guards (`no_grad`, `enable_grad`, `set_grad_enabled`).

use std::cell::Cell;

thread_local! {
    static GRAD_ENABLED: Cell<bool> = const { Cell::new(true) };
}

/// True if operations on this thread record autograd graphs.
///
/// ```
/// assert!(tapegrad::autograd::is_grad_enabled());
/// ```
pub fn is_grad_enabled() -> bool {
    GRAD_ENABLED.with(|g| g.get())
}

/// Restores the previous grad mode when dropped.
#[must_use = "grad mode is restored when the guard is dropped"]
pub struct GradModeGuard {
    prev: bool,
}

impl Drop for GradModeGuard {
    fn drop(&mut self) {
        GRAD_ENABLED.with(|g| g.set(self.prev));
    }
}

/// Sets grad mode for the guard's lifetime.
///
/// ```
/// let _g = tapegrad::autograd::set_grad_enabled(false);
/// assert!(!tapegrad::autograd::is_grad_enabled());
/// ```
pub fn set_grad_enabled(enabled: bool) -> GradModeGuard {
    let prev = GRAD_ENABLED.with(|g| g.replace(enabled));
    GradModeGuard { prev }
}

/// Disables recording until the guard drops (`torch.no_grad()`).
///
/// ```
/// {
///     let _g = tapegrad::autograd::no_grad();
///     assert!(!tapegrad::autograd::is_grad_enabled());
/// }
/// assert!(tapegrad::autograd::is_grad_enabled());
/// ```
pub fn no_grad() -> GradModeGuard {
    set_grad_enabled(false)
}

/// Enables recording until the guard drops (`torch.enable_grad()`).
///
/// ```
/// let _g = tapegrad::autograd::enable_grad();
/// assert!(tapegrad::autograd::is_grad_enabled());
/// ```
pub fn enable_grad() -> GradModeGuard {
    set_grad_enabled(true)
}
