//! Row-wise kernels of the nn family ([`RowwiseOp`]: softmax, log_softmax and their backwards,
//! layer_norm's differentiable `rsqrt`) over contiguous `[outer, n, inner]` elements, rows
//! along `n`; and [`read_at`], the positional read behind the class losses' target picks. The
//! shared machinery of the row kernels (the [`Real`] compute type, lane reductions, the
//! multi-versioned bodies and the split into parallel parts) is also `layer_norm`'s.
//!
//! Typed: f32 computes in f32, f64 in f64, f16/bf16 in f32. Each body is compiled for the
//! baseline target, AVX2+FMA and AVX-512 (picked at run time, as `elementwise`), reductions
//! run in [`L`] independent lanes so they vectorise, and the work is split into parts of about
//! [`PART_ELEMS`] elements on the kernel team (serves the `softmax_4096x1024`,
//! `log_softmax_4096x1024` and `cross_entropy_4096x1024` workloads).
//!
//! Geometry: with `inner == 1` a row is contiguous and one row is a unit of work (max, then
//! `exp(x - max)` into a scratch row and its sum, then the output); with `inner > 1` a unit is
//! a tile of up to [`TILE`] neighbouring columns of one `[n, inner]` block, whose per-column
//! maxima and sums are kept while the rows are walked in memory order.

use super::Cpu;
use super::math::Transcendental;
use super::team::{self, SharedOut};
use super::{group_norm, layer_norm};
use crate::backend::NnKernels;
use crate::backend::RowwiseOp;
use crate::dtype::{Element, FloatCompute, cast};
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Result, dispatch, match_dtype};

/// Elements of work per parallel part (below twice this, a kernel runs on the calling thread).
pub(super) const PART_ELEMS: usize = 1 << 14;
/// Independent accumulators of a row reduction (a vector register's worth of f32 or two).
pub(super) const L: usize = 16;
/// Columns per unit of work of a row along a strided dim.
const TILE: usize = 128;

/// The arithmetic a row kernel computes in (f32 or f64); `exp` and `ln` are the vectorisable
/// lane functions of [`math`](super::math) (1 ulp in f32, 2 in f64).
pub(super) trait Real:
    Copy
    + Send
    + Sync
    + PartialOrd
    + std::ops::Sub<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::AddAssign
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    const ZERO: Self;
    const ONE: Self;
    const NEG_INF: Self;
    fn exp(self) -> Self;
    fn ln(self) -> Self;
    fn sqrt(self) -> Self;
    fn of(v: f64) -> Self;
    /// The value as f64 (exact).
    fn to_f64(self) -> f64;
    /// `self * a + b` rounded once (an FMA instruction in the AVX2/AVX-512 bodies).
    fn mul_add(self, a: Self, b: Self) -> Self;
}

macro_rules! real {
    ($t:ty) => {
        impl Real for $t {
            const ZERO: Self = 0.0;
            const ONE: Self = 1.0;
            const NEG_INF: Self = <$t>::NEG_INFINITY;
            #[inline(always)]
            fn exp(self) -> Self {
                Transcendental::vexp(self)
            }
            #[inline(always)]
            fn ln(self) -> Self {
                Transcendental::vln(self)
            }
            #[inline(always)]
            fn sqrt(self) -> Self {
                <$t>::sqrt(self)
            }
            #[inline(always)]
            fn of(v: f64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn mul_add(self, a: Self, b: Self) -> Self {
                <$t>::mul_add(self, a, b)
            }
        }
    };
}
real!(f32);
real!(f64);

/// The larger of `a` and `b`, keeping `a` when `b` is NaN (a NaN then reaches the row's
/// results through its own `exp`, as in PyTorch). Compiles to one vector max.
#[inline(always)]
fn vmax<C: Real>(a: C, b: C) -> C {
    if b > a { b } else { a }
}

/// `sum_i f(a[i], b[i])` over the common length in [`L`] lanes (vectorises; the lanes are
/// added in order at the end, so the result depends only on the length).
#[inline(always)]
pub(super) fn lanes<C: Real, A: Copy, B: Copy>(a: &[A], b: &[B], f: impl Fn(A, B) -> C) -> C {
    let n = a.len().min(b.len());
    let (a, b) = (&a[..n], &b[..n]);
    let mut acc = [C::ZERO; L];
    let (ca, cb) = (a.chunks_exact(L), b.chunks_exact(L));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for k in 0..L {
            acc[k] += f(x[k], y[k]);
        }
    }
    let mut s = C::ZERO;
    for (&x, &y) in ra.iter().zip(rb) {
        s += f(x, y);
    }
    for a in acc {
        s += a;
    }
    s
}

