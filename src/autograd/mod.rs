//! Autograd: define-by-run recording of a graph of nodes (`node.rs`), an iterative engine
//! ([`backward`], [`grad`]), saved tensors with version checks, grad modes, the view +
//! in-place machinery (CopySlices, lazy view regeneration) that makes in-place ops through views
//! differentiable like in PyTorch, and user-defined differentiable ops ([`Function`],
//! `function.rs`: PyTorch's `autograd.Function`, recorded through the same rules), activation
//! checkpointing ([`checkpoint`], `activation_checkpoint.rs`: saves deferred and recomputed),
//! anomaly mode ([`detect_anomaly`], `anomaly.rs`: creation backtraces, NaN/inf checks, the
//! node context of backward errors) and the handles that remove hooks ([`RemovableHandle`]).
//!
//! Ops talk to this module through `record` (out-of-place ops), `check_inplace` +
//! `record_inplace` (in-place ops) and `view.rs` (view ops). The engine knows no specific op: the
//! built-in functions that need kernels (AccumulateGrad, CopySlices, as_strided backward, view
//! regeneration) live in `builtin/` and reach the kernels through the backend's front door.

mod activation_checkpoint;
mod anomaly;
mod builtin;
mod engine;
mod function;
mod grad_mode;
mod hook_handle;
mod meta;
mod node;
mod options;
mod saved;
mod tensor_api;
pub(crate) mod view;

pub use crate::testing::gradcheck::{GradcheckOptions, gradcheck, gradgradcheck};
pub use activation_checkpoint::checkpoint;
pub use anomaly::{AnomalyGuard, detect_anomaly, is_anomaly_enabled, set_detect_anomaly};
pub(crate) use builtin::{AsStridedBackward, MultiViewBackward, ScalarGrad};
pub use engine::{backward, grad};
pub use function::{Function, FunctionCtx, FunctionGradCtx};
pub use grad_mode::{GradModeGuard, enable_grad, is_grad_enabled, no_grad, set_grad_enabled};
pub use hook_handle::RemovableHandle;
pub(crate) use hook_handle::next_hook_id;
pub(crate) use meta::AutogradMeta;
pub use node::NodeRef;
pub(crate) use node::{Backward, BackwardCtx, Edge, Grads, Node, output_grad};
pub use options::{BackwardOptions, GradOptions};
pub(crate) use saved::SavedTensor;
pub(crate) use view::{check_inplace, record, record_inplace};
