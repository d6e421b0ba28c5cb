//! Backends: the kernels of one device, seen through the [`Backend`] trait. A kernel works on
//! device buffers and [`Layout`]s (sizes, element strides, element offset) — never on a `Tensor`,
//! never on autograd. Everything above this floor validates arguments, computes the output
//! geometry, calls a kernel through the front door below, and records autograd.
//!
//! # How a call reaches a device
//!
//! A [`Storage`](crate::storage::Storage) holds a `DeviceBuffer`, an enum with one variant per
//! device (`Cpu` today). The front door ([`copy_raw`], [`fill`], [`accumulate`], [`read_vec`],
//! [`scalar_update_owned`], in `dispatch.rs`; one module per other family, e.g.
//! [`movement`] in `dispatch/movement.rs`) takes the storages' locks, then matches the
//! buffers' variants in one place, the `on_device!` macro, and calls the [`Backend`] method of
//! that device. Op files never name a device.
//!
//! # What a device implements
//!
//! One [`Backend`] method per kernel family entry point, grouped by family:
//!
//! - **strided copy and fill** (migrated): [`Backend::copy`] (any geometry to any geometry,
//!   with dtype conversion; the kernel of `copy_`, `contiguous`, `to_dtype`, `clone` and every
//!   materialisation), [`Backend::fill`], [`Backend::accumulate`] (`dst += src` in logical
//!   order: the scatter of view backward), [`Backend::read`] (elements in logical order, cast:
//!   `to_vec`, `item`);
//! - **elementwise with a scalar** (migrated: the in-place form on a region):
//!   [`Backend::scalar_update`];
//! - **reductions, scans, sort** (migrated): [`Backend::reduce`] (max/min with indices,
//!   prod, norms, logsumexp, all/any over rows of a strided source, in place),
//!   [`Backend::row_map`] (cumsum/cumprod and the per-element weights of reduction backwards),
//!   [`Backend::sort`] (sort/argsort/topk), [`Backend::sum_into`] and [`Backend::sum_dense`]
//!   (`sum`); front doors [`reduce`], [`row_map`], [`sort_rows`], [`sum_into`], [`sum_dense`];
//! - **gather/scatter/index and data movement** (migrated: `ops/movement/`, `index/`,
//!   `ops/storage/`): [`Backend::take`] / [`Backend::put`] (gather and scatter over logical
//!   positions: advanced indexing, `masked_select`, the backward of index ops), [`Backend::put_rows`] (the row scatter of `index_put_`),
//!   [`Backend::gather_dim`] / [`Backend::scatter_dim`] (`gather`, `scatter`, `scatter_add`:
//!   index tensor read in place), [`Backend::index_select`], [`Backend::copy_flipped`] (`flip`),
//!   [`Backend::tri_zero`]
//!   (`tril`/`triu`), [`Backend::scatter_reduce`], [`Backend::nonzero`] (`nonzero`, bool
//!   masks); `cat`, `roll` and `repeat` are strided copies of regions ([`Backend::copy`]);
//! - **elementwise map** (migrated): the dense fast paths of `ops/dense.rs` ([`Backend::flat_map1`],
//!   [`Backend::flat_map2`], [`Backend::update_owned`] on flat element ranges), the strided map with
//!   broadcasting of `ops/elementwise` ([`Backend::map1`], [`Backend::map2`], [`Backend::map3`]:
//!   unary, binary, ternary) and the predicate test [`Backend::any`]; the op is a generic closure
//!   over element types, the geometry (output strides, promotion, broadcasting) is computed above;
//! - **nn and linalg** (migrated): [`Backend::bmm`] (batched strided matmul: `mm`, `bmm`,
//!   `matmul`), [`Backend::rowwise`] (softmax, log_softmax, layer_norm's rsqrt),
//!   [`Backend::read_at`] (the target picks of `nll_loss` / `cross_entropy`);
//! - **convolution**: [`Backend::conv_forward`], [`Backend::conv_backward_input`],
//!   [`Backend::conv_backward_weight`] (im2col + GEMM, parallel over batch and groups; front
//!   door [`conv`], `dispatch/conv.rs`; CPU body `cpu/conv/`);
//! - **attention**: [`Backend::sdpa_forward`] (the fused forward of causal or unmasked
//!   `scaled_dot_product_attention` without a graph; front door [`attention`],
//!   `dispatch/attention.rs`; CPU body `cpu/attention.rs`);
//! - **normalization**: [`Backend::channel_stats`] (per-channel mean and squared deviations:
//!   batch_norm, instance_norm, group_norm) and [`Backend::channel_affine`] (`x * scale[ch] +
//!   shift[ch]`); front door [`norm`] (`dispatch/norm.rs`);
//! - **pooling**: [`Backend::max_pool`] (values and plane indices), [`Backend::avg_pool`] and
//!   its adjoint [`Backend::avg_pool_transpose`], over the windows of a [`PoolWindows`]
//!   (max/avg/adaptive pooling); front door [`pool`] (`dispatch/pool.rs`);
//! - **resampling**: [`Backend::plane_gather`] and its adjoint [`Backend::plane_scatter`] over
//!   the position plan of a [`PlaneMap`] (pad, unfold/fold, interpolate, pixel_shuffle); front
//!   door [`resample`] (`dispatch/resample.rs`);
//! - **fused optimizer step** (migrated): [`Backend::optim_step`] (SGD, Adam/AdamW);
//! - **sparse** (migrated: `sparse/`): pattern reads ([`Backend::sparse_positions`],
//!   [`Backend::sparse_entry_rows`], [`Backend::csr_to_coo`], [`Backend::sparse_check`]),
//!   pattern builds ([`Backend::coo_coalesce`], [`Backend::coo_slice`],
//!   [`Backend::csr_slice`]) and row kernels over `values` ([`Backend::sparse_gather_rows`],
//!   [`Backend::sparse_scatter_rows`], [`Backend::sparse_nonzero_rows`], [`Backend::spmm`],
//!   [`Backend::sddmm`]); front door [`sparse`] (`dispatch/sparse.rs`).
//!
//! `matmul` and `mm` reach the GEMM through [`Backend::bmm`]. Besides the kernels, a device
//! provides [`Backend::buffer`] / [`Backend::buffer_mut`] (its variant's payload) and fresh
//! output storages ([`Backend::storage_for_output`], [`Backend::storage_zeroed`]).
//!
//! # Adding a device
//!
//! A second device (CUDA through `cudarc`) is a folder beside `cpu/` implementing [`Backend`]
//! for its buffer type, one variant of `DeviceBuffer` (`storage/mod.rs`), and one arm in each
//! form of `on_device!` (`dispatch.rs`, with an error arm for operands on different devices).
//! Op files do not change. The closure-taking elementwise family (`flat_map1`, `flat_map2`,
//! `update_owned`, `map1`, `map2`, `map3`, `any`: the op's scalar formula is a Rust closure,
//! which a GPU cannot compile) is implemented by host staging: the device implements
//! `staging::HostStaging` (copy a buffer to host memory and back) and forwards each of those
//! methods to the function of the same name in `staging.rs` (operands copied to host, the
//! CPU kernel run, the output copied back). Native kernels for hot ops come later as op-code
//! entries that the family's front door tries first, falling back to the closure form when
//! a device declines (the pattern of [`Backend::scalar_update`] and [`Backend::sum_dense`]);
//! op files still do not change. Every other family's methods take plain data (layouts,
//! dtypes, positions, op enums) and are implemented natively.
//!
//! # Safety
//!
//! The strided kernels (`copy`, `fill`, `accumulate`, `copy_flipped`) are `unsafe`: the caller
//! (the front door) guarantees that every element the geometries address lies inside the
//! buffers — true of every tensor geometry — and the aliasing rules of each method.
//! [`Backend::read`], [`Backend::scalar_update`], the gather/scatter/index kernels and the
//! sparse kernels check their geometry themselves.

