//! Optimizer checkpoints: the state-dict layout shared by the optimizers (PyTorch's
//! `optimizer.state_dict()` flattened to safetensors keys `state.<i>.<name>` plus hyper-parameters
//! in the metadata) and the checks that run before any state is replaced; optimizer checkpoints
//! that also carry a learning-rate scheduler's state ([`save_with_scheduler`]).

use super::{LrScheduler, Optimizer, SchedulerState};
use crate::checkpoint::StateDict;
use crate::{Result, Tensor, bail};
use std::path::Path;

/// Metadata key naming the optimizer that wrote a state dict.
pub(crate) const KIND: &str = "optimizer";

/// The key of state `name` of parameter `i`.
pub(crate) fn key(i: usize, name: &str) -> String {
    format!("state.{i}.{name}")
}

/// Starts a state dict for `kind` over `n` parameters.
pub(crate) fn header(kind: &str, n: usize) -> StateDict {
    let mut sd = StateDict::new();
    sd.set_metadata(KIND, kind);
    sd.set_metadata("num_params", n.to_string());
    sd
}

/// Checks the optimizer kind, the parameter count and that every key is `state.<i>.<name>` with
/// `i < params.len()` and `name` in `names`.
pub(crate) fn check_layout(
    sd: &StateDict,
    kinds: &[&str],
    params: &[Tensor],
    names: &[&str],
    op: &'static str,
) -> Result<()> {
    let kind = sd.metadata(KIND).unwrap_or("<none>");
    if !kinds.contains(&kind) {
        bail!(
            InvalidArgument,
            op,
            "the state dict was written by optimizer \"{}\", expected one of {:?}",
            kind,
            kinds
        );
    }
    let n: usize = sd.parse_meta("num_params", op)?;
    if n != params.len() {
        bail!(
            InvalidArgument,
            op,
            "loaded state dict has {} parameters, the optimizer has {}",
            n,
            params.len()
        );
    }
    for k in sd.names() {
        let ok = k
            .strip_prefix("state.")
            .and_then(|r| r.split_once('.'))
            .is_some_and(|(i, name)| {
                i.parse::<usize>().is_ok_and(|i| i < n) && names.contains(&name)
            });
        if !ok {
            bail!(
                InvalidArgument,
                op,
                "unexpected key \"{}\" in optimizer state dict",
                k
            );
        }
    }
    Ok(())
}

/// State `name` of parameter `i`, checked against the parameter's shape and dtype.
pub(crate) fn get_like(
    sd: &StateDict,
    i: usize,
    name: &str,
    p: &Tensor,
    op: &'static str,
) -> Result<Option<Tensor>> {
    let k = key(i, name);
    let Some(t) = sd.get(&k) else {
        return Ok(None);
    };
    if t.shape() != p.shape() {
        bail!(
            ShapeMismatch,
            op,
            "\"{}\" has shape {:?}, parameter {} has shape {:?}",
            k,
            t.shape(),
            i,
            p.shape()
        );
    }
    if t.dtype() != p.dtype() {
        bail!(
            DTypeMismatch,
            op,
            "\"{}\" has dtype {}, parameter {} is {}",
            k,
            t.dtype(),
            i,
            p.dtype()
        );
    }
    Ok(Some(t.clone()))
}

/// A private contiguous copy of `src` laid out like parameter `p` (state buffers must be
/// contiguous and must not alias the state dict's tensors).
pub(crate) fn own_copy(src: &Tensor, p: &Tensor) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    let t = Tensor::zeros(&p.shape(), p.dtype())?;
    t.copy_(src)?;
    Ok(t)
}

