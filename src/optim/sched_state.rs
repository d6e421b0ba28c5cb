//! Learning-rate scheduler state: [`SchedulerState`] (kind and hyper-parameters, `last_epoch`,
//! base lrs, PyTorch's `scheduler.state_dict()`) and its encoding as `scheduler.*` metadata
//! entries of an optimizer checkpoint (nested for `SequentialLr`'s schedulers).

use crate::checkpoint::StateDict;
use crate::{Result, bail};

/// Metadata key naming the scheduler in a checkpoint (PyTorch's class name).
const KIND: &str = "scheduler";

/// `OneCycleLr`'s annealing (PyTorch's `anneal_strategy`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Anneal {
    /// `"cos"`: `end + (start - end) / 2 * (cos(pi * pct) + 1)`.
    Cos,
    /// `"linear"`: `(end - start) * pct + start`.
    Linear,
}

/// `ReduceLrOnPlateau`'s mode: whether the metric should go down or up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum PlateauMode {
    /// `"min"`: a lower metric is better.
    Min,
    /// `"max"`: a higher metric is better.
    Max,
}

/// `ReduceLrOnPlateau`'s threshold mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum ThresholdMode {
    /// `"rel"`: better means beyond `best * (1 ∓ threshold)`.
    Rel,
    /// `"abs"`: better means beyond `best ∓ threshold`.
    Abs,
}

/// Which scheduler a [`SchedulerState`] belongs to, with its hyper-parameters (and, for
/// `ReduceLrOnPlateau` and `SequentialLr`, their running state).
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
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
    /// [`OneCycleLr`](super::OneCycleLr): `OneCycleLR(max_lr, total_steps, ...)`.
    OneCycleLr {
        /// Steps of the whole cycle.
        total_steps: u64,
        /// Peak lr of each group.
        max_lrs: Vec<f64>,
        /// Fraction of the cycle spent increasing the lr.
        pct_start: f64,
        /// Annealing function.
        anneal: Anneal,
        /// Whether the momentum (SGD) or beta1 (Adam) cycles inversely to the lr.
        cycle_momentum: bool,
        /// Lowest momentum of each group.
        base_momentums: Vec<f64>,
        /// Highest momentum of each group.
        max_momentums: Vec<f64>,
        /// `initial_lr = max_lr / div_factor`.
        div_factor: f64,
        /// `min_lr = initial_lr / final_div_factor`.
        final_div_factor: f64,
        /// Three phases (up, down to `initial_lr`, down to `min_lr`) instead of two.
        three_phase: bool,
    },
    /// [`ReduceLrOnPlateau`](super::ReduceLrOnPlateau), hyper-parameters and running state.
    ReduceLrOnPlateau {
        /// Whether lower or higher metrics are better.
        mode: PlateauMode,
        /// lr multiplier on a reduction.
        factor: f64,
        /// Bad epochs tolerated before a reduction.
        patience: u64,
        /// Improvement needed to count as better.
        threshold: f64,
        /// Relative or absolute threshold.
        threshold_mode: ThresholdMode,
        /// Epochs without counting bad epochs after a reduction.
        cooldown: u64,
        /// Lowest lr of each group.
        min_lrs: Vec<f64>,
        /// A single `min_lr` given for every group (PyTorch's `default_min_lr`, re-spread
        /// over the groups when their number changes), `None` for a per-group list.
        default_min_lr: Option<f64>,
        /// Smallest lr change that is applied.
        eps: f64,
        /// Best metric so far.
        best: f64,
        /// Bad epochs since the last improvement.
        num_bad_epochs: u64,
        /// Cooldown epochs left.
        cooldown_counter: u64,
    },
    /// [`SequentialLr`](super::SequentialLr): its schedulers' states and the milestones
    /// between them.
    SequentialLr {
        /// Epochs at which the next scheduler takes over.
        milestones: Vec<u64>,
        /// The schedulers' own states.
        schedulers: Vec<SchedulerState>,
    },
}

impl SchedulerKind {
    /// PyTorch's class name: `"StepLR"`, `"CosineAnnealingLR"`, `"LambdaLR"`, `"LinearLR"`,
    /// `"OneCycleLR"`, `"ReduceLROnPlateau"`, `"SequentialLR"`.
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
            SchedulerKind::OneCycleLr { .. } => "OneCycleLR",
            SchedulerKind::ReduceLrOnPlateau { .. } => "ReduceLROnPlateau",
            SchedulerKind::SequentialLr { .. } => "SequentialLR",
        }
    }
}

