//! Saved tensors (PyTorch's SavedVariable): the tensor plus the version it had when saved. At
//! unpack the version is compared; a mismatch is `SavedTensorModified` with PyTorch's message.
//! Inside a checkpointed function (`activation_checkpoint.rs`) a saved tensor holds a
//! placeholder (shape and dtype over no data, the same version counter) and reads the
//! recomputed tensor at unpack.

use crate::layout::Layout;
use crate::{Result, Tensor, bail};

pub(crate) struct SavedTensor {
    /// A shallow alias (same storage, layout and version counter, no autograd meta) for inputs
    /// and outputs of the saving node; the tensor itself for private saves.
    tensor: Tensor,
    version: u64,
    is_output: bool,
    output_nr: usize,
    /// For an output of an in-place op on a view: the base's CopySlices node (weak, no cycle)
    /// and the base/view geometries, so a `create_graph` unpack leads back through the base's
    /// new history like the view's regenerated grad_fn does (PyTorch's `is_inplace_on_view`).
    /// Rare, so boxed: a saved tensor stays small to build and move.
    inplace_view: Option<Box<(std::sync::Weak<super::Node>, Layout, Layout)>>,
    /// For inputs: the original tensor, held weakly, and its gradient edge when saved. A saved
    /// input must not keep its tensor's autograd meta alive: an in-place op that later writes the
    /// tensor (or its base) makes a node downstream of the saving one its grad_fn, and a strong
    /// handle would close a reference cycle (tensor -> grad_fn -> ... -> saving node -> tensor;
    /// `x.mul_(&x)`, `x.mul_(&(&x * &w))`) that is never freed — PyTorch leaks those. Unpack
    /// returns the original while it lives, else the alias with the saved edge.
    origin: Option<Origin>,
    /// Set when saved inside a checkpointed function: `tensor` is then a placeholder and the
    /// values come from the recomputation.
    deferred: Option<Box<super::activation_checkpoint::Deferred>>,
}

struct Origin {
    tensor: std::sync::Weak<crate::tensor::TensorImpl>,
    grad_fn: Option<(std::sync::Arc<super::Node>, usize)>,
    requires_grad: bool,
    /// Shares the version counter of the in-place op that saved it (`x.mul_(&x)`): if the tensor
    /// is gone at a failing unpack, that op was its last writer and names it in the error.
    written_by_owner: bool,
}

impl Drop for Origin {
    fn drop(&mut self) {
        // (the saved edge may be the only handle on a long chain: see `release_node`)
        if let Some((n, _)) = self.grad_fn.take() {
            super::node::release_node(n);
        }
    }
}

/// A tensor with `t`'s shape and dtype and version counter over a one-element buffer (zero
/// strides): what a deferred saved tensor keeps for its checks and messages.
fn placeholder(t: &Tensor) -> Tensor {
    let dtype = t.dtype();
    let storage = crate::Storage::zeroed(dtype.size())
        .expect("internal: a one-element buffer is held inline");
    let sizes = t.shape();
    let layout = Layout::new(&sizes[..], &vec![0usize; sizes.len()][..], 0);
    Tensor::from_parts_with_version(storage, layout, dtype, t.0.version.share())
}

impl SavedTensor {
    /// Defers `self` to a running checkpoint (if any): keeps a placeholder instead of the data.
    fn checkpointed(mut self) -> SavedTensor {
        if let Some(d) = super::activation_checkpoint::on_save(&self.tensor) {
            self.tensor = placeholder(&self.tensor);
            self.deferred = Some(Box::new(d));
        }
        self
    }

    /// Saves an input of the node being built.
    pub(crate) fn input(t: &Tensor) -> SavedTensor {
        Self::input_kept(t).checkpointed()
    }

    /// [`SavedTensor::input`], never deferred to a checkpoint (a checkpoint's own inputs).
    pub(crate) fn input_kept(t: &Tensor) -> SavedTensor {
        let grad_fn = t
            .grad_fn_checked()
            .ok()
            .flatten()
            .map(|n| (n, t.output_nr()));
        SavedTensor {
            version: t.version(),
            tensor: t.shallow(),
            is_output: false,
            output_nr: 0,
            inplace_view: None,
            origin: Some(Origin {
                tensor: std::sync::Arc::downgrade(&t.0),
                requires_grad: grad_fn.is_none() && t.requires_grad(),
                grad_fn,
                written_by_owner: false,
            }),
            deferred: None,
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
            origin: None,
            deferred: None,
        }
        .checkpointed()
    }
    /// Saves a tensor that no one else can reach (a private clone): never stale.
    pub(crate) fn private(t: Tensor) -> SavedTensor {
        SavedTensor {
            version: t.version(),
            tensor: t,
            is_output: false,
            output_nr: 0,
            inplace_view: None,
            origin: None,
            deferred: None,
        }
        .checkpointed()
    }

