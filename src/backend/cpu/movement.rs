//! Data-movement kernels of the CPU backend that are not plain strided copies: the reversed
//! copy of `flip` (the strided copy kernel over negative source strides), the triangle zeroing
//! of `tril`/`triu`, and the `scatter_reduce` accumulation (floats in f64, integers in wrapping
//! i64, cast back to the element type).

use super::Cpu;
use super::copy::{self, Raw};
use super::gather_dim;
use super::index;
use super::index::{elems_mut, inside};
use super::istrides;
use crate::ScatterReduce;
use crate::backend::DimWalk;
use crate::backend::MovementKernels;
use crate::backend::Put;
use crate::backend::Reduce;
use crate::backend::RowPut;
use crate::backend::Source;
use crate::dtype::{Element, cast};
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Result, bail, dispatch};

/// One value of the reduction: floats in f64, integers in wrapping i64.
trait Acc: Element {
    fn pick(self, o: Self, max: bool) -> Self;
    fn div_count(self, n: usize) -> Self;
}

impl Acc for f64 {
    fn pick(self, o: Self, max: bool) -> Self {
        if self.is_nan() || o.is_nan() {
            f64::NAN
        } else if (o > self) == max && o != self {
            o
        } else {
            self
        }
    }
    fn div_count(self, n: usize) -> Self {
        self / n as f64
    }
}

impl Acc for i64 {
    fn pick(self, o: Self, max: bool) -> Self {
        if max { self.max(o) } else { self.min(o) }
    }
    fn div_count(self, n: usize) -> Self {
        self.div_euclid(n as i64)
    }
}

fn reduce_values<A: Acc>(v: &mut [A], s: &[A], r: &Reduce<'_>) {
    let mut count = vec![usize::from(r.include_self); v.len()];
    for &(t, k) in r.pairs {
        let x = s[k];
        v[t] = if count[t] == 0 {
            x
        } else {
            match r.reduce {
                ScatterReduce::Sum | ScatterReduce::Mean => v[t].add(x),
                ScatterReduce::Prod => v[t].mul(x),
                ScatterReduce::Amax => v[t].pick(x, true),
                ScatterReduce::Amin => v[t].pick(x, false),
            }
        };
        count[t] += 1;
    }
    if r.reduce == ScatterReduce::Mean {
        for (x, &n) in v.iter_mut().zip(&count) {
            if n > 1 {
                *x = x.div_count(n);
            }
        }
    }
}

/// Reduces in `A` and writes the result back into the contiguous `dl` of `dst`.
fn reduce_in<A: Acc>(
    dst: &mut CpuBuffer,
    dl: &Layout,
    src: &CpuBuffer,
    sl: &Layout,
    r: &Reduce<'_>,
    dt: DType,
) -> Result<()> {
    let mut v: Vec<A> = copy::read(dst, dl, dt)?;
    let s: Vec<A> = copy::read(src, sl, dt)?;
    if r.pairs.iter().any(|&(t, k)| t >= v.len() || k >= s.len()) {
        bail!(
            InvalidArgument,
            "scatter_reduce",
            "internal: scatter_reduce positions out of range"
        );
    }
    reduce_values(&mut v, &s, r);
    dispatch!(dt, T => {
        let d = elems_mut::<T>(dst);
        for (o, &x) in dl.offsets().zip(&v) {
            d[o] = cast::<A, T>(x);
        }
    });
    Ok(())
}

impl MovementKernels for Cpu {
    unsafe fn copy_flipped(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        flip: &[usize],
        dt: DType,
    ) {
        let ds = istrides(dl);
        let mut ss = istrides(sl);
        let mut off = sl.offset() as isize;
        for &d in flip {
            let n = sl.sizes()[d];
            if n > 0 {
                off += (n as isize - 1) * ss[d];
                ss[d] = -ss[d];
            }
        }
        let d = Raw {
            ptr: dst.as_mut_ptr(),
            strides: &ds,
            offset: dl.offset() as isize,
        };
        let s = Raw {
            ptr: src.as_ptr(),
            strides: &ss,
            offset: off,
        };
        // SAFETY: the reversed geometry addresses exactly the elements of `sl` (inside `src`,
        // caller contract); `dl` lies inside the distinct `dst` without internal overlap.
        unsafe { copy::copy_cast(dl.sizes(), d, dt, s, dt) }
    }

