//! Pooling and reshaping layers without parameters: [`MaxPool2d`], [`AvgPool2d`],
//! [`AdaptiveAvgPool2d`] and [`Flatten`], printed like their `torch.nn` `repr`.

use super::{Forward, Module, Visitor};
use crate::tensor::dims::geometry_saturated as geo;
use crate::{Dim, IntoGeometry, MaybeDim, Result, Tensor};

/// A size printed as PyTorch prints an int or a pair.
fn py_size(v: &[i64]) -> String {
    match v {
        [a] => a.to_string(),
        [a, b] => format!("({a}, {b})"),
        _ => format!("{v:?}"),
    }
}

/// `stride` as given, or the kernel size when absent (empty).
fn or_kernel(stride: Vec<i64>, kernel_size: &[i64]) -> Vec<i64> {
    if stride.is_empty() {
        kernel_size.to_vec()
    } else {
        stride
    }
}

/// `torch.nn.MaxPool2d(kernel_size, stride, padding, dilation, ceil_mode)`: sizes are one
/// value or two; `stride` `None` is the kernel size.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Forward, MaxPool2d}};
/// let p = MaxPool2d::new(2, None, 0, 1, false);
/// assert_eq!(p.to_string(), "MaxPool2d(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)");
/// assert_eq!(p.forward(&Tensor::ones(&[1, 1, 4, 4], DType::F32)?)?.shape(), vec![1, 1, 2, 2]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct MaxPool2d {
    kernel_size: Vec<i64>,
    stride: Vec<i64>,
    padding: Vec<i64>,
    dilation: Vec<i64>,
    ceil_mode: bool,
}

impl MaxPool2d {
    /// The layer (sizes of any integer type, one or two each, [`IntoGeometry`]; `stride`
    /// `None` or `()`: the kernel size); sizes are checked at the first forward, as in
    /// PyTorch (one above `i64::MAX` is kept as `i64::MAX`, refused there).
    pub fn new(
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        dilation: impl IntoGeometry,
        ceil_mode: bool,
    ) -> MaxPool2d {
        let kernel_size = geo(&kernel_size);
        MaxPool2d {
            stride: or_kernel(geo(&stride), &kernel_size),
            kernel_size,
            padding: geo(&padding),
            dilation: geo(&dilation),
            ceil_mode,
        }
    }
}

impl Forward for MaxPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.max_pool2d(
            &self.kernel_size[..],
            &self.stride[..],
            &self.padding[..],
            &self.dilation[..],
            self.ceil_mode,
        )
    }
}

impl Module for MaxPool2d {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn extra_repr(&self) -> String {
        format!(
            "kernel_size={}, stride={}, padding={}, dilation={}, ceil_mode={}",
            py_size(&self.kernel_size),
            py_size(&self.stride),
            py_size(&self.padding),
            py_size(&self.dilation),
            super::walk::py_bool(self.ceil_mode)
        )
    }
}

/// `torch.nn.AvgPool2d(kernel_size, stride, padding, ceil_mode, count_include_pad,
/// divisor_override)`: sizes are one value or two; `stride` `None` is the kernel size.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{AvgPool2d, Forward}};
/// let p = AvgPool2d::new(2, None, 0, false, true, None);
/// assert_eq!(p.to_string(), "AvgPool2d(kernel_size=2, stride=2, padding=0)");
/// assert_eq!(p.forward(&Tensor::ones(&[1, 4, 4], DType::F32)?)?.to_vec::<f32>()?, vec![1.0; 4]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct AvgPool2d {
    kernel_size: Vec<i64>,
    stride: Vec<i64>,
    padding: Vec<i64>,
    ceil_mode: bool,
    count_include_pad: bool,
    divisor_override: Option<i64>,
}

impl AvgPool2d {
    /// The layer (sizes of any integer type, one or two each, [`IntoGeometry`]; `stride`
    /// `None` or `()`: the kernel size); sizes are checked at the first forward, as in
    /// PyTorch (one above `i64::MAX` is kept as `i64::MAX`, refused there).
    pub fn new(
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        ceil_mode: bool,
        count_include_pad: bool,
        divisor_override: impl MaybeDim,
    ) -> AvgPool2d {
        let kernel_size = geo(&kernel_size);
        let divisor_override = divisor_override.to_opt_i64().map(|d| d.unwrap_or(i64::MAX));
        AvgPool2d {
            stride: or_kernel(geo(&stride), &kernel_size),
            kernel_size,
            padding: geo(&padding),
            ceil_mode,
            count_include_pad,
            divisor_override,
        }
    }
}

impl Forward for AvgPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.avg_pool2d(
            &self.kernel_size[..],
            &self.stride[..],
            &self.padding[..],
            self.ceil_mode,
            self.count_include_pad,
            self.divisor_override,
        )
    }
}

impl Module for AvgPool2d {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn extra_repr(&self) -> String {
        format!(
            "kernel_size={}, stride={}, padding={}",
            py_size(&self.kernel_size),
            py_size(&self.stride),
            py_size(&self.padding)
        )
    }
}

/// `torch.nn.AdaptiveAvgPool2d(output_size)` (one size or two).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{AdaptiveAvgPool2d, Forward}};
/// let p = AdaptiveAvgPool2d::new(1);
/// assert_eq!(p.to_string(), "AdaptiveAvgPool2d(output_size=1)");
/// assert_eq!(p.forward(&Tensor::ones(&[2, 3, 5, 5], DType::F32)?)?.shape(), vec![2, 3, 1, 1]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct AdaptiveAvgPool2d {
    output_size: Vec<i64>,
}

impl AdaptiveAvgPool2d {
    /// The layer.
    pub fn new(output_size: impl IntoGeometry) -> AdaptiveAvgPool2d {
        AdaptiveAvgPool2d {
            output_size: geo(&output_size),
        }
    }
}

impl Forward for AdaptiveAvgPool2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.adaptive_avg_pool2d(&self.output_size[..])
    }
}

impl Module for AdaptiveAvgPool2d {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn extra_repr(&self) -> String {
        format!("output_size={}", py_size(&self.output_size))
    }
}

/// `torch.nn.Flatten(start_dim, end_dim)` (PyTorch's defaults: `1`, `-1`).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Flatten, Forward}};
/// let f = Flatten::new(1, -1);
/// assert_eq!(f.to_string(), "Flatten(start_dim=1, end_dim=-1)");
/// assert_eq!(f.forward(&Tensor::ones(&[2, 3, 4], DType::F32)?)?.shape(), vec![2, 12]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Flatten {
    start_dim: i64,
    end_dim: i64,
}

impl Flatten {
    /// The layer.
    pub fn new(start_dim: impl Dim, end_dim: impl Dim) -> Flatten {
        // above i64::MAX (a u64/usize): kept as i64::MAX, out of range at the forward
        Flatten {
            start_dim: start_dim.to_i64().unwrap_or(i64::MAX),
            end_dim: end_dim.to_i64().unwrap_or(i64::MAX),
        }
    }
}

impl Forward for Flatten {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.flatten(self.start_dim, self.end_dim)
    }
}

impl Module for Flatten {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn extra_repr(&self) -> String {
        format!("start_dim={}, end_dim={}", self.start_dim, self.end_dim)
    }
}

super::module::display_as_repr!(MaxPool2d, AvgPool2d, AdaptiveAvgPool2d, Flatten);
