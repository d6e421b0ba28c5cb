//! Dispatch arms for the convolutions (`F.conv1d/2d/3d`, `F.conv_transpose1d/2d/3d`) with
//! every keyword of their functional signatures. Returns `CallErr::Missing(op)` for ops it
//! does not own, so the next family is tried.

use super::*;
use tapegrad::{ConvOptions, ConvPadding, ConvTransposeOptions, Spatial};

/// An int or a list of ints, as a [`Spatial`] (default `d` when absent).
fn spatial(v: Option<&Value>, d: i64) -> CallResult<Spatial> {
    match v {
        None | Some(Value::Null) => Ok(d.into()),
        Some(v) => Ok(to_i64s(v)?.into()),
    }
}

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "F.conv1d" | "F.conv2d" | "F.conv3d" => {
            // F.convNd(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1)
            let bias = ops_arms::opt_tensor(c, 2, "bias")?;
            let padding = match c.opt(4, "padding") {
                None | Some(Value::Null) => ConvPadding::from(0),
                Some(Value::String(s)) => match s.parse::<ConvPadding>() {
                    Ok(p) => p,
                    Err(e) => return Err(CallErr::Lib(e)),
                },
                Some(v) => to_i64s(v)?.into(),
            };
            let o = ConvOptions {
                stride: spatial(c.opt(3, "stride"), 1)?,
                padding,
                dilation: spatial(c.opt(5, "dilation"), 1)?,
                groups: c.opt(6, "groups").map_or(Ok(1), to_i64)?,
            };
            let (x, w) = (c.t(0)?, c.t(1)?);
            val(match c.op {
                "F.conv1d" => x.conv1d(&w, bias.as_ref(), &o),
                "F.conv2d" => x.conv2d(&w, bias.as_ref(), &o),
                _ => x.conv3d(&w, bias.as_ref(), &o),
            })
        }
        "F.conv_transpose1d" | "F.conv_transpose2d" | "F.conv_transpose3d" => {
            // F.conv_transposeNd(input, weight, bias=None, stride=1, padding=0,
            //                    output_padding=0, groups=1, dilation=1)
            let bias = ops_arms::opt_tensor(c, 2, "bias")?;
            let o = ConvTransposeOptions {
                stride: spatial(c.opt(3, "stride"), 1)?,
                padding: spatial(c.opt(4, "padding"), 0)?,
                output_padding: spatial(c.opt(5, "output_padding"), 0)?,
                groups: c.opt(6, "groups").map_or(Ok(1), to_i64)?,
                dilation: spatial(c.opt(7, "dilation"), 1)?,
            };
            let (x, w) = (c.t(0)?, c.t(1)?);
            val(match c.op {
                "F.conv_transpose1d" => x.conv_transpose1d(&w, bias.as_ref(), &o),
                "F.conv_transpose2d" => x.conv_transpose2d(&w, bias.as_ref(), &o),
                _ => x.conv_transpose3d(&w, bias.as_ref(), &o),
            })
        }
        op => Err(CallErr::Missing(op.to_string())),
    }
}
