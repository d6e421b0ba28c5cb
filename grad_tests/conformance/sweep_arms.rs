//! Dispatch arms the OpInfo-style sweep (`grad_tests/fixtures/sweep/`) needs beyond the
//! hand-written fixtures: PyTorch names and keywords mapped to tapegrad's methods, second order
//! (`autograd.grad`), and the argument forms tapegrad's API cannot express (answered with
//! `CallErr::NoApi`, a library gap, never a silent pass).
//! Returns `CallErr::Missing(op)` for ops it does not own.

use super::*;

/// A scalar-or-tensor argument where tapegrad only takes a scalar.
fn scalar_only(c: &Call, v: &Value, what: &str) -> CallResult<Scalar> {
    if tensor_name(v).is_some() {
        return Err(CallErr::NoApi(format!(
            "{}({what} as a tensor): tapegrad takes a Scalar",
            c.op
        )));
    }
    to_scalar(v)
}

/// `F.*(..., inplace=True)`: tapegrad has no in-place twin of these activations.
fn no_inplace(c: &Call) -> CallResult<()> {
    match c.kw("inplace") {
        Some(Value::Bool(true)) => Err(CallErr::NoApi(format!(
            "{}(inplace=True): no in-place twin",
            c.op
        ))),
        _ => Ok(()),
    }
}

/// The dtype of `torch.full(size, value)` without `dtype=`: bool, int64 or float32.
fn full_dtype(v: &Value) -> DType {
    match v {
        Value::Bool(_) => DType::Bool,
        Value::Number(n) if n.is_i64() => DType::I64,
        _ => DType::F32,
    }
}

/// The `dtype=` of `*_like(t, dtype=)`, if given.
fn like_dtype(c: &Call) -> CallResult<Option<DType>> {
    match c.kw("dtype") {
        None | Some(Value::Null) => Ok(None),
        Some(v) => Ok(Some(to_dtype(v)?)),
    }
}

