//! `softmax` and `log_softmax` along one dim (numerically stable; the backend's row kernel,
//! computing f32 in f32, f64 in f64, f16/bf16 in f32), with the
//! backward `y * (g - sum(g * y))` (saved: output) and `g - softmax(x) * sum(g)` (saved: input).

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
        let d = [self.dim as i64];
        let s = &ctx.saved[0];
        let r = if self.log {
            // saved: input x; grad = g - softmax(x) * sum(g)
            g.sub(&s.softmax(self.dim as i64)?.mul(&g.sum_dims(&d, true)?)?)?
        } else {
            // saved: output y; grad = y * (g - sum(g * y))
            let gy = g.mul(s)?;
            gy.sub(&s.mul(&gy.sum_dims(&d, true)?)?)?
        };
        input_grad(r)
    }
);

fn softmax_impl(x: &Tensor, dim: i64, log: bool) -> Result<Tensor> {
    let op = if log { "log_softmax" } else { "softmax" };
    x.check_strided(op)?;
    check_float(x, op)?;
    let d = wrap_dim(dim, x.dim(), op)?;
    let out = {
        let _g = no_grad();
        softmax_raw(x, d, log)?
    };
    let saved = if log { x.clone() } else { out.clone() };
    record(
        &[&out],
        &[x],
        || {
            vec![if log {
                SavedTensor::input(&saved)
            } else {
                SavedTensor::output(&saved, 0)
            }]
        },
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
    pub fn softmax(&self, dim: i64) -> Result<Tensor> {
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
    pub fn log_softmax(&self, dim: i64) -> Result<Tensor> {
        softmax_impl(self, dim, true)
    }
}
