//! Sparse kernels of the CPU backend: reads of a pattern's index arrays (linear positions,
//! matmul entry rows, CSR → COO indices, validation), the pattern-producing kernels (`coalesce`,
//! COO and CSR slicing) and the row kernels over `values` (gather and scatter of
//! [`RowSel`] selections, nonzero rows, sparse @ dense and its values gradient). Index arrays and
//! values are contiguous element ranges of their buffers; every range is checked before use.

use super::index::{elems, elems_mut};
use crate::backend::{Pattern, RowSel, Rows, Spmm};
use crate::dtype::Element;
use crate::storage::{CpuBuffer, Storage};
use crate::{DType, Result, bail, dispatch, match_dtype};

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
        match_dtype!($dt, index, $I => $body, else {
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

// ---- pattern reads ----

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
            for bi in 0..b {
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

// ---- pattern builds ----

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
    let par = hi - lo >= PAR_ROWS;
    let counts: Vec<usize> = if par {
        (0..n_chunks)
            .into_par_iter()
            .map(|c| {
                let (a, b) = bounds(c);
                count(a, b)
            })
            .collect()
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
            pieces.into_par_iter().for_each(fill);
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

// ---- values ----

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
            Rows::List(l) if l.len() >= PAR_ROWS && rl == 1 => {
                use rayon::prelude::*;
                const STEP: usize = 1 << 14;
                dst.par_chunks_mut(STEP).zip(l.par_chunks(STEP)).for_each(|(d, s)| {
                    for (o, &i) in d.iter_mut().zip(s) {
                        *o = src[i];
                    }
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
pub(crate) fn scatter_rows(
    dst: &mut CpuBuffer,
    dst_len: usize,
    src: &CpuBuffer,
    soff: usize,
    sel: Rows<'_>,
    rl: usize,
    dt: DType,
) -> Result<()> {
    let m = sel.len();
    dispatch!(dt, T => {
        let src = range::<T>(src, soff, m * rl)?;
        let dst = &mut elems_mut::<T>(dst)[..dst_len];
        match sel {
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
