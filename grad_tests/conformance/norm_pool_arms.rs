//! Dispatch arms of the normalization and pooling families (issue 27): `F.batch_norm`,
//! `F.group_norm`, `F.instance_norm`, `F.max_pool1d/2d`, `F.avg_pool1d/2d`,
//! `F.adaptive_avg_pool1d/2d`, `F.adaptive_max_pool2d`, `F.max_unpool2d`, with every keyword of
//! their functional signatures. Returns `CallErr::Missing(op)` for ops it does not own.

use super::*;

/// A keyword that is `None`, absent or a float.
fn f64_or(c: &Call, i: usize, name: &'static str, default: f64) -> CallResult<f64> {
    c.opt(i, name)
        .filter(|v| !v.is_null())
        .map_or(Ok(default), to_f64)
}

/// A size argument (int or list); `None`/absent gives `default`.
/// Negative values pass through: the ops refuse them with PyTorch's messages.
fn sizes_or(c: &Call, i: usize, name: &'static str, default: Vec<i64>) -> CallResult<Vec<i64>> {
    match c.opt(i, name) {
        None | Some(Value::Null) => Ok(default),
        Some(v) => to_i64s(v),
    }
}

/// A 1-d size argument: an int or a one-element list.
fn one(v: Vec<i64>, what: &str) -> CallResult<i64> {
    match v[..] {
        [n] => Ok(n),
        _ => bad(format!("{what}: expected one size, got {v:?}")),
    }
}

