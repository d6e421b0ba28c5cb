//! Graph nodes. A [`Node`] holds its [`Backward`] formula inline (only what it reads), the tensors
//! it saved (version-checked at unpack), one optional [`Edge`] per differentiable input, and the
//! shape/dtype of each forward output. Dropping a graph is iterative: every link that can chain
//! nodes (an edge, a tensor's `grad_fn`) is let go through [`release_node`], so a chain of a
//! million nodes drops without recursion, whichever way its links run.

use super::builtin::ScalarGrad;
use super::saved::SavedTensor;
use crate::layout::Dims;
use crate::{DType, Result, Tensor};
use parking_lot::Mutex;
use smallvec::SmallVec;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

static SEQS: crate::ids::IdSource = crate::ids::IdSource::new();
thread_local! {
    static LOCAL_SEQS: crate::ids::LocalBlock = const { std::cell::Cell::new((0, 0)) };
}

/// The next node sequence number of this thread (tape order).
pub(crate) fn next_seq() -> u64 {
    SEQS.next(&LOCAL_SEQS)
}

/// A hook on a tensor's gradient: may return a replacement gradient.
pub(crate) type Hook = Arc<dyn Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync>;

/// An edge to the `input_nr`-th gradient slot of `node`.
#[derive(Clone)]
pub(crate) struct Edge {
    pub(crate) node: Arc<Node>,
    pub(crate) input_nr: usize,
}

/// A node's edges, one per differentiable input: inline up to two (every unary and binary op),
/// so recording one does not allocate for them.
pub(crate) type Edges = SmallVec<[Option<Edge>; 2]>;

/// Shape and dtype of each forward output of a node: inline for one output.
pub(crate) type OutputMeta = SmallVec<[(Dims, DType); 1]>;

/// The (shape, dtype) entry of `t` for [`OutputMeta`], read under one lock without a `Vec`.
pub(crate) fn output_meta(t: &Tensor) -> (Dims, DType) {
    (Dims::from_slice(t.data_ref().layout.sizes()), t.dtype())
}

/// Gradients in and out of a formula, one per forward output / input: inline up to two, so a
/// backward step does not allocate for them.
pub(crate) type Grads = SmallVec<[Option<Tensor>; 2]>;

/// What a backward formula sees: its unpacked saved tensors and which inputs need gradients.
pub(crate) struct BackwardCtx<'a> {
    pub(crate) saved: &'a [Tensor],
    pub(crate) needs: &'a [bool],
    pub(crate) create_graph: bool,
    pub(crate) retain: bool,
    /// The formula may overwrite its (single) output gradient and return it as an input's
    /// gradient, provided no one else can observe that tensor: it is handed over, and the
    /// overwriting kernel checks it is the only handle (fast path F3 of `builtin/mod.rs`).
    /// Never set with `create_graph`.
    pub(crate) grad_owned: bool,
}

impl BackwardCtx<'_> {
    /// True if input `i` has an edge (its gradient will be used).
    pub(crate) fn needs(&self, i: usize) -> bool {
        self.needs.get(i).copied().unwrap_or(false)
    }
}

/// The derivative formula of one op. `grads[k]` is the gradient w.r.t. forward output `k`
/// (`None` = zero); returns one optional gradient per forward input.
pub(crate) trait Backward: Send + Sync + 'static {
    fn name(&self) -> &'static str;
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads>;
    /// The gradient for the only input as the output's gradient mapped by a real scalar, when
    /// that is all `apply` computes (the in-place scalar ops: `add_(1.0)`, `mul_(2.0)`). Lets
    /// CopySlices apply it to the view's region of a base gradient it owns, in place, with the
    /// values `apply` would give (fast path F2 of `builtin/mod.rs`).
    fn scalar_grad(&self) -> Option<ScalarGrad> {
        None
    }
}

/// The gradient of a one-output node's output. The engine never runs a formula whose output
/// gradients are all `None` (see [`super::engine::call_node`]), so it is always there.
#[inline]
pub(crate) fn output_grad(grads: Grads) -> Tensor {
    grads
        .into_iter()
        .next()
        .flatten()
        .expect("internal: a backward formula ran without an output gradient")
}

pub(crate) struct NodeState {
    pub(crate) saved: Vec<SavedTensor>,
    pub(crate) released: bool,
    /// Tensor hooks and retain_grad of this node's outputs (rare: boxed, so nodes stay small).
    pub(crate) hooks: Option<Box<NodeHooks>>,
}

impl NodeState {
    fn new(saved: Vec<SavedTensor>) -> Self {
        NodeState {
            saved,
            released: false,
            hooks: None,
        }
    }
}

