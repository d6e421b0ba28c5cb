//! Typed building blocks for the sparse kernels: borrow a contiguous tensor as a slice, build a
//! tensor from a filled slice, row gather/scatter over `values` (rows of `dense` elements) and
//! [`RowSel`], the row selection a slice (or an identity) applies to `values`.

use crate::layout::Layout;
use crate::storage::Storage;
use crate::{Element, Result, Tensor, dispatch};

/// Runs `f` on the elements of a contiguous tensor of element type `T`.
pub(crate) fn read<T: Element, R>(t: &Tensor, f: impl FnOnce(&[T]) -> R) -> Result<R> {
    debug_assert!(t.is_contiguous() && t.dtype() == T::DTYPE && !t.is_sparse());
    let d = t.data();
    d.storage.with_elems(d.layout.offset(), d.layout.numel(), f)
}

/// A fresh contiguous tensor of `shape` whose elements `f` must ALL write: the buffer may be a
/// reused block holding a dead tensor's bytes (use [`build_zeroed`] to accumulate into zeros).
pub(crate) fn build<T: Element>(shape: &[usize], f: impl FnOnce(&mut [T])) -> Result<Tensor> {
    build_in(shape, f, false)
}

/// Like [`build`], but the elements start at zero (for kernels that accumulate or write only
/// some elements).
pub(crate) fn build_zeroed<T: Element>(
    shape: &[usize],
    f: impl FnOnce(&mut [T]),
) -> Result<Tensor> {
    build_in(shape, f, true)
}

fn build_in<T: Element>(shape: &[usize], f: impl FnOnce(&mut [T]), zero: bool) -> Result<Tensor> {
    let n: usize = shape.iter().product();
    let nbytes = n * std::mem::size_of::<T>();
    let storage = if zero {
        Storage::zeroed(nbytes)?
    } else {
        Storage::for_output(nbytes)?
    };
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

/// Elements per row of a `[n, dense..]` values tensor (0 when the values are empty: with
/// `n == 0` the dense sizes alone may overflow, and no row is ever addressed).
pub(crate) fn row_len(values: &Tensor) -> usize {
    if values.numel() == 0 {
        return 0;
    }
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
            build_zeroed::<T>(&shape, |dst| {
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

/// [`gather_rows`] of scalar rows on the rayon pool.
fn gather_par(v: &Tensor, sel: &[usize]) -> Result<Tensor> {
    use rayon::prelude::*;
    const STEP: usize = 1 << 14;
    dispatch!(v.dtype(), T => {
        read::<T, _>(v, |src| {
            build::<T>(&[sel.len()], |dst| {
                dst.par_chunks_mut(STEP).zip(sel.par_chunks(STEP)).for_each(|(d, s)| {
                    for (o, &i) in d.iter_mut().zip(s) {
                        *o = src[i];
                    }
                });
            })
        })?
    })
}

/// Above this many selected rows, [`RowSel`] gathers and scatters run on the rayon pool.
pub(crate) const PAR_ROWS: usize = 1 << 17;

/// The rows of `x.values` an op keeps, in output order; input rows are kept at most once.
#[derive(Debug)]
pub(crate) enum RowSel {
    /// Consecutive runs `(first input row, length)`, concatenated in output order.
    Runs(Vec<(usize, usize)>),
    /// One input row per output row.
    List(Vec<usize>),
}

impl RowSel {
    /// Number of output rows.
    pub(crate) fn len(&self) -> usize {
        match self {
            RowSel::Runs(r) => r.iter().map(|&(_, n)| n).sum(),
            RowSel::List(l) => l.len(),
        }
    }

    /// `out[j] = v[sel[j]]` over rows of a contiguous `[n, dense..]` tensor.
    pub(crate) fn gather(&self, v: &Tensor) -> Result<Tensor> {
        let runs = match self {
            RowSel::List(l) if l.len() >= PAR_ROWS && row_len(v) == 1 => {
                return gather_par(v, l);
            }
            RowSel::List(l) => return gather_rows(v, l),
            RowSel::Runs(r) => r,
        };
        let rl = row_len(v);
        let mut shape = v.shape();
        shape[0] = self.len();
        dispatch!(v.dtype(), T => {
            read::<T, _>(v, |src| {
                build::<T>(&shape, |dst| {
                    let mut o = 0;
                    for &(s, n) in runs {
                        dst[o * rl..(o + n) * rl].copy_from_slice(&src[s * rl..(s + n) * rl]);
                        o += n;
                    }
                })
            })?
        })
    }

    /// `out = zeros([n, dense..]); out[sel[j]] = g[j]` over rows (each input row is selected at
    /// most once, so nothing accumulates).
    pub(crate) fn scatter(&self, g: &Tensor, n: usize) -> Result<Tensor> {
        let runs = match self {
            RowSel::List(l) => return scatter_rows(g, l, n, true),
            RowSel::Runs(r) => r,
        };
        let rl = row_len(g);
        let mut shape = g.shape();
        shape[0] = n;
        dispatch!(g.dtype(), T => {
            read::<T, _>(g, |src| {
                build::<T>(&shape, |dst| {
                    // every element is written: the gaps between runs get zeros
                    let (mut o, mut at) = (0usize, 0usize);
                    for &(s, k) in runs {
                        dst[at * rl..s * rl].fill(T::zero());
                        dst[s * rl..(s + k) * rl].copy_from_slice(&src[o * rl..(o + k) * rl]);
                        o += k;
                        at = s + k;
                    }
                    dst[at * rl..].fill(T::zero());
                })
            })?
        })
    }
}
