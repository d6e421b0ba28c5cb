//! Front door of the elementwise map family: takes the locks of the output and of every distinct
//! input storage (the output's write lock, the inputs' read locks, in ascending storage id
//! order), resolves each input to the output's own buffer or another one, and calls the device's
//! flat or strided map kernel. Callers pass storages, offsets and tensor geometries.

use super::{assert_inside, broadcast_to};
use crate::backend::{Flat, Source};
use crate::layout::Layout;
use crate::storage::{DeviceBuffer, Storage};
use crate::tensor::TensorData;
use crate::{Element, Result};
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};
use smallvec::SmallVec;

/// One input of a flat kernel: the elements of `storage` from `offset` on, or with `scalar` the
/// one element at `offset`, broadcast.
#[derive(Clone, Copy)]
pub(crate) struct FlatArg<'a> {
    pub(crate) storage: &'a Storage,
    pub(crate) offset: usize,
    pub(crate) scalar: bool,
}

/// The read guards of distinct storages, with their ids.
pub(super) type Reads<'a> = SmallVec<[(u64, RwLockReadGuard<'a, DeviceBuffer>); 3]>;

/// Read locks of the distinct storages of `inputs` other than `skip`, in ascending id order;
/// with `out`, that storage's write lock taken at its place in the same order.
pub(super) fn lock<'a>(
    out: Option<&'a Storage>,
    inputs: &[&'a Storage],
) -> (Option<RwLockWriteGuard<'a, DeviceBuffer>>, Reads<'a>) {
    let out_id = out.map(|s| s.id());
    let mut ids: SmallVec<[&Storage; 4]> = inputs
        .iter()
        .copied()
        .filter(|s| Some(s.id()) != out_id)
        .collect();
    ids.sort_by_key(|s| s.id());
    ids.dedup_by_key(|s| s.id());
    let mut reads = Reads::new();
    let mut w = None;
    for s in ids {
        if let Some(o) = out
            && w.is_none()
            && o.id() < s.id()
        {
            w = Some(o.write_device());
        }
        reads.push((s.id(), s.read_device()));
    }
    if w.is_none() {
        w = out.map(|o| o.write_device());
    }
    (w, reads)
}

/// The locked buffer of `s` among `reads`.
pub(super) fn find<'r>(reads: &'r Reads<'_>, s: &Storage) -> &'r DeviceBuffer {
    &reads
        .iter()
        .find(|(id, _)| *id == s.id())
        .expect("internal: input storage was not locked")
        .1
}

/// The run every fresh-output map shares: the inputs' read locks, `$n` elements of `$U` on the
/// first input's device, and `$body` with the backend `$B`, the output buffer `$d` and the
/// inputs' buffers bound; the fresh storage is the result.
macro_rules! fresh {
    ($n:expr, $U:ty, [$a:expr $(, $b:expr)?], |$B:ident, $d:ident, $ba:ident $(, $bb:ident)?| $body:expr) => {{
        let (_, reads) = lock(None, &[$a.storage $(, $b.storage)?]);
        let ra = find(&reads, $a.storage);
        let mut out = on_device!(ra, |B, _b| B::storage_for_output(
            $n * std::mem::size_of::<$U>()
        ))?;
        let w = out
            .get_mut_device()
            .expect("internal: a fresh storage is shared");
        on_device!(w, ra, |$B, $d, $ba| {
            $(let $bb = $B::buffer(find(&reads, $b.storage));)?
            $body
        });
        Ok(out)
    }};
}

/// Input `x` read from `buf`, its elements from `skip` on (a broadcast scalar stays where it is).
fn from_skip<'b, B>(x: &FlatArg<'_>, buf: &'b B, skip: usize) -> Flat<'b, B> {
    Flat {
        src: Source::Other(buf),
        offset: if x.scalar { x.offset } else { x.offset + skip },
        scalar: x.scalar,
    }
}

