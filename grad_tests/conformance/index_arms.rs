//! Dispatch arms for indexing (getitem/setitem/index_put_) and set_/resize_: the `indexing` and `set_resize` fixtures.
//! Returns `CallErr::Missing(op)` for ops it does not own, so the next family is tried.

use super::*;
use tapegrad::TensorIndex;

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "getitem" => val(c.t(0)?.index(&to_index(c, c.arg(1)?)?)),
        "setitem" => {
            let (x, idx) = (c.t(0)?, to_index(c, c.arg(1)?)?);
            x.index_set(&idx, c.operand(2)?)?;
            Ok(Val::T(x))
        }
        "index_put_" | "index_put" => {
            let (x, values) = (c.t(0)?, c.t(2)?);
            let indices = to_opt_tensors(c, c.arg(1)?)?;
            let acc = c.bool_or(3, "accumulate", false)?;
            val(match c.op {
                "index_put_" => x.index_put_(&indices, &values, acc),
                _ => x.index_put(&indices, &values, acc),
            })
        }
        "set_" => {
            let x = c.t(0)?;
            match c.args.len() {
                1 => val(x.set_empty()),
                2 => val(x.set_(&c.t(1)?)),
                _ => {
                    let off = to_usize(c.opt(2, "storage_offset").unwrap_or(&Value::Null))?;
                    let sizes = to_usizes(c.opt(3, "size").unwrap_or(&Value::Null))?;
                    let strides = c.opt(4, "stride").map(to_usizes).transpose()?;
                    val(x.set_with(&c.t(1)?, off, &sizes, strides.as_deref()))
                }
            }
        }
        "resize_" => val(c.t(0)?.resize_(&to_usizes(c.arg(1)?)?)),
        "resize_as_" => val(c.t(0)?.resize_as_(&c.t(1)?)),
        op => Err(CallErr::Missing(op.to_string())),
    }
}

/// The Python index tuple (a JSON list) -> one [`TensorIndex`] per component.
fn to_index(c: &Call, v: &Value) -> CallResult<Vec<TensorIndex>> {
    let Value::Array(items) = v else {
        return bad(format!("index must be a list, got {v}"));
    };
    items.iter().map(|it| index_item(c, it)).collect()
}

fn index_item(c: &Call, v: &Value) -> CallResult<TensorIndex> {
    Ok(match v {
        Value::Bool(b) => TensorIndex::Bool(*b),
        Value::Number(_) => TensorIndex::Int(to_i64(v)?),
        Value::Object(o) if o.contains_key("t") => TensorIndex::Tensor(c.env.tensor_of(v)?),
        Value::Object(o) if o.contains_key("ellipsis") => TensorIndex::Ellipsis,
        Value::Object(o) if o.contains_key("newaxis") => TensorIndex::NewAxis,
        Value::Object(o) if o.contains_key("slice") => {
            let parts = o["slice"].as_array().map_or(&[][..], |a| a.as_slice());
            let part = |i: usize| {
                parts
                    .get(i)
                    .filter(|p| !p.is_null())
                    .map(to_i64)
                    .transpose()
            };
            TensorIndex::Slice {
                start: part(0)?,
                stop: part(1)?,
                step: part(2)?.unwrap_or(1),
            }
        }
        _ => return bad(format!("unknown index component {v}")),
    })
}

/// The `indices` list of `index_put_` (`null` entries = full dims).
fn to_opt_tensors(c: &Call, v: &Value) -> CallResult<Vec<Option<Tensor>>> {
    let Value::Array(items) = v else {
        return bad(format!("indices must be a list, got {v}"));
    };
    items
        .iter()
        .map(|it| match it {
            Value::Null => Ok(None),
            _ => c.env.tensor_of(it).map(Some),
        })
        .collect()
}
