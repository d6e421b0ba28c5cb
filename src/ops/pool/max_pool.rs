//! Max pooling: `max_pool2d` / `max_pool1d` (kernel, stride, padding, dilation, ceil_mode;
//! the `_with_indices` forms return the plane positions as PyTorch's `return_indices=True`)
//! and `adaptive_max_pool2d`. Forward: the backend's `max_pool` kernel over the windows of
//! `pool/mod.rs`; backward `MaxPoolBackward`: `g` summed into the picked positions
//! (`scatter_add`, so double backward is its gather).

use super::{MAX_POOL_INTS, Pool2d, adaptive, as_2d, check_dtype, geo};
use crate::autograd::view::{grad_edges, record_edges};
use crate::autograd::{SavedTensor, no_grad, record};
use crate::backend::PoolWindows;
use crate::layout::Layout;
use crate::ops::channels_last::{channels_last, suggests};
use crate::ops::grad::{backward, input_grad};
use crate::ops::nn::check_float;
use crate::{DType, Dim, IntoGeometry, MaybeDim, Result, Tensor, bail};

struct MaxPoolBackward {
    name: &'static str,
    /// The input's shape.
    shape: Vec<usize>,
    /// Some window has no tap inside the input: its index (PyTorch's first tap at or after
    /// 0) may point past the plane, and its gradient goes nowhere.
    hollow: bool,
    /// The input suggests channels-last: so does its gradient (PyTorch's kernels keep the
    /// input's memory format).
    channels_last: bool,
}

backward!(MaxPoolBackward, self.name, |self, ctx, g: Tensor| {
    let idx = &ctx.saved[0];
    let n = self.shape.len();
    let planes: usize = self.shape[..n - 2].iter().product();
    if planes == 0 {
        // an empty batch (its planes may be huge): nothing to scatter
        return input_grad(Tensor::zeros(&self.shape, g.dtype())?);
    }
    let plane = self.shape[n - 2] * self.shape[n - 1];
    // the output plane's size from `g` (of the output's shape): a `-1` is ambiguous when there
    // are no planes (an empty batch)
    let gs = g.shape();
    let flat = [planes as i64, (gs[n - 2] * gs[n - 1]) as i64];
    let (idx, g) = (idx.reshape(&flat)?, g.reshape(&flat)?);
    let gx = if self.hollow {
        // PyTorch adds such a gradient past the plane (out of bounds, into other memory):
        // here it lands in one spare column, dropped; an index inside the plane still gets
        // it, as PyTorch's; dense (PyTorch's strides), not strided over the spare column
        let zeros = Tensor::zeros(&[planes, plane + 1], g.dtype())?;
        let idx = idx.clamp_max(plane as i64)?;
        zeros
            .scatter_add(1, &idx, &g)?
            .narrow(1, 0, plane as i64)?
            .contiguous()?
    } else {
        Tensor::zeros(&[planes, plane], g.dtype())?.scatter_add(1, &idx, &g)?
    };
    let full: Vec<i64> = self.shape.iter().map(|&d| d as i64).collect();
    // a fresh tensor, not a view of the flat planes (PyTorch's backward kernel writes its own)
    let mut gx = gx.unsafe_view(&full)?;
    if self.channels_last {
        gx = channels_last(&gx)?;
    }
    input_grad(zero_link(gx, &ctx.saved[1], self.name)?)
});

/// PyTorch's `max_pool2d_with_indices_backward(g, x, ..)` (and the adaptive one) is
/// differentiable in `x` with a zero gradient: under create_graph an input gradient without
/// history of its own (`g` constant) gets a node linking it to `x` that gives `zeros_like(x)`.
fn zero_link(gx: Tensor, x: &Tensor, name: &'static str) -> Result<Tensor> {
    if !crate::autograd::is_grad_enabled() || gx.requires_grad() || !x.requires_grad() {
        return Ok(gx);
    }
    let name = match name {
        "AdaptiveMaxPool2DBackward0" => "AdaptiveMaxPool2DBackwardBackward0",
        _ => "MaxPool2DWithIndicesBackwardBackward0",
    };
    let link = ZeroLink {
        name,
        shape: x.shape(),
        dtype: x.dtype(),
    };
    record(&[&gx], &[x], Vec::new, link)?;
    Ok(gx)
}

