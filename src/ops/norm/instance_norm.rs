//! `instance_norm`: batch norm of every sample's channels, composed as PyTorch composes it
//! (`[N, C, *]` reshaped to `[1, N*C, *]`, the affine parameters and running statistics
//! repeated `N` times); the running statistics are then written back with `copy_` (the mean
//! over the batch of the updated copies), which bumps their version, as in PyTorch.

use super::batch_norm::{BatchNormArgs, batch_norm_impl};
use super::{check_param, size_product};
use crate::autograd::no_grad;
use crate::ops::nn::check_float;
use crate::{Result, Tensor, bail};

impl Tensor {
    /// Instance normalization of an `[N, C, *]` input: every `(sample, channel)` normalized
    /// over its own elements, as `torch.nn.functional.instance_norm(input, running_mean,
    /// running_var, weight, bias, use_input_stats, momentum, eps)`.
    ///
    /// With `use_input_stats` the statistics are the instance's and the running statistics
    /// (when given) are updated in place to the mean over the batch of `(1 - momentum) *
    /// running + momentum * instance` (unbiased variance), bumping their version; without it
    /// the running statistics (required) normalize and are left alone.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 2.0, 6.0], &[1, 2, 2])?;
    /// let y = x.instance_norm(None, None, None, None, true, 0.1, 0.0)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0, -1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    #[allow(clippy::too_many_arguments)]
    pub fn instance_norm(
        &self,
        running_mean: Option<&Tensor>,
        running_var: Option<&Tensor>,
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        use_input_stats: bool,
        momentum: f64,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "instance_norm";
        check_float(self, op)?;
        let sh = self.shape();
        if use_input_stats && size_product(sh.get(2..).unwrap_or(&[])) == 1 {
            bail!(
                InvalidArgument,
                op,
                "Expected more than 1 spatial element when training, got input size {:?}",
                sh
            );
        }
        if !use_input_stats && (running_mean.is_none() || running_var.is_none()) {
            bail!(
                InvalidArgument,
                op,
                "Expected running_mean and running_var to be defined when use_input_stats is false"
            );
        }
        if sh.len() < 2 {
            bail!(
                InvalidArgument,
                op,
                "instance_norm needs an input of at least 2 dims, got {:?}",
                sh
            );
        }
        let (b, c) = (sh[0], sh[1]);
        for (t, what) in [
            (running_mean, "running_mean"),
            (running_var, "running_var"),
            (weight, "weight"),
            (bias, "bias"),
        ] {
            if let Some(t) = t {
                check_param(t, what, c, self.dtype(), op)?;
            }
        }
        let Some(bc) = b.checked_mul(c).filter(|&bc| bc <= i64::MAX as usize) else {
            bail!(
                InvalidArgument,
                op,
                "instance_norm: batch times channels of an input of size {:?} overflows int64",
                sh
            );
        };
        let given = BatchNormArgs {
            running_mean,
            running_var,
            weight,
            bias,
            training: use_input_stats,
            momentum,
            eps,
        };
        if self.numel() == 0 {
            return empty_instance_norm(self, &given, bc);
        }
        let repeated = |t: &Tensor| t.reshape(&[-1])?.repeat(&[b]);
        let (rm, rv) = {
            let _g = no_grad();
            (
                running_mean.map(repeated).transpose()?,
                running_var.map(repeated).transpose()?,
            )
        };
        let (w, bi) = (
            weight.map(repeated).transpose()?,
            bias.map(repeated).transpose()?,
        );
        let mut flat: Vec<i64> = vec![1, bc as i64];
        flat.extend(sh[2..].iter().map(|&d| d as i64));
        let a = BatchNormArgs {
            running_mean: rm.as_ref(),
            running_var: rv.as_ref(),
            weight: w.as_ref(),
            bias: bi.as_ref(),
            ..given
        };
        let y = batch_norm_impl(&self.reshape(&flat)?, &a, false, op)?;
        if use_input_stats {
            let _g = no_grad();
            for (t, rep) in [(running_mean, &rm), (running_var, &rv)] {
                if let (Some(t), Some(rep)) = (t, rep) {
                    let m = rep.view(&[b as i64, c as i64])?.mean(&[0], false, None)?;
                    let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
                    t.copy_(&m.reshape(&shape)?)?;
                }
            }
        }
        let full: Vec<i64> = sh.iter().map(|&d| d as i64).collect();
        y.view(&full)
    }
}

/// Instance norm of an empty `[N, C, *]` input without repeating anything `N` times (an empty
/// input may have 2^26 samples): batch norm of the input itself gives the same empty output
/// and zero parameter gradients. With `use_input_stats` the running statistics are still
/// written, as PyTorch writes them: the mean of `N` unchanged copies (NaN when `N` is 0).
fn empty_instance_norm(x: &Tensor, a: &BatchNormArgs<'_>, bc: usize) -> Result<Tensor> {
    // PyTorch's batch norm of the `[1, N*C, *]` view still allocates `N*C` saved statistics,
    // and fails when it cannot: reserved the same way, never touched
    drop(crate::storage::try_vec::<(f64, f64)>(bc, "batch_norm")?);
    let y = batch_norm_impl(x, a, false, "instance_norm")?;
    if a.training {
        let _g = no_grad();
        let (b, c) = (x.shape()[0] as i64, x.shape()[1] as i64);
        for t in [a.running_mean, a.running_var].into_iter().flatten() {
            let copies = t.reshape(&[1, c])?.expand(&[b, c])?;
            let m = copies.mean(&[0], false, None)?;
            let shape: Vec<i64> = t.shape().iter().map(|&d| d as i64).collect();
            t.copy_(&m.reshape(&shape)?)?;
        }
    }
    let full: Vec<i64> = x.shape().iter().map(|&d| d as i64).collect();
    y.view(&full)
}
