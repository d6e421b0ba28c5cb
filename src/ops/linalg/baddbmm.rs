//! `baddbmm`: `beta * self + alpha * (batch1 @ batch2)` as one autograd node
//! (`BaddbmmBackward0`), so `self` gets `beta * g` (zeros when `beta == 0`, where `self`'s
//! values, NaN included, are ignored) even though the forward skips it. The backward is
//! written with differentiable ops (`bmm`, `mul`, `sum_to_size`), so it has a double backward.

use crate::autograd::{SavedTensor, no_grad, record};
use crate::ops::grad::{GradIf, backward, grads};
use crate::{Result, Tensor, bail};

const OP: &str = "baddbmm";

/// `t * s`, an integral `s` kept integral for integer tensors (PyTorch's scalar semantics).
fn scale(t: &Tensor, s: f64) -> Result<Tensor> {
    if s == 1.0 {
        return Ok(t.clone());
    }
    if t.dtype().is_integral(true) && s.fract() == 0.0 {
        t.mul(s as i64)
    } else {
        t.mul(s)
    }
}

/// Saved: `batch1`, `batch2`.
struct BaddbmmBackward {
    beta: f64,
    alpha: f64,
    self_shape: Vec<usize>,
}

backward!(
    BaddbmmBackward,
    "BaddbmmBackward0",
    |self, ctx, g: Tensor| {
        let (b1, b2) = (&ctx.saved[0], &ctx.saved[1]);
        let h = |t: &Tensor| t.conj_if_complex()?.transpose(1, 2);
        grads([
            ctx.grad_if(0, || scale(&g, self.beta)?.sum_to_size(&self.self_shape))?,
            ctx.grad_if(1, || scale(&g.bmm(&h(b2)?)?, self.alpha))?,
            ctx.grad_if(2, || scale(&h(b1)?.bmm(&g)?, self.alpha))?,
        ])
    }
);

impl Tensor {
    /// `torch.baddbmm`: `beta * self + alpha * (batch1 @ batch2)` for `[B,n,k]` and `[B,k,m]`
    /// batches, `self` broadcast to `[B,n,m]`; with `beta == 0` `self` is ignored (NaN and
    /// inf included) and gets a zero gradient, as in PyTorch.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::full(&[2, 1, 1], f32::NAN, DType::F32)?;
    /// let b = Tensor::ones(&[2, 1, 3], DType::F32)?;
    /// let c = Tensor::ones(&[2, 3, 1], DType::F32)?;
    /// assert_eq!(x.baddbmm(&b, &c, 0.0, 2.0)?.to_vec::<f32>()?, vec![6.0, 6.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn baddbmm(
        &self,
        batch1: &Tensor,
        batch2: &Tensor,
        beta: f64,
        alpha: f64,
    ) -> Result<Tensor> {
        for t in [self, batch1, batch2] {
            t.check_strided(OP)?;
        }
        let (s1, s2) = (batch1.shape(), batch2.shape());
        let ss = self.shape();
        // PyTorch checks self against [B, n, m] first (when the batches give those sizes)
        if s1.len() >= 2 && !s2.is_empty() {
            let target = [s1[0], s1[1], s2[s2.len() - 1]];
            if ss.len() > 3 {
                bail!(
                    ShapeMismatch,
                    OP,
                    "expand: the number of sizes provided (3) must be greater or equal to the number of dimensions in the tensor ({})",
                    ss.len()
                );
            }
            let off = 3 - ss.len();
            if let Some(i) = (0..ss.len()).find(|&i| ss[i] != 1 && ss[i] != target[off + i]) {
                bail!(
                    ShapeMismatch,
                    OP,
                    "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                    target[off + i],
                    ss[i],
                    off + i,
                    target,
                    ss
                );
            }
        }
        if batch1.dim() != 3 {
            bail!(InvalidArgument, OP, "batch1 must be a 3D tensor");
        }
        if batch2.dim() != 3 {
            bail!(InvalidArgument, OP, "batch2 must be a 3D tensor");
        }
        if s1[0] != s2[0] {
            bail!(
                ShapeMismatch,
                OP,
                "batch1 and batch2 must have same number of batches, got {} and {}",
                s1[0],
                s2[0]
            );
        }
        if s1[2] != s2[1] {
            bail!(
                ShapeMismatch,
                OP,
                "Incompatible matrix sizes for bmm ({}x{} and {}x{})",
                s1[1],
                s1[2],
                s2[1],
                s2[2]
            );
        }
        if batch1.dtype() != self.dtype() || batch2.dtype() != self.dtype() {
            bail!(
                DTypeMismatch,
                OP,
                "Input dtypes must be the same, got: input {}, batch1: {}, batch2: {}",
                self.dtype().torch_scalar_name(),
                batch1.dtype().torch_scalar_name(),
                batch2.dtype().torch_scalar_name()
            );
        }
        let out = {
            let _g = no_grad();
            let p = batch1.bmm(batch2)?;
            let p = if alpha != 1.0 { scale(&p, alpha)? } else { p };
            if beta == 0.0 {
                p
            } else if beta == 1.0 {
                self.add(&p)?
            } else {
                scale(self, beta)?.add(&p)?
            }
        };
        record(
            &[&out],
            &[self, batch1, batch2],
            || vec![SavedTensor::input(batch1), SavedTensor::input(batch2)],
            BaddbmmBackward {
                beta,
                alpha,
                self_shape: ss.clone(),
            },
        )?;
        Ok(out)
    }
}
