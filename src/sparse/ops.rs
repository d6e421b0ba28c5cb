//! Sparse arithmetic on the values: `sum`, `mul` by a scalar or a same-shape dense tensor
//! (masked to the pattern), `add`/`sub` of two sparse tensors (dense + sparse gives dense),
//! `transpose` of COO, dtype casts and copies. Dense entry points dispatch here when an operand
//! is sparse; anything else is `Unsupported`.

use super::grad::{SparseMapBackward, ValuesMap, grad_values, positions, scatter_dense};
use super::kernel::{RowSel, Rows, contig, gather_rows};
use super::{SparseParts, make};
use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, record};
use crate::ops::elementwise::binary::Arith;
use crate::{DType, Operand, Result, Scalar, Tensor, bail};

fn identity_map(x: &Tensor, out: &Tensor, name: &'static str) -> Result<()> {
    let (p, q) = (x.sparse_or_err(name)?, out.sparse_or_err(name)?);
    record(
        &[out],
        &[x],
        Vec::new,
        SparseMapBackward {
            name,
            x: p.clone(),
            x_shape: x.shape(),
            out: q.clone(),
            out_shape: out.shape(),
            map: ValuesMap::Select {
                map: RowSel::Runs(vec![(0, p.nnz())]),
                window: None,
            },
        },
    )
}

/// Same pattern, values replaced by `f(values)` (computed without autograd).
fn map_values(x: &Tensor, f: impl FnOnce(&Tensor) -> Result<Tensor>) -> Result<Tensor> {
    let p = x.sparse_or_err("sparse")?;
    let v = {
        let _ng = crate::autograd::no_grad();
        contig(&f(p.values())?)?
    };
    make(p.with_values(v), &x.shape())
}

/// `to_dtype` of a sparse tensor (values cast; differentiable for float/complex targets).
pub(crate) fn to_dtype(x: &Tensor, dtype: DType) -> Result<Tensor> {
    let out = map_values(x, |v| v.to_dtype(dtype))?;
    if dtype.is_differentiable() {
        identity_map(x, &out, "ToCopyBackward0")?;
    }
    Ok(out)
}

/// PyTorch's `clone()` of a sparse tensor.
pub(crate) fn copy(x: &Tensor) -> Result<Tensor> {
    let out = map_values(x, |v| v.copy())?;
    identity_map(x, &out, "CloneBackward0")?;
    Ok(out)
}

/// Sum of all elements (a dense 0-dim tensor, dtype as for a dense `sum`).
pub(crate) fn sum(x: &Tensor) -> Result<Tensor> {
    let p = x.sparse_or_err("sum")?;
    let out = {
        let _ng = crate::autograd::no_grad();
        p.values().sum()?
    };
    let out = Tensor::from_parts(out.storage(), out.layout(), out.dtype());
    if out.dtype().is_differentiable() {
        record(
            &[&out],
            &[x],
            Vec::new,
            SumBackward {
                pattern: p.clone(),
                shape: x.shape(),
            },
        )?;
    }
    Ok(out)
}

struct SumBackward {
    pattern: SparseParts,
    shape: Vec<usize>,
}
impl Backward for SumBackward {
    fn name(&self) -> &'static str {
        "SumBackward0"
    }
    fn apply(
        &self,
        _: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let _ng = crate::autograd::no_grad();
        let v = self.pattern.values();
        let gv = contig(&g.to_dtype(v.dtype())?.expand(&to_i64(&v.shape()))?)?;
        Ok(smallvec::smallvec![Some(make(
            self.pattern.with_values(gv),
            &self.shape
        )?)])
    }
}

fn to_i64(s: &[usize]) -> Vec<i64> {
    s.iter().map(|&v| v as i64).collect()
}

/// `a op b` where at least one operand is sparse.
pub(crate) fn arith(a: &Tensor, b: &Operand, alpha: Scalar, op: Arith) -> Result<Tensor> {
    let name = match op {
        Arith::Add => "add",
        Arith::Sub => "sub",
        Arith::Mul => "mul",
        Arith::Div => "div",
    };
    match (op, b) {
        (Arith::Mul, Operand::Scalar(s)) if a.is_sparse() => mul_scalar(a, *s),
        (Arith::Div, Operand::Scalar(s)) if a.is_sparse() && a.dtype().is_float() => {
            mul_scalar(a, Scalar::Float(1.0 / s.to_f64()))
        }
        (Arith::Mul, Operand::Tensor(t)) => match (a.is_sparse(), t.is_sparse()) {
            (true, false) => mul_dense(a, t),
            (false, true) => mul_dense(t, a),
            _ => bail!(
                Unsupported,
                "mul",
                "mul of two sparse tensors is not supported (shapes {:?} and {:?})",
                a.shape(),
                t.shape()
            ),
        },
        (Arith::Add | Arith::Sub, Operand::Tensor(t)) => {
            let alpha = if op == Arith::Sub {
                Scalar::Float(-alpha.to_f64())
            } else {
                alpha
            };
            match (a.is_sparse(), t.is_sparse()) {
                (true, true) => add_sparse(a, t, alpha),
                (true, false) => t.mul(alpha)?.add(&a.to_dense()?),
                _ => a.add(&t.to_dense()?.mul(alpha)?),
            }
        }
        _ => bail!(
            Unsupported,
            name,
            "{} is not supported for sparse operands (self {:?} of shape {:?})",
            name,
            a.layout_kind(),
            a.shape()
        ),
    }
}

