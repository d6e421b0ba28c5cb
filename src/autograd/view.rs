//! Recording ops into the graph, and the view + in-place rules: `check_inplace` (leaf / view
//! checks with PyTorch's messages), rebasing a base's history on a CopySlices when one of its
//! views is written in place, and lazy regeneration of a view's `grad_fn` after its base or a
//! sibling changed (the built-in nodes themselves are in `builtin/`).

use super::builtin::{AsStridedBackward, CopySlices, grad_accumulator, regenerate};
use super::is_grad_enabled;
use super::meta::{CreationMeta, PendingView, ViewMeta};
use super::node::{Backward, Edge, Edges, Node, OutputMeta, output_meta};
use super::saved::SavedTensor;
use crate::layout::{Dims, Layout};
use crate::{Result, Tensor, bail};
use smallvec::smallvec;
use std::sync::Arc;

/// The edge through which a gradient for `t` flows: its (possibly regenerated) grad_fn, or the
/// AccumulateGrad of a leaf that requires grad, or none.
pub(crate) fn gradient_edge(t: &Tensor) -> Result<Option<Edge>> {
    {
        // the common case, a tensor that is not a view: one look under one lock
        let m = t.0.meta.lock();
        if m.view.is_none() {
            if let Some(e) = history_edge(&m) {
                return Ok(Some(e));
            }
            if !m.requires_grad {
                return Ok(None);
            }
        }
    }
    if let Some(node) = t.grad_fn_checked()? {
        return Ok(Some(Edge {
            node,
            input_nr: t.output_nr(),
        }));
    }
    if t.requires_grad() {
        return Ok(Some(Edge {
            node: grad_accumulator(t),
            input_nr: 0,
        }));
    }
    Ok(None)
}

/// The gradient edges of `inputs` if an op on them must be recorded (grad mode is on and one
/// of them requires grad: exactly the inputs with an edge), else `None`.
pub(crate) fn grad_edges(inputs: &[&Tensor]) -> Result<Option<Edges>> {
    if !is_grad_enabled() {
        return Ok(None);
    }
    // (pushes, not `collect`: SmallVec's generic `extend` costs more than the edges)
    let mut edges = Edges::new();
    for t in inputs {
        edges.push(gradient_edge(t)?);
    }
    Ok(edges.iter().any(Option::is_some).then_some(edges))
}

fn set_grad_fn(t: &Tensor, node: Arc<Node>, output_nr: usize) {
    let version = t.version();
    t.0.meta.lock().set_history(Some(node), output_nr, version);
}

/// Records an out-of-place op: `outputs` get a node running `bw` with edges to `inputs`.
/// `saved` builds the saved tensors (called only when recording).
pub(crate) fn record(
    outputs: &[&Tensor],
    inputs: &[&Tensor],
    saved: impl FnOnce() -> Vec<SavedTensor>,
    bw: impl Backward,
) -> Result<()> {
    match grad_edges(inputs)? {
        Some(edges) => {
            record_edges(outputs, edges, saved(), bw);
            Ok(())
        }
        None => Ok(()),
    }
}

/// [`record_edges`] for the single output of an op, usually fresh: then it is still this
/// handle's alone, and its geometry and autograd fields are read and set without their locks.
pub(crate) fn record_fresh(
    out: &mut Tensor,
    edges: Edges,
    saved: Vec<SavedTensor>,
    bw: impl Backward,
) {
    let Some(imp) = Arc::get_mut(&mut out.0) else {
        return record_edges(&[out], edges, saved, bw);
    };
    let meta = (
        Dims::from_slice(imp.data.get_mut().layout.sizes()),
        imp.dtype.get(),
    );
    let node = Node::new(bw, edges, saved, smallvec![meta]);
    let version = imp.version.current();
    imp.meta.get_mut().set_history(Some(node), 0, version);
}

/// [`record`] with the inputs' edges already taken by [`grad_edges`].
pub(crate) fn record_edges(
    outputs: &[&Tensor],
    edges: Edges,
    saved: Vec<SavedTensor>,
    bw: impl Backward,
) {
    let mut outs = OutputMeta::new();
    for o in outputs {
        outs.push(output_meta(o));
    }
    let node = Node::new(bw, edges, saved, outs);
    if let [o] = outputs {
        set_grad_fn(o, node, 0);
    } else {
        for (i, o) in outputs.iter().enumerate() {
            set_grad_fn(o, node.clone(), i);
        }
    }
}

