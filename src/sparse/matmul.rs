//! sparse @ dense: 2-D COO/CSR `[M, K] @ [K, N]` and batched 3-D CSR `[B, M, K] @ [B, K, N]`,
//! with gradients w.r.t. the dense operand (`S^T G`) and the sparse values
//! (`dv_e = <G[row_e], D[col_e]>`, i.e. masked to the pattern).

use super::kernel::{contig, tensor, with_pattern};
use super::{SparseParts, make};
use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, record};
use crate::backend::Spmm;
use crate::backend::sparse as door;
use crate::{Result, Tensor, bail};

/// Sparse @ dense (see the module docs). Differentiable w.r.t. both operands.
///
/// ```
/// # use tapegrad::{Tensor, sparse};
/// let s = Tensor::from_vec(vec![0.0f32, 2.0, 3.0, 0.0], &[2, 2])?.to_sparse_csr()?;
/// let d = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
/// assert_eq!(sparse::matmul(&s, &d)?.to_vec::<f32>()?, vec![6.0, 8.0, 3.0, 6.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn matmul(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let p = a.sparse_or_err("matmul")?;
    b.check_strided("matmul")?;
    let (sa, sb) = (a.shape(), b.shape());
    let ok = match p {
        SparseParts::Coo {
            indices, values, ..
        } => sa.len() == 2 && indices.shape()[0] == 2 && values.dim() == 1 && sb.len() == 2,
        SparseParts::Csr { .. } => {
            (sa.len() == 2 && sb.len() == 2) || (sa.len() == 3 && sb.len() == 3 && sb[0] == sa[0])
        }
    };
    if !ok || sa[sa.len() - 1] != sb[sb.len() - 2] {
        bail!(
            ShapeMismatch,
            "matmul",
            "sparse @ dense supports [M, K] @ [K, N] (COO or CSR) and [B, M, K] @ [B, K, N] (CSR), got {:?} {:?} @ {:?}",
            a.layout_kind(),
            sa,
            sb
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            DTypeMismatch,
            "matmul",
            "expected both operands to have the same dtype, got {} and {}",
            a.dtype(),
            b.dtype()
        );
    }
    let (rows, cols) = with_pattern(p, |pd| door::entry_rows(pd, &sa))?;
    let n = sb[sb.len() - 1];
    let mut out_shape = sa[..sa.len() - 1].to_vec();
    out_shape.push(n);
    let d = contig(b)?;
    let s = Spmm {
        rows: &rows,
        cols: &cols,
        n,
    };
    let out_len = out_shape.iter().product();
    let st = door::spmm(&p.values().data(), &d.data(), &s, out_len, a.dtype())?;
    let out = tensor(st, &out_shape, a.dtype());
    record(
        &[&out],
        &[a, b],
        Vec::new,
        SpmmBackward {
            pattern: p.clone(),
            shape: sa,
            dense: d,
            rows,
            cols,
        },
    )?;
    Ok(out)
}

struct SpmmBackward {
    pattern: SparseParts,
    shape: Vec<usize>,
    dense: Tensor,
    rows: Vec<usize>,
    cols: Vec<usize>,
}

impl Backward for SpmmBackward {
    fn name(&self) -> &'static str {
        "SparseMmBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let _ng = crate::autograd::no_grad();
        let g = contig(&g.to_dtype(self.dense.dtype())?)?;
        let dshape = self.dense.shape();
        let n = dshape[dshape.len() - 1];
        let v = self.pattern.values();
        let (rows, cols) = (&self.rows, &self.cols);
        let gs = if ctx.needs(0) {
            let s = Spmm { rows, cols, n };
            let gv = door::sddmm(&g.data(), &self.dense.data(), &s, v.dtype())?;
            let gv = tensor(gv, &[rows.len()], v.dtype());
            Some(make(self.pattern.with_values(gv), &self.shape)?)
        } else {
            None
        };
        let gd = if ctx.needs(1) {
            // D's gradient: out[cols[e]] += v[e] * G[rows[e]] (spmm with roles swapped)
            let s = Spmm {
                rows: cols,
                cols: rows,
                n,
            };
            let out_len = dshape.iter().product();
            let st = door::spmm(&v.data(), &g.data(), &s, out_len, v.dtype())?;
            Some(tensor(st, &dshape, v.dtype()))
        } else {
            None
        };
        Ok(smallvec::smallvec![gs, gd])
    }
}
