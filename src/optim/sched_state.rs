//! Learning-rate scheduler state: [`SchedulerState`] (kind and hyper-parameters, `last_epoch`,
//! base lr, PyTorch's `scheduler.state_dict()`) and its encoding as `scheduler.*` metadata
//! entries of an optimizer checkpoint.

use crate::checkpoint::StateDict;
use crate::{Result, bail};

/// Metadata key naming the scheduler in a checkpoint (PyTorch's class name).
const KIND: &str = "scheduler";

/// Which scheduler a [`SchedulerState`] belongs to, with its hyper-parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SchedulerKind {
    /// [`StepLr`](super::StepLr): `StepLR(step_size, gamma)`.
    StepLr {
        /// Epochs between decays.
        step_size: u64,
        /// Decay factor.
        gamma: f64,
    },
    /// [`CosineAnnealingLr`](super::CosineAnnealingLr): `CosineAnnealingLR(T_max, eta_min)`.
    CosineAnnealingLr {
        /// Half period in epochs (`T_max`).
        t_max: u64,
        /// Minimum lr.
        eta_min: f64,
    },
    /// [`LambdaLr`](super::LambdaLr): `LambdaLR(lr_lambda)` (the function is not saved).
    LambdaLr,
    /// [`LinearLr`](super::LinearLr): `LinearLR(start_factor, end_factor, total_iters)`.
    LinearLr {
        /// Factor at epoch 0.
        start_factor: f64,
        /// Factor from `total_iters` on.
        end_factor: f64,
        /// Epochs of the ramp.
        total_iters: u64,
    },
}

impl SchedulerKind {
    /// PyTorch's class name: `"StepLR"`, `"CosineAnnealingLR"`, `"LambdaLR"`, `"LinearLR"`.
    ///
    /// ```
    /// # use tapegrad::optim::SchedulerKind;
    /// assert_eq!(SchedulerKind::StepLr { step_size: 3, gamma: 0.1 }.name(), "StepLR");
    /// ```
    pub fn name(&self) -> &'static str {
        match self {
            SchedulerKind::StepLr { .. } => "StepLR",
            SchedulerKind::CosineAnnealingLr { .. } => "CosineAnnealingLR",
            SchedulerKind::LambdaLr => "LambdaLR",
            SchedulerKind::LinearLr { .. } => "LinearLR",
        }
    }
}

/// The state of a learning-rate scheduler, what PyTorch's `scheduler.state_dict()` holds for
/// one parameter group: the kind with its hyper-parameters, `last_epoch` (the number of
/// `step` calls) and the base lr. Together with the optimizer's state (which holds the current
/// lr) it lets a resumed run continue the schedule exactly.
///
/// ```
/// # use tapegrad::{Tensor, checkpoint::StateDict, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = CosineAnnealingLr::new(&opt, 5, 0.0);
/// s.step(&mut opt);
/// let mut sd = StateDict::new();
/// s.state().insert_into(&mut sd);
/// assert_eq!(sd.metadata("scheduler"), Some("CosineAnnealingLR"));
/// assert_eq!(SchedulerState::from_state_dict(&sd)?, s.state());
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SchedulerState {
    /// The scheduler kind and its hyper-parameters.
    pub kind: SchedulerKind,
    /// PyTorch's `last_epoch`: how many times `step` was called.
    pub last_epoch: u64,
    /// PyTorch's `base_lrs[0]`: the lr the schedule started from. `CosineAnnealingLr` takes it
    /// from the optimizer at construction; `StepLr` (whose formula does not use it) records the
    /// optimizer's lr at its first `step`, so it is `None` before.
    pub base_lr: Option<f64>,
}

