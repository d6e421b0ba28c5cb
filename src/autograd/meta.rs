//! Per-tensor autograd metadata (PyTorch's AutogradMeta / DifferentiableViewMeta).

use super::builtin::AsStridedBackward;
use super::node::{Edge, Hook, Node};
use crate::Tensor;
use std::sync::{Arc, Weak};

/// How a view was created; decides whether in-place ops on it may rebase history.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum CreationMeta {
    Default,
    NoGradMode,
    MultiOutputNode,
}

impl CreationMeta {
    /// PyTorch's `propagate_creation_meta(prev, new)`.
    pub(crate) fn propagate(prev: CreationMeta, new: CreationMeta) -> CreationMeta {
        if new == CreationMeta::Default {
            prev
        } else {
            new
        }
    }
}

/// View bookkeeping of a differentiable view.
pub(crate) struct ViewMeta {
    /// The root base (never itself a view).
    pub(crate) base: Tensor,
    pub(crate) creation: CreationMeta,
    /// Version of the shared counter when `grad_fn` was last set or regenerated.
    pub(crate) attr_version: u64,
    /// The view's own history while no one has asked for it: a view that is written in place
    /// right away (`y.narrow(..).mul_(2)`) never needs it, so its node is only built when its
    /// `grad_fn` is first read at the same version (see `view::grad_fn_of`; fast path F5 of
    /// `builtin/mod.rs`).
    pub(crate) pending: Option<PendingView>,
}

/// A strided view's history, not yet a node: its formula, the edge to its input and the
/// sequence number taken when the view was made.
pub(crate) struct PendingView {
    pub(crate) seq: u64,
    pub(crate) edge: Edge,
    pub(crate) formula: AsStridedBackward,
}

/// A hook run on a leaf after a gradient was accumulated into its `.grad`.
pub(crate) type PostAccumulateHook = Arc<dyn Fn(&Tensor) -> crate::Result<()> + Send + Sync>;

#[derive(Default)]
pub(crate) struct AutogradMeta {
    /// The leaf flag set by `requires_grad_`.
    pub(crate) requires_grad: bool,
    pub(crate) grad: Option<Tensor>,
    pub(crate) grad_fn: Option<Arc<Node>>,
    pub(crate) output_nr: usize,
    pub(crate) grad_accumulator: Option<Weak<Node>>,
    pub(crate) retains_grad: bool,
    /// Hooks of a leaf (run before accumulation), with their ids (for `RemovableHandle`).
    pub(crate) hooks: Vec<(u64, Hook)>,
    /// Hooks of a leaf run after its `.grad` was updated (`register_post_accumulate_grad_hook`), with
    /// their ids.
    pub(crate) post_accumulate_hooks: Vec<(u64, PostAccumulateHook)>,
    pub(crate) view: Option<Box<ViewMeta>>,
}

impl AutogradMeta {
    /// No autograd identity: not a view, no history, no leaf flag.
    pub(crate) fn is_plain(&self) -> bool {
        self.view.is_none() && self.grad_fn.is_none() && !self.requires_grad
    }

    /// Makes `node` (none: no history) this tensor's history as its forward output `output_nr`;
    /// a view records the version (`version`, read by the caller) its history is current for.
    pub(crate) fn set_history(&mut self, node: Option<Arc<Node>>, output_nr: usize, version: u64) {
        self.grad_fn = node;
        self.output_nr = output_nr;
        if let Some(v) = self.view.as_mut() {
            v.attr_version = version;
            v.pending = None;
        }
    }
}

impl Drop for AutogradMeta {
    fn drop(&mut self) {
        // (a tensor's history may be the only handle on a long chain: see `release_node`)
        if let Some(n) = self.grad_fn.take() {
            super::node::release_node(n);
        }
    }
}
