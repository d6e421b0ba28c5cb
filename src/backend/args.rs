//! The argument types of the [`Backend`](super::Backend) methods: operand sources, op enums
//! (scalar updates, reductions, row transforms, row-wise nn ops, optimizer steps) and the
//! position plans of the gather/scatter/index and sparse kernels. Plain data a device reads;
//! no kernel lives here.

use crate::layout::Layout;
use crate::{DType, NormOrd};

/// The source of a copy: another buffer, or the destination's own buffer (a copy within one
/// storage, read through the destination's write lock).
pub(crate) enum Source<'a, B> {
    Other(&'a B),
    Same,
}

/// One input of a flat elementwise kernel: the elements of a buffer from `offset` on, or with
/// `scalar` the one element at `offset`, read once and broadcast.
pub(crate) struct Flat<'a, B> {
    pub(crate) src: Source<'a, B>,
    pub(crate) offset: usize,
    pub(crate) scalar: bool,
}

/// An elementwise update of a region by a real scalar: `x op= s`.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ScalarArith {
    Mul,
    Div,
}

/// A reduction of rows to one value each ([`ReduceKernels::reduce`](super::ReduceKernels::reduce)).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum ReduceOp {
    /// Largest element and its first index; NaN wins (first NaN).
    Max,
    /// Smallest element and its first index; NaN wins (first NaN).
    Min,
    /// Sequential product from 1: in the element type for floats and complex (rounded at every
    /// step), wrapping i64 for integers and bool.
    Prod,
    /// Vector norm, accumulated in f64.
    Norm(NormOrd),
    /// `log(sum(exp(x)))` in f64, max-shifted (NaN if any NaN; the max if it is infinite).
    Logsumexp,
    /// Every element non-zero.
    All,
    /// Some element non-zero.
    Any,
    /// Sum with NaN read as zero (`nansum`): contiguous float rows pairwise in lanes as the
    /// full sum (f16/bf16 in f32), other rows in f64.
    NanSum,
}

/// A whole-row transform ([`ReduceKernels::row_map`](super::ReduceKernels::row_map)); float ops
/// work in f64.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum RowOp {
    /// Running sum; rounded to f32 after every step unless the output is f64.
    CumSum,
    /// Running product from 1: in f64 for real floats, complex128 (naive product) for complex.
    CumProd,
    /// Running wrapping i64 sum.
    CumSumInt,
    /// Running wrapping i64 product.
    CumProdInt,
    /// `exp(x - y)` (`y`: the second source).
    ExpShift,
    /// The norm's per-element weight (`y`: the norm of the row): L1 `sign(x)`, L2 `x / y`
    /// (0 if `y == 0`), ±inf `sign(x) / ties` at the elements with `|x| == y`.
    NormWeights(NormOrd),
}

/// A row-wise kernel of the nn family: each row is the `n` elements along one dim.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum RowwiseOp {
    /// `exp(x - max) / sum(exp(x - max))` along the row (a NaN or an infinite max makes the
    /// row NaN, as PyTorch).
    Softmax,
    /// `x - max - ln(sum(exp(x - max)))` along the row.
    LogSoftmax,
    /// `1 / sqrt(x)` of each element (rows of length 1: layer_norm's inverse deviation).
    Rsqrt,
}

/// One fused optimizer step over a parameter, its gradient and its state buffers, as PyTorch's
/// single-tensor (foreach=False, its CPU default) update, rounded op by op in the dtype.
#[derive(Clone, Copy, Debug)]
pub(crate) enum OptimStep {
    /// SGD; buffers `[param, grad]` plus `[momentum_buffer]` when momentum is on. `first`: the
    /// momentum buffer is initialised with this step's direction.
    Sgd {
        lr: f64,
        momentum: f64,
        dampening: f64,
        weight_decay: f64,
        nesterov: bool,
        /// Step along the gradient (the gradient is negated first).
        maximize: bool,
        first: bool,
    },
    /// Adam / AdamW (`decoupled`); buffers `[param, grad, exp_avg, exp_avg_sq]` plus
    /// `[max_exp_avg_sq]` for AMSGrad. `step` counts from 1.
    Adam {
        lr: f64,
        beta1: f64,
        beta2: f64,
        eps: f64,
        weight_decay: f64,
        decoupled: bool,
        /// Step along the gradient (the gradient is negated first).
        maximize: bool,
        step: u64,
    },
}

