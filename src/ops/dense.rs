//! Fast paths of the elementwise drivers for operands that are dense in one shared memory order —
//! the common case: contiguous tensors of one shape, or a tensor and a one-element operand. Such
//! operands are flat element ranges, so the kernel is one indexed loop (the backend's flat map:
//! vectorised, split over the worker team when large) with no broadcasting, stride coalescing or
//! per-call bookkeeping allocations — which is most of the cost of an op on a small tensor. This
//! file decides the geometry (which operands qualify, the output strides); the loops live in
//! `backend/cpu/map.rs`, reached through the front door.
//!
//! Every function returns `None` (or false) when its preconditions do not hold; callers then
//! take the general strided path, which produces the same values and the same output strides.

use super::util::broadcast_strides;
use crate::backend::{self, FlatArg};
use crate::layout::{Dims, Layout, iter_output_strides};
use crate::storage::Storage;
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
/// layouts `layouts` and (broadcast) strides `operands` — the general path's choice, so the fast path produces the same
/// output geometry — if elements at the same memory rank of `like` and of that output have the
/// same index (the strides agree on every dim of size > 1); `None` otherwise.
fn output_strides(like: &Layout, layouts: &[&Layout], operands: &[&[isize]]) -> Option<Dims> {
    if canonical(like) {
        return Some(Dims::from_slice(like.strides()));
    }
    if like.numel() == 0 || !like.is_non_overlapping_and_dense() {
        return None;
    }
    let st = iter_output_strides(like.sizes(), layouts, operands);
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

impl Input {
    fn arg(&self) -> FlatArg<'_> {
        FlatArg {
            storage: &self.storage,
            offset: self.offset,
            scalar: self.scalar,
        }
    }
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

/// A fresh tensor of `sizes` and dense `strides` over `storage`, once the kernel has filled it.
fn wrap_output<U: Element>(storage: Storage, sizes: &[usize], strides: Dims) -> Tensor {
    let layout = Layout::new(sizes, strides, 0);
    Tensor::from_parts(storage, layout, U::DTYPE)
}

/// Out-of-place `f(a, b)` (both already of dtype `T`) when one operand is non-overlapping and
/// dense (any memory order whose fresh output keeps it) and the other has its layout or is 0-dim.
pub(crate) fn binary<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Result<Tensor>> {
    binary_split(a, b, 0, f, f)
}

/// As [`binary`], except that with `lanes > 0` the first `n - n % lanes` elements in memory
/// order are `head(a, b)`: the part PyTorch's vectorised loop covers when its operands coalesce
/// into one dense run (as they do here), for ops whose vector body differs from the scalar tail.
pub(crate) fn binary_split<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    lanes: usize,
    head: &(impl Fn(T, T) -> U + Sync),
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Result<Tensor>> {
    binary_fresh::<U>(a, b, lanes, |n, m, ia, ib| {
        backend::flat_fresh2_split::<T, U>(n, m, ia, ib, head, f)
    })
}

/// As [`binary_split`], where `head` and `f` are the exact slow forms of a fast path: each
/// element is `fast`'s value unless `fast` flags it (see `backend::flat_fresh2_fallback`).
pub(crate) fn binary_split_fallback<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    lanes: usize,
    fast: &(impl Fn(T, T) -> (U, bool) + Sync),
    head: &(impl Fn(T, T) -> U + Sync),
    f: &(impl Fn(T, T) -> U + Sync),
) -> Option<Result<Tensor>> {
    binary_fresh::<U>(a, b, lanes, |n, m, ia, ib| {
        backend::flat_fresh2_fallback::<T, U>(n, m, ia, ib, fast, head, f)
    })
}

/// The geometry of [`binary_split`]: `run(n, m, a, b)` fills a fresh storage of `n` elements
/// (`m` the vector-width prefix), wrapped with the output layout.
fn binary_fresh<U: Element>(
    a: &Tensor,
    b: &Tensor,
    lanes: usize,
    run: impl FnOnce(usize, usize, FlatArg<'_>, FlatArg<'_>) -> Result<Storage>,
) -> Option<Result<Tensor>> {
    let (ia, ib, sizes, strides, n) = {
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
            output_strides(like, &[&da.layout, &db.layout], &[&sa, &sb])?
        };
        let n = like.numel();
        (ia, ib, Dims::from_slice(like.sizes()), strides, n)
    };
    let m = if lanes > 0 { n - n % lanes } else { 0 };
    // (a dense layout starts at its offset: strides are non-negative)
    let storage = match run(n, m, ia.arg(), ib.arg()) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    Some(Ok(wrap_output::<U>(storage, &sizes, strides)))
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
    // the first element of a dense layout sits at its offset (strides are non-negative); a range
    // input has `out`'s layout, so it coincides with `out` or does not overlap it (partial
    // overlap was rejected by the caller)
    backend::flat_into2::<T, T>(
        &d.storage,
        d.layout.offset(),
        d.layout.numel(),
        ia.arg(),
        ib.arg(),
        f,
    );
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
    unary_with::<U>(a, |n, arg| backend::flat_fresh1::<T, U>(n, arg, f))
}

/// [`unary`] of the element rule `full` with its cheap form `fast` (see
/// `backend::flat_fresh1_fallback`): the same values, computed chunk by chunk.
pub(crate) fn unary_fallback<T: Element, U: Element>(
    a: &Tensor,
    fast: &(impl Fn(T) -> (U, bool) + Sync),
    full: &(impl Fn(T) -> U + Sync),
) -> Option<Result<Tensor>> {
    unary_with::<U>(a, |n, arg| {
        backend::flat_fresh1_fallback::<T, U>(n, arg, fast, full)
    })
}

/// [`unary`]'s body: `run(n, a)` fills a fresh storage of the `n` elements of `a` from its
/// first element on.
fn unary_with<U: Element>(
    a: &Tensor,
    run: impl FnOnce(usize, FlatArg<'_>) -> Result<Storage>,
) -> Option<Result<Tensor>> {
    let d = a.data_ref();
    let strides = if canonical(&d.layout) {
        Dims::from_slice(d.layout.strides())
    } else {
        let sa: Vec<isize> = d.layout.strides().iter().map(|&s| s as isize).collect();
        output_strides(&d.layout, &[&d.layout], &[&sa])?
    };
    // (`a`'s data lock is held for the call: its storage cannot be re-pointed meanwhile; data
    // before storage, the order of every lock pair)
    let arg = FlatArg {
        storage: &d.storage,
        offset: d.layout.offset(),
        scalar: false,
    };
    let storage = match run(d.layout.numel(), arg) {
        Ok(s) => s,
        Err(e) => return Some(Err(e)),
    };
    Some(Ok(wrap_output::<U>(storage, d.layout.sizes(), strides)))
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
    backend::update_owned::<T>(storage, layout, true, f)
}

/// In-place `t = f(t)` when `t` is non-overlapping and dense. Returns false when it is not.
pub(crate) fn unary_inplace<T: Element>(t: &Tensor, f: &(impl Fn(T) -> T + Sync)) -> bool {
    // (the data lock is held for the call, then the storage's: the order of every lock pair)
    let d = t.data_ref();
    if d.layout.numel() == 0 || !d.layout.is_non_overlapping_and_dense() {
        return false;
    }
    let o = d.layout.offset();
    let arg = FlatArg {
        storage: &d.storage,
        offset: o,
        scalar: false,
    };
    // input and output coincide exactly: an in-place update
    backend::flat_into1::<T, T>(&d.storage, o, d.layout.numel(), arg, f);
    true
}
