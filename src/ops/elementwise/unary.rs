//! Elementwise unary ops (math, activations, rounding) and their in-place forms, with backward
//! formulas from PyTorch's derivatives.yaml, run through the drivers of [`super::map`]. The
//! exponentials, logarithms, trigonometric and hyperbolic functions, `erf` and the activations
//! built on them use the backend's vectorisable lane functions ([`Transcendental`]: f32 lanes,
//! std's f64 functions).

use crate::autograd::{SavedTensor, check_inplace, record, record_inplace};
use crate::backend::Transcendental;
use crate::ops::elementwise::map::{float_go, float_go_fallback, int_go, unary_map};
use crate::ops::elementwise::unary_complex;
use crate::ops::elementwise::unary_grad::UnaryBackward;
use crate::ops::util::check_no_internal_overlap;
use crate::{DType, Result, Tensor, bail};

/// The unary ops of this module.
#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum UOp {
    Neg,
    Abs,
    Sign,
    Relu,
    Exp,
    Exp2,
    Log,
    Log2,
    Log10,
    Log1p,
    Expm1,
    Sqrt,
    Rsqrt,
    Reciprocal,
    Sin,
    Cos,
    Tan,
    Asin,
    Acos,
    Atan,
    Sinh,
    Cosh,
    Tanh,
    Sigmoid,
    Gelu(bool),
    Silu,
    Softplus(f64, f64),
    Elu(f64),
    LeakyRelu(f64),
    Floor,
    Ceil,
    Round,
    Trunc,
    Erf,
    Frac,
    /// `round(decimals=d)`: rounds `x * 10^d` (d < 0: `x / 10^-d`) half to even.
    RoundDecimals(i32),
}

#[derive(Clone, Copy, PartialEq)]
enum Save {
    Nothing,
    Input,
    Output,
}

impl UOp {
    fn name(self) -> &'static str {
        use UOp::*;
        match self {
            Neg => "neg",
            Abs => "abs",
            Sign => "sign",
            Relu => "relu",
            Exp => "exp",
            Exp2 => "exp2",
            Log => "log",
            Log2 => "log2",
            Log10 => "log10",
            Log1p => "log1p",
            Expm1 => "expm1",
            Sqrt => "sqrt",
            Rsqrt => "rsqrt",
            Reciprocal => "reciprocal",
            Sin => "sin",
            Cos => "cos",
            Tan => "tan",
            Asin => "asin",
            Acos => "acos",
            Atan => "atan",
            Sinh => "sinh",
            Cosh => "cosh",
            Tanh => "tanh",
            Sigmoid => "sigmoid",
            Gelu(_) => "gelu",
            Silu => "silu",
            Softplus(..) => "softplus",
            Elu(_) => "elu",
            LeakyRelu(_) => "leaky_relu",
            Floor => "floor",
            Ceil => "ceil",
            Round => "round",
            Trunc => "trunc",
            Erf => "erf",
            Frac => "frac",
            RoundDecimals(_) => "round",
        }
    }
    pub(crate) fn backward_name(self) -> &'static str {
        use UOp::*;
        match self {
            Neg => "NegBackward0",
            Abs => "AbsBackward0",
            Sign => "SignBackward0",
            Relu => "ReluBackward0",
            Exp => "ExpBackward0",
            Exp2 => "Exp2Backward0",
            Log => "LogBackward0",
            Log2 => "Log2Backward0",
            Log10 => "Log10Backward0",
            Log1p => "Log1PBackward0",
            Expm1 => "Expm1Backward0",
            Sqrt => "SqrtBackward0",
            Rsqrt => "RsqrtBackward0",
            Reciprocal => "ReciprocalBackward0",
            Sin => "SinBackward0",
            Cos => "CosBackward0",
            Tan => "TanBackward0",
            Asin => "AsinBackward0",
            Acos => "AcosBackward0",
            Atan => "AtanBackward0",
            Sinh => "SinhBackward0",
            Cosh => "CoshBackward0",
            Tanh => "TanhBackward0",
            Sigmoid => "SigmoidBackward0",
            Gelu(_) => "GeluBackward0",
            Silu => "SiluBackward0",
            Softplus(..) => "SoftplusBackward0",
            Elu(_) => "EluBackward0",
            LeakyRelu(_) => "LeakyReluBackward0",
            Floor => "FloorBackward0",
            Ceil => "CeilBackward0",
            Round => "RoundBackward0",
            Trunc => "TruncBackward0",
            Erf => "ErfBackward0",
            Frac => "FracBackward0",
            RoundDecimals(_) => "RoundBackward1",
        }
    }
    /// Ops whose integer inputs keep their dtype.
    fn keeps_int(self) -> bool {
        use UOp::*;
        matches!(self, Neg | Abs | Sign | Relu | Floor | Ceil | Round | Trunc)
    }
    fn save(self) -> Save {
        use UOp::*;
        match self {
            Neg | Sign | Floor | Ceil | Round | Trunc | Frac | RoundDecimals(_) => Save::Nothing,
            Exp | Exp2 | Expm1 | Sqrt | Rsqrt | Reciprocal | Tan | Tanh | Sigmoid | Relu => {
                Save::Output
            }
            _ => Save::Input,
        }
    }
    fn result_dtype(self, d: DType) -> Result<DType> {
        if d == DType::Bool && matches!(self, UOp::Neg) {
            bail!(
                InvalidArgument,
                "neg",
                "Negation, the `-` operator, on a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
            );
        }
        if matches!(self, UOp::Frac | UOp::RoundDecimals(_)) && !d.is_float() {
            // PyTorch has no integer (or complex) frac, nor round with decimals
            bail!(
                DTypeMismatch,
                self.name(),
                "\"{}_cpu\" not implemented for '{}'",
                self.name(),
                d.torch_scalar_name()
            );
        }
        if d.is_complex() {
            return match self {
                UOp::Abs => Ok(d.to_real()),
                op if unary_complex::supports(op) => Ok(d),
                UOp::Sign => bail!(
                    DTypeMismatch,
                    "sign",
                    "sign is not defined for complex numbers ({}); use sgn",
                    d.torch_scalar_name()
                ),
                _ => bail!(
                    DTypeMismatch,
                    self.name(),
                    "not implemented for '{}'",
                    d.torch_scalar_name()
                ),
            };
        }
        Ok(if d.is_integral(true) && !self.keeps_int() {
            DType::F32
        } else {
            d
        })
    }
}

