//! `slice(x, axes, starts, ends)` for COO (any rank, hybrid) and CSR (2-D, batched 3-D), with
//! Paddle's attribute normalisation and a pattern-preserving backward.
//!
//! Normalisation per `(axis, start, end)` with `D = shape[axis]` (Paddle's `normalize_interval`,
//! step 1): a negative axis wraps once; `start`/`end` in `[-D, 0)` wrap once, then `start`
//! clamps to 0 and `end` to `D`; `start >= D`, `end <= -D` or `start >= end` give an empty dim.
//! Errors (`InvalidArgument`, nothing changes): axis out of `[-rank, rank)` (Paddle silently
//! uses axis 0 below `-rank`), differing lengths, duplicate axes (Paddle corrupts indices).
//!
//! COO: a stable filter (output order = input order, duplicates kept, `coalesced` propagated),
//! indices shifted by the starts; a window on a dense dim narrows `values`. A coalesced input
//! sliced on axis 0 finds its entry range by binary search (the rows form one contiguous block
//! of the sorted indices) and filters the other dims inside that block only. Large filters run
//! in two passes over fixed chunks (count, exact prefix sum, write in place), in parallel.
//! CSR: per-row filter with batch-local output crows; sorted columns are located by binary
//! search, so every output row is one contiguous run of the input (a row-only slice is one run
//! per batch) and columns and values are copied run by run.
//!
//! Backward: the gradient of `x` has `x`'s layout and exactly `x`'s pattern; entries that fell
//! inside the window take the output gradient's values, the others 0.

use super::grad::{SparseMapBackward, ValuesMap, csr_dims};
use super::kernel::{PAR_ROWS, RowSel, build, read};
use super::{Idx, SparseParts, dispatch_idx, make};
use crate::autograd::record;
use crate::{Result, Tensor, bail};

/// Paddle's `normalize_interval` for step 1 (in i128: a dim may exceed `i64::MAX`).
fn normalize_interval(st: i64, ed: i64, d: usize) -> (usize, usize) {
    let (st, ed, d) = (st as i128, ed as i128, d as i128);
    if d <= 0 || st >= d || ed <= -d {
        return (0, 0);
    }
    let st = if st < 0 { (st + d).max(0) } else { st };
    let ed = if ed < 0 { ed + d } else { ed.min(d) };
    if st >= ed {
        (0, 0)
    } else {
        (st as usize, ed as usize)
    }
}

/// Per-dim `(start, end)` for every dim of `shape` after validation and normalisation.
pub(crate) fn normalize(
    shape: &[usize],
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
) -> Result<Vec<(usize, usize)>> {
    let op = "sparse_slice";
    let rank = shape.len() as i64;
    if axes.len() != starts.len() {
        bail!(
            InvalidArgument,
            op,
            "The length of axes ({}) and length of starts ({}) should be same.",
            axes.len(),
            starts.len()
        );
    }
    if axes.len() != ends.len() {
        bail!(
            InvalidArgument,
            op,
            "The length of axes ({}) and length of ends ({}) should be same.",
            axes.len(),
            ends.len()
        );
    }
    let mut ranges: Vec<(usize, usize)> = shape.iter().map(|&d| (0, d)).collect();
    let mut seen = vec![false; shape.len()];
    for (i, &a) in axes.iter().enumerate() {
        if a >= rank {
            bail!(
                InvalidArgument,
                op,
                "The axis value should be less than the rank of input, but received axes[{}] = {}, rank of input is {}.",
                i,
                a,
                rank
            );
        }
        if a < -rank {
            bail!(
                InvalidArgument,
                op,
                "The axis value should be at least -rank of input, but received axes[{}] = {}, rank of input is {}.",
                i,
                a,
                rank
            );
        }
        let ax = if a < 0 { a + rank } else { a } as usize;
        if seen[ax] {
            bail!(
                InvalidArgument,
                op,
                "axis {} appears more than once in axes {:?} (after wrapping negative axes)",
                ax,
                axes
            );
        }
        seen[ax] = true;
        ranges[ax] = normalize_interval(starts[i], ends[i], shape[ax]);
    }
    Ok(ranges)
}

