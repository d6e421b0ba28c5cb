//! `conv1d`, `conv2d`, `conv3d`, `conv_transpose1d`, `conv_transpose2d`, `conv_transpose3d`:
//! PyTorch's argument checks (in its order, with its messages), the output geometry
//! ([`ConvGeom`]), the memory format of the results ([`format`]) and the unbatched form; the
//! computation is [`core`](super::core).

use super::core::{self, Format};
use super::options::{ConvOptions, ConvPadding, ConvTransposeOptions};
use crate::backend::ConvGeom;
use crate::ops::channels_last::suggests;
use crate::{DType, Result, Tensor, bail};
use smallvec::SmallVec;

/// The checked integer parameters of one call (per spatial dim).
struct Params {
    stride: SmallVec<[i64; 3]>,
    padding: SmallVec<[i64; 3]>,
    dilation: SmallVec<[i64; 3]>,
    output_padding: SmallVec<[i64; 3]>,
    groups: i64,
    transposed: bool,
    /// `padding="same"`: the output keeps the input's sizes (padding computed per dim).
    same: bool,
}

/// `[a, b]` as PyTorch prints a size list.
fn sizes(s: &[usize]) -> String {
    format!("{s:?}")
}

/// c10's lower-case scalar-type name (`float`, `double`, ...).
fn c10(d: DType) -> String {
    match d {
        DType::F32 => "float".into(),
        DType::F64 => "double".into(),
        DType::I64 => "long int".into(),
        DType::I32 => "int".into(),
        _ => d.torch_scalar_name().to_lowercase(),
    }
}

/// The dtype rules of PyTorch's CPU convolution kernels: bool never; integers other than
/// int64 only through the plain (not dilated, not transposed) kernel.
fn check_dtype(x: &Tensor, p: &Params, nd: usize, op: &'static str) -> Result<()> {
    let dt = x.dtype();
    let dilated = p.dilation.iter().any(|&d| d != 1);
    let kernel = if p.transposed {
        if nd == 3 {
            "slow_conv_transpose3d_out_cpu"
        } else {
            "slow_conv_transpose2d_out_cpu"
        }
    } else if dilated {
        "slow_conv_dilated<>"
    } else if nd == 3 {
        "slow_conv3d_cpu"
    } else {
        "slow_conv2d_cpu"
    };
    let ok = match dt {
        DType::Bool => false,
        DType::I64 => true,
        d if d.is_float() || d.is_complex() => true,
        _ => !p.transposed && !dilated,
    };
    if !ok {
        bail!(
            DTypeMismatch,
            op,
            "\"{}\" not implemented for '{}'",
            kernel,
            dt.torch_scalar_name()
        );
    }
    Ok(())
}

