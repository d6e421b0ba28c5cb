//! `slice(x, axes, starts, ends)` for COO (any rank, hybrid) and CSR (2-D, batched 3-D), with
//! Paddle's attribute normalisation and a pattern-preserving backward.
//!
//! Normalisation per `(axis, start, end)` with `D = shape[axis]` (Paddle's `normalize_interval`,
//! step 1): a negative axis wraps once; `start`/`end` in `[-D, 0)` wrap once, then `start`
//! clamps to 0 and `end` to `D`; `start >= D`, `end <= -D` or `start >= end` give an empty dim.
//! Errors (`InvalidArgument`, nothing changes): axis out of `[-rank, rank)` (Paddle silently
//! uses axis 0 below `-rank`), differing lengths, duplicate axes (Paddle corrupts indices).
//!
//! COO: a stable filter (output order = input order, duplicates kept, `coalesced` propagated),
//! indices shifted by the starts; a window on a dense dim narrows `values`. A coalesced input
//! sliced on axis 0 finds its entry range by binary search (the rows form one contiguous block
//! of the sorted indices) and filters the other dims inside that block only. Large filters run
//! in two passes over fixed chunks (count, exact prefix sum, write in place), in parallel.
//! CSR: per-row filter with batch-local output crows; sorted columns are located by binary
//! search, so every output row is one contiguous run of the input (a row-only slice is one run
//! per batch) and columns and values are copied run by run.
//!
//! Backward: the gradient of `x` has `x`'s layout and exactly `x`'s pattern; entries that fell
//! inside the window take the output gradient's values, the others 0.
//!
//! The filters and copies run in the backend (`Backend::coo_slice`, `Backend::csr_slice`,
//! `Backend::sparse_gather_rows`; CPU bodies in `backend/cpu/sparse/`).

use super::grad::{SparseMapBackward, ValuesMap};
use super::kernel::{PatternData, RowSel, gather_rows, tensor};
use super::{SparseParts, make};
use crate::autograd::record;
use crate::backend::sparse as door;
use crate::tensor::dims::ints;
use crate::{DType, IntoShape, Result, Tensor, bail};

/// Paddle's `normalize_interval` for step 1 (in i128: a dim may exceed `i64::MAX`).
fn normalize_interval(st: i64, ed: i64, d: usize) -> (usize, usize) {
    let (st, ed, d) = (st as i128, ed as i128, d as i128);
    if d <= 0 || st >= d || ed <= -d {
        return (0, 0);
    }
    let st = if st < 0 { (st + d).max(0) } else { st };
    let ed = if ed < 0 { ed + d } else { ed.min(d) };
    if st >= ed {
        (0, 0)
    } else {
        (st as usize, ed as usize)
    }
}

/// Per-dim `(start, end)` for every dim of `shape` after validation and normalisation.
pub(crate) fn normalize(
    shape: &[usize],
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
) -> Result<Vec<(usize, usize)>> {
    let op = "sparse_slice";
    let rank = shape.len() as i64;
    if axes.len() != starts.len() {
        bail!(
            InvalidArgument,
            op,
            "The length of axes ({}) and length of starts ({}) should be same.",
            axes.len(),
            starts.len()
        );
    }
    if axes.len() != ends.len() {
        bail!(
            InvalidArgument,
            op,
            "The length of axes ({}) and length of ends ({}) should be same.",
            axes.len(),
            ends.len()
        );
    }
    let mut ranges: Vec<(usize, usize)> = shape.iter().map(|&d| (0, d)).collect();
    let mut seen = vec![false; shape.len()];
    for (i, &a) in axes.iter().enumerate() {
        if a >= rank {
            bail!(
                InvalidArgument,
                op,
                "The axis value should be less than the rank of input, but received axes[{}] = {}, rank of input is {}.",
                i,
                a,
                rank
            );
        }
        if a < -rank {
            bail!(
                InvalidArgument,
                op,
                "The axis value should be at least -rank of input, but received axes[{}] = {}, rank of input is {}.",
                i,
                a,
                rank
            );
        }
        let ax = if a < 0 { a + rank } else { a } as usize;
        if seen[ax] {
            bail!(
                InvalidArgument,
                op,
                "axis {} appears more than once in axes {:?} (after wrapping negative axes)",
                ax,
                axes
            );
        }
        seen[ax] = true;
        ranges[ax] = normalize_interval(starts[i], ends[i], shape[ax]);
    }
    Ok(ranges)
}

