//! The row geometry of a reduction and how its rows are walked: [`Geo`] sees a strided source as
//! `m` rows (kept dims, row-major) of `r` elements (reduced dims, row-major) through its permuted
//! layout, never copied; [`fold_rows`] runs a sequential [`Fold`] over each row, reading
//! contiguous rows as slices and "outer" reductions (whose last kept dim has unit stride) a block
//! of adjacent rows at a time in memory order ([`outer_cols`]: one column strip per team thread);
//! [`rows_map`] and [`long_rows`] hand whole contiguous rows (or parts of long ones) to a slice
//! kernel. Work is split over the kernel team when it pays.

use super::super::team;
use crate::Element;
use crate::layout::Layout;
use smallvec::SmallVec;

/// Elements of work (rows x row length) below which a reduction runs on one thread.
const PAR_MIN: usize = 1 << 16;

/// A layout seen as `m` rows of `r` elements: its last `nred` dims are the row.
pub(crate) struct Geo {
    kept_sizes: SmallVec<[usize; 6]>,
    kept_strides: SmallVec<[isize; 6]>,
    /// offset of every row element from the row's base, in row order
    pub red: Vec<isize>,
    offset: isize,
    pub m: usize,
    pub r: usize,
    /// every row is one contiguous run (then [`Geo::rows`] leaves `red` empty)
    contig: bool,
}

impl Geo {
    pub(crate) fn new(l: &Layout, nred: usize) -> Geo {
        let nk = l.dim() - nred;
        let (ks, rs) = l.sizes().split_at(nk);
        let (kst, rst) = l.strides().split_at(nk);
        let r: usize = rs.iter().product();
        let mut red = Vec::with_capacity(r);
        let mut idx: SmallVec<[usize; 6]> = SmallVec::from_elem(0, rs.len());
        let mut off = 0isize;
        for _ in 0..r {
            red.push(off);
            for d in (0..rs.len()).rev() {
                idx[d] += 1;
                off += rst[d] as isize;
                if idx[d] < rs[d] {
                    break;
                }
                off -= (rs[d] * rst[d]) as isize;
                idx[d] = 0;
            }
        }
        let contig = red.iter().enumerate().all(|(j, &o)| o == j as isize);
        Geo {
            kept_sizes: ks.into(),
            kept_strides: kst.iter().map(|&s| s as isize).collect(),
            red,
            offset: l.offset() as isize,
            m: ks.iter().product(),
            r,
            contig,
        }
    }

    /// [`Geo::new`] for the row reductions of this file, which read `red` only when rows are
    /// not contiguous: a contiguous row is not listed (the full reduction `max_all` of 1M
    /// elements spent 4 ms building and faulting in an 8 MB offset list).
    pub(super) fn rows(l: &Layout, nred: usize) -> Geo {
        let nk = l.dim() - nred;
        let (rs, rst) = (&l.sizes()[nk..], &l.strides()[nk..]);
        let mut want = 1usize;
        let mut contig = true;
        for (&s, &st) in rs.iter().zip(rst).rev() {
            if s != 1 {
                contig &= st == want;
                want = want.saturating_mul(s);
            }
        }
        if !contig || rs.contains(&0) {
            return Geo::new(l, nred);
        }
        Geo {
            kept_sizes: l.sizes()[..nk].into(),
            kept_strides: l.strides()[..nk].iter().map(|&s| s as isize).collect(),
            red: Vec::new(),
            offset: l.offset() as isize,
            m: l.sizes()[..nk].iter().product(),
            r: rs.iter().product(),
            contig: true,
        }
    }

    /// Offset of row `i`'s first element.
    #[inline]
    pub(crate) fn base(&self, mut i: usize) -> isize {
        let mut off = self.offset;
        for d in (0..self.kept_sizes.len()).rev() {
            let s = self.kept_sizes[d];
            off += (i % s) as isize * self.kept_strides[d];
            i /= s;
        }
        off
    }

    /// Whether every row is one contiguous run.
    pub(super) fn rows_contiguous(&self) -> bool {
        self.contig
    }

    /// The width of the outer-reduction blocks: the last kept dim's size when its stride is 1
    /// (and rows are not contiguous themselves), else 0.
    pub(super) fn block_width(&self) -> usize {
        match (self.kept_sizes.last(), self.kept_strides.last()) {
            (Some(&c), Some(&1)) if c >= 8 && self.r > 1 && !self.rows_contiguous() => c,
            _ => 0,
        }
    }
}

/// A sequential fold over a row's elements: `step(state, x[j], j)` for `j = 0..r`.
pub(super) trait Fold<T>: Sync {
    type S: Copy + Send + Sync;
    fn init(&self, row: usize) -> Self::S;
    fn step(&self, s: &mut Self::S, v: T, j: usize);
}

/// Splits `n` items into parts for the team when `work` elements pay for it.
fn parts(n: usize, work: usize) -> usize {
    if work < PAR_MIN || n < 2 {
        1
    } else {
        (team::size() * team::PARTS_PER_THREAD).min(n)
    }
}

/// Splits `n` adjacent columns into one strip per team thread when `work` elements pay for it:
/// each strip reads runs as long as the team allows from every reduced row, which the hardware
/// prefetcher follows (narrower strips, one per part, read 1 KB per 4 KB row of `amax_0`'s
/// `[1024, 1024]` f32 and stall on every page).
fn col_parts(n: usize, work: usize) -> usize {
    if work < PAR_MIN || n < 2 {
        1
    } else {
        team::size().min(n)
    }
}

