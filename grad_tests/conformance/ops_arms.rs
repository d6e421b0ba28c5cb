//! Dispatch arms for the kernel ops (elementwise, comparison, reductions, matmul, NN functions, data movement): the `ops` fixtures.
//! Returns `CallErr::Missing(op)` for ops it does not own, so the next family is tried.

use super::*;

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        op => Err(CallErr::Missing(op.to_string())),
    }
}
