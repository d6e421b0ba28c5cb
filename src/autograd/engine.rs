//! The backward engine: dependency counting over the graph reachable from the roots, then a
//! ready queue ordered by sequence number (newest first) — iterative, never recursive. Gradients
//! for one node's inputs are summed in a buffer before the node runs. `grad()` captures the
//! gradients flowing into given tensors instead of accumulating into leaves.

use super::node::{Backward, BackwardCtx, Edge, Node};
use super::set_grad_enabled;
use super::view::gradient_edge;
use crate::{Result, Tensor, bail};
use std::collections::{BinaryHeap, HashMap};
use std::sync::Arc;

type Key = *const Node;

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

fn key(n: &Arc<Node>) -> Key {
    Arc::as_ptr(n)
}

/// The AccumulateGrad node of a leaf requiring grad (weakly cached on the tensor, like PyTorch).
pub(crate) fn grad_accumulator(t: &Tensor) -> Arc<Node> {
    let mut m = t.0.meta.lock();
    if let Some(n) = m.grad_accumulator.upgrade() {
        return n;
    }
    let n = Node::new(
        Box::new(AccumulateGrad { leaf: t.clone() }),
        smallvec::SmallVec::new(),
        vec![],
        smallvec::smallvec![super::node::output_meta(t)],
    );
    m.grad_accumulator = Arc::downgrade(&n);
    n
}

/// Accumulates incoming gradients into a leaf's `.grad`.
pub(crate) struct AccumulateGrad {
    leaf: Tensor,
}

impl Backward for AccumulateGrad {
    fn name(&self) -> &'static str {
        "AccumulateGrad"
    }
    fn apply(
        &mut self,
        ctx: &BackwardCtx<'_>,
        grads: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let Some(mut g) = grads.into_iter().next().flatten() else {
            return Ok(vec![]);
        };
        let hooks = self.leaf.0.meta.lock().hooks.clone();
        for h in hooks {
            if let Some(ng) = h(&g)? {
                g = ng;
            }
        }
        accumulate_into(&self.leaf, g, ctx.create_graph)?;
        Ok(vec![])
    }
}

/// `t.grad += g` with PyTorch's rules: the first gradient is stored (copied unless this is the
/// only handle), later ones are added (in place unless building a higher-order graph).
pub(crate) fn accumulate_into(t: &Tensor, g: Tensor, create_graph: bool) -> Result<()> {
    // read-modify-write of `.grad` under a per-leaf lock: two threads running backward into the
    // same leaf must not both see "no gradient yet" and drop one contribution. The lock is a
    // stripe chosen by address and is never held while another stripe is taken.
    static STRIPES: [parking_lot::Mutex<()>; 64] = [const { parking_lot::Mutex::new(()) }; 64];
    let stripe = (Arc::as_ptr(&t.0) as usize >> 6) % STRIPES.len();
    let _acc = STRIPES[stripe].lock();
    let existing = t.0.meta.lock().grad.clone();
    let new = match existing {
        None => {
            if create_graph {
                g
            } else if Arc::strong_count(&g.0) == 1
                && g.0.meta.lock().view.is_none()
                && g.storage_unique()
            {
                g
            } else {
                g.detach().copy()?
            }
        }
        Some(old) => {
            if create_graph || old.is_sparse() || g.is_sparse() {
                old.add(&g)?
            } else {
                let _ng = set_grad_enabled(false);
                old.add_(&g)?;
                old
            }
        }
    };
    t.0.meta.lock().grad = Some(new);
    Ok(())
}

const BACKWARD_TWICE: &str = "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call .backward() or autograd.grad(). Specify retain_graph=True if you need to backward through the graph a second time or if you need to access saved tensors after calling backward.";