/// PyTorch's `check_shape_forward` plus the output geometry, for a batched input.
fn geometry(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: &Params,
    op: &'static str,
) -> Result<ConvGeom> {
    let (xs, ws) = (x.shape(), w.shape());
    let nd = xs.len() - 2;
    if ws.len() != xs.len() {
        bail!(
            InvalidArgument,
            op,
            "Expected {}-dimensional input for {}-dimensional weight {}, but got {}-dimensional input of size {} instead",
            ws.len(),
            ws.len(),
            sizes(&ws),
            xs.len(),
            sizes(&xs)
        );
    }
    if p.stride.iter().any(|&s| s <= 0) {
        bail!(InvalidArgument, op, "non-positive stride is not supported");
    }
    if p.padding.iter().any(|&s| s < 0) {
        bail!(InvalidArgument, op, "negative padding is not supported");
    }
    if p.output_padding.iter().any(|&s| s < 0) {
        bail!(
            InvalidArgument,
            op,
            "negative output_padding is not supported"
        );
    }
    if p.dilation.iter().any(|&s| s < 0) {
        // PyTorch's message for a negative dilation (a zero one names the values)
        bail!(InvalidArgument, op, "dilation should be greater than zero");
    }
    if p.dilation.iter().any(|&s| s <= 0) {
        bail!(
            InvalidArgument,
            op,
            "dilation should be greater than zero, but got {:?}",
            p.dilation
        );
    }
    if p.groups <= 0 {
        bail!(InvalidArgument, op, "non-positive groups is not supported");
    }
    let groups = p.groups as usize;
    if ws[0] < groups {
        bail!(
            InvalidArgument,
            op,
            "Given groups={}, expected weight to be at least {} at dimension 0, but got weight of size {} instead",
            groups,
            groups,
            sizes(&ws)
        );
    }
    if ws[0] % groups != 0 {
        bail!(
            InvalidArgument,
            op,
            "Given groups={}, expected weight to be divisible by {} at dimension 0, but got weight of size [{}] instead",
            groups,
            groups,
            sizes(&ws)
        );
    }
    // PyTorch's transposed kernels refuse a weight without output channels (torch 2.15:
    // "non-empty 2D or 4D weight tensor expected, but got: [3, 0, 1, 2]")
    if p.transposed && ws[1] == 0 {
        bail!(
            InvalidArgument,
            op,
            "non-empty weight tensor expected, but got weight of size {}",
            sizes(&ws)
        );
    }
    let (c_in_w, c_out) = if p.transposed {
        (ws[0], ws[1] * groups)
    } else {
        (ws[1] * groups, ws[0])
    };
    if xs[1] != c_in_w {
        if p.transposed {
            bail!(
                ShapeMismatch,
                op,
                "Given transposed=1, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
                sizes(&ws),
                sizes(&xs),
                ws[0],
                xs[1]
            );
        }
        bail!(
            ShapeMismatch,
            op,
            "Given groups={}, weight of size {}, expected input{} to have {} channels, but got {} channels instead",
            groups,
            sizes(&ws),
            sizes(&xs),
            c_in_w,
            xs[1]
        );
    }
    if let Some(b) = bias
        && (b.dim() != 1 || b.numel() != c_out)
    {
        bail!(
            ShapeMismatch,
            op,
            "Given weight of size {}, expected bias to be 1-dimensional with {} elements, but got bias of size {} instead",
            sizes(&ws),
            c_out,
            sizes(&b.shape())
        );
    }
    // PyTorch's transposed kernels (`slow_conv_transpose2d/3d`, the 1-d form on a unit
    // height) narrow stride and dilation to int32 by wrapping, which is not a semantics:
    // torch 2.15 gives, for conv_transpose1d of [1, 1, 2] with a [1, 1, 1] weight, stride
    // 2^31 -> "stride should be greater than zero, but got ... stride_width: -2147483648",
    // 2^31 + 1 -> "... -2147483647", 2^32 + 1 -> wraps to 1 and computes stride 1 into an
    // output sized for 2^32 + 1 (a 32 GiB allocation), dilation 2^31 -> "dilation should be
    // greater than zero ... -2147483648". tapegrad refuses every value above int32::MAX
    // (kind InvalidArgument); int32::MAX itself is computed as PyTorch does
    let big = |v: &SmallVec<[i64; 3]>| v.iter().any(|&a| a > i32::MAX as i64);
    if p.transposed && (big(&p.stride) || big(&p.dilation)) {
        bail!(
            InvalidArgument,
            op,
            "{}: stride {:?} and dilation {:?} must fit in int32 (at most {})",
            op,
            p.stride,
            p.dilation,
            i32::MAX
        );
    }
    let k: SmallVec<[usize; 3]> = ws[2..].iter().copied().collect();
    let u = |v: &SmallVec<[i64; 3]>| -> SmallVec<[usize; 3]> {
        v.iter().map(|&a| a as usize).collect()
    };
    let (stride, dilation) = (u(&p.stride), u(&p.dilation));
    let mut pad = u(&p.padding);
    let in_sp: SmallVec<[usize; 3]> = xs[2..].iter().copied().collect();
    if k.contains(&0) {
        bail!(
            InvalidArgument,
            op,
            "kernel size should be greater than zero, but got weight of size {}",
            sizes(&ws)
        );
    }
    // every size below (effective kernel, padded input, transposed output) fits in i64 unless
    // the arguments are absurd: refuse those instead of overflowing. This also gives the
    // kernels' invariant `ConvGeom::positions_fit` (asserted by the front door): the last
    // position read, `(out - 1) * stride + (k - 1) * dilation`, is below the padded input
    // (the transposed output's `(in - 1) * stride + ext`), so below this bound
    let fits = (0..nd).all(|i| {
        let ext = dilation[i] as i128 * (k[i] as i128 - 1) + 1;
        let grow = ext + 2 * pad[i] as i128 + in_sp[i] as i128 * stride[i] as i128;
        grow <= i64::MAX as i128
    });
    if !fits {
        bail!(
            InvalidArgument,
            op,
            "convolution geometry overflows int64: input {}, weight {}, stride {:?}, padding {:?}, dilation {:?}",
            sizes(&xs),
            sizes(&ws),
            p.stride,
            p.padding,
            p.dilation
        );
    }
    let ext = |i: usize| dilation[i] * (k[i] - 1) + 1;
    let mut out_sp: SmallVec<[usize; 3]> = SmallVec::new();
    if p.transposed {
        let out_pad = u(&p.output_padding);
        for i in 0..nd {
            if out_pad[i] >= stride[i] && out_pad[i] >= dilation[i] {
                bail!(
                    InvalidArgument,
                    op,
                    "output padding must be smaller than either stride or dilation, but got output_padding={:?} stride={:?} dilation={:?}",
                    p.output_padding,
                    p.stride,
                    p.dilation
                );
            }
        }
        let mut too_small = false;
        let mut too_big = false;
        for i in 0..nd {
            // in i128: the output padding may be as large as the dilation
            let o = (in_sp[i] as i128 - 1) * stride[i] as i128 - 2 * pad[i] as i128
                + ext(i) as i128
                + out_pad[i] as i128;
            too_small |= o <= 0;
            too_big |= o > i64::MAX as i128;
            out_sp.push(o.clamp(0, i64::MAX as i128) as usize);
        }
        if too_big {
            bail!(
                InvalidArgument,
                op,
                "convolution geometry overflows int64: input {}, weight {}, stride {:?}, padding {:?}, dilation {:?}, output_padding {:?}",
                sizes(&xs),
                sizes(&ws),
                p.stride,
                p.padding,
                p.dilation,
                p.output_padding
            );
        }
        if too_small {
            bail!(
                InvalidArgument,
                op,
                "Given input size per channel: {:?}. Calculated output size per channel: {:?}. Output size is too small",
                in_sp,
                out_sp
            );
        }
        // the transposed convolution is the input gradient of the convolution from the
        // output's sizes to the input's: exchange the roles
        return Ok(ConvGeom {
            n: xs[0],
            c_in: c_out,
            c_out: xs[1],
            groups,
            in_sp: out_sp,
            out_sp: in_sp,
            k_sp: k,
            stride,
            pad,
            dilation,
        });
    }
    if p.same {
        for i in 0..nd {
            pad[i] = dilation[i] * (k[i] - 1) / 2;
        }
    }
    let padded: SmallVec<[usize; 3]> = (0..nd)
        .map(|i| {
            if p.same {
                in_sp[i] + dilation[i] * (k[i] - 1)
            } else {
                in_sp[i] + 2 * pad[i]
            }
        })
        .collect();
    if (0..nd).any(|i| padded[i] < ext(i)) {
        let j = |v: &[usize]| {
            v.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(" x ")
        };
        let ke: Vec<usize> = (0..nd).map(ext).collect();
        bail!(
            InvalidArgument,
            op,
            "Calculated padded input size per channel: ({}). Kernel size: ({}). Kernel size can't be greater than actual input size",
            j(&padded),
            j(&ke)
        );
    }
    for i in 0..nd {
        out_sp.push((padded[i] - ext(i)) / stride[i] + 1);
    }
    Ok(ConvGeom {
        n: xs[0],
        c_in: xs[1],
        c_out,
        groups,
        in_sp,
        out_sp,
        k_sp: k,
        stride,
        pad,
        dilation,
    })
}

