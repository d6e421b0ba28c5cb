//! `Adam` and `AdamW` (decoupled weight decay), with AMSGrad, as PyTorch's single-tensor code.

use super::Optimizer;
use super::fused::{OptimStep, run_fused};
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
    params: Vec<Tensor>,
    cfg: AdamConfig,
    state: Vec<Option<State>>,
}

impl Adam {
    /// Creates the optimizer.
    pub fn new(params: Vec<Tensor>, cfg: AdamConfig) -> Result<Self> {
        validate(&cfg, "Adam")?;
        let n = params.len();
        Ok(Adam {
            params,
            cfg,
            state: (0..n).map(|_| None).collect(),
        })
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
        for (i, p) in self.params.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            if self.state[i].is_none() {
                self.state[i] = Some(State {
                    step: 0,
                    exp_avg: p.zeros_like()?,
                    exp_avg_sq: p.zeros_like()?,
                    max_exp_avg_sq: if self.cfg.amsgrad {
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
            let (c, t) = (self.cfg, st.step);
            let mut states = vec![&st.exp_avg, &st.exp_avg_sq];
            states.extend(st.max_exp_avg_sq.as_ref());
            let step = OptimStep::Adam {
                lr: c.lr,
                beta1: c.betas.0,
                beta2: c.betas.1,
                eps: c.eps,
                weight_decay: c.weight_decay,
                decoupled: c.decoupled,
                step: t,
            };
            run_fused(p, &g, &states, step)?;
        }
        Ok(())
    }
    fn params(&self) -> &[Tensor] {
        &self.params
    }
    fn lr(&self) -> f64 {
        self.cfg.lr
    }
    fn set_lr(&mut self, lr: f64) {
        self.cfg.lr = lr;
    }
    fn state_dict(&self) -> Result<StateDict> {
        let c = self.cfg;
        let kind = if c.decoupled { KINDS[1] } else { KINDS[0] };
        let mut sd = state::header(kind, self.params.len());
        sd.set_metadata("lr", c.lr.to_string());
        sd.set_metadata("beta1", c.betas.0.to_string());
        sd.set_metadata("beta2", c.betas.1.to_string());
        sd.set_metadata("eps", c.eps.to_string());
        sd.set_metadata("weight_decay", c.weight_decay.to_string());
        sd.set_metadata("amsgrad", c.amsgrad.to_string());
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
        state::check_layout(sd, &KINDS, &self.params, &NAMES, op)?;
        let cfg = AdamConfig {
            lr: sd.parse_meta("lr", op)?,
            betas: (sd.parse_meta("beta1", op)?, sd.parse_meta("beta2", op)?),
            eps: sd.parse_meta("eps", op)?,
            weight_decay: sd.parse_meta("weight_decay", op)?,
            amsgrad: sd.parse_meta("amsgrad", op)?,
            decoupled: sd.metadata(state::KIND) == Some(KINDS[1]),
        };
        validate(&cfg, op)?;
        let mut found = Vec::with_capacity(self.params.len());
        for (i, p) in self.params.iter().enumerate() {
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
        for (e, p) in found.into_iter().zip(&self.params) {
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
        self.cfg = cfg;
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
    /// Creates the optimizer (`cfg.decoupled` is set).
    pub fn new(params: Vec<Tensor>, cfg: AdamConfig) -> Result<Self> {
        let cfg = AdamConfig {
            decoupled: true,
            ..cfg
        };
        validate(&cfg, "AdamW")?;
        Adam::new(params, cfg).map(AdamW)
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
    fn lr(&self) -> f64 {
        self.0.lr()
    }
    fn set_lr(&mut self, lr: f64) {
        self.0.set_lr(lr)
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
