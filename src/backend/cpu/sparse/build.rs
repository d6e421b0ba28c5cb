//! Kernels that produce a pattern: `coalesce` of COO indices and the COO / CSR slices (a
//! stable chunked filter, binary search on sorted rows), each with the rows of `values` kept.

use super::{
    CHUNK, Idx, Ix, PAR_ROWS, csr_dims, fresh, index_dtype, range, with_idx, with_pattern,
};
use crate::Result;
use crate::backend::{Pattern, RowSel};
use crate::storage::{CpuBuffer, Storage};

/// `coalesce` of COO indices `ix` (`[sd, nnz]` from `off`): the sorted distinct index columns
/// (`[sd, n_out]`), and for every input entry the output entry it sums into.
pub(crate) fn coalesce(
    ix: &CpuBuffer,
    off: usize,
    sd: usize,
    nnz: usize,
) -> Result<(Storage, Vec<usize>, usize)> {
    let ix = range::<i64>(ix, off, sd * nnz)?;
    let mut perm: Vec<usize> = (0..nnz).collect();
    perm.sort_by(|&a, &b| {
        for d in 0..sd {
            let c = ix[d * nnz + a].cmp(&ix[d * nnz + b]);
            if c != std::cmp::Ordering::Equal {
                return c;
            }
        }
        a.cmp(&b)
    });
    let mut map = vec![0usize; nnz];
    let mut firsts: Vec<usize> = Vec::with_capacity(nnz);
    for (k, &e) in perm.iter().enumerate() {
        let dup = k > 0 && (0..sd).all(|d| ix[d * nnz + e] == ix[d * nnz + perm[k - 1]]);
        if !dup {
            firsts.push(e);
        }
        map[e] = firsts.len() - 1;
    }
    let n_out = firsts.len();
    let out_ix = fresh::<i64>(sd * n_out, |o| {
        for d in 0..sd {
            for (j, &e) in firsts.iter().enumerate() {
                o[d * n_out + j] = ix[d * nnz + e];
            }
        }
    })?;
    Ok((out_ix, map, n_out))
}

/// The COO slice of indices `ix` (`[sd, nnz]` from `off`) to `ranges` (per sparse dim: start,
/// end): the kept index columns shifted by the starts (`[sd, m]`), their count `m` and the rows
/// of `values` they keep, in input order. A coalesced input restricted on dim 0 finds its block
/// by binary search; large filters run in parallel chunks.
pub(crate) fn coo_slice(
    ix: &CpuBuffer,
    off: usize,
    sd: usize,
    nnz: usize,
    coalesced: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Storage, usize, RowSel)> {
    let ix = range::<i64>(ix, off, sd * nnz)?;
    // restricted sparse dims: (dim, start, len)
    let tests: Vec<(usize, u64, u64)> = (0..sd)
        .filter(|&d| ranges[d] != (0, shape[d]))
        .map(|d| (d, ranges[d].0 as u64, (ranges[d].1 - ranges[d].0) as u64))
        .collect();
    let shifts: Vec<i64> = (0..sd).map(|d| ranges[d].0 as i64).collect();
    // candidate range: everything, or the axis-0 block of a coalesced input
    let use_bs = coalesced && tests.first().is_some_and(|t| t.0 == 0);
    let (lo, hi) = if use_bs {
        let row0 = &ix[..nnz];
        let (s, e) = ranges[0];
        let lo = row0.partition_point(|&v| (v as u64) < s as u64);
        (
            lo,
            lo + row0[lo..].partition_point(|&v| (v as u64) < e as u64),
        )
    } else {
        (0, nnz)
    };
    let rest = if use_bs { &tests[1..] } else { &tests[..] };
    if rest.is_empty() {
        // one contiguous block: copy it, shifting the restricted dims
        let m = hi - lo;
        let out = fresh::<i64>(sd * m, |o| {
            for d in 0..sd {
                let src = &ix[d * nnz + lo..d * nnz + hi];
                let dst = &mut o[d * m..(d + 1) * m];
                if shifts[d] == 0 {
                    dst.copy_from_slice(src);
                } else {
                    for (o, &v) in dst.iter_mut().zip(src) {
                        *o = v - shifts[d];
                    }
                }
            }
        })?;
        let runs = if m > 0 { vec![(lo, m)] } else { Vec::new() };
        return Ok((out, m, RowSel::Runs(runs)));
    }
    coo_filter(ix, sd, nnz, lo, hi, rest, &shifts)
}

/// One chunk's share of a filter's output: (chunk number, the chunk's slice of every output
/// index row, its slice of the row map).
type Piece<'a> = (usize, Vec<&'a mut [i64]>, &'a mut [usize]);