/// PyTorch's memory format of a CPU convolution of the batched input `x` with `w` (torch
/// 2.15's `_convolution`): channels-last when `x` or `w` suggests it (2-d and 3-d only;
/// never for an empty input, PyTorch's `Empty` backend) and the backend keeps it: oneDNN
/// (float32 by `use_mkldnn`'s size rule, bfloat16; complex as its real dtype) for 2-d and
/// 3-d, the slow kernels (every other dtype, float32 below the size rule) for 2-d only,
/// their grouped form with a weight gradient as `contiguous(channels_last)` of a contiguous
/// one ([`Format::ChannelsLastGroups`]).
fn format(x: &Tensor, w: &Tensor, p: &Params, nd: usize) -> Format {
    if nd == 1 || x.numel() == 0 || !(suggests(x) || suggests(w)) {
        return Format::Contiguous;
    }
    let dt = match x.dtype() {
        DType::C64 => DType::F32,
        DType::C128 => DType::F64,
        d => d,
    };
    let onednn = match dt {
        DType::BF16 => true,
        DType::F32 => use_mkldnn(x, w, p),
        _ => false,
    };
    if onednn {
        Format::ChannelsLast
    } else if nd == 3 {
        Format::Contiguous
    } else if p.groups > 1 {
        Format::ChannelsLastGroups
    } else {
        Format::ChannelsLast
    }
}