/// Writes the optimizer's state to the safetensors file `path`.
///
/// ```
/// # use tapegrad::{Tensor, optim::{self, Adam, AdamConfig, Optimizer}};
/// let path = std::env::temp_dir().join("tapegrad_doc_adam.safetensors");
/// let p = Tensor::from_vec(vec![1.0f64], &[1])?.requires_grad_(true)?;
/// let mut opt = Adam::new(vec![p.clone()], AdamConfig::adam(0.1))?;
/// p.mul(&p)?.sum()?.backward()?;
/// opt.step()?;
/// optim::save(&path, &opt)?;
/// let mut fresh = Adam::new(vec![p.clone()], AdamConfig::adam(0.5))?;
/// optim::load_into(&path, &mut fresh)?;
/// assert_eq!(fresh.state(0).unwrap().0, 1);
/// assert_eq!(fresh.lr(), 0.1);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn save(path: impl AsRef<Path>, opt: &dyn Optimizer) -> Result<()> {
    opt.state_dict()?.save(path)
}

/// Restores the optimizer's state and hyper-parameters from the safetensors file `path`
/// ([`Optimizer::load_state_dict`] rules: nothing changes on error).
pub fn load_into(path: impl AsRef<Path>, opt: &mut dyn Optimizer) -> Result<()> {
    opt.load_state_dict(&StateDict::load(path)?)
}

/// Writes the optimizer's state and the scheduler's state ([`SchedulerState::insert_into`]:
/// `scheduler.*` metadata entries) to the safetensors file `path`, so a resumed run continues
/// both the parameters' trajectory and the lr schedule. The file is an ordinary optimizer
/// checkpoint: [`load_into`] reads it too (ignoring the scheduler entries).
///
/// ```
/// # use tapegrad::{Tensor, optim::*};
/// let path = std::env::temp_dir().join("tapegrad_doc_sched.safetensors");
/// let p = Tensor::from_vec(vec![1.0f64], &[1])?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
/// let mut sched = StepLr::new(2, 0.5);
/// for _ in 0..3 { opt.step()?; sched.step(&mut opt)?; }
/// save_with_scheduler(&path, &opt, &sched)?;
/// let mut opt2 = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
/// let mut sched2 = StepLr::new(2, 0.5);
/// load_with_scheduler(&path, &mut opt2, &mut sched2)?;
/// assert_eq!(sched2.state().last_epoch, 3);
/// sched2.step(&mut opt2)?; // epoch 4: the second decay
/// assert_eq!(opt2.lr(), 0.025);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn save_with_scheduler(
    path: impl AsRef<Path>,
    opt: &dyn Optimizer,
    sched: &dyn LrScheduler,
) -> Result<()> {
    let mut sd = opt.state_dict()?;
    sched.state().insert_into(&mut sd);
    sd.save(path)
}

/// Restores the optimizer's and the scheduler's state from the safetensors file `path` written
/// by [`save_with_scheduler`]. All or nothing: a file without scheduler state, a state of
/// another scheduler kind ([`LrScheduler::load_state`]) or an optimizer state that does not
/// fit ([`Optimizer::load_state_dict`]) is an error, and then neither object has changed.
///
/// ```
/// # use tapegrad::{ErrorKind, Tensor, optim::*};
/// let path = std::env::temp_dir().join("tapegrad_doc_no_sched.safetensors");
/// let p = Tensor::from_vec(vec![1.0f64], &[1])?.requires_grad_(true)?;
/// let mut opt = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
/// save(&path, &opt)?; // optimizer state only
/// let mut sched = StepLr::new(2, 0.5);
/// let e = load_with_scheduler(&path, &mut opt, &mut sched).unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::InvalidArgument);
/// assert_eq!(sched.state().last_epoch, 0);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn load_with_scheduler(
    path: impl AsRef<Path>,
    opt: &mut dyn Optimizer,
    sched: &mut dyn LrScheduler,
) -> Result<()> {
    let sd = StateDict::load(path)?;
    let new = SchedulerState::from_state_dict(&sd)?;
    let old = sched.state();
    sched.load_state(&new)?;
    if let Err(e) = opt.load_state_dict(&sd) {
        // `old` came from this scheduler, so putting it back cannot fail
        sched.load_state(&old)?;
        return Err(e);
    }
    Ok(())
}