/// The stable COO filter over candidates `lo..hi`: entry `j` is kept if every restricted dim
/// `(d, start, len)` of `rest` holds it. Two passes over fixed chunks: count the hits of each
/// chunk, place the chunks by an exact prefix sum, then write the shifted indices and the
/// positions of each chunk into its own slice of the outputs (in parallel when large).
fn coo_filter(
    ix: &[i64],
    sd: usize,
    nnz: usize,
    lo: usize,
    hi: usize,
    rest: &[(usize, u64, u64)],
    shifts: &[i64],
) -> Result<(Storage, usize, RowSel)> {
    use rayon::prelude::*;
    let hit = |j: usize| {
        rest.iter()
            .all(|&(d, s, len)| (ix[d * nnz + j] as u64).wrapping_sub(s) < len)
    };
    // one restricted dim (the common case) gets a tight loop
    let single = (rest.len() == 1).then(|| rest[0]);
    let count = |a: usize, b: usize| -> usize {
        match single {
            Some((d, s, len)) => ix[d * nnz + a..d * nnz + b]
                .iter()
                .map(|&v| ((v as u64).wrapping_sub(s) < len) as usize)
                .sum(),
            None => (a..b).filter(|&j| hit(j)).count(),
        }
    };
    let n_chunks = (hi - lo).div_ceil(CHUNK);
    let bounds = |c: usize| (lo + c * CHUNK, (lo + (c + 1) * CHUNK).min(hi));
    let par = hi - lo >= PAR_ROWS && crate::backend::cpu::threads::parallel();
    let counts: Vec<usize> = if par {
        crate::backend::cpu::threads::install(|| {
            (0..n_chunks)
                .into_par_iter()
                .map(|c| {
                    let (a, b) = bounds(c);
                    count(a, b)
                })
                .collect()
        })
    } else {
        (0..n_chunks)
            .map(|c| {
                let (a, b) = bounds(c);
                count(a, b)
            })
            .collect()
    };
    let m: usize = counts.iter().sum();
    let mut map = vec![0usize; m];
    let out = fresh::<i64>(sd * m, |o| {
        // carve each chunk's slice out of every output row and of the map
        let mut rows: Vec<&mut [i64]> = if m == 0 {
            Vec::new()
        } else {
            o.chunks_mut(m).collect()
        };
        let mut map_rest: &mut [usize] = &mut map;
        let mut pieces: Vec<Piece<'_>> = Vec::with_capacity(n_chunks);
        for (c, &k) in counts.iter().enumerate() {
            let mut ps = Vec::with_capacity(sd);
            for r in rows.iter_mut() {
                let (a, b) = std::mem::take(r).split_at_mut(k);
                ps.push(a);
                *r = b;
            }
            let (a, b) = std::mem::take(&mut map_rest).split_at_mut(k);
            map_rest = b;
            pieces.push((c, ps, a));
        }
        // Branch-free compaction: every candidate is written at the next free slot, which only
        // advances on a hit (hits are unpredictable, a branch on them mispredicts half the time).
        let fill = |(c, mut ps, mp): Piece<'_>| {
            let (a, b) = bounds(c);
            let k = mp.len();
            if k == 0 {
                return;
            }
            let mut w = 0;
            match (sd, single) {
                (2, Some((d, s, len))) => {
                    // owned slices in locals (no reloads through the Vec on every store)
                    let p1 = ps.pop().expect("two rows");
                    let p0 = ps.pop().expect("two rows");
                    let (r0, r1) = (&ix[a..b], &ix[nnz + a..nnz + b]);
                    let tested = if d == 0 { r0 } else { r1 };
                    for (q, ((&i0, &i1), &t)) in r0.iter().zip(r1).zip(tested).enumerate() {
                        if w == k {
                            break;
                        }
                        p0[w] = i0 - shifts[0];
                        p1[w] = i1 - shifts[1];
                        mp[w] = a + q;
                        w += ((t as u64).wrapping_sub(s) < len) as usize;
                    }
                }
                _ => {
                    for j in a..b {
                        if w == k {
                            break;
                        }
                        for (d, p) in ps.iter_mut().enumerate() {
                            p[w] = ix[d * nnz + j] - shifts[d];
                        }
                        mp[w] = j;
                        w += hit(j) as usize;
                    }
                }
            }
            debug_assert_eq!(w, k);
        };
        if par {
            crate::backend::cpu::threads::install(|| pieces.into_par_iter().for_each(fill));
        } else {
            pieces.into_iter().for_each(fill);
        }
    })?;
    Ok((out, m, RowSel::List(map)))
}

