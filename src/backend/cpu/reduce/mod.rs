//! Row reductions over a strided source, in place (`sum`'s kernels are in [`super::sum`]):
//! `ReduceKernels::reduce` (the `impl` at the end) picks a kernel per op, dtype and geometry
//! and writes the row results. The source is seen as rows of the reduced dims ([`rows`]: its
//! geometry, and how rows are split over the team); extremum reductions are in [`ext`], the
//! nansum kernels in [`nansum`], the other sequential folds in [`folds`]. Fast paths name the
//! per-op sweep row they serve.

mod ext;
mod folds;
mod nansum;
mod rows;

use super::Cpu;
use super::lanes::{self, Abs, Sq};
use super::scan;
use super::sort;
use super::sum;
use crate::backend::ReduceKernels;
use crate::backend::ReduceOp;
use crate::backend::RowOp;
use crate::dtype::cast;
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Element, NormOrd, dispatch, match_dtype};
use ext::{Ext, ext_write};
use folds::{Logic, LseMax, LseSum, Norm, ProdI, ProdT};
use nansum::{NanSum, nansum_all, nansum_row};
pub(crate) use rows::Geo;
use rows::{fold_rows, rows_map};

/// The elements of a buffer as `T`.
pub(crate) fn elems<T: Element>(b: &CpuBuffer) -> &[T] {
    // SAFETY: the buffer is allocated aligned for every element type, every bit pattern of its
    // initialised bytes is read as plain old data by `Element` types except bool, whose tensor
    // bytes are only ever written as 0/1; the slice covers whole elements inside the buffer.
    unsafe {
        std::slice::from_raw_parts(b.as_ptr() as *const T, b.len() / std::mem::size_of::<T>())
    }
}

/// The elements of a buffer as mutable `T`.
pub(crate) fn elems_mut<T: Element>(b: &mut CpuBuffer) -> &mut [T] {
    let n = b.len() / std::mem::size_of::<T>();
    // SAFETY: as in [`elems`], borrowed exclusively.
    unsafe { std::slice::from_raw_parts_mut(b.as_mut_ptr() as *mut T, n) }
}

/// Writes `vals` (cast to `dt`) to the first `vals.len()` elements of `dst` from `off`.
pub(super) fn write<V: Element>(dst: &mut CpuBuffer, off: usize, dt: DType, vals: &[V]) {
    dispatch!(dt, D => {
        let d = &mut elems_mut::<D>(dst)[off..off + vals.len()];
        for (o, &v) in d.iter_mut().zip(vals) {
            *o = cast::<V, D>(v);
        }
    })
}

