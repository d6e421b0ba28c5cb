//! Front door of the sparse family: reads of a pattern's index arrays (positions, matmul entry
//! rows, CSR → COO, validation), the pattern-producing kernels (`coalesce`, COO/CSR slicing),
//! and the row kernels over `values` (gather, scatter, nonzero rows, sparse @ dense and its
//! values gradient). Callers pass contiguous tensor data (a sparse payload's members); inputs
//! are only read (read locks; two reads never wait on each other), outputs are fresh storages
//! of the inputs' device, filled before anyone else holds them. Every function calls the
//! device's [`Backend`](crate::backend::Backend) method through `on_device!`.

use crate::backend::{Pattern, RowSel, Rows, Spmm};
use crate::storage::{DeviceBuffer, Storage};
use crate::tensor::TensorData;
use crate::{DType, Result};

/// The index arrays of a sparse pattern (contiguous tensor data).
pub(crate) enum PatternData<'a> {
    /// COO: i64 indices `[sd, nnz]`.
    Coo { ix: &'a TensorData },
    /// CSR: row offsets and columns (1-D) of the index dtype `dt`.
    Csr {
        crow: &'a TensorData,
        col: &'a TensorData,
        dt: DType,
    },
}

/// Takes the read locks of a pattern's storages and binds `$B` to their device's backend and
/// `$p` to the kernel's [`Pattern`], then evaluates `$body`.
macro_rules! on_pattern {
    ($data:expr, |$B:ident, $p:ident| $body:expr) => {
        match $data {
            PatternData::Coo { ix } => {
                let g = ix.storage.read_device();
                let (sd, nnz) = (ix.layout.sizes()[0], ix.layout.sizes()[1]);
                on_device!(&*g, |$B, b| {
                    let $p = Pattern::Coo {
                        ix: b,
                        off: ix.layout.offset(),
                        sd,
                        nnz,
                    };
                    $body
                })
            }
            PatternData::Csr { crow, col, dt } => {
                let (gc, gl) = (crow.storage.read_device(), col.storage.read_device());
                on_device!(&*gc, &*gl, |$B, c, l| {
                    let $p = Pattern::Csr {
                        crow: c,
                        crow_off: crow.layout.offset(),
                        col: l,
                        col_off: col.layout.offset(),
                        nnz: col.layout.numel(),
                        dt: *dt,
                    };
                    $body
                })
            }
        }
    };
}

/// Linear positions over the sparse dims of every stored entry:
/// [`SparseKernels::sparse_positions`](crate::backend::SparseKernels::sparse_positions).
pub(crate) fn positions(p: &PatternData<'_>, shape: &[usize]) -> Result<Vec<usize>> {
    on_pattern!(p, |B, pat| B::sparse_positions(&pat, shape))
}

/// (output row, dense row) of every entry of sparse @ dense:
/// [`SparseKernels::sparse_entry_rows`](crate::backend::SparseKernels::sparse_entry_rows).
pub(crate) fn entry_rows(p: &PatternData<'_>, shape: &[usize]) -> Result<(Vec<usize>, Vec<usize>)> {
    on_pattern!(p, |B, pat| B::sparse_entry_rows(&pat, shape))
}

/// COO indices of a CSR pattern and whether its rows are sorted:
/// [`SparseKernels::csr_to_coo`](crate::backend::SparseKernels::csr_to_coo).
pub(crate) fn csr_to_coo(p: &PatternData<'_>, shape: &[usize]) -> Result<(Storage, bool)> {
    on_pattern!(p, |B, pat| B::csr_to_coo(&pat, shape))
}

/// Validates a pattern and reports whether it is ordered:
/// [`SparseKernels::sparse_check`](crate::backend::SparseKernels::sparse_check).
pub(crate) fn check(p: &PatternData<'_>, shape: &[usize], op: &'static str) -> Result<bool> {
    on_pattern!(p, |B, pat| B::sparse_check(&pat, shape, op))
}

/// `coalesce` of COO indices:
/// [`SparseKernels::coo_coalesce`](crate::backend::SparseKernels::coo_coalesce).
pub(crate) fn coalesce(ix: &TensorData) -> Result<(Storage, Vec<usize>, usize)> {
    on_pattern!(&PatternData::Coo { ix }, |B, pat| B::coo_coalesce(&pat))
}

/// The slice of COO indices:
/// [`SparseKernels::coo_slice`](crate::backend::SparseKernels::coo_slice).
pub(crate) fn coo_slice(
    ix: &TensorData,
    coalesced: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Storage, usize, RowSel)> {
    on_pattern!(&PatternData::Coo { ix }, |B, pat| B::coo_slice(
        &pat, coalesced, ranges, shape
    ))
}

