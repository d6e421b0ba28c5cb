//! Learning-rate schedulers (`StepLR`, `CosineAnnealingLR`) with PyTorch's recursive formulas.

use super::Optimizer;

/// A scheduler: call [`step`](LrScheduler::step) once per epoch after `optimizer.step()`.
pub trait LrScheduler {
    /// Advances one epoch and sets the optimizer's learning rate.
    fn step(&mut self, opt: &mut dyn Optimizer);
}

/// Multiplies the lr by `gamma` every `step_size` epochs.
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = StepLr::new(2, 0.5);
/// s.step(&mut opt);
/// s.step(&mut opt);
/// assert!((opt.lr() - 0.05).abs() < 1e-12);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct StepLr {
    step_size: u64,
    gamma: f64,
    epoch: u64,
}

impl StepLr {
    /// `StepLR(step_size, gamma)`.
    pub fn new(step_size: u64, gamma: f64) -> Self {
        StepLr {
            step_size: step_size.max(1),
            gamma,
            epoch: 0,
        }
    }
}

impl LrScheduler for StepLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        self.epoch += 1;
        if self.epoch % self.step_size == 0 {
            opt.set_lr(opt.lr() * self.gamma);
        }
    }
}

/// Cosine annealing from the initial lr to `eta_min` over `t_max` epochs (PyTorch's recursive
/// form, which continues past `t_max`).
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = CosineAnnealingLr::new(&opt, 10, 0.0);
/// for _ in 0..10 { s.step(&mut opt); }
/// assert!(opt.lr().abs() < 1e-12);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct CosineAnnealingLr {
    t_max: u64,
    eta_min: f64,
    base_lr: f64,
    epoch: u64,
}

impl CosineAnnealingLr {
    /// `CosineAnnealingLR(T_max, eta_min)` starting from the optimizer's current lr.
    pub fn new(opt: &dyn Optimizer, t_max: u64, eta_min: f64) -> Self {
        CosineAnnealingLr {
            t_max: t_max.max(1),
            eta_min,
            base_lr: opt.lr(),
            epoch: 0,
        }
    }
}

impl LrScheduler for CosineAnnealingLr {
    fn step(&mut self, opt: &mut dyn Optimizer) {
        use std::f64::consts::PI;
        self.epoch += 1;
        let (e, t, lr) = (self.epoch as f64, self.t_max as f64, opt.lr());
        let new = if (self.epoch as i64 - 1 - self.t_max as i64).rem_euclid(2 * self.t_max as i64)
            == 0
        {
            lr + (self.base_lr - self.eta_min) * (1.0 - (PI / t).cos()) / 2.0
        } else {
            (1.0 + (PI * e / t).cos()) / (1.0 + (PI * (e - 1.0) / t).cos()) * (lr - self.eta_min)
                + self.eta_min
        };
        opt.set_lr(new);
    }
}