/// The CSR slice of a pattern to `ranges` (one per dim of `shape`): the output row offsets
/// (batch-local, with their count), the output columns (shifted by the column start) and the
/// kept entries in output order. Every output row is one run of its input row when the
/// columns are sorted (binary search) or the column range is complete; adjacent runs merge,
/// so a row-only slice is one run per batch.
pub(crate) fn csr_slice(
    p: &Pattern<'_, CpuBuffer>,
    sorted: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Storage, usize, Storage, RowSel)> {
    with_idx!(index_dtype(p), I => with_pattern::<I, _>(p, shape, |x| {
        let Ix::Csr { cr, cl } = x else {
            unreachable!("internal: csr_slice of a COO pattern")
        };
        csr_slice_typed::<I>(cr, cl, sorted, ranges, shape)
    })?)
}

fn csr_slice_typed<I: Idx>(
    cr: &[I],
    cl: &[I],
    sorted: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Storage, usize, Storage, RowSel)> {
    let (_, r, c) = csr_dims(shape);
    let three = shape.len() == 3;
    let (b0, b1) = if three { ranges[0] } else { (0, 1) };
    let (r0, r1) = ranges[shape.len() - 2];
    let (c0, c1) = ranges[shape.len() - 1];
    let full_cols = (c0, c1) == (0, c);
    let (ob, or) = (b1 - b0, r1 - r0);
    // batch offsets into col/values
    let mut base = 0usize;
    for bi in 0..b0 {
        base += cr[bi * (r + 1) + r].us();
    }
    let mut out_crow: Vec<I> = Vec::with_capacity(ob * (or + 1));
    // compare in usize: a bound may exceed the index type (i32 columns of a dim above 2^31;
    // libFuzzer sparse finding: the end wrapped and nothing was kept)
    let (cs, ce) = (c0, c1);
    let sel = if full_cols || sorted {
        let mut runs: Vec<(usize, usize)> = Vec::new();
        let mut push = |s: usize, n: usize| match runs.last_mut() {
            Some(l) if l.0 + l.1 == s => l.1 += n,
            _ if n > 0 => runs.push((s, n)),
            _ => {}
        };
        for bi in b0..b1 {
            let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
            out_crow.push(I::of(0));
            if full_cols {
                let first = seg[r0].us();
                for ri in r0..r1 {
                    out_crow.push(I::of(seg[ri + 1].us() - first));
                }
                push(base + first, seg[r1].us() - first);
            } else {
                let mut n = 0usize;
                for ri in r0..r1 {
                    let (lo, hi) = (base + seg[ri].us(), base + seg[ri + 1].us());
                    let row = &cl[lo..hi];
                    let a = row.partition_point(|&v| v.us() < cs);
                    let e = a + row[a..].partition_point(|&v| v.us() < ce);
                    push(lo + a, e - a);
                    n += e - a;
                    out_crow.push(I::of(n));
                }
            }
            base += seg[r].us();
        }
        RowSel::Runs(runs)
    } else {
        let mut hits: Vec<usize> = Vec::new();
        for bi in b0..b1 {
            let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
            out_crow.push(I::of(0));
            let start = hits.len();
            for ri in r0..r1 {
                let (lo, hi) = (base + seg[ri].us(), base + seg[ri + 1].us());
                hits.extend((lo..hi).filter(|&k| cl[k].us() >= cs && cl[k].us() < ce));
                out_crow.push(I::of(hits.len() - start));
            }
            base += seg[r].us();
        }
        RowSel::List(hits)
    };
    let crow_t = fresh::<I>(out_crow.len(), |o| o.copy_from_slice(&out_crow))?;
    let m = sel.rows().len();
    let col_t = fresh::<I>(m, |o| {
        let shift = |v: I| if c0 == 0 { v } else { I::of(v.us() - c0) };
        match &sel {
            RowSel::Runs(runs) => {
                let mut w = 0;
                for &(s, n) in runs {
                    let dst = &mut o[w..w + n];
                    if c0 == 0 {
                        dst.copy_from_slice(&cl[s..s + n]);
                    } else {
                        for (d, &v) in dst.iter_mut().zip(&cl[s..s + n]) {
                            *d = shift(v);
                        }
                    }
                    w += n;
                }
            }
            RowSel::List(hits) => {
                for (d, &h) in o.iter_mut().zip(hits) {
                    *d = shift(cl[h]);
                }
            }
        }
    })?;
    Ok((crow_t, out_crow.len(), col_t, sel))
}
