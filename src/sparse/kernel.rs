//! Tensor-level building blocks of the sparse ops over the backend's sparse front door
//! (`backend::sparse`): the pattern data of a payload, row gather/scatter over `values` (rows
//! of `dense` elements) by a [`RowSel`] / [`Rows`] selection, and fresh contiguous tensors
//! around the storages the kernels return.

pub(crate) use crate::backend::sparse::PatternData;
pub(crate) use crate::backend::{RowSel, Rows};

use super::SparseParts;
use crate::backend::sparse as door;
use crate::layout::Layout;
use crate::storage::Storage;
use crate::{DType, Result, Tensor};

/// A contiguous tensor of `shape` and dtype `dt` over a fresh kernel output.
pub(crate) fn tensor(storage: Storage, shape: &[usize], dt: DType) -> Tensor {
    Tensor::from_parts(storage, Layout::contiguous(shape), dt)
}

/// Runs `f` on the pattern data of `p`'s index tensors.
pub(crate) fn with_pattern<R>(p: &SparseParts, f: impl FnOnce(&PatternData<'_>) -> R) -> R {
    match p {
        SparseParts::Coo { indices, .. } => f(&PatternData::Coo {
            ix: &indices.data(),
        }),
        SparseParts::Csr { crow, col, .. } => f(&PatternData::Csr {
            crow: &crow.data(),
            col: &col.data(),
            dt: crow.dtype(),
        }),
    }
}

/// A detached contiguous copy-or-alias of a dense tensor (what sparse payloads hold).
pub(crate) fn contig(t: &Tensor) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    t.detach().contiguous()
}

/// Elements per row of a `[n, dense..]` values tensor (0 when the values are empty: with
/// `n == 0` the dense sizes alone may overflow, and no row is ever addressed).
pub(crate) fn row_len(values: &Tensor) -> usize {
    if values.numel() == 0 {
        return 0;
    }
    values.shape()[1..].iter().product()
}

/// `out[j] = v[sel[j]]` over rows of `rl` elements of a contiguous tensor `v`; `out` has
/// `out_shape` (`sel.len()` rows).
pub(crate) fn gather_as(
    v: &Tensor,
    sel: Rows<'_>,
    rl: usize,
    out_shape: &[usize],
) -> Result<Tensor> {
    debug_assert!(v.is_contiguous() && !v.is_sparse());
    let n: usize = out_shape.iter().product();
    let st = door::gather_rows(&v.data(), sel, rl, n, v.dtype())?;
    Ok(tensor(st, out_shape, v.dtype()))
}

/// `out[j] = v[sel[j]]` over rows of a contiguous `[n, dense..]` tensor.
pub(crate) fn gather_rows(v: &Tensor, sel: Rows<'_>) -> Result<Tensor> {
    let mut shape = v.shape();
    shape[0] = sel.len();
    gather_as(v, sel, row_len(v), &shape)
}

/// `out = zeros(out_shape); out[sel[j]] += v[j]` over rows of a contiguous `[m, dense..]`
/// tensor (`out_shape`: rows of the same dense sizes).
pub(crate) fn scatter_as(v: &Tensor, sel: Rows<'_>, out_shape: &[usize]) -> Result<Tensor> {
    debug_assert!(v.is_contiguous() && !v.is_sparse());
    let n: usize = out_shape.iter().product();
    let st = door::scatter_rows(&v.data(), sel, n, row_len(v), v.dtype())?;
    Ok(tensor(st, out_shape, v.dtype()))
}

/// `out = zeros([n, dense..]); out[sel[j]] += v[j]` over rows.
pub(crate) fn scatter_rows(v: &Tensor, sel: Rows<'_>, n: usize) -> Result<Tensor> {
    let mut shape = v.shape();
    shape[0] = n;
    scatter_as(v, sel, &shape)
}