fn pair(r: tapegrad::Result<(Tensor, Tensor)>, with_indices: bool) -> CallResult<Val> {
    let (a, b) = r?;
    Ok(if with_indices {
        Val::Many(vec![a, b])
    } else {
        Val::T(a)
    })
}

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "F.batch_norm" => {
            let rm = ops_arms::opt_tensor(c, 1, "running_mean")?;
            let rv = ops_arms::opt_tensor(c, 2, "running_var")?;
            let w = ops_arms::opt_tensor(c, 3, "weight")?;
            let b = ops_arms::opt_tensor(c, 4, "bias")?;
            let training = c.bool_or(5, "training", false)?;
            let momentum = f64_or(c, 6, "momentum", 0.1)?;
            let eps = f64_or(c, 7, "eps", 1e-5)?;
            val(c.t(0)?.batch_norm(
                rm.as_ref(),
                rv.as_ref(),
                w.as_ref(),
                b.as_ref(),
                training,
                momentum,
                eps,
            ))
        }
        "F.instance_norm" => {
            let rm = ops_arms::opt_tensor(c, 1, "running_mean")?;
            let rv = ops_arms::opt_tensor(c, 2, "running_var")?;
            let w = ops_arms::opt_tensor(c, 3, "weight")?;
            let b = ops_arms::opt_tensor(c, 4, "bias")?;
            let use_input_stats = c.bool_or(5, "use_input_stats", true)?;
            let momentum = f64_or(c, 6, "momentum", 0.1)?;
            let eps = f64_or(c, 7, "eps", 1e-5)?;
            val(c.t(0)?.instance_norm(
                rm.as_ref(),
                rv.as_ref(),
                w.as_ref(),
                b.as_ref(),
                use_input_stats,
                momentum,
                eps,
            ))
        }
        "F.group_norm" => {
            let g = to_i64(c.opt(1, "num_groups").unwrap_or(&Value::Null))?;
            let w = ops_arms::opt_tensor(c, 2, "weight")?;
            let b = ops_arms::opt_tensor(c, 3, "bias")?;
            let eps = f64_or(c, 4, "eps", 1e-5)?;
            val(c.t(0)?.group_norm(g, w.as_ref(), b.as_ref(), eps))
        }
        "F.max_pool2d" => {
            let k = sizes_or(c, 1, "kernel_size", vec![])?;
            let s = sizes_or(c, 2, "stride", vec![])?;
            let p = sizes_or(c, 3, "padding", vec![0])?;
            let d = sizes_or(c, 4, "dilation", vec![1])?;
            let ceil = c.bool_or(5, "ceil_mode", false)?;
            let ri = c.bool_or(6, "return_indices", false)?;
            pair(c.t(0)?.max_pool2d_with_indices(&k, &s, &p, &d, ceil), ri)
        }
        "F.max_pool1d" => {
            let k = one(sizes_or(c, 1, "kernel_size", vec![])?, "kernel_size")?;
            let s = sizes_or(c, 2, "stride", vec![])?;
            let s = if s.is_empty() {
                None
            } else {
                Some(one(s, "stride")?)
            };
            let p = one(sizes_or(c, 3, "padding", vec![0])?, "padding")?;
            let d = one(sizes_or(c, 4, "dilation", vec![1])?, "dilation")?;
            let ceil = c.bool_or(5, "ceil_mode", false)?;
            let ri = c.bool_or(6, "return_indices", false)?;
            // the plain form is its own op (PyTorch's `max_pool1d`: other dtype rules)
            if ri {
                pair(c.t(0)?.max_pool1d_with_indices(k, s, p, d, ceil), ri)
            } else {
                Ok(Val::T(c.t(0)?.max_pool1d(k, s, p, d, ceil)?))
            }
        }
        "F.avg_pool2d" => {
            let k = sizes_or(c, 1, "kernel_size", vec![])?;
            let s = sizes_or(c, 2, "stride", vec![])?;
            let p = sizes_or(c, 3, "padding", vec![0])?;
            let ceil = c.bool_or(4, "ceil_mode", false)?;
            let cip = c.bool_or(5, "count_include_pad", true)?;
            let div = c
                .opt(6, "divisor_override")
                .filter(|v| !v.is_null())
                .map(to_i64)
                .transpose()?;
            val(c.t(0)?.avg_pool2d(&k, &s, &p, ceil, cip, div))
        }
        "F.avg_pool1d" => {
            let k = one(sizes_or(c, 1, "kernel_size", vec![])?, "kernel_size")?;
            let s = sizes_or(c, 2, "stride", vec![])?;
            let s = if s.is_empty() {
                None
            } else {
                Some(one(s, "stride")?)
            };
            let p = one(sizes_or(c, 3, "padding", vec![0])?, "padding")?;
            let ceil = c.bool_or(4, "ceil_mode", false)?;
            let cip = c.bool_or(5, "count_include_pad", true)?;
            val(c.t(0)?.avg_pool1d(k, s, p, ceil, cip))
        }
        "F.adaptive_avg_pool2d" => {
            let o = sizes_or(c, 1, "output_size", vec![])?;
            val(c.t(0)?.adaptive_avg_pool2d(&o))
        }
        "F.adaptive_avg_pool1d" => {
            let o = one(sizes_or(c, 1, "output_size", vec![])?, "output_size")?;
            val(c.t(0)?.adaptive_avg_pool1d(o))
        }
        "F.adaptive_max_pool2d" => {
            let o = sizes_or(c, 1, "output_size", vec![])?;
            let ri = c.bool_or(2, "return_indices", false)?;
            pair(c.t(0)?.adaptive_max_pool2d_with_indices(&o), ri)
        }
        "F.max_unpool2d" => {
            let i = ops_arms::opt_tensor(c, 1, "indices")?
                .map_or_else(|| bad("max_unpool2d: indices".to_string()), Ok)?;
            let k = sizes_or(c, 2, "kernel_size", vec![])?;
            let s = sizes_or(c, 3, "stride", vec![])?;
            let p = sizes_or(c, 4, "padding", vec![0])?;
            // absent: the empty list
            let o = sizes_or(c, 5, "output_size", vec![])?;
            val(c.t(0)?.max_unpool2d(&i, &k, &s, &p, &o))
        }
        op => Err(CallErr::Missing(op.to_string())),
    }
}