fn mul_scalar(x: &Tensor, s: Scalar) -> Result<Tensor> {
    let out = map_values(x, |v| v.mul(s))?;
    if out.dtype().is_differentiable() {
        let p = x.sparse_or_err("mul")?;
        record(
            &[&out],
            &[x],
            Vec::new,
            MulBackward {
                x: p.clone(),
                shape: x.shape(),
                out: out.sparse_or_err("mul")?.clone(),
                scalar: Some(s),
                dense: None,
                pos: Vec::new(),
            },
        )?;
    }
    Ok(out)
}

/// sparse * dense of the same shape: the result keeps `x`'s pattern (masked product).
fn mul_dense(x: &Tensor, d: &Tensor) -> Result<Tensor> {
    let shape = x.shape();
    if d.shape() != shape {
        bail!(
            ShapeMismatch,
            "mul",
            "sparse * dense needs equal shapes, got {:?} and {:?}",
            shape,
            d.shape()
        );
    }
    if d.dtype() != x.dtype() {
        bail!(
            DTypeMismatch,
            "mul",
            "sparse * dense needs equal dtypes, got {} and {}",
            x.dtype(),
            d.dtype()
        );
    }
    let p = x.sparse_or_err("mul")?;
    let pos = positions(p, &shape)?;
    let dv = dense_at(d, p, &pos)?;
    let out = map_values(x, |v| v.mul(&dv))?;
    record(
        &[&out],
        &[x, d],
        Vec::new,
        MulBackward {
            x: p.clone(),
            shape,
            out: out.sparse_or_err("mul")?.clone(),
            scalar: None,
            dense: Some(dv),
            pos,
        },
    )?;
    Ok(out)
}

/// The rows of dense `d` at the sparse positions of `p` (`[nnz, dense..]`).
fn dense_at(d: &Tensor, p: &SparseParts, pos: &[usize]) -> Result<Tensor> {
    let _ng = crate::autograd::no_grad();
    let v = p.values();
    let mut flat = vec![-1i64];
    flat.extend(to_i64(&v.shape()[1..]));
    let dd = contig(&contig(d)?.reshape(&flat)?)?;
    gather_rows(&dd, Rows::List(pos))
}

struct MulBackward {
    x: SparseParts,
    shape: Vec<usize>,
    out: SparseParts,
    scalar: Option<Scalar>,
    dense: Option<Tensor>,
    pos: Vec<usize>,
}
impl Backward for MulBackward {
    fn name(&self) -> &'static str {
        "MulBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let _ng = crate::autograd::no_grad();
        let gv = grad_values(&self.out, &self.shape, &g)?;
        let gx = if ctx.needs(0) {
            let v = match (&self.scalar, &self.dense) {
                (Some(s), _) => gv.mul(*s)?,
                (None, Some(dv)) => gv.mul(dv)?,
                _ => unreachable!("internal: mul backward without operand"),
            };
            let v = contig(&v.to_dtype(self.x.values().dtype())?)?;
            Some(make(self.x.with_values(v), &self.shape)?)
        } else {
            None
        };
        let gd = if ctx.needs(1) && self.dense.is_some() {
            let v = contig(&gv.mul(self.x.values())?)?;
            Some(scatter_dense(&v, &self.pos, &self.shape)?)
        } else {
            None
        };
        Ok(smallvec::smallvec![gx, gd])
    }
}

