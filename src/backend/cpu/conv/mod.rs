//! The convolution kernels of the CPU backend: im2col ([`im2col`]) then the GEMM of
//! `cpu/matmul.rs`, one chunk of output rows at a time (a chunk's column matrix stays in L2
//! between its build and the GEMM's packing), run in parallel over images and groups (and
//! chunks, forward) on the kernel team (the GEMM inside a part runs on that part's thread; a
//! single part keeps the whole team for its GEMM).
//!
//! - forward: `out[n, g] = w[g] @ cols(x[n, g])` (`[ocg, ck] @ [ck, out]`), plus the bias;
//! - input gradient: `cols = w[g]^T @ gy[n, g]`, added back by `col2im`, plus the bias (the
//!   transposed convolution);
//! - weight gradient: `dw[g] = sum_n gy[n, g] @ cols(x[n, g])^T`, the batch split into one
//!   chunk per thread whose partial sums are added in chunk order.
//!
//! A 1x1 kernel with unit stride and no padding skips the column matrix. Unit-stride f32
//! convolutions of one or two spatial dims on AVX-512 CPUs skip it too: [`direct`] reads a
//! zero-padded copy of the input in place for all three products.

#[cfg(target_arch = "x86_64")]
mod direct;
mod im2col;

use super::matmul::{Mat, matmul, matmul_serial};
use super::team;
use crate::backend::ConvGeom;
use crate::backend::ConvKernels;
use crate::backend::cpu::Cpu;
use crate::storage::CpuBuffer;
use crate::{DType, Element};
use im2col::{G3, col2im, im2col};
use std::cell::Cell;

/// A base pointer shared by the parts of one kernel call.
#[derive(Clone, Copy)]
struct Shared<T>(*mut T);
// SAFETY: the parts of one call read the inputs only and write disjoint (image, group) slices
// of an output buffer borrowed exclusively for the whole call (or their own partial buffers).
unsafe impl<T> Send for Shared<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for Shared<T> {}

impl<T> Shared<T> {
    /// The pointer (a method: a closure calling it captures the whole `Sync` wrapper).
    fn get(self) -> *mut T {
        self.0
    }
    fn of(p: *const T) -> Self {
        Shared(p as *mut T)
    }
}