pub(crate) mod cpu;
mod dispatch;
// The fallback of a second device's closure-taking kernels; no device needs it yet, its unit
// test exercises it.
#[allow(dead_code)]
mod staging;

pub(crate) use dispatch::attention;
pub(crate) use dispatch::attention::AttnGeom;
pub(crate) use dispatch::conv;
pub(crate) use dispatch::conv::ConvGeom;
pub(crate) use dispatch::movement;
pub(crate) use dispatch::norm;
pub(crate) use dispatch::pool;
pub(crate) use dispatch::reduce::{reduce, row_map, sort_rows, sum_dense, sum_into};
pub(crate) use dispatch::resample;
pub(crate) use dispatch::sparse;
pub(crate) use dispatch::{
    FlatArg, any, flat_fresh1, flat_fresh2, flat_into1, flat_into2, map1, map2, map3, update_owned,
};
pub(crate) use dispatch::{accumulate, copy_raw, fill, read_vec, scalar_update_owned};
pub(crate) use dispatch::{bmm, optim_step, read_at, rowwise};
pub(crate) use dispatch::{layer_norm, layer_norm_backward, rowwise_backward};
// the vectorisable lane math the elementwise closures call (exp, log, tanh, sigmoid, erf)
pub(crate) use cpu::math::Transcendental;

