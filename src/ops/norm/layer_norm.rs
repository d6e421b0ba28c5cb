//! `layer_norm` over the trailing dims: the backend's fused row kernel (mean, biased variance,
//! `(x - mean) * rstd * w + b`; saved: input, the rows' mean and rstd, weight and bias), with
//! the backward `NativeLayerNormBackward0` as the backend's fused kernel (PyTorch's formula),
//! or while a graph is being built (`create_graph`) the differentiable composite
//! `gx = rstd (gxh - mean(gxh) - xh mean(gxh xh))` (`xh = (x - mean) rstd`, `gxh = g w`),
//! `gw = sum_rows(g xh)`, `gb = sum_rows(g)`, whose `rsqrt` node is `-g y^3 / 2`; each is
//! linked to the saved input, weight and bias (no gradient back), as PyTorch's backward is one
//! node differentiable in them. A weight or bias of another dtype than the input takes the
//! composite forward.

use super::fused_backward::{
    FusedNorm, Three, contig, from_storages, fused_norm_grads, kernel_operands,
};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::backend::RowwiseOp;
use crate::layout::Layout;
use crate::ops::grad::{backward, input_grad};
use crate::ops::nn::check_float;
use crate::{DType, Result, Tensor, bail};

struct RsqrtBackward;

backward!(RsqrtBackward, "RsqrtBackward0", |self, ctx, g: Tensor| {
    let y = &ctx.saved[0];
    input_grad(g.mul(&y.mul(y)?.mul(y)?)?.mul(-0.5)?)
});

fn rsqrt(x: &Tensor) -> Result<Tensor> {
    let shape = x.shape();
    let out = {
        let _g = crate::autograd::no_grad();
        let src = if x.is_contiguous() {
            x.clone()
        } else {
            x.contiguous()?
        };
        let out = Tensor::empty_strided(&shape, Layout::contiguous(&shape).strides(), x.dtype())?;
        let numel = out.numel();
        crate::backend::rowwise(
            &out.data(),
            &src.data(),
            x.dtype(),
            RowwiseOp::Rsqrt,
            (numel, 1, 1),
        );
        out
    };
    record(
        &[&out],
        &[x],
        || vec![SavedTensor::output(&out, 0)],
        RsqrtBackward,
    )?;
    Ok(out)
}

impl Tensor {
    /// Layer normalisation over the trailing `normalized_shape` dims, with optional affine
    /// `weight`/`bias` (biased variance, `eps` inside the square root).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0], &[1, 2])?;
    /// let y = x.layer_norm(&[2], None, None, 0.0)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn layer_norm(
        &self,
        normalized_shape: impl crate::IntoGeometry,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "layer_norm";
        let given = crate::tensor::dims::geometry(normalized_shape, op)?;
        check_float(self, op)?;
        let sh = self.shape();
        let k = given.len();
        let matches = |sh: &[usize]| sh.iter().zip(&given).all(|(&a, &b)| a as i64 == b);
        if k == 0 || k > sh.len() || !matches(&sh[sh.len() - k..]) {
            bail!(
                ShapeMismatch,
                op,
                "Given normalized_shape={:?}, expected input with shape [*, {:?}], but got input of size {:?}",
                &given[..],
                &given[..],
                sh
            );
        }
        // the input's trailing sizes (equal to the given ones, so non-negative)
        let normalized_shape = &sh[sh.len() - k..];
        for t in [weight, bias].into_iter().flatten() {
            if t.shape() != normalized_shape {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight/bias of shape {:?} do not match normalized_shape {:?}",
                    t.shape(),
                    normalized_shape
                );
            }
        }
        // the output is a contiguous tensor of the input's shape: an empty view whose
        // contiguous strides overflow (`[0, 2^40, 2^40]`) is refused as PyTorch's allocation
        // refuses it, before the row and row-length products below are formed
        crate::layout::check_contiguous_alloc(&sh, op)?;
        // so are the statistics, a mean and an rstd per row of the outer sizes: with an empty
        // normalized shape those may be huge (`[2^62, 0]`), and PyTorch refuses that
        // allocation too ("Storage size calculation overflowed")
        crate::layout::check_numel(&sh[..sh.len() - k], op)?;
        let fused = [weight, bias]
            .into_iter()
            .flatten()
            .all(|t| t.dtype() == self.dtype());
        if !fused {
            return composite(self, k, weight, bias, eps);
        }
        let n: usize = normalized_shape.iter().product();
        let rows: usize = sh[..sh.len() - k].iter().product();
        let (y, stats) = {
            let _g = no_grad();
            // PyTorch normalizes a contiguous copy of the input: the output is contiguous
            let x = self.contiguous()?;
            let (w, b) = (contig(weight)?, contig(bias)?);
            let (ys, ss) = crate::backend::layer_norm(
                &x.data(),
                w.as_ref().map(|t| t.data()).as_ref(),
                b.as_ref().map(|t| t.data()).as_ref(),
                (rows, n),
                eps,
                self.dtype(),
            )?;
            let sdt = if self.dtype() == DType::F64 {
                DType::F64
            } else {
                DType::F32
            };
            (
                Tensor::from_parts(ys, Layout::contiguous(&sh), self.dtype()),
                Tensor::from_parts(ss, Layout::contiguous(&[2 * rows]), sdt),
            )
        };
        let mut inputs = vec![self];
        inputs.extend(weight);
        inputs.extend(bias);
        record(
            &[&y],
            &inputs,
            || {
                let mut v = vec![SavedTensor::input(self), SavedTensor::private(stats)];
                v.extend(weight.map(SavedTensor::input));
                v.extend(bias.map(SavedTensor::input));
                v
            },
            LayerNormBackward {
                rows,
                n,
                k,
                eps,
                norm_shape: normalized_shape.to_vec(),
                has_w: weight.is_some(),
                has_b: bias.is_some(),
            },
        )?;
        Ok(y)
    }
}

