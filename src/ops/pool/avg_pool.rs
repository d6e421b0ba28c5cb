//! Average pooling: `avg_pool2d` / `avg_pool1d` (ceil_mode, count_include_pad,
//! divisor_override) and `adaptive_avg_pool2d` / `adaptive_avg_pool1d`. Forward: the backend's
//! `avg_pool` kernel over the windows of `pool/mod.rs` with one divisor per output position;
//! backward `AvgPoolBackward`: the adjoint pooling (`avg_pool_transpose`), itself recorded with
//! the forward pooling as its derivative, so every order is exact; as PyTorch's
//! `avg_pool2d_backward(g, self)` it is also linked to the saved input (zero derivative).

use super::{Pool2d, adaptive, as_2d, check_dtype, check_int32, geo};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::backend::PoolWindows;
use crate::layout::Layout;
use crate::ops::channels_last::{channels_last, suggests};
use crate::ops::grad::{backward, input_grad, zero_grad_link};
use crate::ops::nn::check_float;
use crate::tensor::dims::{dim, maybe_dim};
use crate::{DType, Dim, IntoGeometry, MaybeDim, Result, Tensor, bail};
use std::sync::Arc;

/// Windows and the divisor of every output position of one plane.
struct AvgGeometry {
    win: PoolWindows,
    div: Vec<f64>,
    in_shape: Vec<usize>,
    out_shape: Vec<usize>,
}

struct AvgPoolBackward {
    name: &'static str,
    geo: Arc<AvgGeometry>,
    /// The input gradient is channels-last (the input suggests it; not for an adaptive
    /// pooling to `1 x 1`, PyTorch's `mean` whose gradient is contiguous).
    channels_last: bool,
}

// saved: the input (PyTorch's `avg_pool2d_backward(g, self)` reads it, with a zero
// derivative: under create_graph the gradient is linked to it)
backward!(AvgPoolBackward, self.name, |self, ctx, g: Tensor| {
    let name = if self.name == "AvgPool2DBackward0" {
        "AvgPool2DBackwardBackward0"
    } else {
        "AdaptiveAvgPool2DBackwardBackward0"
    };
    let gi = avg_pool_transpose(&g, &self.geo, self.channels_last)?;
    input_grad(zero_grad_link(gi, &[&ctx.saved[0]], name)?)
});

struct AvgPoolTransposeBackward {
    geo: Arc<AvgGeometry>,
}

backward!(
    AvgPoolTransposeBackward,
    "AvgPool2DBackwardBackward0",
    |self, _, g: Tensor| input_grad(avg_pool(&g, &self.geo, "AvgPool2DBackward0")?)
);

fn contiguous_out(shape: &[usize], x: &Tensor, zeroed: bool) -> Result<Tensor> {
    if zeroed {
        Tensor::zeros(shape, x.dtype())
    } else {
        Tensor::empty_strided(shape, Layout::contiguous(shape).strides(), x.dtype())
    }
}

/// The window averages of `x` (shape `geo.in_shape`); channels-last when `x` (4 dims)
/// suggests it.
fn avg_pool(x: &Tensor, geo: &Arc<AvgGeometry>, name: &'static str) -> Result<Tensor> {
    let cl = x.dim() == 4 && suggests(x);
    let out = {
        let _g = no_grad();
        let xc = if x.is_contiguous() {
            x.clone()
        } else {
            x.contiguous()?
        };
        let out = contiguous_out(&geo.out_shape, x, false)?;
        crate::backend::pool::avg_pool(&out.data(), &xc.data(), &geo.win, &geo.div, x.dtype());
        if cl { channels_last(&out)? } else { out }
    };
    let sh = &geo.out_shape;
    let mean = name == "AdaptiveAvgPool2DBackward0" && sh[sh.len() - 2..] == [1, 1];
    let bw = AvgPoolBackward {
        name,
        geo: geo.clone(),
        channels_last: cl && !mean,
    };
    record(&[&out], &[x], || vec![SavedTensor::input(x)], bw)?;
    Ok(out)
}

/// The adjoint of [`avg_pool`] applied to `g` (shape `geo.out_shape`), channels-last when `cl`.
fn avg_pool_transpose(g: &Tensor, geo: &Arc<AvgGeometry>, cl: bool) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        let gc = if g.is_contiguous() {
            g.clone()
        } else {
            g.contiguous()?
        };
        let out = contiguous_out(&geo.in_shape, g, true)?;
        crate::backend::pool::avg_pool_transpose(
            &out.data(),
            &gc.data(),
            &geo.win,
            &geo.div,
            g.dtype(),
        );
        if cl { channels_last(&out)? } else { out }
    };
    let bw = AvgPoolTransposeBackward { geo: geo.clone() };
    record(&[&out], &[g], Vec::new, bw)?;
    Ok(out)
}

