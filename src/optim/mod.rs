//! Optimizers and learning-rate schedulers with PyTorch's exact update formulas
//! (single-tensor implementations of `torch.optim.SGD`, `Adam`, `AdamW`, PyTorch's CPU
//! default, over parameter groups with per-group options, `group.rs`; `StepLR`,
//! `CosineAnnealingLR` in `sched.rs`, `LambdaLR`, `LinearLR` in `sched_factor.rs`, `OneCycleLR`
//! in `sched_onecycle.rs`, `ReduceLROnPlateau` in `sched_plateau.rs`, `SequentialLR` in
//! `sched_seq.rs`; every scheduler drives the lr of each group from that group's base lr).
//! Updates are fused per-parameter kernels that write the parameters in place and bump their
//! version counters, exactly like PyTorch's in-place updates under `no_grad`: a tensor saved
//! for backward before `step()` is detected as modified afterwards.
//! Optimizer state round-trips through safetensors files ([`save`], [`load_into`]), optionally
//! with a scheduler's state ([`save_with_scheduler`], [`load_with_scheduler`]).
//!
//! Parameter groups with their own options, and a warm-up then cosine schedule:
//!
//! ```
//! # use tapegrad::{Tensor, DType, optim::*};
//! let w = Tensor::zeros(&[4, 3], DType::F32)?.requires_grad_(true)?;
//! let b = Tensor::zeros(&[3], DType::F32)?.requires_grad_(true)?;
//! let mut opt = Sgd::with_groups(
//!     SgdConfig::new(0.1).momentum(0.9),
//!     vec![ParamGroup::new(vec![w]).weight_decay(1e-4), ParamGroup::new(vec![b]).lr(0.01)],
//! )?;
//! let warmup = LinearLr::new(&mut opt, 0.5, 1.0, 2)?;
//! let cosine = CosineAnnealingLr::new(&mut opt, 8, 0.0);
//! let mut sched = SequentialLr::new(&mut opt, vec![Box::new(warmup), Box::new(cosine)], vec![2])?;
//! assert_eq!(opt.lrs(), vec![0.05, 0.005]);
//! for _ in 0..2 {
//!     opt.step()?;
//!     sched.step(&mut opt)?;
//! }
//! assert_eq!(opt.lrs(), vec![0.1, 0.01]); // each group from its own base lr
//! # Ok::<(), tapegrad::Error>(())
//! ```

mod adam;
mod fused;
mod group;
mod sched;
mod sched_factor;
mod sched_onecycle;
mod sched_plateau;
mod sched_seq;
mod sched_state;
mod sgd;
mod state;

pub use adam::{Adam, AdamConfig, AdamW};
pub use group::{Group, ParamGroup};
pub use sched::{CosineAnnealingLr, LrScheduler, StepLr};
pub use sched_factor::{LambdaLr, LinearLr, LrLambda};
pub use sched_onecycle::{OneCycleConfig, OneCycleLr};
pub use sched_plateau::{PlateauConfig, ReduceLrOnPlateau};
pub use sched_seq::SequentialLr;
pub use sched_state::{Anneal, PlateauMode, SchedulerKind, SchedulerState, ThresholdMode};
pub use sgd::{Sgd, SgdConfig};
pub use state::{load_into, load_with_scheduler, save, save_with_scheduler};

use crate::checkpoint::StateDict;
use crate::{Result, Tensor, bail};

/// The interface shared by the optimizers.
pub trait Optimizer {
    /// Applies one update to every parameter that has a gradient.
    fn step(&mut self) -> Result<()>;
    /// The parameters, in registration order.
    fn params(&self) -> &[Tensor];
    /// The learning rate of every parameter group, in group order.
    fn lrs(&self) -> Vec<f64>;
    /// Sets the learning rate of every group (one value per group; another count is an
    /// `InvalidArgument` error and changes nothing). Schedulers call this.
    fn set_lrs(&mut self, lrs: &[f64]) -> Result<()>;
    /// PyTorch's `group.setdefault("initial_lr", group["lr"])` for every group: the lr each
    /// group had when the first scheduler was attached, recorded then and returned from then
    /// on. Schedulers take their base lrs from it, so a second scheduler built after a first
    /// one changed the lr (`LinearLr` then `CosineAnnealingLr` for `SequentialLr`) still
    /// starts from the original lr.
    fn initial_lrs(&mut self) -> Vec<f64>;
    /// The momentum of every group that `OneCycleLr`'s `cycle_momentum` drives: SGD's
    /// `momentum`, Adam's `beta1`; `None` for an optimizer without one.
    fn momentums(&self) -> Option<Vec<f64>> {
        None
    }
    /// Sets the momentum of every group (see [`momentums`](Optimizer::momentums)).
    fn set_momentums(&mut self, m: &[f64]) -> Result<()> {
        bail!(
            InvalidArgument,
            "Optimizer::set_momentums",
            "optimizer must support momentum or beta1 ({} values given)",
            m.len()
        )
    }
    /// The number of parameter groups.
    fn num_groups(&self) -> usize {
        self.lrs().len()
    }
    /// The first group's learning rate (the only one of a single-group optimizer).
    fn lr(&self) -> f64 {
        self.lrs().first().copied().unwrap_or(f64::NAN)
    }
    /// Sets the learning rate of every group to `lr`.
    fn set_lr(&mut self, lr: f64) {
        let n = self.num_groups();
        // one value per group: cannot fail
        let _ = self.set_lrs(&vec![lr; n]);
    }
    /// The per-parameter state and hyper-parameters, PyTorch's `optimizer.state_dict()`
    /// flattened: tensors `state.<i>.<name>` (`momentum_buffer`; `step`, `exp_avg`,
    /// `exp_avg_sq`, `max_exp_avg_sq`; `i` counts the parameters across the groups in order)
    /// sharing storage with the live state, and in the metadata `optimizer`, `num_params`,
    /// `num_groups` and per group `param_groups.<g>.params` (its parameters' indices) and
    /// `param_groups.<g>.<option>` (`lr`, ...).
    fn state_dict(&self) -> Result<StateDict>;
    /// Replaces the state and hyper-parameters by those of `sd` (copied), like PyTorch's
    /// `load_state_dict`. The optimizer kind, parameter count, group count and sizes (PyTorch's
    /// "loaded state dict has a different number of parameter groups", "... contains a
    /// parameter group that doesn't match the size of optimizer's group"), keys, shapes and
    /// dtypes are all checked first: on error nothing has changed.
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()>;
    /// Clears every parameter's gradient (PyTorch's `set_to_none=True`).
    fn zero_grad(&mut self) -> Result<()> {
        for p in self.params() {
            p.set_grad(None)?;
        }
        Ok(())
    }
}
