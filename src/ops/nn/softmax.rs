//! `softmax` and `log_softmax` along one dim (numerically stable; the backend's row kernel over
//! any dim, computing f32 in f32, f64 in f64, f16/bf16 in f32), with the backward (saved:
//! output `y`, as PyTorch) `y * (g - sum(g * y))` and `g - exp(y) * sum(g)`: the backend's fused
//! row kernel, or while a graph is being built (`create_graph`) the differentiable composite.

use super::check_float;
use crate::autograd::{SavedTensor, no_grad, record};
use crate::backend::RowwiseOp;
use crate::layout::Layout;
use crate::layout::wrap_dim;
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor};

/// (outer, n, inner) split of `shape` around `dim`.
fn split3(shape: &[usize], d: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        return (1, 1, 1);
    }
    (
        shape[..d].iter().product(),
        shape[d],
        shape[d + 1..].iter().product(),
    )
}

fn softmax_raw(x: &Tensor, d: usize, log: bool) -> Result<Tensor> {
    let shape = x.shape();
    let split = split3(&shape, d);
    let src = if x.is_contiguous() {
        x.clone()
    } else {
        x.contiguous()?
    };
    let out = Tensor::empty_strided(&shape, Layout::contiguous(&shape).strides(), x.dtype())?;
    let op = if log {
        RowwiseOp::LogSoftmax
    } else {
        RowwiseOp::Softmax
    };
    crate::backend::rowwise(&out.data(), &src.data(), x.dtype(), op, split);
    Ok(out)
}

struct SoftmaxBackward {
    dim: usize,
    log: bool,
}

backward!(
    SoftmaxBackward,
    if self.log {
        "LogSoftmaxBackward0"
    } else {
        "SoftmaxBackward0"
    },
    |self, ctx, g: Tensor| {
        let y = &ctx.saved[0];
        if !crate::autograd::is_grad_enabled() {
            return input_grad(softmax_backward_raw(y, &g, self.dim, self.log)?);
        }
        let d = [self.dim as i64];
        let r = if self.log {
            // grad = g - exp(y) * sum(g)
            g.sub(&y.exp()?.mul(&g.sum_dims(&d, true)?)?)?
        } else {
            // grad = y * (g - sum(g * y))
            let gy = g.mul(y)?;
            gy.sub(&y.mul(&gy.sum_dims(&d, true)?)?)?
        };
        input_grad(r)
    }
);

/// The backward's fused kernel (no graph): `y` is the forward's contiguous output.
fn softmax_backward_raw(y: &Tensor, g: &Tensor, d: usize, log: bool) -> Result<Tensor> {
    let shape = y.shape();
    let g = if g.is_contiguous() && g.dtype() == y.dtype() {
        g.clone()
    } else {
        g.to_dtype(y.dtype())?.contiguous()?
    };
    let op = if log {
        RowwiseOp::LogSoftmax
    } else {
        RowwiseOp::Softmax
    };
    let s =
        crate::backend::rowwise_backward(&y.data(), &g.data(), y.dtype(), op, split3(&shape, d))?;
    Ok(Tensor::from_parts(s, Layout::contiguous(&shape), y.dtype()))
}

fn softmax_impl(x: &Tensor, dim: i64, log: bool) -> Result<Tensor> {
    let op = if log { "log_softmax" } else { "softmax" };
    x.check_strided(op)?;
    check_float(x, op)?;
    let d = wrap_dim(dim, x.dim(), op)?;
    let out = {
        let _g = no_grad();
        softmax_raw(x, d, log)?
    };
    record(
        &[&out],
        &[x],
        || vec![SavedTensor::output(&out, 0)],
        SoftmaxBackward { dim: d, log },
    )?;
    Ok(out)
}

impl Tensor {
    /// Softmax along `dim` (numerically stable).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0], &[2])?;
    /// assert_eq!(x.softmax(0)?.to_vec::<f64>()?, vec![0.5, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn softmax(&self, dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "softmax")?;
        softmax_impl(self, dim, false)
    }

    /// Log-softmax along `dim` (numerically stable).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1000.0f64, 1000.0], &[2])?;
    /// assert!((x.log_softmax(0)?.to_vec::<f64>()?[0] + 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn log_softmax(&self, dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "log_softmax")?;
        softmax_impl(self, dim, true)
    }
}