/// [`zero_link`]'s node: `zeros_like(x)` for `x`.
struct ZeroLink {
    name: &'static str,
    shape: Vec<usize>,
    dtype: DType,
}

backward!(ZeroLink, self.name, |self, _, _g: Tensor| {
    input_grad(Tensor::zeros(&self.shape, self.dtype)?)
});

/// The maxima of the windows `win` of `x` (shape `[.., h, w]`) as a tensor of `out_shape`,
/// with the i64 plane positions when `indices` asks for them (the backward takes them too:
/// computed whenever the op is recorded); both channels-last when `x` (4 dims) suggests it.
fn max_pool_windows(
    x: &Tensor,
    out_shape: &[usize],
    win: &PoolWindows,
    name: &'static str,
    indices: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let cl = x.dim() == 4 && suggests(x);
    let edges = grad_edges(&[x])?;
    let (out, idx) = {
        let _g = no_grad();
        let xc = if x.is_contiguous() {
            x.clone()
        } else {
            x.contiguous()?
        };
        let strides = Layout::contiguous(out_shape).strides().to_vec();
        let out = Tensor::empty_strided(out_shape, &strides, x.dtype())?;
        let idx = if indices || edges.is_some() {
            Some(Tensor::empty_strided(out_shape, &strides, DType::I64)?)
        } else {
            None
        };
        let id = idx.as_ref().map(Tensor::data);
        crate::backend::pool::max_pool(&out.data(), id.as_ref(), &xc.data(), win, x.dtype());
        if cl {
            let idx = idx.map(|i| channels_last(&i)).transpose()?;
            (channels_last(&out)?, idx)
        } else {
            (out, idx)
        }
    };
    if let (Some(edges), Some(idx)) = (edges, &idx) {
        let saved = vec![SavedTensor::private(idx.clone()), SavedTensor::input(x)];
        let bw = MaxPoolBackward {
            name,
            shape: x.shape(),
            hollow: win.rows.iter().chain(&win.cols).any(|&(_, n)| n == 0),
            channels_last: cl,
        };
        record_edges(&[&out], edges, saved, bw);
    }
    Ok((out, idx))
}

/// The pair of a pooling that asked for its indices.
fn asked((y, i): (Tensor, Option<Tensor>)) -> (Tensor, Tensor) {
    (y, i.expect("internal: max pooling indices were asked for"))
}

/// Max pooling of `x` over its last two dims, with indices when `indices` asks (`int32`:
/// PyTorch's int range check of the arguments, see `Pool2d::new`).
fn max_pool2d_impl(
    x: &Tensor,
    args: (&[i64], &[i64], &[i64], &[i64]),
    ceil_mode: bool,
    int32: bool,
    op: &'static str,
    indices: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let (geo, oh, ow) = Pool2d::new(x, args, ceil_mode, int32, op)?;
    let sh = x.shape();
    let n = sh.len();
    let planes = sh[..n - 2].iter().product();
    let win = geo.windows(planes, (sh[n - 2], sh[n - 1]), (oh, ow));
    let mut out_shape = sh[..n - 2].to_vec();
    out_shape.extend([oh, ow]);
    max_pool_windows(
        x,
        &out_shape,
        &win,
        "MaxPool2DWithIndicesBackward0",
        indices,
    )
}

