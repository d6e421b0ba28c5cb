//! Extremum reductions (`max`/`min` with or without their first index: `amax`, `max_dim`,
//! `argmax`, `max_all`, ...): f32/f64 rows and outer blocks by [`extremum`]'s lanes, every other
//! dtype and geometry by the sequential [`Ext`] fold. Both give the first index of the extremum,
//! and a NaN wins.

use super::rows::{Fold, Geo, long_rows, outer_cols, rows_map};
use super::write;
use crate::backend::ReduceOp;
use crate::backend::cpu::extremum::{self, ExtElem};
use crate::storage::CpuBuffer;
use crate::{DType, Element};

/// The extremum fold of f32/f64 by [`extremum`]'s lanes (same results as [`Ext`]): contiguous
/// rows (sweep rows `amax`, `max_dim`, `argmax`, `max_all`, ...) or outer blocks of adjacent
/// columns (`amax_0`); `None` for other geometries and empty rows.
fn ext_fast<T: ExtElem, const MAX: bool>(x: &[T], g: &Geo) -> Option<Vec<(T, usize)>> {
    let (m, r) = (g.m, g.r);
    if r == 0 {
        return None;
    }
    let w = g.block_width();
    if let Some(groups) = m.checked_div(w) {
        let cols = |lo: usize, hi: usize| -> Vec<(T, usize)> {
            let mut out = Vec::with_capacity(groups * (hi - lo));
            for gi in 0..groups {
                let base = g.base(gi * w) + lo as isize;
                let p = (base + g.red[0]) as usize;
                let mut best = x[p..p + (hi - lo)].to_vec();
                let mut idx = vec![0usize; hi - lo];
                let (mut best2, mut idx2) = (best.clone(), idx.clone());
                for (j, &o) in g.red.iter().enumerate().skip(1) {
                    let p = (base + o) as usize;
                    extremum::cols::<T, MAX>(extremum::ColStep {
                        m_out: &mut best2,
                        i_out: &mut idx2,
                        m: &best,
                        idx: &idx,
                        v: &x[p..p + (hi - lo)],
                        j,
                    });
                    std::mem::swap(&mut best, &mut best2);
                    std::mem::swap(&mut idx, &mut idx2);
                }
                out.extend(best.into_iter().zip(idx));
            }
            out
        };
        return Some(outer_cols(g, groups, &cols));
    }
    if !g.rows_contiguous() {
        return None;
    }
    if let Some(v) = long_rows(x, g, &extremum::row::<T, MAX>) {
        // (each part's first extremum, its index made absolute, merged in order)
        return Some(
            v.into_iter()
                .map(|p| {
                    p.into_iter()
                        .map(|(lo, (m, i))| (m, lo + i))
                        .reduce(|a, b| {
                            if extremum::beats::<T, MAX>(b.0, b.1, a.0, a.1) {
                                b
                            } else {
                                a
                            }
                        })
                        .expect("internal: a non-empty row has a part")
                })
                .collect(),
        );
    }
    Some(rows_map(x, g, extremum::row::<T, MAX>))
}

/// The extremum values alone of contiguous non-empty rows (`amax`, `amin`, `max_all`: no index
/// wanted), by [`extremum::value`]; `None` for other geometries.
fn ext_values<T: ExtElem, const MAX: bool>(x: &[T], g: &Geo) -> Option<Vec<T>> {
    let w = g.block_width();
    if let (Some(groups), true) = (g.m.checked_div(w), g.r > 0) {
        // outer blocks of adjacent columns (`amax_0`), by [`extremum::cols_value`]
        let cols = |lo: usize, hi: usize| -> Vec<T> {
            let mut out = Vec::with_capacity(groups * (hi - lo));
            for gi in 0..groups {
                let base = g.base(gi * w) + lo as isize;
                let p = (base + g.red[0]) as usize;
                let mut best = x[p..p + (hi - lo)].to_vec();
                let mut next = best.clone();
                for &o in &g.red[1..] {
                    let p = (base + o) as usize;
                    extremum::cols_value::<T, MAX>(&mut next, &best, &x[p..p + (hi - lo)]);
                    std::mem::swap(&mut best, &mut next);
                }
                for (c, b) in best.iter_mut().enumerate() {
                    // (a NaN or zero extremum is the first one's: scan the column for it)
                    if extremum::ambiguous(*b) {
                        let col: Vec<T> =
                            g.red.iter().map(|&o| x[(base + o) as usize + c]).collect();
                        *b = extremum::row::<T, MAX>(&col).0;
                    }
                }
                out.extend(best);
            }
            out
        };
        return Some(outer_cols(g, groups, &cols));
    }
    if g.r == 0 || !g.rows_contiguous() {
        return None;
    }
    if let Some(v) = long_rows(x, g, &extremum::value::<T, MAX>) {
        return Some(
            v.into_iter()
                .enumerate()
                .map(|(i, p)| {
                    let m = p
                        .into_iter()
                        .map(|(_, m)| m)
                        .reduce(extremum::pick::<T, MAX>)
                        .expect("internal: a non-empty row has a part");
                    // (a NaN or zero extremum is the first one's: scan the row for it)
                    if extremum::ambiguous(m) {
                        let p = g.base(i) as usize;
                        extremum::row::<T, MAX>(&x[p..p + g.r]).0
                    } else {
                        m
                    }
                })
                .collect(),
        );
    }
    Some(rows_map(x, g, extremum::value::<T, MAX>))
}

/// [`ext_fast`] written out (values cast to `ddt` from `doff`, indices to `idx`); false (nothing
/// written) where it does not apply.
pub(super) fn ext_write<T: ExtElem + Element>(
    x: &[T],
    g: &Geo,
    op: ReduceOp,
    dst: &mut CpuBuffer,
    doff: usize,
    ddt: DType,
    idx: &mut Option<(&mut CpuBuffer, usize)>,
) -> bool {
    if idx.is_none() {
        let v = if op == ReduceOp::Max {
            ext_values::<T, true>(x, g)
        } else {
            ext_values::<T, false>(x, g)
        };
        if let Some(v) = v {
            write(dst, doff, ddt, &v);
            return true;
        }
    }
    let st = if op == ReduceOp::Max {
        ext_fast::<T, true>(x, g)
    } else {
        ext_fast::<T, false>(x, g)
    };
    let Some(st) = st else {
        return false;
    };
    let v: Vec<T> = st.iter().map(|s| s.0).collect();
    write(dst, doff, ddt, &v);
    if let Some((ib, ioff)) = idx {
        let iv: Vec<i64> = st.iter().map(|s| s.1 as i64).collect();
        write(ib, *ioff, DType::I64, &iv);
    }
    true
}

/// Extremum with its first index; NaN wins (and stops the scan).
pub(super) struct Ext<const MAX: bool>;

impl<T: Element + PartialOrd, const MAX: bool> Fold<T> for Ext<MAX> {
    type S = (T, usize, bool);
    #[inline(always)]
    fn init(&self, _: usize) -> Self::S {
        (T::zero(), 0, false)
    }
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn step(&self, s: &mut Self::S, v: T, j: usize) {
        if s.2 {
            return;
        }
        if j == 0 || v != v {
            *s = (v, j, v != v);
        } else if (MAX && v > s.0) || (!MAX && v < s.0) {
            s.0 = v;
            s.1 = j;
        }
    }
}