/// `f(a[i])` for `i < n` into a fresh storage of `n` elements of `U` (on `a`'s device).
#[inline]
pub(crate) fn flat_fresh1<T: Element, U: Element>(
    n: usize,
    a: FlatArg<'_>,
    f: &(impl Fn(T) -> U + Sync),
) -> Result<Storage> {
    fresh!(n, U, [a], |B, d, ba| {
        B::flat_map1::<T, U, _>(d, 0, n, from_skip(&a, ba, 0), f)
    })
}

/// [`flat_fresh1`] of the element rule `full`, with its cheap form `fast` (see
/// [`ElementwiseKernels::flat_map1_fallback`](crate::backend::ElementwiseKernels::flat_map1_fallback)).
#[inline]
pub(crate) fn flat_fresh1_fallback<T: Element, U: Element>(
    n: usize,
    a: FlatArg<'_>,
    fast: &(impl Fn(T) -> (U, bool) + Sync),
    full: &(impl Fn(T) -> U + Sync),
) -> Result<Storage> {
    fresh!(n, U, [a], |B, d, ba| {
        B::flat_map1_fallback::<T, U, _, _>(d, 0, n, from_skip(&a, ba, 0), fast, full)
    })
}

/// `f(a[i], b[i])` for `i < n` into a fresh storage of `n` elements of `U` (on `a`'s device),
/// except that the first `m <= n` elements are `head(a[i], b[i])` (`m = 0` for plain maps): the
/// vector-width prefix of an op whose PyTorch kernel computes it differently from the scalar
/// tail (SLEEF's `fmod`).
#[inline]
pub(crate) fn flat_fresh2_split<T: Element, U: Element>(
    n: usize,
    m: usize,
    a: FlatArg<'_>,
    b: FlatArg<'_>,
    head: &(impl Fn(T, T) -> U + Sync),
    f: &(impl Fn(T, T) -> U + Sync),
) -> Result<Storage> {
    debug_assert!(m <= n, "internal: prefix longer than the run");
    fresh!(n, U, [a, b], |B, d, ba, bb| {
        if m > 0 {
            B::flat_map2::<T, U, _>(d, 0, m, from_skip(&a, ba, 0), from_skip(&b, bb, 0), head);
        }
        B::flat_map2::<T, U, _>(d, m, n - m, from_skip(&a, ba, m), from_skip(&b, bb, m), f)
    })
}

/// [`flat_fresh2_split`] where `head` and `f` are the slow functions of a fast path: element
/// `i` is `fast(a[i], b[i])`'s value unless its flag asks for the slow function (`head` before
/// `m`, `f` from it on); see
/// [`ElementwiseKernels::flat_map2_fallback`](crate::backend::ElementwiseKernels::flat_map2_fallback).
#[inline]
pub(crate) fn flat_fresh2_fallback<T: Element, U: Element>(
    n: usize,
    m: usize,
    a: FlatArg<'_>,
    b: FlatArg<'_>,
    fast: &(impl Fn(T, T) -> (U, bool) + Sync),
    head: &(impl Fn(T, T) -> U + Sync),
    f: &(impl Fn(T, T) -> U + Sync),
) -> Result<Storage> {
    debug_assert!(m <= n, "internal: prefix longer than the run");
    fresh!(n, U, [a, b], |B, d, ba, bb| {
        let (a0, b0) = (from_skip(&a, ba, 0), from_skip(&b, bb, 0));
        if m > 0 {
            B::flat_map2_fallback::<T, U, _, _>(d, 0, m, a0, b0, fast, head);
        }
        let (am, bm) = (from_skip(&a, ba, m), from_skip(&b, bb, m));
        B::flat_map2_fallback::<T, U, _, _>(d, m, n - m, am, bm, fast, f)
    })
}

