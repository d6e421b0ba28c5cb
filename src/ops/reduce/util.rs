//! Shared plumbing for the non-`sum` reductions: normalising dim lists, the row geometry of a
//! reduction (`m` rows of `r` reduced elements: kept dims first, reduced dims last), calls to
//! the backend's row kernels into fresh outputs, and the weight-based backward.

use crate::backend::{ReduceOp, RowOp};
use crate::layout::{wrap_dim, wrap_dims};
use crate::ops::grad::{backward, input_grad};
use crate::{DType, Result, Tensor};

/// Geometry of a reduction: its dims, output shapes with and without kept dims, row length `r`.
pub(crate) struct Rows {
    pub dims: Vec<usize>,
    pub kshape: Vec<usize>,
    pub oshape: Vec<usize>,
    pub r: usize,
}

impl Rows {
    /// Result shape for `keepdim`.
    pub(crate) fn shape(&self, keepdim: bool) -> &[usize] {
        if keepdim { &self.kshape } else { &self.oshape }
    }
}

/// Wraps `dims` (`None` or empty = all dims) for a tensor of rank `nd`.
pub(crate) fn norm_dims(dims: Option<&[i64]>, nd: usize, op: &'static str) -> Result<Vec<usize>> {
    let ds = match dims {
        Some(d) if !d.is_empty() => wrap_dims(d, nd, op)?,
        _ => (0..nd).collect(),
    };
    Ok(if nd == 0 { Vec::new() } else { ds })
}

/// Wraps a single `dim` (0-dim tensors accept 0 and -1 and reduce nothing).
pub(crate) fn one_dim(dim: i64, nd: usize, op: &'static str) -> Result<Vec<usize>> {
    let d = wrap_dim(dim, nd, op)?;
    Ok(if nd == 0 { Vec::new() } else { vec![d] })
}

/// The row geometry of reducing `x` over `dims`; errors for a sparse `x`.
pub(crate) fn rows(x: &Tensor, dims: &[usize], op: &'static str) -> Result<Rows> {
    x.check_strided(op)?;
    let shape = x.shape();
    let kshape: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &s)| if dims.contains(&i) { 1 } else { s })
        .collect();
    let oshape: Vec<usize> = (0..shape.len())
        .filter(|d| !dims.contains(d))
        .map(|d| shape[d])
        .collect();
    let r = dims.iter().map(|&d| shape[d]).product();
    Ok(Rows {
        dims: dims.to_vec(),
        kshape,
        oshape,
        r,
    })
}

/// A fresh contiguous tensor of `shape` and `dtype` for a kernel that writes every element.
pub(crate) fn fresh(shape: &[usize], dtype: DType) -> Result<Tensor> {
    Tensor::empty_strided(shape, &crate::layout::contiguous_strides(shape), dtype)
}

/// `op` over `rw`'s dims of `x` (read as `x`'s dtype) into a fresh tensor of the keepdim shape
/// and dtype `dt` (no autograd).
pub(crate) fn reduce_to(
    x: &Tensor,
    rw: &Rows,
    dt: DType,
    op: ReduceOp,
    name: &'static str,
) -> Result<Tensor> {
    let out = fresh(&rw.kshape, dt)?;
    crate::backend::reduce(
        &out.data(),
        dt,
        None,
        &x.data(),
        x.dtype(),
        &rw.dims,
        op,
        name,
    )?;
    Ok(out)
}

/// `op` applied to every row over `rw`'s dims of `x` (with the same row of `y`, which
/// broadcasts to `x`) into a fresh tensor of `x`'s shape and dtype `dt` (no autograd).
pub(crate) fn row_map(
    x: &Tensor,
    y: Option<&Tensor>,
    rw: &Rows,
    dt: DType,
    op: RowOp,
    name: &'static str,
) -> Result<Tensor> {
    let out = fresh(&x.shape(), dt)?;
    let yd = y.map(|t| (t.data(), t.dtype()));
    crate::backend::row_map(
        &out.data(),
        dt,
        &x.data(),
        x.dtype(),
        yd.as_ref().map(|(d, dt)| (d, *dt)),
        &rw.dims,
        op,
        name,
    )?;
    Ok(out)
}

/// Re-inserts the reduced `dims` (as size 1) into a non-keepdim gradient so it broadcasts
/// against the input.
pub(crate) fn unsqueeze_dims(g: &Tensor, dims: &[usize], keepdim: bool) -> Result<Tensor> {
    let mut g = g.clone();
    if !keepdim {
        let mut ds = dims.to_vec();
        ds.sort_unstable();
        for d in ds {
            g = g.unsqueeze(d as i64)?;
        }
    }
    Ok(g)
}