/// Marks a position of [`MovementKernels::take`](super::MovementKernels::take) /
/// [`MovementKernels::put`](super::MovementKernels::put) with no element (zero / skipped).
pub(crate) const SKIP: usize = usize::MAX;

/// Positions of a [`MovementKernels::put`](super::MovementKernels::put).
pub(crate) struct Put<'a> {
    /// Logical positions written in the destination.
    pub(crate) dst: &'a [usize],
    /// Logical positions read in the source (`None`: `0..dst.len()`).
    pub(crate) src: Option<&'a [usize]>,
    /// Add instead of overwriting.
    pub(crate) accumulate: bool,
    /// Op named by a geometry error.
    pub(crate) op: &'static str,
}

/// Target geometry of a [`MovementKernels::put_rows`](super::MovementKernels::put_rows): `size`
/// rows of `row_len` contiguous elements, `row_stride` apart, from element `offset`.
pub(crate) struct RowPut<'a> {
    pub(crate) offset: usize,
    pub(crate) size: usize,
    pub(crate) row_stride: usize,
    pub(crate) row_len: usize,
    /// Target row of each value row (each `< size`).
    pub(crate) rows: &'a [u32],
    pub(crate) accumulate: bool,
}

/// What a [`MovementKernels::scatter_reduce`](super::MovementKernels::scatter_reduce) combines.
pub(crate) struct Reduce<'a> {
    /// `(target position in dst, source position in src)`, logical positions, in order.
    pub(crate) pairs: &'a [(usize, usize)],
    pub(crate) reduce: crate::ScatterReduce,
    pub(crate) include_self: bool,
}

/// The index arrays of a sparse pattern as a kernel sees them: contiguous element ranges of
/// device buffers (never tensors).
pub(crate) enum Pattern<'a, B> {
    /// COO: i64 indices `[sd, nnz]` from element `off`.
    Coo {
        ix: &'a B,
        off: usize,
        sd: usize,
        nnz: usize,
    },
    /// CSR: `batches * (rows + 1)` batch-local row offsets from `crow_off` and `nnz` columns
    /// from `col_off`, both of the index dtype `dt` (i32 or i64).
    Csr {
        crow: &'a B,
        crow_off: usize,
        col: &'a B,
        col_off: usize,
        nnz: usize,
        dt: DType,
    },
}

/// The rows of a sparse tensor's `values` an op keeps, in output order; input rows are kept
/// at most once. Computed by the sparse kernels, held by the autograd node of a slice.
#[derive(Debug)]
pub(crate) enum RowSel {
    /// Consecutive runs `(first input row, length)`, concatenated in output order.
    Runs(Vec<(usize, usize)>),
    /// One input row per output row.
    List(Vec<usize>),
}

impl RowSel {
    /// The selection, borrowed.
    pub(crate) fn rows(&self) -> Rows<'_> {
        match self {
            RowSel::Runs(r) => Rows::Runs(r),
            RowSel::List(l) => Rows::List(l),
        }
    }
}

/// A borrowed [`RowSel`] (what the row kernels take).
#[derive(Clone, Copy, Debug)]
pub(crate) enum Rows<'a> {
    /// Consecutive runs `(first input row, length)`, concatenated in output order.
    Runs(&'a [(usize, usize)]),
    /// One input row per output row.
    List(&'a [usize]),
}

impl Rows<'_> {
    /// Number of output rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            Rows::Runs(r) => r.iter().map(|&(_, n)| n).sum(),
            Rows::List(l) => l.len(),
        }
    }
}