/// `rows(lo, hi)` (the results of rows `lo..hi`, in order) for all `m` rows, cut into team
/// parts when `work` elements pay for it and put back together in row order.
fn split_rows<V: Send + Sync>(
    m: usize,
    work: usize,
    rows: &(dyn Fn(usize, usize) -> Vec<V> + Sync),
) -> Vec<V> {
    let np = parts(m, work);
    if np == 1 {
        return rows(0, m);
    }
    let per = m.div_ceil(np);
    team::map(np, &|i| rows((i * per).min(m), ((i + 1) * per).min(m)))
        .into_iter()
        .flatten()
        .collect()
}

/// The states of `f` folded over every row of `x` (geometry `g`), in row order. `x` holds the
/// buffer's elements; every offset `g` names lies inside it (checked by the caller).
pub(super) fn fold_rows<T: Element, F: Fold<T>>(x: &[T], g: &Geo, f: &F) -> Vec<F::S> {
    let (m, r) = (g.m, g.r);
    let w = g.block_width();
    if let Some(groups) = m.checked_div(w) {
        // outer reduction: `groups` of `w` adjacent rows, split by column ranges
        let cols = |lo: usize, hi: usize| -> Vec<F::S> {
            let mut out = Vec::with_capacity(groups * (hi - lo));
            for gi in 0..groups {
                let base = g.base(gi * w) + lo as isize;
                let mut st: Vec<F::S> = (lo..hi).map(|c| f.init(gi * w + c)).collect();
                for (j, &o) in g.red.iter().enumerate() {
                    let p = (base + o) as usize;
                    for (s, &v) in st.iter_mut().zip(&x[p..p + (hi - lo)]) {
                        f.step(s, v, j);
                    }
                }
                out.push(st);
            }
            out.into_iter().flatten().collect()
        };
        return outer_cols(g, groups, &cols);
    }
    let contig = g.rows_contiguous();
    let rows = |lo: usize, hi: usize| -> Vec<F::S> {
        (lo..hi)
            .map(|i| {
                let mut s = f.init(i);
                let b = g.base(i);
                // (an empty row's base may lie past an empty buffer: never slice there)
                if contig && r > 0 {
                    let p = b as usize;
                    for (j, &v) in x[p..p + r].iter().enumerate() {
                        f.step(&mut s, v, j);
                    }
                } else {
                    for (j, &o) in g.red.iter().enumerate() {
                        f.step(&mut s, x[(b + o) as usize], j);
                    }
                }
                s
            })
            .collect()
    };
    split_rows(m, m * r, &rows)
}

/// The results of an outer reduction of `g` (`groups` of [`Geo::block_width`] adjacent rows) in
/// row order: `cols(lo, hi)` gives columns `lo..hi` of every group, group-major, and runs once
/// per column strip ([`col_parts`]: one strip per team thread when the work pays).
pub(super) fn outer_cols<S: Copy + Send + Sync>(
    g: &Geo,
    groups: usize,
    cols: &(dyn Fn(usize, usize) -> Vec<S> + Sync),
) -> Vec<S> {
    let w = g.block_width();
    let np = col_parts(w, g.m * g.r).max(1);
    if np == 1 {
        return cols(0, w);
    }
    let per = w.div_ceil(np);
    let chunks = team::map(np, &|i| cols((i * per).min(w), ((i + 1) * per).min(w)));
    regroup(&chunks, groups, w, per)
}

/// Column-range chunks (`per` columns each, group-major inside) of an outer reduction put back
/// in row order: group-major, then columns.
fn regroup<S: Copy>(chunks: &[Vec<S>], groups: usize, w: usize, per: usize) -> Vec<S> {
    let mut out = Vec::with_capacity(groups * w);
    for gi in 0..groups {
        for (i, ch) in chunks.iter().enumerate() {
            let width = ((i + 1) * per).min(w) - (i * per).min(w);
            out.extend_from_slice(&ch[gi * width..(gi + 1) * width]);
        }
    }
    out
}

/// `f(row)` for every contiguous row of `g` (`g.rows_contiguous()`) in row order, split over
/// the team when the work pays.
pub(super) fn rows_map<T: Element, V: Send + Sync>(x: &[T], g: &Geo, f: fn(&[T]) -> V) -> Vec<V> {
    let (m, r) = (g.m, g.r);
    let rows = |lo: usize, hi: usize| -> Vec<V> {
        (lo..hi)
            .map(|i| {
                // (an empty row's base may lie past an empty buffer: never slice there)
                let p = if r == 0 { 0 } else { g.base(i) as usize };
                f(if r == 0 { &[] } else { &x[p..p + r] })
            })
            .collect()
    };
    split_rows(m, m * r, &rows)
}

/// `f` over the parts of each contiguous row, with each part's start in the row, when rows are
/// long and too few to split the work over the team by rows (the full reduction `max_all`);
/// `None` otherwise.
#[allow(clippy::type_complexity)]
pub(super) fn long_rows<T: Element, V: Send + Sync>(
    x: &[T],
    g: &Geo,
    f: &(dyn Fn(&[T]) -> V + Sync),
) -> Option<Vec<Vec<(usize, V)>>> {
    let (m, r) = (g.m, g.r);
    let np = parts(r, m * r);
    if r == 0 || m >= np {
        return None;
    }
    let per = r.div_ceil(np);
    Some(
        (0..m)
            .map(|i| {
                let b = g.base(i) as usize;
                team::map(np, &|k| {
                    let (lo, hi) = ((k * per).min(r), ((k + 1) * per).min(r));
                    (lo < hi).then(|| (lo, f(&x[b + lo..b + hi])))
                })
                .into_iter()
                .flatten()
                .collect()
            })
            .collect(),
    )
}
