//! COO construction (validating and unchecked) and `coalesce`.

use super::grad::{MaskBackward, SparseMapBackward, ValuesMap};
use super::kernel::{PatternData, Rows, contig, scatter_rows, tensor};
use super::{SparseParts, check_index_dtype, make};
use crate::autograd::record;
use crate::backend::sparse as door;
use crate::{DType, IntoShape, Result, Tensor, bail};

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

fn build_coo(
    indices: &Tensor,
    values: &Tensor,
    shape: &[usize],
    coalesced: Option<bool>,
    op: &'static str,
) -> Result<Tensor> {
    let ix = contig(&indices.to_dtype(DType::I64)?)?;
    let vals = contig(values)?;
    let coalesced = match coalesced {
        Some(c) => c,
        None => door::check(&PatternData::Coo { ix: &ix.data() }, shape, op)?,
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
    pub fn sparse_coo(indices: &Tensor, values: &Tensor, shape: impl IntoShape) -> Result<Tensor> {
        let shape = &crate::tensor::dims::sizes(shape, "sparse_coo")?[..];
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
        shape: impl IntoShape,
        coalesced: bool,
    ) -> Result<Tensor> {
        let shape = &crate::tensor::dims::sizes(shape, "sparse_coo_unchecked")?[..];
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
        let sd = indices.shape()[0];
        let (ix, map, n_out) = door::coalesce(&indices.data())?;
        let out_ix = tensor(ix, &[sd, n_out], DType::I64);
        let out_vals = scatter_rows(values, Rows::List(&map), n_out)?;
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
