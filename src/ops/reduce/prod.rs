//! `prod` (over every dim, one dim or several; real and complex) and `prod_dtype`, with
//! PyTorch's `prod_backward`: `g * conj(out / x)` while no reduced element is zero, else the
//! zero-safe `g * conj(exclusive_cumprod(x) * reverse_exclusive_cumprod(x))`
//! (`prod_safe_zeros_backward`); the full product with several zeros gives zeros when no graph
//! is being built. Both are composed of differentiable ops, so double backward is theirs.

use crate::autograd::{SavedTensor, is_grad_enabled, record};
use crate::backend::ReduceOp;
use crate::ops::grad::{backward, input_grad};
use crate::ops::reduce::util::{norm_dims, reduce_to, rows, unsqueeze_dims};
use crate::{DType, Result, Tensor, bail};

impl Tensor {
    /// Product over `dims` (empty = all); integers and bool multiply in i64. Floats and complex
    /// multiply in their own dtype from 1, in order (PyTorch's CPU loop: f16/bf16 round at
    /// every step, complex uses the naive product).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.prod((), false)?.item::<i64>()?, 24);
    /// assert_eq!(x.prod(&[1], false)?.to_vec::<i64>()?, vec![2, 12]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn prod(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "prod")?;
        let dims = &dims[..];
        let ds = norm_dims(Some(dims), self.dim(), "prod")?;
        let dt = self.dtype();
        let rw = rows(self, &ds, "prod")?;
        let odt = if dt.is_integral(true) { DType::I64 } else { dt };
        let out = {
            let _g = crate::autograd::no_grad();
            let out = reduce_to(self, &rw, odt, ReduceOp::Prod, "prod")?;
            crate::ops::util::fresh_output(&out, rw.shape(keepdim))?
        };
        if dt.is_differentiable() && is_grad_enabled() && self.requires_grad() {
            let bw = ProdBackward {
                dims: (!dims.is_empty()).then_some(ds),
                keepdim,
            };
            record(
                &[&out],
                &[self],
                || vec![SavedTensor::input(self), SavedTensor::output(&out, 0)],
                bw,
            )?;
        }
        Ok(out)
    }

    /// `prod(dims, keepdim, dtype=...)`: the input is cast to `dtype` first and the result has
    /// `dtype`. An input that requires grad cannot give a non-differentiable `dtype` (PyTorch's
    /// "Autograd not support dtype").
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::from_vec(vec![1.5f32, 2.0], &[2])?;
    /// assert_eq!(x.prod_dtype((), false, DType::I64)?.item::<i64>()?, 2);
    /// assert_eq!(x.prod_dtype((), false, DType::F64)?.item::<f64>()?, 3.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn prod_dtype(
        &self,
        dims: impl crate::IntoShape,
        keepdim: bool,
        dtype: DType,
    ) -> Result<Tensor> {
        if !dtype.is_differentiable() && self.requires_grad() && is_grad_enabled() {
            bail!(
                DTypeMismatch,
                "prod",
                "Autograd not support dtype: {}",
                dtype.torch_scalar_name()
            );
        }
        let x = if self.dtype() != dtype {
            self.to_dtype(dtype)?
        } else {
            self.clone()
        };
        let p = x.prod(dims, keepdim)?;
        if p.dtype() != dtype {
            let _g = crate::autograd::no_grad();
            return p.to_dtype(dtype);
        }
        Ok(p)
    }
}

/// `prod`'s backward (`ProdBackward0` over every dim, `ProdBackward1` over given dims), from
/// the saved input and result.
struct ProdBackward {
    /// `None`: `prod()` of every element (PyTorch's full-reduction formula).
    dims: Option<Vec<usize>>,
    keepdim: bool,
}

backward!(
    ProdBackward,
    if self.dims.is_none() {
        "ProdBackward0"
    } else {
        "ProdBackward1"
    },
    |self, ctx, g: Tensor| {
        let (x, out) = (&ctx.saved[0], &ctx.saved[1]);
        input_grad(prod_backward(
            &g,
            x,
            out,
            self.dims.as_deref(),
            self.keepdim,
        )?)
    }
);

/// PyTorch's `prod_backward` (both forms). Several dims (a tapegrad extension) are moved last
/// and merged into one, then treated as PyTorch's one-dim form.
fn prod_backward(
    g: &Tensor,
    x: &Tensor,
    out: &Tensor,
    dims: Option<&[usize]>,
    keepdim: bool,
) -> Result<Tensor> {
    if x.dim() == 0 {
        return Ok(g.clone());
    }
    let zeros = {
        let _g = crate::autograd::no_grad();
        x.eq(0)?.sum()?.item::<i64>()?
    };
    let Some(ds) = dims else {
        let g = if keepdim { g.reshape(())? } else { g.clone() };
        if zeros == 0 {
            return g.mul(&out.reshape(())?.div(x)?.conj_if_complex()?);
        }
        if zeros > 1 && !is_grad_enabled() {
            return x.zeros_like();
        }
        let flat = x.contiguous()?.reshape(&[-1])?;
        let shape: Vec<i64> = x.shape().iter().map(|&s| s as i64).collect();
        return prod_safe_zeros_backward(&g, &flat, 0)?.reshape(&shape);
    };
    let g = unsqueeze_dims(g, ds, keepdim)?;
    if zeros == 0 {
        let out = unsqueeze_dims(out, ds, keepdim)?;
        return g.mul(&out.div(x)?.conj_if_complex()?);
    }
    if let [d] = ds {
        return prod_safe_zeros_backward(&g, x, *d);
    }
    let (nd, k) = (x.dim(), ds.len());
    let src: Vec<i64> = ds.iter().map(|&d| d as i64).collect();
    let dst: Vec<i64> = (nd - k..nd).map(|d| d as i64).collect();
    let xm = x.movedim(&src, &dst)?;
    let moved: Vec<i64> = xm.shape().iter().map(|&s| s as i64).collect();
    let mut merged: Vec<i64> = moved[..nd - k].to_vec();
    merged.push(-1);
    let mut gshape: Vec<i64> = moved[..nd - k].to_vec();
    gshape.push(1);
    let gm = g.movedim(&src, &dst)?.reshape(&gshape)?;
    prod_safe_zeros_backward(&gm, &xm.reshape(&merged)?, nd - k)?
        .reshape(&moved)?
        .movedim(&dst, &src)
}

/// `g * conj(prefix * suffix)` along `dim`: the exclusive cumulative products from either end
/// (`[1, a, ab] * [bc, c, 1]`), exact with zeros.
fn prod_safe_zeros_backward(g: &Tensor, x: &Tensor, dim: usize) -> Result<Tensor> {
    if x.numel() == 0 {
        return g.expand_as(x);
    }
    let (n, d) = (x.shape()[dim], dim as i64);
    let mut ones_size = x.shape();
    ones_size[dim] = 1;
    let ones = Tensor::ones(&ones_size, g.dtype())?;
    let prefix = Tensor::cat(&[&ones, &x.narrow(d, 0, n - 1)?], d)?.cumprod(d, None)?;
    let rest = x.narrow(d, 1, n - 1)?.flip(&[d])?;
    let suffix = Tensor::cat(&[&ones, &rest], d)?
        .cumprod(d, None)?
        .flip(&[d])?;
    g.mul(&prefix.mul(&suffix)?.conj_if_complex()?)
}
