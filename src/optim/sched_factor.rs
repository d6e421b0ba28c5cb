//! Multiplicative-factor schedulers: [`LambdaLr`] (a user function of the epoch) and
//! [`LinearLr`] (a linear ramp of the factor, the usual warm-up), with PyTorch's formulas. As in
//! PyTorch, constructing one already applies the factor of epoch 0 to the optimizer's lr.

use super::Optimizer;
use super::sched::{LrScheduler, check_common, check_groups, finite_base, wrong_kind};
use super::sched_state::{SchedulerKind, SchedulerState};
use crate::{Result, bail};

/// A learning-rate factor function of the epoch, as [`LambdaLr::per_group`] takes them.
pub type LrLambda = Box<dyn Fn(u64) -> f64 + Send>;

/// lr = base_lr × `lr_lambda(epoch)` for each group (PyTorch's `LambdaLR`): one function for
/// every group ([`new`](Self::new)) or one per group ([`per_group`](Self::per_group)). The
/// functions are not part of the
/// [state](LrScheduler::state) (PyTorch does not save a plain function either): a resumed run
/// builds the scheduler with the same functions and loads `last_epoch` and the base lrs.
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = LambdaLr::new(&mut opt, |e| 1.0 / (e as f64 + 1.0));
/// assert_eq!(opt.lr(), 0.1);
/// s.step(&mut opt)?;
/// assert_eq!(opt.lr(), 0.05);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct LambdaLr {
    /// One per group, or one for every group.
    lr_lambdas: Vec<LrLambda>,
    base_lrs: Vec<f64>,
    epoch: u64,
}

impl LambdaLr {
    /// `LambdaLR(optimizer, lr_lambda)` with one function for every group: the base lrs are the
    /// optimizer's [`initial_lrs`](Optimizer::initial_lrs); each group's lr is set to
    /// `base_lr * lr_lambda(0)` at once.
    pub fn new(opt: &mut dyn Optimizer, lr_lambda: impl Fn(u64) -> f64 + Send + 'static) -> Self {
        Self::build(opt, vec![Box::new(lr_lambda)])
    }

    /// `LambdaLR(optimizer, [f0, f1, ...])`: one function per parameter group, in group order.
    /// A list whose length is not the number of groups is an `InvalidArgument` error (PyTorch's
    /// `ValueError`), and the optimizer is left unchanged.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, optim::*};
    /// let a = Tensor::zeros(&[1], DType::F64)?.requires_grad_(true)?;
    /// let b = Tensor::zeros(&[1], DType::F64)?.requires_grad_(true)?;
    /// let mut opt = Sgd::with_groups(
    ///     SgdConfig::new(0.1),
    ///     vec![ParamGroup::new(vec![a]), ParamGroup::new(vec![b]).lr(0.2)],
    /// )?;
    /// let fs: Vec<LrLambda> = vec![Box::new(|e| 0.5f64.powi(e as i32)), Box::new(|_| 1.0)];
    /// let mut s = LambdaLr::per_group(&mut opt, fs)?;
    /// s.step(&mut opt)?;
    /// assert_eq!(opt.lrs(), vec![0.05, 0.2]);
    /// assert!(LambdaLr::per_group(&mut opt, vec![Box::new(|_| 1.0)]).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn per_group(opt: &mut dyn Optimizer, lr_lambdas: Vec<LrLambda>) -> Result<Self> {
        let n = opt.num_groups();
        if lr_lambdas.len() != n {
            bail!(
                InvalidArgument,
                "LambdaLr::per_group",
                "Expected {} lr_lambdas, but got {}",
                n,
                lr_lambdas.len()
            );
        }
        Ok(Self::build(opt, lr_lambdas))
    }

    fn build(opt: &mut dyn Optimizer, lr_lambdas: Vec<LrLambda>) -> Self {
        let base_lrs = opt.initial_lrs();
        let new = LambdaLr {
            lr_lambdas,
            base_lrs,
            epoch: 0,
        };
        // one lr per group, read from this optimizer: cannot fail
        let _ = opt.set_lrs(&new.lrs(0));
        new
    }

    fn lrs(&self, epoch: u64) -> Vec<f64> {
        let fs = &self.lr_lambdas;
        let f = |i: usize| &fs[if fs.len() == 1 { 0 } else { i }];
        let bases = self.base_lrs.iter().enumerate();
        bases.map(|(i, b)| b * f(i)(epoch)).collect()
    }

    fn apply(&self, opt: &mut dyn Optimizer, epoch: u64) -> Result<()> {
        check_groups("LambdaLr::step", &self.base_lrs, opt)?;
        opt.set_lrs(&self.lrs(epoch))
    }
}

