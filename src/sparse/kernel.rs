//! Typed building blocks for the sparse kernels: borrow a contiguous tensor as a slice, build a
//! tensor from a filled slice, and row gather/scatter over `values` (rows of `dense` elements).

use crate::layout::Layout;
use crate::storage::Storage;
use crate::{Element, Result, Tensor, dispatch};

/// Runs `f` on the elements of a contiguous tensor of element type `T`.
pub(crate) fn read<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    debug_assert!(t.is_contiguous() && t.dtype() == T::DTYPE && !t.is_sparse());
    let d = t.data();
    d.storage.with_elems(d.layout.offset(), d.layout.numel(), f)
}

/// A fresh contiguous tensor of `shape` whose elements `f` writes (they start zeroed).
pub(crate) fn build<T: Element>(shape: &[usize], f: impl FnOnce(&mut [T])) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let storage = Storage::for_output(n * std::mem::size_of::<T>())?;
    storage.with_elems_mut(0, n, f)?;
    Ok(Tensor::from_parts(
        storage,
        Layout::contiguous(shape),
        T::DTYPE,
    ))
}

/// A detached contiguous copy-or-alias of a dense tensor (what sparse payloads hold).
pub(crate) fn contig(t: &Tensor) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    t.detach().contiguous()
}

/// Elements per row of a `[n, dense..]` values tensor.
pub(crate) fn row_len(values: &Tensor) -> usize {
    values.shape()[1..].iter().product()
}

/// `out[j] = v[sel[j]]` over rows of a contiguous `[n, dense..]` tensor.
pub(crate) fn gather_rows(v: &Tensor, sel: &[usize]) -> Result<Tensor> {
    let rl = row_len(v);
    let mut shape = v.shape();
    shape[0] = sel.len();
    dispatch!(v.dtype(), T => {
        read::<T, _>(v, |src| {
            build::<T>(&shape, |dst| {
                if rl == 1 {
                    for (d, &s) in dst.iter_mut().zip(sel) {
                        *d = src[s];
                    }
                } else {
                    for (j, &s) in sel.iter().enumerate() {
                        dst[j * rl..(j + 1) * rl].copy_from_slice(&src[s * rl..(s + 1) * rl]);
                    }
                }
            })
        })?
    })
}

/// `out = zeros([n, dense..]); out[map[j]] (+)= v[j]` over rows.
pub(crate) fn scatter_rows(
    v: &Tensor,
    map: &[usize],
    n: usize,
    accumulate: bool,
) -> Result<Tensor> {
    let rl = row_len(v);
    let mut shape = v.shape();
    shape[0] = n;
    dispatch!(v.dtype(), T => {
        read::<T, _>(v, |src| {
            build::<T>(&shape, |dst| {
                for (j, &m) in map.iter().enumerate() {
                    for e in 0..rl {
                        let s = src[j * rl + e];
                        let d = &mut dst[m * rl + e];
                        *d = if accumulate { d.add(s) } else { s };
                    }
                }
            })
        })?
    })
}
