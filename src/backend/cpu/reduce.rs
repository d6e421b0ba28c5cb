//! Row reductions over a strided source, in place: the source is seen as `m` rows (kept dims,
//! row-major) of `r` elements (reduced dims, row-major) through its permuted layout (kept dims
//! first, reduced dims last), never copied. A [`Fold`] visits each row's elements in order
//! (`j = 0..r`), so first-index ties and NaN rules are those of a sequential scan. Rows whose
//! elements are contiguous are read as slices; "outer" reductions (whose last kept dim has unit
//! stride) fold a block of adjacent rows together, reading the source in memory order.
//! Rows are split over the kernel team when the work pays.

use super::Cpu;
use super::elementwise::simd;
use super::extremum::{self, ExtElem};
use super::lanes::{self, Abs, Sq};
use super::scan;
use super::sort;
use super::sum;
use super::team;
use crate::backend::ReduceKernels;
use crate::backend::ReduceOp;
use crate::backend::RowOp;
use crate::dtype::cast;
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Element, NormOrd, dispatch, match_dtype};
use smallvec::SmallVec;

/// Elements of work (rows x row length) below which a reduction runs on one thread.
const PAR_MIN: usize = 1 << 16;

/// The elements of a buffer as `T`.
pub(crate) fn elems<T: Element>(b: &CpuBuffer) -> &[T] {
    // SAFETY: the buffer is allocated aligned for every element type, every bit pattern of its
    // initialised bytes is read as plain old data by `Element` types except bool, whose tensor
    // bytes are only ever written as 0/1; the slice covers whole elements inside the buffer.
    unsafe {
        std::slice::from_raw_parts(b.as_ptr() as *const T, b.len() / std::mem::size_of::<T>())
    }
}

/// The elements of a buffer as mutable `T`.
pub(crate) fn elems_mut<T: Element>(b: &mut CpuBuffer) -> &mut [T] {
    let n = b.len() / std::mem::size_of::<T>();
    // SAFETY: as in [`elems`], borrowed exclusively.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut T, n) }
}

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
    fn rows(l: &Layout, nred: usize) -> Geo {
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
    fn rows_contiguous(&self) -> bool {
        self.contig
    }

    /// The width of the outer-reduction blocks: the last kept dim's size when its stride is 1
    /// (and rows are not contiguous themselves), else 0.
    fn block_width(&self) -> usize {
        match (self.kept_sizes.last(), self.kept_strides.last()) {
            (Some(&c), Some(&1)) if c >= 8 && self.r > 1 && !self.rows_contiguous() => c,
            _ => 0,
        }
    }
}

