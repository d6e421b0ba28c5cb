//! The elementwise map kernels of the CPU: flat loops over element ranges (the dense fast paths:
//! a tensor and a same-layout or one-element operand, in place or into a fresh buffer), the
//! strided walk with broadcasting (unary, binary, ternary; the general path, in parallel), the
//! in-place update of a region borrowed exclusively, and the predicate test `any`. The op is an
//! inlined generic closure; the innermost contiguous loops are the multi-versioned kernels of
//! `elementwise` (the strided unary walk too: a strided run goes through a stack block).

use super::Cpu;
use super::elementwise::{
    map1 as vmap1, map1_fallback, map2 as vmap2, map2_fallback, map3 as vmap3, update1, update2,
};
use super::{istrides, scalar};
use crate::DType;
use crate::Scalar;
use crate::backend::ElementwiseKernels;
use crate::backend::ScalarArith;
use crate::backend::{Flat, Source};
use crate::layout::{Layout, PAR_MIN_ELEMS, for_each_run, par_for_each_run, par_ranges};
use crate::storage::CpuBuffer;
use crate::{Element, Result};
use std::any::TypeId;

#[inline(always)]
/// True if elements `[off, off + n)` of size `sz` lie inside `len` bytes.
fn fits(off: usize, n: usize, sz: usize, len: usize) -> bool {
    off.checked_add(n)
        .and_then(|e| e.checked_mul(sz))
        .is_some_and(|e| e <= len)
}

/// A resolved flat input: a range at an address, one value, or the output range itself.
#[derive(Clone, Copy)]
enum In<T> {
    Range(usize),
    Value(T),
    Out,
}

/// Resolves `x` against the output (`n` elements of size `osz` from element `o` of the buffer
/// at `base`, `len` bytes), checking the flat contract (see `Backend::flat_map1`).
#[inline(always)]
fn resolve<T: Element>(
    x: &Flat<'_, CpuBuffer>,
    base: *const u8,
    len: usize,
    o: usize,
    osz: usize,
    n: usize,
) -> In<T> {
    let (p, plen, same) = match x.src {
        Source::Other(b) => (b.as_ptr(), b.len(), false),
        Source::Same => (base, len, true),
    };
    let sz = std::mem::size_of::<T>();
    if x.scalar {
        assert!(
            fits(x.offset, 1, sz, plen),
            "internal: a flat input outside its buffer"
        );
        // SAFETY: the element lies inside the buffer (asserted); it is read here, before the
        // kernel writes anything, and the caller's borrows keep the buffer alive and unshared
        // by writers.
        return In::Value(unsafe { *(p as *const T).add(x.offset) });
    }
    assert!(
        fits(x.offset, n, sz, plen),
        "internal: a flat input outside its buffer"
    );
    if same {
        let (ib, ob) = (x.offset * sz, o * osz);
        if ib == ob {
            assert!(
                TypeId::of::<T>() == TypeId::of::<T>() && sz == osz,
                "internal: an in-place flat kernel changes the element type"
            );
            return In::Out;
        }
        assert!(
            ib + n * sz <= ob || ob + n * osz <= ib,
            "internal: a flat input partially overlaps its output"
        );
    }
    In::Range(p as usize + x.offset * sz)
}

/// Panics unless `T` and `U` are one type (an in-place update writes `f`'s result over its input).
fn assert_same_type<T: 'static, U: 'static>() {
    assert!(
        TypeId::of::<T>() == TypeId::of::<U>(),
        "internal: an in-place flat kernel changes the element type"
    );
}

/// The prologue of the flat kernels: the output run `[o, o + n)` checked against its buffer and
/// each input resolved against it; the run's address comes back as an integer, so the range
/// closures can run on other threads.
#[inline(always)]
fn prepare<T: Element, U: Element, const K: usize>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    xs: [&Flat<'_, CpuBuffer>; K],
) -> (usize, [In<T>; K]) {
    let len = out.len();
    let osz = std::mem::size_of::<U>();
    assert!(
        fits(o, n, osz, len),
        "internal: a flat output outside its buffer"
    );
    let base = out.as_mut_ptr();
    let ins = xs.map(|x| resolve::<T>(x, base, len, o, osz, n));
    (base as usize + o * osz, ins)
}

