//! Module checkpoints: a module's named parameters as a [`StateDict`] and safetensors files
//! whose keys are PyTorch's `state_dict()` keys (`0.weight`, `0.bias`, ...).

use super::Module;
use crate::checkpoint::StateDict;
use crate::{Result, bail};
use std::path::Path;

/// The module's named parameters (detached, sharing storage), PyTorch's `module.state_dict()`
/// for modules without buffers. Saved files carry the metadata `format = "pt"` like
/// `safetensors.torch.save_file` writes for PyTorch models.
pub fn state_dict(module: &dyn Module) -> Result<StateDict> {
    let mut sd = StateDict::new();
    for (name, p) in module.named_parameters() {
        sd.insert(name, &p)?;
    }
    sd.set_metadata("format", "pt");
    Ok(sd)
}

/// Copies `sd` into the module's parameters in place (under `no_grad`, bumping their
/// versions), like `module.load_state_dict(sd, strict=True)`.
///
/// Every name must match (no missing, no unexpected key), and every tensor must have the
/// parameter's shape (`ShapeMismatch`) and dtype (`DTypeMismatch`); all of it is checked
/// before the first copy, so on error no parameter has changed.
pub fn load_state_dict(module: &dyn Module, sd: &StateDict) -> Result<()> {
    let op = "load_state_dict";
    let params = module.named_parameters();
    let missing: Vec<&str> = params
        .iter()
        .filter(|(n, _)| sd.get(n).is_none())
        .map(|(n, _)| n.as_str())
        .collect();
    let unexpected: Vec<&str> = sd
        .names()
        .into_iter()
        .filter(|k| !params.iter().any(|(n, _)| n == k))
        .collect();
    if !missing.is_empty() || !unexpected.is_empty() {
        bail!(
            InvalidArgument,
            op,
            "Error(s) in loading state_dict: missing key(s) {:?}, unexpected key(s) {:?}",
            missing,
            unexpected
        );
    }
    for (n, p) in &params {
        let src = sd.get(n).expect("checked above: no missing key");
        if src.shape() != p.shape() {
            bail!(
                ShapeMismatch,
                op,
                "size mismatch for {}: copying a param with shape {:?} from checkpoint, the shape in current model is {:?}",
                n,
                src.shape(),
                p.shape()
            );
        }
        if src.dtype() != p.dtype() {
            bail!(
                DTypeMismatch,
                op,
                "dtype mismatch for {}: the checkpoint holds {}, the parameter is {}",
                n,
                src.dtype(),
                p.dtype()
            );
        }
    }
    let _g = crate::autograd::no_grad();
    for (n, p) in &params {
        p.copy_(sd.get(n).expect("checked above: no missing key"))?;
    }
    Ok(())
}

/// Writes the module's parameters to the safetensors file `path`.
///
/// ```
/// # use tapegrad::{DType, nn::{self, Linear, Module}};
/// let path = std::env::temp_dir().join("tapegrad_doc_linear.safetensors");
/// let a = Linear::new(3, 2, true, DType::F32)?;
/// nn::save(&path, &a)?;
/// let b = Linear::new(3, 2, true, DType::F32)?;
/// nn::load_into(&path, &b)?;
/// assert_eq!(a.weight.to_vec::<f32>()?, b.weight.to_vec::<f32>()?);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn save(path: impl AsRef<Path>, module: &dyn Module) -> Result<()> {
    state_dict(module)?.save(path)
}

/// Loads the safetensors file `path` into the module's parameters ([`load_state_dict`] rules:
/// names, shapes and dtypes must match; nothing changes on error).
pub fn load_into(path: impl AsRef<Path>, module: &dyn Module) -> Result<()> {
    load_state_dict(module, &StateDict::load(path)?)
}
