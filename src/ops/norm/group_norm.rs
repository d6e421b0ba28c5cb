//! `group_norm`: batch norm of every sample's channel groups (`[N, C, *]` reshaped to
//! `[1, N*G, *]`, no affine, no running statistics), then the per-channel `* weight + bias`.

use super::batch_norm::{BatchNormArgs, batch_norm_impl};
use super::memory_format::{contiguous_channels_last_grad, suggests, to_channels_last};
use super::{channel_shape, check_param, size_product};
use crate::ops::nn::check_float;
use crate::{Dim, Result, Tensor, bail};

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
            return to_channels_last(&x.group_norm(num_groups, weight, bias, eps)?);
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