/// See `Backend::flat_map2`.
#[inline]
pub(super) fn flat_map2<T: Element, U: Element>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    a: Flat<'_, CpuBuffer>,
    b: Flat<'_, CpuBuffer>,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    if n == 0 {
        return;
    }
    let (po, [a, b]) = prepare::<T, U, 2>(out, o, n, [&a, &b]);
    let inplace = matches!(a, In::Out) || matches!(b, In::Out);
    if inplace {
        assert_same_type::<T, U>();
    }
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        let len = hi - lo;
        // SAFETY: [lo, hi) lies inside the output and every range input (asserted by `prepare`);
        // concurrent calls get disjoint ranges; an input that is the output is only reached
        // through `x` (T == U, asserted); other same-buffer inputs are disjoint from the output
        // (asserted); the caller borrows `out` exclusively and the inputs shared.
        unsafe {
            let range = |p: usize| std::slice::from_raw_parts((p as *const T).add(lo), len);
            if inplace {
                let x = std::slice::from_raw_parts_mut((po as *mut T).add(lo), len);
                // `f` returns T here (T == U); reinterpret its result without a conversion
                let g = |u: T, v: T| -> T { std::mem::transmute_copy(&f(u, v)) };
                match (a, b) {
                    (In::Out, In::Out) => update1(x, &|v| g(v, v)),
                    (In::Out, In::Value(bv)) => update1(x, &|v| g(v, bv)),
                    (In::Out, In::Range(pb)) => update2(x, range(pb), &g),
                    (In::Value(av), In::Out) => update1(x, &|v| g(av, v)),
                    (In::Range(pa), In::Out) => update2(x, range(pa), &|v, u| g(u, v)),
                    _ => unreachable!("internal: one input is the output"),
                }
                return;
            }
            let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
            match (a, b) {
                (In::Range(pa), In::Range(pb)) => vmap2(out, range(pa), range(pb), f),
                (In::Range(pa), In::Value(bv)) => vmap1(out, range(pa), &|u| f(u, bv)),
                (In::Value(av), In::Range(pb)) => vmap1(out, range(pb), &|v| f(av, v)),
                (In::Value(av), In::Value(bv)) => out.fill(f(av, bv)),
                _ => unreachable!("internal: no input is the output"),
            }
        }
    });
}

/// See `Backend::flat_map2_fallback`: the chunked kernels of `elementwise`
/// ([`map2_fallback`]) for fresh outputs; an in-place update takes [`flat_map2`] with the
/// combined closure (the fast path's callers write fresh outputs).
#[inline]
pub(super) fn flat_map2_fallback<T: Element, U: Element>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    a: Flat<'_, CpuBuffer>,
    b: Flat<'_, CpuBuffer>,
    fast: &(impl Fn(T, T) -> (U, bool) + Sync),
    slow: &(impl Fn(T, T) -> U + Sync),
) {
    if n == 0 {
        return;
    }
    let (po, [ra, rb]) = prepare::<T, U, 2>(out, o, n, [&a, &b]);
    if matches!(ra, In::Out) || matches!(rb, In::Out) {
        let f = |x: T, y: T| {
            let (v, s) = fast(x, y);
            if s { slow(x, y) } else { v }
        };
        return flat_map2(out, o, n, a, b, &f);
    }
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        let len = hi - lo;
        // SAFETY: [lo, hi) lies inside the output and every range input (asserted by
        // `prepare`); concurrent calls get disjoint ranges; no input is the output
        // (checked above) and same-buffer inputs are disjoint from it (asserted); the caller
        // borrows `out` exclusively and the inputs shared.
        unsafe {
            let range = |p: usize| std::slice::from_raw_parts((p as *const T).add(lo), len);
            let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
            match (ra, rb) {
                (In::Range(pa), In::Range(pb)) => {
                    map2_fallback(out, range(pa), range(pb), fast, slow)
                }
                (In::Range(pa), In::Value(bv)) => {
                    map1_fallback(out, range(pa), &|u| fast(u, bv), &|u| slow(u, bv))
                }
                (In::Value(av), In::Range(pb)) => {
                    map1_fallback(out, range(pb), &|v| fast(av, v), &|v| slow(av, v))
                }
                (In::Value(av), In::Value(bv)) => {
                    let (v, s) = fast(av, bv);
                    out.fill(if s { slow(av, bv) } else { v })
                }
                _ => unreachable!("internal: no input is the output"),
            }
        }
    });
}

