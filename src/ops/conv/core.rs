//! The three products of one convolution geometry as differentiable ops: [`forward`] (the
//! convolution), [`backward_input`] (its input gradient: the transposed convolution) and
//! [`backward_weight`] (its weight gradient). Each is the partial derivative of
//! `T(x, w, gy) = <conv(x, w), gy>` in one operand, so the gradient of each is written with
//! the other two and every order of derivative follows (complex operands: the other operands
//! conjugated). Kernels: `Backend::conv_forward`, `Backend::conv_backward_input`,
//! `Backend::conv_backward_weight`; f16/bf16 are computed in f32 and rounded. Each product is
//! computed contiguous and its result then given the call's memory [`Format`].

use crate::autograd::{SavedTensor, no_grad, record};
use crate::backend::ConvGeom;
use crate::layout::is_channels_last_contiguous;
use crate::ops::channels_last::channels_last;
use crate::ops::grad::{GradIf, backward, grads, undefined_grad_link};
use crate::{DType, Result, Tensor};

/// Which product a raw call computes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Product {
    Forward,
    BackwardInput,
    BackwardWeight,
}

/// The memory format of a convolution's results (decided by the caller as PyTorch's CPU
/// backends do): of the output and of every gradient (their products, at every order).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Format {
    Contiguous,
    /// Channels-last (3d) strides, as `empty(.., memory_format=channels_last)`.
    ChannelsLast,
    /// Channels-last, but the weight gradient as `contiguous(memory_format=channels_last)`
    /// of a contiguous one (PyTorch's slow kernels with groups: kept contiguous when that is
    /// also channels-last dense, as with one input channel per group).
    ChannelsLastGroups,
}

impl Format {
    /// The format of the gradients: PyTorch's complex convolutions (composed of real ones)
    /// give contiguous gradients.
    fn of_grads(self, g: &Tensor) -> Format {
        if g.dtype().is_complex() {
            Format::Contiguous
        } else {
            self
        }
    }

    /// `out` (the contiguous result of product `p`) in this format.
    fn apply(self, p: Product, out: Tensor) -> Result<Tensor> {
        match self {
            Format::Contiguous => Ok(out),
            Format::ChannelsLastGroups
                if p == Product::BackwardWeight && is_channels_last_contiguous(&out.layout()) =>
            {
                Ok(out)
            }
            _ => channels_last(&out),
        }
    }
}

/// The output shape of a product.
fn out_shape(p: Product, g: &ConvGeom) -> Vec<usize> {
    let (lead, sp): ([usize; 2], &[usize]) = match p {
        // PyTorch's `Empty` backend: an input without channels gives an output without
        // channels (not `c_out` channels of bias), whatever the weight
        Product::Forward if g.c_in == 0 => ([g.n, 0], &g.out_sp),
        Product::Forward => ([g.n, g.c_out], &g.out_sp),
        Product::BackwardInput => ([g.n, g.c_in], &g.in_sp),
        Product::BackwardWeight => ([g.c_out, g.c_in / g.groups], &g.k_sp),
    };
    lead.iter().chain(sp).copied().collect()
}

/// One product on contiguous copies of the operands, no autograd, in format `f`.
fn raw(
    p: Product,
    a: &Tensor,
    b: &Tensor,
    bias: Option<&Tensor>,
    g: &ConvGeom,
    f: Format,
) -> Result<Tensor> {
    let _ng = no_grad();
    f.apply(p, raw_contiguous(p, a, b, bias, g)?)
}

