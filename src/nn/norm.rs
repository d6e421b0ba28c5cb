//! Normalization layers: [`BatchNorm1d`], [`BatchNorm2d`] (running statistics as buffers under
//! PyTorch's keys, updated in place in training mode) and [`GroupNorm`], each initialised like
//! its `torch.nn` counterpart and printed like its `repr`.

use super::walk::{py_bool, py_float};
use super::{Forward, Module, Visitor};
use crate::autograd::no_grad;
use crate::tensor::dims::{dim, sizes};
use crate::{DType, Dim, Result, Tensor, bail};

/// The state shared by the batch-norm layers (PyTorch's `_BatchNorm`).
struct BatchNorm {
    num_features: usize,
    eps: f64,
    momentum: Option<f64>,
    weight: Option<Tensor>,
    bias: Option<Tensor>,
    running_mean: Option<Tensor>,
    running_var: Option<Tensor>,
    num_batches_tracked: Option<Tensor>,
    training: bool,
}

impl BatchNorm {
    fn new(
        num_features: usize,
        eps: f64,
        momentum: Option<f64>,
        affine: bool,
        track_running_stats: bool,
        dtype: DType,
    ) -> Result<BatchNorm> {
        let param = |v: f64| -> Result<Option<Tensor>> {
            if affine {
                Ok(Some(
                    Tensor::full(&[num_features], v, dtype)?.requires_grad_(true)?,
                ))
            } else {
                Ok(None)
            }
        };
        let (rm, rv, nbt) = if track_running_stats {
            (
                Some(Tensor::zeros(&[num_features], dtype)?),
                Some(Tensor::ones(&[num_features], dtype)?),
                Some(Tensor::zeros((), DType::I64)?),
            )
        } else {
            (None, None, None)
        };
        Ok(BatchNorm {
            num_features,
            eps,
            momentum,
            weight: param(1.0)?,
            bias: param(0.0)?,
            running_mean: rm,
            running_var: rv,
            num_batches_tracked: nbt,
            training: true,
        })
    }

    /// PyTorch's `_BatchNorm.forward`: in training with running statistics the batch counter
    /// is bumped and the momentum is `1 / num_batches_tracked` when `momentum` is `None`.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut factor = self.momentum.unwrap_or(0.0);
        if self.training
            && let Some(n) = &self.num_batches_tracked
        {
            let count = {
                let _g = no_grad();
                n.add_(1)?;
                n.item::<i64>()?
            };
            if self.momentum.is_none() {
                factor = 1.0 / count as f64;
            }
        }
        let use_batch = self.training || self.running_mean.is_none();
        let (rm, rv) = if !self.training || self.num_batches_tracked.is_some() {
            (self.running_mean.as_ref(), self.running_var.as_ref())
        } else {
            (None, None)
        };
        x.batch_norm(
            rm,
            rv,
            self.weight.as_ref(),
            self.bias.as_ref(),
            use_batch,
            factor,
            self.eps,
        )
    }

    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        if let Some(w) = &self.weight {
            v.parameter("weight", w);
        }
        if let Some(b) = &self.bias {
            v.parameter("bias", b);
        }
        for (name, t) in [
            ("running_mean", &self.running_mean),
            ("running_var", &self.running_var),
            ("num_batches_tracked", &self.num_batches_tracked),
        ] {
            if let Some(t) = t {
                v.buffer(name, t, true);
            }
        }
    }

    fn extra_repr(&self) -> String {
        let momentum = self.momentum.map_or_else(|| "None".to_string(), py_float);
        format!(
            "{}, eps={}, momentum={}, affine={}, bias={}, track_running_stats={}",
            self.num_features,
            py_float(self.eps),
            momentum,
            py_bool(self.weight.is_some()),
            py_bool(self.bias.is_some()),
            py_bool(self.running_mean.is_some())
        )
    }
}

