//! Fast paths of the elementwise drivers for operands that are dense in one shared memory order —
//! the common case: contiguous tensors of one shape, or a tensor and a one-element operand. Such
//! operands are flat element ranges, so the kernel is one indexed loop (vectorised by the
//! compiler, split over the rayon pool when large) with no broadcasting, stride coalescing or
//! per-call bookkeeping allocations — which is most of the cost of an op on a small tensor.
//!
//! Every function returns `None` when its preconditions do not hold; callers then take the
//! general strided path, which produces the same values and the same output strides.

use super::util::broadcast_strides;
use crate::layout::{Dims, Layout, PAR_MIN_ELEMS, dense_strides_like, par_ranges};
use crate::storage::{CpuBuffer, Storage, lock_for_write};
use crate::tensor::TensorData;
use crate::{Element, Result, Tensor};

/// True if `l` has exactly the row-major contiguous strides of its sizes (size-1 dims included)
/// and at least one element: then a fresh elementwise output over it gets the same strides.
fn canonical(l: &Layout) -> bool {
    let mut acc = 1usize;
    for (&s, &st) in l.sizes().iter().zip(l.strides()).rev() {
        if st != acc {
            return false;
        }
        acc = acc.saturating_mul(s.max(1));
    }
    l.numel() > 0
}

/// The strides of a fresh elementwise output over the dense layout `like` whose inputs have
/// (broadcast) strides `operands` — the general path's choice, so the fast path produces the same
/// output geometry — if elements at the same memory rank of `like` and of that output have the
/// same index (the strides agree on every dim of size > 1); `None` otherwise.
fn output_strides(like: &Layout, operands: &[&[isize]]) -> Option<Dims> {
    if canonical(like) {
        return Some(Dims::from_slice(like.strides()));
    }
    if like.numel() == 0 || !like.is_non_overlapping_and_dense() {
        return None;
    }
    let st = dense_strides_like(like.sizes(), operands);
    let same = like
        .sizes()
        .iter()
        .zip(like.strides().iter().zip(&st))
        .all(|(&n, (a, b))| n < 2 || a == b);
    same.then(|| Dims::from_slice(&st))
}

/// One input of a flat kernel: a range starting at `offset` of `storage`, or a single element
/// read once (`scalar`).
struct Input {
    storage: Storage,
    offset: usize,
    scalar: bool,
}

/// How an operand with data `x` feeds a flat kernel over a dense range with layout `like`: element
/// by element when it has the same sizes and strides, as one broadcast value when it is 0-dim (or,
/// with `any_single`, has one element and no more dims than `like`); otherwise `None`. (A fresh
/// output follows its inputs' strides, even those of size-1 dims; 0-dim operands have none.)
fn input_like(x: &TensorData, like: &Layout, any_single: bool) -> Option<Input> {
    let l = &x.layout;
    let scalar = if l.sizes() == like.sizes() && l.strides() == like.strides() {
        false
    } else if l.dim() == 0 || (any_single && l.numel() == 1 && l.dim() <= like.dim()) {
        true
    } else {
        return None;
    };
    Some(Input {
        storage: x.storage.clone(),
        offset: l.offset(),
        scalar,
    })
}

/// The buffer of a fresh output of `n` elements (possibly recycled: the flat kernel writes every
/// element). Kernels write it before it is wrapped by [`wrap_output`], so no lock is taken.
fn fresh_buffer<U: Element>(n: usize) -> Result<CpuBuffer> {
    CpuBuffer::for_overwrite(n * std::mem::size_of::<U>())
}

/// A fresh tensor of `sizes` and dense `strides` over `buf`, once the kernel has filled it.
fn wrap_output<U: Element>(buf: CpuBuffer, sizes: &[usize], strides: Dims) -> Tensor {
    let layout = Layout::new(sizes, strides, 0);
    Tensor::from_parts(Storage::from_buffer(buf), layout, U::DTYPE)
}

/// A flat operand: `n` elements from a pointer, or one value broadcast to all of them.
#[derive(Clone, Copy)]
enum Flat<T> {
    Range(usize),
    Value(T),
}

impl<T: Element> Flat<T> {
    /// # Safety
    /// `p` is valid for one read when `scalar`, and nothing writes that element concurrently.
    unsafe fn new(p: *const T, scalar: bool) -> Flat<T> {
        if scalar {
            // SAFETY: forwarded contract; read once, before any kernel writes.
            Flat::Value(unsafe { *p })
        } else {
            Flat::Range(p as usize)
        }
    }
}

