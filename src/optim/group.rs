//! Parameter groups, PyTorch's `param_groups`: each group holds its parameters and a full
//! copy of the optimizer's options ([`Group`]); a group is described by a [`ParamGroup`]
//! whose unset options fall back to the optimizer's defaults. Also the group part of an
//! optimizer state dict (`param_groups.<g>.*` metadata) and its structure checks on load.

use crate::checkpoint::StateDict;
use crate::{Result, Tensor, bail};

/// A parameter group to add to an optimizer (PyTorch's `{"params": [...], "lr": ...}` dict):
/// the options left unset take the optimizer's defaults. An option the optimizer does not have
/// (`betas` for SGD, `momentum` for Adam) is refused with `InvalidArgument`.
///
/// ```
/// # use tapegrad::{Tensor, DType, optim::*};
/// let w = Tensor::zeros(&[3], DType::F32)?.requires_grad_(true)?;
/// let b = Tensor::zeros(&[1], DType::F32)?.requires_grad_(true)?;
/// let opt = Sgd::with_groups(
///     SgdConfig::new(0.1).momentum(0.9),
///     vec![ParamGroup::new(vec![w]).weight_decay(1e-4), ParamGroup::new(vec![b]).lr(0.01)],
/// )?;
/// assert_eq!(opt.lrs(), vec![0.1, 0.01]);
/// assert_eq!(opt.param_groups()[0].config.momentum, 0.9);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug, Default)]
#[non_exhaustive]
pub struct ParamGroup {
    /// The group's parameters.
    pub params: Vec<Tensor>,
    /// Learning rate.
    pub lr: Option<f64>,
    /// Weight decay (L2, decoupled for AdamW).
    pub weight_decay: Option<f64>,
    /// SGD momentum.
    pub momentum: Option<f64>,
    /// SGD dampening.
    pub dampening: Option<f64>,
    /// SGD Nesterov momentum.
    pub nesterov: Option<bool>,
    /// Adam (beta1, beta2).
    pub betas: Option<(f64, f64)>,
    /// Adam eps.
    pub eps: Option<f64>,
    /// Adam AMSGrad.
    pub amsgrad: Option<bool>,
    /// Maximize the objective instead of minimizing it.
    pub maximize: Option<bool>,
}