/// State carried across an in-place op: taken before the kernel, finished after the bump.
pub(crate) struct InplaceRecord {
    edges: Edges,
    /// The root base when the written tensor is a view (its history is rebased on the base:
    /// its edge is moved out of it when the op is recorded, not cloned here).
    base: Option<Tensor>,
}

/// The edge to a non-view tensor's own history, read under its lock.
fn history_edge(m: &super::meta::AutogradMeta) -> Option<Edge> {
    m.grad_fn.as_ref().map(|n| Edge {
        node: n.clone(),
        input_nr: m.output_nr,
    })
}

/// PyTorch's `check_inplace` for `self_` being written with `others` as inputs. Returns the
/// recording state if the op must be recorded. Call before the kernel: it never changes anything.
pub(crate) fn check_inplace(self_: &Tensor, others: &[&Tensor]) -> Result<Option<InplaceRecord>> {
    if !is_grad_enabled() {
        return Ok(None);
    }
    // one look at the tensor's autograd fields, and one at its base's (a root: never a view)
    let (leaf_flag, has_fn, own_edge, view) = {
        let m = self_.0.meta.lock();
        let view = m
            .view
            .as_ref()
            .map(|v| (v.base.clone(), v.creation, v.pending.is_some()));
        let own_edge = if view.is_none() {
            history_edge(&m)
        } else {
            None
        };
        (m.requires_grad, m.grad_fn.is_some(), own_edge, view)
    };
    let base = view.map(|(base, creation, pending)| {
        let (base_rg, base_has_fn) = {
            let m = base.0.meta.lock();
            (m.requires_grad || m.grad_fn.is_some(), m.grad_fn.is_some())
        };
        (base, creation, pending || base_rg, base_has_fn)
    });
    let self_rg = leaf_flag || has_fn || base.as_ref().is_some_and(|b| b.2);
    if !self_rg && !others.iter().any(|t| t.requires_grad()) {
        return Ok(None);
    }
    if let Some((_, creation, _, base_has_fn)) = &base {
        if *creation != CreationMeta::Default {
            return Err(view_rebase_error(self_, *creation, false));
        }
        // PyTorch tests only the base's leafness: a view that requires grad (e.g. a leaf made
        // from a view with `requires_grad_`) of a base without history is refused too
        if self_rg && !base_has_fn {
            bail!(
                LeafInplace,
                "inplace",
                "a view of a leaf Variable that requires grad is being used in an in-place operation."
            );
        }
    }
    if self_rg && leaf_flag {
        // (a view's history may be stale: regenerated before it is looked at)
        let no_history = match &base {
            Some(_) => self_.grad_fn_checked()?.is_none(),
            None => !has_fn,
        };
        if no_history {
            bail!(
                LeafInplace,
                "inplace",
                "a leaf Variable that requires grad is being used in an in-place operation."
            );
        }
    }
    // A view's own edge is never used: its history is replaced by CopySlices on the base.
    let mut edges = Edges::with_capacity(1 + others.len());
    edges.push(own_edge);
    for t in others {
        edges.push(gradient_edge(t)?);
    }
    Ok(Some(InplaceRecord {
        edges,
        base: base.map(|(base, ..)| base),
    }))
}

impl InplaceRecord {
    /// Attaches `bw` as the new history of `self_` (after the kernel and the version bump). If
    /// `self_` is a view, the base gets a CopySlices node and the view regenerates from it.
    pub(crate) fn finish(
        self,
        self_: &Tensor,
        saved: Vec<SavedTensor>,
        bw: impl Backward,
    ) -> Result<()> {
        match self.base {
            None => {
                let out: OutputMeta = smallvec![output_meta(self_)];
                let node = Node::new(bw, self.edges, saved, out);
                set_grad_fn(self_, node, 0);
            }
            Some(base) => {
                let n_in = self.edges.len();
                let (view_l, base_l) = (self_.layout(), base.layout());
                let base_meta = (Dims::from_slice(base_l.sizes()), base.dtype());
                let copy_slices = |saved, base, view| CopySlices::new(bw, n_in, saved, base, view);
                let version = base.version();
                let mut m = base.0.meta.lock();
                // the base's history moves into the node (its edge replaces the view's own,
                // which is never used; the other inputs' edges are kept)
                let mut cs_edges = self.edges;
                cs_edges[0] = m.grad_fn.take().map(|node| Edge {
                    node,
                    input_nr: m.output_nr,
                });
                let node = if saved.is_empty() {
                    let cs = copy_slices(saved, base_l, view_l);
                    Node::new(cs, cs_edges, vec![], smallvec![base_meta])
                } else {
                    // (outputs the formula saved lead back through the base's new history)
                    Node::new_cyclic(cs_edges, smallvec![base_meta], |me| {
                        let mut saved = saved;
                        for s in saved.iter_mut() {
                            s.set_inplace_view(me, base_l.clone(), view_l.clone());
                        }
                        copy_slices(saved, base_l, view_l)
                    })
                };
                m.set_history(Some(node), 0, version);
                drop(m);
                // The view regenerates from the new base history when its grad_fn is next
                // asked for (PyTorch regenerates eagerly; the result is the same node).
                mark_stale(self_);
            }
        }
        Ok(())
    }
}