macro_rules! batch_norm_layer {
    ($name:ident, $dims:expr, $what:expr, $doc:literal, $example:literal) => {
        #[doc = $doc]
        ///
        /// `momentum` `None` averages cumulatively (`1 / num_batches_tracked`); without
        /// `track_running_stats` the batch statistics normalize in both modes.
        ///
        /// ```
        #[doc = $example]
        /// # Ok::<(), tapegrad::Error>(())
        /// ```
        pub struct $name(BatchNorm);

        impl $name {
            /// `$name(num_features, eps, momentum, affine, track_running_stats)` (PyTorch's
            /// defaults: `1e-5`, `Some(0.1)`, `true`, `true`); `num_features` of any integer
            /// type (negative: PyTorch's tensor-creation error).
            pub fn new(
                num_features: impl Dim,
                eps: f64,
                momentum: Option<f64>,
                affine: bool,
                track_running_stats: bool,
                dtype: DType,
            ) -> Result<$name> {
                let name = stringify!($name);
                let num_features = sizes([dim(num_features, name)?], name)?[0];
                BatchNorm::new(
                    num_features,
                    eps,
                    momentum,
                    affine,
                    track_running_stats,
                    dtype,
                )
                .map($name)
            }
            /// The running mean buffer (`running_mean`), if tracked.
            pub fn running_mean(&self) -> Option<&Tensor> {
                self.0.running_mean.as_ref()
            }
            /// The running variance buffer (`running_var`), if tracked.
            pub fn running_var(&self) -> Option<&Tensor> {
                self.0.running_var.as_ref()
            }
            /// The batch counter buffer (`num_batches_tracked`, i64), if tracked.
            pub fn num_batches_tracked(&self) -> Option<&Tensor> {
                self.0.num_batches_tracked.as_ref()
            }
            /// The scale (`weight`), if affine.
            pub fn weight(&self) -> Option<&Tensor> {
                self.0.weight.as_ref()
            }
            /// The shift (`bias`), if affine.
            pub fn bias(&self) -> Option<&Tensor> {
                self.0.bias.as_ref()
            }
        }

        impl Forward for $name {
            fn forward(&self, x: &Tensor) -> Result<Tensor> {
                if !$dims.contains(&x.dim()) {
                    bail!(
                        InvalidArgument,
                        stringify!($name),
                        "expected {} input (got {}D input)",
                        $what,
                        x.dim()
                    );
                }
                self.0.forward(x)
            }
        }

        impl Module for $name {
            fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
                self.0.visit(v)
            }
            fn set_training(&mut self, on: bool) {
                self.0.training = on;
            }
            fn extra_repr(&self) -> String {
                self.0.extra_repr()
            }
        }
    };
}

batch_norm_layer!(
    BatchNorm1d,
    [2usize, 3],
    "2D or 3D",
    "Batch normalization of `[N, C]` or `[N, C, L]` inputs over every dim but the channel (`torch.nn.BatchNorm1d`): affine `weight` (ones) and `bias` (zeros), buffers `running_mean` (zeros), `running_var` (ones) and `num_batches_tracked` (i64 0).",
    "# use tapegrad::{Tensor, DType, nn::{BatchNorm1d, Forward, Module}};
let bn = BatchNorm1d::new(2, 1e-5, Some(0.1), true, true, DType::F64)?;
bn.forward(&Tensor::from_vec(vec![1.0f64, 3.0, 2.0, 6.0], &[2, 2])?)?;
let rm = bn.running_mean().unwrap().to_vec::<f64>()?;
assert!((rm[0] - 0.15).abs() < 1e-12 && (rm[1] - 0.45).abs() < 1e-12);
assert_eq!(bn.num_batches_tracked().unwrap().item::<i64>()?, 1);"
);

