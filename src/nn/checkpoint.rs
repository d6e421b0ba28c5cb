//! Module checkpoints as safetensors files whose keys are PyTorch's `state_dict()` keys
//! (`0.weight`, `layers.1.attn.q.bias`, ...): [`save`] writes [`Module::state_dict`], [`load_into`]
//! reads a file through [`Module::load_state_dict`] (strict).

use super::Module;
use crate::Result;
use crate::checkpoint::StateDict;
use std::path::Path;

/// Writes the module's parameters and persistent buffers to the safetensors file `path`.
///
/// ```
/// # use tapegrad::{DType, nn::{self, Linear, Module}};
/// let path = std::env::temp_dir().join("tapegrad_doc_linear.safetensors");
/// let a = Linear::new(3, 2, true, DType::F32)?;
/// nn::save(&path, &a)?;
/// let b = Linear::new(3, 2, true, DType::F64)?;
/// nn::load_into(&path, &b)?; // cast to b's dtype, as copy_ does
/// assert_eq!(a.weight.to_dtype(DType::F64)?.to_vec::<f64>()?, b.weight.to_vec::<f64>()?);
/// # std::fs::remove_file(&path).ok();
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn save(path: impl AsRef<Path>, module: &dyn Module) -> Result<()> {
    module.state_dict()?.save(path)
}

/// Loads the safetensors file `path` into the module ([`Module::load_state_dict`] with
/// `strict`: every key must match, shapes must match, values are cast; nothing changes on
/// error).
pub fn load_into(path: impl AsRef<Path>, module: &dyn Module) -> Result<()> {
    module.load_state_dict(&StateDict::load(path)?, true)?;
    Ok(())
}