impl Tensor {
    /// 2-d average pooling of a `[C, H, W]` or `[N, C, H, W]` input, as
    /// `torch.nn.functional.avg_pool2d(input, kernel_size, stride, padding, ceil_mode,
    /// count_include_pad, divisor_override)`: each size is one value or two of any integer
    /// type ([`IntoGeometry`]; `stride` `None` or `()` is the kernel size; negative values get
    /// PyTorch's errors); a window's sum is divided by `divisor_override`, else by its size
    /// counting the zero padding (`count_include_pad`) or not.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4])?;
    /// let y = x.avg_pool2d(2, None, 0, false, true, None)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![2.5, 4.5, 10.5, 12.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn avg_pool2d(
        &self,
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: impl MaybeDim,
    ) -> Result<Tensor> {
        let op = "avg_pool2d";
        check_dtype(self, op, &[DType::I64])?;
        let (k, s, pad) = (geo(kernel_size, op)?, geo(stride, op)?, geo(padding, op)?);
        let divisor_override = maybe_dim(divisor_override, op)?;
        let args = (&k[..], &s[..], &pad[..], &[1i64][..]);
        let (p, oh, ow) = Pool2d::new(self, args, ceil_mode, true, op)?;
        if divisor_override == Some(0) {
            bail!(InvalidArgument, op, "divisor must be not zero");
        }
        let sh = self.shape();
        let n = sh.len();
        let (h, w) = (sh[n - 2], sh[n - 1]);
        let win = p.windows(sh[..n - 2].iter().product(), (h, w), (oh, ow));
        // the window size counting padding: [start, min(start + k, size + pad))
        let padded = |o: usize, d: usize, size: usize| {
            let start = o as i128 * p.stride[d] as i128 - p.pad[d] as i128;
            let end = (start + p.k[d] as i128).min(size as i128 + p.pad[d] as i128);
            (end - start) as f64
        };
        // no divisor without a plane (an empty batch may have huge output planes)
        let (dh, dw) = if win.planes == 0 { (0, 0) } else { (oh, ow) };
        let mut div = Vec::with_capacity(dh * dw);
        for i in 0..dh {
            for j in 0..dw {
                div.push(match divisor_override {
                    Some(d) => d as f64,
                    None if count_include_pad => padded(i, 0, h) * padded(j, 1, w),
                    None => (win.rows[i].1 * win.cols[j].1) as f64,
                });
            }
        }
        let mut out_shape = sh[..n - 2].to_vec();
        out_shape.extend([oh, ow]);
        let geo = AvgGeometry {
            win,
            div,
            in_shape: sh,
            out_shape,
        };
        avg_pool(self, &Arc::new(geo), "AvgPool2DBackward0")
    }

    /// 1-d average pooling of a `[C, L]` or `[N, C, L]` input, as
    /// `torch.nn.functional.avg_pool1d(input, kernel_size, stride, padding, ceil_mode,
    /// count_include_pad)` (`stride` `None`: the kernel size).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 2.0, 6.0], &[1, 4])?;
    /// assert_eq!(x.avg_pool1d(2, None, 0, false, true)?.to_vec::<f64>()?, vec![2.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn avg_pool1d(
        &self,
        kernel_size: impl Dim,
        stride: impl MaybeDim,
        padding: impl Dim,
        ceil_mode: bool,
        count_include_pad: bool,
    ) -> Result<Tensor> {
        let op = "avg_pool1d";
        check_dtype(self, op, &[DType::I64])?;
        let (kernel_size, stride, padding) = (
            dim(kernel_size, op)?,
            maybe_dim(stride, op)?,
            dim(padding, op)?,
        );
        check_int32(&[kernel_size, stride.unwrap_or(0), padding], op)?;
        let x = as_2d(self, op)?;
        let s = stride.unwrap_or(kernel_size);
        x.avg_pool2d(
            &[1, kernel_size],
            &[1, s],
            &[0, padding],
            ceil_mode,
            count_include_pad,
            None,
        )?
        .squeeze_dim(-2)
    }

    /// Adaptive 2-d average pooling to `output_size` (one size or two): output `(i, j)` is the
    /// mean of rows `[floor(i H / oh), ceil((i + 1) H / oh))` and the same for columns, as
    /// `torch.nn.functional.adaptive_avg_pool2d`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec((0..9).map(|v| v as f64).collect(), &[1, 3, 3])?;
    /// assert_eq!(x.adaptive_avg_pool2d(2)?.to_vec::<f64>()?, vec![2.0, 3.0, 5.0, 6.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn adaptive_avg_pool2d(&self, output_size: impl IntoGeometry) -> Result<Tensor> {
        let op = "adaptive_avg_pool2d";
        check_float(self, op)?;
        let (out_shape, win) = adaptive(self, &geo(output_size, op)?, op)?;
        let div = win
            .rows
            .iter()
            .flat_map(|r| win.cols.iter().map(move |c| (r.1 * c.1) as f64))
            .collect();
        let geo = AvgGeometry {
            win,
            div,
            in_shape: self.shape(),
            out_shape,
        };
        avg_pool(self, &Arc::new(geo), "AdaptiveAvgPool2DBackward0")
    }

    /// Adaptive 1-d average pooling of a `[C, L]` or `[N, C, L]` input to `output_size`, as
    /// `torch.nn.functional.adaptive_avg_pool1d`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0, 2.0], &[1, 3])?;
    /// assert_eq!(x.adaptive_avg_pool1d(2)?.to_vec::<f64>()?, vec![2.0, 2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn adaptive_avg_pool1d(&self, output_size: impl Dim) -> Result<Tensor> {
        let op = "adaptive_avg_pool1d";
        check_float(self, op)?;
        let output_size = dim(output_size, op)?;
        let x = as_2d(self, op)?;
        x.adaptive_avg_pool2d([1, output_size])?.squeeze_dim(-2)
    }
}