/// `out[o + i] = f(a[i])` for `i < n` in `out`'s storage: see
/// [`ElementwiseKernels::flat_map1`](crate::backend::ElementwiseKernels::flat_map1) (an input in
/// `out`'s storage starts at `o` or is disjoint from the output).
#[inline]
pub(crate) fn flat_into1<T: Element, U: Element>(
    out: &Storage,
    o: usize,
    n: usize,
    a: FlatArg<'_>,
    f: &(impl Fn(T) -> U + Sync),
) {
    if a.storage.same(out) {
        // (the in-place form: one lock)
        let mut w = out.write_device();
        on_device!(&mut *w, |B, d| {
            let fa = Flat {
                src: Source::Same,
                offset: a.offset,
                scalar: a.scalar,
            };
            B::flat_map1::<T, U, _>(d, o, n, fa, f)
        });
        return;
    }
    let (w, reads) = lock(Some(out), &[a.storage]);
    let mut w = w.expect("internal: output not locked");
    on_device!(&mut *w, |B, d| {
        let fa = Flat {
            src: if a.storage.same(out) {
                Source::Same
            } else {
                Source::Other(B::buffer(find(&reads, a.storage)))
            },
            offset: a.offset,
            scalar: a.scalar,
        };
        B::flat_map1::<T, U, _>(d, o, n, fa, f)
    })
}

/// `out[o + i] = f(a[i], b[i])` for `i < n` in `out`'s storage: see
/// [`ElementwiseKernels::flat_map2`](crate::backend::ElementwiseKernels::flat_map2).
#[inline]
pub(crate) fn flat_into2<T: Element, U: Element>(
    out: &Storage,
    o: usize,
    n: usize,
    a: FlatArg<'_>,
    b: FlatArg<'_>,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    let (w, reads) = lock(Some(out), &[a.storage, b.storage]);
    let mut w = w.expect("internal: output not locked");
    on_device!(&mut *w, |B, d| {
        let flat = |x: FlatArg<'_>| Flat {
            src: if x.storage.same(out) {
                Source::Same
            } else {
                Source::Other(B::buffer(find(&reads, x.storage)))
            },
            offset: x.offset,
            scalar: x.scalar,
        };
        B::flat_map2::<T, U, _>(d, o, n, flat(a), flat(b), f)
    })
}

/// `x = f(x)` over `region` of a storage held by nobody else (borrowed without its lock): see
/// [`ElementwiseKernels::update_owned`](crate::backend::ElementwiseKernels::update_owned) (`dense`:
/// the caller found `region` non-overlapping and dense). False (nothing done) when the storage is
/// shared.
pub(crate) fn update_owned<T: Element>(
    storage: &mut Storage,
    region: &Layout,
    dense: bool,
    f: &(impl Fn(T) -> T + Sync),
) -> bool {
    let Some(buf) = storage.get_mut_device() else {
        return false;
    };
    on_device!(buf, |B, b| B::update_owned::<T, _>(b, region, dense, f));
    true
}

/// `src`'s layout read with `sizes` (itself when the sizes agree).
fn bcast<'l>(l: &'l Layout, sizes: &[usize], tmp: &'l mut Option<Layout>) -> &'l Layout {
    if l.sizes() == sizes {
        l
    } else {
        tmp.insert(broadcast_to(l, sizes))
    }
}

/// `out = f(a)` element by element over `out`'s geometry; `a`'s sizes equal or broadcast to
/// `out`'s. Both are tensor geometries; `out` has no internal overlap and `a` is `out` itself or
/// does not overlap it (the callers' checks). Large maps run on the worker team.
pub(crate) fn map1<T: Element, U: Element>(
    out: &TensorData,
    a: &TensorData,
    f: &(impl Fn(T) -> U + Sync),
) {
    let ol = &out.layout;
    if ol.numel() == 0 {
        return;
    }
    let mut ta = None;
    let al = bcast(&a.layout, ol.sizes(), &mut ta);
    let (w, reads) = lock(Some(&out.storage), &[&a.storage]);
    let mut w = w.expect("internal: output not locked");
    let src = |s: &Storage| {
        if s.same(&out.storage) {
            None
        } else {
            Some(find(&reads, s))
        }
    };
    let ra = src(&a.storage);
    let len = |r: Option<&DeviceBuffer>| r.map_or(w.len(), |r| r.len());
    assert_inside(w.len(), ol, size_of::<U>());
    assert_inside(len(ra), al, size_of::<T>());
    on_device!(&mut *w, |B, d| {
        let sa = ra.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        // SAFETY: tensor geometries lie inside their storages (locked above, checked); `out` has no
        // internal overlap and an input in its storage is identical or disjoint (the callers'
        // overlap checks).
        unsafe { B::map1::<T, U, _>(d, ol, sa, al, f) }
    })
}

