//! Gather/scatter/index kernels of the CPU backend: `take` and `put` over logical positions of
//! strided geometries (the primitives of `gather`, `scatter`, advanced indexing and every
//! backward built on them), the whole-row scatter of `index_put_` (copy or vectorised
//! accumulation, parallel chunks merged in a fixed order), `index_select` (block copies of the
//! inner runs, (outer row, position) pairs split over the worker team when large), `nonzero`
//! and its coordinates (`nonzero_coords`, chunks of hits on the team). Every kernel validates
//! its geometry and positions before its first write, so an error changes nothing.

use super::elementwise::add_rows;
use super::team::{self, SharedOut};
use crate::Result;
use crate::backend::{Put, RowPut, SKIP};
use crate::dtype::{Element, cast};
use crate::layout::{Layout, PAR_MIN_ELEMS};
use crate::storage::CpuBuffer;

/// The buffer's whole elements as a slice of `T`.
pub(crate) fn elems<T: Element>(b: &CpuBuffer) -> &[T] {
    // SAFETY: the buffer holds `len` initialised bytes and is aligned for every Element (16-byte
    // inline bytes, 64-byte allocations); Element types are plain old data and tapegrad only
    // stores valid values of a buffer's dtype; the shared borrow of the buffer (under its lock)
    // outlives the slice.
    unsafe { std::slice::from_raw_parts(b.as_ptr() as *const T, b.len() / size_of::<T>()) }
}

/// The buffer's whole elements as a mutable slice of `T`.
pub(crate) fn elems_mut<T: Element>(b: &mut CpuBuffer) -> &mut [T] {
    let n = b.len() / size_of::<T>();
    // SAFETY: as in `elems`; the exclusive borrow of the buffer makes the slice unaliased.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut T, n) }
}

/// True if every element `l` addresses lies in a buffer of `n` elements.
pub(crate) fn inside(l: &Layout, n: usize) -> bool {
    l.storage_span() <= n
}

/// Maps logical (row-major) positions of a layout to element offsets.
pub(crate) struct Offsets<'a> {
    l: &'a Layout,
    contiguous: bool,
}

impl<'a> Offsets<'a> {
    pub(crate) fn new(l: &'a Layout) -> Self {
        Offsets {
            l,
            contiguous: l.is_contiguous(),
        }
    }

    #[inline]
    pub(crate) fn at(&self, p: usize) -> usize {
        if self.contiguous {
            return self.l.offset() + p;
        }
        let (mut p, mut off) = (p, self.l.offset());
        for (&s, &st) in self.l.sizes().iter().zip(self.l.strides()).rev() {
            off += (p % s) * st;
            p /= s;
        }
        off
    }
}

fn outside(op: &'static str) -> crate::Error {
    crate::err!(
        InvalidArgument,
        op,
        "tensor geometry lies outside its storage"
    )
}

/// True if every position is `SKIP` or below `n`.
fn in_range(pos: &[usize], n: usize) -> bool {
    pos.iter().all(|&p| p == SKIP || p < n)
}

/// See [`MovementKernels::take`](crate::backend::MovementKernels::take).
pub(crate) fn take<T: Element>(
    dst: &mut [T],
    dl: &Layout,
    src: &[T],
    sl: &Layout,
    idx: &[usize],
    op: &'static str,
) -> Result<()> {
    if !inside(dl, dst.len()) || !inside(sl, src.len()) || !in_range(idx, sl.numel()) {
        return Err(outside(op));
    }
    debug_assert_eq!(dl.numel(), idx.len());
    let so = Offsets::new(sl);
    let get = |i: usize| if i == SKIP { T::zero() } else { src[so.at(i)] };
    if dl.is_contiguous() {
        let out = &mut dst[dl.offset()..dl.offset() + idx.len()];
        for (o, &i) in out.iter_mut().zip(idx) {
            *o = get(i);
        }
    } else {
        for (off, &i) in dl.offsets().zip(idx) {
            dst[off] = get(i);
        }
    }
    Ok(())
}

