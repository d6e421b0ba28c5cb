//! Saved tensors (PyTorch's SavedVariable): the tensor plus the version it had when saved. At
//! unpack the version is compared; a mismatch is `SavedTensorModified` with PyTorch's message.

use crate::layout::Layout;
use crate::{Result, Tensor, bail};

pub(crate) struct SavedTensor {
    /// For inputs: the original tensor (so its *current* grad_fn can be reported). For outputs of
    /// the saving node: a shallow alias without autograd meta (no reference cycle).
    tensor: Tensor,
    version: u64,
    is_output: bool,
    output_nr: usize,
    /// For an output of an in-place op on a view: the base's CopySlices node (weak, no cycle)
    /// and the base/view geometries, so a `create_graph` unpack leads back through the base's
    /// new history like the view's regenerated grad_fn does (PyTorch's `is_inplace_on_view`).
    inplace_view: Option<(std::sync::Weak<super::Node>, Layout, Layout)>,
}

impl SavedTensor {
    /// Saves an input of the node being built.
    pub(crate) fn input(t: &Tensor) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t.clone(),
            is_output: false,
            output_nr: 0,
            inplace_view: None,
        }
    }
    /// Saves output `output_nr` of the node being built.
    pub(crate) fn output(t: &Tensor, output_nr: usize) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t.shallow(),
            is_output: true,
            output_nr,
            inplace_view: None,
        }
    }
    /// Saves a tensor that no one else can reach (a private clone): never stale.
    pub(crate) fn private(t: Tensor) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t,
            is_output: false,
            output_nr: 0,
            inplace_view: None,
        }
    }

    /// Marks a saved output of an in-place op on a view (see `inplace_view`).
    pub(crate) fn set_inplace_view(
        &mut self,
        copy_slices: &std::sync::Arc<super::Node>,
        base: Layout,
        view: Layout,
    ) {
        if self.is_output {
            self.inplace_view = Some((std::sync::Arc::downgrade(copy_slices), base, view));
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
            let regenerated = self.inplace_view.as_ref().and_then(|(cs, base, view)| {
                let cs = cs.upgrade()?;
                let bw = super::view::AsStridedBackward {
                    name: "AsStridedBackward0",
                    base: base.clone(),
                    view: view.clone(),
                };
                Some(super::Node::new(
                    Box::new(bw),
                    smallvec::smallvec![Some(super::Edge {
                        node: cs,
                        input_nr: 0,
                    })],
                    vec![],
                    smallvec::smallvec![super::node::output_meta(&t)],
                ))
            });
            {
                let mut m = t.0.meta.lock();
                match regenerated {
                    Some(n) => {
                        m.grad_fn = Some(n);
                        m.output_nr = 0;
                    }
                    None => {
                        m.grad_fn = Some(owner.clone());
                        m.output_nr = self.output_nr;
                    }
                }
            }
            return Ok(t);
        }
        Ok(self.tensor.clone())
    }
}