batch_norm_layer!(
    BatchNorm2d,
    [4usize],
    "4D",
    "Batch normalization of `[N, C, H, W]` inputs over every dim but the channel (`torch.nn.BatchNorm2d`): affine `weight` (ones) and `bias` (zeros), buffers `running_mean` (zeros), `running_var` (ones) and `num_batches_tracked` (i64 0).",
    "# use tapegrad::{Tensor, DType, nn::{BatchNorm2d, Forward, Module}};
let mut bn = BatchNorm2d::new(3, 1e-5, Some(0.1), true, true, DType::F32)?;
assert_eq!(bn.to_string(), \"BatchNorm2d(3, eps=1e-05, momentum=0.1, affine=True, bias=True, track_running_stats=True)\");
bn.eval();
let y = bn.forward(&Tensor::ones(&[1, 3, 2, 2], DType::F32)?)?;
assert!((y.to_vec::<f32>()?[0] - 1.0).abs() < 1e-5);"
);

/// Group normalization of `[N, C, *]` inputs (`torch.nn.GroupNorm`): `num_groups` groups of
/// channels, affine `weight` (ones) and `bias` (zeros) per channel.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Forward, GroupNorm}};
/// let gn = GroupNorm::new(2, 4, 1e-5, true, DType::F32)?;
/// assert_eq!(gn.to_string(), "GroupNorm(2, 4, eps=1e-05, affine=True, bias=True)");
/// assert_eq!(gn.forward(&Tensor::ones(&[2, 4, 3], DType::F32)?)?.shape(), vec![2, 4, 3]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct GroupNorm {
    /// The number of channel groups (kept as given: a negative one is refused by the forward,
    /// as in PyTorch).
    pub num_groups: i64,
    /// The number of channels.
    pub num_channels: usize,
    /// Added to the variance (PyTorch default `1e-5`).
    pub eps: f64,
    /// Scale, `[num_channels]` (None without `affine`).
    pub weight: Option<Tensor>,
    /// Shift, `[num_channels]` (None without `affine`).
    pub bias: Option<Tensor>,
}

impl GroupNorm {
    /// `GroupNorm(num_groups, num_channels, eps, affine)` (any integer types); errors unless
    /// `num_groups` divides `num_channels` (a negative `num_channels`: PyTorch's
    /// tensor-creation error; a negative `num_groups` dividing it is refused at the forward,
    /// as in PyTorch).
    pub fn new(
        num_groups: impl Dim,
        num_channels: impl Dim,
        eps: f64,
        affine: bool,
        dtype: DType,
    ) -> Result<GroupNorm> {
        let op = "GroupNorm";
        let (num_groups, c) = (dim(num_groups, op)?, dim(num_channels, op)?);
        if num_groups == 0 || c % num_groups != 0 {
            bail!(
                InvalidArgument,
                "GroupNorm",
                "num_channels must be divisible by num_groups"
            );
        }
        let num_channels = sizes([c], op)?[0];
        let (weight, bias) = if affine {
            (
                Some(Tensor::ones(&[num_channels], dtype)?.requires_grad_(true)?),
                Some(Tensor::zeros(&[num_channels], dtype)?.requires_grad_(true)?),
            )
        } else {
            (None, None)
        };
        Ok(GroupNorm {
            num_groups,
            num_channels,
            eps,
            weight,
            bias,
        })
    }
}

impl Forward for GroupNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.group_norm(
            self.num_groups,
            self.weight.as_ref(),
            self.bias.as_ref(),
            self.eps,
        )
    }
}

impl Module for GroupNorm {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        if let Some(w) = &self.weight {
            v.parameter("weight", w);
        }
        if let Some(b) = &self.bias {
            v.parameter("bias", b);
        }
    }
    fn extra_repr(&self) -> String {
        format!(
            "{}, {}, eps={}, affine={}, bias={}",
            self.num_groups,
            self.num_channels,
            py_float(self.eps),
            py_bool(self.weight.is_some()),
            py_bool(self.bias.is_some())
        )
    }
}

super::module::display_as_repr!(BatchNorm1d, BatchNorm2d, GroupNorm);
