//! The scheduler interface ([`LrScheduler`]: `step`, checkpointable state) and the
//! schedulers `StepLR`, `CosineAnnealingLR` with PyTorch's recursive formulas, applied to the
//! lr of every parameter group from its own base lr.

use super::Optimizer;
use super::sched_state::{SchedulerKind, SchedulerState};
use crate::{Result, bail};

/// A scheduler: call [`step`](LrScheduler::step) once per epoch after `optimizer.step()`.
/// It sets the lr of every parameter group (PyTorch keeps one base lr per group).
pub trait LrScheduler {
    /// Advances one epoch and sets the optimizer's learning rates. An error (`OneCycleLr`
    /// stepped past its end, an optimizer whose group count changed) changes nothing.
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()>;
    /// Goes back to epoch 0 and sets the lrs of epoch 0, as `SequentialLr` does when this
    /// scheduler takes over: with `closed_form` from the base lrs (PyTorch's
    /// `_update_lr(0)`), else from the optimizer's current lrs (the recursive `get_lr` of
    /// PyTorch's initial step).
    fn restart(&mut self, opt: &mut dyn Optimizer, closed_form: bool) -> Result<()>;
    /// The scheduler's state (kind with hyper-parameters, `last_epoch`, base lr), PyTorch's
    /// `scheduler.state_dict()`; save it with the optimizer
    /// ([`save_with_scheduler`](super::save_with_scheduler)) so a resumed run continues the
    /// schedule instead of restarting it.
    fn state(&self) -> SchedulerState;
    /// Replaces the state (hyper-parameters included, as PyTorch's `load_state_dict`) by
    /// `state`. A state of another scheduler kind, a zero `step_size`/`t_max` or a cosine state
    /// without a finite base lr is an `InvalidArgument` error and changes nothing. The
    /// optimizer's lr is not touched: it is restored with the optimizer's own state.
    fn load_state(&mut self, state: &SchedulerState) -> Result<()>;
}

/// Largest `last_epoch` a state may carry (the cosine formula works in i64).
const MAX_EPOCH: u64 = 1 << 62;

/// Checks that `lrs` has one value per group of `opt`.
pub(super) fn check_groups(op: &'static str, lrs: &[f64], opt: &dyn Optimizer) -> Result<()> {
    if lrs.len() != opt.num_groups() {
        bail!(
            InvalidArgument,
            op,
            "the scheduler has {} base lrs, the optimizer {} parameter groups",
            lrs.len(),
            opt.num_groups()
        );
    }
    Ok(())
}

/// A finite base lr per group, or the error naming `what`.
pub(super) fn finite_base(
    op: &'static str,
    what: &str,
    state: &SchedulerState,
) -> Result<Vec<f64>> {
    if state.base_lrs.is_empty() || state.base_lrs.iter().any(|b| !b.is_finite()) {
        bail!(
            InvalidArgument,
            op,
            "a {} state needs a finite base lr per group, got {:?}",
            what,
            state.base_lrs
        );
    }
    Ok(state.base_lrs.clone())
}

/// Checks the parts of `state` shared by every kind.
pub(super) fn check_common(op: &'static str, state: &SchedulerState) -> Result<()> {
    if state.last_epoch >= MAX_EPOCH {
        bail!(
            InvalidArgument,
            op,
            "last_epoch must be below 2^62, got {}",
            state.last_epoch
        );
    }
    Ok(())
}

pub(super) fn wrong_kind(op: &'static str, expected: &str, state: &SchedulerState) -> crate::Error {
    crate::err!(
        InvalidArgument,
        op,
        "cannot load a {} state into a {} scheduler",
        state.kind.name(),
        expected
    )
}

/// Multiplies the lr by `gamma` every `step_size` epochs.
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = StepLr::new(2, 0.5);
/// s.step(&mut opt)?;
/// s.step(&mut opt)?;
/// assert!((opt.lr() - 0.05).abs() < 1e-12);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct StepLr {
    step_size: u64,
    gamma: f64,
    epoch: u64,
    base_lrs: Vec<f64>,
}

impl StepLr {
    /// `StepLR(step_size, gamma)`. Its base lrs (PyTorch's `base_lrs`, kept in the
    /// [state](LrScheduler::state) only) are the optimizer's
    /// [`initial_lrs`](Optimizer::initial_lrs) at the first `step`.
    pub fn new(step_size: u64, gamma: f64) -> Self {
        StepLr {
            step_size: step_size.max(1),
            gamma,
            epoch: 0,
            base_lrs: Vec::new(),
        }
    }
}