/// PyTorch's `ConvParams::use_mkldnn` for a float32 CPU input: the native kernels are kept
/// for small single-image calls ("for some case, native is faster").
fn use_mkldnn(x: &Tensor, w: &Tensor, p: &Params) -> bool {
    let (xs, ws) = (x.shape(), w.shape());
    let strided = p.stride.iter().any(|&s| s != 1);
    let dilated = p.dilation.iter().any(|&d| d != 1);
    if p.transposed && p.output_padding.iter().zip(&p.stride).any(|(o, s)| o >= s) {
        return false;
    }
    let (kh, kw) = (ws[ws.len() - 2], ws[ws.len() - 1]);
    let n = xs[0];
    let threads = crate::threads::get_num_threads() > 1;
    let first = strided || dilated || n >= 16 || kw != 1 || kh != 1 || threads;
    let second =
        p.groups > 1 || (kw > 3 && kh > 3) || n > 1 || xs[..4].iter().product::<usize>() > 20480;
    first && second
}

/// Every N-d convolution: checks, batching, then the core product.
fn conv_nd(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    p: Params,
    nd: usize,
    op: &'static str,
) -> Result<Tensor> {
    if let Some(b) = bias
        && b.dtype() != x.dtype()
    {
        bail!(
            DTypeMismatch,
            op,
            "Input type ({}) and bias type ({}) should be the same",
            c10(x.dtype()),
            c10(b.dtype())
        );
    }
    let d = x.dim();
    if d != nd + 1 && d != nd + 2 {
        bail!(
            InvalidArgument,
            op,
            "Expected {}D (unbatched) or {}D (batched) input to {}, but got input of size: {}",
            nd + 1,
            nd + 2,
            op,
            sizes(&x.shape())
        );
    }
    let batched = d == nd + 2;
    let xb = if batched { x.clone() } else { x.unsqueeze(0)? };
    let geom = geometry(&xb, w, bias, &p, op)?;
    let xs = xb.shape();
    if xs.contains(&0) && xs[0] != 0 && xs[1] != 0 {
        // PyTorch runs 1-d convolutions as 2-d ones and prints that shape
        let mut shown = xs.clone();
        if nd == 1 {
            shown.insert(2, 1);
        }
        bail!(
            InvalidArgument,
            op,
            "Only zero batch or zero channel inputs are supported, but got input shape: {}",
            sizes(&shown)
        );
    }
    if w.dtype() != x.dtype() {
        bail!(
            DTypeMismatch,
            op,
            "expected scalar type {} but found {}",
            w.dtype().torch_scalar_name(),
            x.dtype().torch_scalar_name()
        );
    }
    check_dtype(x, &p, nd, op)?;
    let f = format(&xb, w, &p, nd);
    let out = if p.transposed {
        core::backward_input(&xb, w, bias, &geom, core::NAME, f)?
    } else {
        core::forward(&xb, w, bias, &geom, core::NAME, f)?
    };
    if batched { Ok(out) } else { out.squeeze_dim(0) }
}

fn conv_params(o: &ConvOptions, nd: usize, op: &'static str) -> Result<Params> {
    let stride = o.stride.expand(nd, "stride", op)?;
    let dilation = o.dilation.expand(nd, "dilation", op)?;
    let (padding, same) = match &o.padding {
        ConvPadding::Explicit(s) => (s.expand(nd, "padding", op)?, false),
        ConvPadding::Valid => (smallvec::smallvec![0; nd], false),
        ConvPadding::Same => {
            if stride.iter().any(|&s| s != 1) {
                bail!(
                    InvalidArgument,
                    op,
                    "padding='same' is not supported for strided convolutions"
                );
            }
            (smallvec::smallvec![0; nd], true)
        }
    };
    Ok(Params {
        stride,
        padding,
        dilation,
        output_padding: smallvec::smallvec![0; nd],
        groups: o.groups,
        transposed: false,
        same,
    })
}

fn transpose_params(o: &ConvTransposeOptions, nd: usize, op: &'static str) -> Result<Params> {
    Ok(Params {
        stride: o.stride.expand(nd, "stride", op)?,
        padding: o.padding.expand(nd, "padding", op)?,
        dilation: o.dilation.expand(nd, "dilation", op)?,
        output_padding: o.output_padding.expand(nd, "output_padding", op)?,
        groups: o.groups,
        transposed: true,
        same: false,
    })
}

