//! Custom autograd functions shared by the tests of `custom_function.rs` (main crate) and the
//! gradcheck rows of `gradcheck_all/custom.rs` (seeded crate).

use tapegrad::autograd::{Function, FunctionCtx, FunctionGradCtx};
use tapegrad::{Result, Tensor};

/// `x * exp(x)`, saving its input; the backward is made of differentiable ops.
pub(crate) struct XExp;

impl Function for XExp {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = &inputs[0];
        ctx.save_for_backward(&[x]);
        Ok(vec![x.mul(&x.exp()?)?])
    }
    fn backward(&self, ctx: &FunctionGradCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let x = &ctx.saved_tensors()[0];
        Ok(vec![Some(grads[0].mul(&x.add(1.0)?.mul(&x.exp()?)?)?)])
    }
}

/// Two inputs, three outputs: `(x * y, x + y, sin(x))`, saving both inputs; the backward
/// computes only the gradients it is asked for.
pub(crate) struct Three;

impl Function for Three {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (x, y) = (&inputs[0], &inputs[1]);
        ctx.save_for_backward(&[x, y]);
        Ok(vec![x.mul(y)?, x.add(y)?, x.sin()?])
    }
    fn backward(&self, ctx: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let (x, y) = (&ctx.saved_tensors()[0], &ctx.saved_tensors()[1]);
        let gx = if ctx.needs_input_grad(0) {
            Some(g[0].mul(y)?.add(&g[1])?.add(&g[2].mul(&x.cos()?)?)?)
        } else {
            None
        };
        let gy = if ctx.needs_input_grad(1) {
            Some(g[0].mul(x)?.add(&g[1])?)
        } else {
            None
        };
        Ok(vec![gx, gy])
    }
}

/// `exp(x)`, saving its *output* (PyTorch's classic example): under `create_graph` the saved
/// output leads back to this node.
pub(crate) struct ExpOut;

impl Function for ExpOut {
    fn name(&self) -> &'static str {
        "MyExpBackward"
    }
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let y = inputs[0].exp()?;
        ctx.save_for_backward(&[&y]);
        Ok(vec![y])
    }
    fn backward(&self, ctx: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(g[0].mul(&ctx.saved_tensors()[0])?)])
    }
}

/// In place: `x *= y` (y a tensor), marked dirty; input order `(y, x)` so the written tensor is
/// not the first input. Saves `y` and the written `x` (an output), and reads the old `x` as
/// `x / y`, so its backward is differentiable (inputs away from zero).
pub(crate) struct MulInto;

impl Function for MulInto {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let (y, x) = (&inputs[0], &inputs[1]);
        x.mul_(y)?;
        ctx.mark_dirty(&[x]);
        ctx.save_for_backward(&[y, x]);
        Ok(vec![x.clone()])
    }
    fn backward(&self, ctx: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let (y, out) = (&ctx.saved_tensors()[0], &ctx.saved_tensors()[1]);
        Ok(vec![Some(g[0].mul(&out.div(y)?)?), Some(g[0].mul(y)?)])
    }
}
