//! COO construction (validating and unchecked) and `coalesce`.

use super::grad::{MaskBackward, SparseMapBackward, ValuesMap};
use super::kernel::{build, contig, read, scatter_rows};
use super::{SparseParts, check_index_dtype, make};
use crate::autograd::record;
use crate::{DType, Result, Tensor, bail};

/// Shape checks shared by the checked and unchecked constructors (O(1)).
fn check_coo_shapes(
    indices: &Tensor,
    values: &Tensor,
    shape: &[usize],
    op: &'static str,
) -> Result<()> {
    check_index_dtype(indices, "indices", op)?;
    values.check_strided(op)?;
    if indices.dim() != 2 {
        bail!(
            SparseInvalid,
            op,
            "indices must be a 2-D [sparse_dim, nnz] tensor, got shape {:?}",
            indices.shape()
        );
    }
    let (sd, nnz) = (indices.shape()[0], indices.shape()[1]);
    if values.dim() == 0 {
        bail!(
            SparseInvalid,
            op,
            "values must have at least one dim ([nnz, dense..]), got a 0-dim tensor"
        );
    }
    if values.shape()[0] != nnz {
        bail!(
            SparseInvalid,
            op,
            "Number of elements in indices ({}) and values ({}) do not match",
            nnz,
            values.shape()[0]
        );
    }
    if sd == 0 {
        bail!(
            SparseInvalid,
            op,
            "indices must have at least one sparse dim, got shape {:?}",
            indices.shape()
        );
    }
    let dense = &values.shape()[1..];
    if shape.len() != sd + dense.len() {
        bail!(
            SparseInvalid,
            op,
            "shape {:?} has {} dims but indices give {} sparse dims and values {:?} give {} dense dims",
            shape,
            shape.len(),
            sd,
            values.shape(),
            dense.len()
        );
    }
    if &shape[sd..] != dense {
        bail!(
            SparseInvalid,
            op,
            "dense dims of shape {:?} are {:?} but values have shape {:?}",
            shape,
            &shape[sd..],
            values.shape()
        );
    }
    crate::layout::check_numel(shape, op)?;
    Ok(())
}

/// True if the index columns are strictly lexicographically increasing.
pub(crate) fn detect_coalesced(ix: &[i64], sd: usize, nnz: usize) -> bool {
    (1..nnz).all(|j| {
        for d in 0..sd {
            let (a, b) = (ix[d * nnz + j - 1], ix[d * nnz + j]);
            if a != b {
                return a < b;
            }
        }
        false
    })
}

fn build_coo(
    indices: &Tensor,
    values: &Tensor,
    shape: &[usize],
    coalesced: Option<bool>,
    op: &'static str,
) -> Result<Tensor> {
    let ix = contig(&indices.to_dtype(DType::I64)?)?;
    let vals = contig(values)?;
    let (sd, nnz) = (ix.shape()[0], ix.shape()[1]);
    let coalesced = match coalesced {
        Some(c) => c,
        None => read::<i64, _>(&ix, |v| -> Result<bool> {
            for d in 0..sd {
                for (j, &i) in v[d * nnz..(d + 1) * nnz].iter().enumerate() {
                    if i < 0 || i as u64 >= shape[d] as u64 {
                        bail!(
                            SparseInvalid,
                            op,
                            "index {} of stored element {} in sparse dim {} is out of range [0, {}) for shape {:?}",
                            i,
                            j,
                            d,
                            shape[d],
                            shape
                        );
                    }
                }
            }
            Ok(detect_coalesced(v, sd, nnz))
        })??,
    };
    let parts = SparseParts::Coo {
        indices: ix,
        values: vals,
        coalesced,
    };
    let out = make(parts.clone(), shape)?;
    record(
        &[&out],
        &[values],
        Vec::new,
        MaskBackward {
            name: "SparseCooTensorWithDimsAndTensorsBackward0",
            pattern: parts,
            shape: shape.to_vec(),
            as_values: true,
        },
    )?;
    Ok(out)
}

