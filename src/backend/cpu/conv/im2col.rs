//! im2col and col2im over one (image, group) slice: the column matrix `[c * k_taps, out]` whose
//! row `(c, tap)` holds, for every output position, the input element that tap reads (zero
//! where it falls in the padding), built for a chunk of output rows at a time. The spatial dims
//! are padded to three ([`G3`]); the innermost one runs as a contiguous copy when its stride
//! is 1.

use crate::Element;

/// Bytes of one column-matrix chunk: it is written by `im2col` and read back by the GEMM's
/// packing while it sits in L2 (the whole matrix of `conv2d_3x3_c64_56`, 7 MB per image,
/// went out to L3 and back).
const CHUNK_BYTES: usize = 512 * 1024;

/// A convolution geometry with its spatial dims padded to three (leading dims of size 1).
#[derive(Clone, Copy)]
pub(super) struct G3 {
    pub n: usize,
    pub groups: usize,
    pub c_in: usize,
    pub c_out: usize,
    /// Input channels per group.
    pub cg: usize,
    /// Output channels per group.
    pub ocg: usize,
    pub i: [usize; 3],
    pub o: [usize; 3],
    pub k: [usize; 3],
    pub s: [usize; 3],
    pub p: [usize; 3],
    pub d: [usize; 3],
    /// Input positions per channel.
    pub lin: usize,
    /// Output positions per channel.
    pub lout: usize,
    /// Rows of the column matrix (`cg * taps`).
    pub ck: usize,
}

impl G3 {
    pub(super) fn new(g: &crate::backend::ConvGeom) -> G3 {
        let nd = g.in_sp.len();
        debug_assert!((1..=3).contains(&nd));
        let pad3 = |v: &[usize], fill: usize| {
            let mut a = [fill; 3];
            a[3 - nd..].copy_from_slice(v);
            a
        };
        let (i, o, k) = (pad3(&g.in_sp, 1), pad3(&g.out_sp, 1), pad3(&g.k_sp, 1));
        let cg = g.c_in / g.groups;
        G3 {
            n: g.n,
            groups: g.groups,
            c_in: g.c_in,
            c_out: g.c_out,
            cg,
            ocg: g.c_out / g.groups,
            i,
            o,
            k,
            s: pad3(&g.stride, 1),
            p: pad3(&g.pad, 0),
            d: pad3(&g.dilation, 1),
            lin: i.iter().product(),
            lout: o.iter().product(),
            ck: cg * k.iter().product::<usize>(),
        }
    }

    /// Output rows (`(od, oh)` pairs) per column-matrix chunk: enough for about
    /// [`CHUNK_BYTES`] of columns of `elem`-byte elements (at least one row).
    pub(super) fn chunk_rows(&self, elem: usize) -> usize {
        let row_bytes = self.ck.saturating_mul(self.o[2]).saturating_mul(elem);
        (CHUNK_BYTES / row_bytes.max(1)).clamp(1, self.o[0] * self.o[1])
    }

    /// A 1x1 kernel with unit stride and no padding: the column matrix is the input itself.
    pub(super) fn pointwise(&self) -> bool {
        self.k == [1; 3] && self.s == [1; 3] && self.p == [0; 3] && self.i == self.o
    }
}

/// The output positions `[lo, hi)` along one dim whose input position `o * s + off` lies in
/// `[0, len)`, and the input position of `lo` (meaningful when `lo < hi`). Computed in
/// `i128`: no geometry overflows it.
#[inline]
fn valid_range(len: usize, s: usize, off: isize, o: usize) -> (usize, usize, usize) {
    let (s, len, off) = (s as i128, len as i128, off as i128);
    let lo = if off >= 0 { 0 } else { (-off + s - 1) / s };
    let hi = if len - off <= 0 {
        0
    } else {
        (len - off + s - 1) / s
    };
    let hi = hi.min(o as i128);
    let lo = lo.min(hi);
    // `lo < hi`: `lo * s + off` lies in `[0, len)`, a usize
    let first = if lo < hi { (lo * s + off) as usize } else { 0 };
    (lo as usize, hi as usize, first)
}