mod args;
pub(crate) use args::PlaneMap;
pub(crate) use args::PoolWindows;
pub(crate) use args::{
    DimWalk, Flat, OptimStep, Pattern, Put, Reduce, ReduceOp, RowOp, RowPut, RowSel, Rows,
    RowwiseOp, SKIP, ScalarArith, Source, Spmm,
};

use crate::layout::Layout;
use crate::storage::{DeviceBuffer, Storage};
use crate::{DType, Element, Result, Scalar};

/// The kernels one device implements, one method per kernel family entry point. Methods see the
/// device's buffers and layouts only; the module docs list the families.
pub(crate) trait Backend {
    /// The device's buffer type (the payload of its `DeviceBuffer` variant).
    type Buffer;

    // ---- strided copy and fill ----

    /// `dst[dl] = cast(src[sl])` element by element in logical order; `sl` has `dl`'s sizes
    /// (stride 0 on broadcast dims).
    ///
    /// # Safety
    /// Both geometries lie inside their buffers; `dl` has no internal overlap; with
    /// [`Source::Same`] the two geometries are disjoint or identical.
    unsafe fn copy(
        dst: &mut Self::Buffer,
        dl: &Layout,
        ddt: DType,
        src: Source<'_, Self::Buffer>,
        sl: &Layout,
        sdt: DType,
    );

    /// `dst[dl] = v` (converted to `dt`); `dl` may overlap itself.
    ///
    /// # Safety
    /// `dl` lies inside `dst`.
    unsafe fn fill(dst: &mut Self::Buffer, dl: &Layout, dt: DType, v: Scalar);

    /// `dst[dl] += cast(src[sl])` sequentially in logical order, so a `dl` that names an
    /// element several times accumulates every contribution.
    ///
    /// # Safety
    /// Both geometries lie inside their buffers (of equal sizes); the buffers are distinct.
    unsafe fn accumulate(
        dst: &mut Self::Buffer,
        dl: &Layout,
        ddt: DType,
        src: &Self::Buffer,
        sl: &Layout,
        sdt: DType,
    );

    /// The elements of `l` (of dtype `dt`) in logical order, cast to `T`. Errors if `l` lies
    /// outside the buffer or the result cannot be allocated.
    fn read<T: Element>(buf: &Self::Buffer, l: &Layout, dt: DType) -> Result<Vec<T>>;

    // ---- elementwise with a scalar ----

    /// `x = x op s` over the elements `region` names in a buffer borrowed exclusively, with the
    /// values of the general arithmetic kernel (`s` converted to the element type first). False
    /// (nothing done) when the dtype is not f32/f64 or `region` may name an element twice.
    /// Panics (an internal invariant) if a non-empty `region` lies outside the buffer.
    fn scalar_update(
        buf: &mut Self::Buffer,
        region: &Layout,
        dt: DType,
        op: ScalarArith,
        s: Scalar,
    ) -> bool;

