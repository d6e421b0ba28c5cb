//! `Adam` and `AdamW` (decoupled weight decay), with AMSGrad and maximize, over parameter
//! groups, as PyTorch's single-tensor code.

use super::Optimizer;
use super::fused::{OptimStep, run_fused};
use super::group::{Group, GroupOptions, Groups, ParamGroup, group_plumbing, refuse};
use super::state;
use crate::checkpoint::StateDict;
use crate::{DType, Result, Tensor, bail};

/// Hyper-parameters of [`Adam`] (PyTorch defaults via [`AdamConfig::adam`] / [`AdamConfig::adamw`]).
#[derive(Clone, Copy, Debug)]
pub struct AdamConfig {
    /// Learning rate.
    pub lr: f64,
    /// (beta1, beta2).
    pub betas: (f64, f64),
    /// Term added to the denominator.
    pub eps: f64,
    /// Weight decay (L2 for Adam, decoupled for AdamW).
    pub weight_decay: f64,
    /// Use the AMSGrad variant.
    pub amsgrad: bool,
    /// Decoupled weight decay (AdamW).
    pub decoupled: bool,
    /// Maximize the objective (steps along the gradient).
    pub maximize: bool,
}

impl AdamConfig {
    /// `torch.optim.Adam(lr=lr)` defaults.
    pub fn adam(lr: f64) -> Self {
        AdamConfig {
            lr,
            betas: (0.9, 0.999),
            eps: 1e-8,
            weight_decay: 0.0,
            amsgrad: false,
            decoupled: false,
            maximize: false,
        }
    }
    /// `torch.optim.AdamW(lr=lr)` defaults (weight_decay 0.01).
    pub fn adamw(lr: f64) -> Self {
        AdamConfig {
            weight_decay: 0.01,
            decoupled: true,
            ..Self::adam(lr)
        }
    }
    /// With betas `(beta1, beta2)`.
    pub fn betas(self, beta1: f64, beta2: f64) -> Self {
        AdamConfig {
            betas: (beta1, beta2),
            ..self
        }
    }
    /// With weight decay `wd`.
    pub fn weight_decay(self, wd: f64) -> Self {
        AdamConfig {
            weight_decay: wd,
            ..self
        }
    }
}

