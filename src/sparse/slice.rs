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
//! sliced on axis 0 finds its entry range by binary search. CSR: per-row filter with
//! batch-local output crows; a row-only slice copies one contiguous range per batch; sorted
//! columns are located by binary search.
//!
//! Backward: the gradient of `x` has `x`'s layout and exactly `x`'s pattern; entries that fell
//! inside the window take the output gradient's values, the others 0.

use super::grad::{SparseMapBackward, ValuesMap, csr_dims};
use super::kernel::{build, gather_rows, read};
use super::{Idx, SparseParts, dispatch_idx, make};
use crate::autograd::record;
use crate::{Result, Tensor, bail};

/// Paddle's `normalize_interval` for step 1.
fn normalize_interval(st: i64, ed: i64, d: usize) -> (usize, usize) {
    let d = d as i64;
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
            let (cr, cl, hits) = dispatch_idx!(crow.dtype(), I => {
                csr_forward::<I>(crow, col, *sorted, &ranges, &shape)?
            });
            let parts = SparseParts::Csr {
                crow: cr,
                col: cl,
                values: gather_rows(values, &hits)?,
                sorted: *sorted,
            };
            (parts, hits, None)
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

type CooOut = (SparseParts, Vec<usize>, Option<Vec<(usize, usize)>>);

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
    let (out_ix, hits) = read::<i64, _>(indices, |ix| -> Result<_> {
        // candidate range: everything, or the axis-0 block of a coalesced input
        let use_bs = coalesced && tests.first().is_some_and(|t| t.0 == 0);
        let (lo, hi) = if use_bs {
            let row0 = &ix[..nnz];
            let (s, e) = ranges[0];
            (
                row0.partition_point(|&v| (v as u64) < s as u64),
                row0.partition_point(|&v| (v as u64) < e as u64),
            )
        } else {
            (0, nnz)
        };
        let rest = if use_bs { &tests[1..] } else { &tests[..] };
        let hit = |j: usize| {
            rest.iter()
                .all(|&(d, s, len)| (ix[d * nnz + j] as u64).wrapping_sub(s) < len)
        };
        let hits: Vec<usize> = if rest.is_empty() {
            (lo..hi).collect()
        } else if hi - lo >= PAR_MIN {
            use rayon::prelude::*;
            let step = PAR_MIN / 4;
            let n_chunks = (hi - lo).div_ceil(step);
            let chunks: Vec<Vec<usize>> = (0..n_chunks)
                .into_par_iter()
                .map(|ci| {
                    let a = lo + ci * step;
                    (a..(a + step).min(hi)).filter(|&j| hit(j)).collect()
                })
                .collect();
            chunks.concat()
        } else {
            (lo..hi).filter(|&j| hit(j)).collect()
        };
        let m = hits.len();
        let out_ix = build::<i64>(&[sd, m], |o| {
            for d in 0..sd {
                let s = ranges[d].0 as i64;
                let src = &ix[d * nnz..(d + 1) * nnz];
                for (dst, &h) in o[d * m..(d + 1) * m].iter_mut().zip(&hits) {
                    *dst = src[h] - s;
                }
            }
        })?;
        Ok((out_ix, hits))
    })??;
    let mut vals = gather_rows(values, &hits)?;
    let dense_win: Vec<(usize, usize)> =
        (sd..shape.len()).map(|d| (ranges[d].0, shape[d])).collect();
    let narrowed = (sd..shape.len()).any(|d| ranges[d] != (0, shape[d]));
    let window = if narrowed {
        let _ng = crate::autograd::no_grad();
        for d in sd..shape.len() {
            let (s, e) = ranges[d];
            vals = vals.narrow((d - sd + 1) as i64, s as i64, e - s)?;
        }
        vals = super::kernel::contig(&vals)?;
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
        hits,
        window,
    ))
}

/// Above this many candidate entries the COO filter runs in parallel chunks.
const PAR_MIN: usize = 1 << 18;

/// CSR forward: (out crow, out col, positions of the kept entries in `x`).
fn csr_forward<I: Idx>(
    crow: &Tensor,
    col: &Tensor,
    sorted: bool,
    ranges: &[(usize, usize)],
    shape: &[usize],
) -> Result<(Tensor, Tensor, Vec<usize>)> {
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
            let mut hits: Vec<usize> = Vec::new();
            let mut out_crow: Vec<I> = Vec::with_capacity(ob * (or + 1));
            let (cs, ce) = (I::of(c0), I::of(c1));
            for bi in b0..b1 {
                let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
                out_crow.push(I::of(0));
                if full_cols {
                    let (lo, hi) = (seg[r0].us(), seg[r1].us());
                    let first = seg[r0].us();
                    for ri in r0..r1 {
                        out_crow.push(I::of(seg[ri + 1].us() - first));
                    }
                    hits.extend(base + lo..base + hi);
                } else {
                    let start = hits.len();
                    for ri in r0..r1 {
                        let (lo, hi) = (base + seg[ri].us(), base + seg[ri + 1].us());
                        let row = &cl[lo..hi];
                        if sorted {
                            let a = row.partition_point(|&v| v < cs);
                            let e = a + row[a..].partition_point(|&v| v < ce);
                            hits.extend(lo + a..lo + e);
                        } else {
                            hits.extend((lo..hi).filter(|&k| cl[k] >= cs && cl[k] < ce));
                        }
                        out_crow.push(I::of(hits.len() - start));
                    }
                }
                base += seg[r].us();
            }
            let crow_t = build::<I>(&[out_crow.len()], |o| o.copy_from_slice(&out_crow))?;
            let shift = I::of(c0);
            let col_t = build::<I>(&[hits.len()], |o| {
                if c0 == 0 {
                    for (d, &h) in o.iter_mut().zip(&hits) {
                        *d = cl[h];
                    }
                } else {
                    for (d, &h) in o.iter_mut().zip(&hits) {
                        *d = I::of(cl[h].us() - shift.us());
                    }
                }
            })?;
            Ok((crow_t, col_t, hits))
        })?
    })?
}
