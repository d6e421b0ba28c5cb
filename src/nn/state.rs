//! A module's state: `state_dict` (parameters and persistent buffers under PyTorch's keys),
//! `load_state_dict(sd, strict)` with `copy_` semantics, and the in-place `to(dtype)`.

use super::module::{IncompatibleKeys, Module};
use super::walk::{join, modules, own};
use crate::checkpoint::StateDict;
use crate::{DType, Result, Tensor, bail};

/// Every (key, tensor) `state_dict` holds: per module (pre-order), its parameters, then its
/// persistent buffers. Tied tensors appear under each of their keys, as in PyTorch.
fn entries(m: &dyn Module) -> Vec<(String, Tensor)> {
    let mut mods = Vec::new();
    modules(m, String::new(), &mut mods);
    let mut out = Vec::new();
    for (prefix, m) in mods {
        let o = own(m);
        for (n, p) in o.params {
            out.push((join(&prefix, &n), p.clone()));
        }
        for (n, b, persistent) in o.buffers {
            if persistent {
                out.push((join(&prefix, &n), b.clone()));
            }
        }
    }
    out
}

pub(crate) fn state_dict(m: &dyn Module) -> Result<StateDict> {
    let mut sd = StateDict::new();
    for (k, t) in entries(m) {
        sd.insert(k, &t)?;
    }
    sd.set_metadata("format", "pt");
    Ok(sd)
}

pub(crate) fn load_state_dict(
    m: &dyn Module,
    sd: &StateDict,
    strict: bool,
) -> Result<IncompatibleKeys> {
    let op = "Module::load_state_dict";
    let ours = entries(m);
    let keys = IncompatibleKeys {
        missing_keys: ours
            .iter()
            .filter(|(k, _)| sd.get(k).is_none())
            .map(|(k, _)| k.clone())
            .collect(),
        unexpected_keys: sd
            .names()
            .into_iter()
            .filter(|k| !ours.iter().any(|(n, _)| n == k))
            .map(str::to_string)
            .collect(),
    };
    if strict && (!keys.missing_keys.is_empty() || !keys.unexpected_keys.is_empty()) {
        bail!(
            InvalidArgument,
            op,
            "Error(s) in loading state_dict for {}: missing key(s) {:?}, unexpected key(s) {:?}",
            m.type_name(),
            keys.missing_keys,
            keys.unexpected_keys
        );
    }
    let pairs: Vec<(&String, &Tensor, &Tensor)> = ours
        .iter()
        .filter_map(|(k, t)| sd.get(k).map(|s| (k, t, s)))
        .collect();
    for (k, t, src) in &pairs {
        if src.shape() != t.shape() {
            bail!(
                ShapeMismatch,
                op,
                "size mismatch for {}: copying a param with shape {:?} from checkpoint, the shape in current model is {:?}",
                k,
                src.shape(),
                t.shape()
            );
        }
        if src.is_sparse() || t.is_sparse() {
            bail!(
                Unsupported,
                op,
                "{}: sparse tensors cannot be loaded into a module",
                k
            );
        }
    }
    let _g = crate::autograd::no_grad();
    for (_, t, src) in pairs {
        t.copy_(src)?;
    }
    Ok(keys)
}

pub(crate) fn to_dtype(m: &dyn Module, dtype: DType) -> Result<()> {
    let op = "Module::to";
    if !dtype.is_differentiable() {
        bail!(
            InvalidArgument,
            op,
            "Module::to only accepts floating point or complex dtypes, but got desired dtype={}",
            dtype
        );
    }
    let tensors = m.parameters().into_iter().chain(m.buffers());
    for t in tensors {
        if t.dtype().is_differentiable() {
            t.retype_(dtype, op)?;
            if let Some(g) = t.grad() {
                g.retype_(dtype, op)?;
            }
        }
    }
    Ok(())
}