impl GroupOptions for AdamConfig {
    fn resolve(&self, s: &ParamGroup, op: &'static str) -> Result<Self> {
        refuse(op, "momentum", s.momentum.is_some())?;
        refuse(op, "dampening", s.dampening.is_some())?;
        refuse(op, "nesterov", s.nesterov.is_some())?;
        Ok(AdamConfig {
            lr: s.lr.unwrap_or(self.lr),
            betas: s.betas.unwrap_or(self.betas),
            eps: s.eps.unwrap_or(self.eps),
            weight_decay: s.weight_decay.unwrap_or(self.weight_decay),
            amsgrad: s.amsgrad.unwrap_or(self.amsgrad),
            decoupled: self.decoupled,
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
        self.betas.0
    }
    fn set_cycle_momentum(&mut self, m: f64) {
        self.betas.0 = m;
    }
    fn to_meta(&self) -> Vec<(&'static str, String)> {
        vec![
            ("lr", self.lr.to_string()),
            ("beta1", self.betas.0.to_string()),
            ("beta2", self.betas.1.to_string()),
            ("eps", self.eps.to_string()),
            ("weight_decay", self.weight_decay.to_string()),
            ("amsgrad", self.amsgrad.to_string()),
            ("maximize", self.maximize.to_string()),
        ]
    }
    fn from_meta(sd: &StateDict, pre: &str, op: &'static str) -> Result<Self> {
        Ok(AdamConfig {
            lr: sd.parse_meta(&format!("{pre}lr"), op)?,
            betas: (
                sd.parse_meta(&format!("{pre}beta1"), op)?,
                sd.parse_meta(&format!("{pre}beta2"), op)?,
            ),
            eps: sd.parse_meta(&format!("{pre}eps"), op)?,
            weight_decay: sd.parse_meta(&format!("{pre}weight_decay"), op)?,
            amsgrad: sd.parse_meta(&format!("{pre}amsgrad"), op)?,
            decoupled: sd.metadata(state::KIND) == Some(KINDS[1]),
            maximize: sd.parse_meta(&format!("{pre}maximize"), op)?,
        })
    }
}

struct State {
    step: u64,
    exp_avg: Tensor,
    exp_avg_sq: Tensor,
    max_exp_avg_sq: Option<Tensor>,
}

/// Adam / AdamW.
///
/// ```
/// # use tapegrad::{Tensor, optim::{Adam, AdamConfig, Optimizer}};
/// let p = Tensor::from_vec(vec![1.0f64], &[1])?.requires_grad_(true)?;
/// let mut opt = Adam::new(vec![p.clone()], AdamConfig::adam(0.1))?;
/// p.mul(&p)?.sum()?.backward()?;
/// opt.step()?;
/// assert!((p.item::<f64>()? - 0.9).abs() < 1e-6);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Adam {
    defaults: AdamConfig,
    groups: Groups<AdamConfig>,
    state: Vec<Option<State>>,
}

impl Adam {
    /// Creates the optimizer with one group of `params`.
    pub fn new(params: Vec<Tensor>, cfg: AdamConfig) -> Result<Self> {
        Self::with_groups(cfg, vec![ParamGroup::new(params)])
    }
    /// Creates the optimizer over parameter groups whose unset options take `defaults`
    /// (PyTorch's `Adam([{"params": ..}, ..], lr=..)`).
    pub fn with_groups(defaults: AdamConfig, groups: Vec<ParamGroup>) -> Result<Self> {
        let op = if defaults.decoupled { "AdamW" } else { "Adam" };
        let groups = Groups::new(&defaults, groups, op)?;
        let n = groups.flat.len();
        Ok(Adam {
            defaults,
            groups,
            state: (0..n).map(|_| None).collect(),
        })
    }
    /// PyTorch's `add_param_group`: a parameter already in a group is refused.
    pub fn add_param_group(&mut self, group: ParamGroup) -> Result<()> {
        self.groups
            .add(&self.defaults, group, "Adam::add_param_group")?;
        self.state.resize_with(self.groups.flat.len(), || None);
        Ok(())
    }
    /// The parameter groups (PyTorch's `param_groups`).
    pub fn param_groups(&self) -> &[Group<AdamConfig>] {
        &self.groups.groups
    }
    /// The parameter groups, to change a group's options (e.g. its lr).
    pub fn param_groups_mut(&mut self) -> &mut [Group<AdamConfig>] {
        &mut self.groups.groups
    }
    /// (step, exp_avg, exp_avg_sq, max_exp_avg_sq) of parameter `i`.
    pub fn state(&self, i: usize) -> Option<(u64, &Tensor, &Tensor, Option<&Tensor>)> {
        self.state[i]
            .as_ref()
            .map(|s| (s.step, &s.exp_avg, &s.exp_avg_sq, s.max_exp_avg_sq.as_ref()))
    }
}

fn validate(cfg: &AdamConfig, op: &'static str) -> Result<()> {
    let (b1, b2) = cfg.betas;
    if !(0.0..1.0).contains(&b1)
        || !(0.0..1.0).contains(&b2)
        // NaN must fail too: a hyper-parameter is valid only if it compares as >= 0
        || [cfg.lr, cfg.eps, cfg.weight_decay].iter().any(|v| v.partial_cmp(&0.0).is_none_or(|o| o.is_lt()))
    {
        bail!(InvalidArgument, op, "Invalid hyper-parameter: {:?}", cfg);
    }
    Ok(())
}

const KINDS: [&str; 2] = ["Adam", "AdamW"];
const NAMES: [&str; 4] = ["step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"];

/// Reads a `step` scalar (PyTorch stores a float32 0-d tensor) as a count.
fn read_step(t: &Tensor, k: &str, op: &'static str) -> Result<u64> {
    let v = if t.numel() == 1 && (t.dtype().is_float() || t.dtype().is_integral(false)) {
        t.item_as::<f64>()?
    } else {
        f64::NAN
    };
    if !(v >= 1.0 && v.fract() == 0.0 && v < 9.0e15) {
        bail!(
            InvalidArgument,
            op,
            "\"{}\" must be a positive integral scalar, got {:?} {}",
            k,
            t.shape(),
            t.dtype()
        );
    }
    Ok(v as u64)
}

impl Optimizer for Adam {
    fn step(&mut self) -> Result<()> {
        let _span = tracing::debug_span!("adam_step").entered();
        for (i, p) in self.groups.flat.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            let c = self.groups.groups[self.groups.owner[i]].config;
            if self.state[i].is_none() {
                self.state[i] = Some(State {
                    step: 0,
                    exp_avg: p.zeros_like()?,
                    exp_avg_sq: p.zeros_like()?,
                    max_exp_avg_sq: if c.amsgrad {
                        Some(p.zeros_like()?)
                    } else {
                        None
                    },
                });
            }
            let st = self.state[i]
                .as_mut()
                .expect("internal: state initialised above");
            st.step += 1;
            let t = st.step;
            let mut states = vec![&st.exp_avg, &st.exp_avg_sq];
            states.extend(st.max_exp_avg_sq.as_ref());
            let step = OptimStep::Adam {
                lr: c.lr,
                beta1: c.betas.0,
                beta2: c.betas.1,
                eps: c.eps,
                weight_decay: c.weight_decay,
                decoupled: c.decoupled,
                maximize: c.maximize,
                step: t,
            };
            run_fused(p, &g, &states, step)?;
        }
        Ok(())
    }
    group_plumbing!("Adam");
    fn state_dict(&self) -> Result<StateDict> {
        let kind = if self.defaults.decoupled {
            KINDS[1]
        } else {
            KINDS[0]
        };
        let mut sd = state::header(kind, self.groups.flat.len());
        self.groups.write(&mut sd);
        for (i, s) in self.state.iter().enumerate() {
            let Some(s) = s else { continue };
            sd.insert(
                state::key(i, "step"),
                &Tensor::scalar(s.step as f64).to_dtype(DType::F32)?,
            )?;
            sd.insert(state::key(i, "exp_avg"), &s.exp_avg)?;
            sd.insert(state::key(i, "exp_avg_sq"), &s.exp_avg_sq)?;
            if let Some(m) = &s.max_exp_avg_sq {
                sd.insert(state::key(i, "max_exp_avg_sq"), m)?;
            }
        }
        Ok(sd)
    }
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        let op = "Adam::load_state_dict";
        state::check_layout(sd, &KINDS, &self.groups.flat, &NAMES, op)?;
        let configs = self.groups.read(sd, op)?;
        let mut found = Vec::with_capacity(self.groups.flat.len());
        for (i, p) in self.groups.flat.iter().enumerate() {
            let cfg = configs[self.groups.owner[i]].0;
            let step = sd.get(&state::key(i, "step"));
            let m = state::get_like(sd, i, "exp_avg", p, op)?;
            let v = state::get_like(sd, i, "exp_avg_sq", p, op)?;
            let vmax = state::get_like(sd, i, "max_exp_avg_sq", p, op)?;
            let entry = match (step, m, v) {
                (None, None, None) if vmax.is_none() => None,
                (Some(step), Some(m), Some(v)) if vmax.is_some() == cfg.amsgrad => {
                    Some((read_step(step, &state::key(i, "step"), op)?, m, v, vmax))
                }
                _ => bail!(
                    InvalidArgument,
                    op,
                    "incomplete state for parameter {}: expected step, exp_avg, exp_avg_sq{}",
                    i,
                    if cfg.amsgrad {
                        " and max_exp_avg_sq"
                    } else {
                        " (no max_exp_avg_sq without amsgrad)"
                    }
                ),
            };
            found.push(entry);
        }
        let mut states = Vec::with_capacity(found.len());
        for (e, p) in found.into_iter().zip(&self.groups.flat) {
            states.push(match e {
                None => None,
                Some((step, m, v, vmax)) => Some(State {
                    step,
                    exp_avg: state::own_copy(&m, p)?,
                    exp_avg_sq: state::own_copy(&v, p)?,
                    max_exp_avg_sq: match vmax {
                        Some(x) => Some(state::own_copy(&x, p)?),
                        None => None,
                    },
                }),
            });
        }
        self.defaults.decoupled = sd.metadata(state::KIND) == Some(KINDS[1]);
        self.groups.install(configs);
        self.state = states;
        Ok(())
    }
}

