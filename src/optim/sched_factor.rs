//! Multiplicative-factor schedulers: [`LambdaLr`] (a user function of the epoch) and
//! [`LinearLr`] (a linear ramp of the factor, the usual warm-up), with PyTorch's formulas. As in
//! PyTorch, constructing one already applies the factor of epoch 0 to the optimizer's lr.

use super::Optimizer;
use super::sched::{LrScheduler, check_common, wrong_kind};
use super::sched_state::{SchedulerKind, SchedulerState};
use crate::{Result, bail};

/// lr = base_lr × `lr_lambda(epoch)` (PyTorch's `LambdaLR`). The function is not part of the
/// [state](LrScheduler::state) (PyTorch does not save a plain function either): a resumed run
/// builds the scheduler with the same function and loads `last_epoch` and the base lr.
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = LambdaLr::new(&mut opt, |e| 1.0 / (e as f64 + 1.0));
/// assert_eq!(opt.lr(), 0.1);
/// s.step(&mut opt);
/// assert_eq!(opt.lr(), 0.05);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct LambdaLr {
    lr_lambda: Box<dyn Fn(u64) -> f64 + Send>,
    base_lr: f64,
    epoch: u64,
}

impl LambdaLr {
    /// `LambdaLR(optimizer, lr_lambda)`: the base lr is the optimizer's current lr, which is
    /// set to `base_lr * lr_lambda(0)` at once.
    pub fn new(opt: &mut dyn Optimizer, lr_lambda: impl Fn(u64) -> f64 + Send + 'static) -> Self {
        let base_lr = opt.lr();
        opt.set_lr(base_lr * lr_lambda(0));
        LambdaLr {
            lr_lambda: Box::new(lr_lambda),
            base_lr,
            epoch: 0,
        }
    }
}

impl LrScheduler for LambdaLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        self.epoch += 1;
        opt.set_lr(self.base_lr * (self.lr_lambda)(self.epoch));
    }

    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::LambdaLr,
            last_epoch: self.epoch,
            base_lr: Some(self.base_lr),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "LambdaLr::load_state";
        let SchedulerKind::LambdaLr = state.kind else {
            return Err(wrong_kind(op, "LambdaLR", state));
        };
        check_common(op, state)?;
        let Some(base_lr) = state.base_lr.filter(|b| b.is_finite()) else {
            bail!(
                InvalidArgument,
                op,
                "a LambdaLR state needs a finite base lr, got {:?}",
                state.base_lr
            );
        };
        self.base_lr = base_lr;
        self.epoch = state.last_epoch;
        Ok(())
    }
}

/// Multiplies the lr by a factor going linearly from `start_factor` to `end_factor` over
/// `total_iters` epochs, then constant (PyTorch's `LinearLR`, in its recursive form).
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = LinearLr::new(&mut opt, 0.25, 1.0, 3)?;
/// assert_eq!(opt.lr(), 0.025);
/// for _ in 0..3 { s.step(&mut opt); }
/// assert!((opt.lr() - 0.1).abs() < 1e-15);
/// assert!(LinearLr::new(&mut opt, 0.0, 1.0, 3).is_err());
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct LinearLr {
    start_factor: f64,
    end_factor: f64,
    total_iters: u64,
    base_lr: f64,
    epoch: u64,
}

fn check_linear(op: &'static str, start: f64, end: f64) -> Result<()> {
    if !(start > 0.0 && start <= 1.0) {
        bail!(
            InvalidArgument,
            op,
            "Starting multiplicative factor expected to be greater than 0 and less or equal to 1, got {}",
            start
        );
    }
    if !(0.0..=1.0).contains(&end) {
        bail!(
            InvalidArgument,
            op,
            "Ending multiplicative factor expected to be between 0 and 1, got {}",
            end
        );
    }
    Ok(())
}

impl LinearLr {
    /// `LinearLR(optimizer, start_factor, end_factor, total_iters)` (PyTorch's defaults are
    /// 1/3, 1.0, 5): sets the lr to `lr * start_factor` at once. Refuses `start_factor` outside
    /// `(0, 1]` and `end_factor` outside `[0, 1]`.
    pub fn new(
        opt: &mut dyn Optimizer,
        start_factor: f64,
        end_factor: f64,
        total_iters: u64,
    ) -> Result<Self> {
        check_linear("LinearLr::new", start_factor, end_factor)?;
        let base_lr = opt.lr();
        opt.set_lr(base_lr * start_factor);
        Ok(LinearLr {
            start_factor,
            end_factor,
            total_iters,
            base_lr,
            epoch: 0,
        })
    }
}

impl LrScheduler for LinearLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        self.epoch += 1;
        if self.epoch > self.total_iters {
            return;
        }
        let (s, e) = (self.start_factor, self.end_factor);
        let f = 1.0 + (e - s) / (self.total_iters as f64 * s + (self.epoch - 1) as f64 * (e - s));
        opt.set_lr(opt.lr() * f);
    }

    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::LinearLr {
                start_factor: self.start_factor,
                end_factor: self.end_factor,
                total_iters: self.total_iters,
            },
            last_epoch: self.epoch,
            base_lr: Some(self.base_lr),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "LinearLr::load_state";
        let SchedulerKind::LinearLr {
            start_factor,
            end_factor,
            total_iters,
        } = state.kind
        else {
            return Err(wrong_kind(op, "LinearLR", state));
        };
        check_common(op, state)?;
        check_linear(op, start_factor, end_factor)?;
        let Some(base_lr) = state.base_lr.filter(|b| b.is_finite()) else {
            bail!(
                InvalidArgument,
                op,
                "a LinearLR state needs a finite base lr, got {:?}",
                state.base_lr
            );
        };
        *self = LinearLr {
            start_factor,
            end_factor,
            total_iters,
            base_lr,
            epoch: state.last_epoch,
        };
        Ok(())
    }
}