/// See `Backend::flat_map1`.
#[inline]
pub(super) fn flat_map1<T: Element, U: Element>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    a: Flat<'_, CpuBuffer>,
    f: &(impl Fn(T) -> U + Sync),
) {
    flat_map1_with(out, o, n, a, f, &|out, x| vmap1(out, x, f));
}

/// See `ElementwiseKernels::flat_map1_fallback`: [`flat_map1`] with `full`, except that a range
/// input goes through the chunk kernel `elementwise::map1_fallback` (`fast` per chunk, `full`
/// again over a chunk only where `fast` flagged an element; op-speed sweep `sin`, `cos`, `tan`).
#[inline]
pub(super) fn flat_map1_fallback<T: Element, U: Element>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    a: Flat<'_, CpuBuffer>,
    fast: &(impl Fn(T) -> (U, bool) + Sync),
    full: &(impl Fn(T) -> U + Sync),
) {
    flat_map1_with(out, o, n, a, full, &|out, x| {
        map1_fallback(out, x, fast, full)
    });
}

/// [`flat_map1`]'s body: `f` for a scalar or in-place input, `range(out, x)` for a range input.
#[inline(always)]
fn flat_map1_with<T: Element, U: Element>(
    out: &mut CpuBuffer,
    o: usize,
    n: usize,
    a: Flat<'_, CpuBuffer>,
    f: &(impl Fn(T) -> U + Sync),
    range: &(impl Fn(&mut [U], &[T]) + Sync),
) {
    if n == 0 {
        return;
    }
    let (po, [a]) = prepare::<T, U, 1>(out, o, n, [&a]);
    if matches!(a, In::Out) {
        assert_same_type::<T, U>();
    }
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        let len = hi - lo;
        // SAFETY: as in `flat_map2`.
        unsafe {
            match a {
                In::Out => {
                    let x = std::slice::from_raw_parts_mut((po as *mut T).add(lo), len);
                    update1(x, &|v| -> T { std::mem::transmute_copy(&f(v)) });
                }
                In::Range(pa) => {
                    let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
                    range(
                        out,
                        std::slice::from_raw_parts((pa as *const T).add(lo), len),
                    );
                }
                In::Value(av) => {
                    let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
                    out.fill(f(av));
                }
            }
        }
    });
}

/// See `Backend::update_owned`: a flat loop when `region` is dense, else a walk of its runs.
#[inline]
pub(super) fn update_owned<T: Element>(
    buf: &mut CpuBuffer,
    region: &Layout,
    dense: bool,
    f: &(impl Fn(T) -> T + Sync),
) {
    if dense {
        let o = region.offset();
        let n = region.numel();
        let a = Flat {
            src: Source::Same,
            offset: o,
            scalar: false,
        };
        flat_map1::<T, T>(buf, o, n, a, f);
        return;
    }
    assert!(
        region.storage_span() * std::mem::size_of::<T>() <= buf.len(),
        "internal: a region outside its storage"
    );
    let base = buf.as_mut_ptr() as *mut T;
    let st = istrides(region);
    for_each_run(
        region.sizes(),
        [&st],
        [region.offset() as isize],
        |[o], len, [st]| {
            for k in 0..len as isize {
                // SAFETY: every offset the walk yields is an element of `region`, inside the buffer
                // (asserted above) and named once (the caller's contract); `buf` is borrowed
                // exclusively.
                unsafe {
                    let p = base.offset(o + k * st);
                    *p = f(*p);
                }
            }
        },
    );
}

/// The base pointer of an input of a strided map (the output's for [`Source::Same`]).
fn src_ptr(s: &Source<'_, CpuBuffer>, out: *mut u8) -> usize {
    match s {
        Source::Other(b) => b.as_ptr() as usize,
        Source::Same => out as usize,
    }
}