impl ReduceKernels for Cpu {
    /// Picks a kernel per op, dtype and geometry; fast paths name the per-op sweep row they
    /// serve.
    fn reduce(
        dst: &mut CpuBuffer,
        doff: usize,
        ddt: DType,
        idx: Option<(&mut CpuBuffer, usize)>,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        nred: usize,
        op: ReduceOp,
    ) {
        let mut idx = idx;
        let g = Geo::rows(sl, nred);
        if matches!(op, ReduceOp::Max | ReduceOp::Min) {
            let done = match sdt {
                DType::F32 => ext_write(elems::<f32>(src), &g, op, dst, doff, ddt, &mut idx),
                DType::F64 => ext_write(elems::<f64>(src), &g, op, dst, doff, ddt, &mut idx),
                _ => false,
            };
            if done {
                return;
            }
        }
        match op {
            ReduceOp::Max | ReduceOp::Min => match_dtype!(sdt, real, T => {
                let x = elems::<T>(src);
                let st = if op == ReduceOp::Max {
                    fold_rows(x, &g, &Ext::<true>)
                } else {
                    fold_rows(x, &g, &Ext::<false>)
                };
                let v: Vec<T> = st.iter().map(|s| s.0).collect();
                write(dst, doff, ddt, &v);
                if let Some((ib, ioff)) = idx {
                    let iv: Vec<i64> = st.iter().map(|s| s.1 as i64).collect();
                    write(ib, ioff, DType::I64, &iv);
                }
            }),
            // fast path (per-op sweep row `prod`): contiguous f32/f64 rows in lanes
            ReduceOp::Prod if matches!(sdt, DType::F32 | DType::F64) && g.rows_contiguous() => {
                if sdt == DType::F32 {
                    write(
                        dst,
                        doff,
                        ddt,
                        &rows_map(elems::<f32>(src), &g, lanes::prod::<f32>),
                    );
                } else {
                    write(
                        dst,
                        doff,
                        ddt,
                        &rows_map(elems::<f64>(src), &g, lanes::prod::<f64>),
                    );
                }
            }
            ReduceOp::Prod => dispatch!(sdt, T => {
                let x = elems::<T>(src);
                if sdt.is_integral(true) {
                    write(dst, doff, ddt, &fold_rows(x, &g, &ProdI));
                } else {
                    write(dst, doff, ddt, &fold_rows(x, &g, &ProdT));
                }
            }),
            // fast path (per-op sweep row `norm`): L1/L2 of contiguous f32/f64 rows in f64 lanes
            ReduceOp::Norm(ord @ (NormOrd::L1 | NormOrd::L2))
                if matches!(sdt, DType::F32 | DType::F64) && g.rows_contiguous() =>
            {
                let l2 = ord == NormOrd::L2;
                let mut v = match (sdt, l2) {
                    (DType::F32, true) => {
                        rows_map(elems::<f32>(src), &g, lanes::abs_sum::<f32, Sq>)
                    }
                    (DType::F32, false) => {
                        rows_map(elems::<f32>(src), &g, lanes::abs_sum::<f32, Abs>)
                    }
                    (_, true) => rows_map(elems::<f64>(src), &g, lanes::abs_sum::<f64, Sq>),
                    (_, false) => rows_map(elems::<f64>(src), &g, lanes::abs_sum::<f64, Abs>),
                };
                if l2 {
                    v.iter_mut().for_each(|s| *s = s.sqrt());
                }
                write(dst, doff, ddt, &v);
            }
            ReduceOp::Norm(ord) => dispatch!(sdt, T => {
                let mut v = fold_rows(elems::<T>(src), &g, &Norm(ord));
                match ord {
                    NormOrd::L2 => v.iter_mut().for_each(|s| *s = s.sqrt()),
                    NormOrd::P(p) if p != 0.0 => v.iter_mut().for_each(|s| *s = s.powf(1.0 / p)),
                    _ => {}
                }
                write(dst, doff, ddt, &v);
            }),
            // fast path (per-op sweep row `logsumexp`): contiguous f32 rows, vectorised `exp`
            ReduceOp::Logsumexp if sdt == DType::F32 && g.rows_contiguous() => {
                write(
                    dst,
                    doff,
                    ddt,
                    &rows_map(elems::<f32>(src), &g, lanes::logsumexp_f32),
                );
            }
            ReduceOp::Logsumexp => dispatch!(sdt, T => {
                let x = elems::<T>(src);
                let mx = fold_rows(x, &g, &LseMax);
                let sums = fold_rows(x, &g, &LseSum(&mx));
                let v: Vec<f64> = mx
                    .iter()
                    .zip(&sums)
                    .map(|(&(m, nan), &(s, _))| {
                        if nan {
                            f64::NAN
                        } else if m.is_infinite() {
                            m
                        } else {
                            m + s.ln()
                        }
                    })
                    .collect();
                write(dst, doff, ddt, &v);
            }),
            // one pass with NaN read as zero (per-op sweep row `nansum`, which was `isnan`,
            // `masked_fill` and `sum`): contiguous float rows in torch's inner-sum order, a single
            // row (a full nansum) by the full sum's pairwise lanes, as `sum()`
            ReduceOp::NanSum if sdt.is_float() && g.rows_contiguous() => {
                crate::match_dtype!(sdt, float, T => {
                    let x = elems::<T>(src);
                    if g.m == 1 && g.r > 0 {
                        let p = g.base(0) as usize;
                        write(dst, doff, ddt, &[nansum_all::<T>(&x[p..p + g.r])]);
                    } else {
                        write(dst, doff, ddt, &rows_map(x, &g, nansum_row::<T>));
                    }
                }, else unreachable!("internal: a float dtype"))
            }
            ReduceOp::NanSum => dispatch!(sdt, T => {
                write(dst, doff, ddt, &fold_rows(elems::<T>(src), &g, &NanSum));
            }),
            ReduceOp::All | ReduceOp::Any => dispatch!(sdt, T => {
                let x = elems::<T>(src);
                let v = if op == ReduceOp::All {
                    fold_rows(x, &g, &Logic::<true>)
                } else {
                    fold_rows(x, &g, &Logic::<false>)
                };
                write(dst, doff, ddt, &v);
            }),
        }
    }

    fn row_map(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        src2: Option<(&CpuBuffer, &Layout, DType)>,
        nred: usize,
        op: RowOp,
    ) {
        scan::row_map(dst, dl, ddt, src, sl, sdt, src2, nred, op)
    }

    fn sort(
        idx: &mut CpuBuffer,
        il: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        pl: &Layout,
        k: usize,
        descending: bool,
        sorted: bool,
    ) -> Vec<usize> {
        sort::sort(idx, il, src, sl, sdt, pl, k, descending, sorted)
    }

    unsafe fn sum_into(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
        full: bool,
    ) {
        dispatch!(dt, T => {
            // SAFETY: forwarded contract (geometries inside distinct buffers).
            unsafe { sum::sum_into::<T>(dst, dl, src, sl, full) }
        })
    }

    fn sum_dense(
        dst: &mut CpuBuffer,
        doff: usize,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
    ) -> bool {
        sum::sum_dense(dst, doff, src, sl, dt)
    }

    fn dot_dense(a: &CpuBuffer, al: &Layout, b: &CpuBuffer, bl: &Layout, dt: DType) -> Option<f64> {
        sum::dot_dense(a, al, b, bl, dt)
    }
}
