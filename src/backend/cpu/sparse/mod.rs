//! Sparse kernels of the CPU backend: `pattern` reads a pattern's index arrays (linear
//! positions, matmul entry rows, CSR → COO indices, validation), `build` produces patterns
//! (`coalesce`, COO and CSR slicing); the row kernels over `values` (gather and scatter of row
//! selections, nonzero rows, sparse @ dense and its values gradient) are written in the
//! `SparseKernels` impl below. Index arrays and values are contiguous element ranges of their
//! buffers; every range is checked before use (the helpers below).

mod build;
mod pattern;

pub(crate) use build::{coalesce, coo_slice, csr_slice};
pub(crate) use pattern::{check, csr_to_coo, entry_rows, positions};

use super::index::{elems, elems_mut};
use crate::backend::Pattern;
use crate::backend::RowSel;
use crate::backend::Rows;
use crate::backend::SparseKernels;
use crate::backend::Spmm;
use crate::backend::cpu::Cpu;
use crate::dtype::Element;
use crate::storage::{CpuBuffer, Storage};
use crate::{DType, Result, bail, dispatch};

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
        dispatch!(dt, T => {
            let v = range::<T>(src, off, n_rows * rl)?;
            let zero = T::zero();
            Ok((0..n_rows)
                .filter(|&r| v[r * rl..(r + 1) * rl].iter().any(|&e| e != zero))
                .collect())
        })
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
        let m = sel.len();
        dispatch!(dt, T => {
            let src = range::<T>(src, soff, src_len)?;
            let dst = &mut elems_mut::<T>(dst)[..m * rl];
            match sel {
                // large scalar-row lists run on the rayon pool
                Rows::List(l)
                    if l.len() >= PAR_ROWS && rl == 1 && crate::backend::cpu::threads::parallel() =>
                {
                    use rayon::prelude::*;
                    const STEP: usize = 1 << 14;
                    crate::backend::cpu::threads::install(|| {
                        dst.par_chunks_mut(STEP).zip(l.par_chunks(STEP)).for_each(|(d, s)| {
                            for (o, &i) in d.iter_mut().zip(s) {
                                *o = src[i];
                            }
                        })
                    });
                }
                Rows::List(l) if rl == 1 => {
                    for (d, &s) in dst.iter_mut().zip(l) {
                        *d = src[s];
                    }
                }
                Rows::List(l) => {
                    for (j, &s) in l.iter().enumerate() {
                        dst[j * rl..(j + 1) * rl].copy_from_slice(&src[s * rl..(s + 1) * rl]);
                    }
                }
                Rows::Runs(runs) => {
                    let mut o = 0;
                    for &(s, n) in runs.iter() {
                        dst[o * rl..(o + n) * rl].copy_from_slice(&src[s * rl..(s + n) * rl]);
                        o += n;
                    }
                }
            }
            Ok(())
        })
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
        dispatch!(dt, T => {
            let src = range::<T>(src, soff, src_len)?;
            let dst = &mut elems_mut::<T>(dst)[..dst_len];
            match sel {
                Rows::List(map) if rl == 1 => {
                    for (&t, &v) in map.iter().zip(src) {
                        dst[t] = dst[t].add(v);
                    }
                }
                Rows::List(map) => {
                    for (j, &t) in map.iter().enumerate() {
                        for e in 0..rl {
                            let d = &mut dst[t * rl + e];
                            *d = d.add(src[j * rl + e]);
                        }
                    }
                }
                Rows::Runs(runs) => {
                    // every element is written: the gaps between runs get zeros
                    let (mut o, mut at) = (0usize, 0usize);
                    for &(s, k) in runs {
                        dst[at * rl..s * rl].fill(T::zero());
                        dst[s * rl..(s + k) * rl].copy_from_slice(&src[o * rl..(o + k) * rl]);
                        o += k;
                        at = s + k;
                    }
                    dst[at * rl..].fill(T::zero());
                }
            }
            Ok(())
        })
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
        let n = s.n;
        dispatch!(dt, T => {
            let v = range::<T>(v, voff, s.rows.len())?;
            let d = range::<T>(d, doff, d_len)?;
            let out = &mut elems_mut::<T>(out)[..out_len];
            for ((&a, &r), &c) in v.iter().zip(s.rows).zip(s.cols) {
                let (o, sr) = (r * n, c * n);
                for j in 0..n {
                    out[o + j] = out[o + j].add(a.mul(d[sr + j]));
                }
            }
            Ok(())
        })
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
        let n = s.n;
        dispatch!(dt, T => {
            let gg = range::<T>(g, goff, g_len)?;
            let dd = range::<T>(d, doff, d_len)?;
            let o = &mut elems_mut::<T>(out)[..s.rows.len()];
            for ((o, &r), &c) in o.iter_mut().zip(s.rows).zip(s.cols) {
                let (r, c) = (r * n, c * n);
                let mut acc = T::zero();
                for j in 0..n {
                    acc = acc.add(gg[r + j].mul(dd[c + j]));
                }
                *o = acc;
            }
            Ok(())
        })
    }
}
