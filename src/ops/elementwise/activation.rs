//! Activation helpers: the GELU derivative formulas and the parameterised activation
//! methods (`gelu`, `softplus`, `elu` / `elu_`, `leaky_relu` / `leaky_relu_`); their kernels
//! live in `unary.rs` and their derivatives in `unary_grad.rs`, except the recorded GELU
//! derivative that makes GELU twice differentiable.

use crate::autograd::SavedTensor;
use crate::ops::elementwise::unary::{UOp, unary, unary_};
use crate::ops::grad::{backward, input_grad};
use crate::{Element, Result, Tensor};

/// GELU's derivative at `$x` in the compute type `$R` (f32 or f64), PyTorch's backward
/// formulas: exact `cdf + x pdf`; tanh form `0.5 (1 + t) + 0.5 x (1 - t^2) beta (1 + 3 kappa x^2)`
/// with `t = tanh(beta (x + kappa x^3))`. Uses [`Transcendental`](crate::backend::Transcendental).
macro_rules! gelu_grad {
    (exact, $x:expr, $R:ty) => {{
        let x: $R = $x;
        let cdf = 0.5 * (1.0 + (x * std::f64::consts::FRAC_1_SQRT_2 as $R).verf());
        let pdf = $crate::ops::elementwise::activation::GELU_PDF as $R * (x * x * -0.5).vexp();
        cdf + x * pdf
    }};
    (tanh, $x:expr, $R:ty) => {{
        let x: $R = $x;
        let beta = $crate::ops::elementwise::unary::GELU_BETA as $R;
        let inner = beta * (x + 0.044715 * (x * x * x));
        let t = inner.vtanh();
        let right = (0.5 * x) * (1.0 - t * t) * (beta * (1.0 + 3.0 * 0.044715 * (x * x)));
        0.5 * (1.0 + t) + right
    }};
}
pub(crate) use gelu_grad;

/// `1 / sqrt(2 pi)`, the standard normal density's scale.
pub(crate) const GELU_PDF: f64 =
    std::f64::consts::FRAC_2_SQRT_PI * std::f64::consts::FRAC_1_SQRT_2 * 0.5;

/// Second derivative of GELU (exact: `φ(x)(2 - x²)`; tanh form: `(1-t²)(u' - x t u'² + x u''/2)`).
pub(crate) fn gelu_grad2_f64(x: f64, tanh: bool) -> f64 {
    if tanh {
        let (k, c) = ((2.0 / std::f64::consts::PI).sqrt(), 0.044715);
        let t = (k * (x + c * x * x * x)).tanh();
        let u1 = k * (1.0 + 3.0 * c * x * x);
        let u2 = 6.0 * k * c * x;
        (1.0 - t * t) * (u1 - x * t * u1 * u1 + 0.5 * x * u2)
    } else {
        let pdf = (-0.5 * x * x).exp() / (2.0 * std::f64::consts::PI).sqrt();
        pdf * (2.0 - x * x)
    }
}

/// Records `d = gelu'(x)` (computed by the caller) as a function of `x`, so a GELU gradient
/// built under `create_graph` can be differentiated again. No-op unless recording.
pub(crate) fn record_gelu_grad(d: &Tensor, x: &Tensor, tanh: bool) -> Result<()> {
    crate::autograd::record(
        &[d],
        &[x],
        || vec![SavedTensor::input(x)],
        GeluGradBackward { tanh },
    )
}

/// Backward of the GELU derivative: `grad * gelu''(x)` (first-order in turn).
struct GeluGradBackward {
    tanh: bool,
}

backward!(
    GeluGradBackward,
    "GeluBackwardBackward0",
    |self, ctx, g: Tensor| {
        let x = &ctx.saved[0];
        let tanh = self.tanh;
        let d2 = {
            let _ng = crate::autograd::no_grad();
            // (computed in f64 from a contiguous `x`, then cast: the values and strides of the
            // f64 host loop this replaces)
            let xc = x.contiguous()?;
            let v = crate::dispatch!(xc.dtype(), T => crate::ops::elementwise::map::unary_map::<T, f64>(
                &xc,
                move |a| gelu_grad2_f64(a.to_f64(), tanh)
            ))?;
            v.to_dtype(g.dtype())?
        };
        input_grad(g.mul(&d2)?)
    }
);

/// Which GELU: PyTorch's `approximate="none"` (exact, with `erf`) or `approximate="tanh"`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Approximate {
    /// `x * Φ(x)` with the exact normal CDF (`approximate="none"`, the default).
    #[default]
    None,
    /// The tanh approximation (`approximate="tanh"`).
    Tanh,
}

impl Approximate {
    /// PyTorch's name for it: `"none"` or `"tanh"` (`nn::Gelu`'s repr).
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Approximate::None => "none",
            Approximate::Tanh => "tanh",
        }
    }
}

impl Tensor {
    /// GELU (PyTorch's `gelu(input, approximate=...)`).
    ///
    /// ```
    /// # use tapegrad::{Approximate, Tensor};
    /// let x = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// assert_eq!(x.gelu(Approximate::None)?.to_vec::<f32>()?, vec![0.0]);
    /// assert_eq!(x.gelu(Approximate::Tanh)?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn gelu(&self, approximate: Approximate) -> Result<Tensor> {
        unary(self, UOp::Gelu(approximate == Approximate::Tanh))
    }
    /// `log(1 + exp(beta x)) / beta`, linear above `threshold` (PyTorch defaults: 1, 20).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let y = Tensor::from_vec(vec![100.0f32], &[1])?.softplus(1.0, 20.0)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![100.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn softplus(&self, beta: f64, threshold: f64) -> Result<Tensor> {
        unary(self, UOp::Softplus(beta, threshold))
    }
    /// ELU: `x` for `x > 0`, else `alpha (e^x - 1)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![2.0f32], &[1])?.elu(1.0)?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn elu(&self, alpha: f64) -> Result<Tensor> {
        unary(self, UOp::Elu(alpha))
    }
    /// Leaky ReLU with negative `slope` (PyTorch default 0.01).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2.0f32], &[1])?.leaky_relu(0.5)?.to_vec::<f32>()?, vec![-1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn leaky_relu(&self, slope: f64) -> Result<Tensor> {
        unary(self, UOp::LeakyRelu(slope))
    }
    /// In-place [`Tensor::elu`] (`F.elu(inplace=True)`); its backward reads the result, so a
    /// negative `alpha` makes backward fail (as in PyTorch).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32, 0.0], &[2])?;
    /// x.elu_(1.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![2.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn elu_(&self, alpha: f64) -> Result<Tensor> {
        unary_(self, UOp::Elu(alpha))
    }
    /// In-place [`Tensor::leaky_relu`] (`F.leaky_relu(inplace=True)`; a negative slope makes
    /// backward fail, as in PyTorch).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0f32], &[1])?;
    /// x.leaky_relu_(0.5)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![-1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn leaky_relu_(&self, slope: f64) -> Result<Tensor> {
        unary_(self, UOp::LeakyRelu(slope))
    }
}