/// `sum_i f(a[i], b[i], c[i])` over the common length, as [`lanes`].
#[inline(always)]
pub(super) fn lanes3<C: Real, A: Copy, B: Copy, D: Copy>(
    a: &[A],
    b: &[B],
    c: &[D],
    f: impl Fn(A, B, D) -> C,
) -> C {
    let n = a.len().min(b.len()).min(c.len());
    let (a, b, c) = (&a[..n], &b[..n], &c[..n]);
    let mut acc = [C::ZERO; L];
    let (ca, cb, cc) = (a.chunks_exact(L), b.chunks_exact(L), c.chunks_exact(L));
    let (ra, rb, rc) = (ca.remainder(), cb.remainder(), cc.remainder());
    for ((x, y), z) in ca.zip(cb).zip(cc) {
        for k in 0..L {
            acc[k] += f(x[k], y[k], z[k]);
        }
    }
    let mut s = C::ZERO;
    for ((&x, &y), &z) in ra.iter().zip(rb).zip(rc) {
        s += f(x, y, z);
    }
    for a in acc {
        s += a;
    }
    s
}

/// `max_i x[i]` (widened) in [`L`] lanes; `-inf` for an empty row.
#[inline(always)]
fn lane_max<T: FloatCompute<C = C>, C: Real>(x: &[T]) -> C {
    let mut acc = [C::NEG_INF; L];
    let c = x.chunks_exact(L);
    let r = c.remainder();
    for v in c {
        for k in 0..L {
            acc[k] = vmax(acc[k], v[k].widen());
        }
    }
    let mut m = C::NEG_INF;
    for &v in r {
        m = vmax(m, v.widen());
    }
    for a in acc {
        m = vmax(m, a);
    }
    m
}

/// `e[i] = exp(x[i] - m)` and `sum_i e[i]` in one pass, in [`L`] lanes as [`lanes`].
#[inline(always)]
fn exp_sum<T: FloatCompute<C = C>, C: Real>(e: &mut [C], x: &[T], m: C) -> C {
    let n = e.len().min(x.len());
    let (e, x) = (&mut e[..n], &x[..n]);
    let mut acc = [C::ZERO; L];
    let mut ce = e.chunks_exact_mut(L);
    let cx = x.chunks_exact(L);
    let rx = cx.remainder();
    for (e, x) in (&mut ce).zip(cx) {
        for k in 0..L {
            let v = (x[k].widen() - m).exp();
            e[k] = v;
            acc[k] += v;
        }
    }
    let mut s = C::ZERO;
    for (e, &x) in ce.into_remainder().iter_mut().zip(rx) {
        *e = (x.widen() - m).exp();
        s += *e;
    }
    for a in acc {
        s += a;
    }
    s
}

