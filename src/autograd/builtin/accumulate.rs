//! AccumulateGrad, the sink of a leaf that requires grad: incoming gradients are summed into
//! its `.grad` with PyTorch's rules. The first gradient is taken over without a copy when nobody
//! else can see it (see the fast-path note in `builtin/mod.rs`).

use crate::autograd::node::{Backward, BackwardCtx, Grads, Node, output_meta};
use crate::autograd::set_grad_enabled;
use crate::{Result, Tensor};
use std::sync::{Arc, Weak};

/// The AccumulateGrad node of a leaf requiring grad (weakly cached on the tensor, like PyTorch).
pub(crate) fn grad_accumulator(t: &Tensor) -> Arc<Node> {
    let mut m = t.0.meta.lock();
    if let Some(n) = m.grad_accumulator.as_ref().and_then(Weak::upgrade) {
        return n;
    }
    let n = Node::new(
        AccumulateGrad { leaf: t.clone() },
        smallvec::SmallVec::new(),
        vec![],
        smallvec::smallvec![output_meta(t)],
    );
    m.grad_accumulator = Some(Arc::downgrade(&n));
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
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        let Some(mut g) = grads.into_iter().next().flatten() else {
            return Ok(Grads::new());
        };
        let hooks = self.leaf.0.meta.lock().hooks.clone();
        for (_, h) in hooks {
            if let Some(ng) = h(&g)? {
                g = ng;
            }
        }
        accumulate_into(&self.leaf, g, ctx.create_graph)?;
        // post-accumulate-grad hooks see the updated `.grad` (DDP starts its reductions here)
        let post = self.leaf.0.meta.lock().post_accumulate_hooks.clone();
        for (_, h) in post {
            h(&self.leaf)?;
        }
        Ok(Grads::new())
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
        // (fast path F4 of `builtin/mod.rs`: the first gradient is kept without a copy when
        // nobody else can see it)
        None => {
            // with create_graph the gradient's own history must be kept, so it is never copied
            let keep = create_graph
                || (Arc::strong_count(&g.0) == 1
                    && g.0.meta.lock().view.is_none()
                    && g.storage_unique());
            if keep { g } else { g.detach().copy()? }
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
