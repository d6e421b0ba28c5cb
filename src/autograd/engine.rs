//! The backward engine: dependency counting over the graph reachable from the roots, then a
//! ready queue ordered by sequence number (newest first) — iterative, never recursive. Gradients
//! for one node's inputs are summed in a buffer before the node runs. `grad()` captures the
//! gradients flowing into given tensors instead of accumulating into leaves.

use super::anomaly::{check_outputs, in_node, is_anomaly_enabled};
use super::builtin::accumulate_into;
use super::node::{Backward, BackwardCtx, Edge, Grads, Node, NodeParts};
use super::set_grad_enabled;
use super::view::gradient_edge;
use crate::{Result, Tensor, bail};
use smallvec::{SmallVec, smallvec};
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

/// A node's address (thin: the formula's vtable pointer is not part of its identity).
type Key = usize;

/// Hasher for node-address keys: addresses are unique, so one multiply-xorshift mixes enough
/// (SipHash would cost more than the bookkeeping it protects).
#[derive(Default)]
struct AddrHasher(u64);

impl std::hash::Hasher for AddrHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }
    fn write_u64(&mut self, n: u64) {
        let h = (self.0 ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        self.0 = h ^ (h >> 32);
    }
    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type NodeMap<V> = HashMap<Key, V, std::hash::BuildHasherDefault<AddrHasher>>;

fn key(n: &Node) -> Key {
    (n as *const Node).cast::<u8>() as Key
}

const BACKWARD_TWICE: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call `Tensor::backward` or `autograd::grad`. Pass `retain_graph: true` (to `Tensor::backward_with`, `autograd::backward` or `autograd::grad`) if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.";

/// How a formula runs: which inputs need gradients, whether the pass builds a differentiable
/// graph or keeps saved tensors, and whether the incoming gradient may be overwritten
/// ([`BackwardCtx::grad_owned`]).
#[derive(Clone, Copy)]
pub(crate) struct RunArgs<'a> {
    pub(crate) needs: &'a [bool],
    pub(crate) create_graph: bool,
    pub(crate) retain: bool,
    pub(crate) grad_owned: bool,
}

/// Runs one node's formula: unpacks (and version-checks) its saved tensors, applies it and
/// releases the saved tensors unless `retain`. `handle`: the node's own `Arc`.
pub(crate) fn call_node(
    node: &Node,
    handle: Option<&Arc<Node>>,
    grads: Grads,
    args: RunArgs<'_>,
) -> Result<Grads> {
    if grads.iter().all(|g| g.is_none()) && !node.is_accumulate() {
        return Ok(smallvec![None; node.next.len()]);
    }
    // AccumulateGrad nodes are shared by every graph that reaches their leaf, so backward passes
    // on several threads may run one concurrently: serialise them (striped by node address; an
    // accumulation never runs another node while holding its stripe, hooks aside)
    static NODE_STRIPES: [parking_lot::Mutex<()>; 64] = [const { parking_lot::Mutex::new(()) }; 64];
    let _serial = node
        .is_accumulate()
        .then(|| NODE_STRIPES[(key(node) >> 6) % 64].lock());
    run_formula(&node.parts(handle), &node.formula, grads, args)
}

/// [`call_node`]'s work on a node's parts and formula (also run by CopySlices on the in-place
/// node it holds).
pub(crate) fn run_formula(
    node: &NodeParts<'_>,
    formula: &dyn Backward,
    grads: Grads,
    args: RunArgs<'_>,
) -> Result<Grads> {
    let _span = tracing::trace_span!("backward_node", name = node.name).entered();
    let n_in = node.n_in;
    let mut saved: SmallVec<[Tensor; 4]> = SmallVec::new();
    if node.saves {
        let st = node.state.lock();
        if st.released {
            bail!(BackwardTwice, "backward", "{}", BACKWARD_TWICE);
        }
        for s in &st.saved {
            saved.push(s.unpack(node.name, node.handle)?);
        }
    }
    let ctx = BackwardCtx {
        saved: &saved,
        needs: args.needs,
        create_graph: args.create_graph,
        retain: args.retain,
        grad_owned: args.grad_owned && !args.create_graph,
    };
    let res = formula.apply(&ctx, grads);
    if node.saves && !args.retain {
        let mut st = node.state.lock();
        if !st.saved.is_empty() {
            st.saved.clear();
            st.released = true;
        }
    }
    let mut res = res?;
    res.truncate(n_in);
    pad(&mut res, n_in);
    Ok(res)
}

