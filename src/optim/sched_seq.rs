//! [`SequentialLr`]: PyTorch's `SequentialLR`, which runs one scheduler after another,
//! switching at the milestones (warm-up with `LinearLr`, then `CosineAnnealingLr`, is the
//! usual use).

use super::Optimizer;
use super::sched::{LrScheduler, check_common, wrong_kind};
use super::sched_state::{SchedulerKind, SchedulerState};
use crate::{Result, bail};

/// PyTorch's `SequentialLR`: `schedulers[i]` drives the lr from `milestones[i - 1]` on; at a
/// milestone the next scheduler restarts at its epoch 0 (from its base lrs, the optimizer's
/// [`initial_lrs`](Optimizer::initial_lrs)).
///
/// ```
/// # use tapegrad::{Tensor, DType, optim::*};
/// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![w], SgdConfig::new(0.1))?;
/// let warmup = LinearLr::new(&mut opt, 0.1, 1.0, 5)?;
/// let cosine = CosineAnnealingLr::new(&mut opt, 20, 0.0);
/// let mut s = SequentialLr::new(&mut opt, vec![Box::new(warmup), Box::new(cosine)], vec![5])?;
/// assert!((opt.lr() - 0.01).abs() < 1e-15);
/// for _ in 0..5 { s.step(&mut opt)?; }
/// assert_eq!(opt.lr(), 0.1); // the cosine starts from the base lr
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct SequentialLr {
    schedulers: Vec<Box<dyn LrScheduler + Send>>,
    milestones: Vec<u64>,
    epoch: u64,
}

impl SequentialLr {
    /// `SequentialLR(optimizer, schedulers, milestones)`: resets every group's lr to its
    /// initial lr and starts the scheduler of epoch 0. Refuses an empty list, a
    /// `ReduceLrOnPlateau`, and a milestone count other than `schedulers.len() - 1`
    /// (PyTorch's messages).
    pub fn new(
        opt: &mut dyn Optimizer,
        mut schedulers: Vec<Box<dyn LrScheduler + Send>>,
        milestones: Vec<u64>,
    ) -> Result<Self> {
        let op = "SequentialLr::new";
        if schedulers.is_empty() {
            bail!(
                InvalidArgument,
                op,
                "SequentialLr expects at least one scheduler, but got no scheduler."
            );
        }
        for (i, s) in schedulers.iter().enumerate() {
            if matches!(s.state().kind, SchedulerKind::ReduceLrOnPlateau { .. }) {
                bail!(
                    InvalidArgument,
                    op,
                    "SequentialLr does not support `ReduceLrOnPlateau` scheduler as it requires \
                     additional kwargs to be specified when calling `step`, but got one at index \
                     {} in the given schedulers sequence.",
                    i
                );
            }
        }
        if milestones.len() != schedulers.len() - 1 {
            bail!(
                InvalidArgument,
                op,
                "Sequential Schedulers expects number of schedulers provided to be one more than \
                 the number of milestone points, but got number of schedulers {} and the number \
                 of milestones to be equal to {}",
                schedulers.len(),
                milestones.len()
            );
        }
        let (old_lrs, initial) = (opt.lrs(), opt.initial_lrs());
        opt.set_lrs(&initial)?;
        let idx = milestones.partition_point(|&m| m == 0);
        if let Err(e) = schedulers[idx].restart(opt, false) {
            // put the lrs back: bad input changes nothing
            opt.set_lrs(&old_lrs)?;
            return Err(e);
        }
        Ok(SequentialLr {
            schedulers,
            milestones,
            epoch: 0,
        })
    }
}

impl LrScheduler for SequentialLr {
    fn step(&mut self, opt: &mut dyn Optimizer) -> Result<()> {
        let epoch = self.epoch + 1;
        let idx = self.milestones.partition_point(|&m| m <= epoch);
        if idx > 0 && self.milestones[idx - 1] == epoch {
            self.schedulers[idx].restart(opt, true)?;
        } else {
            self.schedulers[idx].step(opt)?;
        }
        self.epoch = epoch;
        Ok(())
    }

    fn restart(&mut self, opt: &mut dyn Optimizer, closed_form: bool) -> Result<()> {
        let idx = self.milestones.partition_point(|&m| m == 0);
        self.schedulers[idx].restart(opt, closed_form)?;
        self.epoch = 0;
        Ok(())
    }

    /// ```
    /// # use tapegrad::{Tensor, DType, optim::*};
    /// let w = Tensor::zeros(&[2], DType::F32)?.requires_grad_(true)?;
    /// let mut opt = Sgd::new(vec![w], SgdConfig::new(0.1))?;
    /// let a = LinearLr::new(&mut opt, 0.5, 1.0, 2)?;
    /// let b = StepLr::new(1, 0.5);
    /// let mut s = SequentialLr::new(&mut opt, vec![Box::new(a), Box::new(b)], vec![2])?;
    /// for _ in 0..3 { s.step(&mut opt)?; }
    /// let st = s.state();
    /// assert_eq!(st.kind.name(), "SequentialLR");
    /// let a2 = LinearLr::new(&mut opt, 0.9, 1.0, 7)?;
    /// let mut s2 = SequentialLr::new(&mut opt, vec![Box::new(a2), Box::new(StepLr::new(3, 0.1))], vec![9])?;
    /// s2.load_state(&st)?;
    /// assert_eq!(s2.state(), st);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    fn state(&self) -> SchedulerState {
        SchedulerState {
            kind: SchedulerKind::SequentialLr {
                milestones: self.milestones.clone(),
                schedulers: self.schedulers.iter().map(|s| s.state()).collect(),
            },
            last_epoch: self.epoch,
            base_lrs: Vec::new(),
        }
    }

    fn load_state(&mut self, state: &SchedulerState) -> Result<()> {
        let op = "SequentialLr::load_state";
        let SchedulerKind::SequentialLr {
            ref milestones,
            ref schedulers,
        } = state.kind
        else {
            return Err(wrong_kind(op, "SequentialLR", state));
        };
        check_common(op, state)?;
        if schedulers.len() != self.schedulers.len() || milestones.len() + 1 != schedulers.len() {
            bail!(
                InvalidArgument,
                op,
                "the state holds {} schedulers and {} milestones, this SequentialLr {} schedulers",
                schedulers.len(),
                milestones.len(),
                self.schedulers.len()
            );
        }
        let old: Vec<SchedulerState> = self.schedulers.iter().map(|s| s.state()).collect();
        for (i, (s, st)) in self.schedulers.iter_mut().zip(schedulers).enumerate() {
            if let Err(e) = s.load_state(st) {
                // the old states came from these schedulers: loading them back cannot fail
                for (s, o) in self.schedulers.iter_mut().zip(&old).take(i) {
                    s.load_state(o)?;
                }
                return Err(e);
            }
        }
        self.milestones = milestones.clone();
        self.epoch = state.last_epoch;
        Ok(())
    }
}
