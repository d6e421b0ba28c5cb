//! `Sgd`: PyTorch's SGD with momentum, dampening, Nesterov and L2 weight decay.

use super::Optimizer;
use super::fused::{OptimStep, run_fused};
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
        }
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
    params: Vec<Tensor>,
    cfg: SgdConfig,
    bufs: Vec<Option<Tensor>>,
}

impl Sgd {
    /// Creates the optimizer (Nesterov needs momentum > 0 and dampening 0).
    pub fn new(params: Vec<Tensor>, cfg: SgdConfig) -> Result<Self> {
        validate(&cfg, "Sgd")?;
        let n = params.len();
        Ok(Sgd {
            params,
            cfg,
            bufs: vec![None; n],
        })
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
        for (i, p) in self.params.iter().enumerate() {
            let Some(g) = p.grad() else { continue };
            let c = self.cfg;
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
                first,
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
        let mut sd = state::header(KIND, self.params.len());
        sd.set_metadata("lr", c.lr.to_string());
        sd.set_metadata("momentum", c.momentum.to_string());
        sd.set_metadata("dampening", c.dampening.to_string());
        sd.set_metadata("weight_decay", c.weight_decay.to_string());
        sd.set_metadata("nesterov", c.nesterov.to_string());
        for (i, b) in self.bufs.iter().enumerate() {
            if let Some(b) = b {
                sd.insert(state::key(i, BUF), b)?;
            }
        }
        Ok(sd)
    }
    fn load_state_dict(&mut self, sd: &StateDict) -> Result<()> {
        let op = "Sgd::load_state_dict";
        state::check_layout(sd, &[KIND], &self.params, &[BUF], op)?;
        let cfg = SgdConfig {
            lr: sd.parse_meta("lr", op)?,
            momentum: sd.parse_meta("momentum", op)?,
            dampening: sd.parse_meta("dampening", op)?,
            weight_decay: sd.parse_meta("weight_decay", op)?,
            nesterov: sd.parse_meta("nesterov", op)?,
        };
        validate(&cfg, op)?;
        let mut found = Vec::with_capacity(self.params.len());
        for (i, p) in self.params.iter().enumerate() {
            found.push(state::get_like(sd, i, BUF, p, op)?);
        }
        let mut bufs = Vec::with_capacity(found.len());
        for (b, p) in found.iter().zip(&self.params) {
            bufs.push(match b {
                Some(b) => Some(state::own_copy(b, p)?),
                None => None,
            });
        }
        self.cfg = cfg;
        self.bufs = bufs;
        Ok(())
    }
}