    // ---- reductions, scans, sort ----
    //
    // A source is seen as rows: `sl` is its layout permuted so the kept dims come first and
    // the `nred` reduced dims last (row `i` = the `i`-th kept index in row-major order, its
    // elements in row-major order of the reduced dims). Panics (an internal invariant) if a
    // geometry lies outside its buffer; the front door checks that first.

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

    // ---- nn, linalg (row-wise ops, loss picks, batched matmul) ----

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
    /// [`Backend::rowwise`]. Panics if a range lies outside its buffer.
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

    /// Backward of [`Backend::layer_norm`] from the output gradient `g`, the input `x` and the
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

    /// The elements of `l` (of dtype `dt`) at the logical (row-major) positions `at`, cast to
    /// `T`: the target picks of the class losses. Errors if `l` lies outside the buffer; the
    /// positions are below `l.numel()` (caller contract; panics otherwise).
    fn read_at<T: Element>(
        buf: &Self::Buffer,
        l: &Layout,
        dt: DType,
        at: &[usize],
    ) -> Result<Vec<T>>;

    // ---- normalization (per-channel statistics and affine transform) ----

    /// (mean, sum of squared deviations from it) of every channel of `src`: `outer * c *
    /// inner` contiguous float elements of dtype `dt` from element offset `so`, seen as
    /// `[outer, c, inner]` (channel `ch` = every `[o, ch, i]`), accumulated in f64 in two
    /// passes; NaN for an empty channel. Panics (an internal invariant) if the range lies
    /// outside the buffer.
    fn channel_stats(
        src: &Self::Buffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
    ) -> Vec<(f64, f64)>;

    /// `dst[o, ch, i] = src[o, ch, i] * scale[ch] + shift[ch]` over contiguous `[outer, c,
    /// inner]` float elements (`src` from element `so`, `dst` from 0; distinct buffers),
    /// computed in the compute type of `dt` (f32 for f32/f16/bf16) with `scale`/`shift` rounded
    /// to it. Panics (an internal invariant) if a range lies outside its buffer.
    #[allow(clippy::too_many_arguments)]
    fn channel_affine(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
        scale: &[f64],
        shift: &[f64],
    );

    // ---- pooling (windows over contiguous planes) ----

    /// The maximum of every window of `win` over `src` (`planes * h * w` contiguous float
    /// elements of dtype `dt` from element `so`) into `dst` (`planes * oh * ow`, from 0) and
    /// its position in the plane (`row * w + col`, i64) into `idx`. NaN wins (the last NaN of
    /// a window); an all `-inf` window picks its first element. Buffers are distinct. Panics
    /// (an internal invariant) if a range lies outside its buffer.
    fn max_pool(
        dst: &mut Self::Buffer,
        idx: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        dt: DType,
    );

    /// The sum of every window of `win` over `src` (as in [`Backend::max_pool`]) divided by
    /// `div[i * ow + j]`, into `dst` (`planes * oh * ow`, from 0; an empty window gives 0),
    /// computed in the compute type of `dt`. Panics (an internal invariant) if a range lies
    /// outside its buffer.
    fn avg_pool(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    );

    /// The adjoint of [`Backend::avg_pool`]: every element of every window of `win` in the
    /// zero-filled `dst` (`planes * h * w`, from 0) receives `src[i, j] / div[i * ow + j]`
    /// (`src`: `planes * oh * ow` elements from `so`). Buffers are distinct. Panics (an
    /// internal invariant) if a range lies outside its buffer.
    fn avg_pool_transpose(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    );

    // ---- resampling (position plans over contiguous planes) ----