/// sparse + alpha * sparse (same shape and layout).
fn add_sparse(a: &Tensor, b: &Tensor, alpha: Scalar) -> Result<Tensor> {
    let shape = a.shape();
    if b.shape() != shape || a.layout_kind() != b.layout_kind() {
        bail!(
            ShapeMismatch,
            "add",
            "sparse + sparse needs equal shapes and layouts, got {:?} {:?} and {:?} {:?}",
            a.layout_kind(),
            shape,
            b.layout_kind(),
            b.shape()
        );
    }
    if a.dtype() != b.dtype() {
        bail!(
            DTypeMismatch,
            "add",
            "sparse + sparse needs equal dtypes, got {} and {}",
            a.dtype(),
            b.dtype()
        );
    }
    let (pa, pb) = (a.sparse_or_err("add")?, b.sparse_or_err("add")?);
    if pa.same_pattern(pb) {
        // values add, pattern kept (what gradient accumulation needs)
        let bv = pb.values().clone();
        let out = map_values(a, |v| v.add(&bv.mul(alpha)?))?;
        record(
            &[&out],
            &[a, b],
            Vec::new,
            AddBackward {
                parts: [pa.clone(), pb.clone()],
                out: out.sparse_or_err("add")?.clone(),
                shape,
                alpha,
                concat: false,
            },
        )?;
        return Ok(out);
    }
    if let SparseParts::Csr { .. } = pa {
        return add_sparse(
            &a.to_sparse_coo(shape.len())?,
            &b.to_sparse_coo(shape.len())?,
            alpha,
        )?
        .to_sparse_csr();
    }
    let (
        SparseParts::Coo {
            indices: ia,
            values: va,
            coalesced: ca,
        },
        SparseParts::Coo {
            indices: ib,
            values: vb,
            coalesced: cb,
        },
    ) = (pa, pb)
    else {
        unreachable!("internal: layouts checked above")
    };
    if ia.shape()[0] != ib.shape()[0] {
        bail!(
            ShapeMismatch,
            "add",
            "sparse + sparse needs equal sparse dims, got {} and {}",
            ia.shape()[0],
            ib.shape()[0]
        );
    }
    let parts = {
        let _ng = crate::autograd::no_grad();
        SparseParts::Coo {
            indices: contig(&Tensor::cat(&[ia, ib], 1)?)?,
            values: contig(&Tensor::cat(&[va, &vb.mul(alpha)?], 0)?)?,
            coalesced: false,
        }
    };
    let out = make(parts.clone(), &shape)?;
    record(
        &[&out],
        &[a, b],
        Vec::new,
        AddBackward {
            parts: [pa.clone(), pb.clone()],
            out: parts,
            shape,
            alpha,
            concat: true,
        },
    )?;
    if *ca && *cb { out.coalesce() } else { Ok(out) }
}

struct AddBackward {
    parts: [SparseParts; 2],
    out: SparseParts,
    shape: Vec<usize>,
    alpha: Scalar,
    concat: bool,
}
impl Backward for AddBackward {
    fn name(&self) -> &'static str {
        "AddBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let _ng = crate::autograd::no_grad();
        let gv = grad_values(&self.out, &self.shape, &g)?;
        let na = self.parts[0].nnz();
        let (ga, gb) = if self.concat {
            (
                contig(&gv.narrow(0, 0, na)?)?,
                gv.narrow(0, na as i64, self.parts[1].nnz())?,
            )
        } else {
            (gv.clone(), gv)
        };
        let gb = contig(&gb.mul(self.alpha)?)?;
        let mk = |p: &SparseParts, v: Tensor| make(p.with_values(v), &self.shape);
        Ok(smallvec::smallvec![
            if ctx.needs(0) {
                Some(mk(&self.parts[0], ga)?)
            } else {
                None
            },
            if ctx.needs(1) {
                Some(mk(&self.parts[1], gb)?)
            } else {
                None
            },
        ])
    }
}

/// Transpose of two sparse dims of a COO tensor (indices rows swapped; not coalesced).
pub(crate) fn transpose(x: &Tensor, d0: i64, d1: i64) -> Result<Tensor> {
    let p = x.sparse_or_err("transpose")?;
    let shape = x.shape();
    let SparseParts::Coo {
        indices, values, ..
    } = p
    else {
        bail!(
            Unsupported,
            "transpose",
            "transpose of a sparse CSR tensor is not supported (shape {:?}); convert with to_sparse() first",
            shape
        );
    };
    let a = crate::layout::wrap_dim(d0, shape.len(), "transpose")?;
    let b = crate::layout::wrap_dim(d1, shape.len(), "transpose")?;
    let sd = indices.shape()[0];
    if a >= sd || b >= sd {
        bail!(
            Unsupported,
            "transpose",
            "transpose of a dense dim of a hybrid COO tensor is not supported (dims {} and {}, sparse_dim {})",
            a,
            b,
            sd
        );
    }
    if a == b {
        return Ok(x.clone());
    }
    let mut order: Vec<i64> = (0..sd as i64).collect();
    order.swap(a, b);
    let ix = {
        let _ng = crate::autograd::no_grad();
        contig(&indices.index_select(0, &Tensor::from_vec(order, &[sd])?)?)?
    };
    let mut out_shape = shape.clone();
    out_shape.swap(a, b);
    let out = make(
        SparseParts::Coo {
            indices: ix,
            values: values.clone(),
            coalesced: false,
        },
        &out_shape,
    )?;
    identity_map(x, &out, "TransposeBackward0")?;
    Ok(out)
}

/// The values-aligned gradient of the sparse tensor `x` carried by `g` (for gradcheck).
pub(crate) fn grad_values_of(x: &Tensor, g: &Tensor) -> Result<Tensor> {
    grad_values(x.sparse_or_err("gradcheck")?, &x.shape(), g)
}

/// `x`'s pattern with other values (for gradcheck's perturbations).
pub(crate) fn with_values(x: &Tensor, v: &Tensor) -> Result<Tensor> {
    make(
        x.sparse_or_err("gradcheck")?.with_values(contig(v)?),
        &x.shape(),
    )
}