/// Whether PyTorch computes this exact GELU with oneDNN (`use_mkldnn`: a contiguous input of
/// more than one element, out of place).
fn onednn_gelu(a: &Tensor, out: Option<&Tensor>) -> bool {
    out.is_none() && a.numel() > 1 && a.is_contiguous()
}

/// `sqrt(2 / pi)`, the scale inside tanh-approximated GELU.
pub(crate) const GELU_BETA: f64 = std::f64::consts::SQRT_2 * std::f64::consts::FRAC_2_SQRT_PI * 0.5;

/// The kernel: `a` already has the result dtype (except complex abs); `out` is `a` for in-place.
fn kernel(op: UOp, a: &Tensor, out: Option<&Tensor>) -> Result<Tensor> {
    use UOp::*;
    let dt = a.dtype();
    if dt.is_complex() {
        return match (op, dt) {
            (Abs, DType::C64) => unary_map::<crate::dtype::C64, f32>(a, |x| x.norm()),
            (Abs, _) => unary_map::<crate::dtype::C128, f64>(a, |x| x.norm()),
            _ => unary_complex::kernel(op, a, out),
        };
    }
    if dt.is_integral(true) {
        return match op {
            Neg => int_go!(dt, a, out, |x| x.wrapping_neg(), bool x, u8 x.wrapping_neg()),
            Abs => int_go!(dt, a, out, |x| x.wrapping_abs(), bool x, u8 x),
            Sign => int_go!(dt, a, out, |x| x.signum(), bool x, u8 (x > 0) as u8),
            Relu => int_go!(dt, a, out, |x| x.max(0), bool x, u8 x),
            Floor | Ceil | Round | Trunc => match out {
                Some(o) => Ok(o.clone()),
                // PyTorch copies through an elementwise op: its output layout, not `clone`'s
                None => int_go!(dt, a, None, |x| x, bool x, u8 x),
            },
            _ => unreachable!("internal: integer input to float op"),
        };
    }
    match op {
        Neg => float_go!(dt, a, out, R, |x| -x),
        Abs => float_go!(dt, a, out, R, |x| x.abs()),
        Sign => float_go!(dt, a, out, R, |x| if x > 0.0 {
            1.0
        } else if x < 0.0 {
            -1.0
        } else {
            0.0
        }),
        Relu => float_go!(dt, a, out, R, |x| if x < 0.0 { 0.0 } else { x }),
        Exp => float_go!(dt, a, out, R, |x| x.vexp()),
        Exp2 => float_go!(dt, a, out, R, |x| x.vexp2()),
        Log => float_go!(dt, a, out, R, |x| x.vln()),
        Log2 => float_go!(dt, a, out, R, |x| x.vlog2()),
        Log10 => float_go!(dt, a, out, R, |x| x.vlog10()),
        Log1p => float_go!(dt, a, out, R, |x| x.vln_1p()),
        Expm1 => float_go!(dt, a, out, R, |x| x.vexpm1()),
        Sqrt => float_go!(dt, a, out, R, |x| x.sqrt()),
        Rsqrt => float_go!(dt, a, out, R, |x| 1.0 / x.sqrt()),
        Reciprocal => float_go!(dt, a, out, R, |x| 1.0 / x),
        // Cody–Waite chunk by chunk, Payne–Hanek only for the elements it flags (huge ones)
        Sin => float_go_fallback!(dt, a, out, R, |x| x.vsin_small(), x.vsin()),
        Cos => float_go_fallback!(dt, a, out, R, |x| x.vcos_small(), x.vcos()),
        Tan => float_go_fallback!(dt, a, out, R, |x| x.vtan_small(), x.vtan()),
        Asin => float_go!(dt, a, out, R, |x| x.vasin()),
        Acos => float_go!(dt, a, out, R, |x| x.vacos()),
        Atan => float_go!(dt, a, out, R, |x| x.vatan()),
        Sinh => float_go!(dt, a, out, R, |x| x.vsinh()),
        Cosh => float_go!(dt, a, out, R, |x| x.vcosh()),
        Tanh => float_go!(dt, a, out, R, |x| x.vtanh()),
        Sigmoid => float_go!(dt, a, out, R, |x| x.vsigmoid()),
        // PyTorch's formulas, in the compute type; a contiguous f32/bf16 input of more than
        // one element goes through oneDNN's `eltwise_gelu_erf` there (`use_mkldnn` in
        // Activation.cpp), which multiplies `(1 + erf) * x` first and then halves: it
        // overflows to inf for `x > f32::MAX / 2`, where the native order stays finite
        Gelu(false) if matches!(dt, DType::F32 | DType::BF16) && onednn_gelu(a, out) => {
            float_go!(dt, a, out, R, |x| (1.0
                + (x * std::f64::consts::FRAC_1_SQRT_2 as R).verf())
                * x
                * 0.5)
        }
        Gelu(false) => float_go!(dt, a, out, R, |x| x
            * 0.5
            * (1.0 + (x * std::f64::consts::FRAC_1_SQRT_2 as R).verf())),
        Gelu(true) => float_go!(dt, a, out, R, |x| {
            let inner = GELU_BETA as R * (x + 0.044715 * (x * x * x));
            0.5 * x * (1.0 + inner.vtanh())
        }),
        Silu => float_go!(dt, a, out, R, |x| x / (1.0 + (-x).vexp())),
        Softplus(beta, thr) => float_go!(dt, a, out, R, |x| if x * (beta as R) > (thr as R) {
            x
        } else {
            (x * (beta as R)).vexp().vln_1p() / (beta as R)
        }),
        Elu(alpha) => float_go!(dt, a, out, R, |x| if x > 0.0 {
            x
        } else {
            (alpha as R) * x.vexpm1()
        }),
        LeakyRelu(s) => float_go!(dt, a, out, R, |x| if x > 0.0 { x } else { x * (s as R) }),
        Floor => float_go!(dt, a, out, R, |x| x.floor()),
        Ceil => float_go!(dt, a, out, R, |x| x.ceil()),
        Round => float_go!(dt, a, out, R, |x| x.round_ties_even()),
        Trunc => float_go!(dt, a, out, R, |x| x.trunc()),
        Erf => float_go!(dt, a, out, R, |x| x.verf()),
        Frac => float_go!(dt, a, out, R, |x| x - x.trunc()),
        // in the compute type, as PyTorch's kernel (10^|d| rounded to it once)
        RoundDecimals(0) => float_go!(dt, a, out, R, |x| x.round_ties_even()),
        RoundDecimals(d) if d > 0 => {
            let tp = 10f64.powi(d);
            float_go!(dt, a, out, R, |x| (x * tp as R).round_ties_even() / tp as R)
        }
        RoundDecimals(d) => {
            let tp = 10f64.powi(-d);
            float_go!(dt, a, out, R, |x| (x / tp as R).round_ties_even() * tp as R)
        }
    }
}

