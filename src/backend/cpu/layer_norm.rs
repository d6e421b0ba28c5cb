//! Layer normalisation over contiguous rows (serves the `layer_norm_4096x1024` workload):
//! forward `y = (x - mean) * rstd * w + b` with each row's mean and `rstd = 1 / sqrt(var +
//! eps)` (biased variance, two passes over the row) kept for the backward; backward as
//! PyTorch's CPU kernel: with `ds = sum(g w x)`, `db = sum(g w)`,
//! `b' = (db mean - ds) rstd^3 / n`, `c = -b' mean - db rstd / n`:
//! `gx = rstd g w + b' x + c`, and the column sums `gw = sum_rows(g (x - mean) rstd)`,
//! `gb = sum_rows(g)` from per-part partial sums added in part order (deterministic).
//! Typed, multi-versioned and parallel as the row kernels of [`rowwise`](super::rowwise).

use super::rowwise::{PART_ELEMS, Real, elems, elems_mut, for_parts, lanes, lanes3, multiversion};
use super::team::{self, SharedOut};
use crate::dtype::{Element, FloatCompute};
use crate::storage::CpuBuffer;
use crate::{DType, match_dtype};

/// Most parts of a backward that sums weight gradients (each part keeps `2 n` partial sums).
const MAX_GRAD_PARTS: usize = 64;

/// See [`NnKernels::layer_norm`](crate::backend::NnKernels::layer_norm).
#[allow(clippy::too_many_arguments)]
pub(super) fn forward(
    out: &mut CpuBuffer,
    stats: &mut CpuBuffer,
    (x, xo): (&CpuBuffer, usize),
    w: Option<(&CpuBuffer, usize)>,
    b: Option<(&CpuBuffer, usize)>,
    rows: usize,
    n: usize,
    eps: f64,
    dt: DType,
) {
    if rows == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let st = elems_mut::<C>(stats, 2 * rows);
        if n == 0 {
            // an empty row: mean and variance 0 / 0
            st.fill(C::of(f64::NAN));
            return;
        }
        let xs = elems::<T>(x, xo, rows * n);
        let ws = w.map(|(b, o)| elems::<T>(b, o, n));
        let bs = b.map(|(b, o)| elems::<T>(b, o, n));
        let y = SharedOut(elems_mut::<T>(out, rows * n).as_mut_ptr());
        let st = SharedOut(st.as_mut_ptr());
        let eps = C::of(eps);
        for_parts(rows, n, &|r| {
            // SAFETY: the parts' row ranges (and so their output rows, means and rstds) are
            // disjoint and inside `out` and `stats`.
            let (y, mean, rstd) = unsafe {
                (
                    std::slice::from_raw_parts_mut(y.ptr().add(r.start * n), r.len() * n),
                    std::slice::from_raw_parts_mut(st.ptr().add(r.start), r.len()),
                    std::slice::from_raw_parts_mut(st.ptr().add(rows + r.start), r.len()),
                )
            };
            fwd_rows::<T, C>(y, mean, rstd, &xs[r.start * n..r.end * n], ws, bs, n, eps);
        });
    })
}

multiversion! {
    /// The normalised rows of `x` (rows of `n`) into `y`, their means and rstds.
    fn fwd_rows<T, C>(
        y: &mut [T],
        mean: &mut [C],
        rstd: &mut [C],
        x: &[T],
        w: Option<&[T]>,
        b: Option<&[T]>,
        n: usize,
        eps: C,
    ) where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let nc = C::of(n as f64);
        let rows = y.chunks_exact_mut(n).zip(x.chunks_exact(n));
        for (((y, x), mo), ro) in rows.zip(mean.iter_mut()).zip(rstd.iter_mut()) {
            let m = lanes(x, x, |x: T, _: T| x.widen()) / nc;
            let var = lanes(x, x, |x: T, _: T| {
                let d = x.widen() - m;
                d * d
            }) / nc;
            let r = C::ONE / (var + eps).sqrt();
            (*mo, *ro) = (m, r);
            match (w, b) {
                (Some(w), Some(b)) => {
                    for (((o, &x), &w), &b) in y.iter_mut().zip(x).zip(w).zip(b) {
                        *o = T::narrow((x.widen() - m) * r * w.widen() + b.widen());
                    }
                }
                (Some(w), None) => {
                    for ((o, &x), &w) in y.iter_mut().zip(x).zip(w) {
                        *o = T::narrow((x.widen() - m) * r * w.widen());
                    }
                }
                (None, Some(b)) => {
                    for ((o, &x), &b) in y.iter_mut().zip(x).zip(b) {
                        *o = T::narrow((x.widen() - m) * r + b.widen());
                    }
                }
                (None, None) => {
                    for (o, &x) in y.iter_mut().zip(x) {
                        *o = T::narrow((x.widen() - m) * r);
                    }
                }
            }
        }
    }
}