/// See [`MovementKernels::put`](crate::backend::MovementKernels::put); `src` `None` reads from
/// `dst` itself.
pub(crate) fn put<T: Element>(
    dst: &mut [T],
    dl: &Layout,
    src: Option<&[T]>,
    sl: &Layout,
    p: &Put<'_>,
) -> Result<()> {
    let src_len = src.map_or(dst.len(), <[T]>::len);
    let src_ok = match p.src {
        Some(s) => s.len() == p.dst.len() && in_range(s, sl.numel()),
        None => sl.numel() >= p.dst.len(),
    };
    if !inside(dl, dst.len()) || !inside(sl, src_len) || !src_ok || !in_range(p.dst, dl.numel()) {
        return Err(outside(p.op));
    }
    let (dof, sof) = (Offsets::new(dl), Offsets::new(sl));
    let spos = |i: usize| match p.src {
        Some(s) => s[i],
        None => i,
    };
    let write = |dst: &mut [T], t: usize, v: T| {
        let o = dof.at(t);
        dst[o] = if p.accumulate { dst[o].add(v) } else { v };
    };
    match src {
        Some(s) => {
            for (i, &t) in p.dst.iter().enumerate() {
                let k = spos(i);
                if t != SKIP && k != SKIP {
                    write(dst, t, s[sof.at(k)]);
                }
            }
        }
        None => {
            // read every value before the first write (the values may alias the target)
            let vals: Vec<T> = (0..p.dst.len())
                .map(|i| match spos(i) {
                    SKIP => T::zero(),
                    k => dst[sof.at(k)],
                })
                .collect();
            for (i, (&t, &v)) in p.dst.iter().zip(&vals).enumerate() {
                if t != SKIP && spos(i) != SKIP {
                    write(dst, t, v);
                }
            }
        }
    }
    Ok(())
}

/// See [`MovementKernels::put_rows`](crate::backend::MovementKernels::put_rows).
pub(crate) fn put_rows<T: Element>(
    dst: &mut [T],
    g: &RowPut<'_>,
    src: &[T],
    sl: &Layout,
) -> Result<()> {
    let r = g.row_len;
    let nvals = g.rows.len() * r;
    if nvals == 0 {
        return Ok(());
    }
    let dst_len = (g.size - 1) * g.row_stride + r;
    if !sl.is_contiguous()
        || sl.numel() != nvals
        || g.offset + dst_len > dst.len()
        || sl.offset() + nvals > src.len()
    {
        return Err(outside("index_put_"));
    }
    let out = &mut dst[g.offset..g.offset + dst_len];
    let values = &src[sl.offset()..sl.offset() + nvals];
    if g.accumulate {
        accumulate_rows::<T>(out, g.row_stride, r, g.size, values, g.rows)?;
    } else {
        for (&k, row) in g.rows.iter().zip(values.chunks_exact(r)) {
            let lo = k as usize * g.row_stride;
            out[lo..lo + r].copy_from_slice(row);
        }
    }
    Ok(())
}

/// Number of chunks an accumulation of `nvals` value elements into a target of `target` elements
/// is split into: at least `PAR_MIN_ELEMS * 8` value elements per chunk, and the private row
/// buffers of chunks 1.. (one target's worth each) at most an eighth of the values.
fn chunks(nvals: usize, target: usize) -> usize {
    let by_work = nvals / (PAR_MIN_ELEMS * 8);
    let by_memory = 1 + nvals / 8 / target.max(1);
    by_work.min(by_memory).clamp(1, 8)
}

/// `out[rows[j]] += values[j]` for every row `j` in order (row `k` of `out` starts at
/// `k * row_stride`, `size` rows of `r` elements), in [`chunks`] parallel chunks.
fn accumulate_rows<T: Element>(
    out: &mut [T],
    row_stride: usize,
    r: usize,
    size: usize,
    values: &[T],
    rows: &[u32],
) -> Result<()> {
    let k = chunks(values.len(), size * r);
    if k == 1 {
        add_rows(out, row_stride, values, rows);
        return Ok(());
    }
    let per = rows.len().div_ceil(k);
    // private buffers of chunks 1..; -0.0 is the additive identity (x + -0.0 == x for every x)
    let zero = T::from_f64(-0.0);
    let mut partial: Vec<Vec<T>> = Vec::with_capacity(k - 1);
    for _ in 1..k {
        let mut p = crate::storage::try_vec::<T>(size * r, "index_put_")?;
        p.resize(size * r, zero);
        partial.push(p);
    }
    let work = &|c: usize, buf: &mut [T], stride: usize| {
        let (lo, hi) = (c * per, ((c + 1) * per).min(rows.len()));
        if lo < hi {
            add_rows(buf, stride, &values[lo * r..hi * r], &rows[lo..hi]);
        }
    };
    if rayon::current_thread_index().is_some() || !super::threads::parallel() {
        // on a pool thread (the caller holds storage locks): no nested parallelism
        work(0, out, row_stride);
        for (c, p) in partial.iter_mut().enumerate() {
            work(c + 1, p, r);
        }
    } else {
        super::threads::install(|| {
            rayon::scope(|sc| {
                for (c, p) in partial.iter_mut().enumerate() {
                    sc.spawn(move |_| work(c + 1, p, r));
                }
                work(0, out, row_stride);
            })
        });
    }
    // merge in chunk order (a fixed order: the result does not depend on the thread count)
    for p in &partial {
        for (row, src) in p.chunks_exact(r).enumerate() {
            let lo = row * row_stride;
            for (o, &x) in out[lo..lo + r].iter_mut().zip(src) {
                *o = o.add(x);
            }
        }
    }
    Ok(())
}

