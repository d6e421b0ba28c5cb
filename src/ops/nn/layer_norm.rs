//! `layer_norm` over the trailing dims, composed of differentiable ops around an `rsqrt` of the
//! variance (the backend's row kernel, typed) (backward `-g * y^3 / 2`, saved: output).

use super::check_float;
use crate::autograd::{SavedTensor, record};
use crate::backend::RowwiseOp;
use crate::layout::Layout;
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor, bail};

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
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "layer_norm";
        check_float(self, op)?;
        let sh = self.shape();
        let k = normalized_shape.len();
        if k == 0 || k > sh.len() || sh[sh.len() - k..] != *normalized_shape {
            bail!(
                ShapeMismatch,
                op,
                "Given normalized_shape={:?}, expected input with shape [*, {:?}], but got input of size {:?}",
                normalized_shape,
                normalized_shape,
                sh
            );
        }
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
        // PyTorch normalizes a contiguous copy of the input: the output is contiguous
        let x = self.contiguous()?;
        let dims: Vec<i64> = (sh.len() - k..sh.len()).map(|d| d as i64).collect();
        let n: usize = normalized_shape.iter().product();
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
}
