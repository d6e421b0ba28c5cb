//! Sparse kernels of the CPU backend: `pattern` reads a pattern's index arrays (linear
//! positions, matmul entry rows, CSR → COO indices, validation), `build` produces patterns
//! (`coalesce`, COO and CSR slicing), `rows` holds the row kernels over `values` (gather and
//! scatter of row selections, nonzero rows, sparse @ dense and its values gradient). Index
//! arrays and values are contiguous element ranges of their buffers; every range is checked
//! before use (the helpers below).

mod build;
mod pattern;
mod rows;

pub(crate) use build::{coalesce, coo_slice, csr_slice};
pub(crate) use pattern::{check, csr_to_coo, entry_rows, positions};
pub(crate) use rows::{gather_rows, nonzero_rows, scatter_rows, sddmm, spmm};

use super::index::{elems, elems_mut};
use crate::backend::Pattern;
use crate::backend::RowSel;
use crate::backend::Rows;
use crate::backend::SparseKernels;
use crate::backend::Spmm;
use crate::backend::cpu::Cpu;
use crate::dtype::Element;
use crate::storage::{CpuBuffer, Storage};
use crate::{DType, Result, bail};

/// An index element of a CSR pattern (i32 or i64).
pub(crate) trait Idx: Element + Ord {
    fn us(self) -> usize;
    fn of(v: usize) -> Self;
}
impl Idx for i64 {
    #[inline(always)]
    fn us(self) -> usize {
        self as usize
    }
    #[inline(always)]
    fn of(v: usize) -> Self {
        v as i64
    }
}
impl Idx for i32 {
    #[inline(always)]
    fn us(self) -> usize {
        self as u32 as usize
    }
    #[inline(always)]
    fn of(v: usize) -> Self {
        v as i32
    }
}

/// Runs `$body` with `$I` the index element type of `$dt` (i32 or i64; i64 for anything else).
macro_rules! with_idx {
    ($dt:expr, $I:ident => $body:expr) => {
        $crate::match_dtype!($dt, index, $I => $body, else {
            type $I = i64;
            $body
        })
    };
}

/// Above this many selected rows, row-list gathers and the COO slice filter run on the rayon
/// pool.
const PAR_ROWS: usize = 1 << 17;

/// Candidate entries per chunk of the two-pass COO filter.
const CHUNK: usize = 1 << 15;

/// Elements `[off, off + n)` of `b` as `T`; errors if the range lies outside the buffer (a
/// storage shrunk by `set_`/`resize_`).
fn range<T: Element>(b: &CpuBuffer, off: usize, n: usize) -> Result<&[T]> {
    let all = elems::<T>(b);
    match off.checked_add(n) {
        Some(e) if e <= all.len() => Ok(&all[off..e]),
        _ if n == 0 => Ok(&[]),
        _ => bail!(
            InvalidArgument,
            "storage",
            "element range lies outside its storage"
        ),
    }
}

/// A fresh buffer of `n` elements of `T` that `f` fills completely, as a storage.
fn fresh<T: Element>(n: usize, f: impl FnOnce(&mut [T])) -> Result<Storage> {
    let mut buf = CpuBuffer::for_overwrite(n * size_of::<T>())?;
    f(&mut elems_mut::<T>(&mut buf)[..n]);
    Ok(Storage::from_buffer(buf))
}

/// (batches, rows, cols) of a 2-D or 3-D CSR shape.
fn csr_dims(shape: &[usize]) -> (usize, usize, usize) {
    if shape.len() == 3 {
        (shape[0], shape[1], shape[2])
    } else {
        (1, shape[0], shape[1])
    }
}

/// The typed index arrays of a pattern.
enum Ix<'a, I> {
    Coo {
        ix: &'a [i64],
        sd: usize,
        nnz: usize,
    },
    Csr {
        cr: &'a [I],
        cl: &'a [I],
    },
}

/// Runs `f` on the typed index arrays of `p` (CSR arrays of the index type `I`).
fn with_pattern<I: Idx, R>(
    p: &Pattern<'_, CpuBuffer>,
    shape: &[usize],
    f: impl FnOnce(Ix<'_, I>) -> R,
) -> Result<R> {
    Ok(match *p {
        Pattern::Coo { ix, off, sd, nnz } => f(Ix::Coo {
            ix: range::<i64>(ix, off, sd * nnz)?,
            sd,
            nnz,
        }),
        Pattern::Csr {
            crow,
            crow_off,
            col,
            col_off,
            nnz,
            ..
        } => {
            let (b, r, _) = csr_dims(shape);
            f(Ix::Csr {
                cr: range::<I>(crow, crow_off, b * (r + 1))?,
                cl: range::<I>(col, col_off, nnz)?,
            })
        }
    })
}

/// The index dtype of a pattern (i64 for COO).
fn index_dtype(p: &Pattern<'_, CpuBuffer>) -> DType {
    match *p {
        Pattern::Coo { .. } => DType::I64,
        Pattern::Csr { dt, .. } => dt,
    }
}

pub(super) use with_idx;

impl SparseKernels for Cpu {
    fn sparse_positions(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<Vec<usize>> {
        positions(p, shape)
    }

    fn sparse_entry_rows(
        p: &Pattern<'_, CpuBuffer>,
        shape: &[usize],
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        entry_rows(p, shape)
    }

    fn csr_to_coo(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<(Storage, bool)> {
        csr_to_coo(p, shape)
    }

    fn sparse_check(p: &Pattern<'_, CpuBuffer>, shape: &[usize], op: &'static str) -> Result<bool> {
        check(p, shape, op)
    }

    fn coo_coalesce(p: &Pattern<'_, CpuBuffer>) -> Result<(Storage, Vec<usize>, usize)> {
        match *p {
            Pattern::Coo { ix, off, sd, nnz } => coalesce(ix, off, sd, nnz),
            Pattern::Csr { .. } => unreachable!("internal: coalesce of a CSR pattern"),
        }
    }

    fn coo_slice(
        p: &Pattern<'_, CpuBuffer>,
        coalesced: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, RowSel)> {
        match *p {
            Pattern::Coo { ix, off, sd, nnz } => {
                coo_slice(ix, off, sd, nnz, coalesced, ranges, shape)
            }
            Pattern::Csr { .. } => unreachable!("internal: coo_slice of a CSR pattern"),
        }
    }

    fn csr_slice(
        p: &Pattern<'_, CpuBuffer>,
        sorted: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, Storage, RowSel)> {
        csr_slice(p, sorted, ranges, shape)
    }

    fn sparse_nonzero_rows(
        src: &CpuBuffer,
        off: usize,
        n_rows: usize,
        rl: usize,
        dt: DType,
    ) -> Result<Vec<usize>> {
        nonzero_rows(src, off, n_rows, rl, dt)
    }

    fn sparse_gather_rows(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()> {
        gather_rows(dst, src, soff, src_len, sel, rl, dt)
    }

    fn sparse_scatter_rows(
        dst: &mut CpuBuffer,
        dst_len: usize,
        src: &CpuBuffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()> {
        scatter_rows(dst, dst_len, src, soff, src_len, sel, rl, dt)
    }

    fn spmm(
        out: &mut CpuBuffer,
        out_len: usize,
        v: &CpuBuffer,
        voff: usize,
        d: &CpuBuffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()> {
        spmm(out, out_len, v, voff, d, doff, d_len, s, dt)
    }

    fn sddmm(
        out: &mut CpuBuffer,
        g: &CpuBuffer,
        goff: usize,
        g_len: usize,
        d: &CpuBuffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()> {
        sddmm(out, g, goff, g_len, d, doff, d_len, s, dt)
    }
}