/// Records an in-place op whose kernel already ran (and bumped the version): convenience for
/// ops that take the record from [`check_inplace`].
pub(crate) fn record_inplace(
    rec: Option<InplaceRecord>,
    self_: &Tensor,
    saved: impl FnOnce() -> Vec<SavedTensor>,
    bw: impl Backward,
) -> Result<()> {
    match rec {
        None => Ok(()),
        Some(r) => {
            let saved = saved()
                .into_iter()
                .map(|s| s.mark_written_by_owner(self_))
                .collect();
            r.finish(self_, saved, bw)
        }
    }
}

/// Builds the ViewInplaceForbidden error of `handle_view_on_rebase`.
pub(crate) fn view_rebase_error(
    t: &Tensor,
    creation: CreationMeta,
    indirect: bool,
) -> crate::Error {
    let x = if indirect {
        " its base or another view of its base has been"
    } else {
        " is being"
    };
    let gf = t.0.meta.lock().grad_fn.clone();
    let nr = t.output_nr();
    let msg = match creation {
        CreationMeta::MultiOutputNode => {
            let name = gf.map(|n| n.name).unwrap_or("UnbindBackward0");
            format!(
                "Output {} of {} is a view and{} modified inplace. This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.",
                nr, name, x
            )
        }
        _ => {
            let prefix = match gf {
                Some(n) => format!(
                    "Output {} of {} is a view of a view which was created in",
                    nr, n.name
                ),
                None => "A view was created in".to_string(),
            };
            format!(
                "{} no_grad mode and{} modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).",
                prefix, x
            )
        }
    };
    crate::Error::new(crate::ErrorKind::ViewInplaceForbidden, "inplace", msg)
}

/// Creates a view of `base` with `layout`, sharing storage and the root's version counter.
pub(crate) fn make_view(base: &Tensor, layout: Layout, multi_output: bool) -> Tensor {
    let storage = base.data_ref().storage.clone();
    let (root, creation) = root_and_creation(base, base.view_info(), multi_output);
    new_view(base, storage, layout, root, creation, None)
}

/// The root and creation mark of a view of `input` made now; `view_of` is the input's own root
/// and mark if it is a view (the mark propagates, like PyTorch's `propagate_creation_meta`).
fn root_and_creation(
    input: &Tensor,
    view_of: Option<(Tensor, CreationMeta)>,
    multi_output: bool,
) -> (Tensor, CreationMeta) {
    let creation = if !is_grad_enabled() {
        CreationMeta::NoGradMode
    } else if multi_output {
        CreationMeta::MultiOutputNode
    } else {
        CreationMeta::Default
    };
    match view_of {
        Some((root, prev)) => (root, CreationMeta::propagate(prev, creation)),
        None => (input.clone(), creation),
    }
}

/// A fresh view of `input` (over `storage`, counting in the input's version counter) whose
/// autograd fields are filled in before the tensor exists: no lock.
fn new_view(
    input: &Tensor,
    storage: crate::storage::Storage,
    layout: Layout,
    root: Tensor,
    creation: CreationMeta,
    pending: Option<PendingView>,
) -> Tensor {
    let mut meta = super::meta::AutogradMeta::default();
    meta.view = Some(Box::new(ViewMeta {
        base: root,
        creation,
        attr_version: input.version(),
        pending,
    }));
    let version = input.0.version.share();
    Tensor::from_parts_with_meta(storage, layout, input.dtype(), version, meta)
}

