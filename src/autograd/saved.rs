//! Saved tensors (PyTorch's SavedVariable): the tensor plus the version it had when saved. At
//! unpack the version is compared; a mismatch is `SavedTensorModified` with PyTorch's message.

use crate::{Result, Tensor, bail};

pub(crate) struct SavedTensor {
    /// For inputs: the original tensor (so its *current* grad_fn can be reported). For outputs of
    /// the saving node: a shallow alias without autograd meta (no reference cycle).
    tensor: Tensor,
    version: u64,
    is_output: bool,
    output_nr: usize,
}

impl SavedTensor {
    /// Saves an input of the node being built.
    pub(crate) fn input(t: &Tensor) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t.clone(),
            is_output: false,
            output_nr: 0,
        }
    }
    /// Saves output `output_nr` of the node being built.
    pub(crate) fn output(t: &Tensor, output_nr: usize) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t.shallow(),
            is_output: true,
            output_nr,
        }
    }
    /// Saves a tensor that no one else can reach (a private clone): never stale.
    pub(crate) fn private(t: Tensor) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t,
            is_output: false,
            output_nr: 0,
        }
    }

    /// For an input saved by an in-place op *after* it wrote `target`: when the input shares
    /// `target`'s version counter (`x.pow_(&x)`, `x.addcmul_(&v, &v)` with `v` a view of `x`), it
    /// really was captured before the write, at version `before`, so backward reports the
    /// modification (PyTorch's behaviour) instead of reading the overwritten values.
    pub(crate) fn saved_before_write(mut self, target: &Tensor, before: u64) -> SavedTensor {
        if !self.is_output && self.tensor.0.version.same(&target.0.version) {
            self.version = before;
        }
        self
    }

    /// The saved tensor, checked against in-place modification. `owner` is the saving node's
    /// name (reported for saved outputs).
    pub(crate) fn unpack(&self, owner: &std::sync::Arc<super::Node>) -> Result<Tensor> {
        let cur = self.tensor.version();
        if cur != self.version {
            let t = &self.tensor;
            let node = if self.is_output {
                Some((self.output_nr, owner.name.to_string()))
            } else {
                t.grad_fn_checked()
                    .ok()
                    .flatten()
                    .map(|n| (t.output_nr(), n.name.to_string()))
            };
            let which = match node {
                Some((nr, name)) => format!(", which is output {} of {},", nr, name),
                None => String::new(),
            };
            bail!(
                SavedTensorModified,
                "backward",
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {:?}]{} is at version {}; expected version {} instead. Hint: enable anomaly detection to find the operation that failed to compute its gradient, with torch.autograd.set_detect_anomaly(True).",
                t.dtype().legacy_type_name(),
                t.shape(),
                which,
                cur,
                self.version
            );
        }
        if self.is_output && super::is_grad_enabled() {
            // create_graph: the saved output must lead back to the node that produced it.
            let t = self.tensor.shallow();
            {
                let mut m = t.0.meta.lock();
                m.grad_fn = Some(owner.clone());
                m.output_nr = self.output_nr;
            }
            return Ok(t);
        }
        Ok(self.tensor.clone())
    }
}
