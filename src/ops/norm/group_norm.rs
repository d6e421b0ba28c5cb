//! `group_norm`: PyTorch's `native_group_norm` as one node. The forward is the backend's
//! group_norm kernel (each `(sample, group)` row's mean and rstd in the compute type, saved
//! rounded through the input dtype as PyTorch's; `y = rstd w (x - mean) + b`); the backward
//! `NativeGroupNormBackward0` is the backend's kernel of PyTorch's formula (`ds`, `db` per
//! channel, `gx = rstd w g + c2 x + c3`, `gw = sum_n (ds - db mean) rstd`, `gb = sum_n db`),
//! or while a graph is being built (`create_graph`) the same formula composed of
//! differentiable ops (PyTorch's `infinitely_differentiable_native_group_norm_backward`, with
//! mean and rstd recomputed from the input so their dependence on it is differentiated), each
//! result linked to the saved input, weight and bias as PyTorch's one-node backward.
//!
//! A weight or bias of another dtype than the input (f32 beside f16/bf16) or an empty batch
//! takes the composite forward: batch norm of `[1, N*G, *]` (no affine, no running
//! statistics), then the per-channel `* weight + bias`.

use super::batch_norm::{BatchNormArgs, batch_norm_impl};
use super::fused_backward::{
    FusedNorm, Three, contig, from_storages, fused_norm_grads, kernel_operands,
};
use super::memory_format::{contiguous_channels_last_grad, suggests};
use super::{channel_shape, check_param, size_product};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::layout::Layout;
use crate::ops::channels_last::channels_last;
use crate::ops::grad::backward;
use crate::ops::nn::check_float;
use crate::{DType, Dim, Result, Tensor, bail};

impl Tensor {
    /// Group normalization of an `[N, C, *]` input: the `C` channels split into `num_groups`
    /// groups, every `(sample, group)` normalized over its elements (biased variance, `eps`
    /// inside the square root), then scaled by `weight` and shifted by `bias` per channel, as
    /// `torch.nn.functional.group_norm(input, num_groups, weight, bias, eps)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 2.0, 6.0], &[1, 4])?;
    /// let y = x.group_norm(2, None, None, 0.0)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0, -1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn group_norm(
        &self,
        num_groups: impl Dim,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "group_norm";
        let num_groups = crate::tensor::dims::dim(num_groups, op)?;
        check_float(self, op)?;
        if suggests(self) {
            // PyTorch's kernel keeps a channels-last input's format (output and gradient)
            let x = contiguous_channels_last_grad(self)?;
            return channels_last(&x.group_norm(num_groups, weight, bias, eps)?);
        }
        let sh = self.shape();
        if sh.len() < 2 {
            bail!(
                InvalidArgument,
                op,
                "Expected at least 2 dimensions for input tensor but received {}",
                sh.len()
            );
        }
        let (n, c) = (sh[0], sh[1]);
        if num_groups <= 0 {
            bail!(
                InvalidArgument,
                op,
                "Expected num groups to be greater than 0, got {}",
                num_groups
            );
        }
        let num_groups = num_groups as usize;
        if !c.is_multiple_of(num_groups) {
            bail!(
                InvalidArgument,
                op,
                "Expected number of channels in input to be divisible by num_groups, but got input of shape {:?} and num_groups={}",
                sh,
                num_groups
            );
        }
        for (t, what) in [(weight, "weight"), (bias, "bias")] {
            if let Some(t) = t {
                // PyTorch's `check_group_norm_inputs`: a vector (batch_norm takes any shape)
                if t.dim() != 1 || t.numel() != c {
                    bail!(
                        ShapeMismatch,
                        op,
                        "Expected {} to be a vector of size equal to the number of channels in input, but got {} of shape {:?} and input of shape {:?}",
                        what,
                        what,
                        t.shape(),
                        sh
                    );
                }
                check_param(t, what, c, self.dtype(), op)?;
            }
        }
        // PyTorch's kernel checks (`native_group_norm`)
        if c == 0 {
            bail!(
                InvalidArgument,
                op,
                "Expected number of channels to be greater than 0, got 0"
            );
        }
        let hxw = size_product(&sh[2..]);
        if hxw == 0 {
            bail!(
                InvalidArgument,
                op,
                "Expected HxW to be greater than 0, got 0"
            );
        }
        let fused = n > 0
            && [weight, bias]
                .into_iter()
                .flatten()
                .all(|t| t.dtype() == self.dtype());
        if fused {
            return fused_forward(self, (n, c, hxw, num_groups), weight, bias, eps);
        }
        // `[1, N*G, C/G*HxW]`: both fit (they multiply to the input's element count) unless
        // the batch is empty, whose other sizes may be huge: then `[1, 0, 0]`
        let flat = if n == 0 {
            [1, 0, 0]
        } else {
            [1, (n * num_groups) as i64, ((c / num_groups) * hxw) as i64]
        };
        let a = BatchNormArgs {
            running_mean: None,
            running_var: None,
            weight: None,
            bias: None,
            training: true,
            momentum: 0.0,
            eps,
        };
        let full: Vec<i64> = sh.iter().map(|&d| d as i64).collect();
        let mut y = batch_norm_impl(&self.reshape(&flat)?, &a, false, op)?.unsafe_view(&full)?;
        let cs = channel_shape(c, sh.len());
        if let Some(w) = weight {
            y = y.mul(&w.to_dtype(self.dtype())?.reshape(&cs)?)?;
        }
        if let Some(b) = bias {
            y = y.add(&b.to_dtype(self.dtype())?.reshape(&cs)?)?;
        }
        Ok(y)
    }
}