/// Calls `f(col, src, lo, hi)` for every innermost run of the column matrix of the output
/// rows `rows` (the shared loop of [`im2col`] and [`col2im`]; a row is one `(od, oh)` pair, in
/// row-major order, and the matrix holds `rows.len() * g.o[2]` columns): the run of `g.o[2]`
/// column elements from `col`, of which `[lo, hi)` read the input elements
/// `src + (ow - lo) * g.s[2]` (`src`: the element offset in the input slice of the one `lo`
/// reads; `None` when no element of the run reads the input: its row lies in the padding of
/// an outer dim, or `lo == hi`, and every element reads zero). So every offset given is of an element
/// inside the input slice, and no offset is formed for a position outside it.
///
/// Positions: `od * s + kd * d` is at most `(o - 1) * s + (k - 1) * d`, which fits in int64
/// (`ConvGeom::positions_fit`, asserted by the front door), as does the padding; the
/// innermost dim's range is computed in `i128` ([`valid_range`]).
#[inline(always)]
fn for_runs(
    g: &G3,
    rows: std::ops::Range<usize>,
    mut f: impl FnMut(usize, Option<usize>, usize, usize),
) {
    let taps = g.k[0] * g.k[1] * g.k[2];
    let width = rows.len() * g.o[2];
    for c in 0..g.cg {
        for kd in 0..g.k[0] {
            for kh in 0..g.k[1] {
                for kw in 0..g.k[2] {
                    let row = c * taps + (kd * g.k[1] + kh) * g.k[2] + kw;
                    let off_w = (kw * g.d[2]) as isize - g.p[2] as isize;
                    let (lo, hi, first) = valid_range(g.i[2], g.s[2], off_w, g.o[2]);
                    for r in rows.clone() {
                        let (od, oh) = (r / g.o[1], r % g.o[1]);
                        let id = (od * g.s[0] + kd * g.d[0]) as isize - g.p[0] as isize;
                        let ih = (oh * g.s[1] + kh * g.d[1]) as isize - g.p[1] as isize;
                        let col = row * width + (r - rows.start) * g.o[2];
                        let inside = lo < hi
                            && (0..g.i[0] as isize).contains(&id)
                            && (0..g.i[1] as isize).contains(&ih);
                        let src = inside.then(|| {
                            ((c * g.i[0] + id as usize) * g.i[1] + ih as usize) * g.i[2] + first
                        });
                        f(col, src, lo, hi);
                    }
                }
            }
        }
    }
}

/// Fills the column matrix `cols` of the output rows `rows` (`g.ck * rows.len() * g.o[2]`
/// elements, see [`for_runs`]) from the input slice `x` (`g.cg` channels of `g.lin` elements).
///
/// # Safety
/// `x` addresses `g.cg * g.lin` readable elements and `cols` `g.ck * rows.len() * g.o[2]`
/// writable ones, not overlapping; `rows` lies in `0..g.o[0] * g.o[1]`; `g` holds the front
/// door's invariants (every operand non-empty, `ConvGeom::positions_fit`).
pub(super) unsafe fn im2col<T: Element>(
    x: *const T,
    cols: *mut T,
    g: &G3,
    rows: std::ops::Range<usize>,
) {
    let (ow, sw) = (g.o[2], g.s[2]);
    for_runs(g, rows, |col, src, lo, hi| {
        // SAFETY: the run `[col, col + ow)` lies inside `cols` (`col < g.ck * width` by
        // construction). `src` is given only when `lo < hi` and is the offset of an input
        // element inside `x` (`for_runs`); the elements `src + (o - lo) * sw` for `o` in
        // `[lo, hi)` lie in `[0, g.i[2])` of that in-range row (`valid_range`), inside `x`.
        // No pointer is formed from an offset outside `x`.
        unsafe {
            let dst = cols.add(col);
            match src {
                None => std::ptr::write_bytes(dst, 0, ow),
                Some(first) => {
                    std::ptr::write_bytes(dst, 0, lo);
                    let from = x.add(first);
                    if sw == 1 {
                        std::ptr::copy_nonoverlapping(from, dst.add(lo), hi - lo);
                    } else {
                        for o in lo..hi {
                            *dst.add(o) = *from.add((o - lo) * sw);
                        }
                    }
                    std::ptr::write_bytes(dst.add(hi), 0, ow - hi);
                }
            }
        }
    });
}

/// Adds the column matrix `cols` of the output rows `rows` back into the input slice `dx` (the
/// adjoint of [`im2col`]): every column element is added to the input element it was read
/// from.
///
/// # Safety
/// As [`im2col`], with `dx` writable and `cols` readable.
pub(super) unsafe fn col2im<T: Element>(
    cols: *const T,
    dx: *mut T,
    g: &G3,
    rows: std::ops::Range<usize>,
) {
    let sw = g.s[2];
    for_runs(g, rows, |col, src, lo, hi| {
        if let Some(first) = src {
            // SAFETY: as in `im2col`, the same positions, read and written the other way.
            unsafe {
                let (c, from) = (cols.add(col), dx.add(first));
                for o in lo..hi {
                    let p = from.add((o - lo) * sw);
                    *p = (*p).add(*c.add(o));
                }
            }
        }
    });
}