    /// Every output position `o` of every plane of `map`: the weighted sum of its taps over
    /// `src` (`planes * in_plane` contiguous elements of dtype `dt` from element `so`), or
    /// `fill` when all its taps are `PlaneMap::NONE`, into `dst` (`planes * out_plane`, from
    /// 0). A weighted map needs a float dtype; an unweighted one takes any (one tap: a copy).
    /// Buffers are distinct. Panics (an internal invariant) if a range lies outside its buffer.
    fn plane_gather(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        map: &PlaneMap,
        fill: f64,
        dt: DType,
    );

    /// The adjoint of [`Backend::plane_gather`]: the zero-filled `dst` (`planes * in_plane`,
    /// from 0) receives `weight * src[o]` at every tap of every output position (`src`:
    /// `planes * out_plane` elements from `so`). Buffers are distinct. Panics (an internal
    /// invariant) if a range lies outside its buffer.
    fn plane_scatter(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        map: &PlaneMap,
        dt: DType,
    );

    // ---- fused optimizer step ----

    /// Runs `step` over `bufs[i]`'s elements `[parts[i].0, parts[i].0 + parts[i].1)` (all of
    /// dtype `dt`, equal counts; order as in [`OptimStep`]). False (nothing done) when `dt` is
    /// not f32/f64. Panics (an internal invariant) if a range lies outside its buffer.
    fn optim_step(
        bufs: &mut [&mut Self::Buffer],
        parts: &[(usize, usize)],
        dt: DType,
        step: OptimStep,
    ) -> bool;

    // ---- convolution ----
    //
    // The three products of one [`ConvGeom`] over contiguous operands (element offsets given),
    // written into a fresh contiguous output of its own storage from element 0. Each is the
    // partial derivative of `<conv(x, w), gy>` in one operand, so the three close under
    // differentiation. All dtypes (integers wrap); callers widen f16/bf16 to f32.

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
    /// As [`Backend::conv_forward`].
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
    /// As [`Backend::conv_forward`].
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

    // ---- attention ----

    /// Scaled dot-product attention forward of an [`AttnGeom`] (f32 or f64, no mask, no
    /// dropout): `out[b, i] = sum_j p[b, i, j] v[b, j]` with `p[b, i, :]` the softmax over the
    /// keys `j < s` (causal: `j <= i`) of `(q[b, i] * scale) . k[b, j]`. `q` `[bh, l, e]`, `k`
    /// `[bh, s, e]`, `v` `[bh, s, ev]` are contiguous from their element offsets; `out`
    /// `[bh, l, ev]` is written from element 0. Panics (an internal invariant) if a range lies
    /// outside its buffer.
    fn sdpa_forward(
        out: &mut Self::Buffer,
        q: (&Self::Buffer, usize),
        k: (&Self::Buffer, usize),
        v: (&Self::Buffer, usize),
        g: &AttnGeom,
        dt: DType,
    );

    // ---- gather/scatter/index and data movement ----

    /// `dst[dl] = src[sl]` with the dims listed in `flip` read in reverse order (`flip`).
    ///
    /// # Safety
    /// Both geometries lie inside their buffers (of equal sizes); the buffers are distinct;
    /// `dl` has no internal overlap.
    unsafe fn copy_flipped(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        flip: &[usize],
        dt: DType,
    );

    /// Element `i` of `dl` (logical order) `= src` at logical position `idx[i]` of `sl`, zero
    /// where `idx[i] == SKIP`. Errors (nothing written) if a geometry lies outside its buffer
    /// or an index is out of `sl`'s range (both: `sl` over a storage shrunk by `set_`).
    fn take(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        idx: &[usize],
        dt: DType,
        op: &'static str,
    ) -> Result<()>;

    /// The scatter of [`Put`]: `dst` at logical position `p.dst[i]` of `dl` is set to (or with
    /// `p.accumulate` incremented by) `src` at logical position `p.src[i]` of `sl` (`i` when
    /// `p.src` is `None`), in order (the last write wins; duplicates accumulate). Positions
    /// equal to `SKIP` are skipped. Everything is validated before the first write: on error
    /// nothing changes. With [`Source::Same`] the values are read before any write.
    fn put(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: Source<'_, Self::Buffer>,
        sl: &Layout,
        p: &Put<'_>,
        dt: DType,
    ) -> Result<()>;