/// PyTorch computes complex `silu` but has no derivative for it.
fn check_complex_silu_grad(a: &Tensor, op: UOp) -> Result<()> {
    if op == UOp::Silu
        && a.dtype().is_complex()
        && a.requires_grad()
        && crate::autograd::is_grad_enabled()
    {
        bail!(
            DTypeMismatch,
            "silu",
            "silu does not support automatic differentiation for outputs with complex dtype ({})",
            a.dtype().torch_scalar_name()
        );
    }
    Ok(())
}

pub(crate) fn unary(a: &Tensor, op: UOp) -> Result<Tensor> {
    let dt = op.result_dtype(a.dtype())?;
    check_complex_silu_grad(a, op)?;
    let out = if a.dtype().is_complex() || dt == a.dtype() {
        kernel(op, a, None)?
    } else {
        let _g = crate::autograd::no_grad();
        kernel(op, &a.to_dtype(dt)?, None)?
    };
    if out.dtype().is_differentiable() {
        let save = op.save();
        record(
            &[&out],
            &[a],
            || match save {
                Save::Nothing => vec![],
                Save::Input => vec![SavedTensor::input(a)],
                Save::Output => vec![SavedTensor::output(&out, 0)],
            },
            UnaryBackward { op, inplace: false },
        )?;
    }
    Ok(out)
}

