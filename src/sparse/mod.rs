//! Sparse layouts of [`Tensor`]: COO (any rank, hybrid values) and CSR (2-D and batched 3-D with
//! Paddle's batch-local crows). A sparse tensor is the same `Tensor` handle as a strided one; its
//! payload (`SparseParts`) is a composite of contiguous dense tensors, so sparse tensors flow
//! through autograd like any other tensor.
//!
//! Placement rule: this folder owns everything sparse. `coo`/`csr` (construction + validation),
//! `convert` (coalesce, to_dense, to_sparse_*), `slice` (sparse slicing), `matmul`
//! (sparse @ dense), `ops` (sum, mul, add, transpose, dtype casts), `grad` (values-level
//! backward formulas), `kernel` (tensor-level row gather/scatter and pattern helpers over the
//! backend's sparse front door; the loops are in `backend/cpu/sparse/`). Dense ops reject sparse inputs
//! through `Tensor::check_strided`-style guards that return `Unsupported`.
//!
//! Gradient convention: the gradient of a sparse tensor `x` is a sparse tensor with `x`'s layout
//! and exactly `x`'s pattern whose values are d(loss)/d(x.values) (PyTorch's masked semantics),
//! so `x.grad().values()` lines up with `x.values()` element by element.

mod convert;
mod coo;
mod csr;
mod display;
mod grad;
mod kernel;
mod matmul;
mod ops;
mod slice;

pub(crate) use display::fmt_sparse;
pub use matmul::matmul;
pub(crate) use ops::{arith, copy, grad_values_of, sum, to_dtype, transpose, with_values};
pub use slice::slice;

use crate::{DType, Result, Tensor, bail};

/// The memory layout family of a tensor (PyTorch's `torch.layout`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum LayoutKind {
    /// Dense, strided storage (`torch.strided`).
    Strided,
    /// Coordinate format (`torch.sparse_coo`).
    SparseCoo,
    /// Compressed sparse rows (`torch.sparse_csr`).
    SparseCsr,
}

/// The payload of a sparse tensor. Every member tensor is contiguous, has no autograd history
/// and is never written in place by tapegrad.
#[derive(Clone)]
pub(crate) enum SparseParts {
    /// INVARIANTS: `indices` is I64 `[sparse_dim, nnz]`; `values` is `[nnz, dense dims..]`;
    /// `coalesced` implies the columns of `indices` are strictly lexicographically increasing.
    Coo {
        indices: Tensor,
        values: Tensor,
        coalesced: bool,
    },
    /// INVARIANTS: `crow` has `B*(R+1)` entries (`B = 1` for 2-D), each batch segment starts at
    /// 0, never decreases and ends at that batch's nnz; `col` and `values` are the concatenated
    /// per-batch entries; `crow` and `col` share an index dtype (I32 or I64); `sorted` implies
    /// the columns of every row are strictly increasing (enables binary search).
    Csr {
        crow: Tensor,
        col: Tensor,
        values: Tensor,
        sorted: bool,
    },
}

impl SparseParts {
    pub(crate) fn values(&self) -> &Tensor {
        match self {
            SparseParts::Coo { values, .. } | SparseParts::Csr { values, .. } => values,
        }
    }
    pub(crate) fn kind(&self) -> LayoutKind {
        match self {
            SparseParts::Coo { .. } => LayoutKind::SparseCoo,
            SparseParts::Csr { .. } => LayoutKind::SparseCsr,
        }
    }
    pub(crate) fn nnz(&self) -> usize {
        match self {
            SparseParts::Coo { indices, .. } => indices.shape()[1],
            SparseParts::Csr { col, .. } => col.numel(),
        }
    }
    /// The same pattern with other values (`[nnz, dense..]`, contiguous).
    pub(crate) fn with_values(&self, v: Tensor) -> SparseParts {
        match self {
            SparseParts::Coo {
                indices, coalesced, ..
            } => SparseParts::Coo {
                indices: indices.clone(),
                values: v,
                coalesced: *coalesced,
            },
            SparseParts::Csr {
                crow, col, sorted, ..
            } => SparseParts::Csr {
                crow: crow.clone(),
                col: col.clone(),
                values: v,
                sorted: *sorted,
            },
        }
    }
    /// True if both payloads describe the same pattern (same format and index entries).
    pub(crate) fn same_pattern(&self, o: &SparseParts) -> bool {
        fn same(a: &Tensor, b: &Tensor) -> bool {
            if a.shares_storage(b) && a.storage_offset() == b.storage_offset() {
                return a.shape() == b.shape();
            }
            // compared by ops (an elementwise eq reduced by `all`), not on the host
            a.shape() == b.shape()
                && a.dtype() == b.dtype()
                && a.eq(b)
                    .and_then(|e| e.all((), false))
                    .and_then(|t| t.item::<bool>())
                    .unwrap_or(false)
        }
        match (self, o) {
            (SparseParts::Coo { indices: a, .. }, SparseParts::Coo { indices: b, .. }) => {
                same(a, b)
            }
            (
                SparseParts::Csr {
                    crow: a, col: ac, ..
                },
                SparseParts::Csr {
                    crow: b, col: bc, ..
                },
            ) => same(a, b) && same(ac, bc),
            _ => false,
        }
    }
}

/// The error every dense op returns for a sparse input.
pub(crate) fn dense_op_error(op: &'static str, p: &SparseParts, shape: &[usize]) -> crate::Error {
    crate::err!(
        Unsupported,
        op,
        "{} does not support sparse tensors (got a {:?} tensor of shape {:?} with {} stored elements); convert with to_dense() first",
        op,
        p.kind(),
        shape,
        p.nnz()
    )
}

