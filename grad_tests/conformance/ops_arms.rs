//! Dispatch arms for the kernel ops (elementwise, comparison, reductions, matmul, NN functions, data movement): the `ops` fixtures.
//! Returns `CallErr::Missing(op)` for ops it does not own, so the next family is tried.

use super::*;
use tapegrad::{
    BceWithLogitsOptions, CrossEntropyOptions, NllLossOptions, NormOrd, Reduction, RoundingMode,
};

type UnaryFn = fn(&Tensor) -> tapegrad::Result<Tensor>;

/// The argument-free elementwise ops, out-of-place and in-place.
fn unary_fn(op: &str) -> Option<UnaryFn> {
    Some(match op {
        "neg_" => Tensor::neg_,
        "abs" => Tensor::abs,
        "abs_" => Tensor::abs_,
        "sign" => Tensor::sign,
        "sign_" => Tensor::sign_,
        "relu" => Tensor::relu,
        "relu_" => Tensor::relu_,
        "exp" => Tensor::exp,
        "exp_" => Tensor::exp_,
        "exp2" => Tensor::exp2,
        "exp2_" => Tensor::exp2_,
        "log" => Tensor::log,
        "log_" => Tensor::log_,
        "log2" => Tensor::log2,
        "log2_" => Tensor::log2_,
        "log10" => Tensor::log10,
        "log10_" => Tensor::log10_,
        "log1p" => Tensor::log1p,
        "log1p_" => Tensor::log1p_,
        "expm1" => Tensor::expm1,
        "expm1_" => Tensor::expm1_,
        "sqrt" => Tensor::sqrt,
        "sqrt_" => Tensor::sqrt_,
        "rsqrt" => Tensor::rsqrt,
        "rsqrt_" => Tensor::rsqrt_,
        "reciprocal" => Tensor::reciprocal,
        "reciprocal_" => Tensor::reciprocal_,
        "sin" => Tensor::sin,
        "sin_" => Tensor::sin_,
        "cos" => Tensor::cos,
        "cos_" => Tensor::cos_,
        "tan" => Tensor::tan,
        "tan_" => Tensor::tan_,
        "asin" => Tensor::asin,
        "asin_" => Tensor::asin_,
        "acos" => Tensor::acos,
        "acos_" => Tensor::acos_,
        "atan" => Tensor::atan,
        "atan_" => Tensor::atan_,
        "sinh" => Tensor::sinh,
        "sinh_" => Tensor::sinh_,
        "cosh" => Tensor::cosh,
        "cosh_" => Tensor::cosh_,
        "tanh" => Tensor::tanh,
        "tanh_" => Tensor::tanh_,
        "sigmoid" => Tensor::sigmoid,
        "sigmoid_" => Tensor::sigmoid_,
        "F.silu" | "silu" => Tensor::silu,
        "floor" => Tensor::floor,
        "floor_" => Tensor::floor_,
        "ceil" => Tensor::ceil,
        "ceil_" => Tensor::ceil_,
        "round" => Tensor::round,
        "round_" => Tensor::round_,
        "trunc" => Tensor::trunc,
        "trunc_" => Tensor::trunc_,
        "square" => Tensor::square,
        "square_" => Tensor::square_,
        "erf" => Tensor::erf,
        "erf_" => Tensor::erf_,
        "frac" => Tensor::frac,
        "frac_" => Tensor::frac_,
        "logical_not" => Tensor::logical_not,
        "bitwise_not" => Tensor::bitwise_not,
        "bitwise_not_" => Tensor::bitwise_not_,
        "logical_not_" => Tensor::logical_not_,
        "detach_" => Tensor::detach_,
        "isnan" => Tensor::isnan,
        "isinf" => Tensor::isinf,
        "isfinite" => Tensor::isfinite,
        "nonzero" => Tensor::nonzero,
        _ => return None,
    })
}

type CmpFn = fn(&Tensor, Operand) -> tapegrad::Result<Tensor>;

