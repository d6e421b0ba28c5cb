//! Group normalisation over contiguous `[N, C, HxW]` inputs, `G` groups of `D = C / G`
//! channels, as PyTorch's CPU kernel (`group_norm_kernel.cpp`, contiguous path), computing in
//! the compute type of the dtype (f32 for f32/f16/bf16, f64 for f64):
//! - forward: each `(n, g)` row of `D * HxW` elements gets its mean and biased variance,
//!   `rstd = 1 / sqrt(max(var, 0) + eps)` (the sum with `eps` and the root in f64, rounded to
//!   the compute type, as PyTorch's `double eps` does); `y = (x - mean) * rstd` without affine,
//!   else `y = scale x + bias` with `scale = rstd w[c]`, `bias = -scale mean + b[c]`. The
//!   saved mean and rstd are rounded through the input dtype (PyTorch saves them in it).
//! - backward: `ds[n, c] = sum(g x)`, `db[n, c] = sum(g)` over `HxW`; per `(n, g)`
//!   `ds' = sum_c ds w`, `db' = sum_c db w`, `c2 = (db' mean - ds') rstd^3 / (D HxW)`,
//!   `c3 = -c2 mean - db' rstd / (D HxW)`, `gx = rstd w g + c2 x + c3`; `gw[c] = sum_n (ds -
//!   db mean) rstd`, `gb[c] = sum_n db`, the products and sums in PyTorch's order, fused
//!   multiply-adds where its AVX2/AVX-512 build contracts them.
//!
//! The moments: a row shorter than one 512-bit vector is PyTorch's scalar Welford loop
//! (`RowwiseMoments`' tail) exactly; a longer row takes f64 two-pass sums rounded to the
//! compute type (PyTorch's vector Welford cascade in the compute type may differ from it in
//! the last bit).

use super::rowwise::{Real, elems, elems_mut, for_parts, lanes, multiversion};
use super::team::SharedOut;
use crate::dtype::{Element, FloatCompute};
use crate::storage::CpuBuffer;
use crate::{DType, match_dtype};

/// `(N, C, HxW, G)` of a group_norm call.
type Dims = (usize, usize, usize, usize);

/// See [`NnKernels::group_norm`](crate::backend::NnKernels::group_norm).
#[allow(clippy::too_many_arguments)]
pub(super) fn forward(
    out: &mut CpuBuffer,
    stats: &mut CpuBuffer,
    (x, xo): (&CpuBuffer, usize),
    w: Option<(&CpuBuffer, usize)>,
    b: Option<(&CpuBuffer, usize)>,
    (n, c, hxw, groups): Dims,
    eps: f64,
    dt: DType,
) {
    let rows = n * groups;
    if rows == 0 {
        return;
    }
    let d = c / groups;
    let len = d * hxw;
    match_dtype!(dt, float, (T, C) => {
        let st = elems_mut::<C>(stats, 2 * rows);
        let xs = elems::<T>(x, xo, rows * len);
        let ws = w.map(|(b, o)| elems::<T>(b, o, c));
        let bs = b.map(|(b, o)| elems::<T>(b, o, c));
        let y = SharedOut(elems_mut::<T>(out, rows * len).as_mut_ptr());
        let st = SharedOut(st.as_mut_ptr());
        for_parts(rows, len, &|r| {
            // SAFETY: the parts' row ranges (and so their output rows, means and rstds) are
            // disjoint and inside `out` and `stats`.
            let (y, mean, rstd) = unsafe {
                (
                    std::slice::from_raw_parts_mut(y.ptr().add(r.start * len), r.len() * len),
                    std::slice::from_raw_parts_mut(st.ptr().add(r.start), r.len()),
                    std::slice::from_raw_parts_mut(st.ptr().add(rows + r.start), r.len()),
                )
            };
            let x = &xs[r.start * len..r.end * len];
            fwd_rows::<T, C>(y, mean, rstd, x, ws, bs, r.start, (groups, d, hxw), eps);
        });
    })
}

