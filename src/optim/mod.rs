//! Optimizers and learning-rate schedulers with PyTorch's exact update formulas
//! (single-tensor implementations of `torch.optim.SGD`, `Adam`, `AdamW`, PyTorch's CPU
//! default; `StepLR`, `CosineAnnealingLR` in `sched.rs`, `LambdaLR`, `LinearLR` in
//! `sched_factor.rs`). Updates are fused per-parameter kernels that write the parameters in
//! place and bump their version counters, exactly like PyTorch's in-place updates under
//! `no_grad`: a tensor saved for backward before `step()` is detected as modified afterwards.
//! Optimizer state round-trips through safetensors files ([`save`], [`load_into`]), optionally
//! with a scheduler's state ([`save_with_scheduler`], [`load_with_scheduler`]).

mod adam;
mod fused;
mod sched;
mod sched_factor;
mod sched_state;
mod sgd;
mod state;

pub use adam::{Adam, AdamConfig, AdamW};
pub use sched::{CosineAnnealingLr, LrScheduler, StepLr};
pub use sched_factor::{LambdaLr, LinearLr};
pub use sched_state::{SchedulerKind, SchedulerState};
pub use sgd::{Sgd, SgdConfig};
pub use state::{load_into, load_with_scheduler, save, save_with_scheduler};

use crate::checkpoint::StateDict;
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
    /// The per-parameter state and hyper-parameters, PyTorch's `optimizer.state_dict()`
    /// flattened: tensors `state.<i>.<name>` (`momentum_buffer`; `step`, `exp_avg`,
    /// `exp_avg_sq`, `max_exp_avg_sq`) sharing storage with the live state, and the
    /// hyper-parameters (`lr`, ...) plus `optimizer` and `num_params` in the metadata.
    fn state_dict(&self) -> Result<StateDict>;
    /// Replaces the state and hyper-parameters by those of `sd` (copied), like PyTorch's
    /// `load_state_dict`. The optimizer kind, parameter count, keys, shapes and dtypes are all
    /// checked first: on error nothing has changed.
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()>;
    /// Clears every parameter's gradient (PyTorch's `set_to_none=True`).
    fn zero_grad(&mut self) -> Result<()> {
        for p in self.params() {
            p.set_grad(None)?;
        }
        Ok(())
    }
}