    /// Marks a saved output of an in-place op on a view (see `inplace_view`).
    pub(crate) fn set_inplace_view(
        &mut self,
        copy_slices: &std::sync::Weak<super::Node>,
        base: Layout,
        view: Layout,
    ) {
        if self.is_output {
            self.inplace_view = Some(Box::new((copy_slices.clone(), base, view)));
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

    /// Called for every tensor an in-place op on `target` saves: an input sharing `target`'s
    /// version counter (`target` itself or an alias of it) is stale once the op bumps it.
    pub(crate) fn mark_written_by_owner(mut self, target: &Tensor) -> SavedTensor {
        if let Some(o) = &mut self.origin {
            o.written_by_owner = self.tensor.0.version.same(&target.0.version);
        }
        self
    }

    /// The input tensor: the original while it lives, else the alias carrying the autograd
    /// state the original had when saved.
    fn original(&self, o: &Origin, data: &Tensor) -> Tensor {
        if let Some(t) = o.tensor.upgrade() {
            return Tensor(t);
        }
        let t = data.shallow();
        {
            let mut m = t.0.meta.lock();
            m.requires_grad = o.requires_grad;
            if let Some((n, nr)) = &o.grad_fn {
                m.grad_fn = Some(n.clone());
                m.output_nr = *nr;
            }
        }
        t
    }

    /// The saved tensor, checked against in-place modification. `owner` is the saving node's
    /// name (reported for saved outputs); `handle` is its `Arc`, which the in-place node inside
    /// a CopySlices does not have (the outputs it saved lead back through the CopySlices).
    pub(crate) fn unpack(
        &self,
        owner: &'static str,
        handle: Option<&std::sync::Arc<super::Node>>,
    ) -> Result<Tensor> {
        let cur = self.tensor.version();
        if cur != self.version {
            let t = &self.tensor;
            let node = if self.is_output {
                Some((self.output_nr, owner.to_string()))
            } else {
                let named = |t: Tensor| {
                    t.grad_fn_checked()
                        .ok()
                        .flatten()
                        .map(|n| (t.output_nr(), n.name.to_string()))
                };
                match &self.origin {
                    None => named(t.clone()),
                    Some(o) => match o.tensor.upgrade() {
                        Some(live) => named(Tensor(live)),
                        // gone since; its last writer was this in-place node
                        None if o.written_by_owner => Some((0, owner.to_string())),
                        None => None,
                    },
                }
            };
            let which = match node {
                Some((nr, name)) => format!(", which is output {} of {},", nr, name),
                None => String::new(),
            };
            bail!(
                SavedTensorModified,
                "backward",
                "one of the variables needed for gradient computation has been modified by an inplace operation: [{} {:?}]{} is at version {}; expected version {} instead. Hint: an in-place op (a method ending in `_`, or a compound assignment such as `+=`) wrote this tensor after it was saved for backward; use the out-of-place op, or apply the in-place one to a `copy()`.",
                t.dtype().legacy_type_name(),
                t.shape(),
                which,
                cur,
                self.version
            );
        }
        // (the data: the saved alias, or the recomputed tensor of a checkpoint)
        let data = match &self.deferred {
            None => std::borrow::Cow::Borrowed(&self.tensor),
            Some(d) => std::borrow::Cow::Owned(d.get(&self.tensor)?),
        };
        if self.is_output && super::is_grad_enabled() {
            // create_graph: the saved output must lead back to the node that produced it.
            let t = data.shallow();
            let regenerated = self.inplace_view.as_deref().and_then(|(cs, base, view)| {
                let cs = cs.upgrade()?;
                let bw = super::builtin::AsStridedBackward {
                    name: "AsStridedBackward0",
                    base: base.clone(),
                    view: view.clone(),
                };
                Some(super::Node::new(
                    bw,
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
                        m.grad_fn = handle.cloned();
                        m.output_nr = self.output_nr;
                    }
                }
            }
            return Ok(t);
        }
        Ok(match &self.origin {
            Some(o) => self.original(o, &data),
            None => data.into_owned(),
        })
    }
}