/// 1-d max pooling as the 2-d one on a unit height (`int32`: see `max_pool2d_impl`; without
/// it, the plain float `max_pool1d`, whose own checks come first; the indices only with
/// `int32`, the `_with_indices` form).
fn max_pool1d_impl(
    x: &Tensor,
    (kernel_size, stride, padding, dilation): (i64, Option<i64>, i64, i64),
    ceil_mode: bool,
    int32: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let op = "max_pool1d";
    if !int32 {
        // PyTorch's `max_pool1d` checks, in its order
        let s = stride.unwrap_or(kernel_size);
        let positive = |what: &str, v: i64| -> Result<()> {
            if v <= 0 {
                bail!(
                    InvalidArgument,
                    op,
                    "max_pool1d() {} must be greater than zero, but got {}",
                    what,
                    v
                );
            }
            Ok(())
        };
        positive("kernel_size", kernel_size)?;
        positive("stride", s)?;
        if padding < 0 {
            bail!(
                InvalidArgument,
                op,
                "max_pool1d() padding must be non-negative, but got {}",
                padding
            );
        }
        if padding > kernel_size / 2 {
            bail!(
                InvalidArgument,
                op,
                "max_pool1d() padding should be at most half of kernel size, but got padding={} and kernel_size={}",
                padding,
                kernel_size
            );
        }
        positive("dilation", dilation)?;
    }
    let x2 = as_2d(x, op)?;
    let s = stride.unwrap_or(kernel_size);
    if !int32 {
        // every argument checked positive (non-negative for the padding) above
        let l = x.shape()[x.dim() - 1];
        let [k, st, p, d] = [kernel_size, s, padding, dilation].map(|v| v as usize);
        let ow = super::out_len(l, k, p, st, d, ceil_mode);
        if ow < 1 {
            bail!(
                InvalidArgument,
                op,
                "max_pool1d() Invalid computed output size: {}",
                ow
            );
        }
    }
    let args = (
        &[1, kernel_size][..],
        &[1, s][..],
        &[0, padding][..],
        &[1, dilation][..],
    );
    let (y, i) = max_pool2d_impl(&x2, args, ceil_mode, int32, op, int32)?;
    Ok((
        y.squeeze_dim(-2)?,
        i.map(|i| i.squeeze_dim(-2)).transpose()?,
    ))
}

/// A 1-d pooling's integer arguments (`stride` absent: `None`).
fn args_1d(
    (k, s, p, d): (impl Dim, impl MaybeDim, impl Dim, impl Dim),
    op: &'static str,
) -> Result<(i64, Option<i64>, i64, i64)> {
    use crate::tensor::dims::{dim, maybe_dim};
    Ok((dim(k, op)?, maybe_dim(s, op)?, dim(p, op)?, dim(d, op)?))
}

/// [`Tensor::max_pool2d`]'s checks and pooling, with indices when `indices` asks.
fn max_pool2d_checked(
    x: &Tensor,
    (k, s, p, d): (
        impl IntoGeometry,
        impl IntoGeometry,
        impl IntoGeometry,
        impl IntoGeometry,
    ),
    ceil_mode: bool,
    indices: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let op = "max_pool2d";
    check_dtype(x, op, MAX_POOL_INTS)?;
    let (k, s, p, d) = (geo(k, op)?, geo(s, op)?, geo(p, op)?, geo(d, op)?);
    max_pool2d_impl(x, (&k, &s, &p, &d), ceil_mode, true, op, indices)
}

/// [`Tensor::adaptive_max_pool2d`] with indices when `indices` asks.
fn adaptive_max_pool2d_checked(
    x: &Tensor,
    output_size: impl IntoGeometry,
    indices: bool,
) -> Result<(Tensor, Option<Tensor>)> {
    let op = "adaptive_max_pool2d";
    check_float(x, op)?;
    let (shape, win) = adaptive(x, &geo(output_size, op)?, op)?;
    max_pool_windows(x, &shape, &win, "AdaptiveMaxPool2DBackward0", indices)
}

