//! Scans along one dim: `cumsum` (real and complex; backward = reverse cumsum, differentiable)
//! and `cumprod` (real and complex; PyTorch's `cumprod_backward`, composed of differentiable
//! ops, exact with zeros). Integers/bool accumulate in i64.

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
    pub fn cumsum(&self, dim: impl crate::Dim, dtype: Option<DType>) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "cumsum")?;
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

    /// Cumulative product along `dim`; integers accumulate in i64, real floats in f64,
    /// complex in complex128 (from 1, PyTorch's naive complex product), unless `dtype` is given.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32, 0.0, 4.0], &[3])?;
    /// assert_eq!(x.cumprod(0, None)?.to_vec::<f32>()?, vec![2.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cumprod(&self, dim: impl crate::Dim, dtype: Option<DType>) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "cumprod")?;
        let dt = scan_dtype(self, dtype);
        if dt.is_integral(true) {
            return Ok(scan(self, dim, dt, RowOp::CumProdInt, "cumprod")?.0);
        }
        if self.dtype().is_complex() && !dt.is_complex() {
            crate::bail!(
                DTypeMismatch,
                "cumprod",
                "cumprod: a complex input needs a complex dtype, got {}",
                dt.torch_scalar_name()
            );
        }
        let (out, _) = scan(self, dim, dt, RowOp::CumProd, "cumprod")?;
        if crate::autograd::is_grad_enabled() && self.requires_grad() {
            let dim = if self.dim() == 0 {
                0
            } else {
                crate::layout::wrap_dim(dim, self.dim(), "cumprod")?
            };
            record(
                &[&out],
                &[self],
                || vec![SavedTensor::input(self), SavedTensor::output(&out, 0)],
                CumprodBackward { dim },
            )?;
        }
        Ok(out)
    }
}

/// `cumprod`'s backward: PyTorch's `cumprod_backward(g, x, dim, out)` from the saved input and
/// result (`g` cast to the input's dtype first).
struct CumprodBackward {
    dim: usize,
}

backward!(
    CumprodBackward,
    "CumprodBackward0",
    |self, ctx, g: Tensor| {
        let (x, out) = (&ctx.saved[0], &ctx.saved[1]);
        let g = if g.dtype() != x.dtype() {
            g.to_dtype(x.dtype())?
        } else {
            g
        };
        let gi = cumprod_backward(&g, x, self.dim, out)?;
        input_grad(if gi.dtype() != x.dtype() {
            gi.to_dtype(x.dtype())?
        } else {
            gi
        })
    }
);

/// `w` summed from each position to the end of `dim`.
fn reversed_cumsum(w: &Tensor, dim: i64) -> Result<Tensor> {
    w.flip(&[dim])?.cumsum(dim, None)?.flip(&[dim])
}

/// PyTorch's `cumprod_backward`: `reversed_cumsum(conj(out) g) / conj(x)` when no element is
/// zero; with zeros, the elements before a row's first zero by that formula on the zero-free
/// prefix, the first zero by `prod(x[..z1]) * sum_{z1 <= k < z2} g_k prod(x(z1..=k))`, the rest
/// 0; while a graph is being built, the O(n^2) sum of omitted products (differentiable).
fn cumprod_backward(g: &Tensor, x: &Tensor, dim: usize, out: &Tensor) -> Result<Tensor> {
    if x.numel() <= 1 || x.shape()[dim] == 1 {
        return Ok(g.clone());
    }
    let (n, d) = (x.shape()[dim], dim as i64);
    let xc = x.conj_if_complex()?;
    let oc = out.conj_if_complex()?;
    let w = oc.mul(g)?;
    let is_zero = {
        let _g = crate::autograd::no_grad();
        x.eq(0)?
    };
    if !is_zero.any((), false)?.item::<bool>()? {
        return reversed_cumsum(&w, d)?.div(&xc);
    }
    if !crate::autograd::is_grad_enabled() {
        let count = is_zero.cumsum(d, None)?;
        let before = count.eq(0)?;
        let upto_second = count.eq(1)?;
        let first = is_zero.logical_and(&upto_second)?;
        let between = upto_second.logical_and(&first.logical_not()?)?;
        let head = reversed_cumsum(&w.masked_fill(&before.logical_not()?, 0.0)?, d)?.div(&xc)?;
        let gi = Tensor::where_(&before, &head, 0.0)?;
        // the output just before the first zero (1 when the zero comes first)
        let z1 = upto_second.to_dtype(DType::I64)?.max_dim(d, true)?.1;
        let prev = oc
            .gather(d, &z1.sub(1)?.clamp_min(0)?)?
            .masked_fill(&z1.eq(0)?, 1.0)?;
        let at_first = xc
            .masked_fill(&between.logical_not()?, 1.0)?
            .cumprod(d, None)?
            .mul(&g.masked_fill(&upto_second.logical_not()?, 0.0)?)?
            .sum_dims(&[d], true)?
            .mul(&prev)?;
        return Tensor::where_(&first, &at_first, &gi);
    }
    let mut ones_size: Vec<i64> = x.shape().iter().map(|&s| s as i64).collect();
    ones_size[dim] = 1;
    let ones = Tensor::ones(&[1], g.dtype())?.expand(&ones_size)?;
    let mut slices = Vec::with_capacity(n);
    for k in 0..n {
        let omitted = if k == 0 {
            Tensor::cat(&[&ones, &xc.narrow(d, 1, n - 1)?.cumprod(d, None)?], d)?
        } else {
            let until = xc.narrow(d, 0, k)?.prod(&[d], true)?;
            if k == n - 1 {
                until
            } else {
                let from = xc.narrow(d, k as i64 + 1, n - k - 1)?.cumprod(d, None)?;
                let rest = until.expand_as(&from)?.mul(&from)?;
                Tensor::cat(&[&until, &rest], d)?
            }
        };
        slices.push(
            g.narrow(d, k as i64, n - k)?
                .mul(&omitted)?
                .sum_dims(&[d], false)?,
        );
    }
    let refs: Vec<&Tensor> = slices.iter().collect();
    Tensor::stack(&refs, d)
}
