//! Fast paths of the elementwise drivers for operands that are dense in one shared memory order —
//! the common case: contiguous tensors of one shape, or a tensor and a one-element operand. Such
//! operands are flat element ranges, so the kernel is one indexed loop (vectorised by the
//! compiler, split over the rayon pool when large) with no broadcasting, stride coalescing or
//! per-call bookkeeping allocations — which is most of the cost of an op on a small tensor.
//!
//! Every function returns `None` when its preconditions do not hold; callers then take the
//! general strided path, which produces the same values and the same output strides.

use crate::layout::{Layout, PAR_MIN_ELEMS, par_ranges};
use crate::storage::{Storage, lock_for_write};
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
        acc *= s.max(1);
    }
    l.numel() > 0
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

/// A fresh contiguous output of `like`'s sizes (its storage possibly recycled: the flat kernel
/// writes every element).
fn fresh_output<U: Element>(like: &Layout) -> Result<Tensor> {
    let n = like.numel();
    let storage = Storage::for_output(n * std::mem::size_of::<U>())?;
    let layout = Layout::new(like.sizes(), like.strides(), 0);
    Ok(Tensor::from_parts(storage, layout, U::DTYPE))
}

/// `out[i] = f(a[i], b[i])` for `i < n` (a `*_s` flag reads element 0 for every `i`), split over
/// the rayon pool when large.
///
/// # Safety
/// `po` is valid for `n` writes; `pa`/`pb` are valid for `n` reads (one when scalar); the output
/// range either does not overlap an input or coincides with it exactly, and nothing else
/// accesses these ranges during the call.
unsafe fn flat2<T: Element, U: Element>(
    n: usize,
    po: *mut U,
    pa: *const T,
    a_s: bool,
    pb: *const T,
    b_s: bool,
    f: &(impl Fn(T, T) -> U + Sync),
) {
    let (po, pa, pb) = (po as usize, pa as usize, pb as usize);
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        // SAFETY: [lo, hi) lies inside the ranges of the contract; concurrent calls write disjoint
        // ranges; exact aliasing means each element is read before it is written by one call.
        unsafe {
            let (po, pa, pb) = (po as *mut U, pa as *const T, pb as *const T);
            match (a_s, b_s) {
                (false, false) => {
                    for i in lo..hi {
                        *po.add(i) = f(*pa.add(i), *pb.add(i));
                    }
                }
                (false, true) => {
                    let bv = *pb;
                    for i in lo..hi {
                        *po.add(i) = f(*pa.add(i), bv);
                    }
                }
                (true, false) => {
                    let av = *pa;
                    for i in lo..hi {
                        *po.add(i) = f(av, *pb.add(i));
                    }
                }
                (true, true) => {
                    let v = f(*pa, *pb);
                    for i in lo..hi {
                        *po.add(i) = v;
                    }
                }
            }
        }
    });
}

/// `out[i] = f(a[i])` for `i < n`, split over the rayon pool when large.
///
/// # Safety
/// As for [`flat2`] with one input range.
unsafe fn flat1<T: Element, U: Element>(
    n: usize,
    po: *mut U,
    pa: *const T,
    f: &(impl Fn(T) -> U + Sync),
) {
    let (po, pa) = (po as usize, pa as usize);
    par_ranges(n, PAR_MIN_ELEMS, |lo, hi| {
        // SAFETY: as in `flat2`.
        unsafe {
            let (po, pa) = (po as *mut U, pa as *const T);
            for i in lo..hi {
                *po.add(i) = f(*pa.add(i));
            }
        }
    });
}

