//! Values-level backward formulas of the sparse ops. Every sparse op is, on `values`, either a
//! row selection (`out.values[j] = x.values[map[j]]`, possibly narrowed along dense dims), a
//! segment sum (`out.values[map[k]] += x.values[k]`), a masking (`to_dense` / from values) or a
//! scatter into a dense tensor (`to_sparse_*` of a dense input). The incoming gradient of a sparse
//! output may be sparse with the output's own pattern (its values are used as they are), sparse
//! with another pattern or dense (both are read at the output's positions, PyTorch's
//! `sparse_mask`). Backward formulas run without building a graph (no double backward).

use super::kernel::{RowSel, Rows, contig, gather_rows, scatter_as, scatter_rows, with_pattern};
use super::{SparseParts, make};
use crate::backend::sparse as door;
use crate::ops::grad::backward;
use crate::{Result, Tensor};

/// Linear positions over the sparse dims of every stored entry, in storage order.
pub(crate) fn positions(p: &SparseParts, shape: &[usize]) -> Result<Vec<usize>> {
    with_pattern(p, |pd| door::positions(pd, shape))
}

/// (batches, rows, cols) of a 2-D or 3-D CSR shape.
pub(crate) fn csr_dims(shape: &[usize]) -> (usize, usize, usize) {
    if shape.len() == 3 {
        (shape[0], shape[1], shape[2])
    } else {
        (1, shape[0], shape[1])
    }
}

/// `batches * (rows + 1)`, the length of a CSR `crow_indices` for `shape`, or `None` when it
/// overflows (a CSR of that shape cannot exist: no `crow_indices` is that long).
pub(crate) fn csr_crow_len(shape: &[usize]) -> Option<usize> {
    let (b, r, _) = csr_dims(shape);
    r.checked_add(1).and_then(|r1| b.checked_mul(r1))
}

/// d(loss)/d(out.values) from the gradient `g` flowing into the sparse output `(p, shape)`.
pub(crate) fn grad_values(p: &SparseParts, shape: &[usize], g: &Tensor) -> Result<Tensor> {
    let vals = p.values();
    let g = if let Some(gp) = g.sparse_parts() {
        if gp.same_pattern(p) {
            return contig(&gp.values().to_dtype(vals.dtype())?);
        }
        g.to_dense()?
    } else {
        g.clone()
    };
    let _ng = crate::autograd::no_grad();
    let pos = positions(p, shape)?;
    if vals.numel() == 0 {
        // empty values (nnz = 0 or an empty dense dim): the sparse position count may overflow
        return Tensor::zeros(&vals.shape(), vals.dtype());
    }
    let dense_shape = &vals.shape()[1..];
    let nsp: usize = shape[..shape.len() - dense_shape.len()].iter().product();
    let mut flat = vec![nsp as i64];
    flat.extend(dense_shape.iter().map(|&s| s as i64));
    let gd = g.to_dtype(vals.dtype())?.contiguous()?.reshape(&flat)?;
    let gd = contig(&gd)?;
    gather_rows(&gd, Rows::List(&pos))
}

/// The dense tensor of `shape` holding `values` (rows) at the linear sparse positions `pos`,
/// duplicates summed.
pub(crate) fn scatter_dense(values: &Tensor, pos: &[usize], shape: &[usize]) -> Result<Tensor> {
    scatter_as(values, Rows::List(pos), shape)
}

/// How `out.values` derives from `x.values`.
pub(crate) enum ValuesMap {
    /// `out.values[j] = x.values[map[j]]` narrowed to `window` (per dense dim: start, full size).
    Select {
        map: RowSel,
        window: Option<Vec<(usize, usize)>>,
    },
    /// `out.values[map[k]] += x.values[k]`.
    SegmentSum { map: Vec<usize> },
}