    /// Whole-row scatter of `index_put_` on dim 0: value row `j` (row-major contiguous `sl`,
    /// `rows.len()` rows of `g.row_len`) is written to (or added into) row `g.rows[j]` of `dst`.
    /// Large accumulations run in parallel chunks merged in a fixed order. Errors (nothing
    /// written) if a geometry lies outside its buffer.
    fn put_rows(
        dst: &mut Self::Buffer,
        g: &RowPut<'_>,
        src: &Self::Buffer,
        sl: &Layout,
        dt: DType,
    ) -> Result<()>;

    /// `dst[dl]` (a fresh output with `sl`'s sizes, except `idx.len()` along `dim`) `=
    /// src[sl]` with position `j` along `dim` read at `idx[j]` (in range): `index_select`.
    /// Errors if `sl` lies outside its buffer.
    fn index_select(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        dim: usize,
        idx: &[usize],
        dt: DType,
    ) -> Result<()>;

    /// Zeroes the elements of `dl` (at least 2 dims) outside the lower (`lower`) or upper
    /// triangle of its last two dims: `tril`/`triu` after a copy. Panics (internal) if `dl`
    /// lies outside the buffer.
    fn tri_zero(dst: &mut Self::Buffer, dl: &Layout, dt: DType, diagonal: i64, lower: bool);

    /// `scatter_reduce` on `dst[dl]` (which holds `self`'s values): combines `src[sl]` element
    /// `k` into position `t` for each `(t, k)` of `r.pairs`, floats computed in f64 and integers
    /// in wrapping i64, then cast back. Errors if a geometry lies outside its buffer.
    fn scatter_reduce(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        r: &Reduce<'_>,
        dt: DType,
    ) -> Result<()>;

    /// Logical (row-major) positions of the nonzero elements of `l` (NaN is nonzero, `-0.0`
    /// is not). Errors if `l` lies outside the buffer.
    fn nonzero(buf: &Self::Buffer, l: &Layout, dt: DType) -> Result<Vec<usize>>;

    /// `gather`: for every position `p` of the i64 index `w.index` (in `index`), `dst[dl]` at
    /// `p` `= src[sl]` at `p` with `p[dim]` replaced by the index value (in `[-size, size)`,
    /// negatives wrap). `dl` has the index's sizes and no internal overlap; `dst` is distinct
    /// from `src` and `index` (which may be one buffer). Errors: an index out of range
    /// (`IndexOutOfRange` naming `w.op`: the first in row-major order; `dst` may then be
    /// partly written) or a geometry outside its buffer (nothing written).
    #[allow(clippy::too_many_arguments)]
    fn gather_dim(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        index: &Self::Buffer,
        w: &DimWalk<'_>,
        dt: DType,
    ) -> Result<()>;

    /// `scatter` / `scatter_add`: for every position `p` of the index (row-major order per
    /// target: the last write wins, sums accumulate in index order), `dst[dl]` at `p` with
    /// `p[dim]` replaced by the index value `= src[sl]` at `p` (`+=` with `accumulate`). The
    /// buffers and errors are as in [`Backend::gather_dim`].
    #[allow(clippy::too_many_arguments)]
    fn scatter_dim(
        dst: &mut Self::Buffer,
        dl: &Layout,
        src: &Self::Buffer,
        sl: &Layout,
        index: &Self::Buffer,
        w: &DimWalk<'_>,
        dt: DType,
        accumulate: bool,
    ) -> Result<()>;

    // ---- sparse ----
    //
    // A pattern's index arrays and a sparse tensor's values are contiguous element ranges of
    // their buffers ([`Pattern`]); `shape` is the sparse tensor's full shape. Every range is
    // checked first (an error if it lies outside its buffer). Kernels whose output size depends
    // on the data return fresh storages of this device.

