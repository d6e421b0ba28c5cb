//! Pooling, one file per concept: [`max_pool`] (`max_pool1d`/`max_pool2d` with kernel, stride,
//! padding, dilation, ceil_mode and indices; `adaptive_max_pool2d`), [`avg_pool`]
//! (`avg_pool1d`/`avg_pool2d` with ceil_mode, count_include_pad, divisor_override;
//! `adaptive_avg_pool1d`/`adaptive_avg_pool2d`) and [`unpool`] (`max_unpool2d`). The 1-d forms
//! are the 2-d ones on a unit height (`unsqueeze(-2)` … `squeeze(-2)`), as in PyTorch.
//!
//! Dtypes as PyTorch's CPU kernels: `max_pool2d` and the `_with_indices` forms take the
//! integer dtypes too (not bool), `avg_pool1d`/`avg_pool2d` take i64 (a truncating division),
//! plain `max_pool1d`, the adaptive pools and `max_unpool2d` floats only.
//!
//! Every pooling is a set of windows over contiguous `[h, w]` planes (`PoolWindows`: the
//! padding clipped away, dilation as a step), computed here and run by the backend's pooling
//! kernels (`Backend::max_pool`, `Backend::avg_pool`, `Backend::avg_pool_transpose`). A 4-dim
//! input whose strides suggest channels-last gets a channels-last output, indices and input
//! gradient, as PyTorch's CPU kernels (so does a 1-d pooling whose `unsqueeze(-2)` does).
//!
//! Derivative rules (`g` = output gradient):
//! - max_pool / adaptive_max_pool: `g` scattered (summed) to the picked positions:
//!   `zeros.scatter_add(plane, indices, g)` (differentiable: double backward gathers)
//! - avg_pool / adaptive_avg_pool: the adjoint pooling `avg_pool_transpose(g)` (every window
//!   element receives `g / divisor`); its own derivative is the forward pooling again
//! - max_unpool2d: composed (`zeros.scatter(plane, indices, x)`)

mod avg_pool;
mod max_pool;
mod unpool;

use crate::backend::PoolWindows;
use crate::{DType, IntoGeometry, Result, Tensor, bail};

/// PyTorch's dtype rule of a pooling: the float dtypes and the integer ones of `ints`
/// (others: `"<op>" not implemented for '<T>'`).
fn check_dtype(x: &Tensor, op: &'static str, ints: &[DType]) -> Result<()> {
    if x.dtype().is_float() || ints.contains(&x.dtype()) {
        return Ok(());
    }
    bail!(
        DTypeMismatch,
        op,
        "\"{}\" not implemented for '{}'",
        op,
        x.dtype().torch_scalar_name()
    )
}

/// PyTorch's narrowing of a 1-d pooling's `kernel_size`, `stride` and `padding` to int.
fn check_int32(v: &[i64], op: &'static str) -> Result<()> {
    if v.iter().any(|&a| a > i32::MAX as i64) {
        bail!(
            InvalidArgument,
            op,
            "{}: kernel_size, stride and padding {:?} cannot be converted to int without overflow (at most {})",
            op,
            v,
            i32::MAX
        );
    }
    Ok(())
}

/// The integer dtypes max pooling with indices takes (every one but bool).
const MAX_POOL_INTS: &[DType] = &[DType::U8, DType::I8, DType::I16, DType::I32, DType::I64];

/// A geometry argument (the crate's integer rule: [`IntoGeometry`]) as `i64`s, negative
/// entries kept for the op's own check.
fn geo(g: impl IntoGeometry, op: &'static str) -> Result<Vec<i64>> {
    Ok(crate::tensor::dims::geometry(g, op)?.to_vec())
}

/// A size argument given as one value (both dims) or one per spatial dim (`n` of them).
fn per_dim(v: &[i64], n: usize, what: &str, op: &'static str) -> Result<Vec<i64>> {
    match v.len() {
        1 => Ok(vec![v[0]; n]),
        l if l == n => Ok(v.to_vec()),
        _ => bail!(
            InvalidArgument,
            op,
            "{}: {} must be a single int or a tuple of {} ints, got {:?}",
            op,
            what,
            n,
            v
        ),
    }
}

/// The pooling geometry of an input of `[.., h, w]` with 3 or 4 dims (`[C, H, W]` or `[N, C,
/// H, W]`): the leading sizes and the plane sizes. `nonempty` refuses a zero size outside
/// the batch dim.
fn planes_of(x: &Tensor, op: &'static str) -> Result<(Vec<usize>, usize, usize)> {
    let sh = x.shape();
    if !(sh.len() == 3 || sh.len() == 4) || sh[sh.len() - 3..].contains(&0) {
        bail!(
            InvalidArgument,
            op,
            "{}: expected a 3-D or 4-D (batch mode) input with non-zero sizes except the batch, got {:?}",
            op,
            sh
        );
    }
    let n = sh.len();
    Ok((sh[..n - 2].to_vec(), sh[n - 2], sh[n - 1]))
}

