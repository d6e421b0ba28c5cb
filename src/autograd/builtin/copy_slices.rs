//! PyTorch's CopySlices: the base's new history after an in-place op on one of its views. Its
//! backward takes the base's gradient, runs the in-place op's formula on the view's region of it,
//! and writes the result back into that region. Two fast paths (see the module note in
//! `builtin/mod.rs`): the gradient buffer is taken over instead of copied when nobody else can
//! see it, and an in-place scalar op (`mul_(2.0)`) is applied to the region in place.

use crate::autograd::engine;
use crate::autograd::node::{Backward, BackwardCtx, Grads, InnerNode, output_grad};
use crate::autograd::saved::SavedTensor;
use crate::backend::ScalarArith;
use crate::layout::Layout;
use crate::storage::Storage;
use crate::{Result, Tensor, bail};
use smallvec::smallvec;

/// See [`Backward::scalar_grad`]: the only input's gradient is `g`, `g * s` or `g / s`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScalarGrad {
    Identity,
    Mul(crate::Scalar),
    Div(crate::Scalar),
}

/// The in-place op `fnode` run on the view `view` of a base of geometry `base`. The op's node
/// lives inside it (one allocation; it is only ever run from here).
pub(crate) struct CopySlices<G: Backward> {
    base: Layout,
    view: Layout,
    fnode: InnerNode<G>,
}

impl<G: Backward> CopySlices<G> {
    /// The history of a base whose view `view` was written by an op of formula `bw` with `n_in`
    /// inputs (the written view first) and saved tensors `saved`.
    pub(crate) fn new(
        bw: G,
        n_in: usize,
        saved: Vec<SavedTensor>,
        base: Layout,
        view: Layout,
    ) -> Self {
        CopySlices {
            base,
            view,
            fnode: InnerNode::new(bw, n_in, saved),
        }
    }
}

impl<G: Backward> Backward for CopySlices<G> {
    fn name(&self) -> &'static str {
        "CopySlices"
    }
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        let n_in = self.fnode.n_in();
        let g = output_grad(grads);
        // PyTorch writes the formula's result into the view's region of the base gradient
        // (`grad_slice.copy_(res[0])`): a view whose elements share memory (an expanded view
        // written by `zero_`/`fill_`) refuses that write
        if self.view.has_internal_overlap() {
            return Err(crate::err!(
                InvalidArgument,
                "backward",
                "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please clone() the tensor before performing the operation. (CopySlices of an in-place op on an overlapping view)"
            ));
        }
        if ctx.create_graph {
            return self.apply_differentiable(ctx, g, n_in);
        }
        // (fast path F1 of `builtin/mod.rs`: the base gradient is taken over when it can be)
        let (mut result, region) = owned_base_grad(g, &self.base, &self.view)?;
        // fast path F2: an in-place scalar op (`mul_(2.0)`): its formula applied to the view's
        // region of the base gradient in place, with the values the general path below computes
        if n_in == 1
            && !self.fnode.saves
            && let Some(m) = self.fnode.formula.scalar_grad()
            && scalar_grad_region(&mut result, &region, m)
        {
            return Ok(smallvec![Some(result)]);
        }
        let slice = region_of_owned(&mut result, region);
        // The formula reads the slice in place (PyTorch clones it first). A result for another
        // input that aliases the slice is copied out before the slice is overwritten with the
        // formula's result below.
        let res = self.run_fnode(ctx, slice.clone(), false)?;
        let aliases = |t: &Tensor| t.data_ref().storage.same(&slice.data_ref().storage);
        let mut out: Grads = smallvec![None; n_in];
        let mut res = res.into_iter();
        let first = res.next().flatten();
        for (i, r) in res.enumerate() {
            out[i + 1] = match r {
                Some(r) if aliases(&r) => Some(r.detach().copy()?),
                r => r,
            };
        }
        let _g = crate::autograd::no_grad();
        match first {
            // the formula passed the slice through (or updated it in place): already there
            Some(r) if r.is_same(&slice) => {}
            Some(r)
                if aliases(&r)
                    && r.dtype() == slice.dtype()
                    && r.data_ref().layout == slice.data_ref().layout => {}
            Some(r) if r.shape() == slice.shape() && !aliases(&r) => {
                crate::backend::copy_raw(&slice.data(), &r.data(), slice.dtype(), r.dtype());
            }
            Some(r) => {
                slice.copy_(&r.detach().copy()?)?;
            }
            None => {
                slice.zero_()?;
            }
        }
        out[0] = Some(result);
        Ok(out)
    }
}

impl<G: Backward> CopySlices<G> {
    /// Runs the in-place op's formula (a node of its own, inside this one) on the gradient of
    /// the view region `g`, for the inputs `ctx` needs and always the written tensor. `g` is not
    /// handed over (`grad_owned`): it is the base gradient's buffer or part of its graph.
    fn run_fnode(&self, ctx: &BackwardCtx<'_>, g: Tensor, create_graph: bool) -> Result<Grads> {
        let mut needs: smallvec::SmallVec<[bool; 4]> =
            (0..self.fnode.n_in()).map(|i| ctx.needs(i)).collect();
        needs[0] = true;
        let args = engine::RunArgs {
            needs: &needs,
            create_graph,
            retain: ctx.retain,
            grad_owned: false,
        };
        engine::run_formula(
            &self.fnode.parts(),
            &self.fnode.formula,
            smallvec![Some(g)],
            args,
        )
    }