/// Mean and biased variance of `x` in the compute type (see the module header).
#[inline(always)]
fn moments<T: Element + FloatCompute<C = C>, C: Real>(x: &[T]) -> (C, C) {
    let n = x.len();
    if n * std::mem::size_of::<C>() < 64 {
        // PyTorch's scalar Welford loop (its compiler contracts the `m2` update to an FMA)
        let (mut m1, mut m2) = (C::ZERO, C::ZERO);
        for (k, &v) in x.iter().enumerate() {
            let v = v.widen();
            let delta = v - m1;
            m1 += delta / C::of((k + 1) as f64);
            m2 = delta.mul_add(v - m1, m2);
        }
        return (m1, m2 / C::of(n as f64));
    }
    let nf = n as f64;
    let mean = lanes(x, x, |v: T, _: T| v.widen().to_f64()) / nf;
    let m2 = lanes(x, x, |v: T, _: T| {
        let e = v.widen().to_f64() - mean;
        e * e
    });
    (C::of(mean), C::of(m2 / nf))
}

multiversion! {
    /// The normalised `(n, g)` rows of `x` (rows `first..` of `D * HxW` elements) into `y`,
    /// their means and rstds.
    fn fwd_rows<T, C>(
        y: &mut [T],
        mean: &mut [C],
        rstd: &mut [C],
        x: &[T],
        w: Option<&[T]>,
        b: Option<&[T]>,
        first: usize,
        geom: (usize, usize, usize),
        eps: f64,
    ) where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let (groups, d, hxw) = geom;
        let len = d * hxw;
        let rows = y.chunks_exact_mut(len).zip(x.chunks_exact(len));
        for (k, ((y, x), (mo, ro))) in rows.zip(mean.iter_mut().zip(rstd.iter_mut())).enumerate() {
            let (m, var) = moments::<T, C>(x);
            let var = if var < C::ZERO { C::ZERO } else { var };
            let r = C::of(1.0 / (var.to_f64() + eps).sqrt());
            // saved in the input dtype, as PyTorch's mean and rstd tensors
            (*mo, *ro) = (T::narrow(m).widen(), T::narrow(r).widen());
            if w.is_none() && b.is_none() {
                for (o, &x) in y.iter_mut().zip(x) {
                    *o = T::narrow((x.widen() - m) * r);
                }
                continue;
            }
            let g = (first + k) % groups;
            for (j, (y, x)) in y.chunks_exact_mut(hxw).zip(x.chunks_exact(hxw)).enumerate() {
                let ch = g * d + j;
                let scale = match w {
                    Some(w) => r * w[ch].widen(),
                    None => r,
                };
                let beta = b.map_or(C::ZERO, |b| b[ch].widen());
                let bias = (C::ZERO - scale).mul_add(m, beta);
                for (o, &x) in y.iter_mut().zip(x) {
                    *o = T::narrow(scale.mul_add(x.widen(), bias));
                }
            }
        }
    }
}

/// See [`NnKernels::group_norm_backward`](crate::backend::NnKernels::group_norm_backward).
#[allow(clippy::too_many_arguments)]
pub(super) fn backward(
    gx: Option<&mut CpuBuffer>,
    gw: Option<&mut CpuBuffer>,
    gb: Option<&mut CpuBuffer>,
    (g, go): (&CpuBuffer, usize),
    (x, xo): (&CpuBuffer, usize),
    (st, so): (&CpuBuffer, usize),
    w: Option<(&CpuBuffer, usize)>,
    (n, c, hxw, groups): Dims,
    dt: DType,
) {
    let rows = n * groups;
    let d = c / groups;
    let total = n * c * hxw;
    match_dtype!(dt, float, (T, C) => {
        let gs = elems::<T>(g, go, total);
        let xs = elems::<T>(x, xo, total);
        let st = elems::<C>(st, so, 2 * rows);
        let (mean, rstd) = st.split_at(rows);
        let ws = w.map(|(b, o)| elems::<T>(b, o, c));
        // ds then db of every (n, c)
        let mut sums = vec![C::ZERO; 2 * n * c];
        if hxw > 0 {
            let p = SharedOut(sums.as_mut_ptr());
            let nc = n * c;
            for_parts(nc, hxw, &|r| {
                // SAFETY: the parts' (n, c) ranges are disjoint and inside `sums` (both halves).
                let (ds, db) = unsafe {
                    (
                        std::slice::from_raw_parts_mut(p.ptr().add(r.start), r.len()),
                        std::slice::from_raw_parts_mut(p.ptr().add(nc + r.start), r.len()),
                    )
                };
                let span = r.start * hxw..r.end * hxw;
                channel_sums::<T, C>(ds, db, &gs[span.clone()], &xs[span], hxw);
            });
        }
        let (ds, db) = sums.split_at(n * c);
        if let Some(gx) = gx {
            let len = d * hxw;
            let dst = SharedOut(elems_mut::<T>(gx, total).as_mut_ptr());
            for_parts(rows, len, &|r| {
                // SAFETY: the parts' row ranges are disjoint and inside `gx`.
                let dst = unsafe {
                    std::slice::from_raw_parts_mut(dst.ptr().add(r.start * len), r.len() * len)
                };
                let span = r.start * len..r.end * len;
                gx_rows::<T, C>(
                    dst,
                    (&gs[span.clone()], &xs[span]),
                    (&mean[r.clone()], &rstd[r.clone()]),
                    (&ds[r.start * d..r.end * d], &db[r.start * d..r.end * d]),
                    ws,
                    r.start,
                    (groups, d, hxw),
                );
            });
        }
        if let Some(gw) = gw {
            let o = elems_mut::<T>(gw, c);
            for (ch, o) in o.iter_mut().enumerate() {
                let mut acc = C::ZERO;
                for k in 0..n {
                    let i = k * groups + ch / d.max(1);
                    let t = (C::ZERO - db[k * c + ch]).mul_add(mean[i], ds[k * c + ch]);
                    acc = t.mul_add(rstd[i], acc);
                }
                *o = T::narrow(acc);
            }
        }
        if let Some(gb) = gb {
            let o = elems_mut::<T>(gb, c);
            for (ch, o) in o.iter_mut().enumerate() {
                let mut acc = C::ZERO;
                for k in 0..n {
                    acc += db[k * c + ch];
                }
                *o = T::narrow(acc);
            }
        }
    })
}