/// Hooks keyed by forward-output number.
#[derive(Default, Clone)]
pub(crate) struct NodeHooks {
    /// Tensor hooks (run before the node's formula; may replace the gradient), with their
    /// ids (for `RemovableHandle`).
    pub(crate) pre: Vec<(usize, u64, Hook)>,
    /// Non-leaf outputs whose gradient accumulates into their `.grad` (`retain_grad`).
    pub(crate) retained: Vec<(usize, std::sync::Weak<crate::tensor::TensorImpl>)>,
    /// Where the node was created (anomaly mode only; does not set `has_hooks`).
    pub(crate) created: Option<Arc<super::anomaly::Creation>>,
}

/// One recorded operation in the graph. `Arc<Node<F>>` for a concrete formula `F` coerces to
/// `Arc<Node>` (`F = dyn Backward`), so recording a node is one allocation, formula included.
pub struct Node<F: ?Sized = dyn Backward> {
    pub(crate) seq: u64,
    pub(crate) name: &'static str,
    pub(crate) next: Edges,
    pub(crate) outputs: OutputMeta,
    pub(crate) state: Mutex<NodeState>,
    /// Whether the node was given saved tensors (fixed at creation: a backward step that has
    /// none to unpack or release skips `state`'s lock).
    pub(crate) saves: bool,
    /// Set once a tensor hook or `retain_grad` is added to `state` (the engine looks under the
    /// lock only then).
    pub(crate) has_hooks: AtomicBool,
    /// The derivative formula. `apply` takes it shared: passes over one retained graph on
    /// several threads may run it at once (it only reads itself; saved tensors are in `state`).
    pub(crate) formula: F,
}

/// What running a formula reads of its node besides the formula itself.
pub(crate) struct NodeParts<'a> {
    pub(crate) name: &'static str,
    pub(crate) n_in: usize,
    pub(crate) saves: bool,
    pub(crate) state: &'a Mutex<NodeState>,
    /// The node's own `Arc` (none for the in-place node inside a CopySlices).
    pub(crate) handle: Option<&'a Arc<Node>>,
}

impl<F: ?Sized> Node<F> {
    /// The parts a formula run reads, `handle` being this node's `Arc`.
    pub(crate) fn parts<'a>(&'a self, handle: Option<&'a Arc<Node>>) -> NodeParts<'a> {
        NodeParts {
            name: self.name,
            n_in: self.next.len(),
            saves: self.saves,
            state: &self.state,
            handle,
        }
    }
}

/// A formula run from inside another node (the in-place op inside a CopySlices): what
/// [`super::engine::run_formula`] reads of a node, without the fields the engine walks (edges,
/// output shapes, sequence number), which belong to the enclosing node.
pub(crate) struct InnerNode<F> {
    name: &'static str,
    n_in: usize,
    pub(crate) saves: bool,
    state: Mutex<NodeState>,
    pub(crate) formula: F,
}

impl<F: Backward> InnerNode<F> {
    /// `formula` for `n_in` inputs, with its saved tensors.
    pub(crate) fn new(formula: F, n_in: usize, saved: Vec<SavedTensor>) -> InnerNode<F> {
        InnerNode {
            name: formula.name(),
            n_in,
            saves: !saved.is_empty(),
            state: Mutex::new(NodeState::new(saved)),
            formula,
        }
    }

    pub(crate) fn n_in(&self) -> usize {
        self.n_in
    }

    /// What a formula run reads (no `Arc` of its own).
    pub(crate) fn parts(&self) -> NodeParts<'_> {
        NodeParts {
            name: self.name,
            n_in: self.n_in,
            saves: self.saves,
            state: &self.state,
            handle: None,
        }
    }
}

/// A handle to a node, for debugging (`grad_fn()`).
#[derive(Clone)]
pub struct NodeRef(pub(crate) Arc<Node>);

impl NodeRef {
    /// PyTorch-style name such as `MulBackward0` or `AccumulateGrad`.
    pub fn name(&self) -> &'static str {
        self.0.name
    }
    /// Names of the next nodes (None for inputs that need no gradient).
    pub fn next_functions(&self) -> Vec<Option<NodeRef>> {
        self.0
            .next
            .iter()
            .map(|e| e.as_ref().map(|e| NodeRef(e.node.clone())))
            .collect()
    }
}

impl std::fmt::Debug for NodeRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.0.name)
    }
}

impl Node {
    pub(crate) fn new<F: Backward>(
        formula: F,
        next: Edges,
        saved: Vec<SavedTensor>,
        outputs: OutputMeta,
    ) -> Arc<Node> {
        Node::with_seq(next_seq(), formula, next, saved, outputs)
    }

    /// [`Node::new`] with a sequence number taken earlier by [`next_seq`] (a view's history
    /// recorded when first asked for keeps its place in the tape).
    pub(crate) fn with_seq<F: Backward>(
        seq: u64,
        formula: F,
        next: Edges,
        saved: Vec<SavedTensor>,
        outputs: OutputMeta,
    ) -> Arc<Node> {
        let node: Arc<Node<F>> = Arc::new(Node::inline(seq, formula, next, saved, outputs));
        node
    }

