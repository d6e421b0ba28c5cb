//! Row maps: each row of a strided source (its last `nred` dims, see [`super::reduce::Geo`])
//! is read into an accumulator-typed row buffer (f64, complex128 for complex `cumsum` and
//! `cumprod`, or wrapping i64 for integer scans),
//! transformed as a whole, and written to the same row of the destination cast to its dtype.
//! The kernels of `cumsum`/`cumprod` and of the per-element weights of reduction backwards
//! (`exp(x - lse)`, norm weights). Rows run on the kernel team when the work pays.

use super::reduce::{Geo, elems, elems_mut};
use super::team;
use crate::backend::RowOp;
use crate::dtype::{C128, cast};
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Element, NormOrd, dispatch};

/// Elements of work below which a row map runs on one thread.
const PAR_MIN: usize = 1 << 15;

/// Row `i` of `buf` (geometry `g`, dtype `dt`) appended to `out` as `A`.
fn gather<A: Element>(buf: &CpuBuffer, g: &Geo, dt: DType, i: usize, out: &mut Vec<A>) {
    let b = g.base(i);
    dispatch!(dt, S => {
        let x = elems::<S>(buf);
        out.extend(g.red.iter().map(|&o| cast::<S, A>(x[(b + o) as usize])));
    })
}

/// A whole-row transform: `f(x_row, second_row, out_row)`.
type RowFn<'a, A> = dyn Fn(&[A], &[A], &mut [A]) + Sync + 'a;

/// One strided side of a row map: a buffer, its row geometry and its dtype.
type Side<'a, B> = (B, &'a Geo, DType);

/// `f(x_row, second_row, out_row)` for every row of `src` (and of `src2`, else an empty second
/// row), computed in `A` and written to the same row of `dst` cast to its dtype.
fn map_rows<A: Element>(
    dst: Side<'_, &mut CpuBuffer>,
    src: Side<'_, &CpuBuffer>,
    src2: Option<Side<'_, &CpuBuffer>>,
    f: &RowFn<'_, A>,
) {
    let (sb, gs, sdt) = src;
    let (m, r) = (gs.m, gs.r);
    let np = if m * r < PAR_MIN || m < 2 {
        1
    } else {
        (team::size() * team::PARTS_PER_THREAD).min(m)
    };
    let per = m.div_ceil(np.max(1));
    let chunk = |p: usize| -> Vec<A> {
        let (lo, hi) = ((p * per).min(m), ((p + 1) * per).min(m));
        let mut out = vec![A::zero(); (hi - lo) * r];
        let (mut x, mut y) = (Vec::with_capacity(r), Vec::with_capacity(r));
        for i in lo..hi {
            x.clear();
            y.clear();
            gather(sb, gs, sdt, i, &mut x);
            if let Some((b2, g2, dt2)) = src2 {
                gather(b2, g2, dt2, i, &mut y);
            }
            f(&x, &y, &mut out[(i - lo) * r..(i - lo + 1) * r]);
        }
        out
    };
    let (db, gd, ddt) = dst;
    scatter(db, gd, ddt, &team::map(np, &chunk));
}

/// Writes rows (row order, `r` each) to `dst` (geometry `g`) cast to `dt`.
fn scatter<A: Element>(dst: &mut CpuBuffer, g: &Geo, dt: DType, rows: &[Vec<A>]) {
    dispatch!(dt, D => {
        let d = elems_mut::<D>(dst);
        let mut i = 0;
        for ch in rows {
            for row in ch.chunks_exact(g.r.max(1)) {
                let b = g.base(i);
                for (&o, &v) in g.red.iter().zip(row) {
                    d[(b + o) as usize] = cast::<A, D>(v);
                }
                i += 1;
            }
        }
    })
}

fn sgn(x: f64) -> f64 {
    if x > 0.0 {
        1.0
    } else if x < 0.0 {
        -1.0
    } else {
        0.0
    }
}

/// One real float scan type: f32 rounds every partial sum (the `cumsum` rule above), and both
/// accumulate a product in f64 (cast at each write).
trait ScanElem: Element {
    fn add_round(acc: f64, v: Self) -> f64;
}
impl ScanElem for f32 {
    #[inline(always)]
    fn add_round(acc: f64, v: f32) -> f64 {
        (acc as f32 + v) as f64
    }
}
impl ScanElem for f64 {
    #[inline(always)]
    fn add_round(acc: f64, v: f64) -> f64 {
        acc + v
    }
}

/// `cumsum`/`cumprod` of contiguous rows of one real float dtype straight from `x` into `d`
/// (rows of `r`), the same values as the row-buffer path (per-op sweep rows `cumsum`, `cumprod`).
fn scan_rows<T: ScanElem>(d: &mut [T], x: &[T], r: usize, sum: bool) {
    let run = |(d, x): (&mut [T], &[T])| {
        for (d, x) in d.chunks_exact_mut(r).zip(x.chunks_exact(r)) {
            if sum {
                let mut acc = 0.0f64;
                for (j, (o, &v)) in d.iter_mut().zip(x).enumerate() {
                    acc = if j == 0 {
                        cast::<T, f64>(v)
                    } else {
                        T::add_round(acc, v)
                    };
                    *o = cast::<f64, T>(acc);
                }
            } else {
                let mut acc = 1.0f64;
                for (o, &v) in d.iter_mut().zip(x) {
                    acc *= cast::<T, f64>(v);
                    *o = cast::<f64, T>(acc);
                }
            }
        }
    };
    let block = (PAR_MIN / r).max(1) * r;
    if x.len() >= 2 * PAR_MIN && super::threads::parallel() {
        use rayon::prelude::*;
        super::threads::install(|| {
            d.par_chunks_mut(block)
                .zip(x.par_chunks(block))
                .for_each(run)
        });
    } else {
        run((d, x));
    }
}

