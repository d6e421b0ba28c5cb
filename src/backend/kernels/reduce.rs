//! Reductions, scans and sort: max/min with indices, prod, norms, logsumexp, all/any over the rows
//! of a strided source in place (`reduce`), cumsum/cumprod and the per-element weights of
//! reduction backwards (`row_map`), sort/argsort/topk (`sort`), and `sum` (`sum_into`,
//! `sum_dense`). Front door `dispatch/reduce.rs`; CPU bodies `cpu/reduce.rs`, `cpu/scan.rs`,
//! `cpu/sort.rs`, `cpu/sum.rs`.

use crate::DType;
use crate::backend::{Device, ReduceOp, RowOp};
use crate::layout::Layout;

/// Reductions, scans and sort over the rows of a strided source.
///
/// A source is seen as rows: `sl` is its layout permuted so the kept dims come first and the
/// `nred` reduced dims last (row `i` = the `i`-th kept index in row-major order, its elements in
/// row-major order of the reduced dims). Panics (an internal invariant) if a geometry lies
/// outside its buffer; the front door checks that first.
pub(crate) trait ReduceKernels: Device {
    /// One value per row of `src` written to `dst` from element `doff` on, cast to `ddt` (the
    /// row order of a contiguous keepdim output); with `idx`, the i64 index within the row of
    /// the picked element ([`ReduceOp::Max`]/[`ReduceOp::Min`]) too. `dst`, `idx` and `src`
    /// are distinct buffers.
    #[allow(clippy::too_many_arguments)]
    fn reduce(
        dst: &mut Self::Buffer,
        doff: usize,
        ddt: DType,
        idx: Option<(&mut Self::Buffer, usize)>,
        src: &Self::Buffer,
        sl: &Layout,
        sdt: DType,
        nred: usize,
        op: ReduceOp,
    );

    /// Every row of `src` (and the same row of `src2`, of equal sizes) transformed by `op`
    /// into the same row of `dst` (`dl`: permuted like `sl`; no internal overlap), cast to
    /// `ddt`. Buffers are distinct.
    #[allow(clippy::too_many_arguments)]
    fn row_map(
        dst: &mut Self::Buffer,
        dl: &Layout,
        ddt: DType,
        src: &Self::Buffer,
        sl: &Layout,
        sdt: DType,
        src2: Option<(&Self::Buffer, &Layout, DType)>,
        nred: usize,
        op: RowOp,
    );

    /// Sorts every row of `src` (one reduced dim) by PyTorch's order (NaN above every number,
    /// ties in input order; `descending` reverses the keys, not the ties) and keeps the first
    /// `k`; unless `sorted` they are put back in input order. Writes the row indices (i64) to
    /// `idx` (`il`: the output's layout, permuted like `sl`) and returns, for every output
    /// element (by its offset in `idx`), the position `pl` (the source's logical row-major
    /// layout, permuted like `sl`) gives the picked element.
    #[allow(clippy::too_many_arguments)]
    fn sort(
        idx: &mut Self::Buffer,
        il: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        sdt: DType,
        pl: &Layout,
        k: usize,
        descending: bool,
        sorted: bool,
    ) -> Vec<usize>;

    /// `dst[dl] += src[sl]` in logical order for the element type of `dt` (the accumulation
    /// dtype of `sum`); `dl` has `sl`'s sizes and stride 0 on the reduced dims, `full` when
    /// every dim is reduced. Runs that reduce into one element sum with 8 accumulators, full
    /// sums of large contiguous sources in parallel ranges: the rounding of `sum_dims`.
    ///
    /// # Safety
    /// Both geometries lie inside their buffers, which are distinct.
    unsafe fn sum_into(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        dt: DType,
        full: bool,
    );

    /// The full sum of the non-overlapping dense float geometry `sl` (pairwise, f16/bf16
    /// accumulated in f32) written to element `doff` of `dst` (same dtype); false (nothing
    /// done) for other dtypes or geometries, or one outside the buffer.
    fn sum_dense(
        dst: &mut Self::Buffer,
        doff: usize,
        src: &Self::Buffer,
        sl: &Layout,
        dt: DType,
    ) -> bool;

    /// `sum(a * b)` of two unit-stride 1-D float vectors of equal length, as `mul` then the
    /// pairwise full sum give it (same bits), in one pass; `None` (nothing done) for other
    /// dtypes or geometries, or ones outside the buffers. f32 results are exact in the f64.
    fn dot_dense(
        a: &Self::Buffer,
        al: &Layout,
        b: &Self::Buffer,
        bl: &Layout,
        dt: DType,
    ) -> Option<f64>;
}
