//! The helpers every backward rule of `ops` is written with, so that a rule reads as its
//! formula:
//!
//! - [`backward!`](crate::ops::grad::backward) implements [`Backward`](crate::autograd::Backward) for a struct from its
//!   node name and its formula (no `fn name` / `fn apply` signature to spell out); with
//!   `g: Tensor` the formula receives the (only) output's gradient, otherwise the raw [`Grads`].
//! - [`GradIf::grad_if`] on [`BackwardCtx`]: "the gradient of input `i`, if it is needed".
//! - [`grads`] / [`input_grad`]: the formula's result, one optional gradient per input.
//!
//! ```text
//! struct DotBackward;
//! backward!(DotBackward, "DotBackward0", |self, ctx, g: Tensor| {
//!     let (a, b) = (&ctx.saved[0], &ctx.saved[1]);
//!     grads([ctx.grad_if(0, || g.mul(b))?, ctx.grad_if(1, || g.mul(a))?])
//! });
//! ```

use crate::autograd::{BackwardCtx, Grads};
use crate::{Result, Tensor};

/// "The gradient of input `i`, if it is needed", as a method of [`BackwardCtx`] (an extension
/// trait: the context itself belongs to `autograd`).
pub(crate) trait GradIf {
    /// `Some(f()?)` if input `i` needs a gradient, else `None` without running `f`.
    fn grad_if(&self, i: usize, f: impl FnOnce() -> Result<Tensor>) -> Result<Option<Tensor>>;
}

impl GradIf for BackwardCtx<'_> {
    fn grad_if(&self, i: usize, f: impl FnOnce() -> Result<Tensor>) -> Result<Option<Tensor>> {
        if self.needs(i) {
            f().map(Some)
        } else {
            Ok(None)
        }
    }
}

/// A formula's result: one optional gradient per forward input.
pub(crate) fn grads<const N: usize>(gs: [Option<Tensor>; N]) -> Result<Grads> {
    Ok(gs.into_iter().collect())
}

/// A one-input formula's result.
pub(crate) fn input_grad(g: Tensor) -> Result<Grads> {
    Ok(smallvec::smallvec![Some(g)])
}

/// `backward!(Type, name, |self, ctx, g: Tensor| body)` implements [`Backward`](crate::autograd::Backward) for `Type`:
/// `name` (an expression, may read `self`) is the node name, `body` (returning
/// `Result<Grads>`) the formula, with `g` the output's gradient. Write `|self, ctx, g| body` to
/// receive the raw per-output [`Grads`] instead (multi-output ops). `ctx` may be `_`.
macro_rules! backward {
    ($ty:ident, $name:expr, |$s:ident, $ctx:pat, $g:ident: Tensor| $body:expr) => {
        impl $crate::autograd::Backward for $ty {
            fn name(&$s) -> &'static str {
                $name
            }
            fn apply(
                &$s,
                $ctx: &$crate::autograd::BackwardCtx<'_>,
                grads: $crate::autograd::Grads,
            ) -> $crate::Result<$crate::autograd::Grads> {
                let $g = $crate::autograd::output_grad(grads);
                $body
            }
        }
    };
    ($ty:ident, $name:expr, |$s:ident, $ctx:pat, $g:tt| $body:expr) => {
        impl $crate::autograd::Backward for $ty {
            fn name(&$s) -> &'static str {
                $name
            }
            fn apply(
                &$s,
                $ctx: &$crate::autograd::BackwardCtx<'_>,
                $g: $crate::autograd::Grads,
            ) -> $crate::Result<$crate::autograd::Grads> {
                $body
            }
        }
    };
}
pub(crate) use backward;

/// A backward formula's result `r` as PyTorch's fused backward kernel would return it under
/// `create_graph`: that kernel (`threshold_backward`, `leaky_relu_backward`, `sgn(x) * grad`,
/// `nll_loss_backward`, ...) also reads the saved tensors `on`, and its own derivative w.r.t.
/// them is zero (derivatives.yaml: `self: zeros_like(grad)`), so `r` requires grad through
/// them when they do. When recording and `r` has no history of its own yet, `r` gets a node
/// `name` linking it to `on` that gives them zeros; otherwise `r` is returned as is.
pub(crate) fn zero_grad_link(r: Tensor, on: &[&Tensor], name: &'static str) -> Result<Tensor> {
    if !crate::autograd::is_grad_enabled()
        || r.requires_grad()
        || !on.iter().any(|t| t.requires_grad())
    {
        return Ok(r);
    }
    let metas = on.iter().map(|t| (t.shape(), t.dtype())).collect();
    crate::autograd::record(&[&r], on, Vec::new, ZeroLinkBackward { name, metas })?;
    Ok(r)
}

/// [`zero_grad_link`]'s node: zeros for each linked tensor (shape and dtype kept).
struct ZeroLinkBackward {
    name: &'static str,
    metas: Vec<(Vec<usize>, crate::DType)>,
}

backward!(ZeroLinkBackward, self.name, |self, ctx, _g: Tensor| {
    self.metas
        .iter()
        .enumerate()
        .map(|(i, (shape, dt))| ctx.grad_if(i, || Tensor::zeros(shape, *dt)))
        .collect()
});

/// A gradient `r` of one of PyTorch's multi-output backward nodes (`convolution_backward`,
/// `native_layer_norm_backward`, `native_batch_norm_backward`) as PyTorch returns it under
/// `create_graph`: that node is differentiable in the forward's inputs `on`, so each of its
/// outputs requires grad when one of them does, even one whose value does not depend on them
/// (a bias gradient, an input gradient with every other operand constant); its
/// double-backward formula gives them no gradient (undefined) through that output. When
/// recording and `r` has no history of its own yet, `r` gets a node `name` linking it to `on`
/// that returns no gradient; otherwise `r` is returned as is.
pub(crate) fn undefined_grad_link(r: Tensor, on: &[&Tensor], name: &'static str) -> Result<Tensor> {
    if !crate::autograd::is_grad_enabled()
        || r.requires_grad()
        || !on.iter().any(|t| t.requires_grad())
    {
        return Ok(r);
    }
    let n = on.len();
    crate::autograd::record(&[&r], on, Vec::new, UndefinedLinkBackward { name, n })?;
    Ok(r)
}

/// [`undefined_grad_link`]'s node: no gradient for any linked tensor.
struct UndefinedLinkBackward {
    name: &'static str,
    n: usize,
}

backward!(UndefinedLinkBackward, self.name, |self, _, _g: Tensor| {
    Ok(smallvec::smallvec![None; self.n])
});
