//! Dispatch arms for indexing (getitem/setitem/index_put_) and set_/resize_: the `indexing` and `set_resize` fixtures.
//! Returns `CallErr::Missing(op)` for ops it does not own, so the next family is tried.

use super::*;

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        op => Err(CallErr::Missing(op.to_string())),
    }
}