/// The state of a learning-rate scheduler, what PyTorch's `scheduler.state_dict()` holds:
/// the kind with its hyper-parameters, `last_epoch` (the number of `step` calls) and the base
/// lr of every parameter group. Together with the optimizer's state (which holds the current
/// lrs) it lets a resumed run continue the schedule exactly.
///
/// ```
/// # use tapegrad::{Tensor, checkpoint::StateDict, optim::*};
/// let p = Tensor::zeros(&[1], tapegrad::DType::F64)?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p], SgdConfig::new(0.1))?;
/// let mut s = CosineAnnealingLr::new(&mut opt, 5, 0.0);
/// s.step(&mut opt)?;
/// let mut sd = StateDict::new();
/// s.state().insert_into(&mut sd);
/// assert_eq!(sd.metadata("scheduler"), Some("CosineAnnealingLR"));
/// assert_eq!(SchedulerState::from_state_dict(&sd)?, s.state());
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct SchedulerState {
    /// The scheduler kind and its hyper-parameters.
    pub kind: SchedulerKind,
    /// PyTorch's `last_epoch`: how many times `step` was called.
    pub last_epoch: u64,
    /// PyTorch's `base_lrs`, one per parameter group: the lrs the schedule started from
    /// (the optimizer's [`initial_lrs`](super::Optimizer::initial_lrs)). `StepLr` (whose
    /// formula does not use them) records them at its first `step`, so they are empty before;
    /// `ReduceLrOnPlateau` and `SequentialLr` have none.
    pub base_lrs: Vec<f64>,
}

