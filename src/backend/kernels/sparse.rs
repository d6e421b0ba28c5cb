//! Sparse kernels (`sparse/`): pattern reads (`sparse_positions`, `sparse_entry_rows`,
//! `csr_to_coo`, `sparse_check`), pattern builds (`coo_coalesce`, `coo_slice`, `csr_slice`) and
//! row kernels over `values` (`sparse_gather_rows`, `sparse_scatter_rows`,
//! `sparse_nonzero_rows`, `spmm`, `sddmm`). Front door `dispatch/sparse.rs`; CPU body
//! `cpu/sparse/`.

use crate::backend::{Device, Pattern, RowSel, Rows, Spmm};
use crate::storage::Storage;
use crate::{DType, Result};

/// Sparse pattern reads, pattern builds and row kernels over `values`.
///
/// A pattern's index arrays and a sparse tensor's values are contiguous element ranges of their
/// buffers ([`Pattern`]); `shape` is the sparse tensor's full shape. Every range is checked first
/// (an error if it lies outside its buffer). Kernels whose output size depends on the data return
/// fresh storages of this device.
pub(crate) trait SparseKernels: Device {
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
}