struct Ready<'a> {
    acc: bool,
    seq: u64,
    node: &'a Arc<Node>,
}
impl Ord for Ready<'_> {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.acc, self.seq).cmp(&(o.acc, o.seq))
    }
}
impl PartialOrd for Ready<'_> {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Ready<'_> {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}
impl Eq for Ready<'_> {}

fn add_grad(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    *slot = Some(match slot.take() {
        None => g,
        Some(old) => old.add(&g)?,
    });
    Ok(())
}

/// Extends `grads` with `None` up to `n` entries (pushes: cheaper than `SmallVec::resize`).
fn pad(grads: &mut Grads, n: usize) {
    while grads.len() < n {
        grads.push(None);
    }
}

/// Per-node state of one execution: the number of the node's incoming edges not yet processed,
/// and its input-gradient buffer. Nodes themselves are borrowed from the roots: every node
/// reachable from them is owned through the (immutable) edges of the one before it, so the whole
/// graph outlives the execution and node addresses stay unique keys without reference counting.
struct Slot {
    deps: usize,
    grads: Grads,
}

impl Slot {
    fn new(deps: usize) -> Slot {
        Slot {
            deps,
            grads: Grads::new(),
        }
    }

    /// Sums `g` into gradient slot `input_nr` of `node` (one slot per forward output).
    fn add(&mut self, node: &Node, input_nr: usize, g: Tensor) -> Result<()> {
        pad(&mut self.grads, node.outputs.len().max(1));
        add_grad(&mut self.grads[input_nr], g)
    }
}

thread_local! {
    /// The emptied node map of this thread's last execution, kept for its capacity (a backward
    /// pass otherwise regrows it from nothing). Taken while in use, so nested passes get their own.
    static SPARE_SLOTS: std::cell::Cell<Option<NodeMap<Slot>>> = const { std::cell::Cell::new(None) };
}

/// Largest spare node map kept between passes (entries).
const SPARE_SLOTS_MAX: usize = 1 << 14;