/// PyTorch's `pooling_output_shape`: the number of windows along a dim of `size` (may be
/// below 1 or above int64: the caller refuses it). In `i128`: no argument overflows it.
fn out_len(size: usize, k: usize, pad: usize, stride: usize, dil: usize, ceil: bool) -> i128 {
    let (size, k, pad, stride, dil) = (
        size as i128,
        k as i128,
        pad as i128,
        stride as i128,
        dil as i128,
    );
    let num = size + 2 * pad - dil * (k - 1) - 1 + if ceil { stride - 1 } else { 0 };
    let mut out = num.div_euclid(stride) + 1;
    // the last window must start inside the input or its left padding
    if ceil && (out - 1) * stride >= size + pad {
        out -= 1;
    }
    out
}

/// The windows along one dim: for every output position, the first tap at or after 0 (the
/// first in-range input position unless the window has none) and the number of in-range
/// positions (`k` taps `dil` apart from `o * stride - pad`).
/// In `i128`: no argument overflows it.
fn windows(
    n_out: usize,
    size: usize,
    k: usize,
    stride: usize,
    pad: usize,
    dil: usize,
) -> Vec<(usize, usize)> {
    let (size, k, stride, pad, dil) = (
        size as i128,
        k as i128,
        stride as i128,
        pad as i128,
        dil as i128,
    );
    (0..n_out)
        .map(|o| {
            let start = o as i128 * stride - pad;
            // first tap at or after 0, first tap at or after `size`
            let k0 = if start < 0 {
                (-start + dil - 1) / dil
            } else {
                0
            };
            let k1 = if start >= size {
                0
            } else {
                ((size - start + dil - 1) / dil).min(k)
            };
            if k1 <= k0 {
                // no tap inside: PyTorch's window still starts at its first tap at or after 0
                // (where a max pooling's index of the window points)
                ((start + k0 * dil).min(usize::MAX as i128) as usize, 0)
            } else {
                ((start + k0 * dil) as usize, (k1 - k0) as usize)
            }
        })
        .collect()
}

/// The adaptive windows along one dim: `[floor(o * size / n), ceil((o + 1) * size / n))`
/// (in `u128`: `(o + 1) * size` may exceed `usize` for an empty batch with huge sizes);
/// fallible, as `n_out` may be any size a user asks for.
fn adaptive_windows(n_out: usize, size: usize, op: &'static str) -> Result<Vec<(usize, usize)>> {
    let (n, size) = (n_out as u128, size as u128);
    let mut v = crate::storage::try_vec(n_out, op)?;
    v.extend((0..n_out as u128).map(|o| {
        let s = o * size / n;
        let e = ((o + 1) * size).div_ceil(n);
        (s as usize, (e - s) as usize)
    }));
    Ok(v)
}

/// Checked geometry of a (max or average) pooling over the last two dims.
struct Pool2d {
    k: Vec<usize>,
    stride: Vec<usize>,
    pad: Vec<usize>,
    dil: Vec<usize>,
}

impl Pool2d {
    /// Parses and checks the arguments (PyTorch's order of checks and messages), returning
    /// the output sizes `(oh, ow)` too. `int32`: refuse sizes above `i32::MAX`, as PyTorch's
    /// 2-d kernels (`max_pool2d`, `avg_pool2d`, the `_with_indices` forms) whose arguments are
    /// narrowed to int (plain float `max_pool1d` computes in int64).
    fn new(
        x: &Tensor,
        (kernel, stride, padding, dilation): (&[i64], &[i64], &[i64], &[i64]),
        ceil: bool,
        int32: bool,
        op: &'static str,
    ) -> Result<(Pool2d, usize, usize)> {
        let args = [
            ("kernel_size", kernel),
            ("stride", stride),
            ("padding", padding),
            ("dilation", dilation),
        ];
        for (what, v) in args {
            if int32 && v.iter().any(|&a| a > i32::MAX as i64) {
                bail!(
                    InvalidArgument,
                    op,
                    "{}: {} {:?} cannot be converted to int without overflow (at most {})",
                    op,
                    what,
                    v,
                    i32::MAX
                );
            }
        }
        let k = per_dim(kernel, 2, "kernel_size", op)?;
        let stride = if stride.is_empty() {
            k.clone()
        } else {
            per_dim(stride, 2, "stride", op)?
        };
        let pad = per_dim(padding, 2, "padding", op)?;
        let dil = per_dim(dilation, 2, "dilation", op)?;
        // PyTorch's order: its output-size computation (stride zero, negative padding) runs
        // before the shape check (kernel, stride, dilation)
        if stride.contains(&0) {
            bail!(InvalidArgument, op, "stride should not be zero");
        }
        if let Some(&p) = pad.iter().find(|&&a| a < 0) {
            bail!(
                InvalidArgument,
                op,
                "pad must be non-negative, but got pad: {}",
                p
            );
        }
        if k.iter().any(|&a| a <= 0) {
            bail!(
                InvalidArgument,
                op,
                "kernel size should be greater than zero, but got kH: {} kW: {}",
                k[0],
                k[1]
            );
        }
        if stride.iter().any(|&a| a < 0) {
            bail!(
                InvalidArgument,
                op,
                "stride should be greater than zero, but got dH: {} dW: {}",
                stride[0],
                stride[1]
            );
        }
        if dil.iter().any(|&a| a <= 0) {
            bail!(
                InvalidArgument,
                op,
                "dilation should be greater than zero, but got dilationH: {} dilationW: {}",
                dil[0],
                dil[1]
            );
        }
        // every value checked positive (non-negative for the padding) above
        let [k, stride, pad, dil] =
            [k, stride, pad, dil].map(|v| v.into_iter().map(|a| a as usize).collect::<Vec<_>>());
        let (lead, h, w) = planes_of(x, op)?;
        for d in 0..2 {
            if pad[d] > k[d] / 2 {
                bail!(
                    InvalidArgument,
                    op,
                    "pad should be at most half of effective kernel size, but got pad={}, kernel_size={} and dilation={}",
                    pad[d],
                    k[d],
                    dil[d]
                );
            }
        }
        let oh = out_len(h, k[0], pad[0], stride[0], dil[0], ceil);
        let ow = out_len(w, k[1], pad[1], stride[1], dil[1], ceil);
        if oh > i64::MAX as i128 || ow > i64::MAX as i128 {
            bail!(
                InvalidArgument,
                op,
                "Given input size: ({}x{}). Calculated output size: ({}x{}). Output size overflows int64",
                h,
                w,
                oh,
                ow
            );
        }
        if oh < 1 || ow < 1 {
            bail!(
                InvalidArgument,
                op,
                "Given input size: ({}x{}x{}). Calculated output size: ({}x{}x{}). Output size is too small",
                lead[lead.len() - 1],
                h,
                w,
                lead[lead.len() - 1],
                oh.max(0),
                ow.max(0)
            );
        }
        let geo = Pool2d {
            k,
            stride,
            pad,
            dil,
        };
        Ok((geo, oh as usize, ow as usize))
    }

