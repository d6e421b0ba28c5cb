//! `softmax` and `log_softmax` along one dim (numerically stable, computed in f64), with the
//! backward `y * (g - sum(g * y))` (saved: output) and `g - softmax(x) * sum(g)` (saved: input).

use super::{check_float, from_f64};
use crate::autograd::{SavedTensor, no_grad, record};
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
    let (outer, n, inner) = split3(&shape, d);
    let v = x.to_vec::<f64>()?;
    let mut out = vec![0.0; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let m = (0..n).map(|k| v[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            let m = if m.is_finite() {
                m
            } else if m.is_nan() {
                m
            } else {
                0.0
            };
            let s: f64 = (0..n).map(|k| (v[at(k)] - m).exp()).sum();
            for k in 0..n {
                out[at(k)] = if log {
                    v[at(k)] - m - s.ln()
                } else {
                    (v[at(k)] - m).exp() / s
                };
            }
        }
    }
    from_f64(out, &shape, x.dtype())
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