impl SchedulerState {
    /// Writes the state as metadata entries of `sd` (meant for a state dict without scheduler
    /// entries, such as an optimizer's `state_dict()`):
    /// `scheduler` (the kind's [name](SchedulerKind::name)), `scheduler.last_epoch`,
    /// `scheduler.base_lr` (when known) and the hyper-parameters under PyTorch's names
    /// (`scheduler.step_size`, `scheduler.gamma`; `scheduler.T_max`, `scheduler.eta_min`;
    /// `scheduler.start_factor`, `scheduler.end_factor`, `scheduler.total_iters`).
    /// Floats are written in Rust's shortest round-trip form, so they read back exactly.
    ///
    /// ```
    /// # use tapegrad::{checkpoint::StateDict, optim::*};
    /// let st = SchedulerState {
    ///     kind: SchedulerKind::StepLr { step_size: 4, gamma: 0.5 },
    ///     last_epoch: 7,
    ///     base_lr: Some(0.1),
    /// };
    /// let mut sd = StateDict::new();
    /// st.insert_into(&mut sd);
    /// assert_eq!(sd.metadata("scheduler.last_epoch"), Some("7"));
    /// assert_eq!(sd.metadata("scheduler.gamma"), Some("0.5"));
    /// ```
    pub fn insert_into(&self, sd: &mut StateDict) {
        sd.set_metadata(KIND, self.kind.name());
        sd.set_metadata("scheduler.last_epoch", self.last_epoch.to_string());
        if let Some(b) = self.base_lr {
            sd.set_metadata("scheduler.base_lr", b.to_string());
        }
        match self.kind {
            SchedulerKind::StepLr { step_size, gamma } => {
                sd.set_metadata("scheduler.step_size", step_size.to_string());
                sd.set_metadata("scheduler.gamma", gamma.to_string());
            }
            SchedulerKind::CosineAnnealingLr { t_max, eta_min } => {
                sd.set_metadata("scheduler.T_max", t_max.to_string());
                sd.set_metadata("scheduler.eta_min", eta_min.to_string());
            }
            SchedulerKind::LambdaLr => {}
            SchedulerKind::LinearLr {
                start_factor,
                end_factor,
                total_iters,
            } => {
                sd.set_metadata("scheduler.start_factor", start_factor.to_string());
                sd.set_metadata("scheduler.end_factor", end_factor.to_string());
                sd.set_metadata("scheduler.total_iters", total_iters.to_string());
            }
        }
    }

    /// Reads the state written by [`insert_into`](SchedulerState::insert_into). A checkpoint
    /// without scheduler entries, an unknown kind, or a missing or unparsable entry is an
    /// `InvalidArgument` error.
    ///
    /// ```
    /// # use tapegrad::{ErrorKind, checkpoint::StateDict, optim::SchedulerState};
    /// let e = SchedulerState::from_state_dict(&StateDict::new()).unwrap_err();
    /// assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    /// ```
    pub fn from_state_dict(sd: &StateDict) -> Result<SchedulerState> {
        let op = "SchedulerState::from_state_dict";
        let kind = match sd.metadata(KIND) {
            Some("StepLR") => SchedulerKind::StepLr {
                step_size: sd.parse_meta("scheduler.step_size", op)?,
                gamma: sd.parse_meta("scheduler.gamma", op)?,
            },
            Some("CosineAnnealingLR") => SchedulerKind::CosineAnnealingLr {
                t_max: sd.parse_meta("scheduler.T_max", op)?,
                eta_min: sd.parse_meta("scheduler.eta_min", op)?,
            },
            Some("LambdaLR") => SchedulerKind::LambdaLr,
            Some("LinearLR") => SchedulerKind::LinearLr {
                start_factor: sd.parse_meta("scheduler.start_factor", op)?,
                end_factor: sd.parse_meta("scheduler.end_factor", op)?,
                total_iters: sd.parse_meta("scheduler.total_iters", op)?,
            },
            Some(other) => bail!(
                InvalidArgument,
                op,
                "unknown scheduler \"{}\" in checkpoint, expected StepLR, CosineAnnealingLR, \
                 LambdaLR or LinearLR",
                other
            ),
            None => bail!(
                InvalidArgument,
                op,
                "the checkpoint holds no learning-rate scheduler state (no \"{}\" metadata entry)",
                KIND
            ),
        };
        let base_lr = match sd.metadata("scheduler.base_lr") {
            Some(_) => Some(sd.parse_meta("scheduler.base_lr", op)?),
            None => None,
        };
        Ok(SchedulerState {
            kind,
            last_epoch: sd.parse_meta("scheduler.last_epoch", op)?,
            base_lr,
        })
    }
}