macro_rules! setters {
    ($($(#[$m:meta])* $name:ident: $t:ty),* $(,)?) => {$(
        $(#[$m])*
        pub fn $name(mut self, v: $t) -> Self {
            self.$name = Some(v);
            self
        }
    )*};
}

impl ParamGroup {
    /// A group of `params` with every option at the optimizer's default.
    pub fn new(params: Vec<Tensor>) -> Self {
        ParamGroup {
            params,
            ..Default::default()
        }
    }
    setters! {
        /// Sets the group's learning rate.
        lr: f64,
        /// Sets the group's weight decay.
        weight_decay: f64,
        /// Sets the group's SGD momentum.
        momentum: f64,
        /// Sets the group's SGD dampening.
        dampening: f64,
        /// Sets the group's SGD Nesterov flag.
        nesterov: bool,
        /// Sets the group's Adam betas.
        betas: (f64, f64),
        /// Sets the group's Adam eps.
        eps: f64,
        /// Sets the group's AMSGrad flag.
        amsgrad: bool,
        /// Sets the group's maximize flag.
        maximize: bool,
    }
}

/// The options of one optimizer kind, resolved per group.
pub(crate) trait GroupOptions: Copy + std::fmt::Debug {
    /// The defaults overridden by the options `spec` sets; an option this optimizer lacks is
    /// an error.
    fn resolve(&self, spec: &ParamGroup, op: &'static str) -> Result<Self>;
    /// Refuses invalid values (PyTorch's `Invalid ...` checks).
    fn validate(&self, op: &'static str) -> Result<()>;
    /// The learning rate.
    fn lr(&self) -> f64;
    /// Sets the learning rate.
    fn set_lr(&mut self, lr: f64);
    /// The momentum OneCycleLR cycles (SGD momentum, Adam beta1).
    fn cycle_momentum(&self) -> f64;
    /// Sets that momentum.
    fn set_cycle_momentum(&mut self, m: f64);
    /// The options as (PyTorch name, value) metadata pairs.
    fn to_meta(&self) -> Vec<(&'static str, String)>;
    /// Reads the options written by [`to_meta`](GroupOptions::to_meta) under `prefix`.
    fn from_meta(sd: &StateDict, prefix: &str, op: &'static str) -> Result<Self>;
}

/// Names an option set on a group that the optimizer does not have.
pub(crate) fn refuse(op: &'static str, name: &str, set: bool) -> Result<()> {
    if set {
        bail!(
            InvalidArgument,
            op,
            "this optimizer has no \"{}\" option for a parameter group",
            name
        );
    }
    Ok(())
}

/// One live parameter group: its parameters and its options.
#[derive(Clone, Debug)]
pub struct Group<C> {
    params: Vec<Tensor>,
    /// The group's options (read or set them, e.g. the lr, as PyTorch's
    /// `param_groups[g]["lr"] = ...`; a scheduler drives the lr of every group).
    pub config: C,
    initial_lr: Option<f64>,
}

impl<C> Group<C> {
    /// The group's parameters.
    pub fn params(&self) -> &[Tensor] {
        &self.params
    }
    /// PyTorch's `group["initial_lr"]`: the lr when the first scheduler was attached (the
    /// base lr of every scheduler built on this optimizer), `None` before.
    pub fn initial_lr(&self) -> Option<f64> {
        self.initial_lr
    }
}

/// The [`Optimizer`](super::Optimizer) methods a grouped optimizer answers from its `groups`
/// field (a [`Groups`]): params, lrs, momenta; `$name` names the optimizer in errors.
macro_rules! group_plumbing {
    ($name:literal) => {
        fn params(&self) -> &[Tensor] {
            &self.groups.flat
        }
        fn lrs(&self) -> Vec<f64> {
            self.groups.lrs()
        }
        fn set_lrs(&mut self, lrs: &[f64]) -> Result<()> {
            self.groups.set_lrs(lrs, concat!($name, "::set_lrs"))
        }
        fn initial_lrs(&mut self) -> Vec<f64> {
            self.groups.initial_lrs()
        }
        fn momentums(&self) -> Option<Vec<f64>> {
            Some(self.groups.momentums())
        }
        fn set_momentums(&mut self, m: &[f64]) -> Result<()> {
            self.groups
                .set_momentums(m, concat!($name, "::set_momentums"))
        }
    };
}
pub(crate) use group_plumbing;

/// The groups of an optimizer, with the flat parameter list (group order, PyTorch's state
/// indices).
pub(crate) struct Groups<C> {
    pub(crate) groups: Vec<Group<C>>,
    pub(crate) flat: Vec<Tensor>,
    /// The group of each flat parameter.
    pub(crate) owner: Vec<usize>,
}

impl<C: GroupOptions> Groups<C> {
    /// Builds the groups from `specs` over `defaults`.
    pub(crate) fn new(defaults: &C, specs: Vec<ParamGroup>, op: &'static str) -> Result<Self> {
        defaults.validate(op)?;
        let mut g = Groups {
            groups: Vec::new(),
            flat: Vec::new(),
            owner: Vec::new(),
        };
        for s in specs {
            g.add(defaults, s, op)?;
        }
        Ok(g)
    }

    /// PyTorch's `add_param_group`: a parameter already in a group is refused.
    pub(crate) fn add(&mut self, defaults: &C, spec: ParamGroup, op: &'static str) -> Result<()> {
        let config = defaults.resolve(&spec, op)?;
        config.validate(op)?;
        if spec
            .params
            .iter()
            .any(|p| self.flat.iter().any(|q| q.is_same(p)))
        {
            bail!(
                InvalidArgument,
                op,
                "some parameters appear in more than one parameter group"
            );
        }
        let gi = self.groups.len();
        self.flat.extend(spec.params.iter().cloned());
        self.owner
            .extend(std::iter::repeat_n(gi, spec.params.len()));
        self.groups.push(Group {
            params: spec.params,
            config,
            initial_lr: None,
        });
        Ok(())
    }

    pub(crate) fn lrs(&self) -> Vec<f64> {
        self.groups.iter().map(|g| g.config.lr()).collect()
    }

    pub(crate) fn set_lrs(&mut self, lrs: &[f64], op: &'static str) -> Result<()> {
        self.check_len(lrs.len(), op)?;
        for (g, &lr) in self.groups.iter_mut().zip(lrs) {
            g.config.set_lr(lr);
        }
        Ok(())
    }

    /// PyTorch's `group.setdefault("initial_lr", group["lr"])` over the groups.
    pub(crate) fn initial_lrs(&mut self) -> Vec<f64> {
        self.groups
            .iter_mut()
            .map(|g| *g.initial_lr.get_or_insert(g.config.lr()))
            .collect()
    }

    pub(crate) fn momentums(&self) -> Vec<f64> {
        self.groups
            .iter()
            .map(|g| g.config.cycle_momentum())
            .collect()
    }

    pub(crate) fn set_momentums(&mut self, m: &[f64], op: &'static str) -> Result<()> {
        self.check_len(m.len(), op)?;
        for (g, &v) in self.groups.iter_mut().zip(m) {
            g.config.set_cycle_momentum(v);
        }
        Ok(())
    }

    fn check_len(&self, n: usize, op: &'static str) -> Result<()> {
        if n != self.groups.len() {
            bail!(
                InvalidArgument,
                op,
                "expected {} values, one per parameter group, got {}",
                self.groups.len(),
                n
            );
        }
        Ok(())
    }

    /// Writes `num_groups` and each group's `param_groups.<g>.params` (flat indices) and
    /// options.
    pub(crate) fn write(&self, sd: &mut StateDict) {
        sd.set_metadata("num_groups", self.groups.len().to_string());
        let mut next = 0usize;
        for (gi, g) in self.groups.iter().enumerate() {
            let idx: Vec<String> = (next..next + g.params.len())
                .map(|i| i.to_string())
                .collect();
            next += g.params.len();
            sd.set_metadata(format!("param_groups.{gi}.params"), idx.join(","));
            for (k, v) in g.config.to_meta() {
                sd.set_metadata(format!("param_groups.{gi}.{k}"), v);
            }
            if let Some(v) = g.initial_lr {
                sd.set_metadata(format!("param_groups.{gi}.initial_lr"), v.to_string());
            }
        }
    }

    /// Reads the group options of `sd` after checking its group structure against this
    /// optimizer's (PyTorch's errors); nothing is changed.
    pub(crate) fn read(&self, sd: &StateDict, op: &'static str) -> Result<Vec<(C, Option<f64>)>> {
        let n: usize = sd.parse_meta("num_groups", op)?;
        if n != self.groups.len() {
            bail!(
                InvalidArgument,
                op,
                "loaded state dict has a different number of parameter groups ({} vs {})",
                n,
                self.groups.len()
            );
        }
        let mut out = Vec::with_capacity(n);
        for (gi, g) in self.groups.iter().enumerate() {
            let key = format!("param_groups.{gi}.params");
            let saved = sd.metadata(&key).unwrap_or("");
            let count = saved.split(',').filter(|s| !s.is_empty()).count();
            if saved
                .split(',')
                .any(|s| !s.is_empty() && s.parse::<usize>().is_err())
            {
                bail!(InvalidArgument, op, "\"{}\" is not a list of indices", key);
            }
            if count != g.params.len() {
                bail!(
                    InvalidArgument,
                    op,
                    "loaded state dict contains a parameter group that doesn't match the size \
                     of optimizer's group (group {}: {} vs {} parameters)",
                    gi,
                    count,
                    g.params.len()
                );
            }
            let c = C::from_meta(sd, &format!("param_groups.{gi}."), op)?;
            c.validate(op)?;
            let k = format!("param_groups.{gi}.initial_lr");
            let initial = match sd.metadata(&k) {
                Some(_) => Some(sd.parse_meta(&k, op)?),
                None => None,
            };
            out.push((c, initial));
        }
        Ok(out)
    }

    /// Installs options read by [`read`](Groups::read).
    pub(crate) fn install(&mut self, configs: Vec<(C, Option<f64>)>) {
        for (g, (c, initial)) in self.groups.iter_mut().zip(configs) {
            g.config = c;
            g.initial_lr = initial;
        }
    }
}