/// The fast path of [`row_map`] for `cumsum`/`cumprod` over the last dim of contiguous f32/f64
/// `sl` into contiguous `dl` of the same dtype; false (nothing done) otherwise.
#[allow(clippy::too_many_arguments)]
fn scan_dense(
    dst: &mut CpuBuffer,
    dl: &Layout,
    ddt: DType,
    src: &CpuBuffer,
    sl: &Layout,
    sdt: DType,
    two: bool,
    op: RowOp,
) -> bool {
    let sum = match op {
        RowOp::CumSum => true,
        RowOp::CumProd => false,
        _ => return false,
    };
    let n = sl.numel();
    let r = sl.sizes().last().copied().unwrap_or(0);
    if two
        || sdt != ddt
        || !matches!(sdt, DType::F32 | DType::F64)
        || n == 0
        || r == 0
        || !sl.is_contiguous()
        || !dl.is_contiguous()
        || dl.sizes() != sl.sizes()
    {
        return false;
    }
    let (so, doff) = (sl.offset(), dl.offset());
    if sdt == DType::F32 {
        let x = &elems::<f32>(src)[so..so + n];
        scan_rows(&mut elems_mut::<f32>(dst)[doff..doff + n], x, r, sum);
    } else {
        let x = &elems::<f64>(src)[so..so + n];
        scan_rows(&mut elems_mut::<f64>(dst)[doff..doff + n], x, r, sum);
    }
    true
}

/// [`crate::backend::ReduceKernels::row_map`] on the CPU.
#[allow(clippy::too_many_arguments)]
pub(crate) fn row_map(
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
    if scan_dense(dst, dl, ddt, src, sl, sdt, src2.is_some(), op) {
        return;
    }
    let (gd, gs) = (Geo::new(dl, nred), Geo::new(sl, nred));
    let g2 = src2.map(|(b, l, dt)| (b, Geo::new(l, nred), dt));
    let s2 = g2.as_ref().map(|(b, g, dt)| (*b, g, *dt));
    let (out, input) = ((dst, &gd, ddt), (src, &gs, sdt));
    match op {
        RowOp::CumSum if sdt.is_complex() => {
            // complex64 partial sums are rounded at every step, as the real f32 scan's are
            let round = ddt != DType::C128;
            map_rows::<C128>(out, input, s2, &|x, _, o| {
                let mut acc = C128::new(0.0, 0.0);
                for (j, (&v, o)) in x.iter().zip(o.iter_mut()).enumerate() {
                    acc = if j == 0 { v } else { acc + v };
                    if round {
                        acc = C128::new(acc.re as f32 as f64, acc.im as f32 as f64);
                    }
                    *o = acc;
                }
            });
        }
        RowOp::CumProd if sdt.is_complex() => {
            // PyTorch's CPU scan: a complex128 accumulator from 1, `acc *= x` with the naive
            // product (so `1 * (inf + 0i)` is `inf + nan i`), each partial product cast to the
            // output dtype
            map_rows::<C128>(out, input, s2, &|x, _, o| {
                let mut acc = C128::new(1.0, 0.0);
                for (&v, o) in x.iter().zip(o.iter_mut()) {
                    acc *= v;
                    *o = acc;
                }
            });
        }
        RowOp::CumSumInt | RowOp::CumProdInt => {
            map_rows::<i64>(out, input, s2, &|x, _, o| {
                let mut acc = 0i64;
                for (j, (&v, o)) in x.iter().zip(o.iter_mut()).enumerate() {
                    acc = match (j, op) {
                        (0, _) => v,
                        (_, RowOp::CumSumInt) => acc.wrapping_add(v),
                        _ => acc.wrapping_mul(v),
                    };
                    *o = acc;
                }
            });
        }
        _ => {
            let round = ddt != DType::F64;
            map_rows::<f64>(out, input, s2, &|x, y, o| {
                let r = x.len();
                match op {
                    RowOp::CumSum | RowOp::CumProd => {
                        let mut acc = 0.0;
                        for (j, (&v, o)) in x.iter().zip(o.iter_mut()).enumerate() {
                            acc = match (j, op) {
                                (0, _) => v,
                                (_, RowOp::CumSum) if round => (acc + v) as f32 as f64,
                                (_, RowOp::CumSum) => acc + v,
                                _ => acc * v,
                            };
                            *o = acc;
                        }
                    }
                    RowOp::ExpShift => {
                        for j in 0..r {
                            o[j] = (x[j] - y[j]).exp();
                        }
                    }
                    RowOp::NormWeights(ord) => {
                        let v = y.first().copied().unwrap_or(0.0);
                        let cnt = x.iter().filter(|x| x.abs() == v).count().max(1) as f64;
                        for j in 0..r {
                            let x = x[j];
                            o[j] = match ord {
                                NormOrd::L1 => sgn(x),
                                NormOrd::L2 if v == 0.0 => 0.0,
                                NormOrd::L2 => x / v,
                                NormOrd::Inf | NormOrd::NegInf if x.abs() == v => sgn(x) / cnt,
                                NormOrd::Inf | NormOrd::NegInf => 0.0,
                                NormOrd::P(_) => unreachable!("internal: composed weight"),
                            };
                        }
                    }
                    RowOp::CumSumInt | RowOp::CumProdInt => unreachable!("internal: int scan"),
                }
            });
        }
    }
}