/// See [`NnKernels::layer_norm_backward`](crate::backend::NnKernels::layer_norm_backward).
#[allow(clippy::too_many_arguments)]
pub(super) fn backward(
    gx: Option<&mut CpuBuffer>,
    gw: Option<&mut CpuBuffer>,
    gb: Option<&mut CpuBuffer>,
    (g, go): (&CpuBuffer, usize),
    (x, xo): (&CpuBuffer, usize),
    (st, so): (&CpuBuffer, usize),
    w: Option<(&CpuBuffer, usize)>,
    rows: usize,
    n: usize,
    dt: DType,
) {
    match_dtype!(dt, float, (T, C) => {
        let gs = elems::<T>(g, go, rows * n);
        let xs = elems::<T>(x, xo, rows * n);
        let st = elems::<C>(st, so, 2 * rows);
        let ws = w.map(|(b, o)| elems::<T>(b, o, n));
        let gxp = gx.map(|b| SharedOut(elems_mut::<T>(b, rows * n).as_mut_ptr()));
        let sums = gw.is_some() || gb.is_some();
        let part = |r: std::ops::Range<usize>| -> Vec<C> {
            let span = r.start * n..r.end * n;
            let (mean, rstd) = (&st[r.clone()], &st[rows + r.start..rows + r.end]);
            if let Some(p) = gxp {
                // SAFETY: the parts' row ranges are disjoint and inside `gx`.
                let d = unsafe { std::slice::from_raw_parts_mut(p.ptr().add(span.start), span.len()) };
                gx_rows::<T, C>(d, &gs[span.clone()], &xs[span.clone()], mean, rstd, ws, n);
            }
            let mut acc = Vec::new();
            if sums && n > 0 {
                acc = vec![C::ZERO; 2 * n];
                let (aw, ab) = acc.split_at_mut(n);
                sum_rows::<T, C>(aw, ab, &gs[span.clone()], &xs[span], mean, rstd);
            }
            acc
        };
        let mut parts = ((rows * n) / PART_ELEMS).min(rows).min(team::MAX_PARTS);
        if sums {
            parts = parts.min(MAX_GRAD_PARTS);
        }
        let partials: Vec<Vec<C>> = if parts < 2 {
            vec![part(0..rows)]
        } else {
            team::map(parts, &|p| part(rows * p / parts..rows * (p + 1) / parts))
        };
        for (buf, k) in [(gw, 0), (gb, 1)] {
            let Some(buf) = buf else { continue };
            let d = elems_mut::<T>(buf, n);
            for (j, o) in d.iter_mut().enumerate() {
                let mut s = C::ZERO;
                for p in &partials {
                    if !p.is_empty() {
                        s += p[k * n + j];
                    }
                }
                *o = T::narrow(s);
            }
        }
    })
}

multiversion! {
    /// The input gradient of the rows of `g`, `x` (rows of `n`).
    fn gx_rows<T, C>(
        d: &mut [T],
        g: &[T],
        x: &[T],
        mean: &[C],
        rstd: &[C],
        w: Option<&[T]>,
        n: usize,
    ) where [T: Element + FloatCompute<C = C>, C: Real]
    {
        if n == 0 {
            return;
        }
        let scale = C::ONE / C::of(n as f64);
        let rows = d.chunks_exact_mut(n).zip(g.chunks_exact(n)).zip(x.chunks_exact(n));
        for (((d, g), x), (&m, &r)) in rows.zip(mean.iter().zip(rstd)) {
            // ds = sum(g w x), db = sum(g w) (w = 1 without a weight)
            let (ds, db) = match w {
                Some(w) => (
                    lanes3(g, w, x, |g: T, w: T, x: T| g.widen() * w.widen() * x.widen()),
                    lanes(g, w, |g: T, w: T| g.widen() * w.widen()),
                ),
                None => (
                    lanes(g, x, |g: T, x: T| g.widen() * x.widen()),
                    lanes(g, g, |g: T, _: T| g.widen()),
                ),
            };
            let b = (db * m - ds) * r * r * r * scale;
            let c = C::ZERO - b * m - db * r * scale;
            match w {
                Some(w) => {
                    for (((o, &g), &x), &w) in d.iter_mut().zip(g).zip(x).zip(w) {
                        *o = T::narrow(r * g.widen() * w.widen() + b * x.widen() + c);
                    }
                }
                None => {
                    for ((o, &g), &x) in d.iter_mut().zip(g).zip(x) {
                        *o = T::narrow(r * g.widen() + b * x.widen() + c);
                    }
                }
            }
        }
    }
}

multiversion! {
    /// Adds the rows' `g (x - mean) rstd` to `aw` and `g` to `ab` (column sums).
    fn sum_rows<T, C>(aw: &mut [C], ab: &mut [C], g: &[T], x: &[T], mean: &[C], rstd: &[C])
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let n = aw.len();
        let rows = g.chunks_exact(n).zip(x.chunks_exact(n));
        for ((g, x), (&m, &r)) in rows.zip(mean.iter().zip(rstd)) {
            for (((aw, ab), &g), &x) in aw.iter_mut().zip(ab.iter_mut()).zip(g).zip(x) {
                let g = g.widen();
                *aw += g * ((x.widen() - m) * r);
                *ab += g;
            }
        }
    }
}