impl LrScheduler for StepLr {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        if self.base_lrs.is_empty() {
            self.base_lrs = opt.initial_lrs();
        }
        check_groups("StepLr::step", &self.base_lrs, opt)?;
        self.epoch += 1;
        if self.epoch.is_multiple_of(self.step_size) {
            let lrs: Vec<f64> = opt.lrs().iter().map(|lr| lr * self.gamma).collect();
            opt.set_lrs(&lrs)?;
        }
        Ok(())
    }

    fn restart(&mut self, opt: &mut dyn Optimizer, closed_form: bool) -> Result<()> {
        if self.base_lrs.is_empty() {
            self.base_lrs = opt.initial_lrs();
        }
        check_groups("StepLr::restart", &self.base_lrs, opt)?;
        self.epoch = 0;
        if closed_form {
            // base_lr * gamma ** (0 // step_size)
            let lrs: Vec<f64> = self
                .base_lrs
                .iter()
                .map(|b| b * self.gamma.powi(0))
                .collect();
            opt.set_lrs(&lrs)?;
        }
        Ok(())
    }

    /// ```
    /// # use tapegrad::{Tensor, optim::*};
    /// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
    /// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
    /// let mut s = StepLr::new(2, 0.5);
    /// for _ in 0..3 { s.step(&mut opt)?; }
    /// let st = s.state();
    /// assert_eq!(st.kind, SchedulerKind::StepLr { step_size: 2, gamma: 0.5 });
    /// assert_eq!((st.last_epoch, st.base_lrs.clone()), (3, vec![0.1]));
    /// let mut fresh = StepLr::new(1, 0.9);
    /// fresh.load_state(&st)?;
    /// assert_eq!(fresh.state(), st);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::StepLr {
                step_size: self.step_size,
                gamma: self.gamma,
            },
            last_epoch: self.epoch,
            base_lrs: self.base_lrs.clone(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "StepLr::load_state";
        let SchedulerKind::StepLr { step_size, gamma } = state.kind else {
            return Err(wrong_kind(op, "StepLR", state));
        };
        check_common(op, state)?;
        if step_size == 0 {
            bail!(InvalidArgument, op, "step_size must be positive, got 0");
        }
        *self = StepLr {
            step_size,
            gamma,
            epoch: state.last_epoch,
            base_lrs: state.base_lrs.clone(),
        };
        Ok(())
    }
}

/// Cosine annealing from the initial lr to `eta_min` over `t_max` epochs (PyTorch's recursive
/// form, which continues past `t_max`).
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = CosineAnnealingLr::new(&mut opt, 10, 0.0);
/// for _ in 0..10 { s.step(&mut opt)?; }
/// assert!(opt.lr().abs() < 1e-12);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct CosineAnnealingLr {
    t_max: u64,
    eta_min: f64,
    base_lrs: Vec<f64>,
    epoch: u64,
}

impl CosineAnnealingLr {
    /// `CosineAnnealingLR(T_max, eta_min)` from the optimizer's
    /// [`initial_lrs`](Optimizer::initial_lrs) (its lrs unless a scheduler came first).
    pub fn new(opt: &mut dyn Optimizer, t_max: u64, eta_min: f64) -> Self {
        CosineAnnealingLr {
            t_max: t_max.max(1),
            eta_min,
            base_lrs: opt.initial_lrs(),
            epoch: 0,
        }
    }
}

impl LrScheduler for CosineAnnealingLr {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        use std::f64::consts::PI;
        check_groups("CosineAnnealingLr::step", &self.base_lrs, opt)?;
        let epoch = self.epoch + 1;
        let (e, t) = (epoch as f64, self.t_max as f64);
        let restart = (epoch as i64 - 1 - self.t_max as i64).rem_euclid(2 * self.t_max as i64) == 0;
        let lrs: Vec<f64> = opt
            .lrs()
            .iter()
            .zip(&self.base_lrs)
            .map(|(&lr, &base)| {
                if restart {
                    lr + (base - self.eta_min) * (1.0 - (PI / t).cos()) / 2.0
                } else {
                    (1.0 + (PI * e / t).cos()) / (1.0 + (PI * (e - 1.0) / t).cos())
                        * (lr - self.eta_min)
                        + self.eta_min
                }
            })
            .collect();
        opt.set_lrs(&lrs)?;
        self.epoch = epoch;
        Ok(())
    }

    fn restart(&mut self, opt: &mut dyn Optimizer, closed_form: bool) -> Result<()> {
        use std::f64::consts::PI;
        check_groups("CosineAnnealingLr::restart", &self.base_lrs, opt)?;
        self.epoch = 0;
        if closed_form {
            // eta_min + (base_lr - eta_min) * (1 + cos(pi * last_epoch / T_max)) / 2
            let (e, t) = (self.epoch as f64, self.t_max as f64);
            let lrs: Vec<f64> = self
                .base_lrs
                .iter()
                .map(|&b| self.eta_min + (b - self.eta_min) * (1.0 + (PI * e / t).cos()) / 2.0)
                .collect();
            opt.set_lrs(&lrs)?;
        }
        Ok(())
    }

    /// ```
    /// # use tapegrad::{Tensor, optim::*};
    /// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
    /// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
    /// let mut s = CosineAnnealingLr::new(&mut opt, 10, 0.0);
    /// for _ in 0..4 { s.step(&mut opt)?; }
    /// let st = s.state();
    /// assert_eq!((st.last_epoch, st.base_lrs.clone()), (4, vec![0.1]));
    /// // a state of another kind is refused
    /// assert!(StepLr::new(2, 0.5).load_state(&st).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::CosineAnnealingLr {
                t_max: self.t_max,
                eta_min: self.eta_min,
            },
            last_epoch: self.epoch,
            base_lrs: self.base_lrs.clone(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "CosineAnnealingLr::load_state";
        let SchedulerKind::CosineAnnealingLr { t_max, eta_min } = state.kind else {
            return Err(wrong_kind(op, "CosineAnnealingLR", state));
        };
        check_common(op, state)?;
        if t_max == 0 || t_max >= MAX_EPOCH {
            bail!(
                InvalidArgument,
                op,
                "T_max must be in [1, 2^62), got {}",
                t_max
            );
        }
        let base_lrs = finite_base(op, "CosineAnnealingLR", state)?;
        *self = CosineAnnealingLr {
            t_max,
            eta_min,
            base_lrs,
            epoch: state.last_epoch,
        };
        Ok(())
    }
}