struct LayerNormBackward {
    rows: usize,
    n: usize,
    /// Number of normalized (trailing) dims.
    k: usize,
    eps: f64,
    norm_shape: Vec<usize>,
    has_w: bool,
    has_b: bool,
}

backward!(
    LayerNormBackward,
    "NativeLayerNormBackward0",
    |self, ctx, g: Tensor| fused_norm_grads(self, ctx, g)
);

impl FusedNorm for LayerNormBackward {
    const DOUBLE_BACKWARD: Option<&'static str> = Some("NativeLayerNormBackwardBackward0");

    fn affine(&self) -> (bool, bool) {
        (self.has_w, self.has_b)
    }

    /// The backend's fused backward (no graph).
    fn fused_grads(
        &self,
        x: &Tensor,
        stats: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three> {
        let dt = x.dtype();
        let (x, g, w) = kernel_operands(x, g, w)?;
        let outs = crate::backend::layer_norm_backward(
            &g.data(),
            &x.data(),
            &stats.data(),
            w.as_ref().map(|t| t.data()).as_ref(),
            (self.rows, self.n),
            dt,
            need,
        )?;
        let shapes = [x.shape(), self.norm_shape.clone(), self.norm_shape.clone()];
        Ok(from_storages(outs, shapes, dt))
    }

    /// The differentiable composite (a graph is being built).
    fn composite_grads(
        &self,
        x: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three> {
        // PyTorch's input gradient is contiguous whatever the layout of `x` and `g`
        // (channels-last included): compute on contiguous copies
        let (x, g) = (&x.contiguous()?, &g.contiguous()?);
        let nd = x.dim();
        let dims: Vec<i64> = (nd - self.k..nd).map(|d| d as i64).collect();
        let batch: Vec<i64> = (0..nd - self.k).map(|d| d as i64).collect();
        let n = self.n as f64;
        let mean = x.sum_dims(&dims, true)?.div(n)?;
        let xc = x.sub(&mean)?;
        let var = xc.mul(&xc)?.sum_dims(&dims, true)?.div(n)?;
        let r = rsqrt(&var.add(self.eps)?)?;
        let xh = xc.mul(&r)?;
        let over_rows = |t: Tensor| -> Result<Tensor> {
            if batch.is_empty() {
                Ok(t)
            } else {
                t.sum_dims(&batch, false)
            }
        };
        let gx = if need[0] {
            let gxh = match w {
                Some(w) => g.mul(w)?,
                None => g.clone(),
            };
            let m1 = gxh.sum_dims(&dims, true)?.div(n)?;
            let m2 = gxh.mul(&xh)?.sum_dims(&dims, true)?.div(n)?;
            Some(r.mul(&gxh.sub(&m1)?.sub(&xh.mul(&m2)?)?)?)
        } else {
            None
        };
        let gw = if need[1] {
            Some(over_rows(g.mul(&xh)?)?)
        } else {
            None
        };
        let gb = if need[2] {
            Some(over_rows(g.clone())?)
        } else {
            None
        };
        Ok([gx, gw, gb])
    }
}

/// The composite forward (a weight or bias of another dtype than the input).
fn composite(
    x: &Tensor,
    k: usize,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    // PyTorch normalizes a contiguous copy of the input: the output is contiguous
    let x = x.contiguous()?;
    let nd = x.dim();
    let dims: Vec<i64> = (nd - k..nd).map(|d| d as i64).collect();
    let n: usize = x.shape()[nd - k..].iter().product();
    let mean = x.sum_dims(&dims, true)?.div(n as f64)?;
    let xc = x.sub(&mean)?;
    let var = xc.mul(&xc)?.sum_dims(&dims, true)?.div(n as f64)?;
    let mut y = xc.mul(&rsqrt(&var.add(eps)?)?)?;
    if let Some(w) = weight {
        y = y.mul(w)?;
    }
    if let Some(b) = bias {
        y = y.add(b)?;
    }
    Ok(y)
}