/// AdamW (PyTorch's `torch.optim.AdamW`): [`Adam`] with decoupled weight decay, whatever the
/// config's `decoupled` flag says. Build it from [`AdamConfig::adamw`] for PyTorch's defaults
/// (weight decay 0.01). Its state dict is tagged `AdamW` and it loads only AdamW states.
///
/// ```
/// # use tapegrad::{Tensor, optim::{AdamW, AdamConfig, Optimizer}};
/// let p = Tensor::from_vec(vec![1.0f64], &[1])?.requires_grad_(true)?;
/// let mut opt = AdamW::new(vec![p.clone()], AdamConfig::adamw(0.1))?;
/// p.mul(&p)?.sum()?.backward()?;
/// opt.step()?;
/// // decay first (1 - 0.1 * 0.01), then the Adam step of 0.1
/// assert!((p.item::<f64>()? - (0.999 - 0.1)).abs() < 1e-6);
/// assert_eq!(opt.state_dict()?.metadata("optimizer"), Some("AdamW"));
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct AdamW(Adam);

impl AdamW {
    /// Creates the optimizer with one group of `params` (`cfg.decoupled` is set).
    pub fn new(params: Vec<Tensor>, cfg: AdamConfig) -> Result<Self> {
        Self::with_groups(cfg, vec![ParamGroup::new(params)])
    }
    /// Creates the optimizer over parameter groups whose unset options take `defaults`
    /// (`defaults.decoupled` is set).
    pub fn with_groups(defaults: AdamConfig, groups: Vec<ParamGroup>) -> Result<Self> {
        let defaults = AdamConfig {
            decoupled: true,
            ..defaults
        };
        Adam::with_groups(defaults, groups).map(AdamW)
    }
    /// PyTorch's `add_param_group`: a parameter already in a group is refused.
    pub fn add_param_group(&mut self, group: ParamGroup) -> Result<()> {
        self.0.add_param_group(group)
    }
    /// The parameter groups (PyTorch's `param_groups`).
    pub fn param_groups(&self) -> &[Group<AdamConfig>] {
        self.0.param_groups()
    }
    /// The parameter groups, to change a group's options (e.g. its lr).
    pub fn param_groups_mut(&mut self) -> &mut [Group<AdamConfig>] {
        self.0.param_groups_mut()
    }
    /// (step, exp_avg, exp_avg_sq, max_exp_avg_sq) of parameter `i`.
    pub fn state(&self, i: usize) -> Option<(u64, &Tensor, &Tensor, Option<&Tensor>)> {
        self.0.state(i)
    }
}

impl Optimizer for AdamW {
    fn step(&mut self) -> Result<()> {
        self.0.step()
    }
    fn params(&self) -> &[Tensor] {
        self.0.params()
    }
    fn lrs(&self) -> Vec<f64> {
        self.0.lrs()
    }
    fn set_lrs(&mut self, lrs: &[f64]) -> Result<()> {
        self.0.set_lrs(lrs)
    }
    fn initial_lrs(&mut self) -> Vec<f64> {
        self.0.initial_lrs()
    }
    fn momentums(&self) -> Option<Vec<f64>> {
        self.0.momentums()
    }
    fn set_momentums(&mut self, m: &[f64]) -> Result<()> {
        self.0.set_momentums(m)
    }
    fn state_dict(&self) -> Result<StateDict> {
        self.0.state_dict()
    }
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        let op = "AdamW::load_state_dict";
        state::check_layout(sd, &KINDS[1..], self.0.params(), &NAMES, op)?;
        self.0.load_state_dict(sd)
    }
}