/// `out[i] = f(a[i], b[i])` for `i < n` (a [`Flat::Value`] is broadcast), split over the rayon
/// pool when large. With `alias`, an operand pointing at `po` is the output itself (an in-place
/// update); without, no operand range overlaps the output.
///
/// # Safety
/// `po` is valid for `n` writes and each range operand for `n` reads; a range operand either does
/// not overlap the output or (only with `alias`, and then `T == U`) starts at `po`; nothing else
/// accesses these ranges during the call.
unsafe fn flat2<T: Element, U: Element>(
    n: usize,
    po: *mut U,
    a: Flat<T>,
    b: Flat<T>,
    alias: bool,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    use crate::backend::cpu::elementwise::{map1, map2, update1, update2};
    use Flat::{Range, Value};
    let po = po as usize;
    let same = |x: Flat<T>| alias && matches!(x, Range(p) if p == po);
    let (a_out, b_out) = (same(a), same(b));
    if a_out || b_out {
        assert!(
            std::any::TypeId::of::<T>() == std::any::TypeId::of::<U>(),
            "internal: an in-place flat kernel changes the element type"
        );
    }
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        let len = hi - lo;
        // SAFETY: [lo, hi) lies inside every range of the contract; concurrent calls get disjoint
        // ranges; an operand that is the output is only reached through `x` (T == U, asserted).
        unsafe {
            let range = |p: usize| std::slice::from_raw_parts((p as *const T).add(lo), len);
            if a_out || b_out {
                let x = std::slice::from_raw_parts_mut((po as *mut T).add(lo), len);
                // `f` returns T here (T == U); reinterpret its result without a conversion
                let g = |u: T, v: T| -> T { std::mem::transmute_copy(&f(u, v)) };
                match (a, b, a_out, b_out) {
                    (_, _, true, true) => update1(x, &|v| g(v, v)),
                    (_, Value(bv), true, _) => update1(x, &|v| g(v, bv)),
                    (_, Range(pb), true, _) => update2(x, range(pb), &g),
                    (Value(av), _, _, true) => update1(x, &|v| g(av, v)),
                    (Range(pa), _, _, true) => update2(x, range(pa), &|v, u| g(u, v)),
                    _ => unreachable!("internal: one operand is the output"),
                }
                return;
            }
            let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
            match (a, b) {
                (Range(pa), Range(pb)) => map2(out, range(pa), range(pb), f),
                (Range(pa), Value(bv)) => map1(out, range(pa), &|u| f(u, bv)),
                (Value(av), Range(pb)) => map1(out, range(pb), &|v| f(av, v)),
                (Value(av), Value(bv)) => out.fill(f(av, bv)),
            }
        }
    });
}

/// `out[i] = f(a[i])` for `i < n` (`alias`: `out` is `a`, an in-place update), split over the
/// rayon pool when large.
///
/// # Safety
/// `po` is valid for `n` writes and `pa` for `n` reads; the ranges do not overlap, or with
/// `alias` they coincide (and `T == U`); nothing else accesses them during the call.
unsafe fn flat1<T: Element, U: Element>(
    n: usize,
    po: *mut U,
    pa: *const T,
    alias: bool,
    f: &(impl Fn(T) -> U + Sync),
) {
    use crate::backend::cpu::elementwise::{map1, update1};
    let (po, pa) = (po as usize, pa as usize);
    if alias {
        assert!(
            std::any::TypeId::of::<T>() == std::any::TypeId::of::<U>() && po == pa,
            "internal: an in-place flat kernel changes the element type"
        );
    }
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        let len = hi - lo;
        // SAFETY: as in `flat2`.
        unsafe {
            if alias {
                let x = std::slice::from_raw_parts_mut((po as *mut T).add(lo), len);
                update1(x, &|v| -> T { std::mem::transmute_copy(&f(v)) });
            } else {
                let out = std::slice::from_raw_parts_mut((po as *mut U).add(lo), len);
                map1(
                    out,
                    std::slice::from_raw_parts((pa as *const T).add(lo), len),
                    f,
                );
            }
        }
    });
}

