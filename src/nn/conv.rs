//! Convolution layers: [`Conv1d`], [`Conv2d`], [`ConvTranspose2d`], initialised like their
//! `torch.nn` counterparts (weight kaiming_uniform with `a = sqrt(5)`, bias `U(-1/sqrt(fan_in),
//! 1/sqrt(fan_in))` with the weight's fan-in) and printed like their `repr`. Parameters are
//! `weight` and `bias`, as in a PyTorch `state_dict`.

use super::walk::py_bool;
use super::{Forward, Module, Visitor, init};
use crate::tensor::dims::{dim, geometry, sizes};
use crate::{
    ConvOptions, ConvPadding, ConvTransposeOptions, DType, Dim, IntoGeometry, Result, Tensor, bail,
};

/// A PyTorch tuple: `(3,)`, `(3, 3)`.
fn tuple(v: &[i64]) -> String {
    match v {
        [a] => format!("({a},)"),
        _ => format!(
            "({})",
            v.iter()
                .map(|a| a.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    }
}

/// `v` for `n` dims (a single value repeated).
fn expand(v: &[i64], n: usize) -> Vec<i64> {
    if v.len() == 1 {
        vec![v[0]; n]
    } else {
        v.to_vec()
    }
}

/// The shared parameters and checks of every convolution layer.
struct Core {
    weight: Tensor,
    bias: Option<Tensor>,
    in_channels: usize,
    out_channels: usize,
    kernel: Vec<usize>,
}

/// The weight and bias of a convolution layer, checked in PyTorch's `_ConvNd` order: groups
/// positive, dividing both channel counts, then the weight's shape (a negative size is the
/// tensor creation's error).
#[allow(clippy::too_many_arguments)]
fn make(
    name: &'static str,
    nd: usize,
    in_channels: impl Dim,
    out_channels: impl Dim,
    kernel_size: impl IntoGeometry,
    groups: i64,
    transposed: bool,
    bias: bool,
    dtype: DType,
) -> Result<Core> {
    let (c_in, c_out) = (dim(in_channels, name)?, dim(out_channels, name)?);
    let kernel_size = geometry(kernel_size, name)?;
    if groups <= 0 {
        bail!(InvalidArgument, name, "groups must be a positive integer");
    }
    if c_in % groups != 0 {
        bail!(
            InvalidArgument,
            name,
            "in_channels must be divisible by groups"
        );
    }
    if c_out % groups != 0 {
        bail!(
            InvalidArgument,
            name,
            "out_channels must be divisible by groups"
        );
    }
    let kernel: Vec<i64> = match kernel_size.len() {
        1 => vec![kernel_size[0]; nd],
        n if n == nd => kernel_size.to_vec(),
        _ => bail!(
            InvalidArgument,
            name,
            "kernel_size must be one integer or {} integers, got {:?}",
            nd,
            &kernel_size[..]
        ),
    };
    let mut shape = if transposed {
        vec![c_in, c_out.div_euclid(groups)]
    } else {
        vec![c_out, c_in.div_euclid(groups)]
    };
    shape.extend(&kernel);
    let shape = sizes(&shape, name)?;
    // every entry checked non-negative above
    let (in_channels, out_channels) = (c_in as usize, c_out as usize);
    let kernel: Vec<usize> = kernel.iter().map(|&k| k as usize).collect();
    let weight = init::kaiming_uniform(&shape, 5f64.sqrt(), dtype)?.requires_grad_(true)?;
    let fan_in = shape[1] * kernel.iter().product::<usize>();
    let bound = if fan_in > 0 {
        1.0 / (fan_in as f64).sqrt()
    } else {
        0.0
    };
    let bias = if bias {
        Some(init::uniform([out_channels], -bound, bound, dtype)?.requires_grad_(true)?)
    } else {
        None
    };
    Ok(Core {
        weight,
        bias,
        in_channels,
        out_channels,
        kernel,
    })
}

/// PyTorch's `_ConvNd.extra_repr`.
fn repr(
    c: &Core,
    stride: &[i64],
    padding: &str,
    dilation: &[i64],
    out_pad: Option<&[i64]>,
    groups: i64,
) -> String {
    let n = c.kernel.len();
    let k: Vec<i64> = c.kernel.iter().map(|&a| a as i64).collect();
    let mut s = format!(
        "{}, {}, kernel_size={}, stride={}",
        c.in_channels,
        c.out_channels,
        tuple(&k),
        tuple(&expand(stride, n))
    );
    if !padding.is_empty() {
        s += &format!(", padding={padding}");
    }
    let dil = expand(dilation, n);
    if dil.iter().any(|&d| d != 1) {
        s += &format!(", dilation={}", tuple(&dil));
    }
    if let Some(op) = out_pad {
        let op = expand(op, n);
        if op.iter().any(|&d| d != 0) {
            s += &format!(", output_padding={}", tuple(&op));
        }
    }
    if groups != 1 {
        s += &format!(", groups={groups}");
    }
    if c.bias.is_none() {
        s += &format!(", bias={}", py_bool(false));
    }
    s
}

/// The `padding=` part of a convolution's repr (empty when all zero).
fn padding_repr(p: &ConvPadding, n: usize) -> String {
    match p {
        ConvPadding::Same => "same".into(),
        ConvPadding::Valid => "valid".into(),
        ConvPadding::Explicit(s) => {
            let v = expand(&s.0, n);
            if v.iter().all(|&a| a == 0) {
                String::new()
            } else {
                tuple(&v)
            }
        }
    }
}

macro_rules! conv_layer {
    ($(#[$doc:meta])* $name:ident, $nd:expr, $method:ident) => {
        $(#[$doc])*
        pub struct $name {
            /// `[out_channels, in_channels / groups, k..]`.
            pub weight: Tensor,
            /// `[out_channels]`.
            pub bias: Option<Tensor>,
            /// Stride, padding, dilation and groups of the forward.
            pub options: ConvOptions,
            in_channels: usize,
            out_channels: usize,
            kernel: Vec<usize>,
        }

        impl $name {
            /// `torch.nn.` followed by this type's name, with `kernel_size` (one value or one
            /// per dim, any integer type) and the forward's `options`; errors
            /// (InvalidArgument) when `groups` is not positive or does not divide both channel
            /// counts, or a size is negative (PyTorch's messages).
            pub fn new(
                in_channels: impl Dim,
                out_channels: impl Dim,
                kernel_size: impl IntoGeometry,
                options: ConvOptions,
                bias: bool,
                dtype: DType,
            ) -> Result<$name> {
                let name = stringify!($name);
                if options.padding == ConvPadding::Same
                    && options.stride.0.iter().any(|&s| s != 1)
                {
                    bail!(
                        InvalidArgument,
                        name,
                        "padding='same' is not supported for strided convolutions"
                    );
                }
                let c = make(
                    name, $nd, in_channels, out_channels, kernel_size, options.groups, false,
                    bias, dtype,
                )?;
                Ok($name {
                    weight: c.weight,
                    bias: c.bias,
                    options,
                    in_channels: c.in_channels,
                    out_channels: c.out_channels,
                    kernel: c.kernel,
                })
            }

            fn core(&self) -> Core {
                Core {
                    weight: self.weight.clone(),
                    bias: self.bias.clone(),
                    in_channels: self.in_channels,
                    out_channels: self.out_channels,
                    kernel: self.kernel.clone(),
                }
            }
        }

        impl Forward for $name {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                x.$method(&self.weight, self.bias.as_ref(), &self.options)
            }
        }

        impl Module for $name {
            fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
                v.parameter("weight", &self.weight);
                if let Some(b) = &self.bias {
                    v.parameter("bias", b);
                }
            }
            fn extra_repr(&self) -> String {
                let o = &self.options;
                repr(
                    &self.core(),
                    &o.stride.0,
                    &padding_repr(&o.padding, $nd),
                    &o.dilation.0,
                    None,
                    o.groups,
                )
            }
        }
    };
}

conv_layer!(
    /// `torch.nn.Conv1d`: input `[N, C_in, L]` (or unbatched).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, ConvOptions, nn::{Conv1d, Forward}};
    /// let c = Conv1d::new(2, 4, &[3], ConvOptions { padding: 1.into(), ..Default::default() }, true, DType::F32)?;
    /// assert_eq!(c.forward(&Tensor::ones(&[1, 2, 5], DType::F32)?)?.shape(), vec![1, 4, 5]);
    /// assert_eq!(c.to_string(), "Conv1d(2, 4, kernel_size=(3,), stride=(1,), padding=(1,))");
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    Conv1d,
    1,
    conv1d
);

conv_layer!(
    /// `torch.nn.Conv2d`: input `[N, C_in, H, W]` (or unbatched).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, ConvOptions, nn::{Conv2d, Forward}};
    /// let c = Conv2d::new(1, 16, 3, ConvOptions::default().padding(1), true, DType::F32)?;
    /// assert_eq!(c.forward(&Tensor::ones(&[2, 1, 8, 8], DType::F32)?)?.shape(), vec![2, 16, 8, 8]);
    /// assert_eq!(c.to_string(), "Conv2d(1, 16, kernel_size=(3, 3), stride=(1, 1), padding=(1, 1))");
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    Conv2d,
    2,
    conv2d
);

/// `torch.nn.ConvTranspose2d`: input `[N, C_in, H, W]` (or unbatched), weight `[C_in,
/// C_out / groups, kH, kW]`.
///
/// ```
/// # use tapegrad::{Tensor, DType, ConvTransposeOptions, nn::{ConvTranspose2d, Forward}};
/// let o = ConvTransposeOptions {
///     stride: 2.into(),
///     padding: 1.into(),
///     output_padding: 1.into(),
///     ..Default::default()
/// };
/// let c = ConvTranspose2d::new(4, 2, &[3], o, true, DType::F32)?;
/// assert_eq!(c.forward(&Tensor::ones(&[1, 4, 5, 5], DType::F32)?)?.shape(), vec![1, 2, 10, 10]);
/// assert_eq!(
///     c.to_string(),
///     "ConvTranspose2d(4, 2, kernel_size=(3, 3), stride=(2, 2), padding=(1, 1), output_padding=(1, 1))"
/// );
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct ConvTranspose2d {
    /// `[in_channels, out_channels / groups, kH, kW]`.
    pub weight: Tensor,
    /// `[out_channels]`.
    pub bias: Option<Tensor>,
    /// Stride, padding, output padding, groups and dilation of the forward.
    pub options: ConvTransposeOptions,
    core: Core,
}

impl ConvTranspose2d {
    /// `torch.nn.ConvTranspose2d(in_channels, out_channels, kernel_size, ...)` (any integer
    /// types); errors (InvalidArgument) as [`Conv2d::new`].
    pub fn new(
        in_channels: impl Dim,
        out_channels: impl Dim,
        kernel_size: impl IntoGeometry,
        options: ConvTransposeOptions,
        bias: bool,
        dtype: DType,
    ) -> Result<ConvTranspose2d> {
        let c = make(
            "ConvTranspose2d",
            2,
            in_channels,
            out_channels,
            kernel_size,
            options.groups,
            true,
            bias,
            dtype,
        )?;
        Ok(ConvTranspose2d {
            weight: c.weight.clone(),
            bias: c.bias.clone(),
            options,
            core: c,
        })
    }
}

impl Forward for ConvTranspose2d {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.conv_transpose2d(&self.weight, self.bias.as_ref(), &self.options)
    }
}

impl Module for ConvTranspose2d {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.parameter("weight", &self.weight);
        if let Some(b) = &self.bias {
            v.parameter("bias", b);
        }
    }
    fn extra_repr(&self) -> String {
        let o = &self.options;
        let pad = expand(&o.padding.0, 2);
        let pad = if pad.iter().all(|&a| a == 0) {
            String::new()
        } else {
            tuple(&pad)
        };
        let c = Core {
            bias: self.bias.clone(),
            weight: self.weight.clone(),
            in_channels: self.core.in_channels,
            out_channels: self.core.out_channels,
            kernel: self.core.kernel.clone(),
        };
        repr(
            &c,
            &o.stride.0,
            &pad,
            &o.dilation.0,
            Some(&o.output_padding.0),
            o.groups,
        )
    }
}

super::module::display_as_repr!(Conv1d, Conv2d, ConvTranspose2d);