/// See `Backend::map1`.
///
/// # Safety
/// The contract of `Backend::map1`.
pub(super) unsafe fn map1<T: Element, U: Element>(
    out: &mut CpuBuffer,
    ol: &Layout,
    a: Source<'_, CpuBuffer>,
    al: &Layout,
    f: &(impl Fn(T) -> U + Sync),
) {
    let po = out.as_mut_ptr() as usize;
    let pa = src_ptr(&a, po as *mut u8);
    let (so, sa) = (istrides(ol), istrides(al));
    par_for_each_run(
        ol.sizes(),
        [&so, &sa],
        [ol.offset() as isize, al.offset() as isize],
        PAR_MIN_ELEMS,
        |[oo, oa], len, [so, sa]| {
            // SAFETY: both geometries lie inside their buffers, borrowed by the caller until
            // every range is done; an input in the output's buffer is identical to the output
            // (each element is read before it is written, by the same call) or disjoint from it
            // (the slices below are formed only for disjoint runs); concurrent calls cover
            // disjoint ranges of the output.
            unsafe {
                let (po, pa) = ((po as *mut U).offset(oo), (pa as *const T).offset(oa));
                let (ob, ab) = (po as usize, pa as usize);
                let disjoint = ab + len * std::mem::size_of::<T>() <= ob
                    || ob + len * std::mem::size_of::<U>() <= ab;
                if so == 1 && sa == 1 && disjoint {
                    let out = std::slice::from_raw_parts_mut(po, len);
                    vmap1(out, std::slice::from_raw_parts(pa, len), f);
                } else if so == 1 && sa == 1 {
                    for i in 0..len {
                        *po.add(i) = f(*pa.add(i));
                    }
                } else {
                    // through a block on the stack, so `f` runs in the vectorised kernel
                    // (the transcendental closures are slow in a baseline-compiled loop)
                    const B: usize = 64;
                    let (mut src, mut dst) = ([T::default(); B], [U::default(); B]);
                    for lo in (0..len).step_by(B) {
                        let k = B.min(len - lo);
                        for (j, v) in src[..k].iter_mut().enumerate() {
                            *v = *pa.offset((lo + j) as isize * sa);
                        }
                        vmap1(&mut dst[..k], &src[..k], f);
                        for (j, &v) in dst[..k].iter().enumerate() {
                            *po.offset((lo + j) as isize * so) = v;
                        }
                    }
                }
            }
        },
    );
}

/// See `Backend::map2`.
///
/// # Safety
/// The contract of `Backend::map2`.
pub(super) unsafe fn map2<T: Element, U: Element>(
    out: &mut CpuBuffer,
    ol: &Layout,
    a: Source<'_, CpuBuffer>,
    al: &Layout,
    b: Source<'_, CpuBuffer>,
    bl: &Layout,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    let po = out.as_mut_ptr() as usize;
    let (pa, pb) = (src_ptr(&a, po as *mut u8), src_ptr(&b, po as *mut u8));
    let (so, sa, sb) = (istrides(ol), istrides(al), istrides(bl));
    par_for_each_run(
        ol.sizes(),
        [&so, &sa, &sb],
        [
            ol.offset() as isize,
            al.offset() as isize,
            bl.offset() as isize,
        ],
        PAR_MIN_ELEMS,
        |[oo, oa, ob], len, [so, sa, sb]| {
            // SAFETY: as in `map1`, for both inputs; the slices are built only where the
            // output run shares no byte with an input run.
            unsafe {
                let po = (po as *mut U).offset(oo);
                let pa = (pa as *const T).offset(oa);
                let pb = (pb as *const T).offset(ob);
                let (o0, o1) = (po as usize, po as usize + len * std::mem::size_of::<U>());
                let apart = |p: *const T, n: usize| {
                    p as usize + n * std::mem::size_of::<T>() <= o0 || o1 <= p as usize
                };
                let out = || std::slice::from_raw_parts_mut(po, len);
                let run = |p: *const T| std::slice::from_raw_parts(p, len);
                if so == 1 && sa == 1 && sb == 1 && apart(pa, len) && apart(pb, len) {
                    vmap2(out(), run(pa), run(pb), f);
                } else if so == 1 && sa == 1 && sb == 0 && apart(pa, len) && apart(pb, 1) {
                    // a row against one broadcast value (`outer`'s rows, `x * w[:, None]`)
                    // in the vectorised kernel: per-op sweep row `outer`, whose baseline loop
                    // stored 16 bytes at a time
                    let bv = *pb;
                    vmap1(out(), run(pa), &move |x| f(x, bv));
                } else if so == 1 && sa == 0 && sb == 1 && apart(pa, 1) && apart(pb, len) {
                    let av = *pa;
                    vmap1(out(), run(pb), &move |y| f(av, y));
                } else if so == 1 && sa == 1 && sb == 1 {
                    for i in 0..len {
                        *po.add(i) = f(*pa.add(i), *pb.add(i));
                    }
                } else if so == 1 && sa == 1 && sb == 0 {
                    let bv = *pb;
                    for i in 0..len {
                        *po.add(i) = f(*pa.add(i), bv);
                    }
                } else if so == 1 && sa == 0 && sb == 1 {
                    let av = *pa;
                    for i in 0..len {
                        *po.add(i) = f(av, *pb.add(i));
                    }
                } else {
                    for i in 0..len as isize {
                        *po.offset(i * so) = f(*pa.offset(i * sa), *pb.offset(i * sb));
                    }
                }
            }
        },
    );
}

