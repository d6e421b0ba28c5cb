//! The backward node layer_norm and group_norm share. PyTorch's `native_layer_norm_backward` and
//! `native_group_norm_backward` are one node each, returning the input, weight and bias
//! gradients. With no graph being built the backend's fused kernel computes them
//! ([`FusedNorm::fused_grads`]); under `create_graph` the same formula composed of
//! differentiable ops does ([`FusedNorm::composite_grads`]). layer_norm's gradients are then
//! linked to the saved input, weight and bias (no gradient back): PyTorch's
//! `native_layer_norm_backward` is one node differentiable in them, so each gradient requires
//! grad when one of them does. group_norm's are not: PyTorch's double-backward formula
//! (`infinitely_differentiable_native_group_norm_backward`) is itself a composite, so the bias
//! gradient (`sum(g)`) requires grad only when the output gradient does.

use crate::autograd::{BackwardCtx, Grads, is_grad_enabled};
use crate::layout::Layout;
use crate::ops::grad::undefined_grad_link;
use crate::storage::Storage;
use crate::{DType, Result, Tensor};

/// The input, weight and bias gradients, each only when needed.
pub(super) type Three = [Option<Tensor>; 3];

/// A fused normalization's backward. Its node saves `[x, stats, weight?, bias?]`.
pub(super) trait FusedNorm {
    /// The name of the node linking the gradients under `create_graph` (`None`: not linked).
    const DOUBLE_BACKWARD: Option<&'static str>;
    /// Whether a weight and a bias were given.
    fn affine(&self) -> (bool, bool);
    /// The backend's kernel (no graph).
    fn fused_grads(
        &self,
        x: &Tensor,
        stats: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three>;
    /// The same formula composed of differentiable ops (a graph is being built).
    fn composite_grads(
        &self,
        x: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three>;
}

/// The node's formula for the output gradient `g`: one gradient per recorded input
/// (`x`, then the weight and bias when given).
pub(super) fn fused_norm_grads<N: FusedNorm>(
    norm: &N,
    ctx: &BackwardCtx<'_>,
    g: Tensor,
) -> Result<Grads> {
    let (x, stats) = (&ctx.saved[0], &ctx.saved[1]);
    let (has_w, has_b) = norm.affine();
    let w = has_w.then(|| &ctx.saved[2]);
    let ib = 1 + has_w as usize;
    let need = [ctx.needs(0), has_w && ctx.needs(1), has_b && ctx.needs(ib)];
    let [gx, gw, gb] = if is_grad_enabled() {
        let grads = norm.composite_grads(x, w, &g, need)?;
        match N::DOUBLE_BACKWARD {
            Some(name) => {
                let mut on = vec![x];
                on.extend(w);
                on.extend(has_b.then(|| &ctx.saved[ib + 1]));
                let link =
                    |t: Option<Tensor>| t.map(|t| undefined_grad_link(t, &on, name)).transpose();
                let [gx, gw, gb] = grads;
                [link(gx)?, link(gw)?, link(gb)?]
            }
            None => grads,
        }
    } else {
        norm.fused_grads(x, stats, w, &g, need)?
    };
    let mut out: Grads = smallvec::smallvec![gx];
    if has_w {
        out.push(gw);
    }
    if has_b {
        out.push(gb);
    }
    Ok(out)
}

/// The fresh storages a fused kernel wrote, as contiguous tensors of `shapes` and dtype `dt`.
pub(super) fn from_storages(
    outs: [Option<Storage>; 3],
    shapes: [Vec<usize>; 3],
    dt: DType,
) -> Three {
    let mut r: Three = [None, None, None];
    for ((r, s), shape) in r.iter_mut().zip(outs).zip(shapes) {
        *r = s.map(|s| Tensor::from_parts(s, Layout::contiguous(&shape), dt));
    }
    r
}

/// A fused backward kernel's operands: the input and the weight contiguous, the output gradient
/// in the input's dtype and contiguous (no autograd: the kernels read raw storage).
pub(super) fn kernel_operands(
    x: &Tensor,
    g: &Tensor,
    w: Option<&Tensor>,
) -> Result<(Tensor, Tensor, Option<Tensor>)> {
    Ok((
        x.contiguous()?,
        g.to_dtype(x.dtype())?.contiguous()?,
        contig(w)?,
    ))
}

/// `t` contiguous (no autograd), if given.
pub(super) fn contig(t: Option<&Tensor>) -> Result<Option<Tensor>> {
    t.map(|t| t.contiguous()).transpose()
}
