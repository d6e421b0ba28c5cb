//! `gather` and `scatter`/`scatter_add` along a dim, driven by an i64 index tensor read in
//! place: for every position `p` of the index, the kernel reads the index value, checks it
//! (`[0, size)`: PyTorch's `gather` and `scatter` reject negative values) and moves one
//! element between `p` of the position-side geometry (gather's output, scatter's source) and
//! `p` with `p[dim]` replaced by the index value in the target-side geometry (gather's source,
//! scatter's output).
//!
//! Large walks are split over the worker team along a dim other than `dim`: positions that
//! differ in such a dim never address the same target, and each part walks its box in
//! row-major order, so every target sees its writes in the order of a serial walk (the last
//! write wins, sums accumulate in index order: results do not depend on the thread count).

use super::index::{elems, elems_mut, inside};
use super::team::{self, SharedOut};
use crate::Result;
use crate::backend::DimWalk;
use crate::dtype::Element;
use crate::layout::{Layout, PAR_MIN_ELEMS};
use crate::storage::CpuBuffer;

/// The first bad index of a part: (row-major position in the index, value).
type Bad = Option<(usize, i64)>;

/// Strides of the walk: per index dim, the steps of the index, position-side and target-side
/// (target-side 0 along `dim`, where the index value picks the element).
struct Steps {
    sizes: Vec<usize>,
    ist: Vec<usize>,
    pst: Vec<usize>,
    tst: Vec<usize>,
}

/// One innermost row of a walk: `n` positions from offsets `io` (index), `po` (position side),
/// `tb` (target base), stepping by `is`, `ps`, `ts`.
#[derive(Clone, Copy)]
struct Row {
    io: usize,
    po: usize,
    tb: usize,
    n: usize,
    is: usize,
    ps: usize,
    ts: usize,
}

/// Walks the positions `p` of the index box `lo..hi` along dim `s` (all of every other dim) in
/// row-major order, handing each innermost row to `f`; stops at the first row that fails (at
/// its position `j`) and returns that position's multi-index.
fn walk_box(
    st: &Steps,
    offs: (usize, usize, usize),
    s: usize,
    (lo, hi): (usize, usize),
    mut f: impl FnMut(Row) -> std::result::Result<(), usize>,
) -> std::result::Result<(), Vec<usize>> {
    let nd = st.sizes.len();
    let mut sizes = st.sizes.clone();
    let mut pos = vec![0usize; nd];
    if nd > 0 {
        sizes[s] = hi - lo;
        pos[s] = 0;
    }
    if sizes.contains(&0) {
        return Ok(());
    }
    let start = |k: usize| if k == s { lo } else { 0 };
    let (mut io, mut po, mut to) = offs;
    for k in 0..nd {
        io += start(k) * st.ist[k];
        po += start(k) * st.pst[k];
        to += start(k) * st.tst[k];
    }
    if nd == 0 {
        let row = Row {
            io,
            po,
            tb: to,
            n: 1,
            is: 0,
            ps: 0,
            ts: 0,
        };
        return f(row).map_err(|_| Vec::new());
    }
    let last = nd - 1;
    let (n, is, ps, ts) = (sizes[last], st.ist[last], st.pst[last], st.tst[last]);
    loop {
        if let Err(j) = f(Row {
            io,
            po,
            tb: to,
            n,
            is,
            ps,
            ts,
        }) {
            let mut p: Vec<usize> = (0..nd).map(|k| pos[k] + start(k)).collect();
            p[last] = j + start(last);
            return Err(p);
        }
        // odometer over the outer dims
        let mut k = last;
        loop {
            if k == 0 {
                return Ok(());
            }
            k -= 1;
            pos[k] += 1;
            io += st.ist[k];
            po += st.pst[k];
            to += st.tst[k];
            if pos[k] < sizes[k] {
                break;
            }
            io -= sizes[k] * st.ist[k];
            po -= sizes[k] * st.pst[k];
            to -= sizes[k] * st.tst[k];
            pos[k] = 0;
        }
    }
}

/// Whether `i` is outside `[0, size)` (one unsigned compare: a negative `i` is huge as u64).
#[inline(always)]
fn bad(i: i64, size: i64) -> bool {
    i as u64 >= size as u64
}

/// The first index value of a contiguous row outside `[0, size)`, with its position. One
/// branch-free pass over the row (vectorised) before the row's moves, which then need no test
/// per element (per-op sweep rows `gather`, `scatter`, `scatter_add`).
#[inline(always)]
fn first_bad(ix: &[i64], size: i64) -> Option<(usize, i64)> {
    if !ix.iter().fold(false, |b, &i| b | bad(i, size)) {
        return None;
    }
    ix.iter().position(|&i| bad(i, size)).map(|j| (j, ix[j]))
}