/// A sequential fold over a row's elements: `step(state, x[j], j)` for `j = 0..r`.
pub(crate) trait Fold<T>: Sync {
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
pub(crate) fn fold_rows<T: Element, F: Fold<T>>(x: &[T], g: &Geo, f: &F) -> Vec<F::S> {
    let (m, r) = (g.m, g.r);
    let w = g.block_width();
    if let Some(groups) = m.checked_div(w) {
        // outer reduction: `groups` of `w` adjacent rows, split by column ranges
        let np = col_parts(w, m * r).max(1);
        let per = w.div_ceil(np);
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
        if np == 1 {
            return cols(0, w);
        }
        let chunks = team::map(np, &|i| cols((i * per).min(w), ((i + 1) * per).min(w)));
        return regroup(&chunks, groups, w, per);
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
        let np = col_parts(w, m * r).max(1);
        let per = w.div_ceil(np);
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
        if np == 1 {
            return Some(cols(0, w));
        }
        let chunks = team::map(np, &|i| cols((i * per).min(w), ((i + 1) * per).min(w)));
        return Some(regroup(&chunks, groups, w, per));
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
        let np = col_parts(w, g.m * g.r).max(1);
        let per = w.div_ceil(np);
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
        if np == 1 {
            return Some(cols(0, w));
        }
        let chunks = team::map(np, &|i| cols((i * per).min(w), ((i + 1) * per).min(w)));
        return Some(regroup(&chunks, groups, w, per));
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

/// `f` over the parts of each contiguous row, with each part's start in the row, when rows are
/// long and too few to split the work over the team by rows (the full reduction `max_all`);
/// `None` otherwise.
#[allow(clippy::type_complexity)]
fn long_rows<T: Element, V: Send + Sync>(
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

/// [`ext_fast`] written out (values cast to `ddt` from `doff`, indices to `idx`); false (nothing
/// written) where it does not apply.
fn ext_write<T: ExtElem + Element>(
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
struct Ext<const MAX: bool>;

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

/// Product in the element type, sequential from 1 (`1 * x0 * x1 ...`, each step rounded to
/// `T`): PyTorch's scalar reduction loop for floats (f16/bf16 round at every step) and complex
/// (the naive `(ac - bd) + (ad + bc)i` product, so `1 * (inf + 0i)` is `inf + nan i`).
struct ProdT;
impl<T: Element> Fold<T> for ProdT {
    type S = T;
    fn init(&self, _: usize) -> T {
        T::one()
    }
    #[inline(always)]
    fn step(&self, s: &mut T, v: T, _: usize) {
        *s = s.mul(v);
    }
}

/// `f(row)` for every contiguous row of `g` (`g.rows_contiguous()`) in row order, split over
/// the team when the work pays.
fn rows_map<T: Element, V: Send + Sync>(x: &[T], g: &Geo, f: fn(&[T]) -> V) -> Vec<V> {
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

/// Wrapping `i64` product.
struct ProdI;
impl<T: Element> Fold<T> for ProdI {
    type S = i64;
    fn init(&self, _: usize) -> i64 {
        1
    }
    #[inline(always)]
    fn step(&self, s: &mut i64, v: T, _: usize) {
        *s = s.wrapping_mul(cast::<T, i64>(v));
    }
}

/// The zero `Iterator::sum` of f64 starts from (so empty rows keep its sign).
fn sum_zero() -> f64 {
    std::iter::empty::<f64>().sum()
}

/// Vector norms in f64 (L2 before its square root, a general p before its `1/p` power).
struct Norm(NormOrd);
impl<T: Element> Fold<T> for Norm {
    type S = f64;
    fn init(&self, _: usize) -> f64 {
        match self.0 {
            NormOrd::L1 | NormOrd::L2 | NormOrd::P(_) => sum_zero(),
            NormOrd::Inf => 0.0,
            NormOrd::NegInf => f64::INFINITY,
        }
    }
    #[inline(always)]
    fn step(&self, s: &mut f64, v: T, _: usize) {
        let b = cast::<T, f64>(v).abs();
        *s = match self.0 {
            NormOrd::L1 => *s + b,
            NormOrd::L2 => *s + b * b,
            NormOrd::Inf | NormOrd::NegInf if b.is_nan() || s.is_nan() => f64::NAN,
            NormOrd::Inf => s.max(b),
            NormOrd::NegInf => s.min(b),
            // p = 0 counts the non-zeros (NaN included)
            NormOrd::P(0.0) => *s + f64::from(u8::from(b != 0.0)),
            NormOrd::P(p) => *s + b.powf(p),
        };
    }
}

/// Largest element (NaN ignored) and whether a NaN was seen: pass 1 of logsumexp.
struct LseMax;
impl<T: Element> Fold<T> for LseMax {
    type S = (f64, bool);
    fn init(&self, _: usize) -> Self::S {
        (f64::NEG_INFINITY, false)
    }
    #[inline(always)]
    fn step(&self, s: &mut Self::S, v: T, _: usize) {
        let v = cast::<T, f64>(v);
        s.0 = s.0.max(v);
        s.1 |= v.is_nan();
    }
}

/// `sum(exp(x - shift[row]))`: pass 2 of logsumexp.
struct LseSum<'a>(&'a [(f64, bool)]);
impl<T: Element> Fold<T> for LseSum<'_> {
    type S = (f64, f64);
    fn init(&self, row: usize) -> Self::S {
        (sum_zero(), self.0[row].0)
    }
    #[inline(always)]
    fn step(&self, s: &mut Self::S, v: T, _: usize) {
        s.0 += (cast::<T, f64>(v) - s.1).exp();
    }
}

/// `all` (`ALL`) or `any` of the elements as bool.
struct Logic<const ALL: bool>;
impl<T: Element, const ALL: bool> Fold<T> for Logic<ALL> {
    type S = bool;
    fn init(&self, _: usize) -> bool {
        ALL
    }
    #[inline(always)]
    fn step(&self, s: &mut bool, v: T, _: usize) {
        let b = cast::<T, bool>(v);
        *s = if ALL { *s && b } else { *s || b };
    }
}

/// The sum of a contiguous float row with NaN read as zero, in the compute type (f16/bf16 in
/// f32), in torch's inner-sum order ([`sum::row_sum`]; a row shorter than a vector in its
/// ILP-4 order).
fn nansum_row<T: Element + crate::dtype::FloatCompute>(x: &[T]) -> T::C
where
    T::C: Element,
{
    sum::row_sum(x, &nan_as_zero::<T>, simd())
}

/// The sum of one long contiguous float row (a full `nansum`) with NaN read as zero, by
/// [`sum::sum`]'s pairwise lanes on the team: the order of `sum()` of the same tensor.
fn nansum_all<T: Element + crate::dtype::FloatCompute>(x: &[T]) -> T::C
where
    T::C: Element,
{
    sum::sum(x, &nan_as_zero::<T>)
}

/// `v` in its compute type, NaN read as zero (the element conversion of both nansum kernels).
#[inline(always)]
#[allow(clippy::eq_op)]
fn nan_as_zero<T: Element + crate::dtype::FloatCompute>(v: T) -> T::C
where
    T::C: Element,
{
    let w = v.widen();
    if w == w { w } else { <T::C as Element>::zero() }
}

/// Sum in f64 from `+0.0` with NaN read as zero: `nansum` over rows that are not contiguous.
struct NanSum;
impl<T: Element> Fold<T> for NanSum {
    type S = f64;
    fn init(&self, _: usize) -> f64 {
        0.0
    }
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn step(&self, s: &mut f64, v: T, _: usize) {
        let v = cast::<T, f64>(v);
        if v == v {
            *s += v;
        }
    }
}

/// Writes `vals` (cast to `dt`) to the first `vals.len()` elements of `dst` from `off`.
fn write<V: Element>(dst: &mut CpuBuffer, off: usize, dt: DType, vals: &[V]) {
    dispatch!(dt, D => {
        let d = &mut elems_mut::<D>(dst)[off..off + vals.len()];
        for (o, &v) in d.iter_mut().zip(vals) {
            *o = cast::<V, D>(v);
        }
    })
}

/// [`crate::backend::ReduceKernels::reduce`] on the CPU.
#[allow(clippy::too_many_arguments)]
pub(crate) fn reduce(
    dst: &mut CpuBuffer,
    doff: usize,
    ddt: DType,
    idx: Option<(&mut CpuBuffer, usize)>,
    src: &CpuBuffer,
    sl: &Layout,
    sdt: DType,
    nred: usize,
    op: ReduceOp,
) {
    let mut idx = idx;
    let g = Geo::rows(sl, nred);
    if matches!(op, ReduceOp::Max | ReduceOp::Min) {
        let done = match sdt {
            DType::F32 => ext_write(elems::<f32>(src), &g, op, dst, doff, ddt, &mut idx),
            DType::F64 => ext_write(elems::<f64>(src), &g, op, dst, doff, ddt, &mut idx),
            _ => false,
        };
        if done {
            return;
        }
    }
    match op {
        ReduceOp::Max | ReduceOp::Min => match_dtype!(sdt, real, T => {
            let x = elems::<T>(src);
            let st = if op == ReduceOp::Max {
                fold_rows(x, &g, &Ext::<true>)
            } else {
                fold_rows(x, &g, &Ext::<false>)
            };
            let v: Vec<T> = st.iter().map(|s| s.0).collect();
            write(dst, doff, ddt, &v);
            if let Some((ib, ioff)) = idx {
                let iv: Vec<i64> = st.iter().map(|s| s.1 as i64).collect();
                write(ib, ioff, DType::I64, &iv);
            }
        }),
        // fast path (per-op sweep row `prod`): contiguous f32/f64 rows in lanes
        ReduceOp::Prod if matches!(sdt, DType::F32 | DType::F64) && g.rows_contiguous() => {
            if sdt == DType::F32 {
                write(
                    dst,
                    doff,
                    ddt,
                    &rows_map(elems::<f32>(src), &g, lanes::prod::<f32>),
                );
            } else {
                write(
                    dst,
                    doff,
                    ddt,
                    &rows_map(elems::<f64>(src), &g, lanes::prod::<f64>),
                );
            }
        }
        ReduceOp::Prod => dispatch!(sdt, T => {
            let x = elems::<T>(src);
            if sdt.is_integral(true) {
                write(dst, doff, ddt, &fold_rows(x, &g, &ProdI));
            } else {
                write(dst, doff, ddt, &fold_rows(x, &g, &ProdT));
            }
        }),
        // fast path (per-op sweep row `norm`): L1/L2 of contiguous f32/f64 rows in f64 lanes
        ReduceOp::Norm(ord @ (NormOrd::L1 | NormOrd::L2))
            if matches!(sdt, DType::F32 | DType::F64) && g.rows_contiguous() =>
        {
            let l2 = ord == NormOrd::L2;
            let mut v = match (sdt, l2) {
                (DType::F32, true) => rows_map(elems::<f32>(src), &g, lanes::abs_sum::<f32, Sq>),
                (DType::F32, false) => rows_map(elems::<f32>(src), &g, lanes::abs_sum::<f32, Abs>),
                (_, true) => rows_map(elems::<f64>(src), &g, lanes::abs_sum::<f64, Sq>),
                (_, false) => rows_map(elems::<f64>(src), &g, lanes::abs_sum::<f64, Abs>),
            };
            if l2 {
                v.iter_mut().for_each(|s| *s = s.sqrt());
            }
            write(dst, doff, ddt, &v);
        }
        ReduceOp::Norm(ord) => dispatch!(sdt, T => {
            let mut v = fold_rows(elems::<T>(src), &g, &Norm(ord));
            match ord {
                NormOrd::L2 => v.iter_mut().for_each(|s| *s = s.sqrt()),
                NormOrd::P(p) if p != 0.0 => v.iter_mut().for_each(|s| *s = s.powf(1.0 / p)),
                _ => {}
            }
            write(dst, doff, ddt, &v);
        }),
        // fast path (per-op sweep row `logsumexp`): contiguous f32 rows, vectorised `exp`
        ReduceOp::Logsumexp if sdt == DType::F32 && g.rows_contiguous() => {
            write(
                dst,
                doff,
                ddt,
                &rows_map(elems::<f32>(src), &g, lanes::logsumexp_f32),
            );
        }
        ReduceOp::Logsumexp => dispatch!(sdt, T => {
            let x = elems::<T>(src);
            let mx = fold_rows(x, &g, &LseMax);
            let sums = fold_rows(x, &g, &LseSum(&mx));
            let v: Vec<f64> = mx
                .iter()
                .zip(&sums)
                .map(|(&(m, nan), &(s, _))| {
                    if nan {
                        f64::NAN
                    } else if m.is_infinite() {
                        m
                    } else {
                        m + s.ln()
                    }
                })
                .collect();
            write(dst, doff, ddt, &v);
        }),
        // one pass with NaN read as zero (per-op sweep row `nansum`, which was `isnan`,
        // `masked_fill` and `sum`): contiguous float rows in torch's inner-sum order, a single
        // row (a full nansum) by the full sum's pairwise lanes, as `sum()`
        ReduceOp::NanSum if sdt.is_float() && g.rows_contiguous() => {
            crate::match_dtype!(sdt, float, T => {
                let x = elems::<T>(src);
                if g.m == 1 && g.r > 0 {
                    let p = g.base(0) as usize;
                    write(dst, doff, ddt, &[nansum_all::<T>(&x[p..p + g.r])]);
                } else {
                    write(dst, doff, ddt, &rows_map(x, &g, nansum_row::<T>));
                }
            }, else unreachable!("internal: a float dtype"))
        }
        ReduceOp::NanSum => dispatch!(sdt, T => {
            write(dst, doff, ddt, &fold_rows(elems::<T>(src), &g, &NanSum));
        }),
        ReduceOp::All | ReduceOp::Any => dispatch!(sdt, T => {
            let x = elems::<T>(src);
            let v = if op == ReduceOp::All {
                fold_rows(x, &g, &Logic::<true>)
            } else {
                fold_rows(x, &g, &Logic::<false>)
            };
            write(dst, doff, ddt, &v);
        }),
    }
}

impl ReduceKernels for Cpu {
    fn reduce(
        dst: &mut CpuBuffer,
        doff: usize,
        ddt: DType,
        idx: Option<(&mut CpuBuffer, usize)>,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        nred: usize,
        op: ReduceOp,
    ) {
        reduce(dst, doff, ddt, idx, src, sl, sdt, nred, op)
    }

    fn row_map(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        src2: Option<(&CpuBuffer, &Layout, DType)>,
        nred: usize,
        op: RowOp,
    ) {
        scan::row_map(dst, dl, ddt, src, sl, sdt, src2, nred, op)
    }

    fn sort(
        idx: &mut CpuBuffer,
        il: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        pl: &Layout,
        k: usize,
        descending: bool,
        sorted: bool,
    ) -> Vec<usize> {
        sort::sort(idx, il, src, sl, sdt, pl, k, descending, sorted)
    }

    unsafe fn sum_into(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
        full: bool,
    ) {
        dispatch!(dt, T => {
            // SAFETY: forwarded contract (geometries inside distinct buffers).
            unsafe { sum::sum_into::<T>(dst, dl, src, sl, full) }
        })
    }

    fn sum_dense(
        dst: &mut CpuBuffer,
        doff: usize,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
    ) -> bool {
        sum::sum_dense(dst, doff, src, sl, dt)
    }

    fn dot_dense(a: &CpuBuffer, al: &Layout, b: &CpuBuffer, bl: &Layout, dt: DType) -> Option<f64> {
        sum::dot_dense(a, al, b, bl, dt)
    }
}
