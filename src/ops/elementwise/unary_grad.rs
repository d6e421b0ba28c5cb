//! Backward formulas of the elementwise unary ops ([`UOp`]), from PyTorch's derivatives.yaml:
//! differentiable (built from ops, so double backward works), with one fused flat pass
//! (`fused!`: relu, tanh, sigmoid, silu, softplus, erf, gelu) over dense f32/f64 operands when
//! no higher-order graph is being recorded.

use crate::autograd::output_grad;
use crate::backend::Transcendental;
use crate::ops::elementwise::activation::gelu_grad;
use crate::ops::elementwise::map::float_go;
use crate::ops::elementwise::unary::UOp;
use crate::ops::elementwise::unary_complex;
use crate::ops::grad::{backward, grads, input_grad, zero_grad_link};
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
        Erf => match fused!(&g, s(), |g, x| g
            * ((-(x * x)).vexp() * std::f64::consts::FRAC_2_SQRT_PI as R))
        {
            Some(r) => r?,
            None => g.mul(
                &s().pow(2)?
                    .neg()?
                    .exp()?
                    .mul(std::f64::consts::FRAC_2_SQRT_PI)?,
            )?,
        },
        Abs if s().dtype().is_complex() => {
            // sgn(z) = z / |z| (0 at 0), PyTorch's complex abs backward
            let z = s();
            let m = z.abs()?;
            let safe = Tensor::where_(&m.eq(0)?, 1.0, &m)?;
            g.mul(&z.div(&safe)?)?
        }
        Abs => g.mul(&s().sign()?)?,
        // PyTorch's threshold_backward: zero where the output is <= 0 (NaN passes the grad)
        Relu => match fused!(&g, s(), |g, y| if y <= 0.0 { 0.0 } else { g }) {
            Some(r) => r?,
            None => zero_grad_link(
                Tensor::where_(&s().le(0)?, 0.0, &g)?,
                &[s()],
                "ThresholdBackwardBackward0",
            )?,
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
        Tanh => match fused!(&g, s(), |g, y| g * (1.0 - y * y)) {
            Some(r) => r?,
            None => g.mul(&s().mul(s())?.neg()?.add(1.0)?)?,
        },
        Sigmoid => match fused!(&g, s(), |g, y| g * y * (1.0 - y)) {
            Some(r) => r?,
            None => g.mul(s())?.mul(&s().neg()?.add(1.0)?)?,
        },
        Silu => match fused!(&g, s(), |g, x| {
            let sg = x.vsigmoid();
            g * sg * (x * (1.0 - sg) + 1.0)
        }) {
            Some(r) => r?,
            None => {
                let sg = s().sigmoid()?;
                let inner = s().mul(&sg.neg()?.add(1.0)?)?.add(1.0)?;
                g.mul(&sg)?.mul(&inner)?
            }
        },
        Softplus(beta, thr) => match fused!(&g, s(), |g, x| {
            let bx = x * beta as R;
            if bx > thr as R { g } else { g * bx.vsigmoid() }
        }) {
            Some(r) => r?,
            None => {
                let bx = s().mul(beta)?;
                Tensor::where_(&bx.gt(thr)?, &g, &g.mul(&bx.sigmoid()?)?)?
            }
        },
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
            zero_grad_link(
                Tensor::where_(&s().gt(0)?, &g, &g.mul(sl)?)?,
                &[s()],
                "LeakyReluBackwardBackward0",
            )?
        }
        // `g * gelu'(x)` in one pass when no graph is recorded (the workload
        // `gelu_backward_f32_4M`)
        Gelu(t) => {
            let fast = if t {
                fused!(&g, s(), |g, x| g * gelu_grad!(tanh, x, R))
            } else {
                fused!(&g, s(), |g, x| g * gelu_grad!(exact, x, R))
            };
            match fast {
                Some(r) => r?,
                None => gelu_grad_recorded(&g, s(), t)?,
            }
        }
    };
    input_grad(gi)
});

/// `g * gelu'(x)` with the derivative as a tensor, recorded (with its own derivative) under
/// create_graph.
fn gelu_grad_recorded(g: &Tensor, x: &Tensor, t: bool) -> Result<Tensor> {
    let x = if x.dtype() == g.dtype() {
        x.clone()
    } else {
        x.to_dtype(g.dtype())?
    };
    let d = if t {
        float_go!(x.dtype(), &x, None, R, |v| gelu_grad!(tanh, v, R))?
    } else {
        float_go!(x.dtype(), &x, None, R, |v| gelu_grad!(exact, v, R))?
    };
    crate::ops::elementwise::activation::record_gelu_grad(&d, &x, t)?;
    g.mul(&d)
}

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

/// Fast path F12 (see `autograd/builtin`): true if a backward rule may run as one fused pass over `g` and the saved `s`: one dtype,
/// and no graph of the backward being recorded.
fn fusable(g: &Tensor, s: &Tensor) -> bool {
    g.dtype() == s.dtype()
        && !(crate::autograd::is_grad_enabled() && (g.requires_grad() || s.requires_grad()))
}

/// `Some(f(g, s))` computed in one flat pass over dense f32/f64 operands of one layout (the
/// body sees `R`, the element type) when [`fusable`]; `None` sends the caller to the general,
/// differentiable formula (which gives the same values).
macro_rules! fused {
    ($g:expr, $s:expr, |$gv:ident, $sv:ident| $body:expr) => {{
        let (g, s): (&Tensor, &Tensor) = ($g, $s);
        if !fusable(g, s) {
            None
        } else {
            match g.dtype() {
                DType::F32 => {
                    type R = f32;
                    crate::ops::dense::binary::<R, R>(g, s, &|$gv: R, $sv: R| $body)
                }
                DType::F64 => {
                    type R = f64;
                    crate::ops::dense::binary::<R, R>(g, s, &|$gv: R, $sv: R| $body)
                }
                _ => None,
            }
        }
    }};
}
use fused;