/// Runs `f` compiled for AVX2 where the CPU has it (AVX-512 machines too), for the row loops
/// of contiguous index rows. There LLVM checks four index values per compare and moves
/// sixteen f32 through four xmm registers stored whole: the per-op sweep's `gather` row
/// spent a third of its time in the scalar check and ran about 20% faster with whole stores
/// (one thread, Zen 4; AVX-512 gathers were no faster than element stores). `f` must be an
/// `#[inline(always)]` closure, so that its body is compiled inside.
#[inline(always)]
fn on_avx2<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2")]
    fn avx2<R>(f: impl FnOnce() -> R) -> R {
        f()
    }
    #[cfg(target_arch = "x86_64")]
    if super::elementwise::simd() != super::elementwise::Simd::Baseline {
        // SAFETY: the CPU has AVX2 (detected by `simd()`).
        return unsafe { avx2(f) };
    }
    f()
}

/// The target offsets of one row's positions, in order: `Ok(offset)`, or `Err((j, value))` at
/// the first index value `j` outside `[0, size)`. Written for the row loops of [`gather`] and
/// [`scatter`], which keep their own pointers in registers (a per-element callback reloaded
/// them from its captures after every store: per-op sweep rows `gather`, `scatter`,
/// `scatter_add`).
#[inline(always)]
fn targets<'a>(
    idx: &'a [i64],
    r: Row,
    size: i64,
    tdim: i64,
) -> impl Iterator<Item = std::result::Result<(usize, usize), (usize, i64)>> + 'a {
    (0..r.n).map(move |j| {
        let i = idx[r.io + j * r.is];
        if bad(i, size) {
            return Err((j, i));
        }
        Ok((
            r.po + j * r.ps,
            ((r.tb + j * r.ts) as i64 + i * tdim) as usize,
        ))
    })
}

/// Runs one walk of `w` (split over the team when large): `f(row, size, target stride of dim)`
/// for every innermost row, which moves the row's elements by [`targets`] and returns the
/// first bad index value it meets (with its position in the row). Returns the first bad index
/// in row-major order, if any (the walk may have written elsewhere).
fn run<F: Fn(Row, i64, i64) -> std::result::Result<(), (usize, i64)> + Sync>(
    w: &DimWalk<'_>,
    pl: &Layout,
    tl: &Layout,
    f: &F,
) -> Bad {
    let il = w.index;
    let nd = il.dim();
    let at = |l: &Layout, k: usize| l.strides().get(k).copied().unwrap_or(0);
    let st = Steps {
        sizes: il.sizes().to_vec(),
        ist: il.strides().to_vec(),
        pst: (0..nd).map(|k| at(pl, k)).collect(),
        tst: (0..nd)
            .map(|k| if k == w.dim { 0 } else { at(tl, k) })
            .collect(),
    };
    let tdim = at(tl, w.dim) as i64;
    let size = w.size as i64;
    let offs = (il.offset(), pl.offset(), tl.offset());
    let linear = |p: &[usize]| {
        p.iter()
            .zip(il.sizes())
            .fold(0, |acc, (&x, &n)| acc * n + x)
    };
    // the split dim: the outermost dim other than `dim` with more than one position
    let s = (0..nd).find(|&k| k != w.dim && st.sizes[k] > 1);
    let total = il.numel();
    let parts = match s {
        Some(s) if total >= 2 * PAR_MIN_ELEMS && team::size() > 1 => (total / PAR_MIN_ELEMS)
            .min(st.sizes[s])
            .min(4 * team::size()),
        _ => 1,
    };
    let s = s.unwrap_or(0);
    let len = if nd == 0 { 1 } else { st.sizes[s] };
    let part = |c: usize| -> Bad {
        let (lo, hi) = (c * len / parts, (c + 1) * len / parts);
        let mut bad = None;
        walk_box(&st, offs, s, (lo, hi), |r| {
            f(r, size, tdim).map_err(|(j, i)| {
                bad = Some(i);
                j
            })
        })
        .err()
        .map(|p| (linear(&p), bad.expect("a bad index")))
    };
    let bads: Vec<Bad> = if parts == 1 {
        vec![part(0)]
    } else {
        team::map(parts, &part)
    };
    bads.into_iter().flatten().min_by_key(|&(p, _)| p)
}

fn out_of_bounds(w: &DimWalk<'_>, i: i64) -> crate::Error {
    crate::err!(
        IndexOutOfRange,
        w.op,
        "index {} is out of bounds for dimension {} with size {}",
        i,
        w.dim,
        w.size
    )
}

fn outside(op: &'static str) -> crate::Error {
    crate::err!(
        InvalidArgument,
        op,
        "tensor geometry lies outside its storage"
    )
}

/// Every element a walk addresses lies in its buffer: the index and position-side geometries
/// (over the index's sizes), and the target side with `w.size` along `dim`.
fn check_geometry(
    w: &DimWalk<'_>,
    n_idx: usize,
    pl: &Layout,
    n_p: usize,
    tl: &Layout,
    n_t: usize,
) -> Result<()> {
    if w.index.numel() == 0 {
        return Ok(());
    }
    let within = |l: &Layout, n: usize, along: Option<usize>| {
        let span: usize = (0..w.index.dim().max(l.dim()))
            .map(|k| {
                let size = match along {
                    Some(d) if k == d => w.size,
                    _ => w.index.sizes().get(k).copied().unwrap_or(1),
                };
                size.saturating_sub(1) * l.strides().get(k).copied().unwrap_or(0)
            })
            .sum();
        l.offset() + span < n
    };
    if !inside(w.index, n_idx) || !within(pl, n_p, None) || !within(tl, n_t, Some(w.dim)) {
        return Err(outside(w.op));
    }
    Ok(())
}