impl LrScheduler for LambdaLr {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        self.apply(opt, self.epoch + 1)?;
        self.epoch += 1;
        Ok(())
    }

    fn restart(&mut self, opt: &mut dyn Optimizer, _closed_form: bool) -> Result<()> {
        self.apply(opt, 0)?;
        self.epoch = 0;
        Ok(())
    }

    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::LambdaLr,
            last_epoch: self.epoch,
            base_lrs: self.base_lrs.clone(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "LambdaLr::load_state";
        let SchedulerKind::LambdaLr = state.kind else {
            return Err(wrong_kind(op, "LambdaLR", state));
        };
        check_common(op, state)?;
        self.base_lrs = finite_base(op, "LambdaLR", state)?;
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
/// for _ in 0..3 { s.step(&mut opt)?; }
/// assert!((opt.lr() - 0.1).abs() < 1e-15);
/// assert!(LinearLr::new(&mut opt, 0.0, 1.0, 3).is_err());
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct LinearLr {
    start_factor: f64,
    end_factor: f64,
    total_iters: u64,
    base_lrs: Vec<f64>,
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
        let base_lrs = opt.initial_lrs();
        let lrs: Vec<f64> = opt.lrs().iter().map(|lr| lr * start_factor).collect();
        opt.set_lrs(&lrs)?;
        Ok(LinearLr {
            start_factor,
            end_factor,
            total_iters,
            base_lrs,
            epoch: 0,
        })
    }
}

impl LrScheduler for LinearLr {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        check_groups("LinearLr::step", &self.base_lrs, opt)?;
        let epoch = self.epoch + 1;
        if epoch <= self.total_iters {
            let (s, e) = (self.start_factor, self.end_factor);
            let f = 1.0 + (e - s) / (self.total_iters as f64 * s + (epoch - 1) as f64 * (e - s));
            let lrs: Vec<f64> = opt.lrs().iter().map(|lr| lr * f).collect();
            opt.set_lrs(&lrs)?;
        }
        self.epoch = epoch;
        Ok(())
    }

    fn restart(&mut self, opt: &mut dyn Optimizer, closed_form: bool) -> Result<()> {
        check_groups("LinearLr::restart", &self.base_lrs, opt)?;
        let (s, e) = (self.start_factor, self.end_factor);
        let lrs: Vec<f64> = if closed_form {
            if self.total_iters == 0 {
                bail!(
                    InvalidArgument,
                    "LinearLr::restart",
                    "the closed form divides by total_iters, which is 0"
                );
            }
            // base_lr * (start + (end - start) * min(total_iters, last_epoch) / total_iters),
            // at last_epoch 0
            let (k, t) = (0.0f64, self.total_iters as f64);
            self.base_lrs
                .iter()
                .map(|b| b * (s + (e - s) * k / t))
                .collect()
        } else {
            opt.lrs().iter().map(|lr| lr * s).collect()
        };
        opt.set_lrs(&lrs)?;
        self.epoch = 0;
        Ok(())
    }

    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::LinearLr {
                start_factor: self.start_factor,
                end_factor: self.end_factor,
                total_iters: self.total_iters,
            },
            last_epoch: self.epoch,
            base_lrs: self.base_lrs.clone(),
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
        let base_lrs = finite_base(op, "LinearLR", state)?;
        *self = LinearLr {
            start_factor,
            end_factor,
            total_iters,
            base_lrs,
            epoch: state.last_epoch,
        };
        Ok(())
    }
}
