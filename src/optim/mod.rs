//! Optimizers and learning-rate schedulers with PyTorch's exact update formulas
//! (single-tensor implementations of `torch.optim.SGD`, `Adam`, `AdamW`; `StepLR`,
//! `CosineAnnealingLR`). Updates are fused per-parameter kernels that write the parameters in
//! place and bump their version counters, exactly like PyTorch's in-place updates under
//! `no_grad`: a tensor saved for backward before `step()` is detected as modified afterwards.

mod adam;
mod fused;
mod sched;
mod sgd;

pub use adam::{Adam, AdamConfig};
pub use sched::{CosineAnnealingLr, LrScheduler, StepLr};
pub use sgd::{Sgd, SgdConfig};

use crate::{Result, Tensor};

/// The interface shared by the optimizers.
pub trait Optimizer {
    /// Applies one update to every parameter that has a gradient.
    fn step(&mut self) -> Result<()>;
    /// The parameters, in registration order.
    fn params(&self) -> &[Tensor];
    /// Current learning rate.
    fn lr(&self) -> f64;
    /// Sets the learning rate (schedulers call this).
    fn set_lr(&mut self, lr: f64);
    /// Clears every parameter's gradient (PyTorch's `set_to_none=True`).
    fn zero_grad(&mut self) -> Result<()> {
        for p in self.params() {
            p.set_grad(None)?;
        }
        Ok(())
    }
}
