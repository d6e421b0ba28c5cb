//! Convolution: forward, input gradient and weight gradient of one [`ConvGeom`] (im2col + GEMM,
//! or a padded input read in place for unit strides; parallel over batch and groups). Front
//! door `dispatch/conv.rs`; CPU body `cpu/conv/`.

use crate::DType;
use crate::backend::{ConvGeom, Device};

/// Convolution.
///
/// The three products of one [`ConvGeom`] over contiguous operands (element offsets given),
/// written into a fresh contiguous output of its own storage from element 0. Each is the partial
/// derivative of `<conv(x, w), gy>` in one operand, so the three close under differentiation.
/// All dtypes (integers wrap); callers widen f16/bf16 to f32.
pub(crate) trait ConvKernels: Device {
    /// `out [n, c_out, out..] = conv(x [n, c_in, in..], w [c_out, c_in/groups, k..])`, plus
    /// `bias[c_out]` per output channel when given.
    ///
    /// # Safety
    /// Every operand holds its geometry's element count, contiguous from its offset, inside
    /// its buffer; `out` is a buffer distinct from the others.
    #[allow(clippy::too_many_arguments)]
    unsafe fn conv_forward(
        out: &mut Self::Buffer,
        x: &Self::Buffer,
        xo: usize,
        w: &Self::Buffer,
        wo: usize,
        bias: Option<(&Self::Buffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    );

    /// `out [n, c_in, in..]` = the input gradient of the forward for output gradient `gy
    /// [n, c_out, out..]` (the transposed convolution of `gy` by `w`), plus `bias[c_in]` per
    /// channel when given.
    ///
    /// # Safety
    /// As [`Self::conv_forward`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn conv_backward_input(
        out: &mut Self::Buffer,
        gy: &Self::Buffer,
        go: usize,
        w: &Self::Buffer,
        wo: usize,
        bias: Option<(&Self::Buffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    );

    /// `out [c_out, c_in/groups, k..]` = the weight gradient of the forward for input `x` and
    /// output gradient `gy` (summed over the batch).
    ///
    /// # Safety
    /// As [`Self::conv_forward`].
    #[allow(clippy::too_many_arguments)]
    unsafe fn conv_backward_weight(
        out: &mut Self::Buffer,
        x: &Self::Buffer,
        xo: usize,
        gy: &Self::Buffer,
        go: usize,
        g: &ConvGeom,
        dt: DType,
    );
}
