//! `Sgd`: PyTorch's SGD with momentum, dampening, Nesterov, L2 weight decay and maximize, over
//! parameter groups.

use super::Optimizer;
use super::fused::{OptimStep, run_fused};
use super::group::{Group, GroupOptions, Groups, ParamGroup, group_plumbing, refuse};
use super::state;
use crate::checkpoint::StateDict;
use crate::{Result, Tensor, bail};

/// Hyper-parameters of [`Sgd`] (PyTorch defaults except `lr`).
#[derive(Clone, Copy, Debug)]
pub struct SgdConfig {
    /// Learning rate.
    pub lr: f64,
    /// Momentum factor.
    pub momentum: f64,
    /// Dampening for momentum (not applied on the first step).
    pub dampening: f64,
    /// L2 penalty added to the gradient.
    pub weight_decay: f64,
    /// Nesterov momentum.
    pub nesterov: bool,
    /// Maximize the objective (steps along the gradient).
    pub maximize: bool,
}

impl SgdConfig {
    /// Plain SGD with learning rate `lr`.
    pub fn new(lr: f64) -> Self {
        SgdConfig {
            lr,
            momentum: 0.0,
            dampening: 0.0,
            weight_decay: 0.0,
            nesterov: false,
            maximize: false,
        }
    }
    /// With momentum `m`.
    pub fn momentum(self, m: f64) -> Self {
        SgdConfig {
            momentum: m,
            ..self
        }
    }
    /// With weight decay `wd`.
    pub fn weight_decay(self, wd: f64) -> Self {
        SgdConfig {
            weight_decay: wd,
            ..self
        }
    }
}

impl GroupOptions for SgdConfig {
    fn resolve(&self, s: &ParamGroup, op: &'static str) -> Result<Self> {
        refuse(op, "betas", s.betas.is_some())?;
        refuse(op, "eps", s.eps.is_some())?;
        refuse(op, "amsgrad", s.amsgrad.is_some())?;
        Ok(SgdConfig {
            lr: s.lr.unwrap_or(self.lr),
            momentum: s.momentum.unwrap_or(self.momentum),
            dampening: s.dampening.unwrap_or(self.dampening),
            weight_decay: s.weight_decay.unwrap_or(self.weight_decay),
            nesterov: s.nesterov.unwrap_or(self.nesterov),
            maximize: s.maximize.unwrap_or(self.maximize),
        })
    }
    fn validate(&self, op: &'static str) -> Result<()> {
        validate(self, op)
    }
    fn lr(&self) -> f64 {
        self.lr
    }
    fn set_lr(&mut self, lr: f64) {
        self.lr = lr;
    }
    fn cycle_momentum(&self) -> f64 {
        self.momentum
    }
    fn set_cycle_momentum(&mut self, m: f64) {
        self.momentum = m;
    }
    fn to_meta(&self) -> Vec<(&'static str, String)> {
        vec![
            ("lr", self.lr.to_string()),
            ("momentum", self.momentum.to_string()),
            ("dampening", self.dampening.to_string()),
            ("weight_decay", self.weight_decay.to_string()),
            ("nesterov", self.nesterov.to_string()),
            ("maximize", self.maximize.to_string()),
        ]
    }
    fn from_meta(sd: &StateDict, pre: &str, op: &'static str) -> Result<Self> {
        Ok(SgdConfig {
            lr: sd.parse_meta(&format!("{pre}lr"), op)?,
            momentum: sd.parse_meta(&format!("{pre}momentum"), op)?,
            dampening: sd.parse_meta(&format!("{pre}dampening"), op)?,
            weight_decay: sd.parse_meta(&format!("{pre}weight_decay"), op)?,
            nesterov: sd.parse_meta(&format!("{pre}nesterov"), op)?,
            maximize: sd.parse_meta(&format!("{pre}maximize"), op)?,
        })
    }
}

/// Stochastic gradient descent.
///
/// ```
/// # use tapegrad::{Tensor, optim::{Sgd, SgdConfig, Optimizer}};
/// let p = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
/// p.mul(&p)?.sum()?.backward()?;
/// opt.step()?;
/// assert_eq!(p.to_vec::<f64>()?, vec![0.8, 1.6]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Sgd {
    defaults: SgdConfig,
    groups: Groups<SgdConfig>,
    bufs: Vec<Option<Tensor>>,
}