    /// The `create_graph` form: the same result built from recorded ops, so the gradient of
    /// the base is itself differentiable (grad of the view region read, replaced by what
    /// the in-place op's formula returns).
    fn apply_differentiable(&self, ctx: &BackwardCtx<'_>, g: Tensor, n_in: usize) -> Result<Grads> {
        use super::as_strided::scatter_geometry;
        let g_view = scatter_geometry(&[(&g, &self.base)], &self.view)?;
        let res = self.run_fnode(ctx, g_view.clone(), true)?;
        let mut out: Grads = smallvec![None; n_in];
        let cleared = g.sub(&scatter_geometry(&[(&g_view, &self.view)], &self.base)?)?;
        for (i, r) in res.into_iter().enumerate() {
            if i == 0 {
                out[0] = Some(match r {
                    Some(r) => cleared.add(&scatter_geometry(&[(&r, &self.view)], &self.base)?)?,
                    None => cleared.clone(),
                });
            } else {
                out[i] = r;
            }
        }
        Ok(out)
    }
}

/// `g[region] = g[region] op s` for a gradient buffer CopySlices holds outright (see
/// [`owned_base_grad`]), with the values `ArithBackward`'s `g * s` / `g / s` gives. False when
/// not done: an element type other than f32/f64 (unless the gradient passes through
/// unchanged), or a region naming an element twice.
fn scalar_grad_region(g: &mut Tensor, region: &Layout, grad: ScalarGrad) -> bool {
    let (op, s) = match grad {
        ScalarGrad::Identity => return true,
        ScalarGrad::Mul(s) => (ScalarArith::Mul, s),
        ScalarGrad::Div(s) => (ScalarArith::Div, s),
    };
    let dt = g.dtype();
    match std::sync::Arc::get_mut(&mut g.0) {
        Some(imp) => {
            crate::backend::scalar_update_owned(&mut imp.data.get_mut().storage, region, dt, op, s)
        }
        None => false,
    }
}

/// The tensor over `region` of a gradient buffer CopySlices holds outright (see
/// [`owned_base_grad`]; no autograd). It never leaves CopySlices' non-differentiable step (it is
/// written back or copied out, never saved), so it keeps a version counter of its own.
fn region_of_owned(grad: &mut Tensor, region: Layout) -> Tensor {
    let storage = match std::sync::Arc::get_mut(&mut grad.0) {
        Some(imp) => imp.data.get_mut().storage.clone(),
        None => unreachable!("internal: a CopySlices gradient buffer is shared"),
    };
    Tensor::from_parts(storage, region, grad.dtype())
}

/// `grad` with the base's geometry, held outright (its handle and its storage are nobody
/// else's, so it is written without locks), and the view's geometry inside that buffer. A
/// uniquely owned dense `grad` that already has the base's geometry is reused in place (nobody
/// else can observe it); otherwise it is copied into a fresh buffer.
fn owned_base_grad(mut grad: Tensor, base: &Layout, view: &Layout) -> Result<(Tensor, Layout)> {
    if view.offset() < base.offset() {
        bail!(
            Unsupported,
            "CopySlices",
            "view starts before its base in storage"
        );
    }
    let rel = view.offset() - base.offset();
    if let Some(g_off) = reusable_grad_offset(&mut grad, base, view) {
        let region = Layout::new(view.sizes(), view.strides(), g_off + rel);
        return Ok((grad, region));
    }
    let span = base.storage_span().max(view.storage_span()) - base.offset();
    // A dense base geometry covering its whole span is written completely by the copy below.
    let covered = base.is_non_overlapping_and_dense() && span == base.numel();
    let nbytes = span * grad.dtype().size();
    let storage = if covered {
        Storage::for_output(nbytes)?
    } else {
        Storage::zeroed(nbytes)?
    };
    let result = Tensor::from_parts(
        storage,
        Layout::new(base.sizes(), base.strides(), 0),
        grad.dtype(),
    );
    crate::backend::copy_raw(&result.data(), &grad.data(), grad.dtype(), grad.dtype());
    Ok((result, Layout::new(view.sizes(), view.strides(), rel)))
}

/// `grad`'s offset in its storage when CopySlices may write into it: the handle and its
/// storage are held by nobody else, it is dense with exactly the base's sizes and strides, and
/// every element of the view maps onto an element of the base. (Held by nobody else, `grad` is
/// read through an exclusive borrow, without its lock.)
fn reusable_grad_offset(grad: &mut Tensor, base: &Layout, view: &Layout) -> Option<usize> {
    let imp = std::sync::Arc::get_mut(&mut grad.0)?;
    if imp.sparse.is_some() {
        return None;
    }
    let d = imp.data.get_mut();
    let ok = d.storage.ref_count() == 1
        && d.layout.sizes() == base.sizes()
        && d.layout.strides() == base.strides()
        && base.is_non_overlapping_and_dense()
        && view.storage_span() <= base.offset() + base.numel();
    ok.then(|| d.layout.offset())
}