/// Binary ops whose second argument is a tensor or a scalar.
fn operand_fn(op: &str) -> Option<CmpFn> {
    Some(match op {
        "eq" => |a, b| a.eq(b),
        "ne" => |a, b| a.ne(b),
        "lt" => |a, b| a.lt(b),
        "le" => |a, b| a.le(b),
        "gt" => |a, b| a.gt(b),
        "ge" => |a, b| a.ge(b),
        "true_divide" => |a, b| a.div(b),
        "fmod" => |a, b| a.fmod(b),
        "fmod_" => |a, b| a.fmod_(b),
        "remainder_" => |a, b| a.remainder_(b),
        "pow_" => |a, b| a.pow_(b),
        "bitwise_and" => |a, b| a.bitwise_and(b),
        "bitwise_or" => |a, b| a.bitwise_or(b),
        "bitwise_xor" => |a, b| a.bitwise_xor(b),
        "bitwise_and_" => |a, b| a.bitwise_and_(b),
        "bitwise_or_" => |a, b| a.bitwise_or_(b),
        "bitwise_xor_" => |a, b| a.bitwise_xor_(b),
        "eq_" => |a, b| a.eq_(b),
        "ne_" => |a, b| a.ne_(b),
        "lt_" => |a, b| a.lt_(b),
        "le_" => |a, b| a.le_(b),
        "gt_" => |a, b| a.gt_(b),
        "ge_" => |a, b| a.ge_(b),
        "floor_divide_" => |a, b| a.floor_divide_(b),
        _ => return None,
    })
}

type PairFn = fn(&Tensor, &Tensor) -> tapegrad::Result<Tensor>;

/// Binary ops of two tensors.
fn pair_fn(op: &str) -> Option<PairFn> {
    Some(match op {
        "logical_and" => Tensor::logical_and,
        "logical_or" => Tensor::logical_or,
        "logical_xor" => Tensor::logical_xor,
        "maximum" => Tensor::maximum,
        "minimum" => Tensor::minimum,
        "fmax" => Tensor::fmax,
        "fmin" => Tensor::fmin,
        "atan2" => Tensor::atan2,
        "hypot" => Tensor::hypot,
        "hypot_" => Tensor::hypot_,
        "logical_and_" => Tensor::logical_and_,
        "logical_or_" => Tensor::logical_or_,
        "logical_xor_" => Tensor::logical_xor_,
        "matmul" => Tensor::matmul,
        "mm" => Tensor::mm,
        "bmm" => Tensor::bmm,
        "dot" => Tensor::dot,
        "outer" => Tensor::outer,
        "masked_select" => Tensor::masked_select,
        _ => return None,
    })
}

/// A dims argument: absent/None = all dims (empty list), an int or a list.
fn dims_of(v: Option<&Value>) -> CallResult<Vec<i64>> {
    match v {
        None | Some(Value::Null) => Ok(vec![]),
        Some(v) => to_i64s(v),
    }
}

fn reduction(c: &Call, i: usize) -> CallResult<Reduction> {
    match c.opt(i, "reduction").and_then(|v| v.as_str()) {
        None => Ok(Reduction::Mean),
        Some("mean") => Ok(Reduction::Mean),
        Some("sum") => Ok(Reduction::Sum),
        Some("none") => Ok(Reduction::None),
        Some(s) => bad(format!("unknown reduction {s}")),
    }
}

pub(super) fn opt_tensor(c: &Call, i: usize, name: &'static str) -> CallResult<Option<Tensor>> {
    match c.opt(i, name) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(c.env.tensor_of(v)?)),
    }
}

fn opt_scalar(v: Option<&Value>) -> CallResult<Option<Scalar>> {
    match v {
        None | Some(Value::Null) => Ok(None),
        Some(v) if tensor_name(v).is_some() => Err(CallErr::NoApi(
            "(tensor bound): tapegrad's clamp takes Scalar bounds".into(),
        )),
        Some(v) => Ok(Some(to_scalar(v)?)),
    }
}

fn pair(r: tapegrad::Result<(Tensor, Tensor)>) -> CallResult<Val> {
    let (a, b) = r?;
    Ok(Val::Many(vec![a, b]))
}

fn tensor_list(c: &Call, i: usize) -> CallResult<Vec<Tensor>> {
    match c.arg(i)? {
        Value::Array(a) => a.iter().map(|v| c.env.tensor_of(v)).collect(),
        v => bad(format!("expected a tensor list, got {v}")),
    }
}

/// `max`/`min`: all-reduce, `(values, indices)` over a dim, or the binary form with a tensor.
fn max_min(c: &Call, is_max: bool) -> CallResult<Val> {
    let x = c.t(0)?;
    match c.opt(1, "dim") {
        None => val(if is_max { x.max() } else { x.min() }),
        Some(v) if tensor_name(v).is_some() => {
            let o = c.env.tensor_of(v)?;
            val(if is_max { x.maximum(&o) } else { x.minimum(&o) })
        }
        Some(v) => {
            let (d, k) = (to_i64(v)?, c.bool_or(2, "keepdim", false)?);
            pair(if is_max {
                x.max_dim(d, k)
            } else {
                x.min_dim(d, k)
            })
        }
    }
}