/// How a [`WeightedBackward`] rebuilds its weight from differentiable ops when a higher-order
/// graph is being built (`None`: the weight is piecewise constant, e.g. max/min tie masks and
/// L1/Inf norms, so its derivative is zero almost everywhere).
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Exact {
    None,
    /// `logsumexp`: `exp(x - out)`.
    Logsumexp,
    /// L2 `norm`: `x / out` (0 where `out == 0`).
    NormL2,
    /// `norm` of a general p: [`norm_p_weight`](crate::ops::reduce::stats::norm_p_weight).
    NormP(f64),
    /// `sqrt` (of std): `0.5 / out` (0 where `out == 0`).
    Sqrt,
    /// L1 / ±inf `norm`: the weight stays piecewise constant, but PyTorch's formula reads the
    /// input (`sgn(x)`), so the gradient is linked to it with a zero derivative
    /// ([`zero_grad_link`](crate::ops::grad::zero_grad_link)).
    Linked,
}

/// Backward of reductions whose input gradient is `grad (re-expanded) * w` for a weight tensor
/// `w` of the input's shape computed in the forward (tie masks / counts for max/amax, one-hot
/// indices for max(dim), softmax for logsumexp, ...). With
/// `create_graph`, ops whose weight depends smoothly on the input rebuild it from the saved
/// input and output with recorded ops (see [`Exact`]), so double backward is exact.
pub(crate) struct WeightedBackward {
    pub name: &'static str,
    pub w: Tensor,
    pub dims: Vec<usize>,
    pub keepdim: bool,
    pub exact: Exact,
}

backward!(WeightedBackward, self.name, |self, ctx, g: Tensor| {
    let g = unsqueeze_dims(&g, &self.dims, self.keepdim)?;
    if ctx.create_graph && self.exact != Exact::None {
        let (x, out) = (&ctx.saved[0], &ctx.saved[1]);
        let out = unsqueeze_dims(out, &self.dims, self.keepdim)?;
        let w = match self.exact {
            Exact::Logsumexp => x.sub(&out)?.exp()?,
            Exact::NormL2 => Tensor::where_(&out.eq(0)?, 0.0, &x.div(&out)?)?,
            Exact::Sqrt => Tensor::where_(&out.eq(0)?, 0.0, &out.mul(2.0)?.reciprocal()?)?,
            Exact::NormP(p) => crate::ops::reduce::stats::norm_p_weight(x, &out, p)?,
            Exact::Linked => {
                let gi = g.mul(&self.w)?;
                return input_grad(crate::ops::grad::zero_grad_link(gi, &[x], self.name)?);
            }
            Exact::None => unreachable!("internal: checked above"),
        };
        return input_grad(g.mul(&w)?);
    }
    let gi = g.mul(&self.w)?;
    for _ in 0..inplace_writes(self.name) {
        gi.0.version.bump();
    }
    input_grad(gi)
});

/// How many in-place writes PyTorch's backward of `name` makes on the fresh gradient it
/// returns (its version; measured in torch 2.15): full `max`/`min` fill `new_zeros` with
/// `masked_fill_` (1), `max`/`min` along a dim are `zeros` then `scatter_` (2).
fn inplace_writes(name: &str) -> usize {
    match name {
        "MaxBackward1" | "MinBackward1" => 1,
        "MaxBackward0" | "MinBackward0" => 2,
        _ => 0,
    }
}

/// Records a [`WeightedBackward`] for `out` if `x` needs grad; `w` is built lazily. With an
/// `exact` rule, `x` and `out` are saved (version-checked, like PyTorch) for double backward.
pub(crate) fn record_weighted(
    out: &Tensor,
    x: &Tensor,
    name: &'static str,
    rw: &Rows,
    keepdim: bool,
    exact: Exact,
    w: impl FnOnce() -> Result<Tensor>,
) -> Result<()> {
    if !crate::autograd::is_grad_enabled() || !x.requires_grad() || !x.dtype().is_differentiable() {
        return Ok(());
    }
    let w = w()?;
    crate::autograd::record(
        &[out],
        &[x],
        || match exact {
            Exact::None => Vec::new(),
            _ => vec![
                crate::autograd::SavedTensor::input(x),
                crate::autograd::SavedTensor::output(out, 0),
            ],
        },
        WeightedBackward {
            name,
            w,
            dims: rw.dims.clone(),
            keepdim,
            exact,
        },
    )
}