/// Wraps a payload in a fresh sparse tensor (no autograd).
pub(crate) fn make(parts: SparseParts, shape: &[usize]) -> Result<Tensor> {
    let dtype = parts.values().dtype();
    Tensor::from_sparse_parts(parts, shape, dtype, crate::tensor::VersionCounter::new())
}

impl Tensor {
    /// The layout family: strided, sparse COO or sparse CSR (PyTorch's `x.layout`; named
    /// `layout_kind` because [`Tensor::layout`] returns the strided geometry).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, LayoutKind};
    /// let d = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?;
    /// assert_eq!(d.layout_kind(), LayoutKind::Strided);
    /// assert_eq!(d.to_sparse_csr()?.layout_kind(), LayoutKind::SparseCsr);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn layout_kind(&self) -> LayoutKind {
        self.sparse_parts()
            .map_or(LayoutKind::Strided, SparseParts::kind)
    }

    /// True for sparse COO and CSR tensors.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let d = Tensor::from_vec(vec![0.0f32, 2.0], &[2])?;
    /// assert!(!d.is_sparse() && d.to_sparse()?.is_sparse());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_sparse(&self) -> bool {
        self.0.sparse.is_some()
    }

    pub(crate) fn sparse_or_err(&self, op: &'static str) -> Result<&SparseParts> {
        match self.sparse_parts() {
            Some(p) => Ok(p),
            None => bail!(
                InvalidArgument,
                op,
                "expected a sparse tensor, got a strided tensor of shape {:?}",
                self.shape()
            ),
        }
    }

    /// Number of stored elements of a sparse tensor (`InvalidArgument` for strided tensors).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[4])?.to_sparse()?;
    /// assert_eq!(s.nnz()?, 2);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nnz(&self) -> Result<usize> {
        Ok(self.sparse_or_err("nnz")?.nnz())
    }

    /// Number of sparse dims (COO: rows of `indices`; CSR: 2, or 3 with the batch dim).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?.to_sparse_coo(1)?;
    /// assert_eq!((s.sparse_dim()?, s.dense_dim()?), (1, 1));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_dim(&self) -> Result<usize> {
        Ok(match self.sparse_or_err("sparse_dim")? {
            SparseParts::Coo { indices, .. } => indices.shape()[0],
            SparseParts::Csr { .. } => self.dim(),
        })
    }

    /// Number of dense trailing dims stored in `values` (0 for CSR).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?.to_sparse()?;
    /// assert_eq!(s.dense_dim()?, 0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dense_dim(&self) -> Result<usize> {
        Ok(self.sparse_or_err("dense_dim")?.values().dim() - 1)
    }

    /// COO indices, I64 `[sparse_dim, nnz]` (a copy-free handle; no autograd).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?.to_sparse()?;
    /// assert_eq!(s.indices()?.to_vec::<i64>()?, vec![0, 1, 1, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn indices(&self) -> Result<Tensor> {
        match self.sparse_or_err("indices")? {
            SparseParts::Coo { indices, .. } => Ok(indices.detach()),
            SparseParts::Csr { .. } => bail!(
                InvalidArgument,
                "indices",
                "indices() is only defined for sparse COO tensors; use crow_indices()/col_indices() for CSR"
            ),
        }
    }

    /// CSR row pointers: `B*(R+1)` entries, batch-local (I32 or I64, as constructed).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?.to_sparse_csr()?;
    /// assert_eq!(s.crow_indices()?.to_vec::<i64>()?, vec![0, 1, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn crow_indices(&self) -> Result<Tensor> {
        match self.sparse_or_err("crow_indices")? {
            SparseParts::Csr { crow, .. } => Ok(crow.detach()),
            SparseParts::Coo { .. } => bail!(
                InvalidArgument,
                "crow_indices",
                "crow_indices() is only defined for sparse CSR tensors"
            ),
        }
    }

    /// CSR column indices (`[nnz]`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![0.0f32, 2.0, 0.0, 3.0], &[2, 2])?.to_sparse_csr()?;
    /// assert_eq!(s.col_indices()?.to_vec::<i64>()?, vec![1, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn col_indices(&self) -> Result<Tensor> {
        match self.sparse_or_err("col_indices")? {
            SparseParts::Csr { col, .. } => Ok(col.detach()),
            SparseParts::Coo { .. } => bail!(
                InvalidArgument,
                "col_indices",
                "col_indices() is only defined for sparse CSR tensors"
            ),
        }
    }

    /// True if a COO tensor's indices are sorted and free of duplicates (always true for CSR
    /// built by tapegrad's conversions; CSR reports `true` as PyTorch does).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![1i64, 0], &[1, 2])?;
    /// let s = Tensor::sparse_coo(&i, &Tensor::from_vec(vec![1.0f32, 2.0], &[2])?, &[3])?;
    /// assert!(!s.is_coalesced()? && s.coalesce()?.is_coalesced()?);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_coalesced(&self) -> Result<bool> {
        Ok(match self.sparse_or_err("is_coalesced")? {
            SparseParts::Coo { coalesced, .. } => *coalesced,
            SparseParts::Csr { .. } => true,
        })
    }
}

/// Index dtypes accepted by the constructors.
pub(crate) fn check_index_dtype(t: &Tensor, what: &str, op: &'static str) -> Result<()> {
    if !matches!(t.dtype(), DType::I32 | DType::I64) {
        bail!(
            SparseInvalid,
            op,
            "{} must have dtype int32 or int64, got {}",
            what,
            t.dtype()
        );
    }
    t.check_strided(op)
}