/// One product on contiguous copies of the operands, no autograd, contiguous.
fn raw_contiguous(
    p: Product,
    a: &Tensor,
    b: &Tensor,
    bias: Option<&Tensor>,
    g: &ConvGeom,
) -> Result<Tensor> {
    let dt = a.dtype();
    if matches!(dt, DType::F16 | DType::BF16) {
        let w = |t: &Tensor| t.to_dtype(DType::F32);
        let bias = bias.map(w).transpose()?;
        return raw_contiguous(p, &w(a)?, &w(b)?, bias.as_ref(), g)?.to_dtype(dt);
    }
    let shape = out_shape(p, g);
    let strides = crate::layout::Layout::contiguous(&shape).strides().to_vec();
    let out = Tensor::empty_strided(&shape, &strides, dt)?;
    if shape.contains(&0) {
        return Ok(out);
    }
    if a.numel() == 0 || b.numel() == 0 {
        // an empty operand (an empty batch or spatial dim of an operand the output does not
        // keep): every sum is empty, the output is zero plus the bias;
        // the kernels see non-empty operands only
        let out = Tensor::zeros(&shape, dt)?;
        return match bias {
            Some(b) => {
                let mut cs = vec![1i64; shape.len()];
                cs[1] = -1;
                out.add(&b.reshape(&cs)?)
            }
            None => Ok(out),
        };
    }
    let (a, b) = (a.contiguous()?, b.contiguous()?);
    let bias = bias.map(|t| t.contiguous()).transpose()?;
    let (od, ad, bd) = (out.data(), a.data(), b.data());
    let biasd = bias.as_ref().map(|t| t.data());
    match p {
        Product::Forward => crate::backend::conv::forward(&od, &ad, &bd, biasd.as_ref(), g, dt),
        Product::BackwardInput => {
            crate::backend::conv::backward_input(&od, &ad, &bd, biasd.as_ref(), g, dt)
        }
        Product::BackwardWeight => crate::backend::conv::backward_weight(&od, &ad, &bd, g, dt),
    }
    Ok(out)
}

/// The gradient of a per-channel bias of `c` channels: `g` summed over every dim but the
/// channel dim 1; zeros when `g` has no channels (the output of an input without channels,
/// see [`out_shape`]: PyTorch's bias gradient is then `zeros(c)`).
fn bias_grad(g: &Tensor, c: usize) -> Result<Tensor> {
    if g.shape()[1] != c {
        return Tensor::zeros(&[c], g.dtype());
    }
    let dims: Vec<i64> = (0..g.dim() as i64).filter(|&d| d != 1).collect();
    g.sum_dims(&dims, false)
}

/// Saves both operands (PyTorch's `ConvolutionBackward0` saves input and weight).
fn save2(a: &Tensor, b: &Tensor) -> impl FnOnce() -> Vec<SavedTensor> {
    let (a, b) = (a.clone(), b.clone());
    move || vec![SavedTensor::input(&a), SavedTensor::input(&b)]
}

fn inputs<'a>(a: &'a Tensor, b: &'a Tensor, bias: Option<&'a Tensor>) -> Vec<&'a Tensor> {
    let mut v = vec![a, b];
    v.extend(bias);
    v
}

/// One gradient per input: the bias gradient only when the node has a bias input.
fn with_bias(
    ctx: &crate::autograd::BackwardCtx<'_>,
    gs: [Option<Tensor>; 3],
) -> Result<crate::autograd::Grads> {
    let mut r = grads(gs)?;
    r.truncate(ctx.needs.len());
    Ok(r)
}

/// Backward of [`forward`]: `(x, w, bias)`.
struct ForwardBackward {
    name: &'static str,
    geom: ConvGeom,
    format: Format,
}

backward!(ForwardBackward, self.name, |self, ctx, g: Tensor| {
    let (x, w) = (&ctx.saved[0], &ctx.saved[1]);
    let geom = &self.geom;
    let f = self.format.of_grads(&g);
    // PyTorch's `convolution_backward(g, x, w)` is one node differentiable in `g`, `x` and
    // `w`: every gradient it returns requires grad when one of them does
    let link = |t: Tensor| undefined_grad_link(t, &[x, w], NAME2);
    let gx = ctx.grad_if(0, || {
        link(backward_input(
            &g,
            &w.conj_if_complex()?,
            None,
            geom,
            NAME2,
            f,
        )?)
    })?;
    let gw = ctx.grad_if(1, || {
        link(backward_weight(&x.conj_if_complex()?, &g, geom, f)?)
    })?;
    let gb = ctx.grad_if(2, || link(bias_grad(&g, geom.c_out)?))?;
    with_bias(ctx, [gx, gw, gb])
});

