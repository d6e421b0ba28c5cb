//! sparse @ dense: 2-D COO/CSR `[M, K] @ [K, N]` and batched 3-D CSR `[B, M, K] @ [B, K, N]`,
//! with gradients w.r.t. the dense operand (`S^T G`) and the sparse values
//! (`dv_e = <G[row_e], D[col_e]>`, i.e. masked to the pattern).

use super::grad::csr_dims;
use super::kernel::{build, build_zeroed, contig, read};
use super::{Idx, SparseParts, dispatch_idx, make};
use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, record};
use crate::{Element, Result, Tensor, bail, dispatch};

/// (output row, dense row) of every stored entry, in storage order.
fn entry_rows(p: &SparseParts, shape: &[usize]) -> Result<(Vec<usize>, Vec<usize>)> {
    match p {
        SparseParts::Coo { indices, .. } => {
            let nnz = indices.shape()[1];
            read::<i64, _>(indices, |ix| {
                (
                    ix[..nnz].iter().map(|&v| v as usize).collect(),
                    ix[nnz..2 * nnz].iter().map(|&v| v as usize).collect(),
                )
            })
        }
        SparseParts::Csr { crow, col, .. } => {
            let (b, m, k) = csr_dims(shape);
            dispatch_idx!(crow.dtype(), I => {
                read::<I, _>(crow, |cr| read::<I, _>(col, |cl| {
                    let mut rows = Vec::with_capacity(cl.len());
                    let mut cols = Vec::with_capacity(cl.len());
                    let mut base = 0usize;
                    for bi in 0..b {
                        let seg = &cr[bi * (m + 1)..(bi + 1) * (m + 1)];
                        for ri in 0..m {
                            for e in seg[ri].us()..seg[ri + 1].us() {
                                rows.push(bi * m + ri);
                                cols.push(bi * k + cl[base + e].us());
                            }
                        }
                        base += seg[m].us();
                    }
                    (rows, cols)
                }))?
            })
        }
    }
}

/// `out[rows[e]] += v[e] * d[cols[e]]` over rows of length `n`.
fn spmm<T: Element>(v: &[T], d: &[T], rows: &[usize], cols: &[usize], n: usize, out: &mut [T]) {
    for e in 0..v.len() {
        let (o, s, a) = (rows[e] * n, cols[e] * n, v[e]);
        for j in 0..n {
            out[o + j] = out[o + j].add(a.mul(d[s + j]));
        }
    }
}

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
    let (rows, cols) = entry_rows(p, &sa)?;
    let n = sb[sb.len() - 1];
    let mut out_shape = sa[..sa.len() - 1].to_vec();
    out_shape.push(n);
    let d = contig(b)?;
    let out = dispatch!(a.dtype(), T => {
        read::<T, _>(p.values(), |v| read::<T, _>(&d, |dd| {
            build_zeroed::<T>(&out_shape, |o| spmm(v, dd, &rows, &cols, n, o))
        }))???
    });
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
            let gv = dispatch!(v.dtype(), T => {
                read::<T, _>(&g, |gg| read::<T, _>(&self.dense, |dd| {
                    build::<T>(&[rows.len()], |o| {
                        for e in 0..rows.len() {
                            let (r, c) = (rows[e] * n, cols[e] * n);
                            let mut acc = T::zero();
                            for j in 0..n {
                                acc = acc.add(gg[r + j].mul(dd[c + j]));
                            }
                            o[e] = acc;
                        }
                    })
                }))???
            });
            Some(make(self.pattern.with_values(gv), &self.shape)?)
        } else {
            None
        };
        let gd = if ctx.needs(1) {
            // D's gradient: out[cols[e]] += v[e] * G[rows[e]] (spmm with roles swapped)
            Some(dispatch!(v.dtype(), T => {
                read::<T, _>(v, |vv| read::<T, _>(&g, |gg| {
                    build_zeroed::<T>(&dshape, |o| spmm(vv, gg, cols, rows, n, o))
                }))???
            }))
        } else {
            None
        };
        Ok(smallvec::smallvec![gs, gd])
    }
}
