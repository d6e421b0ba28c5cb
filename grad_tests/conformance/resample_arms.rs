//! Dispatch arms of the resampling family (issue 27): `F.pad`, `F.unfold`, `F.fold`,
//! `F.interpolate`, `F.pixel_shuffle`, `F.pixel_unshuffle`, with every keyword of their
//! functional signatures. Returns `CallErr::Missing(op)` for ops it does not own.

use super::*;
use tapegrad::{InterpolateMode, InterpolateOptions, PadMode};

/// A size argument (int or list); `None`/absent gives `default`. Negative values pass
/// through: the ops refuse them with PyTorch's messages.
fn sizes_or(c: &Call, i: usize, name: &'static str, default: i64) -> CallResult<Vec<i64>> {
    match c.opt(i, name) {
        None | Some(Value::Null) => Ok(vec![default]),
        Some(v) => to_i64s(v),
    }
}

fn mode_str<'a>(c: &'a Call, i: usize, default: &'a str) -> CallResult<&'a str> {
    match c.opt(i, "mode") {
        None | Some(Value::Null) => Ok(default),
        Some(Value::String(s)) => Ok(s.as_str()),
        Some(v) => bad(format!("mode: expected a string, got {v}")),
    }
}

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "F.pad" => {
            // F.pad(input, pad, mode="constant", value=None)
            let pad = to_i64s(c.opt(1, "pad").unwrap_or(&Value::Null))?;
            let mode = match mode_str(c, 2, "constant")? {
                "constant" => PadMode::Constant,
                "reflect" => PadMode::Reflect,
                "replicate" => PadMode::Replicate,
                "circular" => PadMode::Circular,
                m => return Err(CallErr::NoApi(format!("(padding mode {m})"))),
            };
            let value = c
                .opt(3, "value")
                .filter(|v| !v.is_null())
                .map(to_f64)
                .transpose()?;
            val(c.t(0)?.pad(&pad, mode, value))
        }
        "F.unfold" => {
            // F.unfold(input, kernel_size, dilation=1, padding=0, stride=1)
            let k = sizes_or(c, 1, "kernel_size", 0)?;
            let d = sizes_or(c, 2, "dilation", 1)?;
            let p = sizes_or(c, 3, "padding", 0)?;
            let s = sizes_or(c, 4, "stride", 1)?;
            val(c.t(0)?.unfold_blocks(&k, &d, &p, &s))
        }
        "F.fold" => {
            // F.fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1)
            let o = sizes_or(c, 1, "output_size", 0)?;
            let k = sizes_or(c, 2, "kernel_size", 0)?;
            let d = sizes_or(c, 3, "dilation", 1)?;
            let p = sizes_or(c, 4, "padding", 0)?;
            let s = sizes_or(c, 5, "stride", 1)?;
            val(c.t(0)?.fold(&o, &k, &d, &p, &s))
        }
        "F.interpolate" => {
            // F.interpolate(input, size=None, scale_factor=None, mode="nearest",
            //               align_corners=None, recompute_scale_factor=None, antialias=False)
            let size = match c.opt(1, "size") {
                None | Some(Value::Null) => None,
                Some(v) => Some(to_i64s(v)?),
            };
            let scale = match c.opt(2, "scale_factor") {
                None | Some(Value::Null) => None,
                Some(Value::Array(a)) => {
                    Some(a.iter().map(to_f64).collect::<CallResult<Vec<_>>>()?)
                }
                Some(v) => Some(vec![to_f64(v)?]),
            };
            let mode = match mode_str(c, 3, "nearest")? {
                "nearest" => InterpolateMode::Nearest,
                "linear" => InterpolateMode::Linear,
                "bilinear" => InterpolateMode::Bilinear,
                "trilinear" => InterpolateMode::Trilinear,
                m => return Err(CallErr::NoApi(format!("(interpolation mode {m})"))),
            };
            let opt_bool = |i, name| {
                c.opt(i, name)
                    .filter(|v: &&Value| !v.is_null())
                    .map(to_bool)
                    .transpose()
            };
            if opt_bool(6, "antialias")? == Some(true) {
                return Err(CallErr::NoApi("(antialias=True)".to_string()));
            }
            let o = InterpolateOptions {
                size: size.map(Into::into),
                scale_factor: scale.as_deref(),
                mode,
                align_corners: opt_bool(4, "align_corners")?,
                recompute_scale_factor: opt_bool(5, "recompute_scale_factor")?,
            };
            val(c.t(0)?.interpolate(o))
        }
        "F.pixel_shuffle" => {
            let r = to_i64(c.opt(1, "upscale_factor").unwrap_or(&Value::Null))?;
            val(c.t(0)?.pixel_shuffle(r))
        }
        "F.pixel_unshuffle" => {
            let r = to_i64(c.opt(1, "downscale_factor").unwrap_or(&Value::Null))?;
            val(c.t(0)?.pixel_unshuffle(r))
        }
        op => Err(CallErr::Missing(op.to_string())),
    }
}
