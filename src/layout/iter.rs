//! Strided iteration. [`StridedOffsets`] yields storage offsets in logical order;
//! [`for_each_run`] walks N operands together, coalescing dims that are contiguous for all of
//! them and calling back once per innermost run, so kernels get long unit-stride loops;
//! [`par_for_each_run`] does the same with element ranges spread over the kernel team.

/// Iterator over the storage offsets of a strided layout in row-major logical order.
pub struct StridedOffsets<'a> {
    sizes: &'a [usize],
    strides: &'a [usize],
    index: Vec<usize>,
    next: Option<usize>,
}

impl<'a> StridedOffsets<'a> {
    pub(crate) fn new(sizes: &'a [usize], strides: &'a [usize], offset: usize) -> Self {
        let empty = sizes.contains(&0);
        StridedOffsets {
            sizes,
            strides,
            index: vec![0; sizes.len()],
            next: if empty { None } else { Some(offset) },
        }
    }
}

impl Iterator for StridedOffsets<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        let cur = self.next?;
        let mut off = cur;
        let mut d = self.sizes.len();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            self.index[d] += 1;
            // Wrapping: after the last index of a dim the offset may step past usize::MAX
            // (a huge stride on a size-1 dim); it is stepped back below before it is used.
            off = off.wrapping_add(self.strides[d]);
            if self.index[d] < self.sizes[d] {
                self.next = Some(off);
                break;
            }
            off = off.wrapping_sub(self.strides[d].wrapping_mul(self.index[d]));
            self.index[d] = 0;
        }
        Some(cur)
    }
}

/// Dims of one broadcast shape walked by `N` operands, coalesced: size-1 dims dropped and dim `i`
/// merged into `i + 1` where that is contiguous for every operand.
struct Coalesced<const N: usize> {
    sizes: Vec<usize>,
    strides: Vec<[isize; N]>,
}

fn coalesce<const N: usize>(sizes: &[usize], strides: [&[isize]; N]) -> Coalesced<N> {
    let mut shp: Vec<usize> = Vec::with_capacity(sizes.len());
    let mut st: Vec<[isize; N]> = Vec::with_capacity(sizes.len());
    for d in 0..sizes.len() {
        if sizes[d] == 1 {
            continue;
        }
        let cur: [isize; N] = std::array::from_fn(|k| strides[k][d]);
        if let (Some(&ps), Some(pst)) = (shp.last(), st.last())
            && (0..N).all(|k| pst[k] == cur[k] * sizes[d] as isize)
        {
            let n = shp.len();
            shp[n - 1] = ps * sizes[d];
            st[n - 1] = cur;
            continue;
        }
        shp.push(sizes[d]);
        st.push(cur);
    }
    if shp.is_empty() {
        shp.push(1);
        st.push([0; N]);
    }
    Coalesced {
        sizes: shp,
        strides: st,
    }
}

impl<const N: usize> Coalesced<N> {
    fn numel(&self) -> usize {
        self.sizes.iter().product()
    }

    /// Calls `f` once per innermost run covering the logical elements `[lo, hi)`.
    fn walk(
        &self,
        offsets: [isize; N],
        lo: usize,
        hi: usize,
        f: &mut impl FnMut([isize; N], usize, [isize; N]),
    ) {
        let nd = self.sizes.len();
        let inner = self.sizes[nd - 1];
        let inner_st = self.strides[nd - 1];
        // multi-index of `lo` and the offsets of that element
        let mut idx = vec![0usize; nd];
        let mut rem = lo;
        for d in (0..nd).rev() {
            idx[d] = rem % self.sizes[d];
            rem /= self.sizes[d];
        }
        let mut off = offsets;
        for (&i, st) in idx.iter().zip(&self.strides) {
            for (o, &s) in off.iter_mut().zip(st) {
                *o += i as isize * s;
            }
        }
        let mut pos = lo;
        while pos < hi {
            let len = (inner - idx[nd - 1]).min(hi - pos);
            f(off, len, inner_st);
            pos += len;
            if pos >= hi {
                return;
            }
            // move to the start of the next run: reset the inner index, carry into outer dims
            for (k, o) in off.iter_mut().enumerate() {
                *o -= idx[nd - 1] as isize * inner_st[k];
            }
            idx[nd - 1] = 0;
            let mut d = nd - 1;
            loop {
                // pos < hi <= numel, so an outer dim always has room before d reaches 0
                d -= 1;
                idx[d] += 1;
                for (k, o) in off.iter_mut().enumerate() {
                    *o += self.strides[d][k];
                }
                if idx[d] < self.sizes[d] {
                    break;
                }
                for (k, o) in off.iter_mut().enumerate() {
                    *o -= self.strides[d][k] * self.sizes[d] as isize;
                }
                idx[d] = 0;
            }
        }
    }
}

/// Walks `N` operands of one broadcast shape together. `strides[k]` are operand k's strides (in
/// elements, may be 0 or — for flips — negative) and `offsets[k]` its start. Dims are coalesced
/// where possible; `f(offsets, len, inner_strides)` is called once per innermost run.
pub fn for_each_run<const N: usize>(
    sizes: &[usize],
    strides: [&[isize]; N],
    offsets: [isize; N],
    mut f: impl FnMut([isize; N], usize, [isize; N]),
) {
    if sizes.contains(&0) {
        return;
    }
    let c = coalesce(sizes, strides);
    c.walk(offsets, 0, c.numel(), &mut f);
}

/// Elements below which [`par_for_each_run`] stays on the calling thread.
pub(crate) const PAR_MIN_ELEMS: usize = 1 << 15;

/// Like [`for_each_run`], but splits the logical elements into contiguous ranges walked on the
/// kernel team when there are at least `2 * min_chunk` of them (runs at range edges are cut).
/// Runs serially on one-thread pools and when already called from a rayon worker (nested
/// parallelism buys nothing here, and a worker blocked on a storage lock it already holds
/// further up its stack must never wait for a stolen job that wants the same lock).
///
/// `f` must tolerate being called concurrently for disjoint element ranges.
pub(crate) fn par_for_each_run<const N: usize>(
    sizes: &[usize],
    strides: [&[isize]; N],
    offsets: [isize; N],
    min_chunk: usize,
    f: impl Fn([isize; N], usize, [isize; N]) + Sync,
) {
    if sizes.contains(&0) {
        return;
    }
    let c = coalesce(sizes, strides);
    par_ranges(c.numel(), min_chunk, |lo, hi| {
        c.walk(offsets, lo, hi, &mut |o, l, s| f(o, l, s))
    });
}

/// Calls `f(lo, hi)` over ranges covering `0..n`: one call on the calling thread below
/// `2 * min_chunk` elements, without a kernel team and inside rayon workers (see
/// [`par_for_each_run`]); otherwise a few contiguous ranges per team thread, run in parallel
/// (see [`crate::backend::cpu::team`]). Range edges are multiples of 16 so vector loops of
/// different ranges stay aligned alike.
pub(crate) fn par_ranges(n: usize, min_chunk: usize, f: impl Fn(usize, usize) + Sync) {
    use crate::backend::cpu::team;
    let min_chunk = min_chunk.max(1);
    // (the size test first: asking for the team costs more than a small kernel)
    if n < 2 * min_chunk {
        f(0, n);
        return;
    }
    let chunks = (team::size() * team::PARTS_PER_THREAD).min(n / min_chunk);
    let per = n.div_ceil(chunks).next_multiple_of(16);
    team::run(chunks, &|i| {
        let (lo, hi) = (i * per, ((i + 1) * per).min(n));
        if lo < hi {
            f(lo, hi);
        }
    });
}