fn norm(c: &Call) -> CallResult<Val> {
    let ord = match c.opt(1, "p") {
        None | Some(Value::Null) => NormOrd::L2,
        Some(Value::String(s)) if s == "fro" => NormOrd::L2,
        Some(v) => {
            let p = to_f64(v)?;
            if p == 1.0 {
                NormOrd::L1
            } else if p == 2.0 {
                NormOrd::L2
            } else if p == f64::INFINITY {
                NormOrd::Inf
            } else if p == f64::NEG_INFINITY {
                NormOrd::NegInf
            } else {
                NormOrd::P(p)
            }
        }
    };
    let dims = dims_of(c.opt(2, "dim"))?;
    val(c.t(0)?.norm(ord, &dims, c.bool_or(3, "keepdim", false)?))
}

fn div(c: &Call) -> CallResult<Val> {
    let mode = match c.opt(2, "rounding_mode") {
        None | Some(Value::Null) => None,
        Some(Value::String(s)) if s == "trunc" => Some(RoundingMode::Trunc),
        Some(Value::String(s)) if s == "floor" => Some(RoundingMode::Floor),
        Some(v) => return bad(format!("unknown rounding_mode {v}")),
    };
    let x = c.t(0)?;
    let o = c.operand(1)?;
    val(match mode {
        None => x.div(o),
        Some(m) => x.div_rounding(o, m),
    })
}

/// `softmax`/`log_softmax` with an optional `dtype=` (the input is cast first).
fn softmax(c: &Call, log: bool) -> CallResult<Val> {
    let mut x = c.t(0)?;
    if let Some(d) = c.kw("dtype").filter(|v| !v.is_null()) {
        x = x.to_dtype(to_dtype(d)?)?;
    }
    let d = c.i64_or(1, "dim", -1)?;
    val(if log { x.log_softmax(d) } else { x.softmax(d) })
}

fn cross_entropy(c: &Call) -> CallResult<Val> {
    let weight = opt_tensor(c, 2, "weight")?;
    let opts = CrossEntropyOptions {
        weight: weight.as_ref(),
        ignore_index: c.i64_or(4, "ignore_index", -100)?,
        label_smoothing: c.opt(7, "label_smoothing").map_or(Ok(0.0), to_f64)?,
        reduction: reduction(c, 6)?,
    };
    val(c.t(0)?.cross_entropy(&c.t(1)?, opts))
}

fn nll_loss(c: &Call) -> CallResult<Val> {
    let weight = opt_tensor(c, 2, "weight")?;
    let opts = NllLossOptions {
        weight: weight.as_ref(),
        ignore_index: c.i64_or(4, "ignore_index", -100)?,
        reduction: reduction(c, 6)?,
    };
    val(c.t(0)?.nll_loss(&c.t(1)?, opts))
}

fn bce_with_logits(c: &Call) -> CallResult<Val> {
    let weight = opt_tensor(c, 2, "weight")?;
    let pos_weight = opt_tensor(c, 6, "pos_weight")?;
    let opts = BceWithLogitsOptions {
        weight: weight.as_ref(),
        pos_weight: pos_weight.as_ref(),
        reduction: reduction(c, 5)?,
    };
    val(c.t(0)?.binary_cross_entropy_with_logits(&c.t(1)?, opts))
}

fn scatter(c: &Call, op: &str) -> CallResult<Val> {
    let (x, d, idx) = (c.t(0)?, c.i64(1)?, c.t(2)?);
    if c.kw("reduce").is_some() {
        return Err(CallErr::Missing("(reduce=)".into()));
    }
    let src = c.opt(3, "src").or_else(|| c.kw("value"));
    let src = src.map_or_else(|| bad("scatter: missing src"), Ok)?;
    let inplace = op.ends_with('_');
    match tensor_name(src) {
        Some(_) => {
            let s = c.env.tensor_of(src)?;
            val(match (op.starts_with("scatter_add"), inplace) {
                (true, false) => x.scatter_add(d, &idx, &s),
                (true, true) => x.scatter_add_(d, &idx, &s),
                (false, false) => x.scatter(d, &idx, &s),
                (false, true) => x.scatter_(d, &idx, &s),
            })
        }
        None if op.starts_with("scatter_add") => bad("scatter_add needs a src tensor"),
        None => {
            let v = to_f64(src)?;
            val(if inplace {
                x.scatter_value_(d, &idx, v)
            } else {
                x.scatter_value(d, &idx, v)
            })
        }
    }
}

