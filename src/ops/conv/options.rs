//! The keyword arguments of the convolutions: [`Spatial`] (PyTorch's `int | tuple` per spatial
//! dim), [`ConvPadding`] (ints, `"same"`, `"valid"`), [`ConvOptions`] and
//! [`ConvTransposeOptions`].

use crate::{Dim, IntoGeometry, Result, bail};
use smallvec::SmallVec;

/// One integer for every spatial dim, or one per dim (PyTorch's `int | tuple` arguments:
/// `stride`, `padding`, `dilation`, `output_padding`; `interpolate`'s `size`), built from any
/// [`IntoGeometry`] (`2.into()`, `[1usize, 2].into()`, `(&v).into()` for a `Vec<i64>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Spatial(pub Vec<i64>);

/// Any [`IntoGeometry`]: one integer of any [`Dim`](crate::Dim) type (`2`, `2usize`) or any
/// list of them (`[1, 2]`, `&[1i64, 2][..]`, `vec![1u32, 2]`). An infallible conversion, so a
/// `u64`/`usize` above `i64::MAX` is kept as `i64::MAX` (a stride that large acts as the true
/// value would; every other argument that large is refused by the op).
impl<G: IntoGeometry> From<G> for Spatial {
    fn from(v: G) -> Self {
        Spatial(crate::tensor::dims::geometry_saturated(&v))
    }
}

impl Spatial {
    /// The values for `nd` spatial dims (a single value repeated), PyTorch's
    /// `expand_param_if_needed`.
    pub(crate) fn expand(
        &self,
        nd: usize,
        name: &str,
        op: &'static str,
    ) -> Result<SmallVec<[i64; 3]>> {
        match self.0.len() {
            1 => Ok(smallvec::smallvec![self.0[0]; nd]),
            n if n == nd => Ok(self.0.iter().copied().collect()),
            _ => bail!(
                InvalidArgument,
                op,
                "expected {} to be a single integer value or a list of {} values to match the \
                 convolution dimensions, but got {}={:?}",
                name,
                nd,
                name,
                self.0
            ),
        }
    }
}

/// The `padding` of a convolution: explicit per-dim amounts, `"same"` (output size = input
/// size; stride 1 only; an odd total puts the extra element after) or `"valid"` (none).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ConvPadding {
    /// Zeros added on both sides of each spatial dim.
    Explicit(Spatial),
    /// `padding="same"`.
    Same,
    /// `padding="valid"`.
    Valid,
}

impl<T: Into<Spatial>> From<T> for ConvPadding {
    fn from(v: T) -> Self {
        ConvPadding::Explicit(v.into())
    }
}

/// PyTorch's string form: `"same"`, `"valid"` (an `InvalidArgument` error for any other).
impl std::str::FromStr for ConvPadding {
    type Err = crate::Error;
    fn from_str(s: &str) -> Result<ConvPadding> {
        match s {
            "same" => Ok(ConvPadding::Same),
            "valid" => Ok(ConvPadding::Valid),
            _ => bail!(InvalidArgument, "conv", "Invalid padding string: '{}'", s),
        }
    }
}

/// Options of [`Tensor::conv1d`](crate::Tensor::conv1d), [`Tensor::conv2d`](crate::Tensor::conv2d)
/// and [`Tensor::conv3d`](crate::Tensor::conv3d) (PyTorch's defaults: stride 1, padding 0,
/// dilation 1, groups 1).
///
/// ```
/// # use tapegrad::{ConvOptions, ConvPadding};
/// let o = ConvOptions { stride: 2.into(), padding: [1, 0].into(), groups: 2, ..Default::default() };
/// assert_eq!(o.padding, ConvPadding::Explicit([1, 0].into()));
/// let same = ConvOptions { padding: "same".parse()?, ..Default::default() };
/// assert_eq!(same.padding, ConvPadding::Same);
/// // the builder form, any integer type
/// let b = ConvOptions::default().stride(2usize).padding([1i64, 0]).groups(2u32);
/// assert_eq!(b, o);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvOptions {
    /// Step between output positions.
    pub stride: Spatial,
    /// Implicit zero padding.
    pub padding: ConvPadding,
    /// Spacing between kernel taps.
    pub dilation: Spatial,
    /// Channel groups (`c_in` and `c_out` both divisible by it).
    pub groups: i64,
}

/// Builder setters accepting any integer type (the crate's integer rule); a `groups` above
/// `i64::MAX` (a `u64`/`usize`) is kept as `i64::MAX`, which the convolution refuses.
impl ConvOptions {
    /// `stride=`: one value or one per spatial dim.
    pub fn stride(mut self, v: impl IntoGeometry) -> Self {
        self.stride = v.into();
        self
    }
    /// `padding=`: one value, one per spatial dim, or [`ConvPadding::Same`]/`Valid`.
    pub fn padding(mut self, v: impl Into<ConvPadding>) -> Self {
        self.padding = v.into();
        self
    }
    /// `dilation=`: one value or one per spatial dim.
    pub fn dilation(mut self, v: impl IntoGeometry) -> Self {
        self.dilation = v.into();
        self
    }
    /// `groups=`.
    pub fn groups(mut self, v: impl Dim) -> Self {
        self.groups = v.to_i64().unwrap_or(i64::MAX);
        self
    }
}

impl Default for ConvOptions {
    fn default() -> Self {
        ConvOptions {
            stride: 1.into(),
            padding: 0.into(),
            dilation: 1.into(),
            groups: 1,
        }
    }
}

/// Options of [`Tensor::conv_transpose1d`](crate::Tensor::conv_transpose1d),
/// [`Tensor::conv_transpose2d`](crate::Tensor::conv_transpose2d) and
/// [`Tensor::conv_transpose3d`](crate::Tensor::conv_transpose3d) (PyTorch's defaults: stride 1,
/// padding 0, output_padding 0, groups 1, dilation 1).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConvTransposeOptions {
    /// Stride of the convolution this transposes.
    pub stride: Spatial,
    /// Padding of the convolution this transposes (removed from the output).
    pub padding: Spatial,
    /// Extra size added to one side of the output (below the stride or the dilation).
    pub output_padding: Spatial,
    /// Channel groups.
    pub groups: i64,
    /// Spacing between kernel taps.
    pub dilation: Spatial,
}

/// Builder setters accepting any integer type, as [`ConvOptions`]'s.
impl ConvTransposeOptions {
    /// `stride=`: one value or one per spatial dim.
    pub fn stride(mut self, v: impl IntoGeometry) -> Self {
        self.stride = v.into();
        self
    }
    /// `padding=`: one value or one per spatial dim.
    pub fn padding(mut self, v: impl IntoGeometry) -> Self {
        self.padding = v.into();
        self
    }
    /// `output_padding=`: one value or one per spatial dim.
    pub fn output_padding(mut self, v: impl IntoGeometry) -> Self {
        self.output_padding = v.into();
        self
    }
    /// `dilation=`: one value or one per spatial dim.
    pub fn dilation(mut self, v: impl IntoGeometry) -> Self {
        self.dilation = v.into();
        self
    }
    /// `groups=` (above `i64::MAX`: kept as `i64::MAX`, refused).
    pub fn groups(mut self, v: impl Dim) -> Self {
        self.groups = v.to_i64().unwrap_or(i64::MAX);
        self
    }
}

impl Default for ConvTransposeOptions {
    fn default() -> Self {
        ConvTransposeOptions {
            stride: 1.into(),
            padding: 0.into(),
            output_padding: 0.into(),
            groups: 1,
            dilation: 1.into(),
        }
    }
}
