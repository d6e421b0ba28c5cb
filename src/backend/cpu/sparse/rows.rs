//! Row kernels over a sparse tensor's `values`: gather and scatter of row selections, the
//! nonzero rows of a dense tensor, sparse @ dense and its values gradient.

use super::super::index::elems_mut;
use super::{PAR_ROWS, range};
use crate::backend::{Rows, Spmm};
use crate::dtype::Element;
use crate::storage::CpuBuffer;
use crate::{DType, Result, dispatch};

/// Rows (of `rl` elements, `n_rows` of them from element `off`) with a nonzero element.
pub(crate) fn nonzero_rows(
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

/// `dst[j] = src[sel[j]]` over rows of `rl` elements (`src`: `src_len` elements from
/// element `soff`; `dst` from element 0). Large scalar-row lists run on the rayon pool.
#[allow(clippy::too_many_arguments)]
pub(crate) fn gather_rows(
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

/// `dst[sel[j]] += src[j]` over rows of `rl` elements into the first `dst_len` elements of
/// `dst`, every other row zero. With [`RowSel::List`] `dst` starts zeroed and repeated rows
/// accumulate; with [`Rows::Runs`] (rows selected at most once) every element is written.
#[allow(clippy::too_many_arguments)]
pub(crate) fn scatter_rows(
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

/// `out[rows[e]] += v[e] * d[cols[e]]` over rows of `s.n` into the zeroed `out` (`out_len`
/// elements); `v` holds one element per entry from `voff`, `d` `d_len` elements from `doff`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn spmm(
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

/// `out[e] = <g[rows[e]], d[cols[e]]>` over rows of `s.n` (the values gradient of sparse @
/// dense); `g` holds `g_len` elements from `goff`, `d` `d_len` elements from `doff`.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sddmm(
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