/// Out-of-place `f(a, b)` (both already of dtype `T`) when one operand is canonically contiguous
/// and the other has its layout or a single element.
pub(crate) fn binary<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Result<Tensor>> {
    let (out, ia, ib, n) = {
        // recursive read locks: `a` and `b` may be the same tensor
        let (da, db) = (a.0.data.read_recursive(), b.0.data.read_recursive());
        let like = if canonical(&da.layout) && da.layout.dim() >= db.layout.dim() {
            &da.layout
        } else if canonical(&db.layout) && da.layout.dim() == 0 {
            &db.layout
        } else {
            return None;
        };
        let (ia, ib) = (input_like(&da, like, false)?, input_like(&db, like, false)?);
        (fresh_output::<U>(like), ia, ib, like.numel())
    };
    let out = match out {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    {
        let os = out.data_ref().storage.clone();
        let mut og = os.write();
        let (ga, gb) = (ia.storage.read(), ib.storage.read());
        // SAFETY: `out` is fresh (no alias) with `n` elements; each input is a tensor geometry
        // inside its storage: `n` elements from its offset (same dense layout) or one element.
        unsafe {
            flat2::<T, U>(
                n,
                og.as_mut_ptr() as *mut U,
                (ga.as_ptr() as *const T).add(ia.offset),
                ia.scalar,
                (gb.as_ptr() as *const T).add(ib.offset),
                ib.scalar,
                f,
            )
        };
    }
    Some(Ok(out))
}

/// In-place `self_ = f(self_, other)` when `self_` is non-overlapping and dense and `other` has its
/// layout or a single element. Overlap checks are the caller's. Returns false (nothing done) when
/// the preconditions do not hold.
pub(crate) fn binary_inplace<T: Element>(
    self_: &Tensor,
    other: &Tensor,
    f: &(impl Fn(T, T) -> T + Sync),
) -> bool {
    let d = self_.data();
    if d.layout.numel() == 0 || !d.layout.is_non_overlapping_and_dense() {
        return false;
    }
    let Some(ib) = input_like(&other.0.data.read_recursive(), &d.layout, true) else {
        return false;
    };
    let n = d.layout.numel();
    // the first element of a dense layout sits at its offset (strides are non-negative)
    let mut locks = lock_for_write(&d.storage, &[&ib.storage]);
    let pb = locks.in_ptr(&ib.storage) as *const T;
    let po = locks.out_ptr() as *mut T;
    // SAFETY: `self_` covers exactly `n` elements from its offset; `other` is `n` elements with
    // the same layout (so it coincides with `self_` or does not overlap it: partial overlap was
    // rejected by the caller) or one element; the locks are held for the whole call.
    unsafe {
        let po = po.add(d.layout.offset());
        flat2::<T, T>(n, po, po, false, pb.add(ib.offset), ib.scalar, f)
    };
    true
}

/// Out-of-place `f(a)` when `a` is canonically contiguous.
pub(crate) fn unary<T: Element, U: Element>(
    a: &Tensor,
    f: &(impl Fn(T) -> U + Sync),
) -> Option<Result<Tensor>> {
    let (out, storage, offset, n) = {
        let d = a.data_ref();
        if !canonical(&d.layout) {
            return None;
        }
        let out = fresh_output::<U>(&d.layout);
        (out, d.storage.clone(), d.layout.offset(), d.layout.numel())
    };
    let out = match out {
        Ok(o) => o,
        Err(e) => return Some(Err(e)),
    };
    {
        let os = out.data_ref().storage.clone();
        let mut og = os.write();
        let ga = storage.read();
        // SAFETY: `out` is fresh with `n` elements; `a` is contiguous, `n` elements from `offset`.
        unsafe {
            flat1::<T, U>(
                n,
                og.as_mut_ptr() as *mut U,
                (ga.as_ptr() as *const T).add(offset),
                f,
            )
        };
    }
    Some(Ok(out))
}

/// In-place `t = f(t)` when `t` is non-overlapping and dense. Returns false when it is not.
pub(crate) fn unary_inplace<T: Element>(t: &Tensor, f: &(impl Fn(T) -> T + Sync)) -> bool {
    let d = t.data();
    if d.layout.numel() == 0 || !d.layout.is_non_overlapping_and_dense() {
        return false;
    }
    let mut g = d.storage.write();
    // SAFETY: a dense layout covers exactly numel elements from its offset inside the storage;
    // the write lock is held for the whole call and input and output coincide exactly.
    unsafe {
        let p = (g.as_mut_ptr() as *mut T).add(d.layout.offset());
        flat1::<T, T>(d.layout.numel(), p, p, f)
    };
    true
}
