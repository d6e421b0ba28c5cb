//! Conversions between strided, COO and CSR (each differentiable; dense -> sparse gradients are
//! masked to the pattern) and the differentiable `values()` accessor.

use super::grad::{
    MaskBackward, SparseMapBackward, ToSparseBackward, ValuesBackward, ValuesMap, positions,
    scatter_dense,
};
use super::kernel::{Rows, contig, gather_as, tensor, with_pattern};
use super::{SparseParts, make};
use crate::autograd::record;
use crate::backend::sparse as door;
use crate::{DType, Result, Tensor, bail};

/// Nonzero rows of a dense contiguous tensor viewed as `[n_rows, row_len]`: (row ids, values
/// of shape `[rows, tail..]`).
fn nonzero_rows(x: &Tensor, n_rows: usize, tail: &[usize]) -> Result<(Vec<usize>, Tensor)> {
    // an empty `x` has no nonzero row, and its tail sizes alone may overflow
    let rl: usize = if n_rows == 0 {
        0
    } else {
        tail.iter().product()
    };
    let rows = door::nonzero_rows(&x.data(), n_rows, rl, x.dtype())?;
    let mut vshape = vec![rows.len()];
    vshape.extend_from_slice(tail);
    let vals = gather_as(x, Rows::List(&rows), rl, &vshape)?;
    Ok((rows, vals))
}

/// Unravels linear row ids over `sizes` into an I64 `[sizes.len(), n]` tensor.
fn unravel(rows: &[usize], sizes: &[usize]) -> Result<Tensor> {
    let (sd, n) = (sizes.len(), rows.len());
    let mut o = vec![0i64; sd * n];
    for (j, &r) in rows.iter().enumerate() {
        let mut rem = r;
        for d in (0..sd).rev() {
            o[d * n + j] = (rem % sizes[d]) as i64;
            rem /= sizes[d];
        }
    }
    Tensor::from_vec(o, &[sd, n])
}

/// CSR row offsets (batch-local) and cols (int64) from linear positions sorted row-major.
fn csr_from_positions(pos: &[usize], shape: &[usize]) -> Result<(Tensor, Tensor)> {
    let (_, r, c) = super::grad::csr_dims(shape);
    // `crow_indices` legally holds `b * (r + 1)` entries (PyTorch allocates them too); a length
    // that overflows, or that the allocator refuses, is an error rather than an abort
    let Some(len) = super::grad::csr_crow_len(shape) else {
        bail!(
            InvalidArgument,
            "to_sparse_csr",
            "crow_indices of shape {:?} would need more than usize::MAX entries",
            shape
        );
    };
    let mut cr = crate::storage::try_vec::<i64>(len, "to_sparse_csr")?;
    cr.resize(len, 0);
    // per-row counts in place (row `bi * r + ri` counts into `cr[bi * (r + 1) + ri + 1]`,
    // which `len` bounds), then a batch-local running sum
    for &p in pos {
        let row = p / c;
        cr[row + row / r + 1] += 1;
    }
    for seg in cr.chunks_mut(r + 1) {
        for i in 1..seg.len() {
            seg[i] += seg[i - 1];
        }
    }
    let cl: Vec<i64> = pos.iter().map(|&p| (p % c) as i64).collect();
    let n = cl.len();
    Ok((Tensor::from_vec(cr, &[len])?, Tensor::from_vec(cl, &[n])?))
}