/// Creates the strided view `layout` of `input` (over `storage`, read with the input's layout)
/// whose backward is `bw`: one look at the input's
/// autograd fields (its view root, or its own history). A view made in grad mode keeps `bw` and
/// its input's edge pending until its `grad_fn` is first read.
pub(crate) fn make_strided_view(
    input: &Tensor,
    storage: crate::storage::Storage,
    layout: Layout,
    bw: AsStridedBackward,
) -> Result<Tensor> {
    let grad_mode = is_grad_enabled();
    // the input's root and creation if it is a view, else its history edge and leaf flag
    let (view_of, own) = {
        let m = input.0.meta.lock();
        match &m.view {
            Some(v) => (Some((v.base.clone(), v.creation)), None),
            None => (None, grad_mode.then(|| (history_edge(&m), m.requires_grad))),
        }
    };
    let (root, creation) = root_and_creation(input, view_of, false);
    let edge = match (grad_mode, own) {
        (false, _) => None,
        (true, Some((Some(e), _))) => Some(e),
        (true, Some((None, true))) => Some(Edge {
            node: grad_accumulator(input),
            input_nr: 0,
        }),
        (true, Some((None, false))) => None,
        (true, None) => gradient_edge(input)?,
    };
    let (pending, edge) = match edge {
        Some(edge) if creation == CreationMeta::Default => {
            let pending = PendingView {
                seq: super::node::next_seq(),
                edge,
                formula: bw,
            };
            (Some(pending), None)
        }
        edge => (None, edge.map(|e| (e, bw))),
    };
    let mut v = new_view(input, storage, layout, root, creation, pending);
    if let Some((edge, bw)) = edge {
        record_fresh(&mut v, smallvec![Some(edge)], Vec::new(), bw);
    }
    Ok(v)
}

/// The current grad_fn of `t`, regenerating a stale view's history first.
pub(crate) fn grad_fn_of(t: &Tensor) -> Result<Option<Arc<Node>>> {
    let stale = {
        let mut m = t.0.meta.lock();
        let m = &mut *m;
        match &mut m.view {
            None => return Ok(m.grad_fn.clone()),
            Some(v) => {
                let stale = v.attr_version != t.version();
                if let Some(p) = v.pending.take().filter(|_| !stale) {
                    // (built under the lock: a concurrent reader never sees neither form)
                    let out = (Dims::from_slice(p.formula.view.sizes()), t.dtype());
                    let node = Node::with_seq(
                        p.seq,
                        p.formula,
                        smallvec![Some(p.edge)],
                        vec![],
                        smallvec![out],
                    );
                    m.grad_fn = Some(node.clone());
                    m.output_nr = 0;
                    return Ok(Some(node));
                }
                if m.grad_fn.is_none() && !v.base.requires_grad() {
                    return Ok(None);
                }
                stale
            }
        }
    };
    if stale {
        let (_, creation) = t.view_info().expect("internal: checked view above");
        if creation != CreationMeta::Default {
            return Err(view_rebase_error(t, creation, true));
        }
        regenerate(t)?;
    }
    Ok(t.0.meta.lock().grad_fn.clone())
}

/// Drops a view's grad_fn and marks it out of date, so [`grad_fn_of`] regenerates it.
fn mark_stale(t: &Tensor) {
    let old = {
        let mut m = t.0.meta.lock();
        let pending = m.view.as_mut().and_then(|v| {
            v.attr_version = u64::MAX;
            v.pending.take()
        });
        (m.grad_fn.take(), pending)
    };
    // (the old history, often the view's own node, is dropped outside the lock)
    drop(old);
}

impl InplaceRecord {
    /// Readies the record for an in-place *view* op on `self_`, before its geometry changes: a
    /// view's history continues from the view's own gradient edge (its `grad_fn`, regenerated
    /// first if stale), as PyTorch's `unsqueeze_`/`t_` of a view do, instead of being rebased on
    /// its base.
    pub(crate) fn for_view_op(mut self, self_: &Tensor) -> Result<Self> {
        if self.base.take().is_some() {
            self.edges[0] = gradient_edge(self_)?;
        }
        Ok(self)
    }

    /// Finishes an in-place *view* op (`t_`, `unsqueeze_`, ...; the record readied by
    /// [`for_view_op`](Self::for_view_op)): the tensor's own history gains `bw`; no
    /// CopySlices, since no element changed.
    pub(crate) fn finish_view_op(self, self_: &Tensor, bw: impl Backward) -> Result<()> {
        let node = Node::new(
            bw,
            smallvec![self.edges.into_iter().next().flatten()],
            vec![],
            smallvec![output_meta(self_)],
        );
        set_grad_fn(self_, node, 0);
        Ok(())
    }
}