/// Slices a sparse COO or CSR tensor (a strided tensor is narrowed, as a view). See the module
/// docs for the exact semantics. Differentiable w.r.t. `x`.
///
/// ```
/// # use tapegrad::{Tensor, sparse};
/// let d = Tensor::from_vec(vec![0.0f32, 1.0, 0.0, 2.0, 3.0, 0.0, 4.0, 0.0], &[2, 4])?;
/// let s = sparse::slice(&d.to_sparse()?, &[1], &[1], &[3])?;
/// assert_eq!(s.shape(), vec![2, 2]);
/// assert_eq!(s.indices()?.to_vec::<i64>()?, vec![0, 1, 0, 1]);
/// assert_eq!(s.values()?.to_vec::<f32>()?, vec![1.0, 4.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn slice(x: &Tensor, axes: &[i64], starts: &[i64], ends: &[i64]) -> Result<Tensor> {
    let _span = tracing::trace_span!("sparse_slice").entered();
    let shape = x.shape();
    let ranges = normalize(&shape, axes, starts, ends)?;
    let out_shape: Vec<usize> = ranges.iter().map(|&(s, e)| e - s).collect();
    let Some(p) = x.sparse_parts() else {
        let mut v = x.clone();
        for (d, &(s, e)) in ranges.iter().enumerate() {
            if (s, e) != (0, shape[d]) {
                v = v.narrow(d as i64, s as i64, e - s)?;
            }
        }
        return Ok(v);
    };
    let (out_parts, map, window) = match p {
        SparseParts::Coo {
            indices,
            values,
            coalesced,
        } => coo_forward(indices, values, *coalesced, &ranges, &shape)?,
        SparseParts::Csr {
            crow,
            col,
            values,
            sorted,
        } => {
            let (cr, cl, sel) = dispatch_idx!(crow.dtype(), I => {
                csr_forward::<I>(crow, col, *sorted, &ranges, &shape)?
            });
            let parts = SparseParts::Csr {
                crow: cr,
                col: cl,
                values: sel.gather(values)?,
                sorted: *sorted,
            };
            (parts, sel, None)
        }
    };
    let out = make(out_parts.clone(), &out_shape)?;
    record(
        &[&out],
        &[x],
        Vec::new,
        SparseMapBackward {
            name: "SparseSliceBackward0",
            x: p.clone(),
            x_shape: shape,
            out: out_parts,
            out_shape,
            map: ValuesMap::Select { map, window },
        },
    )?;
    Ok(out)
}

impl Tensor {
    /// Method form of [`slice`](crate::sparse::slice).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let s = Tensor::from_vec(vec![1.0f32, 0.0, 2.0], &[3])?.to_sparse()?;
    /// assert_eq!(s.sparse_slice(&[0], &[-2], &[i64::MAX])?.values()?.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sparse_slice(&self, axes: &[i64], starts: &[i64], ends: &[i64]) -> Result<Tensor> {
        slice(self, axes, starts, ends)
    }
}

type CooOut = (SparseParts, RowSel, Option<Vec<(usize, usize)>>);

/// Candidate entries per chunk of the two-pass COO filter.
const CHUNK: usize = 1 << 15;