/// `l` without its dims from `from` on (the outer dims of a block copy).
fn outer(l: &Layout, to: usize) -> Layout {
    Layout::new(&l.sizes()[..to], &l.strides()[..to], l.offset())
}

/// See [`MovementKernels::index_select`](crate::backend::MovementKernels::index_select).
pub(crate) fn index_select<T: Element>(
    dst: &mut [T],
    dl: &Layout,
    src: &[T],
    sl: &Layout,
    dim: usize,
    idx: &[usize],
) -> Result<()> {
    let size = sl.sizes()[dim];
    if !inside(dl, dst.len()) || !inside(sl, src.len()) || idx.iter().any(|&i| i >= size) {
        return Err(outside("index_select"));
    }
    if dl.numel() == 0 {
        return Ok(());
    }
    let (din, sin) = (
        Layout::new(&dl.sizes()[dim + 1..], &dl.strides()[dim + 1..], 0),
        Layout::new(&sl.sizes()[dim + 1..], &sl.strides()[dim + 1..], 0),
    );
    let n = din.numel();
    let (dst_st, src_st) = (dl.strides()[dim], sl.strides()[dim]);
    let runs = din.is_contiguous() && sin.is_contiguous();
    let rows: Vec<(usize, usize)> = outer(dl, dim)
        .offsets()
        .zip(outer(sl, dim).offsets())
        .collect();
    let out = SharedOut(dst.as_mut_ptr());
    // the selected positions `js` of one outer row: their runs (or single elements) of `src`
    let row = |od: usize, os: usize, js: std::ops::Range<usize>| {
        let out = out.ptr();
        for j in js {
            let (d0, s0) = (od + j * dst_st, os + idx[j] * src_st);
            // SAFETY: every element of `dl` and `sl` lies in its buffer (checked above) and
            // `dl` has no internal overlap (a fresh output), so the writes of distinct outer
            // rows and selected positions are distinct elements.
            unsafe {
                if n == 1 {
                    *out.add(d0) = src[s0];
                } else if runs {
                    std::ptr::copy_nonoverlapping(src[s0..s0 + n].as_ptr(), out.add(d0), n);
                } else {
                    for (a, b) in din.offsets().zip(sin.offsets()) {
                        *out.add(d0 + a) = src[s0 + b];
                    }
                }
            }
        }
    };
    // the work is split over (outer row, selected position) pairs, so a selection along dim 0
    // (one outer row: `x[rows]`, `index_select(0, ..)`, `embedding`) runs on the whole team too
    let (k, units) = (idx.len(), rows.len() * idx.len());
    let parts = if dl.numel() >= 2 * PAR_MIN_ELEMS && team::size() > 1 {
        units.min(4 * team::size())
    } else {
        1
    };
    let span = |lo: usize, hi: usize| {
        let mut u = lo;
        while u < hi {
            let (r, j) = (u / k, u % k);
            let end = hi.min((r + 1) * k);
            let (od, os) = rows[r];
            row(od, os, j..j + (end - u));
            u = end;
        }
    };
    if parts <= 1 {
        span(0, units);
    } else {
        team::run(parts, &|c| span(c * units / parts, (c + 1) * units / parts));
    }
    Ok(())
}