impl Tensor {
    /// A sparse COO tensor from `indices` (int32/int64 `[sparse_dim, nnz]`), `values`
    /// (`[nnz, dense..]`; trailing dims make a hybrid tensor) and the full `shape`. Validates
    /// every index (`SparseInvalid`); `is_coalesced()` is detected (sorted, no duplicates).
    /// Differentiable w.r.t. `values`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![0i64, 1, 2, 0], &[2, 2])?;
    /// let v = Tensor::from_vec(vec![3.0f32, 4.0], &[2])?;
    /// let s = Tensor::sparse_coo(&i, &v, &[2, 3])?;
    /// assert_eq!(s.to_dense()?.to_vec::<f32>()?, vec![0.0, 0.0, 3.0, 4.0, 0.0, 0.0]);
    /// assert!(Tensor::sparse_coo(&i, &v, &[2, 2]).is_err()); // column 2 out of range
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_coo(indices: &Tensor, values: &Tensor, shape: &[usize]) -> Result<Tensor> {
        check_coo_shapes(indices, values, shape, "sparse_coo")?;
        build_coo(indices, values, shape, None, "sparse_coo")
    }

    /// Like [`sparse_coo`](Self::sparse_coo) for trusted data: only the O(1) shape checks run;
    /// index ranges are not checked and `coalesced` is taken on trust. Out-of-range indices or a
    /// false `coalesced = true` give wrong results, errors or panics later (never undefined
    /// behaviour).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![0i64, 2], &[1, 2])?;
    /// let s = Tensor::sparse_coo_unchecked(&i, &Tensor::from_vec(vec![1.0f32, 2.0], &[2])?, &[3], true)?;
    /// assert_eq!(s.nnz()?, 2);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_coo_unchecked(
        indices: &Tensor,
        values: &Tensor,
        shape: &[usize],
        coalesced: bool,
    ) -> Result<Tensor> {
        check_coo_shapes(indices, values, shape, "sparse_coo_unchecked")?;
        build_coo(
            indices,
            values,
            shape,
            Some(coalesced),
            "sparse_coo_unchecked",
        )
    }

    /// Sorts the entries of a COO tensor and sums duplicates (returns `self` if already
    /// coalesced; CSR tensors are returned as they are). Differentiable.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![2i64, 0, 2], &[1, 3])?;
    /// let s = Tensor::sparse_coo(&i, &Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?, &[4])?;
    /// let c = s.coalesce()?;
    /// assert_eq!(c.indices()?.to_vec::<i64>()?, vec![0, 2]);
    /// assert_eq!(c.values()?.to_vec::<f32>()?, vec![2.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn coalesce(&self) -> Result<Tensor> {
        let p = self.sparse_or_err("coalesce")?;
        let SparseParts::Coo {
            indices,
            values,
            coalesced,
        } = p
        else {
            return Ok(self.clone());
        };
        if *coalesced {
            return Ok(self.clone());
        }
        let shape = self.shape();
        let (sd, nnz) = (indices.shape()[0], indices.shape()[1]);
        let (out_ix, map, n_out) = read::<i64, _>(indices, |ix| -> Result<_> {
            let mut perm: Vec<usize> = (0..nnz).collect();
            perm.sort_by(|&a, &b| {
                for d in 0..sd {
                    let c = ix[d * nnz + a].cmp(&ix[d * nnz + b]);
                    if c != std::cmp::Ordering::Equal {
                        return c;
                    }
                }
                a.cmp(&b)
            });
            let mut map = vec![0usize; nnz];
            let mut firsts: Vec<usize> = Vec::with_capacity(nnz);
            for (k, &e) in perm.iter().enumerate() {
                let dup = k > 0 && (0..sd).all(|d| ix[d * nnz + e] == ix[d * nnz + perm[k - 1]]);
                if !dup {
                    firsts.push(e);
                }
                map[e] = firsts.len() - 1;
            }
            let n_out = firsts.len();
            let out_ix = build::<i64>(&[sd, n_out], |o| {
                for d in 0..sd {
                    for (j, &e) in firsts.iter().enumerate() {
                        o[d * n_out + j] = ix[d * nnz + e];
                    }
                }
            })?;
            Ok((out_ix, map, n_out))
        })??;
        let out_vals = scatter_rows(values, &map, n_out, true)?;
        let out_parts = SparseParts::Coo {
            indices: out_ix,
            values: out_vals,
            coalesced: true,
        };
        let out = make(out_parts.clone(), &shape)?;
        record(
            &[&out],
            &[self],
            Vec::new,
            SparseMapBackward {
                name: "CoalesceBackward0",
                x: p.clone(),
                x_shape: shape.clone(),
                out: out_parts,
                out_shape: shape,
                map: ValuesMap::SegmentSum { map },
            },
        )?;
        Ok(out)
    }
}