/// See `Backend::map3`: ranges of the output in parallel; a run where every operand is
/// contiguous goes through the vectorised kernel (per-op sweep `addcmul`, `addcdiv`, `lerp`
/// with a tensor weight, `where`).
///
/// # Safety
/// The contract of `Backend::map3`.
#[allow(clippy::too_many_arguments)]
pub(super) unsafe fn map3<C: Element, T: Element, U: Element>(
    out: &mut CpuBuffer,
    ol: &Layout,
    c: Source<'_, CpuBuffer>,
    cl: &Layout,
    a: Source<'_, CpuBuffer>,
    al: &Layout,
    b: Source<'_, CpuBuffer>,
    bl: &Layout,
    f: &(impl Fn(C, T, T) -> U + Sync),
) {
    let po = out.as_mut_ptr() as usize;
    let (pc, pa, pb) = (
        src_ptr(&c, po as *mut u8),
        src_ptr(&a, po as *mut u8),
        src_ptr(&b, po as *mut u8),
    );
    let (so, sc, sa, sb) = (istrides(ol), istrides(cl), istrides(al), istrides(bl));
    par_for_each_run(
        ol.sizes(),
        [&so, &sc, &sa, &sb],
        [
            ol.offset() as isize,
            cl.offset() as isize,
            al.offset() as isize,
            bl.offset() as isize,
        ],
        PAR_MIN_ELEMS,
        |[oo, oc, oa, ob], len, [so, sc, sa, sb]| {
            // SAFETY: as in `map1`, for every input.
            unsafe {
                let po = (po as *mut U).offset(oo);
                let pc = (pc as *const C).offset(oc);
                let pa = (pa as *const T).offset(oa);
                let pb = (pb as *const T).offset(ob);
                let (o0, o1) = (po as usize, po as usize + len * std::mem::size_of::<U>());
                let apart = |p: usize, sz: usize| p + len * sz <= o0 || o1 <= p;
                let disjoint = apart(pc as usize, std::mem::size_of::<C>())
                    && apart(pa as usize, std::mem::size_of::<T>())
                    && apart(pb as usize, std::mem::size_of::<T>());
                if so == 1 && sc == 1 && sa == 1 && sb == 1 && disjoint {
                    let out = std::slice::from_raw_parts_mut(po, len);
                    let (c, a, b) = (
                        std::slice::from_raw_parts(pc, len),
                        std::slice::from_raw_parts(pa, len),
                        std::slice::from_raw_parts(pb, len),
                    );
                    vmap3(out, c, a, b, f);
                } else if so == 1 && sc == 1 && sa == 1 && sb == 1 {
                    for i in 0..len {
                        *po.add(i) = f(*pc.add(i), *pa.add(i), *pb.add(i));
                    }
                } else if so == 1 && sc == 1 && sa == 0 && sb == 1 {
                    // one value broadcast (`masked_fill(mask, v)`, `where(c, v, y)`)
                    let av = *pa;
                    for i in 0..len {
                        *po.add(i) = f(*pc.add(i), av, *pb.add(i));
                    }
                } else if so == 1 && sc == 1 && sa == 1 && sb == 0 {
                    let bv = *pb;
                    for i in 0..len {
                        *po.add(i) = f(*pc.add(i), *pa.add(i), bv);
                    }
                } else {
                    for i in 0..len as isize {
                        *po.offset(i * so) =
                            f(*pc.offset(i * sc), *pa.offset(i * sa), *pb.offset(i * sb));
                    }
                }
            }
        },
    );
}