/// The slice of a CSR pattern:
/// [`SparseKernels::csr_slice`](crate::backend::SparseKernels::csr_slice).
pub(crate) fn csr_slice(
    p: &PatternData<'_>,
    sorted: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Storage, usize, Storage, RowSel)> {
    on_pattern!(p, |B, pat| B::csr_slice(&pat, sorted, ranges, shape))
}

/// Rows of `src` (contiguous, `n_rows` rows of `rl` elements) with a nonzero element:
/// [`SparseKernels::sparse_nonzero_rows`](crate::backend::SparseKernels::sparse_nonzero_rows).
pub(crate) fn nonzero_rows(
    src: &TensorData,
    n_rows: usize,
    rl: usize,
    dt: DType,
) -> Result<Vec<usize>> {
    let g = src.storage.read_device();
    on_device!(&*g, |B, b| B::sparse_nonzero_rows(
        b,
        src.layout.offset(),
        n_rows,
        rl,
        dt
    ))
}

/// A fresh storage of `out_len` elements (`sel.len()` rows) with the rows `sel` of `src`
/// (contiguous, rows of `rl` elements):
/// [`SparseKernels::sparse_gather_rows`](crate::backend::SparseKernels::sparse_gather_rows).
pub(crate) fn gather_rows(
    src: &TensorData,
    sel: Rows<'_>,
    rl: usize,
    out_len: usize,
    dt: DType,
) -> Result<Storage> {
    let g = src.storage.read_device();
    on_device!(&*g, |B, b| {
        let mut out = B::storage_for_output(out_len * dt.size())?;
        let o = B::buffer_mut(out.get_mut_device().expect("a fresh storage"));
        B::sparse_gather_rows(o, b, src.layout.offset(), src.layout.numel(), sel, rl, dt)?;
        Ok(out)
    })
}

/// A fresh storage of `out_len` elements (rows of `rl`), zero except `out[sel[j]] += src[j]`:
/// [`SparseKernels::sparse_scatter_rows`](crate::backend::SparseKernels::sparse_scatter_rows).
pub(crate) fn scatter_rows(
    src: &TensorData,
    sel: Rows<'_>,
    out_len: usize,
    rl: usize,
    dt: DType,
) -> Result<Storage> {
    let g = src.storage.read_device();
    let nbytes = out_len * dt.size();
    on_device!(&*g, |B, b| {
        // a list accumulates into zeros; runs write every element themselves
        let mut out = match sel {
            Rows::List(_) => B::storage_zeroed(nbytes)?,
            Rows::Runs(_) => B::storage_for_output(nbytes)?,
        };
        let o = B::buffer_mut(out.get_mut_device().expect("a fresh storage"));
        B::sparse_scatter_rows(
            o,
            out_len,
            b,
            src.layout.offset(),
            src.layout.numel(),
            sel,
            rl,
            dt,
        )?;
        Ok(out)
    })
}

/// sparse @ dense into a fresh storage of `out_len` elements:
/// [`SparseKernels::spmm`](crate::backend::SparseKernels::spmm). `v` (one value per entry) and `d`
/// are contiguous.
pub(crate) fn spmm(
    v: &TensorData,
    d: &TensorData,
    s: &Spmm<'_>,
    out_len: usize,
    dt: DType,
) -> Result<Storage> {
    let (gv, gd) = (v.storage.read_device(), d.storage.read_device());
    on_device!(&*gv, &*gd, |B, bv, bd| {
        let mut out = B::storage_zeroed(out_len * dt.size())?;
        let o = B::buffer_mut(out.get_mut_device().expect("a fresh storage"));
        B::spmm(
            o,
            out_len,
            bv,
            v.layout.offset(),
            bd,
            d.layout.offset(),
            d.layout.numel(),
            s,
            dt,
        )?;
        Ok(out)
    })
}

/// The values gradient of sparse @ dense into a fresh storage of one element per entry:
/// [`SparseKernels::sddmm`](crate::backend::SparseKernels::sddmm). `g` and `d` are contiguous.
pub(crate) fn sddmm(g: &TensorData, d: &TensorData, s: &Spmm<'_>, dt: DType) -> Result<Storage> {
    let (gg, gd) = (g.storage.read_device(), d.storage.read_device());
    on_device!(&*gg, &*gd, |B, bg, bd| {
        let mut out = B::storage_for_output(s.rows.len() * dt.size())?;
        let o = B::buffer_mut(out.get_mut_device().expect("a fresh storage"));
        B::sddmm(
            o,
            bg,
            g.layout.offset(),
            g.layout.numel(),
            bd,
            d.layout.offset(),
            d.layout.numel(),
            s,
            dt,
        )?;
        Ok(out)
    })
}