fn scatter_reduce(c: &Call) -> CallResult<Val> {
    let (x, d, idx, src) = (c.t(0)?, c.i64(1)?, c.t(2)?, c.t(3)?);
    let name = c.opt(4, "reduce").and_then(|v| v.as_str()).unwrap_or("?");
    let r = tapegrad::ScatterReduce::from_name(name)
        .map_or_else(|| bad(format!("unknown reduce {name}")), Ok)?;
    let include_self = if c.bool_or(5, "include_self", true)? {
        tapegrad::IncludeSelf::Yes
    } else {
        tapegrad::IncludeSelf::No
    };
    val(if c.op.ends_with('_') {
        x.scatter_reduce_(d, &idx, &src, r, include_self)
    } else {
        x.scatter_reduce(d, &idx, &src, r, include_self)
    })
}

/// PyTorch's `stable=` keyword as a [`tapegrad::Stability`].
fn stability(stable: bool) -> tapegrad::Stability {
    if stable {
        tapegrad::Stability::Stable
    } else {
        tapegrad::Stability::Any
    }
}

fn topk(c: &Call) -> CallResult<Val> {
    let x = c.t(0)?;
    let k = to_usize(c.arg(1)?)?;
    let dim = c.i64_or(2, "dim", -1)?;
    let largest = c.bool_or(3, "largest", true)?;
    let sorted = c.bool_or(4, "sorted", true)?;
    pair(x.topk(k, dim, largest, sorted))
}

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    if c.op.starts_with("F.") && c.kw("inplace") == Some(&Value::Bool(true)) {
        return match c.op {
            "F.silu" => val(c.t(0)?.silu_()),
            "F.relu" => val(c.t(0)?.relu_()),
            "F.elu" => val(c.t(0)?.elu_(c.opt(1, "alpha").map_or(Ok(1.0), to_f64)?)),
            "F.leaky_relu" => val(c
                .t(0)?
                .leaky_relu_(c.opt(1, "negative_slope").map_or(Ok(0.01), to_f64)?)),
            _ => Err(CallErr::NoApi("(inplace=True): no in-place twin".into())),
        };
    }
    if matches!(c.op, "round" | "round_") && c.kwargs.contains_key("decimals") {
        let d = c.i64_or(1, "decimals", 0)?;
        let d = i32::try_from(d).map_err(|_| CallErr::NoApi(format!("(decimals={d})")))?;
        let x = c.t(0)?;
        return val(if c.op == "round" {
            x.round_decimals(d)
        } else {
            x.round_decimals_(d)
        });
    }
    if let Some(f) = unary_fn(c.op) {
        return val(f(&c.t(0)?));
    }
    if let Some(f) = operand_fn(c.op) {
        return val(f(&c.t(0)?, c.operand(1)?));
    }
    if let Some(f) = pair_fn(c.op) {
        return val(f(&c.t(0)?, &c.t(1)?));
    }
    match c.op {
        "div" => div(c),
        "floor_divide" => val(c.t(0)?.floor_divide(c.operand(1)?)),
        "remainder" => match tensor_name(c.arg(0)?) {
            Some(_) => val(c.t(0)?.remainder(c.operand(1)?)),
            None => val(Tensor::remainder_scalar_base(
                to_scalar(c.arg(0)?)?,
                &c.t(1)?,
            )),
        },
        "pow" => match tensor_name(c.arg(0)?) {
            Some(_) => val(c.t(0)?.pow(c.operand(1)?)),
            None => val(Tensor::pow_scalar_base(to_scalar(c.arg(0)?)?, &c.t(1)?)),
        },
        "clamp" | "clamp_"
            if [c.opt(1, "min"), c.opt(2, "max")]
                .iter()
                .any(|v| v.is_some_and(|v| tensor_name(v).is_some())) =>
        {
            // PyTorch's `clamp(Tensor? min, Tensor? max)` overload
            let (lo, hi) = (opt_tensor(c, 1, "min")?, opt_tensor(c, 2, "max")?);
            let x = c.t(0)?;
            val(if c.op == "clamp" {
                x.clamp_tensor(lo.as_ref(), hi.as_ref())
            } else {
                x.clamp_tensor_(lo.as_ref(), hi.as_ref())
            })
        }
        "clamp" | "clamp_" => {
            let (lo, hi) = (opt_scalar(c.opt(1, "min"))?, opt_scalar(c.opt(2, "max"))?);
            val(if c.op == "clamp" {
                c.t(0)?.clamp(lo, hi)
            } else {
                c.t(0)?.clamp_(lo, hi)
            })
        }
        "where" => val(Tensor::where_(&c.t(0)?, c.operand(1)?, c.operand(2)?)),
        "masked_fill" => val(c.t(0)?.masked_fill(&c.t(1)?, c.operand(2)?)),
        "masked_fill_" => val(c.t(0)?.masked_fill_(&c.t(1)?, c.operand(2)?)),
        "lerp" | "lerp_" => {
            let (x, end, w) = (c.t(0)?, c.t(1)?, c.operand(2)?);
            val(if c.op == "lerp" {
                x.lerp(&end, w)
            } else {
                x.lerp_(&end, w)
            })
        }
        "addcmul" | "addcmul_" => {
            let v = c.opt(3, "value").map_or(Ok(Scalar::Int(1)), to_scalar)?;
            let (x, t1, t2) = (c.t(0)?, c.t(1)?, c.t(2)?);
            val(if c.op == "addcmul" {
                x.addcmul(&t1, &t2, v)
            } else {
                x.addcmul_(&t1, &t2, v)
            })
        }
        "addmm" => {
            let beta = c.opt(3, "beta").map_or(Ok(1.0), to_f64)?;
            let alpha = c.opt(4, "alpha").map_or(Ok(1.0), to_f64)?;
            val(c.t(0)?.addmm(&c.t(1)?, &c.t(2)?, beta, alpha))
        }
        "F.linear" => val(Tensor::linear(
            &c.t(0)?,
            &c.t(1)?,
            opt_tensor(c, 2, "bias")?.as_ref(),
        )),
        // ------------------------------------------------------------ reductions
        "mean" => {
            let dims = dims_of(c.opt(1, "dim"))?;
            let dt = c.kw("dtype").map(to_dtype).transpose()?;
            val(c.t(0)?.mean(&dims, c.bool_or(2, "keepdim", false)?, dt))
        }
        "prod" => {
            let x = c.t(0)?;
            let dims = dims_of(c.opt(1, "dim"))?;
            // read before the call, so that a failing prod does not leave `dtype` unconsumed
            let dt = c.kw("dtype").map(to_dtype).transpose()?;
            let keepdim = c.bool_or(2, "keepdim", false)?;
            match dt {
                Some(d) => val(x.prod_dtype(&dims, keepdim, d)),
                None => val(x.prod(&dims, keepdim)),
            }
        }
        "var" | "std" => {
            let dims = dims_of(c.opt(1, "dim"))?;
            let corr = match c.kw("correction") {
                Some(v) if !v.is_null() => to_f64(v)?,
                _ => match c.kw("unbiased") {
                    Some(v) => f64::from(u8::from(to_bool(v)?)),
                    None => 1.0,
                },
            };
            let k = c.bool_or(2, "keepdim", false)?;
            val(if c.op == "var" {
                c.t(0)?.var(&dims, corr, k)
            } else {
                c.t(0)?.std(&dims, corr, k)
            })
        }
        "amax" | "amin" => {
            let dims = dims_of(c.opt(1, "dim"))?;
            let k = c.bool_or(2, "keepdim", false)?;
            val(if c.op == "amax" {
                c.t(0)?.amax(&dims, k)
            } else {
                c.t(0)?.amin(&dims, k)
            })
        }
        "max" => max_min(c, true),
        "min" => max_min(c, false),
        "argmax" | "argmin" => {
            let d = c
                .opt(1, "dim")
                .filter(|v| !v.is_null())
                .map(to_i64)
                .transpose()?;
            let k = c.bool_or(2, "keepdim", false)?;
            val(if c.op == "argmax" {
                c.t(0)?.argmax(d, k)
            } else {
                c.t(0)?.argmin(d, k)
            })
        }
        "all" | "any" => {
            let dims = dims_of(c.opt(1, "dim"))?;
            let k = c.bool_or(2, "keepdim", false)?;
            val(if c.op == "all" {
                c.t(0)?.all(&dims, k)
            } else {
                c.t(0)?.any(&dims, k)
            })
        }
        "logsumexp" => {
            let dims = dims_of(c.opt(1, "dim"))?;
            val(c.t(0)?.logsumexp(&dims, c.bool_or(2, "keepdim", false)?))
        }
        "norm" => norm(c),
        "cumsum" | "cumprod" => {
            let d = to_i64(c.opt(1, "dim").unwrap_or(&Value::Null))?;
            let dt = c
                .kw("dtype")
                .filter(|v| !v.is_null())
                .map(to_dtype)
                .transpose()?;
            val(if c.op == "cumsum" {
                c.t(0)?.cumsum(d, dt)
            } else {
                c.t(0)?.cumprod(d, dt)
            })
        }
        // ------------------------------------------------------------ NN functions
        "softmax" => softmax(c, false),
        "log_softmax" => softmax(c, true),
        "F.cross_entropy" => cross_entropy(c),
        "F.nll_loss" => nll_loss(c),
        "F.mse_loss" => val(c.t(0)?.mse_loss(&c.t(1)?, reduction(c, 4)?)),
        "F.l1_loss" => val(c.t(0)?.l1_loss(&c.t(1)?, reduction(c, 4)?)),
        "F.binary_cross_entropy" => {
            let w = opt_tensor(c, 2, "weight")?;
            val(c
                .t(0)?
                .binary_cross_entropy(&c.t(1)?, w.as_ref(), reduction(c, 5)?))
        }
        "F.binary_cross_entropy_with_logits" => bce_with_logits(c),
        "F.one_hot" => val(c.t(0)?.one_hot(c.i64_or(1, "num_classes", -1)?)),
        "F.gelu" => {
            let approx = match c.opt(1, "approximate").and_then(|v| v.as_str()) {
                None | Some("none") => tapegrad::Approximate::None,
                Some("tanh") => tapegrad::Approximate::Tanh,
                Some(s) => return bad(format!("unknown approximate {s}")),
            };
            val(c.t(0)?.gelu(approx))
        }
        "F.softplus" => {
            let beta = c.opt(1, "beta").map_or(Ok(1.0), to_f64)?;
            let th = c.opt(2, "threshold").map_or(Ok(20.0), to_f64)?;
            val(c.t(0)?.softplus(beta, th))
        }
        "F.elu" => val(c.t(0)?.elu(c.opt(1, "alpha").map_or(Ok(1.0), to_f64)?)),
        "F.leaky_relu" => val(c
            .t(0)?
            .leaky_relu(c.opt(1, "negative_slope").map_or(Ok(0.01), to_f64)?)),
        // ------------------------------------------------------------ data movement
        "cat" | "stack" => {
            let ts = tensor_list(c, 0)?;
            let refs: Vec<&Tensor> = ts.iter().collect();
            let d = c.i64_or(1, "dim", 0)?;
            val(if c.op == "cat" {
                Tensor::cat(&refs, d)
            } else {
                Tensor::stack(&refs, d)
            })
        }
        "flip" => val(c
            .t(0)?
            .flip(&to_i64s(c.opt(1, "dims").unwrap_or(&Value::Null))?)),
        "roll" => {
            let shifts = to_i64s(c.opt(1, "shifts").unwrap_or(&Value::Null))?;
            val(c.t(0)?.roll(&shifts, &dims_of(c.opt(2, "dims"))?))
        }
        "repeat" => val(c.t(0)?.repeat(&to_usizes(c.arg(1)?)?)),
        "tril" => val(c.t(0)?.tril(c.i64_or(1, "diagonal", 0)?)),
        "triu" => val(c.t(0)?.triu(c.i64_or(1, "diagonal", 0)?)),
        "gather" => val(c.t(0)?.gather(c.i64(1)?, &c.t(2)?)),
        "index_select" => val(c.t(0)?.index_select(c.i64(1)?, &c.t(2)?)),
        "scatter" | "scatter_" | "scatter_add" | "scatter_add_" => scatter(c, c.op),
        "scatter_reduce" | "scatter_reduce_" => scatter_reduce(c),
        "sort" => {
            let d = c.i64_or(1, "dim", -1)?;
            let desc = c.bool_or(2, "descending", false)?;
            let stable = stability(c.kw("stable").map_or(Ok(false), to_bool)?);
            pair(c.t(0)?.sort(d, desc, stable))
        }
        "argsort" => {
            let d = c.i64_or(1, "dim", -1)?;
            let desc = c.bool_or(2, "descending", false)?;
            let stable = stability(c.kw("stable").map_or(Ok(false), to_bool)?);
            val(c.t(0)?.argsort(d, desc, stable))
        }
        "topk" => topk(c),
        op => Err(CallErr::Missing(op.to_string())),
    }
}
