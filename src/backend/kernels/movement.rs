//! Gather/scatter/index and data movement (`ops/movement/`, `index/`, `ops/storage/`): gather and
//! scatter over logical positions (`take`, `put`: advanced indexing, `masked_select`, the
//! backward of index ops), the row scatter of `index_put_` (`put_rows`), `gather`/`scatter`/
//! `scatter_add` with the index tensor read in place (`gather_dim`, `scatter_dim`),
//! `index_select`, `flip` (`copy_flipped`), `tril`/`triu` (`tri_zero`), `scatter_reduce` and
//! `nonzero`. `cat`, `roll` and `repeat` are strided copies of regions
//! ([`CopyKernels::copy`](super::CopyKernels::copy)). Front door `dispatch/movement.rs`; CPU bodies
//! `cpu/movement.rs`, `cpu/index.rs`, `cpu/gather_dim.rs`.

use crate::backend::{Device, DimWalk, Put, Reduce, RowPut, Source};
use crate::layout::Layout;
use crate::{DType, Result};

/// Gather/scatter/index kernels and the data movement that is not a plain strided copy.
pub(crate) trait MovementKernels: Device {
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

    /// `nonzero`'s result from the positions [`Self::nonzero`] found: for the `n` ascending
    /// logical positions `hits` of a tensor of `sizes`, their coordinates as i64 in `dst`
    /// (from element 0; `n * sizes.len()` elements), all of dim 0 first, then of dim 1, ...:
    /// the storage of the `[n, d]` result with strides `[1, n]`.
    fn nonzero_coords(dst: &mut Self::Buffer, hits: &[usize], sizes: &[usize]);

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
    /// buffers and errors are as in [`Self::gather_dim`].
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
}
