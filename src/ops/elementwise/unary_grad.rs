//! Backward formulas of the elementwise unary ops ([`UOp`]), from PyTorch's derivatives.yaml:
//! differentiable (built from ops, so double backward works), with a flat dense pass for ReLU
//! when no higher-order graph is being recorded.

use crate::autograd::output_grad;
use crate::ops::elementwise::activation::gelu_grad_f64;
use crate::ops::elementwise::unary::{UOp, float_go};
use crate::ops::elementwise::unary_complex;
use crate::ops::grad::{backward, grads, input_grad};
use crate::{DType, Result, Tensor};

/// Backward of every op in [`UOp`]; saved: nothing, the input or the output (see `UOp::save`;
/// the in-place ELU and leaky ReLU save their result, as PyTorch's `elu_` / `leaky_relu_`).
pub(crate) struct UnaryBackward {
    pub(crate) op: UOp,
    pub(crate) inplace: bool,
}

backward!(UnaryBackward, self.op.backward_name(), |self, ctx, g| {
    use UOp::*;
    let g = output_grad(g);
    if !ctx.needs(0) {
        return grads([None]);
    }
    let s = ctx.saved.first();
    if let Some(z) = s.filter(|z| z.dtype().is_complex())
        && self.op != Abs
        && unary_complex::supports(self.op)
    {
        return input_grad(unary_complex::grad(self.op, &g, z)?);
    }
    let s = || s.expect("internal: saved tensor");
    let ln2 = std::f64::consts::LN_2;
    let gi = match self.op {
        Neg => g.neg()?,
        Sign | Floor | Ceil | Round | Trunc | RoundDecimals(_) => g.zeros_like()?,
        Frac => g,
        // `2/sqrt(pi) exp(-x^2)` with PyTorch's `pow(2)` (so the second order overflows alike)
        Erf => g.mul(
            &s().pow(2)?
                .neg()?
                .exp()?
                .mul(std::f64::consts::FRAC_2_SQRT_PI)?,
        )?,
        Abs if s().dtype().is_complex() => {
            // sgn(z) = z / |z| (0 at 0), PyTorch's complex abs backward
            let z = s();
            let m = z.abs()?;
            let safe = Tensor::where_(&m.eq(0)?, 1.0, &m)?;
            g.mul(&z.div(&safe)?)?
        }
        Abs => g.mul(&s().sign()?)?,
        // PyTorch's threshold_backward: zero where the output is <= 0 (NaN passes the grad)
        Relu => match relu_grad_dense(&g, s()) {
            Some(r) => r?,
            None => Tensor::where_(&s().le(0)?, 0.0, &g)?,
        },
        Exp => g.mul(&s().conj_if_complex()?)?,
        Exp2 => g.mul(s())?.mul(ln2)?,
        Log => g.div(s())?,
        Log2 => g.div(&s().mul(ln2)?)?,
        Log10 => g.div(&s().mul(std::f64::consts::LN_10)?)?,
        Log1p => g.div(&s().add(1.0)?)?,
        Expm1 => g.mul(&s().add(1.0)?)?,
        Sqrt => g.div(&s().mul(2.0)?)?,
        Rsqrt => g.mul(&s().pow(3)?)?.mul(-0.5)?,
        Reciprocal => g.mul(&s().mul(s())?)?.neg()?,
        Sin => g.mul(&s().cos()?)?,
        Cos => g.mul(&s().sin()?)?.neg()?,
        Tan => g.mul(&s().mul(s())?.add(1.0)?)?,
        Asin => g.div(&s().mul(s())?.neg()?.add(1.0)?.sqrt()?)?,
        Acos => g.div(&s().mul(s())?.neg()?.add(1.0)?.sqrt()?)?.neg()?,
        Atan => g.div(&s().mul(s())?.add(1.0)?)?,
        Sinh => g.mul(&s().cosh()?)?,
        Cosh => g.mul(&s().sinh()?)?,
        Tanh => g.mul(&s().mul(s())?.neg()?.add(1.0)?)?,
        Sigmoid => g.mul(s())?.mul(&s().neg()?.add(1.0)?)?,
        Silu => {
            let sg = s().sigmoid()?;
            let inner = s().mul(&sg.neg()?.add(1.0)?)?.add(1.0)?;
            g.mul(&sg)?.mul(&inner)?
        }
        Softplus(beta, thr) => {
            let bx = s().mul(beta)?;
            Tensor::where_(&bx.gt(thr)?, &g, &g.mul(&bx.sigmoid()?)?)?
        }
        // PyTorch's `x <= 0 ? g alpha e^x : g` (NaN takes `g`); in place from the result
        // `out`: `out <= 0 ? g (out + alpha) : g` (alpha >= 0 only)
        Elu(alpha) if self.inplace => {
            negative_slope_check(alpha, "elu")?;
            Tensor::where_(&s().le(0)?, &g.mul(&s().add(alpha)?)?, &g)?
        }
        Elu(alpha) => Tensor::where_(&s().le(0)?, &g.mul(&s().exp()?.mul(alpha)?)?, &g)?,
        LeakyRelu(sl) => {
            if self.inplace {
                negative_slope_check(sl, "leakyReLu")?;
            }
            Tensor::where_(&s().gt(0)?, &g, &g.mul(sl)?)?
        }
        Gelu(t) => {
            // fused derivative kernel; recorded (with its own derivative) under create_graph
            let x = s();
            let x = if x.dtype() == g.dtype() {
                x.clone()
            } else {
                x.to_dtype(g.dtype())?
            };
            let d = float_go!(x.dtype(), &x, None, R, |v| gelu_grad_f64(v as f64, t) as R)?;
            crate::ops::elementwise::activation::record_gelu_grad(&d, &x, t)?;
            g.mul(&d)?
        }
    };
    input_grad(gi)
});

/// The in-place ELU / leaky ReLU backward reads the result, which loses the input's sign for
/// a negative slope: PyTorch refuses it.
fn negative_slope_check(slope: f64, what: &str) -> Result<()> {
    if slope < 0.0 {
        crate::bail!(
            InvalidArgument,
            "backward",
            "In-place {} backward calculation is triggered with a negative slope which is not supported. This is caused by calling in-place forward function with a negative slope, please call out-of-place version instead.",
            what
        );
    }
    Ok(())
}

/// ReLU's backward `y <= 0 ? 0 : g` as one flat pass over dense f32/f64 operands of one layout
/// when no graph of the backward is being recorded; `None` sends the caller to the general
/// (differentiable) formula.
fn relu_grad_dense(g: &Tensor, y: &Tensor) -> Option<Result<Tensor>> {
    if g.dtype() != y.dtype()
        || (crate::autograd::is_grad_enabled() && (g.requires_grad() || y.requires_grad()))
    {
        return None;
    }
    match g.dtype() {
        DType::F32 => {
            crate::ops::dense::binary::<f32, f32>(g, y, &|g, y| if y <= 0.0 { 0.0 } else { g })
        }
        DType::F64 => {
            crate::ops::dense::binary::<f64, f64>(g, y, &|g, y| if y <= 0.0 { 0.0 } else { g })
        }
        _ => None,
    }
}