thread_local! {
    /// Per-thread column-matrix workspace, reused across calls (taken out while in use).
    static COLS: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with a scratch buffer of at least `elems` elements of `T` (8-byte aligned, which
/// every element type needs at most).
fn with_cols<T, R>(elems: usize, f: impl FnOnce(*mut T) -> R) -> R {
    let words = (elems * std::mem::size_of::<T>()).div_ceil(8);
    let mut buf = COLS.with(|c| c.take());
    if buf.len() < words {
        buf = vec![0u64; words];
    }
    let r = f(buf.as_mut_ptr() as *mut T);
    COLS.with(|c| c.set(buf));
    r
}

/// `dst[c * stride + l] += bias[c]` for `c < channels`, `l < len`.
///
/// # Safety
/// `dst` addresses `(channels - 1) * stride + len` writable elements, `bias` `channels`
/// readable ones.
unsafe fn add_bias<T: Element>(
    dst: *mut T,
    bias: *const T,
    channels: usize,
    len: usize,
    stride: usize,
) {
    for c in 0..channels {
        // SAFETY: inside both ranges (contract).
        unsafe {
            let v = *bias.add(c);
            let row = std::slice::from_raw_parts_mut(dst.add(c * stride), len);
            for e in row {
                *e = e.add(v);
            }
        }
    }
}

/// A GEMM entry of `matmul.rs`: [`matmul`] (on the whole team when large) or
/// [`matmul_serial`] (for one of several parallel parts).
type Gemm<T> = unsafe fn(usize, usize, usize, Mat<*mut T>, Mat<*const T>, Mat<*const T>);

/// The GEMM for a kernel of `parts` parallel parts: a single part keeps the whole team.
fn gemm_for<T: Element>(parts: usize) -> Gemm<T> {
    if parts > 1 {
        matmul_serial::<T>
    } else {
        matmul::<T>
    }
}

/// The row-major matrix at `ptr` whose rows are `stride` elements apart (a column range of a
/// wider row-major matrix).
fn rs<P>(ptr: P, stride: usize) -> Mat<P> {
    Mat {
        ptr,
        rs: stride as isize,
        cs: 1,
    }
}

/// Splits the output rows `0..rows` into chunks of `per`: the range of chunk `c`.
fn chunk(c: usize, per: usize, rows: usize) -> std::ops::Range<usize> {
    c * per..((c + 1) * per).min(rows)
}

/// A row-major matrix with `cols` columns.
fn rm<P>(ptr: P, cols: usize) -> Mat<P> {
    Mat {
        ptr,
        rs: cols as isize,
        cs: 1,
    }
}

/// The transpose of a row-major matrix with `cols` columns.
fn tr<P>(ptr: P, cols: usize) -> Mat<P> {
    Mat {
        ptr,
        rs: 1,
        cs: cols as isize,
    }
}

/// See [`ConvKernels::conv_forward`]. The parts are
/// (image, group, chunk of output rows): each builds its chunk of the column matrix and
/// multiplies it on its own thread (serves `conv2d_3x3_c64_56`).
///
/// # Safety
/// As there.
unsafe fn forward<T: Element>(
    out: *mut T,
    x: *const T,
    w: *const T,
    bias: Option<*const T>,
    g: &G3,
) {
    let (out, x, w, bias) = (
        Shared(out),
        Shared::of(x),
        Shared::of(w),
        bias.map(Shared::of),
    );
    #[cfg(target_arch = "x86_64")]
    if direct::fits::<T>(g) {
        let f = |p: Shared<T>| p.get() as *mut f32;
        // SAFETY: forwarded contract; `T` is f32, and `fits` holds.
        unsafe { direct::forward(f(out), f(x), f(w), bias.map(|b| f(b) as *const f32), g) };
        return;
    }
    let g = *g;
    let rows = g.o[0] * g.o[1];
    let per = if g.pointwise() {
        rows
    } else {
        g.chunk_rows(std::mem::size_of::<T>())
    };
    let chunks = rows.div_ceil(per);
    let parts = g.n * g.groups * chunks;
    let mm = gemm_for::<T>(parts);
    let part = move |p: usize| {
        let (ng, ch) = (p / chunks, p % chunks);
        let (n, gi) = (ng / g.groups, ng % g.groups);
        let r = chunk(ch, per, rows);
        let (c0, cw) = (r.start * g.o[2], r.len() * g.o[2]);
        // SAFETY: (image n, group gi) addresses its own slices of the contiguous operands
        // (caller contract); parts write disjoint column ranges of their slices of `out`.
        unsafe {
            let xp = x.get().add((n * g.c_in + gi * g.cg) * g.lin) as *const T;
            let op = out.get().add((n * g.c_out + gi * g.ocg) * g.lout + c0);
            let wp = w.get().add(gi * g.ocg * g.ck) as *const T;
            if g.pointwise() {
                mm(
                    g.ocg,
                    g.lout,
                    g.ck,
                    rm(op, g.lout),
                    rm(wp, g.ck),
                    rm(xp, g.lout),
                );
            } else {
                with_cols::<T, _>(g.ck * cw, |cols| {
                    im2col(xp, cols, &g, r);
                    mm(
                        g.ocg,
                        cw,
                        g.ck,
                        rs(op, g.lout),
                        rm(wp, g.ck),
                        rm(cols as *const T, cw),
                    );
                });
            }
            if let Some(b) = bias {
                add_bias(op, b.get().add(gi * g.ocg) as *const T, g.ocg, cw, g.lout);
            }
        }
    };
    team::run(parts, &part);
}

/// See [`ConvKernels::conv_backward_input`]. The
/// column matrix is built and added back one chunk of output rows at a time.
///
/// # Safety
/// As there.
unsafe fn backward_input<T: Element>(
    out: *mut T,
    gy: *const T,
    w: *const T,
    bias: Option<*const T>,
    g: &G3,
) {
    let (out, gy, w, bias) = (
        Shared(out),
        Shared::of(gy),
        Shared::of(w),
        bias.map(Shared::of),
    );
    #[cfg(target_arch = "x86_64")]
    if direct::fits::<T>(g) {
        let f = |p: Shared<T>| p.get() as *mut f32;
        // SAFETY: forwarded contract; `T` is f32.
        if unsafe {
            direct::backward_input(f(out), f(gy), f(w), bias.map(|b| f(b) as *const f32), g)
        } {
            return;
        }
    }
    let g = *g;
    let rows = g.o[0] * g.o[1];
    let per = g.chunk_rows(std::mem::size_of::<T>());
    let mm = gemm_for::<T>(g.n * g.groups);
    let part = move |p: usize| {
        let (n, gi) = (p / g.groups, p % g.groups);
        // SAFETY: as in `forward`, with the roles of input and output exchanged.
        unsafe {
            let gp = gy.get().add((n * g.c_out + gi * g.ocg) * g.lout) as *const T;
            let dp = out.get().add((n * g.c_in + gi * g.cg) * g.lin);
            let wp = w.get().add(gi * g.ocg * g.ck) as *const T;
            if g.pointwise() {
                mm(
                    g.ck,
                    g.lout,
                    g.ocg,
                    rm(dp, g.lout),
                    tr(wp, g.ck),
                    rm(gp, g.lout),
                );
            } else {
                std::ptr::write_bytes(dp, 0, g.cg * g.lin);
                for ch in 0..rows.div_ceil(per) {
                    let r = chunk(ch, per, rows);
                    let (c0, cw) = (r.start * g.o[2], r.len() * g.o[2]);
                    with_cols::<T, _>(g.ck * cw, |cols| {
                        mm(
                            g.ck,
                            cw,
                            g.ocg,
                            rm(cols, cw),
                            tr(wp, g.ck),
                            rs(gp.add(c0), g.lout),
                        );
                        col2im(cols as *const T, dp, &g, r);
                    });
                }
            }
            if let Some(b) = bias {
                add_bias(dp, b.get().add(gi * g.cg) as *const T, g.cg, g.lin, g.lin);
            }
        }
    };
    team::run(g.n * g.groups, &part);
}

/// See [`ConvKernels::conv_backward_weight`].
///
/// # Safety
/// As there.
unsafe fn backward_weight<T: Element>(out: *mut T, x: *const T, gy: *const T, g: &G3) {
    #[cfg(target_arch = "x86_64")]
    if direct::fits::<T>(g) {
        let f = |p: *const T| p as *mut f32;
        // SAFETY: forwarded contract; `T` is f32, and `fits` holds.
        unsafe { direct::backward_weight(f(out), f(x), f(gy), g) };
        return;
    }
    let total = g.c_out * g.ck;
    let chunks = g.n.min(team::size()).max(1);
    let (x, gy) = (Shared::of(x), Shared::of(gy));
    let g = *g;
    let rows = g.o[0] * g.o[1];
    let per = g.chunk_rows(std::mem::size_of::<T>());
    let mm = gemm_for::<T>(chunks);
    let part = move |c: usize| -> Vec<T> {
        let mut acc = vec![T::zero(); total];
        let mut tmp = vec![T::zero(); g.ocg * g.ck];
        let (lo, hi) = (c * g.n / chunks, (c + 1) * g.n / chunks);
        for n in lo..hi {
            for gi in 0..g.groups {
                // SAFETY: (image n, group gi) addresses its own slices of the contiguous
                // operands (caller contract); `tmp` holds `ocg * ck` elements.
                unsafe {
                    let xp = x.get().add((n * g.c_in + gi * g.cg) * g.lin) as *const T;
                    let gp = gy.get().add((n * g.c_out + gi * g.ocg) * g.lout) as *const T;
                    let t = tmp.as_mut_ptr();
                    if g.pointwise() {
                        mm(
                            g.ocg,
                            g.ck,
                            g.lout,
                            rm(t, g.ck),
                            rm(gp, g.lout),
                            tr(xp, g.lout),
                        );
                        let a = &mut acc[gi * g.ocg * g.ck..(gi + 1) * g.ocg * g.ck];
                        for (a, &t) in a.iter_mut().zip(&tmp) {
                            *a = a.add(t);
                        }
                    } else {
                        for ch in 0..rows.div_ceil(per) {
                            let r = chunk(ch, per, rows);
                            let (c0, cw) = (r.start * g.o[2], r.len() * g.o[2]);
                            with_cols::<T, _>(g.ck * cw, |cols| {
                                im2col(xp, cols, &g, r);
                                mm(
                                    g.ocg,
                                    g.ck,
                                    cw,
                                    rm(t, g.ck),
                                    rs(gp.add(c0), g.lout),
                                    tr(cols as *const T, cw),
                                );
                            });
                            let a = &mut acc[gi * g.ocg * g.ck..(gi + 1) * g.ocg * g.ck];
                            for (a, &t) in a.iter_mut().zip(&tmp) {
                                *a = a.add(t);
                            }
                        }
                    }
                }
            }
        }
        acc
    };
    let partial = if chunks == 1 {
        vec![part(0)]
    } else {
        team::map(chunks, &part)
    };
    // SAFETY: `out` addresses `total` writable elements (caller contract).
    let dst = unsafe { std::slice::from_raw_parts_mut(out, total) };
    dst.copy_from_slice(&partial[0]);
    for p in &partial[1..] {
        for (d, &v) in dst.iter_mut().zip(p) {
            *d = d.add(v);
        }
    }
}

/// The typed base pointer of `buf` at element offset `off`.
fn at<T>(buf: &CpuBuffer, off: usize) -> *const T {
    (buf.as_ptr() as *const T).wrapping_add(off)
}

/// The three products on CPU buffers: the element type picked once, then the typed kernels
/// above (the contracts are [`ConvKernels`]').
impl ConvKernels for Cpu {
    unsafe fn conv_forward(
        out: &mut CpuBuffer,
        x: &CpuBuffer,
        xo: usize,
        w: &CpuBuffer,
        wo: usize,
        bias: Option<(&CpuBuffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    ) {
        let g3 = G3::new(g);
        crate::dispatch!(dt, T => {
            // SAFETY: forwarded contract.
            unsafe {
                forward::<T>(out.as_mut_ptr() as *mut T, at(x, xo), at(w, wo), bias.map(|(b, o)| at(b, o)), &g3)
            }
        })
    }

    unsafe fn conv_backward_input(
        out: &mut CpuBuffer,
        gy: &CpuBuffer,
        go: usize,
        w: &CpuBuffer,
        wo: usize,
        bias: Option<(&CpuBuffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    ) {
        let g3 = G3::new(g);
        crate::dispatch!(dt, T => {
            // SAFETY: forwarded contract.
            unsafe {
                backward_input::<T>(out.as_mut_ptr() as *mut T, at(gy, go), at(w, wo), bias.map(|(b, o)| at(b, o)), &g3)
            }
        })
    }

    unsafe fn conv_backward_weight(
        out: &mut CpuBuffer,
        x: &CpuBuffer,
        xo: usize,
        gy: &CpuBuffer,
        go: usize,
        g: &ConvGeom,
        dt: DType,
    ) {
        let g3 = G3::new(g);
        crate::dispatch!(dt, T => {
            // SAFETY: forwarded contract.
            unsafe { backward_weight::<T>(out.as_mut_ptr() as *mut T, at(x, xo), at(gy, go), &g3) }
        })
    }
}