    fn take(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        idx: &[usize],
        dt: DType,
        op: &'static str,
    ) -> Result<()> {
        dispatch!(dt, T => index::take::<T>(
            index::elems_mut(dst), dl, index::elems(src), sl, idx, op
        ))
    }

    fn put(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: Source<'_, CpuBuffer>,
        sl: &Layout,
        p: &Put<'_>,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => {
            let s = match src {
                Source::Other(b) => Some(index::elems::<T>(b)),
                Source::Same => None,
            };
            index::put::<T>(index::elems_mut(dst), dl, s, sl, p)
        })
    }

    fn put_rows(
        dst: &mut CpuBuffer,
        g: &RowPut<'_>,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => index::put_rows::<T>(index::elems_mut(dst), g, index::elems(src), sl))
    }

    fn index_select(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        dim: usize,
        idx: &[usize],
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => index::index_select::<T>(
            index::elems_mut(dst), dl, index::elems(src), sl, dim, idx
        ))
    }

    fn tri_zero(dst: &mut CpuBuffer, dl: &Layout, dt: DType, diagonal: i64, lower: bool) {
        let nd = dl.dim();
        let (rows, cols) = (dl.sizes()[nd - 2], dl.sizes()[nd - 1]);
        let (rs, cs) = (dl.strides()[nd - 2], dl.strides()[nd - 1]);
        let mats = Layout::new(&dl.sizes()[..nd - 2], &dl.strides()[..nd - 2], dl.offset());
        if dl.numel() == 0 {
            return;
        }
        dispatch!(dt, T => {
            let d = elems_mut::<T>(dst);
            assert!(inside(dl, d.len()), "internal: tri_zero geometry outside its buffer");
            for m in mats.offsets() {
                for r in 0..rows {
                    // columns zeroed in this row: [lo, hi)
                    let edge = r as i64 + diagonal;
                    let (lo, hi) = if lower {
                        ((edge + 1).clamp(0, cols as i64) as usize, cols)
                    } else {
                        (0, edge.clamp(0, cols as i64) as usize)
                    };
                    let base = m + r * rs;
                    if cs == 1 {
                        d[base + lo..base + hi].fill(T::zero());
                    } else {
                        for c in lo..hi {
                            d[base + c * cs] = T::zero();
                        }
                    }
                }
            }
        })
    }

    fn scatter_reduce(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        r: &Reduce<'_>,
        dt: DType,
    ) -> Result<()> {
        if dt.is_float() {
            reduce_in::<f64>(dst, dl, src, sl, r, dt)
        } else {
            reduce_in::<i64>(dst, dl, src, sl, r, dt)
        }
    }

    fn nonzero(buf: &CpuBuffer, l: &Layout, dt: DType) -> Result<Vec<usize>> {
        dispatch!(dt, T => index::nonzero::<T>(index::elems(buf), l))
    }

    fn nonzero_coords(dst: &mut CpuBuffer, hits: &[usize], sizes: &[usize]) {
        index::nonzero_coords(index::elems_mut::<i64>(dst), hits, sizes)
    }

    fn gather_dim(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        index: &CpuBuffer,
        w: &DimWalk<'_>,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => gather_dim::gather::<T>(dst, dl, src, sl, index, w))
    }

    fn scatter_dim(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        index: &CpuBuffer,
        w: &DimWalk<'_>,
        dt: DType,
        accumulate: bool,
    ) -> Result<()> {
        dispatch!(dt, T => gather_dim::scatter::<T>(dst, dl, src, sl, index, w, accumulate))
    }
}