/// Out-of-place `f(a, b)` (both already of dtype `T`) when one operand is non-overlapping and
/// dense (any memory order whose fresh output keeps it) and the other has its layout or is 0-dim.
pub(crate) fn binary<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Result<Tensor>> {
    let (mut buf, ia, ib, sizes, strides, n) = {
        // recursive read locks: `a` and `b` may be the same tensor
        let (da, db) = (a.0.data.read_recursive(), b.0.data.read_recursive());
        let like = if da.layout.dim() >= db.layout.dim() && da.layout.numel() > 0 {
            &da.layout
        } else if da.layout.dim() == 0 && db.layout.numel() > 0 {
            &db.layout
        } else {
            return None;
        };
        let (ia, ib) = (input_like(&da, like, false)?, input_like(&db, like, false)?);
        let strides = if canonical(like) {
            Dims::from_slice(like.strides())
        } else {
            let sa = broadcast_strides(&da.layout, like.sizes());
            let sb = broadcast_strides(&db.layout, like.sizes());
            output_strides(like, &[&sa, &sb])?
        };
        let n = like.numel();
        let buf = match fresh_buffer::<U>(n) {
            Ok(b) => b,
            Err(e) => return Some(Err(e)),
        };
        (buf, ia, ib, Dims::from_slice(like.sizes()), strides, n)
    };
    {
        let (ga, gb) = (ia.storage.read(), ib.storage.read());
        // SAFETY: `buf` is fresh (no alias) with room for `n` elements; each input is a tensor
        // geometry inside its storage: `n` elements from its offset (a dense layout starts there:
        // strides are non-negative) or one element.
        unsafe {
            let a = Flat::new((ga.as_ptr() as *const T).add(ia.offset), ia.scalar);
            let b = Flat::new((gb.as_ptr() as *const T).add(ib.offset), ib.scalar);
            flat2::<T, U>(n, buf.as_mut_ptr() as *mut U, a, b, false, f)
        };
    }
    Some(Ok(wrap_output::<U>(buf, &sizes, strides)))
}

/// `out = f(a, b)` into an existing `out` (all of dtype `T`) when `out` is non-overlapping and
/// dense and each input has its layout or a single element; an input may be `out` itself (the
/// in-place ops) but must not overlap it otherwise — the caller's overlap checks. Returns false
/// (nothing done) when the preconditions do not hold.
pub(crate) fn binary_into<T: Element>(
    out: &Tensor,
    a: &Tensor,
    b: &Tensor,
    f: &(impl Fn(T, T) -> T + Sync),
) -> bool {
    let d = out.data();
    if d.layout.numel() == 0 || !d.layout.is_non_overlapping_and_dense() {
        return false;
    }
    let (Some(ia), Some(ib)) = (
        input_like(&a.0.data.read_recursive(), &d.layout, true),
        input_like(&b.0.data.read_recursive(), &d.layout, true),
    ) else {
        return false;
    };
    let n = d.layout.numel();
    let mut locks = lock_for_write(&d.storage, &[&ia.storage, &ib.storage]);
    // the first element of a dense layout sits at its offset (strides are non-negative)
    // SAFETY: the offset is inside the write-locked storage (a tensor geometry).
    let po = unsafe { (locks.out_ptr() as *mut T).add(d.layout.offset()) };
    // SAFETY: input geometries inside their locked storages (an input in `out`'s storage comes
    // from the write guard); a single element is read here, before the kernel writes anything.
    let (fa, fb) = unsafe {
        let p = |i: &Input| (locks.in_ptr(&i.storage) as *const T).add(i.offset);
        (Flat::new(p(&ia), ia.scalar), Flat::new(p(&ib), ib.scalar))
    };
    // SAFETY: `out` covers exactly `n` elements from `po`; a range input has `out`'s layout, so
    // it coincides with `out` (then it starts at `po`) or does not overlap it (partial overlap was
    // rejected by the caller); the locks are held for the whole call.
    unsafe { flat2::<T, T>(n, po, fa, fb, true, f) };
    true
}

/// In-place `self_ = f(self_, other)`: [`binary_into`] with `self_` as output and first input.
pub(crate) fn binary_inplace<T: Element>(
    self_: &Tensor,
    other: &Tensor,
    f: &(impl Fn(T, T) -> T + Sync),
) -> bool {
    binary_into::<T>(self_, self_, other, f)
}