impl Tensor {
    /// 1-D convolution of `self` (`[N, C_in, L]` or unbatched `[C_in, L]`) with `weight`
    /// (`[C_out, C_in / groups, k]`) plus an optional `bias` (`[C_out]`): PyTorch's
    /// `F.conv1d` (cross-correlation).
    ///
    /// ```
    /// # use tapegrad::{Tensor, ConvOptions};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[1, 1, 4])?;
    /// let w = Tensor::from_vec(vec![1.0f32, -1.0], &[1, 1, 2])?;
    /// let y = x.conv1d(&w, None, &ConvOptions::default())?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![-1.0, -1.0, -1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn conv1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvOptions,
    ) -> Result<Tensor> {
        let p = conv_params(opts, 1, "conv1d")?;
        conv_nd(self, weight, bias, p, 1, "conv1d")
    }

    /// 2-D convolution of `self` (`[N, C_in, H, W]` or unbatched `[C_in, H, W]`) with
    /// `weight` (`[C_out, C_in / groups, kH, kW]`) plus an optional `bias` (`[C_out]`):
    /// PyTorch's `F.conv2d` with stride, padding (ints, `"same"`, `"valid"`), dilation and
    /// groups.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, ConvOptions};
    /// let x = Tensor::ones(&[1, 2, 4, 4], DType::F32)?;
    /// let w = Tensor::ones(&[3, 2, 3, 3], DType::F32)?;
    /// let y = x.conv2d(&w, None, &ConvOptions { padding: 1.into(), ..Default::default() })?;
    /// assert_eq!(y.shape(), vec![1, 3, 4, 4]);
    /// assert_eq!(y.to_vec::<f32>()?[0], 8.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn conv2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvOptions,
    ) -> Result<Tensor> {
        let p = conv_params(opts, 2, "conv2d")?;
        conv_nd(self, weight, bias, p, 2, "conv2d")
    }

    /// 3-D convolution of `self` (`[N, C_in, D, H, W]` or unbatched) with `weight`
    /// (`[C_out, C_in / groups, kD, kH, kW]`) plus an optional `bias`: PyTorch's `F.conv3d`.
    pub fn conv3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvOptions,
    ) -> Result<Tensor> {
        let p = conv_params(opts, 3, "conv3d")?;
        conv_nd(self, weight, bias, p, 3, "conv3d")
    }

    /// 1-D transposed convolution of `self` (`[N, C_in, L]` or unbatched) with `weight`
    /// (`[C_in, C_out / groups, k]`) plus an optional `bias` (`[C_out]`): PyTorch's
    /// `F.conv_transpose1d` (the input gradient of `conv1d`), with output padding.
    ///
    /// ```
    /// # use tapegrad::{Tensor, ConvTransposeOptions};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 1, 2])?;
    /// let w = Tensor::from_vec(vec![1.0f32, 1.0], &[1, 1, 2])?;
    /// let y = x.conv_transpose1d(&w, None, &ConvTransposeOptions { stride: 2.into(), ..Default::default() })?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 1.0, 2.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn conv_transpose1d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvTransposeOptions,
    ) -> Result<Tensor> {
        let p = transpose_params(opts, 1, "conv_transpose1d")?;
        conv_nd(self, weight, bias, p, 1, "conv_transpose1d")
    }

    /// 2-D transposed convolution of `self` (`[N, C_in, H, W]` or unbatched) with `weight`
    /// (`[C_in, C_out / groups, kH, kW]`) plus an optional `bias`: PyTorch's
    /// `F.conv_transpose2d`.
    pub fn conv_transpose2d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvTransposeOptions,
    ) -> Result<Tensor> {
        let p = transpose_params(opts, 2, "conv_transpose2d")?;
        conv_nd(self, weight, bias, p, 2, "conv_transpose2d")
    }

    /// 3-D transposed convolution: PyTorch's `F.conv_transpose3d`.
    pub fn conv_transpose3d(
        &self,
        weight: &Tensor,
        bias: Option<&Tensor>,
        opts: &ConvTransposeOptions,
    ) -> Result<Tensor> {
        let p = transpose_params(opts, 3, "conv_transpose3d")?;
        conv_nd(self, weight, bias, p, 3, "conv_transpose3d")
    }
}