/// The row geometry of a sparse @ dense product
/// ([`SparseKernels::spmm`](super::SparseKernels::spmm),
/// [`SparseKernels::sddmm`](super::SparseKernels::sddmm)): entry `e` pairs output row `rows[e]`
/// with dense row `cols[e]`; rows have `n` elements.
pub(crate) struct Spmm<'a> {
    pub(crate) rows: &'a [usize],
    pub(crate) cols: &'a [usize],
    pub(crate) n: usize,
}

/// The index walk of [`MovementKernels::gather_dim`](super::MovementKernels::gather_dim) /
/// [`MovementKernels::scatter_dim`](super::MovementKernels::scatter_dim).
pub(crate) struct DimWalk<'a> {
    /// The i64 index's geometry: the positions walked.
    pub(crate) index: &'a Layout,
    /// The dim the index values select along.
    pub(crate) dim: usize,
    /// The size of that dim on the target side (index values lie in `[-size, size)`).
    pub(crate) size: usize,
    /// Op named by an error.
    pub(crate) op: &'static str,
}

/// The windows of a 2-D pooling ([`PoolKernels::max_pool`](super::PoolKernels::max_pool),
/// [`PoolKernels::avg_pool`](super::PoolKernels::avg_pool),
/// [`PoolKernels::avg_pool_transpose`](super::PoolKernels::avg_pool_transpose)) over `planes`
/// contiguous `[h, w]` planes: output position `(i, j)` of a plane (`[oh, ow]`, `oh =
/// rows.len()`, `ow = cols.len()`) reads the input rows `rows[i].0 + k * dh` for `k <
/// rows[i].1` and the columns `cols[j].0 + k * dw` for `k < cols[j].1` (in range: padding is
/// already clipped away). A window without a tap (count 0) keeps its first tap at or after
/// 0 as its start (max pooling's index of it, as PyTorch's), possibly past the plane.
#[derive(Clone, Debug)]
pub(crate) struct PoolWindows {
    pub(crate) planes: usize,
    pub(crate) h: usize,
    pub(crate) w: usize,
    pub(crate) rows: Vec<(usize, usize)>,
    pub(crate) dh: usize,
    pub(crate) cols: Vec<(usize, usize)>,
    pub(crate) dw: usize,
}

impl PoolWindows {
    /// Elements of one input plane.
    pub(crate) fn in_plane(&self) -> usize {
        // without planes (an empty batch) `h * w` may exceed `usize`; nothing is read then
        if self.planes == 0 { 0 } else { self.h * self.w }
    }

    /// Elements of one output plane.
    pub(crate) fn out_plane(&self) -> usize {
        self.rows.len() * self.cols.len()
    }
}

/// The position plan of the resampling kernels
/// ([`ResampleKernels::plane_gather`](super::ResampleKernels::plane_gather) and its adjoint
/// [`ResampleKernels::plane_scatter`](super::ResampleKernels::plane_scatter)): `planes` contiguous
/// input planes of `in_plane` elements map to as many output planes of `out_plane` elements; output
/// position `o` of a plane reads the `taps` input positions `src[o * taps + t]` of the same plane
/// (`NONE`: no input, the padding), each weighted by `weight[o * taps + t]` (all `1` when `weight`
/// is `None`). Padding, im2col, pixel shuffle and nearest / linear interpolation are all such maps.
#[derive(Clone, Debug)]
pub(crate) struct PlaneMap {
    pub(crate) planes: usize,
    pub(crate) in_plane: usize,
    pub(crate) out_plane: usize,
    pub(crate) taps: usize,
    pub(crate) src: Vec<usize>,
    pub(crate) weight: Option<Vec<f64>>,
}

impl PlaneMap {
    /// The `src` entry of a position with no input.
    pub(crate) const NONE: usize = usize::MAX;
}