/// Runs one node's formula: unpacks (and version-checks) its saved tensors, applies it and
/// releases the saved tensors unless `retain`.
pub(crate) fn call_node(
    node: &Arc<Node>,
    grads: Vec<Option<Tensor>>,
    needs: &[bool],
    create_graph: bool,
    retain: bool,
) -> Result<Vec<Option<Tensor>>> {
    let _span = tracing::trace_span!("backward_node", name = node.name).entered();
    let n_in = node.next.len();
    if grads.iter().all(|g| g.is_none()) && !node.is_accumulate() {
        return Ok(vec![None; n_in]);
    }
    // AccumulateGrad nodes are shared by every graph that reaches their leaf, so backward passes
    // on several threads may run one concurrently: serialise them (striped by node address; an
    // accumulation never runs another node while holding its stripe, hooks aside)
    static NODE_STRIPES: [parking_lot::Mutex<()>; 64] = [const { parking_lot::Mutex::new(()) }; 64];
    let _serial = node
        .is_accumulate()
        .then(|| NODE_STRIPES[(Arc::as_ptr(node) as usize >> 6) % 64].lock());
    let (mut bw, saved) = {
        let mut st = node.state.lock();
        if st.released {
            bail!(BackwardTwice, "backward", "{}", BACKWARD_TWICE);
        }
        let saved: Vec<Tensor> = st
            .saved
            .iter()
            .map(|s| s.unpack(node))
            .collect::<Result<_>>()?;
        let bw = st
            .backward
            .take()
            .expect("internal: node formula missing (re-entrant call)");
        (bw, saved)
    };
    let ctx = BackwardCtx {
        saved: &saved,
        needs,
        create_graph,
        retain,
    };
    let res = bw.apply(&ctx, grads);
    let mut st = node.state.lock();
    st.backward = Some(bw);
    if !retain && !st.saved.is_empty() {
        st.saved.clear();
        st.released = true;
    }
    drop(st);
    let mut res = res?;
    res.resize(n_in, None);
    Ok(res)
}