impl Sgd {
    /// Creates the optimizer with one group of `params` (Nesterov needs momentum > 0 and
    /// dampening 0).
    pub fn new(params: Vec<Tensor>, cfg: SgdConfig) -> Result<Self> {
        Self::with_groups(cfg, vec![ParamGroup::new(params)])
    }
    /// Creates the optimizer over parameter groups whose unset options take `defaults`
    /// (PyTorch's `SGD([{"params": ..}, ..], lr=..)`).
    pub fn with_groups(defaults: SgdConfig, groups: Vec<ParamGroup>) -> Result<Self> {
        let groups = Groups::new(&defaults, groups, "Sgd")?;
        let n = groups.flat.len();
        Ok(Sgd {
            defaults,
            groups,
            bufs: vec![None; n],
        })
    }
    /// PyTorch's `add_param_group`: a parameter already in a group is refused.
    pub fn add_param_group(&mut self, group: ParamGroup) -> Result<()> {
        self.groups
            .add(&self.defaults, group, "Sgd::add_param_group")?;
        self.bufs.resize(self.groups.flat.len(), None);
        Ok(())
    }
    /// The parameter groups (PyTorch's `param_groups`).
    pub fn param_groups(&self) -> &[Group<SgdConfig>] {
        &self.groups.groups
    }
    /// The parameter groups, to change a group's options (e.g. its lr).
    pub fn param_groups_mut(&mut self) -> &mut [Group<SgdConfig>] {
        &mut self.groups.groups
    }
    /// The momentum buffer of parameter `i` (None before the first step or without momentum).
    pub fn momentum_buffer(&self, i: usize) -> Option<&Tensor> {
        self.bufs[i].as_ref()
    }
}

fn validate(cfg: &SgdConfig, op: &'static str) -> Result<()> {
    if cfg.nesterov && (cfg.momentum <= 0.0 || cfg.dampening != 0.0) {
        bail!(
            InvalidArgument,
            op,
            "Nesterov momentum requires a momentum and zero dampening"
        );
    }
    if !(cfg.lr >= 0.0 && cfg.momentum >= 0.0 && cfg.weight_decay >= 0.0) {
        bail!(InvalidArgument, op, "Invalid hyper-parameter: {:?}", cfg);
    }
    Ok(())
}

const KIND: &str = "SGD";
const BUF: &str = "momentum_buffer";

impl Optimizer for Sgd {
    fn step(&mut self) -> Result<()> {
        let _span = tracing::debug_span!("sgd_step").entered();
        for (i, p) in self.groups.flat.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            let c = self.groups.groups[self.groups.owner[i]].config;
            let first = self.bufs[i].is_none();
            if c.momentum != 0.0 && first {
                self.bufs[i] = Some(p.zeros_like()?);
            }
            let states: Vec<&Tensor> = self.bufs[i].iter().filter(|_| c.momentum != 0.0).collect();
            let step = OptimStep::Sgd {
                lr: c.lr,
                momentum: c.momentum,
                dampening: c.dampening,
                weight_decay: c.weight_decay,
                nesterov: c.nesterov,
                maximize: c.maximize,
                first,
            };
            run_fused(p, &g, &states, step)?;
        }
        Ok(())
    }
    group_plumbing!("Sgd");
    fn state_dict(&self) -> Result<StateDict> {
        let mut sd = state::header(KIND, self.groups.flat.len());
        self.groups.write(&mut sd);
        for (i, b) in self.bufs.iter().enumerate() {
            if let Some(b) = b {
                sd.insert(state::key(i, BUF), b)?;
            }
        }
        Ok(sd)
    }
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        let op = "Sgd::load_state_dict";
        state::check_layout(sd, &[KIND], &self.groups.flat, &[BUF], op)?;
        let configs = self.groups.read(sd, op)?;
        let mut found = Vec::with_capacity(self.groups.flat.len());
        for (i, p) in self.groups.flat.iter().enumerate() {
            found.push(state::get_like(sd, i, BUF, p, op)?);
        }
        let mut bufs = Vec::with_capacity(found.len());
        for (b, p) in found.iter().zip(&self.groups.flat) {
            bufs.push(match b {
                Some(b) => Some(state::own_copy(b, p)?),
                None => None,
            });
        }
        self.groups.install(configs);
        self.bufs = bufs;
        Ok(())
    }
}