/// Defines `$name` (generic, no return value) three times — for the baseline target, with
/// AVX2+FMA and with AVX-512 — and dispatches on the running CPU (`elementwise::simd`). The
/// body and everything it calls must be `#[inline(always)]` to be compiled with the features.
macro_rules! multiversion {
    (
        $(#[$doc:meta])*
        fn $name:ident<$($g:ident),*>($($p:ident: $t:ty),* $(,)?) where [$($w:tt)*] $body:block
    ) => {
        $(#[$doc])*
        #[allow(clippy::too_many_arguments)]
        pub(super) fn $name<$($g),*>($($p: $t),*) where $($w)* {
            #[inline(always)]
            #[allow(clippy::too_many_arguments)]
            fn body<$($g),*>($($p: $t),*) where $($w)* $body
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            #[allow(clippy::too_many_arguments)]
            fn body_avx2<$($g),*>($($p: $t),*) where $($w)* {
                body($($p),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,fma")]
            #[allow(clippy::too_many_arguments)]
            fn body_avx512<$($g),*>($($p: $t),*) where $($w)* {
                body($($p),*)
            }
            use super::elementwise::{Simd, simd};
            match simd() {
                // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => unsafe { body_avx512($($p),*) },
                // SAFETY: the CPU supports AVX2 (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { body_avx2($($p),*) },
                _ => body($($p),*),
            }
        }
    };
}
pub(super) use multiversion;

/// Runs `f` over `units` units of work of about `per_unit` elements each: on the calling thread
/// when they are few, else split into parts of consecutive units (about [`PART_ELEMS`] elements
/// each) on the kernel team. `f` receives a range of units.
pub(super) fn for_parts(
    units: usize,
    per_unit: usize,
    f: &(dyn Fn(std::ops::Range<usize>) + Sync),
) {
    let parts = (units.saturating_mul(per_unit) / PART_ELEMS)
        .min(units)
        .min(team::MAX_PARTS);
    if parts < 2 {
        f(0..units);
        return;
    }
    team::run(parts, &|p| f(units * p / parts..units * (p + 1) / parts));
}

/// `n` elements of `T` from element `off` of `buf`. Panics if the range lies outside.
pub(super) fn elems<T: Element>(buf: &CpuBuffer, off: usize, n: usize) -> &[T] {
    let size = std::mem::size_of::<T>();
    assert!(
        off.checked_add(n)
            .and_then(|e| e.checked_mul(size))
            .is_some_and(|b| b <= buf.len()),
        "internal: row kernel range outside its buffer"
    );
    // SAFETY: the range lies inside the buffer (asserted); buffers are 16-byte aligned, so
    // every element is aligned; elements are plain old data; the borrow of `buf` keeps the
    // bytes alive and unaliased by writers.
    unsafe { std::slice::from_raw_parts((buf.as_ptr() as *const T).add(off), n) }
}

/// The first `n` elements of `T` of `buf`, mutably. Panics if they lie outside.
pub(super) fn elems_mut<T: Element>(buf: &mut CpuBuffer, n: usize) -> &mut [T] {
    assert!(
        n.checked_mul(std::mem::size_of::<T>())
            .is_some_and(|b| b <= buf.len()),
        "internal: row kernel range outside its buffer"
    );
    // SAFETY: as in `elems`, and `&mut buf` gives exclusive access.
    unsafe { std::slice::from_raw_parts_mut(buf.as_mut_ptr() as *mut T, n) }
}

/// `len` elements of the output from element `at`: one part's rows or one tile row.
///
/// # Safety
/// `at + len` lies inside the buffer behind `out`, which is borrowed exclusively for the whole
/// kernel, and no other part touches these elements while the slice lives.
#[inline(always)]
unsafe fn part<'a, T>(out: SharedOut<T>, at: usize, len: usize) -> &'a mut [T] {
    // SAFETY: the caller's contract.
    unsafe { std::slice::from_raw_parts_mut(out.ptr().add(at), len) }
}

/// See [`NnKernels::rowwise`].
#[allow(clippy::too_many_arguments)]
pub(super) fn rowwise(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    outer: usize,
    n: usize,
    inner: usize,
    dt: DType,
    op: RowwiseOp,
) {
    let total = outer * n * inner;
    if total == 0 {
        return;
    }
    match_dtype!(dt, float, (T, C) => {
        let s = elems::<T>(src, so, total);
        let d = elems_mut::<T>(dst, total);
        match op {
            RowwiseOp::Rsqrt => {
                let out = SharedOut(d.as_mut_ptr());
                for_parts(total, 1, &|r| {
                    // SAFETY: the parts' ranges are disjoint and inside `d`.
                    let d = unsafe { part(out, r.start, r.len()) };
                    rsqrt::<T, C>(d, &s[r]);
                });
            }
            RowwiseOp::Softmax | RowwiseOp::LogSoftmax => {
                forward::<T, C>(d, s, (outer, n, inner), op == RowwiseOp::LogSoftmax)
            }
        }
    })
}

multiversion! {
    /// `1 / sqrt(x)` of each element.
    fn rsqrt<T, C>(d: &mut [T], s: &[T]) where [T: FloatCompute<C = C>, C: Real] {
        for (o, &x) in d.iter_mut().zip(s) {
            *o = T::narrow(C::ONE / x.widen().sqrt());
        }
    }
}

fn forward<T, C>(d: &mut [T], s: &[T], (outer, n, inner): (usize, usize, usize), log: bool)
where
    T: Element + FloatCompute<C = C>,
    C: Real,
{
    let out = SharedOut(d.as_mut_ptr());
    if inner == 1 {
        for_parts(outer, n, &|r| {
            // SAFETY: the parts' row ranges are disjoint and inside `d`.
            let d = unsafe { part(out, r.start * n, r.len() * n) };
            let mut scratch = vec![C::ZERO; n];
            fwd_rows::<T, C>(d, &s[r.start * n..r.end * n], &mut scratch, n, log);
        });
        return;
    }
    let tiles = inner.div_ceil(TILE);
    for_parts(outer * tiles, n * TILE.min(inner), &|r| {
        let mut m = [C::ZERO; TILE];
        let mut a = [C::ZERO; TILE];
        for u in r {
            let (o, j0) = (u / tiles, (u % tiles) * TILE);
            let w = TILE.min(inner - j0);
            let base = o * n * inner + j0;
            let (m, a) = (&mut m[..w], &mut a[..w]);
            fwd_tile_stats::<T, C>(m, a, &s[base..], inner, n, log);
            for k in 0..n {
                // SAFETY: tile rows of distinct units are disjoint and inside `d`.
                let d = unsafe { part(out, base + k * inner, w) };
                fwd_tile_row::<T, C>(d, &s[base + k * inner..][..w], m, a, log);
            }
        }
    });
}

multiversion! {
    /// Softmax (or log_softmax) of the contiguous rows of `n` elements of `s` into `d`.
    fn fwd_rows<T, C>(d: &mut [T], s: &[T], scratch: &mut [C], n: usize, log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        for (d, s) in d.chunks_exact_mut(n).zip(s.chunks_exact(n)) {
            // an infinite max makes every `x - max` NaN or -inf: the row is NaN, as PyTorch's
            let m = lane_max::<T, C>(s);
            let sum = exp_sum::<T, C>(scratch, s, m);
            if log {
                let ls = sum.ln();
                for (o, &x) in d.iter_mut().zip(s) {
                    *o = T::narrow(x.widen() - m - ls);
                }
            } else {
                let inv = C::ONE / sum;
                for (o, &e) in d.iter_mut().zip(scratch.iter()) {
                    *o = T::narrow(e * inv);
                }
            }
        }
    }
}

multiversion! {
    /// Per-column shifts `m` and (log) normalisers `a` (`1 / sum`, or `ln sum` for log) of a
    /// tile of `m.len()` columns whose `n` rows start every `inner` elements of `s`.
    fn fwd_tile_stats<T, C>(m: &mut [C], a: &mut [C], s: &[T], inner: usize, n: usize, log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let w = m.len();
        let rows = |k: usize| &s[k * inner..k * inner + w];
        m.fill(C::NEG_INF);
        for k in 0..n {
            for (m, &x) in m.iter_mut().zip(rows(k)) {
                *m = vmax(*m, x.widen());
            }
        }
        a.fill(C::ZERO);
        for k in 0..n {
            for ((a, &m), &x) in a.iter_mut().zip(m.iter()).zip(rows(k)) {
                *a += (x.widen() - m).exp();
            }
        }
        for a in a.iter_mut() {
            *a = if log { a.ln() } else { C::ONE / *a };
        }
    }
}

multiversion! {
    /// One row of a strided tile's output from its column statistics.
    fn fwd_tile_row<T, C>(d: &mut [T], s: &[T], m: &[C], a: &[C], log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        if log {
            for (((o, &x), &m), &a) in d.iter_mut().zip(s).zip(m).zip(a) {
                *o = T::narrow(x.widen() - m - a);
            }
        } else {
            for (((o, &x), &m), &a) in d.iter_mut().zip(s).zip(m).zip(a) {
                *o = T::narrow((x.widen() - m).exp() * a);
            }
        }
    }
}

/// See [`NnKernels::rowwise_backward`].
pub(super) fn rowwise_backward(
    dst: &mut CpuBuffer,
    (y, yo): (&CpuBuffer, usize),
    (g, go): (&CpuBuffer, usize),
    (outer, n, inner): (usize, usize, usize),
    dt: DType,
    op: RowwiseOp,
) {
    let total = outer * n * inner;
    if total == 0 {
        return;
    }
    let log = match op {
        RowwiseOp::Softmax => false,
        RowwiseOp::LogSoftmax => true,
        RowwiseOp::Rsqrt => unreachable!("internal: rsqrt's backward is composed"),
    };
    match_dtype!(dt, float, (T, C) => {
        let y = elems::<T>(y, yo, total);
        let g = elems::<T>(g, go, total);
        let d = elems_mut::<T>(dst, total);
        backward::<T, C>(d, y, g, (outer, n, inner), log)
    })
}

fn backward<T, C>(
    d: &mut [T],
    y: &[T],
    g: &[T],
    (outer, n, inner): (usize, usize, usize),
    log: bool,
) where
    T: Element + FloatCompute<C = C>,
    C: Real,
{
    let out = SharedOut(d.as_mut_ptr());
    if inner == 1 {
        for_parts(outer, n, &|r| {
            let rg = r.start * n..r.end * n;
            // SAFETY: the parts' row ranges are disjoint and inside `d`.
            let d = unsafe { part(out, rg.start, rg.len()) };
            bwd_rows::<T, C>(d, &y[rg.clone()], &g[rg], n, log);
        });
        return;
    }
    let tiles = inner.div_ceil(TILE);
    for_parts(outer * tiles, n * TILE.min(inner), &|r| {
        let mut a = [C::ZERO; TILE];
        for u in r {
            let (o, j0) = (u / tiles, (u % tiles) * TILE);
            let w = TILE.min(inner - j0);
            let base = o * n * inner + j0;
            let at = |k: usize| base + k * inner..base + k * inner + w;
            let a = &mut a[..w];
            a.fill(C::ZERO);
            for k in 0..n {
                bwd_tile_acc::<T, C>(a, &y[at(k)], &g[at(k)], log);
            }
            for k in 0..n {
                // SAFETY: tile rows of distinct units are disjoint and inside `d`.
                let d = unsafe { part(out, at(k).start, w) };
                bwd_tile_row::<T, C>(d, &y[at(k)], &g[at(k)], a, log);
            }
        }
    });
}

multiversion! {
    /// The backward of the contiguous rows of `n` elements: softmax `y (g - sum(g y))`,
    /// log_softmax `g - exp(y) sum(g)`.
    fn bwd_rows<T, C>(d: &mut [T], y: &[T], g: &[T], n: usize, log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        let rows = d.chunks_exact_mut(n).zip(y.chunks_exact(n)).zip(g.chunks_exact(n));
        for ((d, y), g) in rows {
            if log {
                let sum = lanes(g, g, |g: T, _: T| g.widen());
                for ((o, &y), &g) in d.iter_mut().zip(y).zip(g) {
                    *o = T::narrow(g.widen() - y.widen().exp() * sum);
                }
            } else {
                let dot = lanes(g, y, |g: T, y: T| g.widen() * y.widen());
                for ((o, &y), &g) in d.iter_mut().zip(y).zip(g) {
                    *o = T::narrow(y.widen() * (g.widen() - dot));
                }
            }
        }
    }
}

multiversion! {
    /// Adds one strided tile row's terms to the per-column sums (`g y`, or `g` for log).
    fn bwd_tile_acc<T, C>(a: &mut [C], y: &[T], g: &[T], log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        if log {
            for (a, &g) in a.iter_mut().zip(g) {
                *a += g.widen();
            }
        } else {
            for ((a, &y), &g) in a.iter_mut().zip(y).zip(g) {
                *a += g.widen() * y.widen();
            }
        }
    }
}

multiversion! {
    /// One strided tile row of the backward from the per-column sums.
    fn bwd_tile_row<T, C>(d: &mut [T], y: &[T], g: &[T], a: &[C], log: bool)
    where [T: Element + FloatCompute<C = C>, C: Real]
    {
        if log {
            for (((o, &y), &g), &a) in d.iter_mut().zip(y).zip(g).zip(a) {
                *o = T::narrow(g.widen() - y.widen().exp() * a);
            }
        } else {
            for (((o, &y), &g), &a) in d.iter_mut().zip(y).zip(g).zip(a) {
                *o = T::narrow(y.widen() * (g.widen() - a));
            }
        }
    }
}

/// See [`NnKernels::read_at`].
pub(super) fn read_at<T: Element>(
    buf: &CpuBuffer,
    l: &Layout,
    dt: DType,
    at: &[usize],
) -> Result<Vec<T>> {
    if l.numel() > 0 && l.storage_span() * dt.size() > buf.len() {
        crate::bail!(
            InvalidArgument,
            "read",
            "tensor geometry lies outside its storage"
        );
    }
    let mut out = crate::storage::try_vec(at.len(), "read")?;
    let (sizes, strides) = (l.sizes(), l.strides());
    dispatch!(dt, S => {
        let all = elems::<S>(buf, 0, if l.numel() == 0 { 0 } else { l.storage_span() });
        let numel = l.numel();
        if l.is_contiguous() && numel > 0 {
            // positions are offsets: no division per dim (`nll_loss`'s picks)
            let xs = &all[l.offset()..l.offset() + numel];
            out.extend(at.iter().map(|&p| cast::<S, T>(xs[p])));
            return Ok(out);
        }
        for &p in at {
            assert!(p < numel, "internal: read_at position out of range");
            let (mut rest, mut off) = (p, l.offset());
            for (&sz, &st) in sizes.iter().zip(strides).rev() {
                off += (rest % sz) * st;
                rest /= sz;
            }
            out.push(cast::<S, T>(all[off]));
        }
    });
    Ok(out)
}

impl NnKernels for Cpu {
    fn rowwise(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    ) {
        rowwise(dst, src, so, outer, n, inner, dt, op)
    }

    fn rowwise_backward(
        dst: &mut CpuBuffer,
        y: (&CpuBuffer, usize),
        g: (&CpuBuffer, usize),
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    ) {
        rowwise_backward(dst, y, g, (outer, n, inner), dt, op)
    }

    fn layer_norm(
        out: &mut CpuBuffer,
        stats: &mut CpuBuffer,
        x: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        b: Option<(&CpuBuffer, usize)>,
        rows: usize,
        n: usize,
        eps: f64,
        dt: DType,
    ) {
        layer_norm::forward(out, stats, x, w, b, rows, n, eps, dt)
    }

    fn layer_norm_backward(
        gx: Option<&mut CpuBuffer>,
        gw: Option<&mut CpuBuffer>,
        gb: Option<&mut CpuBuffer>,
        g: (&CpuBuffer, usize),
        x: (&CpuBuffer, usize),
        stats: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        rows: usize,
        n: usize,
        dt: DType,
    ) {
        layer_norm::backward(gx, gw, gb, g, x, stats, w, rows, n, dt)
    }

    fn group_norm(
        out: &mut CpuBuffer,
        stats: &mut CpuBuffer,
        x: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        b: Option<(&CpuBuffer, usize)>,
        dims: (usize, usize, usize, usize),
        eps: f64,
        dt: DType,
    ) {
        group_norm::forward(out, stats, x, w, b, dims, eps, dt)
    }

    fn group_norm_backward(
        gx: Option<&mut CpuBuffer>,
        gw: Option<&mut CpuBuffer>,
        gb: Option<&mut CpuBuffer>,
        g: (&CpuBuffer, usize),
        x: (&CpuBuffer, usize),
        stats: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        dims: (usize, usize, usize, usize),
        dt: DType,
    ) {
        group_norm::backward(gx, gw, gb, g, x, stats, w, dims, dt)
    }

    fn read_at<T: Element>(buf: &CpuBuffer, l: &Layout, dt: DType, at: &[usize]) -> Result<Vec<T>> {
        read_at(buf, l, dt, at)
    }
}
