//! Shared plumbing for ops: operand geometry (broadcast strides as `isize`), overlap checks for
//! in-place writes, and [`write_back`], the
//! in-place protocol for ops that compute their result out of place (so self-aliasing such as
//! `x.pow_(&x)` is exact).

use smallvec::SmallVec;

/// Per-dimension values of a tensor, inline up to 6 dims (no allocation on the hot path).
pub(crate) type SmallDims<T> = SmallVec<[T; 6]>;
use crate::autograd::{Backward, SavedTensor, check_inplace, record_inplace};
use crate::dtype::Operand;
use crate::layout::Layout;
use crate::ops::elementwise::binary::{can_cast, cast_error};
use crate::tensor::TensorData;
use crate::{Result, Tensor, bail};

/// Strides of `layout` broadcast to `shape` (0 for broadcast dims), as `isize`.
pub(crate) fn broadcast_strides(layout: &Layout, shape: &[usize]) -> SmallDims<isize> {
    let nd = shape.len();
    let ld = layout.dim();
    (0..nd)
        .map(|i| {
            if i + ld < nd {
                0
            } else {
                let j = i + ld - nd;
                if layout.sizes()[j] == 1 && shape[i] != 1 {
                    0
                } else {
                    layout.strides()[j] as isize
                }
            }
        })
        .collect()
}

/// PyTorch's `assert_no_internal_overlap` for a tensor about to be written.
pub(crate) fn check_no_internal_overlap(t: &TensorData, op: &'static str) -> Result<()> {
    if t.layout.has_internal_overlap() {
        bail!(
            InvalidArgument,
            op,
            "unsupported operation: more than one element of the written-to tensor refers to a single memory location. Please copy() the tensor (a `clone()` of a `Tensor` is the same tensor) before performing the operation."
        );
    }
    Ok(())
}

/// Overlap of two tensors' memory: `Full` (same elements, same order), `Partial` or `No`.
#[derive(PartialEq, Eq, Debug)]
pub(crate) enum Overlap {
    No,
    Full,
    Partial,
}

pub(crate) fn overlap(
    a: &TensorData,
    b: &TensorData,
    itemsize: usize,
    b_itemsize: usize,
) -> Overlap {
    if !a.storage.same(&b.storage) || a.layout.numel() == 0 || b.layout.numel() == 0 {
        return Overlap::No;
    }
    let a_begin = a.layout.offset() * itemsize;
    let a_end = a.layout.storage_span() * itemsize;
    let b_begin = b.layout.offset() * b_itemsize;
    let b_end = b.layout.storage_span() * b_itemsize;
    if a_begin == b_begin
        && a_end == b_end
        && a.layout.strides() == b.layout.strides()
        && a.layout.sizes() == b.layout.sizes()
    {
        return Overlap::Full;
    }
    if a_begin < b_end && b_begin < a_end {
        // PyTorch only decides for non-overlapping-and-dense operands; otherwise it is "too hard"
        // and allowed. Mirror that.
        if !a.layout.is_non_overlapping_and_dense() || !b.layout.is_non_overlapping_and_dense() {
            return Overlap::No;
        }
        return Overlap::Partial;
    }
    Overlap::No
}

/// Rejects a partial overlap between the written tensor and an input.
pub(crate) fn check_no_partial_overlap(
    out: &Tensor,
    input: &Tensor,
    op: &'static str,
) -> Result<Overlap> {
    let o = overlap(
        &out.data(),
        &input.data(),
        out.dtype().size(),
        input.dtype().size(),
    );
    if o == Overlap::Partial {
        bail!(
            InvalidArgument,
            op,
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please copy() the tensor (a `clone()` of a `Tensor` is the same tensor) before performing the operation."
        );
    }
    Ok(o)
}

/// PyTorch's `assert_no_overlap` (used by `index_put_`): rejects a full or partial overlap
/// between the written tensor and an input. Like PyTorch, operands that are not
/// non-overlapping-and-dense are "too hard" to decide and pass (the same tensor never does).
pub(crate) fn check_no_overlap(out: &Tensor, input: &Tensor, op: &'static str) -> Result<()> {
    let (a, b) = (out.data(), input.data());
    let dense = a.layout.is_non_overlapping_and_dense() && b.layout.is_non_overlapping_and_dense();
    let hit = out.is_same(input)
        || (dense && overlap(&a, &b, out.dtype().size(), input.dtype().size()) != Overlap::No);
    if hit {
        bail!(
            InvalidArgument,
            op,
            "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please copy() the tensor (a `clone()` of a `Tensor` is the same tensor) before performing the operation."
        );
    }
    Ok(())
}

