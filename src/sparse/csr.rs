//! CSR construction (validating and unchecked), 2-D and batched 3-D with Paddle's layout:
//! `crow_indices` holds one segment of `R+1` batch-local offsets per batch, `col_indices` and
//! `values` concatenate the batches (unequal nnz per batch allowed).

use super::grad::MaskBackward;
use super::kernel::{PatternData, contig};
use super::{SparseParts, check_index_dtype, make};
use crate::autograd::record;
use crate::backend::sparse as door;
use crate::{IntoShape, Result, Tensor, bail};

fn check_csr_shapes(
    crow: &Tensor,
    col: &Tensor,
    values: &Tensor,
    shape: &[usize],
    op: &'static str,
) -> Result<(Tensor, Tensor)> {
    check_index_dtype(crow, "crow_indices", op)?;
    check_index_dtype(col, "col_indices", op)?;
    values.check_strided(op)?;
    if crow.dtype() != col.dtype() {
        bail!(
            SparseInvalid,
            op,
            "crow_indices and col_indices must have the same dtype, got {} and {}",
            crow.dtype(),
            col.dtype()
        );
    }
    if shape.len() != 2 && shape.len() != 3 {
        bail!(
            SparseInvalid,
            op,
            "sparse CSR tensors must be 2-D or 3-D (batched), got shape {:?}",
            shape
        );
    }
    crate::layout::check_numel(shape, op)?;
    let (b, r, _) = super::grad::csr_dims(shape);
    // an overflowing `batches * (rows + 1)` (an empty shape with huge dims) matches no crow
    let want = super::grad::csr_crow_len(shape);
    let crow_ok = match crow.dim() {
        1 => Some(crow.numel()) == want,
        2 => crow.shape() == [b, r + 1] && shape.len() == 3,
        _ => false,
    };
    if !crow_ok {
        bail!(
            SparseInvalid,
            op,
            "crow_indices must have batches*(rows+1) = {} entries (one batch-local segment of {} per batch) for shape {:?}, got shape {:?}",
            want.map_or_else(|| "more than usize::MAX".to_string(), |n| n.to_string()),
            r as u128 + 1,
            shape,
            crow.shape()
        );
    }
    if col.dim() != 1 {
        bail!(
            SparseInvalid,
            op,
            "col_indices must be 1-D, got shape {:?}",
            col.shape()
        );
    }
    if values.dim() != 1 {
        bail!(
            SparseInvalid,
            op,
            "values of a sparse CSR tensor must be 1-D [nnz], got shape {:?}",
            values.shape()
        );
    }
    if values.numel() != col.numel() {
        bail!(
            SparseInvalid,
            op,
            "col_indices ({}) and values ({}) must have the same number of elements",
            col.numel(),
            values.numel()
        );
    }
    // `crow_ok` holds: its element count is `want`
    let crow = contig(crow)?.reshape(&[crow.numel() as i64])?;
    Ok((contig(&crow)?, contig(col)?))
}

fn build_csr(
    crow: Tensor,
    col: Tensor,
    values: &Tensor,
    shape: &[usize],
    sorted: bool,
) -> Result<Tensor> {
    let parts = SparseParts::Csr {
        crow,
        col,
        values: contig(values)?,
        sorted,
    };
    let out = make(parts.clone(), shape)?;
    record(
        &[&out],
        &[values],
        Vec::new,
        MaskBackward {
            name: "SparseCsrTensorBackward0",
            pattern: parts,
            shape: shape.to_vec(),
            as_values: true,
        },
    )?;
    Ok(out)
}

impl Tensor {
    /// A sparse CSR tensor, 2-D `[R, C]` or batched 3-D `[B, R, C]`. `crow` holds `B*(R+1)`
    /// batch-local row offsets (1-D, or `[B, R+1]`), `col` and `values` (1-D) the concatenated
    /// entries of all batches. Index dtype int32 or int64 (kept). Validates everything
    /// (`SparseInvalid`). Differentiable w.r.t. `values`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let crow = Tensor::from_vec(vec![0i64, 1, 3], &[3])?;
    /// let col = Tensor::from_vec(vec![1i64, 0, 2], &[3])?;
    /// let v = Tensor::from_vec(vec![1.5f32, 2.5, 3.5], &[3])?;
    /// let s = Tensor::sparse_csr(&crow, &col, &v, &[2, 3])?;
    /// assert_eq!(s.to_dense()?.to_vec::<f32>()?, vec![0.0, 1.5, 0.0, 2.5, 0.0, 3.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_csr(
        crow: &Tensor,
        col: &Tensor,
        values: &Tensor,
        shape: impl IntoShape,
    ) -> Result<Tensor> {
        let op = "sparse_csr";
        let shape = &crate::tensor::dims::sizes(shape, op)?[..];
        let (cr, cl) = check_csr_shapes(crow, col, values, shape, op)?;
        let dt = cr.dtype();
        let pd = PatternData::Csr {
            crow: &cr.data(),
            col: &cl.data(),
            dt,
        };
        let sorted = door::check(&pd, shape, op)?;
        build_csr(cr, cl, values, shape, sorted)
    }

    /// Like [`sparse_csr`](Self::sparse_csr) for trusted data: only the O(1) shape checks run
    /// (row offsets and column ranges are not checked; columns are treated as unsorted).
    /// Invalid data gives wrong results, errors or panics later, never undefined behaviour.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let crow = Tensor::from_vec(vec![0i32, 1], &[2])?;
    /// let col = Tensor::from_vec(vec![0i32], &[1])?;
    /// let s = Tensor::sparse_csr_unchecked(&crow, &col, &Tensor::from_vec(vec![1.0f32], &[1])?, &[1, 2])?;
    /// assert_eq!(s.crow_indices()?.dtype(), tapegrad::DType::I32);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_csr_unchecked(
        crow: &Tensor,
        col: &Tensor,
        values: &Tensor,
        shape: impl IntoShape,
    ) -> Result<Tensor> {
        let shape = &crate::tensor::dims::sizes(shape, "sparse_csr_unchecked")?[..];
        let (cr, cl) = check_csr_shapes(crow, col, values, shape, "sparse_csr_unchecked")?;
        build_csr(cr, cl, values, shape, false)
    }
}