    /// A node whose formula holds a weak handle on the node itself (CopySlices: the outputs
    /// its in-place formula saves lead back to it).
    pub(crate) fn new_cyclic<F: Backward>(
        next: Edges,
        outputs: OutputMeta,
        formula: impl FnOnce(&std::sync::Weak<Node>) -> F,
    ) -> Arc<Node> {
        let seq = next_seq();
        let node: Arc<Node<F>> = Arc::new_cyclic(|me: &std::sync::Weak<Node<F>>| {
            let me: std::sync::Weak<Node> = me.clone();
            Node::inline(seq, formula(&me), next, Vec::new(), outputs)
        });
        node
    }
}

impl<F: Backward> Node<F> {
    /// The node by value (then put in its `Arc`).
    fn inline(
        seq: u64,
        formula: F,
        next: Edges,
        saved: Vec<SavedTensor>,
        outputs: OutputMeta,
    ) -> Node<F> {
        Node {
            seq,
            name: formula.name(),
            next,
            outputs,
            saves: !saved.is_empty(),
            has_hooks: AtomicBool::new(false),
            state: Mutex::new(NodeState {
                hooks: super::anomaly::creation().map(|c| {
                    Box::new(NodeHooks {
                        created: Some(Arc::from(c)),
                        ..NodeHooks::default()
                    })
                }),
                ..NodeState::new(saved)
            }),
            formula,
        }
    }
}

impl Node {
    /// Adds a tensor hook on forward output `nr` (run before the node's formula).
    pub(crate) fn add_pre_hook(&self, nr: usize, id: u64, h: Hook) {
        let mut st = self.state.lock();
        st.hooks.get_or_insert_default().pre.push((nr, id, h));
        self.has_hooks.store(true, Ordering::Release);
    }

    /// Removes tensor hook `id` (if still there).
    pub(crate) fn remove_pre_hook(&self, id: u64) {
        if let Some(h) = self.state.lock().hooks.as_mut() {
            h.pre.retain(|(_, i, _)| *i != id);
        }
    }

    /// Makes the gradient of forward output `nr` accumulate into `t.grad` (`retain_grad`).
    pub(crate) fn add_retained(&self, nr: usize, t: std::sync::Weak<crate::tensor::TensorImpl>) {
        let mut st = self.state.lock();
        st.hooks.get_or_insert_default().retained.push((nr, t));
        self.has_hooks.store(true, Ordering::Release);
    }

    /// Where the node was created, if it was recorded in anomaly mode.
    pub(crate) fn creation(&self) -> Option<Arc<super::anomaly::Creation>> {
        self.state.lock().hooks.as_ref()?.created.clone()
    }

    pub(crate) fn is_accumulate(&self) -> bool {
        self.name == "AccumulateGrad"
    }
}

thread_local! {
    /// Nodes let go of while a teardown loop runs on this thread, waiting for that loop.
    static TEARDOWN: Teardown = const {
        Teardown { running: std::cell::Cell::new(false), queue: std::cell::RefCell::new(Vec::new()) }
    };
}

struct Teardown {
    running: std::cell::Cell<bool>,
    queue: std::cell::RefCell<Vec<Arc<Node>>>,
}

/// Lets go of a handle on a node. The last handle of a node drops it inside one loop per
/// thread: a node dropped there hands its edges and the `grad_fn`s of the tensors its formula
/// and saved tensors held back to the loop instead of dropping them in its own frame, so a graph
/// is freed with constant stack depth however its nodes are linked (through edges, formula-held
/// tensors such as cumprod's input, or CopySlices' in-place formula).
pub(crate) fn release_node(n: Arc<Node>) {
    // (not the last handle: this drop frees nothing; if another thread's drop races it to be
    // last, that node's own links still go through a loop)
    if Arc::strong_count(&n) > 1 {
        return;
    }
    let first = TEARDOWN.try_with(move |t| {
        if t.running.get() {
            t.queue.borrow_mut().push(n);
            None
        } else {
            Some(n)
        }
    });
    // (Err: thread-local storage is gone at thread exit and `n` dropped plainly with the closure)
    let Ok(Some(first)) = first else { return };
    struct Running;
    impl Drop for Running {
        fn drop(&mut self) {
            let _ = TEARDOWN.try_with(|t| t.running.set(false));
        }
    }
    TEARDOWN.with(|t| t.running.set(true));
    let _running = Running;
    let mut next = Some(first);
    while let Some(n) = next {
        drop(n);
        next = TEARDOWN.with(|t| t.queue.borrow_mut().pop());
    }
}

impl<F: ?Sized> Drop for Node<F> {
    fn drop(&mut self) {
        for e in self.next.drain(..).flatten() {
            release_node(e.node);
        }
    }
}