pub(crate) fn unary_(a: &Tensor, op: UOp) -> Result<Tensor> {
    let name = op.name();
    // PyTorch's order: autograd's leaf check, the op's own dtype checks (`sign` of complex),
    // the written tensor's overlap, then whether the result casts back
    let rec = check_inplace(a, &[])?;
    let dt = op.result_dtype(a.dtype())?;
    check_no_internal_overlap(&a.data_ref(), name)?;
    if dt != a.dtype() {
        return Err(crate::ops::elementwise::binary::cast_error(
            name,
            dt,
            a.dtype(),
        ));
    }
    check_complex_silu_grad(a, op)?;
    // PyTorch's in-place ELU / leaky ReLU differentiate through their result
    let save = match op {
        UOp::Elu(_) | UOp::LeakyRelu(_) => Save::Output,
        _ => op.save(),
    };
    let orig = if rec.is_some() && save == Save::Input {
        // a recorded clone: the saved pre-op value stays differentiable (double backward)
        Some(a.copy()?)
    } else {
        None
    };
    kernel(op, a, Some(a))?;
    a.0.version.bump();
    record_inplace(
        rec,
        a,
        || match (save, orig) {
            (Save::Input, Some(o)) => vec![SavedTensor::private(o)],
            (Save::Output, _) => vec![SavedTensor::output(a, 0)],
            _ => vec![],
        },
        UnaryBackward { op, inplace: true },
    )?;
    Ok(a.clone())
}