/// `out = f(a, b)` element by element over `out`'s geometry: [`map1`] with two inputs.
pub(crate) fn map2<T: Element, U: Element>(
    out: &TensorData,
    a: &TensorData,
    b: &TensorData,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    let ol = &out.layout;
    if ol.numel() == 0 {
        return;
    }
    let (mut ta, mut tb) = (None, None);
    let al = bcast(&a.layout, ol.sizes(), &mut ta);
    let bl = bcast(&b.layout, ol.sizes(), &mut tb);
    let (w, reads) = lock(Some(&out.storage), &[&a.storage, &b.storage]);
    let mut w = w.expect("internal: output not locked");
    let src = |s: &Storage| {
        if s.same(&out.storage) {
            None
        } else {
            Some(find(&reads, s))
        }
    };
    let (ra, rb) = (src(&a.storage), src(&b.storage));
    let len = |r: Option<&DeviceBuffer>| r.map_or(w.len(), |r| r.len());
    assert_inside(w.len(), ol, size_of::<U>());
    assert_inside(len(ra), al, size_of::<T>());
    assert_inside(len(rb), bl, size_of::<T>());
    on_device!(&mut *w, |B, d| {
        let sa = ra.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        let sb = rb.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        // SAFETY: as in `map1`, for both inputs.
        unsafe { B::map2::<T, U, _>(d, ol, sa, al, sb, bl, f) }
    })
}

/// `out = f(c, a, b)` element by element over `out`'s geometry: [`map1`] with three inputs.
pub(crate) fn map3<C: Element, T: Element, U: Element>(
    out: &TensorData,
    c: &TensorData,
    a: &TensorData,
    b: &TensorData,
    f: &(impl Fn(C, T, T) -> U + Sync),
) {
    let ol = &out.layout;
    if ol.numel() == 0 {
        return;
    }
    let (mut tc, mut ta, mut tb) = (None, None, None);
    let cl = bcast(&c.layout, ol.sizes(), &mut tc);
    let al = bcast(&a.layout, ol.sizes(), &mut ta);
    let bl = bcast(&b.layout, ol.sizes(), &mut tb);
    let (w, reads) = lock(Some(&out.storage), &[&c.storage, &a.storage, &b.storage]);
    let mut w = w.expect("internal: output not locked");
    let src = |s: &Storage| {
        if s.same(&out.storage) {
            None
        } else {
            Some(find(&reads, s))
        }
    };
    let (rc, ra, rb) = (src(&c.storage), src(&a.storage), src(&b.storage));
    let len = |r: Option<&DeviceBuffer>| r.map_or(w.len(), |r| r.len());
    assert_inside(w.len(), ol, size_of::<U>());
    assert_inside(len(rc), cl, size_of::<C>());
    assert_inside(len(ra), al, size_of::<T>());
    assert_inside(len(rb), bl, size_of::<T>());
    on_device!(&mut *w, |B, d| {
        let sc = rc.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        let sa = ra.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        let sb = rb.map_or(Source::Same, |r| Source::Other(B::buffer(r)));
        // SAFETY: as in `map1`, for every input.
        unsafe { B::map3::<C, T, U, _>(d, ol, sc, cl, sa, al, sb, bl, f) }
    })
}

/// Whether `f` holds for some element of `t` (elements of type `T`), read in place. Errors if
/// the geometry lies outside the storage (one shrunk by `set_`/`resize_`).
pub(crate) fn any<T: Element>(t: &TensorData, f: &impl Fn(T) -> bool) -> Result<bool> {
    let r = t.storage.read_device();
    on_device!(&*r, |B, b| B::any::<T, _>(b, &t.layout, f))
}