    /// The windows over planes of `[h, w]` for an `[oh, ow]` output.
    fn windows(
        &self,
        planes: usize,
        (h, w): (usize, usize),
        (oh, ow): (usize, usize),
    ) -> PoolWindows {
        // no windows without a plane (an empty batch may have huge output planes)
        let (oh, ow) = if planes == 0 { (0, 0) } else { (oh, ow) };
        PoolWindows {
            planes,
            h,
            w,
            rows: windows(oh, h, self.k[0], self.stride[0], self.pad[0], self.dil[0]),
            dh: self.dil[0],
            cols: windows(ow, w, self.k[1], self.stride[1], self.pad[1], self.dil[1]),
            dw: self.dil[1],
        }
    }
}

/// The adaptive windows of an `[.., h, w]` input for `output_size` (one or two sizes; a
/// negative one refused with PyTorch's message: `adaptive_avg_pool2d`'s own, or the tensor
/// creation's for `adaptive_max_pool2d`).
fn adaptive(
    x: &Tensor,
    output_size: &[i64],
    op: &'static str,
) -> Result<(Vec<usize>, PoolWindows)> {
    let os = per_dim(output_size, 2, "output_size", op)?;
    let (lead, h, w) = planes_of(x, op)?;
    if os.iter().any(|&a| a < 0) {
        if op == "adaptive_max_pool2d" {
            let mut shape: Vec<i64> = lead.iter().map(|&d| d as i64).collect();
            shape.extend(&os);
            crate::tensor::dims::sizes(&shape, op)?;
        }
        bail!(
            InvalidArgument,
            op,
            "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {{{}, {}}}",
            os[0],
            os[1]
        );
    }
    let os: Vec<usize> = os.iter().map(|&a| a as usize).collect();
    let planes: usize = lead.iter().product();
    // no windows for an empty output (an empty batch, or an output size of 0 beside a huge
    // one, may ask for huge output planes)
    let empty = planes == 0 || os.contains(&0);
    let (oh, ow) = if empty { (0, 0) } else { (os[0], os[1]) };
    let win = PoolWindows {
        planes,
        h,
        w,
        rows: adaptive_windows(oh, h, op)?,
        dh: 1,
        cols: adaptive_windows(ow, w, op)?,
        dw: 1,
    };
    let mut shape = lead;
    shape.extend([os[0], os[1]]);
    Ok((shape, win))
}

/// `x` unsqueezed at `-2` (a 1-d pooling as a 2-d one), checking PyTorch's 2-or-3-dims rule.
fn as_2d(x: &Tensor, op: &'static str) -> Result<Tensor> {
    let sh = x.shape();
    if !(sh.len() == 2 || sh.len() == 3) || sh[sh.len() - 2..].contains(&0) {
        bail!(
            InvalidArgument,
            op,
            "{}: Expected 2D or 3D (batch mode) tensor with optional 0 dim batch size for input, but got:{:?}",
            op,
            sh
        );
    }
    x.unsqueeze(-2)
}
