//! The autograd-aware all-reduce (PyTorch's functional collectives,
//! `torch.distributed.nn.functional.all_reduce`): a new tensor holding the reduction, recorded
//! so that backward all-reduces the gradient.
//!
//! d/dx sum_r x_r = 1 on every rank, so the gradient of a `Sum` all-reduce is the `Sum`
//! all-reduce of the output gradients (each rank's loss depends on every rank's input);
//! likewise the gradient of `Avg` is the `Avg` of the gradients. Every rank must run the
//! backward, as every rank ran the forward.

use super::{ProcessGroup, ReduceOp};
use crate::autograd::{Function, FunctionCtx, FunctionGradCtx};
use crate::{Result, Tensor, bail};

/// `x` reduced over `group` with `op`, as a new tensor (`x` is unchanged). Differentiable for
/// `Sum` and `Avg`: the backward all-reduces the gradient the same way. With an input that
/// requires grad, `Product`, `Max` and `Min` are `NotImplemented`; otherwise every dtype and
/// reduction of [`ProcessGroup::all_reduce_`] applies.
///
/// Every rank must call it (and run the backward) in the same order as its other collectives.
pub fn all_reduce(x: &Tensor, op: ReduceOp, group: &ProcessGroup) -> Result<Tensor> {
    if x.requires_grad() && crate::autograd::is_grad_enabled() {
        if !matches!(op, ReduceOp::Sum | ReduceOp::Avg) {
            bail!(
                NotImplemented,
                "all_reduce",
                "the derivative of all_reduce with ReduceOp::{:?} is not implemented (only Sum and Avg are differentiable)",
                op
            );
        }
        let f = AllReduce {
            op,
            group: group.clone(),
        };
        return Ok(f.apply(&[x])?.remove(0));
    }
    reduce_copy(x, op, group)
}

/// The reduction of `x` into a fresh tensor.
fn reduce_copy(x: &Tensor, op: ReduceOp, group: &ProcessGroup) -> Result<Tensor> {
    let out = x.detach().copy()?;
    let _g = crate::autograd::no_grad();
    group.all_reduce_(&out, op)?;
    Ok(out)
}

/// The recorded all-reduce.
struct AllReduce {
    op: ReduceOp,
    group: ProcessGroup,
}

impl Function for AllReduce {
    fn forward(&mut self, _ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![reduce_copy(&inputs[0], self.op, &self.group)?])
    }

    fn backward(&self, _ctx: &FunctionGradCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(all_reduce(&grads[0], self.op, &self.group)?)])
    }

    fn name(&self) -> &'static str {
        "AllReduceBackward"
    }
}