fn coo_forward(
    indices: &Tensor,
    values: &Tensor,
    coalesced: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<CooOut> {
    let (sd, nnz) = (indices.shape()[0], indices.shape()[1]);
    // restricted sparse dims: (dim, start, len)
    let tests: Vec<(usize, u64, u64)> = (0..sd)
        .filter(|&d| ranges[d] != (0, shape[d]))
        .map(|d| (d, ranges[d].0 as u64, (ranges[d].1 - ranges[d].0) as u64))
        .collect();
    let shifts: Vec<i64> = (0..sd).map(|d| ranges[d].0 as i64).collect();
    let (out_ix, sel) = read::<i64, _>(indices, |ix| -> Result<_> {
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
            let out = build::<i64>(&[sd, m], |o| {
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
            return Ok((out, RowSel::Runs(runs)));
        }
        coo_filter(ix, sd, nnz, lo, hi, rest, &shifts)
    })??;
    let mut vals = sel.gather(values)?;
    let dense_win: Vec<(usize, usize)> =
        (sd..shape.len()).map(|d| (ranges[d].0, shape[d])).collect();
    let narrowed = (sd..shape.len()).any(|d| ranges[d] != (0, shape[d]));
    let window = if narrowed {
        let _ng = crate::autograd::no_grad();
        if vals.numel() == 0 {
            // no values to keep: an empty tensor of the window's shape (narrowing an empty
            // tensor with huge dense sizes could overflow its storage offset, for nothing)
            let mut vshape = vec![vals.shape()[0]];
            vshape.extend((sd..shape.len()).map(|d| ranges[d].1 - ranges[d].0));
            vals = Tensor::zeros(&vshape, vals.dtype())?;
        } else {
            for (d, &(s, e)) in ranges.iter().enumerate().take(shape.len()).skip(sd) {
                vals = vals.narrow((d - sd + 1) as i64, s as i64, e - s)?;
            }
            vals = super::kernel::contig(&vals)?;
        }
        Some(dense_win)
    } else {
        None
    };
    Ok((
        SparseParts::Coo {
            indices: out_ix,
            values: vals,
            coalesced,
        },
        sel,
        window,
    ))
}

/// The stable COO filter over candidates `lo..hi`: entry `j` is kept if every restricted dim
/// `(d, start, len)` of `rest` holds it. Two passes over fixed chunks: count the hits of each
/// chunk, place the chunks by an exact prefix sum, then write the shifted indices and the
/// positions of each chunk into its own slice of the outputs (in parallel when large).
/// One chunk's share of a filter's output: (first input position, the chunk's slice of every
/// output index row, its slice of the row map).
type Piece<'a> = (usize, Vec<&'a mut [i64]>, &'a mut [usize]);

fn coo_filter(
    ix: &[i64],
    sd: usize,
    nnz: usize,
    lo: usize,
    hi: usize,
    rest: &[(usize, u64, u64)],
    shifts: &[i64],
) -> Result<(Tensor, RowSel)> {
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
    let par = hi - lo >= PAR_MIN;
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
    let out = build::<i64>(&[sd, m], |o| {
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
        let fill = |(c, mut ps, mp): (usize, Vec<&mut [i64]>, &mut [usize])| {
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
    Ok((out, RowSel::List(map)))
}

/// Above this many candidate entries the COO filter runs in parallel chunks.
const PAR_MIN: usize = PAR_ROWS;

/// CSR forward: (out crow, out col, the kept entries of `x` in output order). Every output row
/// is one run of its input row when the columns are sorted (binary search) or the column range
/// is complete; adjacent runs merge, so a row-only slice is one run per batch.
fn csr_forward<I: Idx>(
    crow: &Tensor,
    col: &Tensor,
    sorted: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Tensor, Tensor, RowSel)> {
    let (_, r, c) = csr_dims(shape);
    let three = shape.len() == 3;
    let (b0, b1) = if three { ranges[0] } else { (0, 1) };
    let (r0, r1) = ranges[shape.len() - 2];
    let (c0, c1) = ranges[shape.len() - 1];
    let full_cols = (c0, c1) == (0, c);
    let (ob, or) = (b1 - b0, r1 - r0);
    read::<I, _>(crow, |cr| {
        read::<I, _>(col, |cl| -> Result<_> {
            // batch offsets into col/values
            let mut base = 0usize;
            for bi in 0..b0 {
                base += cr[bi * (r + 1) + r].us();
            }
            let mut out_crow: Vec<I> = Vec::with_capacity(ob * (or + 1));
            // compare in usize: a bound may exceed the index type (i32 columns of a dim above
            // 2^31; libFuzzer sparse finding: the end wrapped and nothing was kept)
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
            let crow_t = build::<I>(&[out_crow.len()], |o| o.copy_from_slice(&out_crow))?;
            let col_t = build::<I>(&[sel.len()], |o| {
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
            Ok((crow_t, col_t, sel))
        })?
    })?
}
