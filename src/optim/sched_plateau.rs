//! [`ReduceLrOnPlateau`]: PyTorch's `ReduceLROnPlateau`, which multiplies every group's lr by
//! `factor` (not below its `min_lr`) once a metric has stopped improving for `patience` epochs,
//! then waits `cooldown` epochs. It steps on a metric: [`ReduceLrOnPlateau::step`].

use super::Optimizer;
use super::sched::{LrScheduler, check_common, wrong_kind};
use super::sched_state::{PlateauMode, SchedulerKind, SchedulerState, ThresholdMode};
use crate::{Result, bail};

/// Options of [`ReduceLrOnPlateau`] (PyTorch's defaults from [`PlateauConfig::new`]).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct PlateauConfig {
    /// Whether lower (`Min`, the default) or higher metrics are better.
    pub mode: PlateauMode,
    /// lr multiplier on a reduction (0.1); must be below 1.
    pub factor: f64,
    /// Bad epochs tolerated before a reduction (10).
    pub patience: u64,
    /// Improvement needed to count as better (1e-4).
    pub threshold: f64,
    /// Relative (default) or absolute threshold.
    pub threshold_mode: ThresholdMode,
    /// Epochs after a reduction during which bad epochs are not counted (0).
    pub cooldown: u64,
    /// Lowest lr: one value for every group (0), or one per group.
    pub min_lrs: Vec<f64>,
    /// Smallest lr change that is applied (1e-8).
    pub eps: f64,
}

impl PlateauConfig {
    /// `ReduceLROnPlateau(optimizer)`'s defaults.
    pub fn new() -> Self {
        PlateauConfig {
            mode: PlateauMode::Min,
            factor: 0.1,
            patience: 10,
            threshold: 1e-4,
            threshold_mode: ThresholdMode::Rel,
            cooldown: 0,
            min_lrs: vec![0.0],
            eps: 1e-8,
        }
    }
}

impl Default for PlateauConfig {
    fn default() -> Self {
        Self::new()
    }
}

/// PyTorch's `ReduceLROnPlateau`.
///
/// ```
/// # use tapegrad::{Tensor, DType, optim::*};
/// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w], SgdConfig::new(0.1))?;
/// let mut cfg = PlateauConfig::new();
/// cfg.patience = 1;
/// let mut s = ReduceLrOnPlateau::new(&opt, cfg)?;
/// for loss in [1.0, 0.5, 0.6, 0.7] {
///     s.step(&mut opt, loss)?;
/// }
/// assert_eq!(opt.lr(), 0.1 * 0.1); // two epochs without improvement
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct ReduceLrOnPlateau {
    cfg: PlateauConfig,
    default_min_lr: Option<f64>,
    best: f64,
    num_bad_epochs: u64,
    cooldown_counter: u64,
    epoch: u64,
}

fn check(op: &'static str, cfg: &PlateauConfig) -> Result<()> {
    if cfg.factor >= 1.0 {
        bail!(InvalidArgument, op, "Factor should be < 1.0.");
    }
    Ok(())
}

impl ReduceLrOnPlateau {
    /// `ReduceLROnPlateau(optimizer, ...)`: refuses `factor >= 1` and a `min_lrs` list whose
    /// length is neither 1 nor the number of groups (PyTorch's messages).
    pub fn new(opt: &dyn Optimizer, mut cfg: PlateauConfig) -> Result<Self> {
        let op = "ReduceLrOnPlateau::new";
        check(op, &cfg)?;
        let n = opt.num_groups();
        let default_min_lr = match cfg.min_lrs.len() {
            1 => {
                let d = cfg.min_lrs[0];
                cfg.min_lrs = vec![d; n];
                Some(d)
            }
            m if m == n => None,
            m => bail!(InvalidArgument, op, "expected {} min_lrs, got {}", n, m),
        };
        let best = worst(cfg.mode);
        Ok(ReduceLrOnPlateau {
            cfg,
            default_min_lr,
            best,
            num_bad_epochs: 0,
            cooldown_counter: 0,
            epoch: 0,
        })
    }