/// Out-of-place `f(a)` when `a` is non-overlapping and dense (its fresh output keeps its layout).
pub(crate) fn unary<T: Element, U: Element>(
    a: &Tensor,
    f: &(impl Fn(T) -> U + Sync),
) -> Option<Result<Tensor>> {
    let d = a.data_ref();
    let strides = if canonical(&d.layout) {
        Dims::from_slice(d.layout.strides())
    } else {
        let sa: Vec<isize> = d.layout.strides().iter().map(|&s| s as isize).collect();
        output_strides(&d.layout, &[&sa])?
    };
    let n = d.layout.numel();
    let mut buf = match fresh_buffer::<U>(n) {
        Ok(b) => b,
        Err(e) => return Some(Err(e)),
    };
    {
        // (`a`'s data lock is held for the call: its storage cannot be re-pointed meanwhile;
        // data before storage, the order of every lock pair)
        let ga = d.storage.read();
        // SAFETY: `buf` is fresh with room for `n` elements; `a` is dense, `n` elements from its
        // offset inside its read-locked storage.
        unsafe {
            flat1::<T, U>(
                n,
                buf.as_mut_ptr() as *mut U,
                (ga.as_ptr() as *const T).add(d.layout.offset()),
                false,
                f,
            )
        };
    }
    Some(Ok(wrap_output::<U>(buf, d.layout.sizes(), strides)))
}

/// [`unary_inplace`] on a gradient the engine may overwrite (`BackwardCtx::grad_owned`), if
/// nobody else can observe it: its only handle, its storage's only tensor, no autograd identity
/// (not a view, no history, no leaf flag). False (nothing done) otherwise, or when `t` is not
/// non-overlapping and dense. Its fields are reached through exclusive borrows, without locks.
pub(crate) fn unary_inplace_owned<T: Element>(
    t: &mut Tensor,
    f: &(impl Fn(T) -> T + Sync),
) -> bool {
    let Some(imp) = std::sync::Arc::get_mut(&mut t.0) else {
        return false;
    };
    if imp.sparse.is_some() || !imp.meta.get_mut().is_plain() {
        return false;
    }
    let TensorData { storage, layout } = imp.data.get_mut();
    if layout.numel() == 0 || !layout.is_non_overlapping_and_dense() {
        return false;
    }
    let Some(buf) = storage.get_mut() else {
        return false;
    };
    update_region(buf, layout, true, f);
    true
}

/// In-place `t = f(t)` when `t` is non-overlapping and dense. Returns false when it is not.
pub(crate) fn unary_inplace<T: Element>(t: &Tensor, f: &(impl Fn(T) -> T + Sync)) -> bool {
    // (the data lock is held for the call, then the storage's: the order of every lock pair)
    let d = t.data_ref();
    if d.layout.numel() == 0 || !d.layout.is_non_overlapping_and_dense() {
        return false;
    }
    let mut g = d.storage.write();
    // SAFETY: a dense layout covers exactly numel elements from its offset inside the storage;
    // the write lock is held for the whole call and input and output coincide exactly.
    unsafe {
        let p = (g.as_mut_ptr() as *mut T).add(d.layout.offset());
        flat1::<T, T>(d.layout.numel(), p, p, true, f)
    };
    true
}

/// `x = f(x)` over the elements of `region` in `buf`, borrowed exclusively: a flat loop when
/// `dense`, else a walk of its runs. `region` is non-empty and names each element once (the
/// callers' checks); lying inside `buf` is asserted.
#[inline]
fn update_region<T: Element>(
    buf: &mut CpuBuffer,
    region: &Layout,
    dense: bool,
    f: &(impl Fn(T) -> T + Sync),
) {
    assert!(
        region.storage_span() * std::mem::size_of::<T>() <= buf.len(),
        "internal: a region outside its storage"
    );
    let base = buf.as_mut_ptr() as *mut T;
    if dense {
        // SAFETY: a dense region covers numel elements from its offset, inside the buffer
        // (asserted above); `buf` is borrowed exclusively and input and output coincide.
        unsafe {
            let p = base.add(region.offset());
            flat1::<T, T>(region.numel(), p, p, true, f)
        };
        return;
    }
    let istrides: smallvec::SmallVec<[isize; 4]> =
        region.strides().iter().map(|&s| s as isize).collect();
    crate::layout::for_each_run(
        region.sizes(),
        [&istrides],
        [region.offset() as isize],
        |[o], len, [st]| {
            for k in 0..len as isize {
                // SAFETY: every offset the walk yields is an element of `region`, inside the buffer
                // (asserted above) and named once (injective); `buf` is borrowed exclusively.
                unsafe {
                    let p = base.offset(o + k * st);
                    *p = f(*p);
                }
            }
        },
    );
}