impl Tensor {
    /// The dense (strided) tensor of a sparse tensor, duplicates summed; a strided tensor is
    /// returned as it is. Backward: the gradient masked to the pattern (PyTorch's
    /// `to_dense_backward`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let d = Tensor::from_vec(vec![0.0f32, 2.0, 3.0, 0.0], &[2, 2])?;
    /// assert_eq!(d.to_sparse_csr()?.to_dense()?.to_vec::<f32>()?, d.to_vec::<f32>()?);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_dense(&self) -> Result<Tensor> {
        let Some(p) = self.sparse_parts() else {
            return Ok(self.clone());
        };
        let shape = self.shape();
        // a contiguous dense result: PyTorch's allocation rules (an empty COO of shape
        // `[0, 2^62, 3]` has no elements, but its dense strides overflow)
        crate::layout::check_contiguous_alloc(&shape, "to_dense")?;
        let pos = positions(p, &shape)?;
        let out = scatter_dense(p.values(), &pos, &shape)?;
        record(
            &[&out],
            &[self],
            Vec::new,
            MaskBackward {
                name: "ToDenseBackward0",
                pattern: p.clone(),
                shape,
                as_values: false,
            },
        )?;
        Ok(out)
    }

    /// COO with every dim sparse (PyTorch's `to_sparse()`); COO input is returned as it is.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 5.0, 0.0], &[3])?.to_sparse()?;
    /// assert_eq!(s.indices()?.to_vec::<i64>()?, vec![1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_sparse(&self) -> Result<Tensor> {
        match self.sparse_parts() {
            Some(SparseParts::Coo { .. }) => Ok(self.clone()),
            _ => self.to_sparse_coo(self.dim()),
        }
    }

    /// COO with the first `sparse_dim` dims sparse and the rest dense in `values` (hybrid).
    /// From strided: a row over the sparse dims is stored if any of its elements is nonzero
    /// (row-major order, coalesced). From CSR: `sparse_dim` must be the rank; entries keep their
    /// order. From COO with another `sparse_dim`: through the dense form.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let d = Tensor::from_vec(vec![0.0f32, 0.0, 1.0, 2.0], &[2, 2])?;
    /// let h = d.to_sparse_coo(1)?;
    /// assert_eq!(h.values()?.shape(), vec![1, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_sparse_coo(&self, sparse_dim: impl crate::Dim) -> Result<Tensor> {
        let shape = self.shape();
        let sparse_dim = crate::tensor::dims::dim(sparse_dim, "to_sparse_coo")?;
        if sparse_dim <= 0 || sparse_dim as u64 > shape.len() as u64 {
            bail!(
                InvalidArgument,
                "to_sparse_coo",
                "sparse_dim must be in [1, {}] for a tensor of shape {:?}, got {}",
                shape.len(),
                shape,
                sparse_dim
            );
        }
        let sparse_dim = sparse_dim as usize;
        match self.sparse_parts() {
            None => {
                // the values, `[nnz, dense..]`, are a contiguous allocation: PyTorch refuses dense
                // sizes whose strides overflow even with no rows (`to_sparse(1)` of an empty
                // `[0, 2^40, 2^40]`); the row count does not enter the strides
                let vshape: Vec<usize> = std::iter::once(0)
                    .chain(shape[sparse_dim..].iter().copied())
                    .collect();
                crate::layout::check_contiguous_alloc(&vshape, "to_sparse_coo")?;
                let x = contig(self)?;
                // an empty tensor has no nonzero row (its leading sizes alone may overflow)
                let n_rows: usize = if x.numel() == 0 {
                    0
                } else {
                    shape[..sparse_dim].iter().product()
                };
                let (rows, vals) = nonzero_rows(&x, n_rows, &shape[sparse_dim..])?;
                let parts = SparseParts::Coo {
                    indices: unravel(&rows, &shape[..sparse_dim])?,
                    values: vals,
                    coalesced: true,
                };
                let out = make(parts.clone(), &shape)?;
                record(
                    &[&out],
                    &[self],
                    Vec::new,
                    ToSparseBackward {
                        name: "ToSparseBackward0",
                        pattern: parts,
                        shape,
                    },
                )?;
                Ok(out)
            }
            Some(SparseParts::Coo { indices, .. }) => {
                if indices.shape()[0] == sparse_dim {
                    Ok(self.clone())
                } else {
                    self.to_dense()?.to_sparse_coo(sparse_dim)
                }
            }
            Some(p @ SparseParts::Csr { col, values, .. }) => {
                if sparse_dim != shape.len() {
                    return self.to_dense()?.to_sparse_coo(sparse_dim);
                }
                let nnz = col.numel();
                let (ix, sorted) = with_pattern(p, |pd| door::csr_to_coo(pd, &shape))?;
                let indices = tensor(ix, &[shape.len(), nnz], DType::I64);
                let parts = SparseParts::Coo {
                    indices,
                    values: values.clone(),
                    coalesced: sorted,
                };
                let out = make(parts.clone(), &shape)?;
                record(
                    &[&out],
                    &[self],
                    Vec::new,
                    SparseMapBackward {
                        name: "ToSparseBackward0",
                        x: p.clone(),
                        x_shape: shape.clone(),
                        out: parts,
                        out_shape: shape,
                        map: ValuesMap::SegmentSum {
                            map: (0..nnz).collect(),
                        },
                    },
                )?;
                Ok(out)
            }
        }
    }

    /// CSR (2-D, or 3-D batched with batch-local crows), int64 indices. From strided: row-major
    /// nonzeros. From COO (no dense dims): coalesced first. CSR input is returned as it is.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let d = Tensor::from_vec(vec![1.0f32, 0.0, 0.0, 2.0], &[2, 2])?;
    /// let s = d.to_sparse()?.to_sparse_csr()?;
    /// assert_eq!(s.col_indices()?.to_vec::<i64>()?, vec![0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_sparse_csr(&self) -> Result<Tensor> {
        let shape = self.shape();
        if shape.len() != 2 && shape.len() != 3 {
            bail!(
                InvalidArgument,
                "to_sparse_csr",
                "sparse CSR tensors must be 2-D or 3-D, got shape {:?}",
                shape
            );
        }
        match self.sparse_parts() {
            Some(SparseParts::Csr { .. }) => Ok(self.clone()),
            None => {
                let x = contig(self)?;
                let (rows, vals) = nonzero_rows(&x, x.numel(), &[])?;
                let (crow, col) = csr_from_positions(&rows, &shape)?;
                let parts = SparseParts::Csr {
                    crow,
                    col,
                    values: vals,
                    sorted: true,
                };
                let out = make(parts.clone(), &shape)?;
                record(
                    &[&out],
                    &[self],
                    Vec::new,
                    ToSparseBackward {
                        name: "ToSparseCsrBackward0",
                        pattern: parts,
                        shape,
                    },
                )?;
                Ok(out)
            }
            Some(SparseParts::Coo { indices, .. }) => {
                if indices.shape()[0] != shape.len() {
                    bail!(
                        InvalidArgument,
                        "to_sparse_csr",
                        "only COO tensors without dense dims convert to CSR (sparse_dim {} < rank {})",
                        indices.shape()[0],
                        shape.len()
                    );
                }
                let c = self.coalesce()?;
                let cp = c.sparse_or_err("to_sparse_csr")?.clone();
                let pos = positions(&cp, &shape)?;
                let (crow, col) = csr_from_positions(&pos, &shape)?;
                let parts = SparseParts::Csr {
                    crow,
                    col,
                    values: cp.values().clone(),
                    sorted: true,
                };
                let out = make(parts.clone(), &shape)?;
                record(
                    &[&out],
                    &[&c],
                    Vec::new,
                    SparseMapBackward {
                        name: "ToSparseCsrBackward0",
                        x: cp.clone(),
                        x_shape: shape.clone(),
                        out: parts,
                        out_shape: shape,
                        map: ValuesMap::SegmentSum {
                            map: (0..cp.nnz()).collect(),
                        },
                    },
                )?;
                Ok(out)
            }
        }
    }

    /// The stored values `[nnz, dense..]` of a sparse tensor. Differentiable: the gradient of
    /// the sparse tensor has its pattern and these values' gradient.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f64, 2.0, 3.0], &[3])?.to_sparse()?.requires_grad_(true)?;
    /// s.values()?.mul(2.0)?.sum()?.backward()?;
    /// assert_eq!(s.grad().unwrap().values()?.to_vec::<f64>()?, vec![2.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn values(&self) -> Result<Tensor> {
        let p = self.sparse_or_err("values")?;
        let out = p.values().detach();
        let out = if self.requires_grad() && crate::autograd::is_grad_enabled() {
            let a = out.alias_fresh()?;
            record(
                &[&a],
                &[self],
                Vec::new,
                ValuesBackward {
                    pattern: p.clone(),
                    shape: self.shape(),
                },
            )?;
            a
        } else {
            out
        };
        Ok(out)
    }
}

impl Tensor {
    /// A handle on the same storage with a fresh version counter and no autograd history.
    fn alias_fresh(&self) -> Result<Tensor> {
        let d = self.data();
        Ok(Tensor::from_parts(d.storage, d.layout, self.dtype()))
    }
}