    /// PyTorch's `step(metrics)`: one epoch with `metric`; reduces the lrs after more than
    /// `patience` epochs without improvement. A group count that changed since construction
    /// with a per-group `min_lrs` is an error (PyTorch's `RuntimeError`) and changes nothing.
    pub fn step(&mut self, opt: &mut dyn Optimizer, metric: f64) -> Result<()> {
        let op = "ReduceLrOnPlateau::step";
        let mut next = ReduceLrOnPlateau {
            cfg: self.cfg.clone(),
            ..*self
        };
        next.epoch += 1;
        if next.is_better(metric) {
            next.best = metric;
            next.num_bad_epochs = 0;
        } else {
            next.num_bad_epochs += 1;
        }
        if next.cooldown_counter > 0 {
            next.cooldown_counter -= 1;
            next.num_bad_epochs = 0;
        }
        if next.num_bad_epochs > next.cfg.patience {
            let n = opt.num_groups();
            if next.cfg.min_lrs.len() != n {
                match next.default_min_lr {
                    Some(d) => next.cfg.min_lrs = vec![d; n],
                    None => bail!(
                        InvalidArgument,
                        op,
                        "The number of param groups in the optimizer ({}) differs from when \
                         ReduceLrOnPlateau was initialized ({})",
                        n,
                        next.cfg.min_lrs.len()
                    ),
                }
            }
            let lrs: Vec<f64> = opt
                .lrs()
                .iter()
                .zip(&next.cfg.min_lrs)
                .map(|(&old, &min)| {
                    let new = (old * next.cfg.factor).max(min);
                    if old - new > next.cfg.eps { new } else { old }
                })
                .collect();
            opt.set_lrs(&lrs)?;
            next.cooldown_counter = next.cfg.cooldown;
            next.num_bad_epochs = 0;
        }
        *self = next;
        Ok(())
    }

    fn is_better(&self, a: f64) -> bool {
        let (best, t) = (self.best, self.cfg.threshold);
        match (self.cfg.mode, self.cfg.threshold_mode) {
            (PlateauMode::Min, ThresholdMode::Rel) => a < best * (1.0 - t),
            (PlateauMode::Min, ThresholdMode::Abs) => a < best - t,
            (PlateauMode::Max, ThresholdMode::Rel) => a > best * (t + 1.0),
            (PlateauMode::Max, ThresholdMode::Abs) => a > best + t,
        }
    }

    /// The best metric so far.
    pub fn best(&self) -> f64 {
        self.best
    }
}

/// PyTorch's `mode_worse`, the initial best.
fn worst(mode: PlateauMode) -> f64 {
    match mode {
        PlateauMode::Min => f64::INFINITY,
        PlateauMode::Max => f64::NEG_INFINITY,
    }
}

impl LrScheduler for ReduceLrOnPlateau {
    /// Refused: this scheduler steps on a metric, call [`ReduceLrOnPlateau::step`] with it.
    fn step(&mut self, _opt: &mut dyn Optimizer) -> Result<()> {
        bail!(
            InvalidArgument,
            "ReduceLrOnPlateau::step",
            "ReduceLrOnPlateau steps on a metric: call ReduceLrOnPlateau::step(opt, metric)"
        )
    }

    /// Refused: `SequentialLr` does not take a `ReduceLrOnPlateau` (as PyTorch).
    fn restart(&mut self, _opt: &mut dyn Optimizer, _closed_form: bool) -> Result<()> {
        bail!(
            InvalidArgument,
            "ReduceLrOnPlateau::restart",
            "ReduceLrOnPlateau cannot be restarted by a SequentialLr"
        )
    }

    /// ```
    /// # use tapegrad::{Tensor, DType, optim::*};
    /// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
    /// let mut opt = Sgd::new(vec![w], SgdConfig::new(0.1))?;
    /// let mut s = ReduceLrOnPlateau::new(&opt, PlateauConfig::new())?;
    /// s.step(&mut opt, 3.0)?;
    /// let mut s2 = ReduceLrOnPlateau::new(&opt, PlateauConfig::new())?;
    /// s2.load_state(&s.state())?;
    /// assert_eq!((s2.best(), s2.state()), (3.0, s.state()));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    fn state(&self) -> SchedulerState {
        let c = &self.cfg;
        SchedulerState {
            kind: SchedulerKind::ReduceLrOnPlateau {
                mode: c.mode,
                factor: c.factor,
                patience: c.patience,
                threshold: c.threshold,
                threshold_mode: c.threshold_mode,
                cooldown: c.cooldown,
                min_lrs: c.min_lrs.clone(),
                default_min_lr: self.default_min_lr,
                eps: c.eps,
                best: self.best,
                num_bad_epochs: self.num_bad_epochs,
                cooldown_counter: self.cooldown_counter,
            },
            last_epoch: self.epoch,
            base_lrs: Vec::new(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "ReduceLrOnPlateau::load_state";
        let SchedulerKind::ReduceLrOnPlateau {
            mode,
            factor,
            patience,
            threshold,
            threshold_mode,
            cooldown,
            ref min_lrs,
            default_min_lr,
            eps,
            best,
            num_bad_epochs,
            cooldown_counter,
        } = state.kind
        else {
            return Err(wrong_kind(op, "ReduceLROnPlateau", state));
        };
        check_common(op, state)?;
        let cfg = PlateauConfig {
            mode,
            factor,
            patience,
            threshold,
            threshold_mode,
            cooldown,
            min_lrs: min_lrs.clone(),
            eps,
        };
        check(op, &cfg)?;
        *self = ReduceLrOnPlateau {
            cfg,
            default_min_lr,
            best,
            num_bad_epochs,
            cooldown_counter,
            epoch: state.last_epoch,
        };
        Ok(())
    }
}