/// Backward of [`backward_input`]: `(gy, w, bias)`.
struct InputBackward {
    name: &'static str,
    geom: ConvGeom,
    format: Format,
}

backward!(InputBackward, self.name, |self, ctx, h: Tensor| {
    let (gy, w) = (&ctx.saved[0], &ctx.saved[1]);
    let geom = &self.geom;
    let f = self.format.of_grads(&h);
    // as the backward of a transposed convolution (node `NAME`), PyTorch's
    // `convolution_backward(h, gy, w)`: linked to `gy` and `w` like [`ForwardBackward`]
    let link = |t: Tensor| {
        if self.name == NAME {
            undefined_grad_link(t, &[gy, w], NAME2)
        } else {
            Ok(t)
        }
    };
    let ggy = ctx.grad_if(0, || {
        link(forward(&h, &w.conj_if_complex()?, None, geom, NAME2, f)?)
    })?;
    let gw = ctx.grad_if(1, || {
        link(backward_weight(&h, &gy.conj_if_complex()?, geom, f)?)
    })?;
    let gb = ctx.grad_if(2, || link(bias_grad(&h, geom.c_in)?))?;
    with_bias(ctx, [ggy, gw, gb])
});

/// Backward of [`backward_weight`]: `(x, gy)`.
struct WeightBackward {
    geom: ConvGeom,
    format: Format,
}

backward!(WeightBackward, NAME2, |self, ctx, h: Tensor| {
    let (x, gy) = (&ctx.saved[0], &ctx.saved[1]);
    let geom = &self.geom;
    let f = self.format.of_grads(&h);
    let gx = ctx.grad_if(0, || {
        backward_input(&gy.conj_if_complex()?, &h, None, geom, NAME2, f)
    })?;
    let ggy = ctx.grad_if(1, || {
        forward(&x.conj_if_complex()?, &h, None, geom, NAME2, f)
    })?;
    grads([gx, ggy])
});

/// PyTorch's node name of a convolution (or transposed convolution).
pub(crate) const NAME: &str = "ConvolutionBackward0";
/// PyTorch's node name of a convolution's backward when differentiated again.
const NAME2: &str = "ConvolutionBackwardBackward0";

/// `conv(x, w) + bias` over `geom` (validated by the caller) in format `format`, recorded
/// as node `name`.
pub(crate) fn forward(
    x: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    geom: &ConvGeom,
    name: &'static str,
    format: Format,
) -> Result<Tensor> {
    let out = raw(Product::Forward, x, w, bias, geom, format)?;
    record(
        &[&out],
        &inputs(x, w, bias),
        save2(x, w),
        ForwardBackward {
            name,
            geom: geom.clone(),
            format,
        },
    )?;
    Ok(out)
}

/// The transposed convolution `conv^T(gy, w) + bias` over `geom` (the input gradient of
/// [`forward`]) in format `format`, recorded as node `name`.
pub(crate) fn backward_input(
    gy: &Tensor,
    w: &Tensor,
    bias: Option<&Tensor>,
    geom: &ConvGeom,
    name: &'static str,
    format: Format,
) -> Result<Tensor> {
    let out = raw(Product::BackwardInput, gy, w, bias, geom, format)?;
    record(
        &[&out],
        &inputs(gy, w, bias),
        save2(gy, w),
        InputBackward {
            name,
            geom: geom.clone(),
            format,
        },
    )?;
    Ok(out)
}

/// The weight gradient of [`forward`] for input `x` and output gradient `gy`, in format
/// `format`.
pub(crate) fn backward_weight(
    x: &Tensor,
    gy: &Tensor,
    geom: &ConvGeom,
    format: Format,
) -> Result<Tensor> {
    let out = raw(Product::BackwardWeight, x, gy, None, geom, format)?;
    record(
        &[&out],
        &[x, gy],
        save2(x, gy),
        WeightBackward {
            geom: geom.clone(),
            format,
        },
    )?;
    Ok(out)
}