/// `t` (made contiguous) as a fresh, non-view tensor of `shape` (same numel) with no autograd
/// history: turns an internally computed temporary into an op's result, which PyTorch never
/// reports as a view of that temporary.
pub(crate) fn fresh_output(t: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let c = if t.is_contiguous() {
        t.clone()
    } else {
        let _g = crate::autograd::no_grad();
        t.contiguous()?
    };
    let d = c.data();
    debug_assert_eq!(d.layout.numel(), shape.iter().product::<usize>());
    let strides = crate::layout::Layout::contiguous(shape).strides().to_vec();
    Ok(Tensor::from_parts(
        d.storage,
        crate::layout::Layout::new(shape.to_vec(), strides, d.layout.offset()),
        c.dtype(),
    ))
}

/// Writes an out-of-place result back into `a` (in-place protocol, validation done by the caller
/// except for the autograd/overlap checks done here). `saved` receives `a`'s pre-op value (a
/// private copy, only when autograd records) and `a` itself after the op.
pub(crate) fn write_back(
    a: &Tensor,
    others: &[&Tensor],
    name: &'static str,
    result: impl FnOnce() -> Result<Tensor>,
    saved: impl FnOnce(Option<SavedTensor>, &Tensor) -> Vec<SavedTensor>,
    bw: impl Backward,
) -> Result<Tensor> {
    let rec = check_inplace(a, others)?;
    let res = checked_result(a, others, name, result)?;
    let orig = if rec.is_some() {
        // a recorded clone: the saved pre-op value stays differentiable (double backward)
        Some(SavedTensor::private(a.copy()?))
    } else {
        None
    };
    let before = a.version();
    crate::backend::copy_raw(&a.data(), &res.data(), a.dtype(), res.dtype());
    a.0.version.bump();
    let saved = || {
        saved(orig, a)
            .into_iter()
            .map(|s| s.saved_before_write(a, before))
            .collect()
    };
    record_inplace(rec, a, saved, bw)?;
    Ok(a.clone())
}

/// [`write_back`] for an op PyTorch does not differentiate (`logical_and_`, `bitwise_not_`,
/// ...): the same validation and write, no autograd check and no record, so a tensor keeps
/// its history (PyTorch's non-differentiable in-place ops leave `grad_fn` as it was).
pub(crate) fn write_back_untracked(
    a: &Tensor,
    others: &[&Tensor],
    name: &'static str,
    result: impl FnOnce() -> Result<Tensor>,
) -> Result<Tensor> {
    let res = checked_result(a, others, name, result)?;
    crate::backend::copy_raw(&a.data(), &res.data(), a.dtype(), res.dtype());
    a.0.version.bump();
    Ok(a.clone())
}

/// The checks an in-place write of `a` makes after autograd's, in PyTorch's order: `a`'s own
/// overlap and its partial overlap with `others`, then the out-of-place result (computed
/// without recording), which must keep `a`'s shape and cast to `a`'s dtype.
fn checked_result(
    a: &Tensor,
    others: &[&Tensor],
    name: &'static str,
    result: impl FnOnce() -> Result<Tensor>,
) -> Result<Tensor> {
    check_no_internal_overlap(&a.data_ref(), name)?;
    for o in others {
        check_no_partial_overlap(a, o, name)?;
    }
    let res = {
        let _g = crate::autograd::no_grad();
        result()?
    };
    if res.shape() != a.shape() {
        bail!(
            ShapeMismatch,
            name,
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            a.shape(),
            res.shape()
        );
    }
    if !can_cast(res.dtype(), a.dtype()) {
        return Err(cast_error(name, res.dtype(), a.dtype()));
    }
    Ok(res)
}

pub(crate) fn tensors(ops: &[&Operand]) -> Vec<Tensor> {
    ops.iter()
        .filter_map(|o| match o {
            Operand::Tensor(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}