#[derive(PartialEq, Eq)]
struct Ready {
    acc: bool,
    seq: u64,
    node: Arc<Node>,
}
impl Ord for Ready {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        (self.acc, self.seq).cmp(&(o.acc, o.seq))
    }
}
impl PartialOrd for Ready {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl PartialEq for Node {
    fn eq(&self, o: &Self) -> bool {
        std::ptr::eq(self, o)
    }
}
impl Eq for Node {}

fn add_grad(slot: &mut Option<Tensor>, g: Tensor) -> Result<()> {
    *slot = Some(match slot.take() {
        None => g,
        Some(old) => old.add(&g)?,
    });
    Ok(())
}

/// Executes the graph from `roots`. With `capture`, returns the gradients flowing into those
/// (node, input slot) points and runs only what leads to them (no leaf accumulation).
fn execute(
    roots: Vec<(Edge, Tensor)>,
    retain: bool,
    create_graph: bool,
    capture: Option<&[Option<Edge>]>,
) -> Result<Vec<Option<Tensor>>> {
    let _span = tracing::debug_span!("backward").entered();
    let _gm = set_grad_enabled(create_graph);
    // 1. dependency counts over everything reachable
    let mut deps: NodeMap<usize> = NodeMap::default();
    let mut order: Vec<Arc<Node>> = Vec::new();
    let mut stack: Vec<Arc<Node>> = Vec::new();
    for (e, _) in &roots {
        if !deps.contains_key(&key(&e.node)) {
            deps.insert(key(&e.node), 0);
            stack.push(e.node.clone());
        }
    }
    while let Some(n) = stack.pop() {
        for e in n.next.iter().flatten() {
            let k = key(&e.node);
            match deps.get_mut(&k) {
                Some(c) => *c += 1,
                None => {
                    deps.insert(k, 1);
                    stack.push(e.node.clone());
                }
            }
        }
        order.push(n);
    }
    // 2. which nodes lead to a capture point (grad() mode)
    let needed: Option<NodeMap<bool>> = capture.map(|caps| {
        let cap_keys: Vec<Key> = caps.iter().flatten().map(|e| key(&e.node)).collect();
        let topo = topo_order(&order, &deps);
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
    let mut buffers: NodeMap<Vec<Option<Tensor>>> = NodeMap::default();
    let mut heap = BinaryHeap::new();
    for (e, g) in roots {
        let k = key(&e.node);
        let buf = buffers
            .entry(k)
            .or_insert_with(|| vec![None; e.node.outputs.len().max(1)]);
        add_grad(&mut buf[e.input_nr], g)?;
        if deps[&k] == 0 && !heap.iter().any(|r: &Ready| key(&r.node) == k) {
            heap.push(Ready {
                acc: e.node.is_accumulate(),
                seq: e.node.seq,
                node: e.node.clone(),
            });
        }
    }
    while let Some(Ready { node, .. }) = heap.pop() {
        let k = key(&node);
        let mut inputs = buffers
            .remove(&k)
            .unwrap_or_else(|| vec![None; node.outputs.len().max(1)]);
        // tensor hooks and retain_grad of non-leaf outputs
        let (hooks, retained) = {
            let st = node.state.lock();
            (st.pre_hooks.clone(), st.retained.clone())
        };
        for (nr, h) in hooks {
            if let Some(g) = inputs.get(nr).cloned().flatten() {
                if let Some(ng) = h(&g)? {
                    inputs[nr] = Some(ng);
                }
            }
        }
        for (nr, w) in retained {
            if let (Some(g), Some(imp)) = (inputs.get(nr).cloned().flatten(), w.upgrade()) {
                accumulate_into(&Tensor(imp), g, create_graph)?;
            }
        }
        if let Some(caps) = capture {
            for (i, c) in caps.iter().enumerate() {
                if let Some(e) = c {
                    if key(&e.node) == k {
                        if let Some(g) = inputs.get(e.input_nr).cloned().flatten() {
                            add_grad(&mut captured[i], g)?;
                        }
                    }
                }
            }
        }
        let run = match &needed {
            None => true,
            Some(nd) => !node.is_accumulate() && nd.get(&k).copied().unwrap_or(false),
        };
        if !run {
            continue;
        }
        let needs: Vec<bool> = node
            .next
            .iter()
            .map(|e| match (e, &needed) {
                (None, _) => false,
                (Some(_), None) => true,
                (Some(e), Some(nd)) => nd.get(&key(&e.node)).copied().unwrap_or(false),
            })
            .collect();
        let outs = call_node(&node, inputs, &needs, create_graph, retain)?;
        for (e, g) in node.next.iter().zip(outs) {
            let Some(e) = e else { continue };
            let ck = key(&e.node);
            if let Some(mut g) = g {
                // validate_outputs: reduce broadcast grads and cast to the input's dtype
                let (shape, dtype) = &e.node.outputs[e.input_nr.min(e.node.outputs.len() - 1)];
                if g.data_ref().layout.sizes() != shape.as_slice() {
                    g = g.sum_to_size(shape).map_err(|_| {
                        crate::err!(
                            ShapeMismatch,
                            "backward",
                            "Function {} returned an invalid gradient at index {} - got {:?} but expected shape compatible with {:?}",
                            node.name,
                            e.input_nr,
                            g.shape(),
                            shape
                        )
                    })?;
                }
                if g.dtype() != *dtype {
                    g = g.to_dtype(*dtype)?;
                }
                let buf = buffers
                    .entry(ck)
                    .or_insert_with(|| vec![None; e.node.outputs.len().max(1)]);
                add_grad(&mut buf[e.input_nr], g)?;
            }
            let c = deps.get_mut(&ck).expect("internal: dependency missing");
            *c -= 1;
            if *c == 0 {
                heap.push(Ready {
                    acc: e.node.is_accumulate(),
                    seq: e.node.seq,
                    node: e.node.clone(),
                });
            }
        }
    }
    Ok(captured)
}

/// Kahn order (producers of gradients first) of the reachable nodes.
fn topo_order(nodes: &[Arc<Node>], deps: &NodeMap<usize>) -> Vec<Arc<Node>> {
    let mut d = deps.clone();
    let mut ready: Vec<Arc<Node>> = nodes.iter().filter(|n| d[&key(n)] == 0).cloned().collect();
    let mut out = Vec::with_capacity(nodes.len());
    while let Some(n) = ready.pop() {
        for e in n.next.iter().flatten() {
            let c = d
                .get_mut(&key(&e.node))
                .expect("internal: dependency missing");
            *c -= 1;
            if *c == 0 {
                ready.push(e.node.clone());
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
                        "Mismatch in shape: grad_output[{}] has a shape of torch.Size({:?}) and output[{}] has a shape of torch.Size({:?}).",
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
    retain_graph: bool,
    create_graph: bool,
) -> Result<()> {
    let roots = root_edges(outputs, grad_outputs)?;
    execute(roots, retain_graph || create_graph, create_graph, None)?;
    Ok(())
}

/// `torch.autograd.grad`: gradients of `outputs` w.r.t. `inputs`, without touching `.grad`.
/// With `allow_unused == false`, an input the outputs do not depend on is an error.
pub fn grad(
    outputs: &[Tensor],
    inputs: &[Tensor],
    grad_outputs: &[Option<Tensor>],
    retain_graph: bool,
    create_graph: bool,
    allow_unused: bool,
) -> Result<Vec<Option<Tensor>>> {
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
    if !allow_unused {
        if let Some(i) = res.iter().position(|r| r.is_none()) {
            bail!(
                InvalidArgument,
                "grad",
                "One of the differentiated Tensors (input {}) appears to not have been used in the graph. Set allow_unused=True if this is the desired behavior.",
                i
            );
        }
    }
    Ok(res)
}