multiversion! {
    /// `ds = sum(g x)`, `db = sum(g)` of each channel plane (`hxw` elements) of `g`, `x`.
    fn channel_sums<T, C>(ds: &mut [C], db: &mut [C], g: &[T], x: &[T], hxw: usize)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let planes = g.chunks_exact(hxw).zip(x.chunks_exact(hxw));
        for ((ds, db), (g, x)) in ds.iter_mut().zip(db.iter_mut()).zip(planes) {
            *ds = lanes(g, x, |g: T, x: T| g.widen() * x.widen());
            *db = lanes(g, g, |g: T, _: T| g.widen());
        }
    }
}

multiversion! {
    /// The input gradient of the `(n, g)` rows `first..` (see the module header).
    fn gx_rows<T, C>(
        dst: &mut [T],
        gx: (&[T], &[T]),
        stats: (&[C], &[C]),
        sums: (&[C], &[C]),
        w: Option<&[T]>,
        first: usize,
        geom: (usize, usize, usize),
    ) where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let (groups, d, hxw) = geom;
        let ((g, x), (mean, rstd), (ds, db)) = (gx, stats, sums);
        let len = d * hxw;
        if len == 0 {
            return;
        }
        let s = C::ONE / C::of(len as f64);
        for (k, ((m, r), dst)) in mean.iter().zip(rstd).zip(dst.chunks_exact_mut(len)).enumerate() {
            let (m, r) = (*m, *r);
            let grp = (first + k) % groups;
            let gamma = |j: usize| w.map_or(C::ONE, |w| w[grp * d + j].widen());
            let (ds, db) = (&ds[k * d..(k + 1) * d], &db[k * d..(k + 1) * d]);
            let (mut dsv, mut dbv) = (C::ZERO, C::ZERO);
            for j in 0..d {
                dsv = ds[j].mul_add(gamma(j), dsv);
                dbv = db[j].mul_add(gamma(j), dbv);
            }
            let c2 = dbv.mul_add(m, C::ZERO - dsv) * r * r * r * s;
            let c3 = (C::ZERO - c2).mul_add(m, C::ZERO - dbv * r * s);
            let (g, x) = (&g[k * len..(k + 1) * len], &x[k * len..(k + 1) * len]);
            let planes = dst.chunks_exact_mut(hxw).zip(g.chunks_exact(hxw).zip(x.chunks_exact(hxw)));
            for (j, (o, (g, x))) in planes.enumerate() {
                let c1 = r * gamma(j);
                for ((o, &g), &x) in o.iter_mut().zip(g).zip(x) {
                    *o = T::narrow(c1.mul_add(g.widen(), c2 * x.widen()) + c3);
                }
            }
        }
    }
}
