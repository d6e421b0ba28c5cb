//! Reads of a sparse pattern's index arrays: linear positions, the entry rows of sparse @ dense,
//! the COO indices of a CSR pattern, and validation with the ordering flags.

use super::{Idx, Ix, csr_dims, fresh, index_dtype, with_idx, with_pattern};
use crate::backend::Pattern;
use crate::dtype::Element;
use crate::storage::{CpuBuffer, Storage};
use crate::{Result, bail};

/// Linear positions over the sparse dims of every stored entry, in storage order.
pub(crate) fn positions(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<Vec<usize>> {
    with_idx!(index_dtype(p), I => with_pattern::<I, _>(p, shape, |x| match x {
        Ix::Coo { ix, sd, nnz } => {
            let mut pos = vec![0usize; nnz];
            for d in 0..sd {
                let row = &ix[d * nnz..(d + 1) * nnz];
                for (p, &i) in pos.iter_mut().zip(row) {
                    *p = *p * shape[d] + i as usize;
                }
            }
            pos
        }
        Ix::Csr { cr, cl } => {
            let (b, r, c) = csr_dims(shape);
            let mut pos = Vec::with_capacity(cl.len());
            let mut base = 0usize;
            // batches after the last entry's are empty: stop there (an empty CSR with 2^28
            // batches returns at once)
            for bi in 0..b {
                if base == cl.len() {
                    break;
                }
                let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
                for ri in 0..r {
                    for k in seg[ri].us()..seg[ri + 1].us() {
                        pos.push((bi * r + ri) * c + cl[base + k].us());
                    }
                }
                base += seg[r].us();
            }
            pos
        }
    }))
}

/// (output row, dense row) of every stored entry of a 2-D COO or 2-D/3-D CSR `[.., M, K]`
/// operand of sparse @ dense, in storage order.
pub(crate) fn entry_rows(
    p: &Pattern<'_, CpuBuffer>,
    shape: &[usize],
) -> Result<(Vec<usize>, Vec<usize>)> {
    with_idx!(index_dtype(p), I => with_pattern::<I, _>(p, shape, |x| match x {
        Ix::Coo { ix, nnz, .. } => (
            ix[..nnz].iter().map(|&v| v as usize).collect(),
            ix[nnz..2 * nnz].iter().map(|&v| v as usize).collect(),
        ),
        Ix::Csr { cr, cl } => {
            let (b, m, k) = csr_dims(shape);
            let mut rows = Vec::with_capacity(cl.len());
            let mut cols = Vec::with_capacity(cl.len());
            let mut base = 0usize;
            for bi in 0..b {
                if base == cl.len() {
                    break;
                }
                let seg = &cr[bi * (m + 1)..(bi + 1) * (m + 1)];
                for ri in 0..m {
                    for e in seg[ri].us()..seg[ri + 1].us() {
                        rows.push(bi * m + ri);
                        cols.push(bi * k + cl[base + e].us());
                    }
                }
                base += seg[m].us();
            }
            (rows, cols)
        }
    }))
}

/// The i64 COO indices `[rank, nnz]` of a CSR pattern and whether the columns of every row
/// are strictly increasing.
pub(crate) fn csr_to_coo(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<(Storage, bool)> {
    let nnz = match *p {
        Pattern::Csr { nnz, .. } => nnz,
        Pattern::Coo { .. } => unreachable!("internal: csr_to_coo of a COO pattern"),
    };
    let (b, r, _) = csr_dims(shape);
    let three = shape.len() == 3;
    with_idx!(index_dtype(p), I => with_pattern::<I, _>(p, shape, |x| {
        let Ix::Csr { cr, cl } = x else { unreachable!() };
        let mut sorted = true;
        let t = fresh::<i64>(shape.len() * nnz, |o| {
            let mut k = 0usize;
            for bi in 0..b {
                let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
                for ri in 0..r {
                    for _ in seg[ri].us()..seg[ri + 1].us() {
                        if three {
                            o[k] = bi as i64;
                            o[nnz + k] = ri as i64;
                            o[2 * nnz + k] = cl[k].to_i64();
                        } else {
                            o[k] = ri as i64;
                            o[nnz + k] = cl[k].to_i64();
                        }
                        k += 1;
                    }
                    let row = &cl[k - (seg[ri + 1].us() - seg[ri].us())..k];
                    if row.windows(2).any(|w| w[0] >= w[1]) {
                        sorted = false;
                    }
                }
            }
        });
        t.map(|t| (t, sorted))
    })?)
}

/// Validates a pattern against `shape` (`SparseInvalid` naming `op`) and returns whether it is
/// ordered: COO index columns strictly lexicographically increasing (coalesced), CSR columns
/// strictly increasing in every row.
pub(crate) fn check(p: &Pattern<'_, CpuBuffer>, shape: &[usize], op: &'static str) -> Result<bool> {
    with_idx!(index_dtype(p), I => with_pattern::<I, _>(p, shape, |x| match x {
        Ix::Coo { ix, sd, nnz } => {
            for d in 0..sd {
                for (j, &i) in ix[d * nnz..(d + 1) * nnz].iter().enumerate() {
                    if i < 0 || i as u64 >= shape[d] as u64 {
                        bail!(
                            SparseInvalid,
                            op,
                            "index {} of stored element {} in sparse dim {} is out of range [0, {}) for shape {:?}",
                            i,
                            j,
                            d,
                            shape[d],
                            shape
                        );
                    }
                }
            }
            Ok(coo_ordered(ix, sd, nnz))
        }
        Ix::Csr { cr, cl } => {
            validate_csr::<I>(cr, cl, shape, op)?;
            Ok(csr_rows_sorted::<I>(cr, cl, shape))
        }
    })?)
}

/// True if the index columns are strictly lexicographically increasing.
fn coo_ordered(ix: &[i64], sd: usize, nnz: usize) -> bool {
    (1..nnz).all(|j| {
        for d in 0..sd {
            let (a, b) = (ix[d * nnz + j - 1], ix[d * nnz + j]);
            if a != b {
                return a < b;
            }
        }
        false
    })
}

fn validate_csr<I: Idx>(cr: &[I], cl: &[I], shape: &[usize], op: &'static str) -> Result<()> {
    let (b, r, c) = csr_dims(shape);
    let mut base = 0usize;
    for bi in 0..b {
        let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
        if seg[0].to_i64() != 0 {
            bail!(
                SparseInvalid,
                op,
                "crow_indices of batch {} must start at 0, got {}",
                bi,
                seg[0].to_i64()
            );
        }
        for i in 0..r {
            if seg[i + 1] < seg[i] {
                bail!(
                    SparseInvalid,
                    op,
                    "crow_indices of batch {} must not decrease, got {} then {} at row {}",
                    bi,
                    seg[i].to_i64(),
                    seg[i + 1].to_i64(),
                    i
                );
            }
        }
        let n = seg[r].us();
        if base + n > cl.len() {
            bail!(
                SparseInvalid,
                op,
                "the last crow_indices of the batches sum to at least {} but there are {} col_indices",
                base + n,
                cl.len()
            );
        }
        base += n;
    }
    if base != cl.len() {
        bail!(
            SparseInvalid,
            op,
            "the last crow_indices of the batches sum to {} (the nnz) but there are {} col_indices",
            base,
            cl.len()
        );
    }
    for (k, &j) in cl.iter().enumerate() {
        if j.to_i64() < 0 || j.to_i64() as u64 >= c as u64 {
            bail!(
                SparseInvalid,
                op,
                "col_indices[{}] = {} is out of range [0, {}) for shape {:?}",
                k,
                j.to_i64(),
                c,
                shape
            );
        }
    }
    Ok(())
}

/// True if the columns of every row are strictly increasing.
fn csr_rows_sorted<I: Idx>(cr: &[I], cl: &[I], shape: &[usize]) -> bool {
    let (b, r, _) = csr_dims(shape);
    let mut base = 0usize;
    for bi in 0..b {
        let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
        for ri in 0..r {
            let (lo, hi) = (base + seg[ri].us(), base + seg[ri + 1].us());
            if cl[lo..hi].windows(2).any(|w| w[0] >= w[1]) {
                return false;
            }
        }
        base += seg[r].us();
    }
    true
}
