//! Scans along one dim: `cumsum` (real and complex; backward = reverse cumsum, differentiable)
//! and `cumprod` (backward computed from the saved input, exact with zeros). Integers/bool
//! accumulate in i64.

use crate::autograd::{SavedTensor, record};
use crate::backend::RowOp;
use crate::ops::grad::{backward, input_grad};
use crate::ops::reduce::util::{Rows, one_dim, row_map, rows};
use crate::{DType, Result, Tensor};

fn scan_dtype(x: &Tensor, dtype: Option<DType>) -> DType {
    dtype.unwrap_or(if x.dtype().is_integral(true) {
        DType::I64
    } else {
        x.dtype()
    })
}

/// `op` along `dim` of `x` into a fresh tensor of `x`'s shape and dtype `dt`, and the rows.
fn scan(x: &Tensor, dim: i64, dt: DType, op: RowOp, name: &'static str) -> Result<(Tensor, Rows)> {
    let ds = one_dim(dim, x.dim(), name)?;
    let rw = rows(x, &ds, name)?;
    let _g = crate::autograd::no_grad();
    Ok((row_map(x, None, &rw, dt, op, name)?, rw))
}

struct CumsumBackward {
    dim: i64,
}

backward!(CumsumBackward, "CumsumBackward0", |self, _, g: Tensor| {
    // PyTorch's trivial case: `grad` itself when it has at most one element or `dim` has size 1
    let sh = g.shape();
    let d = if self.dim < 0 {
        self.dim + sh.len() as i64
    } else {
        self.dim
    };
    if g.numel() <= 1 || sh.get(d as usize) == Some(&1) {
        return input_grad(g);
    }
    // reverse cumsum: total - cumsum + g
    let total = g.sum_dims(&[self.dim], true)?;
    input_grad(total.sub(&g.cumsum(self.dim, None)?)?.add(&g)?)
});

impl Tensor {
    /// Cumulative sum along `dim`; integers accumulate in i64 unless `dtype` is given.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// assert_eq!(x.cumsum(0, None)?.to_vec::<i64>()?, vec![1, 3, 6]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cumsum(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let dt = scan_dtype(self, dtype);
        let out = if dt.is_integral(true) {
            scan(self, dim, dt, RowOp::CumSumInt, "cumsum")?.0
        } else if self.dtype().is_complex() && !dt.is_complex() {
            crate::bail!(
                DTypeMismatch,
                "cumsum",
                "cumsum: a complex input needs a complex dtype, got {}",
                dt.torch_scalar_name()
            );
        } else {
            // accumulate in the accumulation dtype (f32 for f16/bf16/f32), round on output
            let src = if self.dtype() != dt {
                let _g = crate::autograd::no_grad();
                self.to_dtype(dt)?
            } else {
                self.clone()
            };
            scan(&src, dim, dt, RowOp::CumSum, "cumsum")?.0
        };
        if dt.is_differentiable() {
            let d = crate::layout::wrap_dim(dim, self.dim(), "cumsum")? as i64;
            record(&[&out], &[self], Vec::new, CumsumBackward { dim: d })?;
        }
        Ok(out)
    }

    /// Cumulative product along `dim`; integers accumulate in i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32, 0.0, 4.0], &[3])?;
    /// assert_eq!(x.cumprod(0, None)?.to_vec::<f32>()?, vec![2.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cumprod(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let dt = scan_dtype(self, dtype);
        if dt.is_integral(true) {
            return Ok(scan(self, dim, dt, RowOp::CumProdInt, "cumprod")?.0);
        }
        if dt.is_complex() || self.dtype().is_complex() {
            crate::bail!(
                Unsupported,
                "cumprod",
                "cumprod: complex inputs are not supported yet"
            );
        }
        let (out, rw) = scan(self, dim, dt, RowOp::CumProd, "cumprod")?;
        if crate::autograd::is_grad_enabled() && self.requires_grad() {
            let x = self.clone();
            let dim = if self.dim() == 0 {
                0
            } else {
                crate::layout::wrap_dim(dim, self.dim(), "cumprod")?
            };
            record(
                &[&out],
                &[self],
                || vec![SavedTensor::input(self)],
                CumprodBackward { rw, x, dim },
            )?;
        }
        Ok(out)
    }
}

/// grad_i = sum_{k >= i} g_k * prod_{j <= k, j != i} x_j (exact with zeros), computed from the
/// input rows; under `create_graph` the same sum is built from recorded ops on the saved input.
struct CumprodBackward {
    rw: Rows,
    x: Tensor,
    dim: usize,
}

impl CumprodBackward {
    /// `[.., i, k]` holds `prod_{j <= k, j != i} x_j` (cumprod of x with x_i replaced by 1);
    /// grad_i sums `g_k` times it over `k >= i`.
    fn differentiable(&self, x: &Tensor, g: &Tensor) -> Result<Tensor> {
        let d = self.dim as i64;
        let r = x.shape()[self.dim];
        let xm = x.movedim(&[d], &[-1])?;
        let gm = g.movedim(&[d], &[-1])?;
        let eye = Tensor::eye(r, DType::F64)?.gt(0.5)?;
        let c = Tensor::where_(&eye, 1.0, &xm.unsqueeze(-2)?)?.cumprod(-1, None)?;
        let upper = Tensor::ones(&[r, r], x.dtype())?.triu(0)?;
        c.mul(&gm.unsqueeze(-2)?)?
            .mul(&upper)?
            .sum_dims(&[-1], false)?
            .movedim(&[-1], &[d])
    }
}

backward!(
    CumprodBackward,
    "CumprodBackward0",
    |self, ctx, g: Tensor| {
        if ctx.create_graph && g.dim() > 0 {
            return input_grad(self.differentiable(&ctx.saved[0], &g)?);
        }
        let _g = crate::autograd::no_grad();
        let x = self.x.detach();
        let out = row_map(
            &x,
            Some(&g),
            &self.rw,
            g.dtype(),
            RowOp::CumprodBackward,
            "cumprod",
        )?;
        input_grad(out)
    }
);