/// Backward of a sparse -> sparse op described by a [`ValuesMap`].
pub(crate) struct SparseMapBackward {
    pub(crate) name: &'static str,
    pub(crate) x: SparseParts,
    pub(crate) x_shape: Vec<usize>,
    pub(crate) out: SparseParts,
    pub(crate) out_shape: Vec<usize>,
    pub(crate) map: ValuesMap,
}

backward!(SparseMapBackward, self.name, |self, _, g: Tensor| {
    let _ng = crate::autograd::no_grad();
    let gv = grad_values(&self.out, &self.out_shape, &g)?;
    let xn = self.x.nnz();
    let gx = match &self.map {
        ValuesMap::Select { map, window } => {
            let gv = match window {
                Some(w) => pad_dense(&gv, w)?,
                None => gv,
            };
            scatter_rows(&gv, map.rows(), xn)?
        }
        ValuesMap::SegmentSum { map } => gather_rows(&gv, Rows::List(map))?,
    };
    Ok(smallvec::smallvec![Some(make(
        self.x.with_values(gx),
        &self.x_shape
    )?)])
});

/// Embeds `[m, d1'..]` into zeros `[m, d1..]` at the per-dim (start, full size) window.
fn pad_dense(gv: &Tensor, window: &[(usize, usize)]) -> Result<Tensor> {
    let mut shape = gv.shape();
    for (k, &(_, full)) in window.iter().enumerate() {
        shape[k + 1] = full;
    }
    let out = Tensor::zeros(&shape, gv.dtype())?;
    if gv.numel() == 0 {
        // nothing to embed (and narrowing an empty tensor with huge sizes may overflow)
        return Ok(out);
    }
    let mut v = out.clone();
    for (k, &(start, _)) in window.iter().enumerate() {
        v = v.narrow((k + 1) as i64, start as i64, gv.shape()[k + 1])?;
    }
    v.copy_(gv)?;
    Ok(out)
}

/// Backward of `to_dense` (and of building a sparse tensor from `values`): mask the incoming
/// gradient to the pattern. With `as_values`, returns the values tensor itself (gradient of the
/// `values` input of a constructor), else a sparse tensor with the pattern.
pub(crate) struct MaskBackward {
    pub(crate) name: &'static str,
    pub(crate) pattern: SparseParts,
    pub(crate) shape: Vec<usize>,
    pub(crate) as_values: bool,
}

backward!(MaskBackward, self.name, |self, _, g: Tensor| {
    let _ng = crate::autograd::no_grad();
    let gv = grad_values(&self.pattern, &self.shape, &g)?;
    Ok(smallvec::smallvec![Some(if self.as_values {
        gv
    } else {
        make(self.pattern.with_values(gv), &self.shape)?
    })])
});

/// Backward of `values()`: the dense `[nnz, dense..]` gradient becomes a sparse gradient with
/// the tensor's pattern.
pub(crate) struct ValuesBackward {
    pub(crate) pattern: SparseParts,
    pub(crate) shape: Vec<usize>,
}

backward!(ValuesBackward, "ValuesBackward0", |self, _, g: Tensor| {
    let _ng = crate::autograd::no_grad();
    let gv = contig(&g.to_dtype(self.pattern.values().dtype())?)?;
    Ok(smallvec::smallvec![Some(make(
        self.pattern.with_values(gv),
        &self.shape
    )?)])
});

/// Backward of a dense -> sparse conversion: the gradient of the dense input is the incoming
/// gradient read at the pattern and scattered back (zero off the pattern).
pub(crate) struct ToSparseBackward {
    pub(crate) name: &'static str,
    pub(crate) pattern: SparseParts,
    pub(crate) shape: Vec<usize>,
}

backward!(ToSparseBackward, self.name, |self, _, g: Tensor| {
    let _ng = crate::autograd::no_grad();
    let gv = grad_values(&self.pattern, &self.shape, &g)?;
    let pos = positions(&self.pattern, &self.shape)?;
    Ok(smallvec::smallvec![Some(scatter_dense(
        &gv,
        &pos,
        &self.shape
    )?)])
});