fn autograd_grad(c: &Call) -> CallResult<Val> {
    let list = |v: &Value| -> CallResult<Vec<Tensor>> {
        match v {
            Value::Array(a) => a.iter().map(|x| c.env.tensor_of(x)).collect(),
            v => Ok(vec![c.env.tensor_of(v)?]),
        }
    };
    let outs = list(c.arg(0)?)?;
    let ins = list(c.arg(1)?)?;
    let gos: Vec<Option<Tensor>> = match c.kw("grad_outputs") {
        None | Some(Value::Null) => vec![None; outs.len()],
        Some(Value::Array(a)) => a
            .iter()
            .map(|v| match v {
                Value::Null => Ok(None),
                v => c.env.tensor_of(v).map(Some),
            })
            .collect::<CallResult<_>>()?,
        Some(v) => vec![Some(c.env.tensor_of(v)?)],
    };
    // The sweep's `autograd.grad` is always `create_graph=True` (so `retain_graph` defaults to
    // true, as in PyTorch), `allow_unused=False`.
    let gs = tapegrad::autograd::grad(
        &outs,
        &ins,
        &gos,
        tapegrad::autograd::GradOptions::default()
            .retain_graph(true)
            .create_graph(true),
    )?;
    let mut ts = vec![];
    for (i, g) in gs.into_iter().enumerate() {
        match g {
            Some(g) => ts.push(g),
            None => return bad(format!("autograd.grad: input {i} got no gradient")),
        }
    }
    Ok(Val::Many(ts))
}

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "autograd.grad" => autograd_grad(c),
        "dim" => Ok(Val::Plain(Value::from(c.t(0)?.dim()))),
        "item" => {
            let x = c.t(0)?;
            let dt = x.dtype();
            Ok(Val::Plain(if dt == DType::Bool {
                Value::Bool(x.item::<bool>()?)
            } else if dt.is_float() {
                Value::from(x.detach().to_dtype(DType::F64)?.item::<f64>()?)
            } else if dt.is_complex() {
                let z = x.item::<C128>()?;
                serde_json::json!({"re": z.re, "im": z.im})
            } else {
                Value::from(x.item::<i64>()?)
            }))
        }
        "clamp_min" | "clamp_max" | "clamp_min_" | "clamp_max_" => {
            let x = c.t(0)?;
            let s = c.operand(1)?;
            val(match c.op {
                "clamp_min" => x.clamp_min(s),
                "clamp_max" => x.clamp_max(s),
                "clamp_min_" => x.clamp_min_(s),
                _ => x.clamp_max_(s),
            })
        }
        "to" => {
            let x = c.t(0)?;
            let dt = match c.opt(1, "dtype") {
                Some(v) => to_dtype(v)?,
                None => return bad("to: missing dtype"),
            };
            val(x.to_dtype(dt))
        }
        "nan_to_num" | "nan_to_num_" => {
            let nan = c
                .opt(1, "nan")
                .filter(|v| !v.is_null())
                .map_or(Ok(0.0), to_f64)?;
            let f = |v: Option<&Value>| v.filter(|v| !v.is_null()).map(to_f64).transpose();
            let (pinf, ninf) = (f(c.opt(2, "posinf"))?, f(c.opt(3, "neginf"))?);
            let x = c.t(0)?;
            val(if c.op == "nan_to_num" {
                x.nan_to_num(nan, pinf, ninf)
            } else {
                x.nan_to_num_(nan, pinf, ninf)
            })
        }
        "broadcast_to" => {
            let x = c.t(0)?;
            // PyTorch's -1 keeps the size of the (right-aligned) input dim; tapegrad's
            // broadcast_to takes the resolved `usize` sizes.
            let (want, have) = (to_i64s(c.arg(1)?)?, x.shape());
            let lead = want.len().checked_sub(have.len());
            if want
                .iter()
                .enumerate()
                .any(|(i, &w)| w < 0 && lead.is_none_or(|l| i < l))
            {
                // (PyTorch's broadcast_to is expand, which refuses this)
                return val(x.expand(&want));
            }
            let mut sizes = vec![];
            for (i, &w) in want.iter().enumerate() {
                sizes.push(match (w, lead) {
                    (-1, Some(l)) if i >= l => have[i - l],
                    (w, _) => usize::try_from(w)
                        .map_err(|_| CallErr::NoApi(format!("(size {w} in a new leading dim)")))?,
                });
            }
            val(x.broadcast_to(&sizes))
        }
        // `true_divide` is `div` (ops_arms maps it); its in-place twin is `div_`.
        "true_divide_" => val(c.t(0)?.div_(c.operand(1)?)),
        "atan2_" => val(c.t(0)?.atan2_(&c.t(1)?)),
        "maximum_" => val(c.t(0)?.maximum_(&c.t(1)?)),
        "zeros_like" | "ones_like" | "empty_like" => {
            let dt = like_dtype(c)?;
            let x = c.t(0)?;
            val(match (c.op, dt) {
                ("zeros_like", None) => x.zeros_like(),
                ("zeros_like", Some(d)) => x.zeros_like_dtype(d),
                ("ones_like", None) => x.ones_like(),
                ("ones_like", Some(d)) => x.ones_like_dtype(d),
                (_, None) => x.empty_like(),
                (_, Some(d)) => x.zeros_like_dtype(d),
            })
        }
        "full_like" => {
            let dt = like_dtype(c)?;
            let x = c.t(0)?;
            let v = scalar_only(c, c.arg(1)?, "fill value")?;
            val(match dt {
                None => x.full_like(v),
                Some(d) => x.full_like_dtype(v, d),
            })
        }
        "nansum" => {
            let keepdim = c.bool_or(2, "keepdim", false)?;
            let dims = match c.opt(1, "dim") {
                None | Some(Value::Null) => vec![],
                Some(v) => to_i64s(v)?,
            };
            let dt = c.kw("dtype").filter(|v| !v.is_null()).map(to_dtype);
            val(c.t(0)?.nansum(&dims, keepdim, dt.transpose()?))
        }
        "count_nonzero" => {
            let dims = match c.opt(1, "dim") {
                None | Some(Value::Null) => vec![],
                Some(v) => to_i64s(v)?,
            };
            val(c.t(0)?.count_nonzero(&dims))
        }
        "type_as" => val(c.t(0)?.type_as(&c.t(1)?)),
        "addcdiv" | "addcdiv_" => {
            let (x, t1, t2) = (c.t(0)?, c.t(1)?, c.t(2)?);
            let value = c.opt(3, "value").map_or(Ok(Scalar::Int(1)), to_scalar)?;
            val(if c.op == "addcdiv" {
                x.addcdiv(&t1, &t2, value)
            } else {
                x.addcdiv_(&t1, &t2, value)
            })
        }
        "isclose" | "allclose" => {
            let (a, b) = (c.t(0)?, c.t(1)?);
            let rtol = c.opt(2, "rtol").map_or(Ok(1e-5), to_f64)?;
            let atol = c.opt(3, "atol").map_or(Ok(1e-8), to_f64)?;
            let equal_nan = c.bool_or(4, "equal_nan", false)?;
            if c.op == "isclose" {
                val(a.isclose(&b, rtol, atol, equal_nan))
            } else {
                Ok(Val::Plain(Value::Bool(
                    a.allclose(&b, rtol, atol, equal_nan)?,
                )))
            }
        }
        "equal" => Ok(Val::Plain(Value::Bool(c.t(0)?.equal(&c.t(1)?)?))),
        "sum_to_size" => val(c.t(0)?.sum_to_size(&to_usizes(c.arg(1)?)?)),
        "layer_norm" | "F.layer_norm" => {
            let shape = to_i64s(c.opt(1, "normalized_shape").unwrap_or(&Value::Null))?;
            let w = ops_arms::opt_tensor(c, 2, "weight")?;
            let b = ops_arms::opt_tensor(c, 3, "bias")?;
            let eps = c
                .opt(4, "eps")
                .filter(|v| !v.is_null())
                .map_or(Ok(1e-5), to_f64)?;
            val(c.t(0)?.layer_norm(&shape, w.as_ref(), b.as_ref(), eps))
        }
        "full" => {
            let v = c.arg(1)?;
            let dt = c.dtype_or(full_dtype(v))?;
            val(Tensor::full(&to_usizes(c.arg(0)?)?, to_scalar(v)?, dt))
        }
        "linspace" => {
            let (a, b) = (to_f64(c.arg(0)?)?, to_f64(c.arg(1)?)?);
            let n = to_usize(c.opt(2, "steps").unwrap_or(&Value::Null))?;
            val(Tensor::linspace(a, b, n, c.dtype_or(DType::F32)?))
        }
        "eye" => {
            if c.args.len() > 1 {
                return Err(CallErr::NoApi("eye(n, m): tapegrad's eye is square".into()));
            }
            val(Tensor::eye(to_usize(c.arg(0)?)?, c.dtype_or(DType::F32)?))
        }
        "F.embedding" => {
            let pad = c
                .opt(2, "padding_idx")
                .filter(|v| !v.is_null())
                .map(to_i64)
                .transpose()?;
            val(Tensor::embedding_with(&c.t(0)?, &c.t(1)?, pad))
        }
        "F.dropout" => {
            no_inplace(c)?;
            let p = c.opt(1, "p").map_or(Ok(0.5), to_f64)?;
            let train = c.bool_or(2, "training", true)?;
            val(c.t(0)?.dropout(p, train))
        }
        "F.relu" => {
            no_inplace(c)?;
            val(c.t(0)?.relu())
        }
        op => Err(CallErr::Missing(op.to_string())),
    }
}