/// Executes the graph from `roots`. With `capture`, returns the gradients flowing into those
/// (node, input slot) points and runs only what leads to them (no leaf accumulation).
fn execute(
    roots: Vec<(Edge, Tensor)>,
    retain: bool,
    create_graph: bool,
    capture: Option<&[Option<Edge>]>,
) -> Result<Vec<Option<Tensor>>> {
    use std::collections::hash_map::Entry;
    let _span = tracing::debug_span!("backward").entered();
    let _gm = set_grad_enabled(create_graph);
    // 1. dependency counts over everything reachable (one map entry per node holds its count
    // and, later, its gradient buffer)
    let mut slots = SPARE_SLOTS.with(|c| c.take()).unwrap_or_default();
    let (root_edges, root_grads): (Vec<Edge>, Vec<Tensor>) = roots.into_iter().unzip();
    let mut stack: Vec<&Arc<Node>> = Vec::new();
    for e in &root_edges {
        if let Entry::Vacant(v) = slots.entry(key(&e.node)) {
            v.insert(Slot::new(0));
            stack.push(&e.node);
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.next.iter().flatten() {
            match slots.entry(key(&e.node)) {
                Entry::Occupied(mut o) => o.get_mut().deps += 1,
                Entry::Vacant(v) => {
                    v.insert(Slot::new(1));
                    stack.push(&e.node);
                }
            }
        }
    }
    // 2. which nodes lead to a capture point (grad() mode)
    let needed: Option<NodeMap<bool>> = capture.map(|caps| {
        let cap_keys: Vec<Key> = caps.iter().flatten().map(|e| key(&e.node)).collect();
        let topo = topo_order(&slots, &root_edges);
        let mut needed: NodeMap<bool> = NodeMap::default();
        for n in topo.iter().rev() {
            let k = key(n);
            let v = cap_keys.contains(&k)
                || n.next
                    .iter()
                    .flatten()
                    .any(|e| needed.get(&key(&e.node)).copied().unwrap_or(false));
            needed.insert(k, v);
        }
        needed
    });
    let mut captured: Vec<Option<Tensor>> = vec![None; capture.map_or(0, |c| c.len())];
    // 3. run
    let mut heap = BinaryHeap::new();
    for (e, g) in root_edges.iter().zip(root_grads) {
        let k = key(&e.node);
        let slot = slots.get_mut(&k).expect("internal: root missing");
        slot.add(&e.node, e.input_nr, g)?;
        if slot.deps == 0 && !heap.iter().any(|r: &Ready| key(r.node) == k) {
            heap.push(Ready {
                acc: e.node.is_accumulate(),
                seq: e.node.seq,
                node: &e.node,
            });
        }
    }
    while let Some(Ready { node, .. }) = heap.pop() {
        let k = key(node);
        let mut inputs = slots
            .get_mut(&k)
            .map(|s| std::mem::take(&mut s.grads))
            .unwrap_or_default();
        pad(&mut inputs, node.outputs.len().max(1));
        let outs = run_node(
            node,
            inputs,
            capture,
            &needed,
            &mut captured,
            create_graph,
            retain,
        )
        .map_err(|e| in_node(e, node))?;
        let Some(outs) = outs else { continue };
        if is_anomaly_enabled() {
            check_outputs(node, &outs)?;
        }
        for (i, (e, g)) in node.next.iter().zip(outs).enumerate() {
            let Some(e) = e else { continue };
            let slot = slots
                .get_mut(&key(&e.node))
                .expect("internal: dependency missing");
            if let Some(mut g) = g {
                // validate_outputs: reduce broadcast grads and cast to the input's dtype
                let (shape, dtype) = &e.node.outputs[e.input_nr.min(e.node.outputs.len() - 1)];
                if !has_sizes(&mut g, shape) {
                    g = g.sum_to_size(shape).map_err(|_| {
                        crate::err!(
                            ShapeMismatch,
                            "backward",
                            "Function {} returned an invalid gradient at index {} - got {:?} but expected shape compatible with {:?}",
                            node.name,
                            i,
                            g.shape(),
                            shape
                        )
                    })?;
                }
                if g.dtype() != *dtype {
                    g = g.to_dtype(*dtype)?;
                }
                slot.add(&e.node, e.input_nr, g)?;
            }
            slot.deps -= 1;
            if slot.deps == 0 {
                heap.push(Ready {
                    acc: e.node.is_accumulate(),
                    seq: e.node.seq,
                    node: &e.node,
                });
            }
        }
    }
    slots.clear();
    if slots.capacity() <= SPARE_SLOTS_MAX {
        SPARE_SLOTS.with(|c| c.set(Some(slots)));
    }
    Ok(captured)
}

/// One node's turn in [`execute`]: its tensor hooks and `retain_grad`, the capture points of
/// `grad()`, then its formula (unless `grad()` does not need it: `None`).
#[allow(clippy::too_many_arguments)]
fn run_node(
    node: &Arc<Node>,
    mut inputs: Grads,
    capture: Option<&[Option<Edge>]>,
    needed: &Option<NodeMap<bool>>,
    captured: &mut [Option<Tensor>],
    create_graph: bool,
    retain: bool,
) -> Result<Option<Grads>> {
    // tensor hooks and retain_grad of non-leaf outputs
    if node.has_hooks.load(std::sync::atomic::Ordering::Acquire) {
        let hooks = node
            .state
            .lock()
            .hooks
            .as_deref()
            .cloned()
            .unwrap_or_default();
        for (nr, _, h) in hooks.pre {
            if let Some(g) = inputs.get(nr).cloned().flatten()
                && let Some(ng) = h(&g)?
            {
                inputs[nr] = Some(ng);
            }
        }
        for (nr, w) in hooks.retained {
            if let (Some(g), Some(imp)) = (inputs.get(nr).cloned().flatten(), w.upgrade()) {
                accumulate_into(&Tensor(imp), g, create_graph)?;
            }
        }
    }
    let k = key(node);
    if let Some(caps) = capture {
        for (i, c) in caps.iter().enumerate() {
            if let Some(e) = c
                && key(&e.node) == k
                && let Some(g) = inputs.get(e.input_nr).cloned().flatten()
            {
                add_grad(&mut captured[i], g)?;
            }
        }
    }
    let run = match &needed {
        None => true,
        Some(nd) => !node.is_accumulate() && nd.get(&k).copied().unwrap_or(false),
    };
    if !run {
        return Ok(None);
    }
    let mut needs: SmallVec<[bool; 4]> = SmallVec::new();
    for e in &node.next {
        needs.push(match (e, &needed) {
            (None, _) => false,
            (Some(_), None) => true,
            (Some(e), Some(nd)) => nd.get(&key(&e.node)).copied().unwrap_or(false),
        });
    }
    // the engine hands over its gradient: the formula may reuse it if nobody else can see
    // it (checked where it is reused: one look at the handle and storage counts; fast path
    // F3 of `builtin/mod.rs`)
    let owned = !create_graph && inputs.len() == 1;
    let args = RunArgs {
        needs: &needs,
        create_graph,
        retain,
        grad_owned: owned,
    };
    call_node(node, Some(node), inputs, args).map(Some)
}

/// True if `g` has exactly `sizes` (read without the data lock when `g` is the only handle).
fn has_sizes(g: &mut Tensor, sizes: &[usize]) -> bool {
    match Arc::get_mut(&mut g.0) {
        Some(imp) => imp.data.get_mut().layout.sizes() == sizes,
        None => g.data_ref().layout.sizes() == sizes,
    }
}

/// Kahn order (producers of gradients first) of the nodes reachable from `roots` (the only
/// nodes without incoming edges).
fn topo_order<'a>(slots: &NodeMap<Slot>, roots: &'a [Edge]) -> Vec<&'a Arc<Node>> {
    let mut d: NodeMap<usize> = slots.iter().map(|(k, s)| (*k, s.deps)).collect();
    let mut ready: Vec<&'a Arc<Node>> = Vec::new();
    for e in roots {
        let k = key(&e.node);
        if d.get(&k) == Some(&0) && !ready.iter().any(|n| key(n) == k) {
            ready.push(&e.node);
        }
    }
    let mut out = Vec::with_capacity(slots.len());
    while let Some(n) = ready.pop() {
        for e in n.next.iter().flatten() {
            let c = d
                .get_mut(&key(&e.node))
                .expect("internal: dependency missing");
            *c -= 1;
            if *c == 0 {
                ready.push(&e.node);
            }
        }
        out.push(n);
    }
    out
}