    /// Linear positions over the sparse dims of every stored entry, in storage order.
    fn sparse_positions(p: &Pattern<'_, Self::Buffer>, shape: &[usize]) -> Result<Vec<usize>>;

    /// (output row, dense row) of every stored entry of the sparse operand of sparse @ dense
    /// (2-D COO; 2-D or 3-D CSR, whose dense rows count across batches), in storage order.
    fn sparse_entry_rows(
        p: &Pattern<'_, Self::Buffer>,
        shape: &[usize],
    ) -> Result<(Vec<usize>, Vec<usize>)>;

    /// The i64 COO indices (`[rank, nnz]`, a fresh storage) of a CSR pattern, and whether the
    /// columns of every row are strictly increasing.
    fn csr_to_coo(p: &Pattern<'_, Self::Buffer>, shape: &[usize]) -> Result<(Storage, bool)>;

    /// Validates a pattern against `shape` (`SparseInvalid` errors naming `op`) and returns
    /// whether it is ordered (COO: coalesced; CSR: the columns of every row strictly increase).
    fn sparse_check(
        p: &Pattern<'_, Self::Buffer>,
        shape: &[usize],
        op: &'static str,
    ) -> Result<bool>;

    /// `coalesce` of a COO pattern: the sorted distinct index columns (`[sd, n_out]`, a fresh
    /// storage), for every input entry the output entry it sums into, and `n_out`.
    fn coo_coalesce(p: &Pattern<'_, Self::Buffer>) -> Result<(Storage, Vec<usize>, usize)>;

    /// The slice of a COO pattern to `ranges` (start, end per sparse dim): the kept index
    /// columns minus the starts (`[sd, m]`, a fresh storage), `m`, and the rows of `values`
    /// kept, in input order (a stable filter).
    fn coo_slice(
        p: &Pattern<'_, Self::Buffer>,
        coalesced: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, RowSel)>;

    /// The slice of a CSR pattern to `ranges` (one per dim): the output row offsets (a fresh
    /// storage, batch-local) and their count, the output columns minus the column start (a
    /// fresh storage) and the rows of `values` kept, in output order.
    fn csr_slice(
        p: &Pattern<'_, Self::Buffer>,
        sorted: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, Storage, RowSel)>;

    /// The rows (`n_rows` of `rl` elements of dtype `dt` from element `off`) with a nonzero
    /// element, ascending.
    fn sparse_nonzero_rows(
        src: &Self::Buffer,
        off: usize,
        n_rows: usize,
        rl: usize,
        dt: DType,
    ) -> Result<Vec<usize>>;

    /// `dst[j] = src[sel[j]]` over rows of `rl` elements: `src` holds `src_len` elements from
    /// element `soff`, `dst` (a distinct buffer) receives `sel.len()` rows from element 0.
    #[allow(clippy::too_many_arguments)]
    fn sparse_gather_rows(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()>;

    /// `dst[sel[j]] += src[j]` over rows of `rl` elements (`src`: `src_len` elements from
    /// element `soff`) into the first `dst_len` elements of `dst` (a distinct buffer), every
    /// other row zero. With [`Rows::List`] `dst` starts zeroed (repeated rows accumulate); with
    /// [`Rows::Runs`] every element is written.
    #[allow(clippy::too_many_arguments)]
    fn sparse_scatter_rows(
        dst: &mut Self::Buffer,
        dst_len: usize,
        src: &Self::Buffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()>;

    /// sparse @ dense: `out[rows[e]] += v[e] * d[cols[e]]` over rows of `s.n` elements into
    /// the zeroed first `out_len` elements of `out`; `v` holds one element per entry from
    /// `voff`, `d` `d_len` elements from `doff`.
    #[allow(clippy::too_many_arguments)]
    fn spmm(
        out: &mut Self::Buffer,
        out_len: usize,
        v: &Self::Buffer,
        voff: usize,
        d: &Self::Buffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()>;

    /// The values gradient of sparse @ dense: `out[e] = <g[rows[e]], d[cols[e]]>` over rows of
    /// `s.n` elements; `g` holds `g_len` elements from `goff`, `d` `d_len` from `doff`.
    #[allow(clippy::too_many_arguments)]
    fn sddmm(
        out: &mut Self::Buffer,
        g: &Self::Buffer,
        goff: usize,
        g_len: usize,
        d: &Self::Buffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()>;

    // ---- elementwise map ----

    /// The payload of this device's variant (an internal error for another device's buffer:
    /// the front door checks that the operands of one call share a device).
    fn buffer(d: &DeviceBuffer) -> &Self::Buffer;

    /// [`Backend::buffer`], borrowed mutably.
    fn buffer_mut(d: &mut DeviceBuffer) -> &mut Self::Buffer;

    /// A fresh storage of `nbytes` on this device whose contents the caller overwrites
    /// completely before any read (kernel outputs).
    fn storage_for_output(nbytes: usize) -> Result<Storage>;

    /// A fresh zero-filled storage of `nbytes` on this device (outputs that accumulate).
    fn storage_zeroed(nbytes: usize) -> Result<Storage>;

    /// `out[o + i] = f(a[i])` for `i < n` (elements of type `U` in `out`, `T` in `a`). A
    /// [`Source::Same`] range input starts at `o` (an in-place update; then `T == U`) or is
    /// disjoint from the output. Panics (an internal invariant) if a range lies outside its
    /// buffer, partially overlaps the output, or an in-place update changes the element type.
    fn flat_map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        f: &F,
    );

    /// `out[o + i] = f(a[i], b[i])` for `i < n`, with the contract of [`Backend::flat_map1`]
    /// for each input (a scalar input is read once, before anything is written).
    fn flat_map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut Self::Buffer,
        o: usize,
        n: usize,
        a: Flat<'_, Self::Buffer>,
        b: Flat<'_, Self::Buffer>,
        f: &F,
    );

    /// `x = f(x)` over the elements of `region` in a buffer borrowed exclusively; `region` is
    /// non-empty and names each element once (the callers' checks), and with `dense` it is
    /// non-overlapping and dense (a flat range). Panics (an internal invariant) if it lies
    /// outside the buffer.
    fn update_owned<T: Element, F: Fn(T) -> T + Sync>(
        buf: &mut Self::Buffer,
        region: &Layout,
        dense: bool,
        f: &F,
    );

    /// `out[ol] = f(a[al])` element by element; `al` has `ol`'s sizes (stride 0 on broadcast
    /// dims). Large maps are split over the worker team.
    ///
    /// # Safety
    /// Both geometries lie inside their buffers; `ol` has no internal overlap; with
    /// [`Source::Same`] the input geometry is identical to `ol` or disjoint from it.
    unsafe fn map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut Self::Buffer,
        ol: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        f: &F,
    );

    /// `out[ol] = f(a[al], b[bl])`, with the contract of [`Backend::map1`] for each input.
    ///
    /// # Safety
    /// As [`Backend::map1`], for both inputs.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut Self::Buffer,
        ol: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        b: Source<'_, Self::Buffer>,
        bl: &Layout,
        f: &F,
    );

    /// `out[ol] = f(c[cl], a[al], b[bl])` serially (the `where` kernel), with the contract of
    /// [`Backend::map1`] for each input.
    ///
    /// # Safety
    /// As [`Backend::map1`], for every input.
    #[allow(clippy::too_many_arguments)]
    unsafe fn map3<C: Element, T: Element, U: Element, F: Fn(C, T, T) -> U>(
        out: &mut Self::Buffer,
        ol: &Layout,
        c: Source<'_, Self::Buffer>,
        cl: &Layout,
        a: Source<'_, Self::Buffer>,
        al: &Layout,
        b: Source<'_, Self::Buffer>,
        bl: &Layout,
        f: &F,
    );

    /// Whether `f` holds for some element of `l` (elements of type `T`; false when empty).
    /// Errors if `l` lies outside the buffer.
    fn any<T: Element, F: Fn(T) -> bool>(buf: &Self::Buffer, l: &Layout, f: &F) -> Result<bool>;
}
