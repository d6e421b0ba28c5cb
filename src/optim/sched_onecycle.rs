//! [`OneCycleLr`]: PyTorch's `OneCycleLR` (the 1cycle policy): the lr of each group rises from
//! `max_lr / div_factor` to `max_lr` and anneals down to `initial_lr / final_div_factor` (two
//! or three phases, cosine or linear), with the momentum (SGD) or beta1 (Adam) cycling the
//! other way. The lr is a closed form of the step count, so stepping past `total_steps` is
//! refused.

use super::Optimizer;
use super::sched::{LrScheduler, check_common, check_groups, finite_base, wrong_kind};
use super::sched_state::{Anneal, SchedulerKind, SchedulerState};
use crate::{Result, bail};

/// Options of [`OneCycleLr`] (PyTorch's defaults from [`OneCycleConfig::new`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct OneCycleConfig {
    /// Peak lr: one value for every group, or one per group.
    pub max_lrs: Vec<f64>,
    /// Steps of the cycle; or give `epochs` and `steps_per_epoch`.
    pub total_steps: Option<u64>,
    /// Epochs (with `steps_per_epoch`, when `total_steps` is `None`).
    pub epochs: Option<u64>,
    /// Steps per epoch (with `epochs`).
    pub steps_per_epoch: Option<u64>,
    /// Fraction of the cycle spent increasing the lr (0.3).
    pub pct_start: f64,
    /// Annealing function (cosine).
    pub anneal: Anneal,
    /// Cycle the momentum / beta1 inversely to the lr (true).
    pub cycle_momentum: bool,
    /// Lowest momentum (0.85): one value for every group, or one per group.
    pub base_momentums: Vec<f64>,
    /// Highest momentum (0.95): one value for every group, or one per group.
    pub max_momentums: Vec<f64>,
    /// `initial_lr = max_lr / div_factor` (25).
    pub div_factor: f64,
    /// `min_lr = initial_lr / final_div_factor` (1e4).
    pub final_div_factor: f64,
    /// Three phases instead of two (false).
    pub three_phase: bool,
}

impl OneCycleConfig {
    /// `OneCycleLR(max_lr=max_lr, total_steps=total_steps)` with PyTorch's other defaults.
    pub fn new(max_lr: f64, total_steps: u64) -> Self {
        OneCycleConfig {
            max_lrs: vec![max_lr],
            total_steps: Some(total_steps),
            epochs: None,
            steps_per_epoch: None,
            pct_start: 0.3,
            anneal: Anneal::Cos,
            cycle_momentum: true,
            base_momentums: vec![0.85],
            max_momentums: vec![0.95],
            div_factor: 25.0,
            final_div_factor: 1e4,
            three_phase: false,
        }
    }
}

/// PyTorch's `OneCycleLR`.
///
/// ```
/// # use tapegrad::{Tensor, DType, optim::*};
/// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w], SgdConfig::new(0.1).momentum(0.9))?;
/// let mut s = OneCycleLr::new(&mut opt, OneCycleConfig::new(1.0, 10))?;
/// assert!((opt.lr() - 1.0 / 25.0).abs() < 1e-15); // max_lr / div_factor, by the cosine
/// assert_eq!(opt.momentums(), Some(vec![0.95]));
/// for _ in 0..10 { s.step(&mut opt)?; }
/// assert!(s.step(&mut opt).is_err()); // an 11th step is past the end
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct OneCycleLr {
    cfg: OneCycleConfig,
    total_steps: u64,
    /// Per group (as are the momenta: `[max, base]` of each group).
    max_lrs: Vec<f64>,
    momenta: Vec<[f64; 2]>,
    epoch: u64,
}

/// One phase: end step and (start, end) of lr and momentum, as indices into
/// `[initial_lr, max_lr, min_lr]` and `[max_momentum, base_momentum]`.
struct Phase {
    end: f64,
    lr: (usize, usize),
    mom: (usize, usize),
}