/// See [`MovementKernels::nonzero`](crate::backend::MovementKernels::nonzero).
pub(crate) fn nonzero<T: Element>(src: &[T], l: &Layout) -> Result<Vec<usize>> {
    if !inside(l, src.len()) {
        return Err(outside("nonzero"));
    }
    let nz = |x: T| cast::<T, bool>(x);
    Ok(if l.is_contiguous() {
        let s = &src[l.offset()..l.offset() + l.numel()];
        // count, then store every position and advance past the hits only: no branch per
        // element (a mask of random bits mispredicts half of them; `nonzero`, `masked_select`)
        let count = s.iter().filter(|&&x| nz(x)).count();
        let mut hits = crate::storage::try_vec::<usize>(count + 1, "nonzero")?;
        hits.resize(count + 1, 0);
        let mut k = 0;
        for (i, &x) in s.iter().enumerate() {
            hits[k] = i;
            k += usize::from(nz(x));
        }
        hits.truncate(count);
        hits
    } else {
        l.offsets()
            .enumerate()
            .filter_map(|(i, o)| nz(src[o]).then_some(i))
            .collect()
    })
}

/// See [`MovementKernels::nonzero_coords`](crate::backend::MovementKernels::nonzero_coords).
/// Chunks of the hits on the team: each chunk finds its first hit's coordinates by division,
/// then steps like an odometer (the hits ascend: a division only where a step crosses a dim's
/// end), writing each dim's column at the chunk's rows.
pub(crate) fn nonzero_coords(dst: &mut [i64], hits: &[usize], sizes: &[usize]) {
    let (n, nd) = (hits.len(), sizes.len());
    if n == 0 || nd == 0 {
        return;
    }
    assert!(dst.len() >= n * nd, "internal: nonzero output too small");
    let out = SharedOut(dst.as_mut_ptr());
    let parts = (n / PAR_MIN_ELEMS).clamp(1, team::size() * team::PARTS_PER_THREAD);
    team::run(parts, &|c| {
        let (lo, hi) = (c * n / parts, (c + 1) * n / parts);
        let mut coord = vec![0usize; nd];
        let mut rest = hits[lo];
        for d in (0..nd).rev() {
            (coord[d], rest) = (rest % sizes[d], rest / sizes[d]);
        }
        let mut prev = hits[lo];
        for (row, &h) in (lo..hi).zip(&hits[lo..hi]) {
            let mut carry = h - prev;
            prev = h;
            for d in (0..nd).rev() {
                if carry == 0 {
                    break;
                }
                let v = coord[d] + carry;
                (coord[d], carry) = if v < sizes[d] {
                    (v, 0)
                } else {
                    (v % sizes[d], v / sizes[d])
                };
            }
            for (d, &x) in coord.iter().enumerate() {
                // SAFETY: `d * n + row < n * nd <= dst.len()` (asserted above); parts own
                // disjoint rows, so no two threads write one element.
                unsafe { *out.ptr().add(d * n + row) = x as i64 };
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_of_a_transposed_layout() {
        let l = Layout::new(&[2usize, 3][..], &[1usize, 2][..], 1);
        let o = Offsets::new(&l);
        let all: Vec<usize> = (0..6).map(|p| o.at(p)).collect();
        assert_eq!(all, l.offsets().collect::<Vec<_>>());
    }

    #[test]
    fn nonzero_coords_split_over_parts_are_the_odometer() {
        // enough hits for several parts; runs of misses longer than a dim's end carry over
        let sizes = [3usize, 7, 40_000];
        let total: usize = sizes.iter().product();
        let hits: Vec<usize> = (0..total)
            .filter(|&i| (i * 7919) % 11 < 4 || i % 50_000 == 3)
            .collect();
        assert!(hits.len() > 4 * PAR_MIN_ELEMS);
        let n = hits.len();
        let mut dst = vec![-1i64; n * 3];
        nonzero_coords(&mut dst, &hits, &sizes);
        for (row, &h) in hits.iter().enumerate() {
            let want = [h / (7 * 40_000), h / 40_000 % 7, h % 40_000];
            for (d, &w) in want.iter().enumerate() {
                assert_eq!(
                    dst[d * n + row],
                    w as i64,
                    "hit {row} (position {h}), dim {d}"
                );
            }
        }
        // nothing to write: no hits, or a 0-d tensor
        nonzero_coords(&mut [], &[], &sizes);
        nonzero_coords(&mut [], &[0], &[]);
    }

    #[test]
    fn put_validates_before_writing() {
        let mut dst = vec![1.0f32; 4];
        let dl = Layout::contiguous(&[4]);
        let src = [5.0f32, 6.0];
        let sl = Layout::contiguous(&[2]);
        let p = Put {
            dst: &[0, 9],
            src: None,
            accumulate: false,
            op: "t",
        };
        assert!(put(&mut dst, &dl, Some(&src[..]), &sl, &p).is_err());
        assert_eq!(dst, vec![1.0; 4]);
    }
}