impl Tensor {
    /// [`Tensor::max_pool2d`] also returning the position of every maximum in its `[h, w]`
    /// plane (`row * w + col`, i64), as `max_pool2d(..., return_indices=True)`.
    pub fn max_pool2d_with_indices(
        &self,
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        dilation: impl IntoGeometry,
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let args = (kernel_size, stride, padding, dilation);
        max_pool2d_checked(self, args, ceil_mode, true).map(asked)
    }

    /// 2-d max pooling of a `[C, H, W]` or `[N, C, H, W]` input, as
    /// `torch.nn.functional.max_pool2d(input, kernel_size, stride, padding, dilation,
    /// ceil_mode)`: each size is one value (both dims) or two of any integer type
    /// ([`IntoGeometry`]; `stride` `None` or `()` is the kernel size; negative values get
    /// PyTorch's errors). NaN propagates (a window holding NaN gives NaN).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec((0..16).map(|v| v as f32).collect(), &[1, 1, 4, 4])?;
    /// let y = x.max_pool2d(2, None, 0, 1, false)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![5.0, 7.0, 13.0, 15.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn max_pool2d(
        &self,
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        dilation: impl IntoGeometry,
        ceil_mode: bool,
    ) -> Result<Tensor> {
        let args = (kernel_size, stride, padding, dilation);
        Ok(max_pool2d_checked(self, args, ceil_mode, false)?.0)
    }

    /// [`Tensor::max_pool1d`] also returning the position of every maximum along the last
    /// dim, as `max_pool1d(..., return_indices=True)`.
    pub fn max_pool1d_with_indices(
        &self,
        kernel_size: impl Dim,
        stride: impl MaybeDim,
        padding: impl Dim,
        dilation: impl Dim,
        ceil_mode: bool,
    ) -> Result<(Tensor, Tensor)> {
        let op = "max_pool1d";
        check_dtype(self, op, MAX_POOL_INTS)?;
        let args = args_1d((kernel_size, stride, padding, dilation), op)?;
        max_pool1d_impl(self, args, ceil_mode, true).map(asked)
    }

    /// 1-d max pooling of a `[C, L]` or `[N, C, L]` input, as
    /// `torch.nn.functional.max_pool1d(input, kernel_size, stride, padding, dilation,
    /// ceil_mode)` (`stride` `None`: the kernel size).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0, 2.0, 0.0, 5.0], &[1, 5])?;
    /// let y = x.max_pool1d(2, None, 0, 1, true)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 2.0, 5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn max_pool1d(
        &self,
        kernel_size: impl Dim,
        stride: impl MaybeDim,
        padding: impl Dim,
        dilation: impl Dim,
        ceil_mode: bool,
    ) -> Result<Tensor> {
        // PyTorch's kernel without indices is float-only and computes in int64
        check_float(self, "max_pool1d")?;
        let args = args_1d((kernel_size, stride, padding, dilation), "max_pool1d")?;
        Ok(max_pool1d_impl(self, args, ceil_mode, false)?.0)
    }

    /// [`Tensor::adaptive_max_pool2d`] also returning the plane positions of the maxima.
    pub fn adaptive_max_pool2d_with_indices(
        &self,
        output_size: impl IntoGeometry,
    ) -> Result<(Tensor, Tensor)> {
        adaptive_max_pool2d_checked(self, output_size, true).map(asked)
    }

    /// Adaptive 2-d max pooling to `output_size` (one size or two): output `(i, j)` is the
    /// maximum of rows `[floor(i H / oh), ceil((i + 1) H / oh))` and the same for columns, as
    /// `torch.nn.functional.adaptive_max_pool2d`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec((0..9).map(|v| v as f64).collect(), &[1, 3, 3])?;
    /// assert_eq!(x.adaptive_max_pool2d(2)?.to_vec::<f64>()?, vec![4.0, 5.0, 7.0, 8.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn adaptive_max_pool2d(&self, output_size: impl IntoGeometry) -> Result<Tensor> {
        Ok(adaptive_max_pool2d_checked(self, output_size, false)?.0)
    }
}
