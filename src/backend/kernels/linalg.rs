//! Linear algebra: the batched strided matmul behind `mm`, `bmm` and `matmul` (and, through the
//! CPU GEMM, convolution). Front door `bmm` (`dispatch/nn.rs`); CPU body `cpu/matmul.rs`
//! (packed x86 kernel `cpu/gemm_x86.rs`).

use crate::DType;
use crate::backend::Device;
use crate::layout::Layout;

/// Batched matrix multiply.
pub(crate) trait LinalgKernels: Device {
    /// `out[i] = a[i] @ b[i]` for every `i` of the leading dim of the 3-D layouts `ol`
    /// `[B, m, n]`, `al` `[B, m, k]`, `bl` `[B, k, n]` (any strides), all of dtype `dt`
    /// (callers widen f16/bf16 to f32). Every element of `out` is written (zeros when `k == 0`).
    ///
    /// # Safety
    /// The geometries lie inside their buffers; `out` is a buffer distinct from `a` and `b`
    /// (which may be the same buffer) and `ol` has no internal overlap.
    #[allow(clippy::too_many_arguments)]
    unsafe fn bmm(
        out: &mut Self::Buffer,
        ol: &Layout,
        a: &Self::Buffer,
        al: &Layout,
        b: &Self::Buffer,
        bl: &Layout,
        dt: DType,
    );
}
