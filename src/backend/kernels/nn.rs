//! Row-wise nn kernels over contiguous `[outer, n, inner]` rows: softmax, log_softmax and their
//! backwards, layer_norm's `rsqrt` (`rowwise`, `rowwise_backward`), the fused layer_norm and
//! group_norm forwards and backwards, and the positional reads of the class losses' target
//! picks (`read_at`). Front door `dispatch/nn.rs`; CPU bodies `cpu/rowwise.rs`,
//! `cpu/layer_norm.rs`, `cpu/group_norm.rs`.

use crate::backend::{Device, RowwiseOp};
use crate::layout::Layout;
use crate::{DType, Element, Result};

/// Row-wise nn kernels (softmax family, layer_norm) and the loss picks.
pub(crate) trait NnKernels: Device {
    /// Row kernel `op` of a float dtype `dt`: `src` holds `outer * n * inner` contiguous
    /// elements from element offset `so`, seen as `[outer, n, inner]` with rows along `n`; the
    /// result goes to the first `outer * n * inner` elements of `dst` in the same order. f32
    /// computes in f32, f64 in f64, f16/bf16 in f32. Panics (an internal invariant) if a range
    /// lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn rowwise(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    );

    /// Backward of row kernel `op` (softmax / log_softmax) of a float dtype `dt`: from the
    /// forward output `y` and the output gradient `g` (each `outer * n * inner` contiguous
    /// elements from its element offset, rows along `n`) into the first elements of `dst`:
    /// softmax `y * (g - sum(g * y))`, log_softmax `g - exp(y) * sum(g)`. Computes as
    /// [`Self::rowwise`]. Panics if a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn rowwise_backward(
        dst: &mut Self::Buffer,
        y: (&Self::Buffer, usize),
        g: (&Self::Buffer, usize),
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    );

    /// Layer normalisation of `rows` contiguous rows of `n` elements of float dtype `dt` (each
    /// input a buffer and an element offset; `w`/`b` hold `n` elements):
    /// `y = (x - mean) * rstd * w + b` into `out`, and each row's mean then its `rstd =
    /// 1 / sqrt(var + eps)` (biased variance) into `stats` (`2 * rows` elements of the compute
    /// type: f64 for f64, else f32). Panics if a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn layer_norm(
        out: &mut Self::Buffer,
        stats: &mut Self::Buffer,
        x: (&Self::Buffer, usize),
        w: Option<(&Self::Buffer, usize)>,
        b: Option<(&Self::Buffer, usize)>,
        rows: usize,
        n: usize,
        eps: f64,
        dt: DType,
    );

    /// Backward of [`Self::layer_norm`] from the output gradient `g`, the input `x` and the
    /// forward's `stats`: the input gradient into `gx`, and `sum_rows(g * (x - mean) * rstd)`,
    /// `sum_rows(g)` (the weight and bias gradients, `n` elements each) into `gw`, `gb` when
    /// given. Panics if a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn layer_norm_backward(
        gx: Option<&mut Self::Buffer>,
        gw: Option<&mut Self::Buffer>,
        gb: Option<&mut Self::Buffer>,
        g: (&Self::Buffer, usize),
        x: (&Self::Buffer, usize),
        stats: (&Self::Buffer, usize),
        w: Option<(&Self::Buffer, usize)>,
        rows: usize,
        n: usize,
        dt: DType,
    );

    /// Group normalisation of the contiguous `[n, c, hxw]` input `x` (float dtype `dt`) in
    /// `groups` groups (`dims = (n, c, hxw, groups)`; `w`/`b` hold `c` elements), as PyTorch's
    /// CPU kernel: the output into `out`, each `(n, group)` row's mean then its `rstd` into
    /// `stats` (`2 * n * groups` elements of the compute type, rounded through `dt`). Panics if
    /// a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn group_norm(
        out: &mut Self::Buffer,
        stats: &mut Self::Buffer,
        x: (&Self::Buffer, usize),
        w: Option<(&Self::Buffer, usize)>,
        b: Option<(&Self::Buffer, usize)>,
        dims: (usize, usize, usize, usize),
        eps: f64,
        dt: DType,
    );

    /// Backward of [`Self::group_norm`] from the output gradient `g`, the input `x` and the
    /// forward's `stats`, PyTorch's formula: the input gradient into `gx`, the weight and
    /// bias gradients (`c` elements each) into `gw`, `gb` when given. Panics if a range lies
    /// outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn group_norm_backward(
        gx: Option<&mut Self::Buffer>,
        gw: Option<&mut Self::Buffer>,
        gb: Option<&mut Self::Buffer>,
        g: (&Self::Buffer, usize),
        x: (&Self::Buffer, usize),
        stats: (&Self::Buffer, usize),
        w: Option<(&Self::Buffer, usize)>,
        dims: (usize, usize, usize, usize),
        dt: DType,
    );

    /// The elements of `l` (of dtype `dt`) at the logical (row-major) positions `at`, cast to
    /// `T`: the target picks of the class losses. Errors if `l` lies outside the buffer; the
    /// positions are below `l.numel()` (caller contract; panics otherwise).
    fn read_at<T: Element>(
        buf: &Self::Buffer,
        l: &Layout,
        dt: DType,
        at: &[usize],
    ) -> Result<Vec<T>>;
}
