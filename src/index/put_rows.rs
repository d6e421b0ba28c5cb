//! The fast path of `index_put_` for its most common form: one integer index tensor on dim 0
//! of a tensor whose rows (dims 1..) are contiguous — embedding-gradient style scatter-adds.
//! Indices are validated (and wrapped) once up front, so an error leaves the tensor unchanged;
//! then whole rows are copied or accumulated with vectorised row loops, reading the values in
//! place. Large accumulations split the index list into a fixed number of chunks (chosen from
//! the sizes alone), summed into private row buffers on the rayon pool and merged in chunk
//! order: the result does not depend on the number of threads.

use crate::backend::RowPut;
use crate::layout::Layout;
use crate::ops::movement::gather::read_index;
use crate::{DType, Result, Tensor, bail};

/// A validated row scatter: value row `j` goes to row `rows[j]` of the target.
pub(crate) struct RowPlan {
    /// Shape of the indexing result: the index tensor's shape, then the target's dims 1...
    pub(crate) shape: Vec<usize>,
    /// Target row of each value row, wrapped into `0..size(0)`.
    rows: Vec<u32>,
    /// Elements per row.
    row_len: usize,
}

/// Elements per row and stride of dim 0 when dims 1.. of `l` are row-major contiguous (size-1
/// dims ignored) with at least one element per row.
fn row_geometry(l: &Layout) -> Option<(usize, usize)> {
    let (sizes, strides) = (l.sizes(), l.strides());
    if sizes.is_empty() {
        return None;
    }
    let mut acc = 1usize;
    for (&s, &st) in sizes[1..].iter().zip(&strides[1..]).rev() {
        if s != 1 && st != acc {
            return None;
        }
        acc = acc.checked_mul(s)?;
    }
    (acc > 0).then_some((acc, strides[0]))
}

/// Plans `self_[idx] (op)= values` when `indices` is one integer index tensor on dim 0 and
/// `self_`'s rows are contiguous; `None` when the fast path does not apply. Errors are the
/// general path's (an index out of range).
pub(crate) fn plan_rows(self_: &Tensor, indices: &[Option<Tensor>]) -> Option<Result<RowPlan>> {
    let [Some(ix)] = indices else {
        return None;
    };
    if !matches!(ix.dtype(), DType::I64 | DType::I32 | DType::I16 | DType::I8)
        || ix.is_sparse()
        || self_.is_sparse()
    {
        return None;
    }
    let l = self_.layout();
    let (row_len, _) = row_geometry(&l)?;
    let size = l.sizes()[0];
    if size > u32::MAX as usize {
        return None;
    }
    let vals = match read_index(ix) {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    let mut rows = Vec::with_capacity(vals.len());
    let n = size as i64;
    for &x in &vals {
        if x < -n || x >= n {
            return Some(Err(crate::err!(
                IndexOutOfRange,
                "index",
                "index {} is out of bounds for dimension {} with size {}",
                x,
                0,
                size
            )));
        }
        rows.push(if x < 0 { x + n } else { x } as u32);
    }
    let mut shape = ix.shape();
    shape.extend_from_slice(&l.sizes()[1..]);
    Some(Ok(RowPlan {
        shape,
        rows,
        row_len,
    }))
}

/// Writes (or, with `accumulate`, adds) the value rows into `dst` at the planned rows. `vals` is
/// contiguous, of `dst`'s dtype, with `plan.shape`, and does not share `dst`'s storage.
pub(crate) fn scatter_rows(
    dst: &Tensor,
    plan: &RowPlan,
    vals: &Tensor,
    accumulate: bool,
) -> Result<()> {
    let (d, v) = (dst.data(), vals.data());
    let r = plan.row_len;
    let nvals = plan.rows.len() * r;
    let (_, row_stride) =
        row_geometry(&d.layout).expect("internal: the row plan was made for this layout");
    if !v.layout.is_contiguous()
        || vals.dtype() != dst.dtype()
        || v.layout.numel() != nvals
        || v.storage.same(&d.storage)
    {
        bail!(
            InvalidArgument,
            "index_put_",
            "internal: row scatter needs {} contiguous values of dtype {} in another storage",
            nvals,
            dst.dtype().name()
        );
    }
    if nvals == 0 {
        return Ok(());
    }
    let g = RowPut {
        offset: d.layout.offset(),
        size: d.layout.sizes()[0],
        row_stride,
        row_len: r,
        rows: &plan.rows,
        accumulate,
    };
    crate::backend::movement::put_rows(&d, &g, &v, dst.dtype())
}