/// `(N, C, HxW, G)` of a group_norm call.
type Dims = (usize, usize, usize, usize);

/// The backend kernel's forward, recording [`GroupNormBackward`].
fn fused_forward(
    x: &Tensor,
    dims: Dims,
    weight: Option<&Tensor>,
    bias: Option<&Tensor>,
    eps: f64,
) -> Result<Tensor> {
    let sh = x.shape();
    let dt = x.dtype();
    let (y, stats) = {
        let _g = no_grad();
        let xc = x.contiguous()?;
        let (w, b) = (contig(weight)?, contig(bias)?);
        let (ys, ss) = crate::backend::group_norm(
            &xc.data(),
            w.as_ref().map(|t| t.data()).as_ref(),
            b.as_ref().map(|t| t.data()).as_ref(),
            dims,
            eps,
            dt,
        )?;
        let sdt = if dt == DType::F64 {
            DType::F64
        } else {
            DType::F32
        };
        (
            Tensor::from_parts(ys, Layout::contiguous(&sh), dt),
            Tensor::from_parts(ss, Layout::contiguous(&[2 * dims.0 * dims.3]), sdt),
        )
    };
    let mut inputs = vec![x];
    inputs.extend(weight);
    inputs.extend(bias);
    record(
        &[&y],
        &inputs,
        || {
            let mut v = vec![SavedTensor::input(x), SavedTensor::private(stats)];
            v.extend(weight.map(SavedTensor::input));
            v.extend(bias.map(SavedTensor::input));
            v
        },
        GroupNormBackward {
            dims,
            eps,
            has_w: weight.is_some(),
            has_b: bias.is_some(),
        },
    )?;
    Ok(y)
}

struct GroupNormBackward {
    dims: Dims,
    eps: f64,
    has_w: bool,
    has_b: bool,
}

backward!(
    GroupNormBackward,
    "NativeGroupNormBackward0",
    |self, ctx, g: Tensor| fused_norm_grads(self, ctx, g)
);

impl FusedNorm for GroupNormBackward {
    const DOUBLE_BACKWARD: Option<&'static str> = None;

    fn affine(&self) -> (bool, bool) {
        (self.has_w, self.has_b)
    }

    /// The backend's kernel (no graph).
    fn fused_grads(
        &self,
        x: &Tensor,
        stats: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three> {
        let dt = x.dtype();
        let (x, g, wc) = kernel_operands(x, g, w)?;
        let outs = crate::backend::group_norm_backward(
            &g.data(),
            &x.data(),
            &stats.data(),
            wc.as_ref().map(|t| t.data()).as_ref(),
            self.dims,
            dt,
            need,
        )?;
        let c = [self.dims.1];
        let param = w.map_or(c.to_vec(), |w| w.shape());
        Ok(from_storages(outs, [x.shape(), param.clone(), param], dt))
    }

    /// PyTorch's formula composed of differentiable ops (a graph is being built).
    fn composite_grads(
        &self,
        x: &Tensor,
        w: Option<&Tensor>,
        g: &Tensor,
        need: [bool; 3],
    ) -> Result<Three> {
        let (n, c, hxw, groups) = self.dims;
        let d = c / groups;
        let four = [n as i64, groups as i64, d as i64, hxw as i64];
        let s = 1.0 / (d * hxw) as f64;
        let xt = x.reshape(&four)?;
        let mean = xt.sum_dims(&[2, 3], true)?.mul(s)?;
        let xc = xt.sub(&mean)?;
        let var = xc.mul(&xc)?.sum_dims(&[2, 3], true)?.mul(s)?;
        let rstd = var.add(self.eps)?.rsqrt()?;
        let gt = g.to_dtype(x.dtype())?.reshape(&four)?;
        let ds = gt.mul(&xt)?.sum_dims(&[3], true)?;
        let db = gt.sum_dims(&[3], true)?;
        let gamma = w
            .map(|w| w.reshape(&[1, groups as i64, d as i64, 1]))
            .transpose()?;
        let by_gamma = |t: &Tensor| -> Result<Tensor> {
            match &gamma {
                Some(gm) => t.mul(gm),
                None => Ok(t.clone()),
            }
        };
        let gx = if need[0] {
            let a = by_gamma(&rstd)?;
            let b = by_gamma(&ds)?.sum_dims(&[2], true)?;
            let cc = by_gamma(&db)?.sum_dims(&[2], true)?;
            let rstd3 = rstd.mul(&rstd)?.mul(&rstd)?;
            let b = cc.mul(&mean)?.sub(&b)?.mul(&rstd3)?.mul(s)?;
            let cc = b.neg()?.mul(&mean)?.sub(&cc.mul(&rstd)?.mul(s)?)?;
            let dx = a.mul(&gt)?.add(&b.mul(&xt)?)?.add(&cc)?;
            Some(dx.reshape(&x.shape().iter().map(|&v| v as i64).collect::<Vec<_>>())?)
        } else {
            None
        };
        let param: Vec<i64> = w
            .map_or(vec![c], |w| w.shape())
            .iter()
            .map(|&v| v as i64)
            .collect();
        let gw = if need[1] {
            let t = ds.sub(&db.mul(&mean)?)?.mul(&rstd)?;
            Some(t.sum_dims(&[0], false)?.reshape(&param)?)
        } else {
            None
        };
        let gb = if need[2] {
            Some(db.sum_dims(&[0], false)?.reshape(&param)?)
        } else {
            None
        };
        Ok([gx, gw, gb])
    }
}