fn list_f64(v: &[f64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn list_u64(v: &[u64]) -> String {
    v.iter()
        .map(|x| x.to_string())
        .collect::<Vec<_>>()
        .join(",")
}

fn parse_list<T: std::str::FromStr>(sd: &StateDict, key: &str, op: &'static str) -> Result<Vec<T>> {
    let Some(s) = sd.metadata(key) else {
        bail!(InvalidArgument, op, "missing \"{}\" in the checkpoint", key);
    };
    if s.is_empty() {
        return Ok(Vec::new());
    }
    s.split(',')
        .map(|x| {
            x.parse::<T>().map_err(|_| {
                crate::err!(
                    InvalidArgument,
                    op,
                    "\"{}\" holds \"{}\", not a list of numbers",
                    key,
                    s
                )
            })
        })
        .collect()
}

fn parse_enum<T>(sd: &StateDict, key: &str, op: &'static str, opts: &[(&str, T)]) -> Result<T>
where
    T: Copy,
{
    let v = sd.metadata(key).unwrap_or("<none>");
    match opts.iter().find(|(n, _)| *n == v) {
        Some((_, t)) => Ok(*t),
        None => bail!(
            InvalidArgument,
            op,
            "\"{}\" holds unknown value \"{}\"",
            key,
            v
        ),
    }
}

impl SchedulerState {
    /// Writes the state as metadata entries of `sd` (meant for a state dict without scheduler
    /// entries, such as an optimizer's `state_dict()`):
    /// `scheduler` (the kind's [name](SchedulerKind::name)), `scheduler.last_epoch`,
    /// `scheduler.base_lrs` (comma-separated, when known) and the hyper-parameters under
    /// PyTorch's names (`scheduler.step_size`, `scheduler.gamma`; `scheduler.T_max`,
    /// `scheduler.eta_min`; ...); a `SequentialLr`'s schedulers under
    /// `scheduler.schedulers.<i>`. Floats are written in Rust's shortest round-trip form, so
    /// they read back exactly.
    ///
    /// ```
    /// # use tapegrad::{checkpoint::StateDict, optim::*};
    /// let st = SchedulerState {
    ///     kind: SchedulerKind::StepLr { step_size: 4, gamma: 0.5 },
    ///     last_epoch: 7,
    ///     base_lrs: vec![0.1, 0.01],
    /// };
    /// let mut sd = StateDict::new();
    /// st.insert_into(&mut sd);
    /// assert_eq!(sd.metadata("scheduler.last_epoch"), Some("7"));
    /// assert_eq!(sd.metadata("scheduler.base_lrs"), Some("0.1,0.01"));
    /// assert_eq!(sd.metadata("scheduler.gamma"), Some("0.5"));
    /// ```
    pub fn insert_into(&self, sd: &mut StateDict) {
        self.insert_at(sd, KIND);
    }

    fn insert_at(&self, sd: &mut StateDict, p: &str) {
        let mut set = |k: &str, v: String| sd.set_metadata(format!("{p}.{k}"), v);
        set("last_epoch", self.last_epoch.to_string());
        if !self.base_lrs.is_empty() {
            set("base_lrs", list_f64(&self.base_lrs));
        }
        match &self.kind {
            SchedulerKind::StepLr { step_size, gamma } => {
                set("step_size", step_size.to_string());
                set("gamma", gamma.to_string());
            }
            SchedulerKind::CosineAnnealingLr { t_max, eta_min } => {
                set("T_max", t_max.to_string());
                set("eta_min", eta_min.to_string());
            }
            SchedulerKind::LambdaLr => {}
            SchedulerKind::LinearLr {
                start_factor,
                end_factor,
                total_iters,
            } => {
                set("start_factor", start_factor.to_string());
                set("end_factor", end_factor.to_string());
                set("total_iters", total_iters.to_string());
            }
            SchedulerKind::OneCycleLr {
                total_steps,
                max_lrs,
                pct_start,
                anneal,
                cycle_momentum,
                base_momentums,
                max_momentums,
                div_factor,
                final_div_factor,
                three_phase,
            } => {
                set("total_steps", total_steps.to_string());
                set("max_lrs", list_f64(max_lrs));
                set("pct_start", pct_start.to_string());
                let a = match anneal {
                    Anneal::Cos => "cos",
                    Anneal::Linear => "linear",
                };
                set("anneal_strategy", a.to_string());
                set("cycle_momentum", cycle_momentum.to_string());
                set("base_momentum", list_f64(base_momentums));
                set("max_momentum", list_f64(max_momentums));
                set("div_factor", div_factor.to_string());
                set("final_div_factor", final_div_factor.to_string());
                set("three_phase", three_phase.to_string());
            }
            SchedulerKind::ReduceLrOnPlateau {
                mode,
                factor,
                patience,
                threshold,
                threshold_mode,
                cooldown,
                min_lrs,
                default_min_lr,
                eps,
                best,
                num_bad_epochs,
                cooldown_counter,
            } => {
                let m = match mode {
                    PlateauMode::Min => "min",
                    PlateauMode::Max => "max",
                };
                set("mode", m.to_string());
                set("factor", factor.to_string());
                set("patience", patience.to_string());
                set("threshold", threshold.to_string());
                let t = match threshold_mode {
                    ThresholdMode::Rel => "rel",
                    ThresholdMode::Abs => "abs",
                };
                set("threshold_mode", t.to_string());
                set("cooldown", cooldown.to_string());
                set("min_lrs", list_f64(min_lrs));
                if let Some(d) = default_min_lr {
                    set("default_min_lr", d.to_string());
                }
                set("eps", eps.to_string());
                set("best", best.to_string());
                set("num_bad_epochs", num_bad_epochs.to_string());
                set("cooldown_counter", cooldown_counter.to_string());
            }
            SchedulerKind::SequentialLr {
                milestones,
                schedulers,
            } => {
                set("milestones", list_u64(milestones));
                set("num_schedulers", schedulers.len().to_string());
                for (i, s) in schedulers.iter().enumerate() {
                    s.insert_at(sd, &format!("{p}.schedulers.{i}"));
                }
            }
        }
        sd.set_metadata(p, self.kind.name());
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
        Self::read_at(sd, KIND, 0)
    }

    fn read_at(sd: &StateDict, p: &str, depth: usize) -> Result<SchedulerState> {
        let op = "SchedulerState::from_state_dict";
        let k = |name: &str| format!("{p}.{name}");
        let kind = match sd.metadata(p) {
            Some("StepLR") => SchedulerKind::StepLr {
                step_size: sd.parse_meta(&k("step_size"), op)?,
                gamma: sd.parse_meta(&k("gamma"), op)?,
            },
            Some("CosineAnnealingLR") => SchedulerKind::CosineAnnealingLr {
                t_max: sd.parse_meta(&k("T_max"), op)?,
                eta_min: sd.parse_meta(&k("eta_min"), op)?,
            },
            Some("LambdaLR") => SchedulerKind::LambdaLr,
            Some("LinearLR") => SchedulerKind::LinearLr {
                start_factor: sd.parse_meta(&k("start_factor"), op)?,
                end_factor: sd.parse_meta(&k("end_factor"), op)?,
                total_iters: sd.parse_meta(&k("total_iters"), op)?,
            },
            Some("OneCycleLR") => SchedulerKind::OneCycleLr {
                total_steps: sd.parse_meta(&k("total_steps"), op)?,
                max_lrs: parse_list(sd, &k("max_lrs"), op)?,
                pct_start: sd.parse_meta(&k("pct_start"), op)?,
                anneal: parse_enum(
                    sd,
                    &k("anneal_strategy"),
                    op,
                    &[("cos", Anneal::Cos), ("linear", Anneal::Linear)],
                )?,
                cycle_momentum: sd.parse_meta(&k("cycle_momentum"), op)?,
                base_momentums: parse_list(sd, &k("base_momentum"), op)?,
                max_momentums: parse_list(sd, &k("max_momentum"), op)?,
                div_factor: sd.parse_meta(&k("div_factor"), op)?,
                final_div_factor: sd.parse_meta(&k("final_div_factor"), op)?,
                three_phase: sd.parse_meta(&k("three_phase"), op)?,
            },
            Some("ReduceLROnPlateau") => SchedulerKind::ReduceLrOnPlateau {
                mode: parse_enum(
                    sd,
                    &k("mode"),
                    op,
                    &[("min", PlateauMode::Min), ("max", PlateauMode::Max)],
                )?,
                factor: sd.parse_meta(&k("factor"), op)?,
                patience: sd.parse_meta(&k("patience"), op)?,
                threshold: sd.parse_meta(&k("threshold"), op)?,
                threshold_mode: parse_enum(
                    sd,
                    &k("threshold_mode"),
                    op,
                    &[("rel", ThresholdMode::Rel), ("abs", ThresholdMode::Abs)],
                )?,
                cooldown: sd.parse_meta(&k("cooldown"), op)?,
                min_lrs: parse_list(sd, &k("min_lrs"), op)?,
                default_min_lr: match sd.metadata(&k("default_min_lr")) {
                    Some(_) => Some(sd.parse_meta(&k("default_min_lr"), op)?),
                    None => None,
                },
                eps: sd.parse_meta(&k("eps"), op)?,
                best: sd.parse_meta(&k("best"), op)?,
                num_bad_epochs: sd.parse_meta(&k("num_bad_epochs"), op)?,
                cooldown_counter: sd.parse_meta(&k("cooldown_counter"), op)?,
            },
            Some("SequentialLR") if depth < 8 => {
                let n: usize = sd.parse_meta(&k("num_schedulers"), op)?;
                if n > 64 {
                    bail!(
                        InvalidArgument,
                        op,
                        "{} schedulers in a SequentialLR state",
                        n
                    );
                }
                let mut schedulers = Vec::with_capacity(n);
                for i in 0..n {
                    schedulers.push(Self::read_at(
                        sd,
                        &k(&format!("schedulers.{i}")),
                        depth + 1,
                    )?);
                }
                SchedulerKind::SequentialLr {
                    milestones: parse_list(sd, &k("milestones"), op)?,
                    schedulers,
                }
            }
            Some(other) => bail!(
                InvalidArgument,
                op,
                "unknown scheduler \"{}\" in checkpoint at \"{}\", expected StepLR, \
                 CosineAnnealingLR, LambdaLR, LinearLR, OneCycleLR, ReduceLROnPlateau or \
                 SequentialLR (nested at most 8 deep)",
                other,
                p
            ),
            None => bail!(
                InvalidArgument,
                op,
                "the checkpoint holds no learning-rate scheduler state (no \"{}\" metadata entry)",
                p
            ),
        };
        let base_lrs = match sd.metadata(&k("base_lrs")) {
            Some(_) => parse_list(sd, &k("base_lrs"), op)?,
            None => Vec::new(),
        };
        Ok(SchedulerState {
            kind,
            last_epoch: sd.parse_meta(&k("last_epoch"), op)?,
            base_lrs,
        })
    }
}