impl OneCycleLr {
    /// `OneCycleLR(optimizer, ...)`: checks the options with PyTorch's messages, sets each
    /// group's momentum (or beta1) to `max_momentum` when cycling it, and sets the lrs (and
    /// momenta) of step 0.
    pub fn new(opt: &mut dyn Optimizer, cfg: OneCycleConfig) -> Result<Self> {
        let op = "OneCycleLr::new";
        let total_steps = match (cfg.total_steps, cfg.epochs, cfg.steps_per_epoch) {
            (Some(t), _, _) => {
                if t == 0 {
                    bail!(
                        InvalidArgument,
                        op,
                        "Expected positive integer total_steps, but got {}",
                        t
                    );
                }
                t
            }
            (None, Some(e), Some(s)) => {
                if e == 0 {
                    bail!(
                        InvalidArgument,
                        op,
                        "Expected positive integer epochs, but got {}",
                        e
                    );
                }
                if s == 0 {
                    bail!(
                        InvalidArgument,
                        op,
                        "Expected positive integer steps_per_epoch, but got {}",
                        s
                    );
                }
                e.checked_mul(s).ok_or_else(|| {
                    crate::err!(InvalidArgument, op, "epochs * steps_per_epoch overflows")
                })?
            }
            _ => bail!(
                InvalidArgument,
                op,
                "You must define either total_steps OR (epochs AND steps_per_epoch)"
            ),
        };
        let n = opt.num_groups();
        let max_lrs = resolve(op, "max_lr", &cfg.max_lrs, n)?;
        let max_m = resolve(op, "max_momentum", &cfg.max_momentums, n)?;
        let base_m = resolve(op, "base_momentum", &cfg.base_momentums, n)?;
        let new = OneCycleLr {
            total_steps,
            max_lrs,
            momenta: max_m.into_iter().zip(base_m).map(|(a, b)| [a, b]).collect(),
            epoch: 0,
            cfg,
        };
        new.check(op)?;
        if new.cfg.cycle_momentum {
            if opt.momentums().is_none() {
                bail!(
                    InvalidArgument,
                    op,
                    "optimizer must support momentum or beta1 with `cycle_momentum` option enabled"
                );
            }
            let max_m: Vec<f64> = new.momenta.iter().map(|m| m[0]).collect();
            opt.set_momentums(&max_m)?;
        }
        new.apply(opt, 0)?;
        Ok(new)
    }

    fn check(&self, op: &'static str) -> Result<()> {
        let p = self.cfg.pct_start;
        if !(0.0..=1.0).contains(&p) {
            bail!(
                InvalidArgument,
                op,
                "Expected float between 0 and 1 pct_start, but got {}",
                p
            );
        }
        if self.max_lrs.is_empty() || self.max_lrs.len() > 1 << 20 {
            bail!(InvalidArgument, op, "expected at least one max_lr");
        }
        if self.momenta.len() != self.max_lrs.len() {
            bail!(
                InvalidArgument,
                op,
                "expected {} values for base_momentum and max_momentum, got {}",
                self.max_lrs.len(),
                self.momenta.len()
            );
        }
        Ok(())
    }

    fn phases(&self) -> Vec<Phase> {
        let (p, t) = (self.cfg.pct_start, self.total_steps as f64);
        let last = (self.total_steps - 1) as f64;
        // lr indices: 0 initial, 1 max, 2 min; momentum: 0 max, 1 base
        if self.cfg.three_phase {
            vec![
                Phase {
                    end: p * t - 1.0,
                    lr: (0, 1),
                    mom: (0, 1),
                },
                Phase {
                    end: 2.0 * p * t - 2.0,
                    lr: (1, 0),
                    mom: (1, 0),
                },
                Phase {
                    end: last,
                    lr: (0, 2),
                    mom: (0, 0),
                },
            ]
        } else {
            vec![
                Phase {
                    end: p * t - 1.0,
                    lr: (0, 1),
                    mom: (0, 1),
                },
                Phase {
                    end: last,
                    lr: (1, 2),
                    mom: (1, 0),
                },
            ]
        }
    }

    fn anneal(&self, start: f64, end: f64, pct: f64) -> f64 {
        match self.cfg.anneal {
            Anneal::Cos => end + (start - end) / 2.0 * ((std::f64::consts::PI * pct).cos() + 1.0),
            Anneal::Linear => (end - start) * pct + start,
        }
    }

    /// PyTorch's `get_lr` at `step` (and the momentum it sets), applied to the optimizer.
    fn apply(&self, opt: &mut dyn Optimizer, step: u64) -> Result<()> {
        check_groups("OneCycleLr::step", &self.max_lrs, opt)?;
        if step > self.total_steps {
            bail!(
                InvalidArgument,
                "OneCycleLr::step",
                "Tried to step {} times. The specified number of total steps is {}",
                step,
                self.total_steps
            );
        }
        let phases = self.phases();
        let (mut lrs, mut ms) = (Vec::new(), Vec::new());
        for (&max_lr, moms) in self.max_lrs.iter().zip(&self.momenta) {
            let initial = max_lr / self.cfg.div_factor;
            let vals = [initial, max_lr, initial / self.cfg.final_div_factor];
            let mut start = 0.0;
            for (i, ph) in phases.iter().enumerate() {
                if step as f64 <= ph.end || i == phases.len() - 1 {
                    let pct = (step as f64 - start) / (ph.end - start);
                    lrs.push(self.anneal(vals[ph.lr.0], vals[ph.lr.1], pct));
                    ms.push(self.anneal(moms[ph.mom.0], moms[ph.mom.1], pct));
                    break;
                }
                start = ph.end;
            }
        }
        if self.cfg.cycle_momentum {
            opt.set_momentums(&ms)?;
        }
        opt.set_lrs(&lrs)
    }
}