/// Slices a sparse COO or CSR tensor (a strided tensor is narrowed, as a view). See the module
/// docs for the exact semantics. Differentiable w.r.t. `x`.
///
/// ```
/// # use tapegrad::{Tensor, sparse};
/// let d = Tensor::from_vec(vec![0.0f32, 1.0, 0.0, 2.0, 3.0, 0.0, 4.0, 0.0], &[2, 4])?;
/// let s = sparse::slice(&d.to_sparse()?, &[1], &[1], &[3])?;
/// assert_eq!(s.shape(), vec![2, 2]);
/// assert_eq!(s.indices()?.to_vec::<i64>()?, vec![0, 1, 0, 1]);
/// assert_eq!(s.values()?.to_vec::<f32>()?, vec![1.0, 4.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn slice(
    x: &Tensor,
    axes: impl IntoShape,
    starts: impl IntoShape,
    ends: impl IntoShape,
) -> Result<Tensor> {
    let _span = tracing::trace_span!("sparse_slice").entered();
    let op = "sparse::slice";
    let (axes, starts, ends) = (ints(axes, op)?, ints(starts, op)?, ints(ends, op)?);
    let (axes, starts, ends) = (&axes[..], &starts[..], &ends[..]);
    let shape = x.shape();
    let ranges = normalize(&shape, axes, starts, ends)?;
    let out_shape: Vec<usize> = ranges.iter().map(|&(s, e)| e - s).collect();
    let Some(p) = x.sparse_parts() else {
        let mut v = x.clone();
        for (d, &(s, e)) in ranges.iter().enumerate() {
            if (s, e) != (0, shape[d]) {
                v = v.narrow(d as i64, s as i64, e - s)?;
            }
        }
        return Ok(v);
    };
    let (out_parts, map, window) = match p {
        SparseParts::Coo {
            indices,
            values,
            coalesced,
        } => coo_forward(indices, values, *coalesced, &ranges, &shape)?,
        SparseParts::Csr {
            crow,
            col,
            values,
            sorted,
        } => {
            let dt = crow.dtype();
            let pd = PatternData::Csr {
                crow: &crow.data(),
                col: &col.data(),
                dt,
            };
            let (cr, ncr, cl, sel) = door::csr_slice(&pd, *sorted, &ranges, &shape)?;
            let m = sel.rows().len();
            let parts = SparseParts::Csr {
                crow: tensor(cr, &[ncr], dt),
                col: tensor(cl, &[m], dt),
                values: gather_rows(values, sel.rows())?,
                sorted: *sorted,
            };
            (parts, sel, None)
        }
    };
    let out = make(out_parts.clone(), &out_shape)?;
    record(
        &[&out],
        &[x],
        Vec::new,
        SparseMapBackward {
            name: "SparseSliceBackward0",
            x: p.clone(),
            x_shape: shape,
            out: out_parts,
            out_shape,
            map: ValuesMap::Select { map, window },
        },
    )?;
    Ok(out)
}

impl Tensor {
    /// Method form of [`slice`](crate::sparse::slice).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![1.0f32, 0.0, 2.0], &[3])?.to_sparse()?;
    /// assert_eq!(s.sparse_slice(&[0], &[-2], &[i64::MAX])?.values()?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_slice(
        &self,
        axes: impl IntoShape,
        starts: impl IntoShape,
        ends: impl IntoShape,
    ) -> Result<Tensor> {
        slice(self, axes, starts, ends)
    }
}

type CooOut = (SparseParts, RowSel, Option<Vec<(usize, usize)>>);

fn coo_forward(
    indices: &Tensor,
    values: &Tensor,
    coalesced: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<CooOut> {
    let sd = indices.shape()[0];
    let (ix, m, sel) = door::coo_slice(&indices.data(), coalesced, &ranges[..sd], shape)?;
    let out_ix = tensor(ix, &[sd, m], DType::I64);
    let mut vals = gather_rows(values, sel.rows())?;
    let dense_win: Vec<(usize, usize)> =
        (sd..shape.len()).map(|d| (ranges[d].0, shape[d])).collect();
    let narrowed = (sd..shape.len()).any(|d| ranges[d] != (0, shape[d]));
    let window = if narrowed {
        let _ng = crate::autograd::no_grad();
        if vals.numel() == 0 {
            // no values to keep: an empty tensor of the window's shape (narrowing an empty
            // tensor with huge dense sizes could overflow its storage offset, for nothing)
            let mut vshape = vec![vals.shape()[0]];
            vshape.extend((sd..shape.len()).map(|d| ranges[d].1 - ranges[d].0));
            vals = Tensor::zeros(&vshape, vals.dtype())?;
        } else {
            for (d, &(s, e)) in ranges.iter().enumerate().take(shape.len()).skip(sd) {
                vals = vals.narrow((d - sd + 1) as i64, s as i64, e - s)?;
            }
            vals = super::kernel::contig(&vals)?;
        }
        Some(dense_win)
    } else {
        None
    };
    Ok((
        SparseParts::Coo {
            indices: out_ix,
            values: vals,
            coalesced,
        },
        sel,
        window,
    ))
}