/// See `Backend::any`.
pub(super) fn any<T: Element>(buf: &CpuBuffer, l: &Layout, f: &impl Fn(T) -> bool) -> Result<bool> {
    if l.numel() == 0 {
        return Ok(false);
    }
    if l.storage_span() * std::mem::size_of::<T>() > buf.len() {
        crate::bail!(
            InvalidArgument,
            "any",
            "tensor geometry lies outside its storage"
        );
    }
    let p = buf.as_ptr() as *const T;
    let st = istrides(l);
    let mut hit = false;
    for_each_run(l.sizes(), [&st], [l.offset() as isize], |[o], len, [s]| {
        if hit {
            return;
        }
        // SAFETY: every offset of the walk lies below the storage span, inside the buffer
        // (checked above); the caller holds the buffer's read lock.
        hit = (0..len as isize).any(|k| f(unsafe { *p.offset(o + k * s) }));
    });
    Ok(hit)
}

impl ElementwiseKernels for Cpu {
    fn scalar_update(
        buf: &mut CpuBuffer,
        region: &Layout,
        dt: DType,
        op: ScalarArith,
        s: Scalar,
    ) -> bool {
        scalar::update_region(buf, region, dt, op, s)
    }

    #[inline]
    fn flat_map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        f: &F,
    ) {
        flat_map1(out, o, n, a, f)
    }

    #[inline]
    fn flat_map1_fallback<T, U, F, G>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        fast: &F,
        full: &G,
    ) where
        T: Element,
        U: Element,
        F: Fn(T) -> (U, bool) + Sync,
        G: Fn(T) -> U + Sync,
    {
        flat_map1_fallback(out, o, n, a, fast, full)
    }

    #[inline]
    fn flat_map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        b: Flat<'_, CpuBuffer>,
        f: &F,
    ) {
        flat_map2(out, o, n, a, b, f)
    }

    #[inline]
    fn flat_map2_fallback<T, U, F, G>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        b: Flat<'_, CpuBuffer>,
        fast: &F,
        slow: &G,
    ) where
        T: Element,
        U: Element,
        F: Fn(T, T) -> (U, bool) + Sync,
        G: Fn(T, T) -> U + Sync,
    {
        flat_map2_fallback(out, o, n, a, b, fast, slow)
    }

    #[inline]
    fn update_owned<T: Element, F: Fn(T) -> T + Sync>(
        buf: &mut CpuBuffer,
        region: &Layout,
        dense: bool,
        f: &F,
    ) {
        update_owned(buf, region, dense, f)
    }

    unsafe fn map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map1(out, ol, a, al, f) }
    }

    unsafe fn map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        b: Source<'_, CpuBuffer>,
        bl: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map2(out, ol, a, al, b, bl, f) }
    }

    unsafe fn map3<C: Element, T: Element, U: Element, F: Fn(C, T, T) -> U + Sync>(
        out: &mut CpuBuffer,
        ol: &Layout,
        c: Source<'_, CpuBuffer>,
        cl: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        b: Source<'_, CpuBuffer>,
        bl: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map3(out, ol, c, cl, a, al, b, bl, f) }
    }

    fn any<T: Element, F: Fn(T) -> bool>(buf: &CpuBuffer, l: &Layout, f: &F) -> Result<bool> {
        any(buf, l, f)
    }
}