/// One value per group of `n` from one value or a list (PyTorch's `_format_param`).
fn resolve(op: &'static str, name: &str, v: &[f64], n: usize) -> Result<Vec<f64>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        m if m == n => Ok(v.to_vec()),
        m => bail!(
            InvalidArgument,
            op,
            "{} must have the same length as optimizer.param_groups. {} has {} values, param_groups has {}.",
            name,
            name,
            m,
            n
        ),
    }
}

impl LrScheduler for OneCycleLr {
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

    /// ```
    /// # use tapegrad::{Tensor, DType, optim::*};
    /// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
    /// let mut opt = Adam::new(vec![w.clone()], AdamConfig::adam(0.1))?;
    /// let mut s = OneCycleLr::new(&mut opt, OneCycleConfig::new(1.0, 20))?;
    /// for _ in 0..7 { s.step(&mut opt)?; }
    /// let mut opt2 = Adam::new(vec![w], AdamConfig::adam(0.1))?;
    /// let mut s2 = OneCycleLr::new(&mut opt2, OneCycleConfig::new(0.5, 5))?;
    /// s2.load_state(&s.state())?;
    /// opt2.set_lrs(&opt.lrs())?;
    /// s.step(&mut opt)?;
    /// s2.step(&mut opt2)?;
    /// assert_eq!(opt2.lrs(), opt.lrs());
    /// assert_eq!(opt2.momentums(), opt.momentums());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    fn state(&self) -> SchedulerState {
        let c = &self.cfg;
        SchedulerState {
            kind: SchedulerKind::OneCycleLr {
                total_steps: self.total_steps,
                max_lrs: self.max_lrs.clone(),
                pct_start: c.pct_start,
                anneal: c.anneal,
                cycle_momentum: c.cycle_momentum,
                base_momentums: self.momenta.iter().map(|m| m[1]).collect(),
                max_momentums: self.momenta.iter().map(|m| m[0]).collect(),
                div_factor: c.div_factor,
                final_div_factor: c.final_div_factor,
                three_phase: c.three_phase,
            },
            last_epoch: self.epoch,
            base_lrs: self.max_lrs.iter().map(|m| m / c.div_factor).collect(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "OneCycleLr::load_state";
        let SchedulerKind::OneCycleLr {
            total_steps,
            ref max_lrs,
            pct_start,
            anneal,
            cycle_momentum,
            ref base_momentums,
            ref max_momentums,
            div_factor,
            final_div_factor,
            three_phase,
        } = state.kind
        else {
            return Err(wrong_kind(op, "OneCycleLR", state));
        };
        check_common(op, state)?;
        finite_base(op, "OneCycleLR", state)?;
        if total_steps == 0 || state.last_epoch > total_steps {
            bail!(
                InvalidArgument,
                op,
                "last_epoch {} is outside a cycle of {} steps",
                state.last_epoch,
                total_steps
            );
        }
        let new = OneCycleLr {
            cfg: OneCycleConfig {
                max_lrs: max_lrs.clone(),
                total_steps: Some(total_steps),
                epochs: None,
                steps_per_epoch: None,
                pct_start,
                anneal,
                cycle_momentum,
                base_momentums: base_momentums.clone(),
                max_momentums: max_momentums.clone(),
                div_factor,
                final_div_factor,
                three_phase,
            },
            total_steps,
            max_lrs: max_lrs.clone(),
            // (a checkpoint written before per-group momenta holds one value for all groups)
            momenta: resolve(op, "max_momentum", max_momentums, max_lrs.len())?
                .into_iter()
                .zip(resolve(op, "base_momentum", base_momentums, max_lrs.len())?)
                .map(|(a, b)| [a, b])
                .collect(),
            epoch: state.last_epoch,
        };
        new.check(op)?;
        *self = new;
        Ok(())
    }
}