macro_rules! unary_methods {
    ($($(#[$doc:meta])* $name:ident, $name_:ident => $op:expr;)*) => {
        impl Tensor {
            $(
                $(#[$doc])*
                pub fn $name(&self) -> Result<Tensor> {
                    unary(self, $op)
                }
                /// In-place form; errors (tensor unchanged) if the result dtype can't be stored.
                ///
                /// ```
                /// # use tapegrad::{Tensor, DType};
                /// let x = Tensor::ones(&[2], DType::F64)?;
                #[doc = concat!("x.", stringify!($name_), "()?;")]
                /// assert_eq!(x.version(), 1);
                /// # Ok::<(), tapegrad::Error>(())
                /// ```
                pub fn $name_(&self) -> Result<Tensor> {
                    unary_(self, $op)
                }
            )*
        }
    };
}

unary_methods! {
    /// `-self` (NegBackward0). Integers wrap; bool is refused.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![1.0f32], &[1])?.neg()?.to_vec::<f32>()?, vec![-1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    neg, neg_ => UOp::Neg;
    /// `|self|` (keeps integer dtypes; complex gives the real magnitude).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2i64], &[1])?.abs()?.to_vec::<i64>()?, vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    abs, abs_ => UOp::Abs;
    /// Sign (-1, 0, 1; NaN gives 0), zero gradient.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2.0f32, 0.0, 3.0], &[3])?.sign()?.to_vec::<f32>()?, vec![-1.0, 0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    sign, sign_ => UOp::Sign;
    /// `max(self, 0)` (keeps integer dtypes).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2.0f32, 3.0], &[2])?.relu()?.to_vec::<f32>()?, vec![0.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    relu, relu_ => UOp::Relu;
    /// `e^self` (integers promote to f32).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0i64], &[1])?.exp()?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    exp, exp_ => UOp::Exp;
    /// `2^self`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![3.0f32], &[1])?.exp2()?.to_vec::<f32>()?, vec![8.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    exp2, exp2_ => UOp::Exp2;
    /// Natural logarithm.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![1.0f32], &[1])?.log()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    log, log_ => UOp::Log;
    /// Base-2 logarithm.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![8.0f32], &[1])?.log2()?.to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    log2, log2_ => UOp::Log2;
    /// Base-10 logarithm.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![100.0f32], &[1])?.log10()?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    log10, log10_ => UOp::Log10;
    /// `ln(1 + self)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.log1p()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    log1p, log1p_ => UOp::Log1p;
    /// `e^self - 1`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.expm1()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    expm1, expm1_ => UOp::Expm1;
    /// Square root.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![4.0f32], &[1])?.sqrt()?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    sqrt, sqrt_ => UOp::Sqrt;
    /// `1 / sqrt(self)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![4.0f32], &[1])?.rsqrt()?.to_vec::<f32>()?, vec![0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    rsqrt, rsqrt_ => UOp::Rsqrt;
    /// `1 / self`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![4.0f32], &[1])?.reciprocal()?.to_vec::<f32>()?, vec![0.25]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    reciprocal, reciprocal_ => UOp::Reciprocal;
    /// Sine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.sin()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    sin, sin_ => UOp::Sin;
    /// Cosine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.cos()?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    cos, cos_ => UOp::Cos;
    /// Tangent.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.tan()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    tan, tan_ => UOp::Tan;
    /// Arcsine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.asin()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    asin, asin_ => UOp::Asin;
    /// Arccosine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![1.0f32], &[1])?.acos()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    acos, acos_ => UOp::Acos;
    /// Arctangent.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.atan()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    atan, atan_ => UOp::Atan;
    /// Hyperbolic sine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.sinh()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    sinh, sinh_ => UOp::Sinh;
    /// Hyperbolic cosine.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.cosh()?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    cosh, cosh_ => UOp::Cosh;
    /// Hyperbolic tangent.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.tanh()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    tanh, tanh_ => UOp::Tanh;
    /// Logistic sigmoid.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.sigmoid()?.to_vec::<f32>()?, vec![0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    sigmoid, sigmoid_ => UOp::Sigmoid;
    /// `self * sigmoid(self)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f32], &[1])?.silu()?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    silu, silu_ => UOp::Silu;
    /// Round down (zero gradient; integers unchanged).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-1.5f32], &[1])?.floor()?.to_vec::<f32>()?, vec![-2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    floor, floor_ => UOp::Floor;
    /// Round up.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-1.5f32], &[1])?.ceil()?.to_vec::<f32>()?, vec![-1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    ceil, ceil_ => UOp::Ceil;
    /// Round half to even.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![2.5f32, 3.5], &[2])?.round()?.to_vec::<f32>()?, vec![2.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    round, round_ => UOp::Round;
    /// Round toward zero.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-1.5f32], &[1])?.trunc()?.to_vec::<f32>()?, vec![-1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    trunc, trunc_ => UOp::Trunc;
    /// The error function `2/sqrt(pi) * integral_0^x e^{-t^2} dt` (integers promote to f32).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![0.0f64], &[1])?.erf()?.to_vec::<f64>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    erf, erf_ => UOp::Erf;
    /// The fractional part `self - trunc(self)` (floating dtypes only; gradient `g`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-1.25f32], &[1])?.frac()?.to_vec::<f32>()?, vec![-0.25]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    frac, frac_ => UOp::Frac;
}

impl Tensor {
    /// Rounds half to even at `decimals` decimal digits (negative: to tens, hundreds, ...),
    /// PyTorch's `round(decimals=)`: floating dtypes only, zero gradient.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.25f64, 1234.0], &[2])?;
    /// assert_eq!(x.round_decimals(1)?.to_vec::<f64>()?, vec![1.2, 1234.0]);
    /// assert_eq!(x.round_decimals(-2)?.to_vec::<f64>()?, vec![0.0, 1200.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn round_decimals(&self, decimals: i32) -> Result<Tensor> {
        unary(self, UOp::RoundDecimals(decimals))
    }
    /// In-place [`Tensor::round_decimals`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.125f32], &[1])?;
    /// x.round_decimals_(2)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.12]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn round_decimals_(&self, decimals: i32) -> Result<Tensor> {
        unary_(self, UOp::RoundDecimals(decimals))
    }
}