fn root_edges(outputs: &[Tensor], grad_outputs: &[Option<Tensor>]) -> Result<Vec<(Edge, Tensor)>> {
    let mut roots = Vec::new();
    for (i, t) in outputs.iter().enumerate() {
        let Some(edge) = gradient_edge(t)? else {
            bail!(
                NoGradFn,
                "backward",
                "element {} of tensors does not require grad and does not have a grad_fn",
                i
            );
        };
        let g = match grad_outputs.get(i).cloned().flatten() {
            Some(g) => {
                if g.shape() != t.shape() {
                    bail!(
                        ShapeMismatch,
                        "backward",
                        "Mismatch in shape: grad_output[{}] has a shape of {:?} and output[{}] has a shape of {:?}.",
                        i,
                        g.shape(),
                        i,
                        t.shape()
                    );
                }
                g
            }
            None => {
                if t.numel() != 1 {
                    bail!(
                        InvalidArgument,
                        "backward",
                        "grad can be implicitly created only for scalar outputs"
                    );
                }
                t.ones_like()?
            }
        };
        roots.push((edge, g));
    }
    Ok(roots)
}

/// `torch.autograd.backward`: accumulates gradients of `outputs` into the leaves' `.grad`.
pub fn backward(
    outputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    options: super::BackwardOptions,
) -> Result<()> {
    let roots = root_edges(outputs, grad_outputs)?;
    let (retain_graph, create_graph) = (options.is_retain_graph(), options.is_create_graph());
    execute(roots, retain_graph || create_graph, create_graph, None)?;
    Ok(())
}

/// `torch.autograd.grad`: gradients of `outputs` w.r.t. `inputs`, without touching `.grad`.
/// Without [`allow_unused`](super::GradOptions::allow_unused), an input the outputs do not
/// depend on is an error.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    options: super::GradOptions,
) -> Result<Vec<Option<Tensor>>> {
    let (retain_graph, create_graph, allow_unused) = (
        options.is_retain_graph(),
        options.is_create_graph(),
        options.is_allow_unused(),
    );
    let roots = root_edges(outputs, grad_outputs)?;
    let mut caps = Vec::with_capacity(inputs.len());
    for (i, t) in inputs.iter().enumerate() {
        let e = gradient_edge(t)?;
        if e.is_none() {
            bail!(
                NoGradFn,
                "grad",
                "One of the differentiated Tensors (input {}) does not require grad",
                i
            );
        }
        caps.push(e);
    }
    let res = execute(
        roots,
        retain_graph || create_graph,
        create_graph,
        Some(&caps),
    )?;
    if !allow_unused && let Some(i) = res.iter().position(|r| r.is_none()) {
        bail!(
            InvalidArgument,
            "grad",
            "One of the differentiated Tensors (input {}) appears to not have been used in the graph. Pass `allow_unused: true` to `autograd::grad` if this is the desired behavior.",
            i
        );
    }
    Ok(res)
}