/// See [`MovementKernels::gather_dim`](crate::backend::MovementKernels::gather_dim).
pub(crate) fn gather<T: Element>(
    dst: &mut CpuBuffer,
    dl: &Layout,
    src: &CpuBuffer,
    sl: &Layout,
    index: &CpuBuffer,
    w: &DimWalk<'_>,
) -> Result<()> {
    let (idx, s) = (elems::<i64>(index), elems::<T>(src));
    let d = elems_mut::<T>(dst);
    check_geometry(w, idx.len(), dl, d.len(), sl, s.len())?;
    let out = SharedOut(d.as_mut_ptr());
    let f = move |r: Row, size: i64, tdim: i64| {
        let (out, s, idx) = (out.ptr(), s, idx);
        if r.is == 1 && r.ps == 1 && r.ts == 0 {
            // a contiguous index row picking within one source row into a contiguous output
            // row (gather along the last dim: per-op sweep `gather`): no strides to step, and
            // the source read is unchecked, its geometry having been checked above
            let ix = &idx[r.io..r.io + r.n];
            // SAFETY: `po..po + n` lies in `dst` and is written by this row only.
            let row = unsafe { std::slice::from_raw_parts_mut(out.add(r.po), r.n) };
            let src = &s[r.tb..];
            return on_avx2(
                #[inline(always)]
                || {
                    if let Some(e) = first_bad(ix, size) {
                        return Err(e);
                    }
                    // (unit `tdim` in a loop of its own: with the stride multiply, LLVM stored
                    // element by element)
                    if tdim == 1 {
                        for (o, &k) in row.iter_mut().zip(ix) {
                            // SAFETY: `k` is in `[0, size)`, so it lies in `src`
                            // (`check_geometry`).
                            *o = unsafe { *src.get_unchecked(k as usize) };
                        }
                    } else {
                        for (o, &k) in row.iter_mut().zip(ix) {
                            // SAFETY: `k` is in `[0, size)`, so `k tdim` lies in `src`
                            // (`check_geometry`).
                            *o = unsafe { *src.get_unchecked((k * tdim) as usize) };
                        }
                    }
                    Ok(())
                },
            );
        }
        for t in targets(idx, r, size, tdim) {
            let (po, to) = t?;
            // SAFETY: `po` lies in `dst` (checked above) and is written by this position only
            // (distinct positions of the fresh output's geometry are distinct elements).
            unsafe { *out.add(po) = s[to] };
        }
        Ok(())
    };
    match run(w, dl, sl, &f) {
        Some((_, i)) => Err(out_of_bounds(w, i)),
        None => Ok(()),
    }
}

/// See [`MovementKernels::scatter_dim`](crate::backend::MovementKernels::scatter_dim).
pub(crate) fn scatter<T: Element>(
    dst: &mut CpuBuffer,
    dl: &Layout,
    src: &CpuBuffer,
    sl: &Layout,
    index: &CpuBuffer,
    w: &DimWalk<'_>,
    accumulate: bool,
) -> Result<()> {
    let (idx, s) = (elems::<i64>(index), elems::<T>(src));
    let d = elems_mut::<T>(dst);
    check_geometry(w, idx.len(), sl, s.len(), dl, d.len())?;
    let out = SharedOut(d.as_mut_ptr());
    let f = move |r: Row, size: i64, tdim: i64| {
        let (out, s, idx) = (out.ptr(), s, idx);
        if r.is == 1 && r.ps == 1 && r.ts == 0 {
            // a contiguous index row sending a contiguous source row into one target row
            // (scatter along the last dim: per-op sweep `scatter`, `scatter_add`), as gather's
            let (ix, src) = (&idx[r.io..r.io + r.n], &s[r.po..r.po + r.n]);
            if let Some(e) = on_avx2(
                #[inline(always)]
                || first_bad(ix, size),
            ) {
                return Err(e);
            }
            for (&k, &v) in ix.iter().zip(src) {
                // SAFETY: `tb + k tdim` lies in `dst` (`check_geometry`: `k` is in range along
                // `dim`); parts of the walk write disjoint targets and one part writes serially.
                unsafe {
                    let t = out.add((r.tb as i64 + k * tdim) as usize);
                    *t = if accumulate { (*t).add(v) } else { v };
                }
            }
            return Ok(());
        }
        for t in targets(idx, r, size, tdim) {
            let (po, to) = t?;
            // SAFETY: `to` lies in `dst` (checked above; the index value is in range); parts
            // of the walk write disjoint targets (module docs) and one part writes serially.
            unsafe {
                let t = out.add(to);
                *t = if accumulate { (*t).add(s[po]) } else { s[po] };
            }
        }
        Ok(())
    };
    match run(w, sl, dl, &f) {
        Some((_, i)) => Err(out_of_bounds(w, i)),
        None => Ok(()),
    }
}
