//! Strided copy with dtype conversion (the kernel behind `copy_`, `contiguous`, `to_dtype`,
//! `clone` and every materialisation), fill, accumulation and element reads. Unit-stride runs of the same dtype become `memcpy`;
//! transposed planes are copied in cache-line tiles. Large copies run on the rayon pool. The
//! ramp of `arange`/`linspace` is in `ramp.rs`.

use super::Cpu;
use super::elementwise::fill as fill_run;
use super::istrides;
use super::team::SharedOut;
use crate::Scalar;
use crate::backend::CopyKernels;
use crate::backend::Ramp;
use crate::backend::Source;
use crate::dtype::{Element, cast};
use crate::layout::{Layout, PAR_MIN_ELEMS, for_each_run, par_for_each_run, par_ranges};
use crate::storage::CpuBuffer;
use crate::{DType, Result, dispatch};

/// Geometry of one operand of a raw kernel: base pointer, strides (elements; 0 = broadcast) and
/// element offset.
#[derive(Clone, Copy)]
pub(crate) struct Raw<'a, P> {
    pub ptr: P,
    pub strides: &'a [isize],
    pub offset: isize,
}

/// Copies `src` (dtype `sdt`) into `dst` (dtype `ddt`) over `sizes`, converting elements.
///
/// # Safety
/// Every element addressed by both geometries over `sizes` lies inside the allocations behind the
/// pointers; `dst` has no internal overlap; `src` and `dst` are either disjoint or identical.
pub(crate) unsafe fn copy_cast(
    sizes: &[usize],
    dst: Raw<'_, *mut u8>,
    ddt: DType,
    src: Raw<'_, *const u8>,
    sdt: DType,
) {
    dispatch!(ddt, D => dispatch!(sdt, S => {
        // SAFETY: forwarded contract.
        unsafe { copy_typed::<S, D>(sizes, dst, src) }
    }))
}

unsafe fn copy_typed<S: Element, D: Element>(
    sizes: &[usize],
    dst: Raw<'_, *mut u8>,
    src: Raw<'_, *const u8>,
) {
    if let Some((r, c)) = transpose_plane(sizes, dst.strides, src.strides) {
        // SAFETY: forwarded contract.
        unsafe { copy_planes::<S, D>(sizes, r, c, dst, src) };
        return;
    }
    // addresses as integers so the range closure can run on other threads
    let (d, s) = (dst.ptr as usize, src.ptr as usize);
    par_for_each_run(
        sizes,
        [dst.strides, src.strides],
        [dst.offset, src.offset],
        PAR_MIN_ELEMS,
        |[od, os], len, [sd, ss]| {
            // SAFETY: offsets come from the validated geometry (caller contract); concurrent
            // calls write disjoint element ranges of `dst`, which does not overlap itself, and
            // `src` is either disjoint from `dst` or identical to it (then each element is read
            // and written by the same call); the converting run is made slices only when its
            // two byte ranges are disjoint.
            unsafe {
                let (d, s) = (d as *mut D, s as *const S);
                if sd == 1 && ss == 1 {
                    if S::DTYPE == D::DTYPE {
                        std::ptr::copy(s.offset(os) as *const D, d.offset(od), len);
                    } else {
                        let (dp, sp) = (d.offset(od), s.offset(os));
                        let (d0, s0) = (dp as usize, sp as usize);
                        let (d1, s1) = (d0 + len * size_of::<D>(), s0 + len * size_of::<S>());
                        if d1 <= s0 || s1 <= d0 {
                            // disjoint runs as slices, so the multiversioned loop vectorises
                            // with the widest vectors (per-op sweep row `to_f64`)
                            let (o, x) = (
                                std::slice::from_raw_parts_mut(dp, len),
                                std::slice::from_raw_parts(sp, len),
                            );
                            super::elementwise::map1(o, x, &|v| cast::<S, D>(v));
                        } else {
                            for i in 0..len {
                                *dp.add(i) = cast::<S, D>(*sp.add(i));
                            }
                        }
                    }
                } else {
                    let (mut pd, mut ps) = (d.offset(od), s.offset(os));
                    for _ in 0..len {
                        *pd = convert::<S, D>(ps);
                        pd = pd.offset(sd);
                        ps = ps.offset(ss);
                    }
                }
            }
        },
    );
}

/// Reads one element as `D`: a bit copy for equal dtypes, else [`cast`].
///
/// # Safety
/// `p` points to a valid, aligned `S`.
#[inline(always)]
unsafe fn convert<S: Element, D: Element>(p: *const S) -> D {
    if S::DTYPE == D::DTYPE {
        // SAFETY: equal dtypes mean S and D are the same type.
        unsafe { std::ptr::read(p as *const D) }
    } else {
        // SAFETY: caller contract.
        cast::<S, D>(unsafe { *p })
    }
}

/// A contiguous copy is split over the kernel team from twice this many bytes (1 MiB): below
/// it one `memcpy` on the calling thread is quicker than waking a worker.
const PAR_COPY_MIN_BYTES: usize = 1 << 19;

/// Side of the square micro-tile of the transposing copy (16 f32 = one cache line).
const T: usize = 16;

/// Side of the outer tile (keeps the pages of both operands inside the TLB).
const OUTER: usize = 128;

/// A plane worth tiling: dims `(r, c)` with `dst` unit-stride along `c` and `src` unit-stride along
/// `r` (a transpose inside the copy), both at least one micro-tile long.
fn transpose_plane(sizes: &[usize], ds: &[isize], ss: &[isize]) -> Option<(usize, usize)> {
    let c = (0..sizes.len())
        .rev()
        .find(|&d| ds[d] == 1 && sizes[d] > 1)?;
    let r = (0..sizes.len())
        .rev()
        .find(|&d| ss[d] == 1 && sizes[d] > 1)?;
    (r != c && sizes[r] >= T && sizes[c] >= T && ss[c] != 0 && ds[r] != 0).then_some((r, c))
}

/// Copies every `(r, c)` plane of the geometry with [`copy_plane`], looping over the other dims.
///
/// # Safety
/// As for [`copy_cast`].
unsafe fn copy_planes<S: Element, D: Element>(
    sizes: &[usize],
    r: usize,
    c: usize,
    dst: Raw<'_, *mut u8>,
    src: Raw<'_, *const u8>,
) {
    let mut outer = sizes.to_vec();
    outer[r] = 1;
    outer[c] = 1;
    let geo = Plane {
        rows: sizes[r],
        cols: sizes[c],
        d_row: dst.strides[r],
        s_col: src.strides[c],
    };
    let (d, s) = (dst.ptr as *mut D, src.ptr as *const S);
    for_each_run(
        &outer,
        [dst.strides, src.strides],
        [dst.offset, src.offset],
        |[od, os], len, [sd, ss]| {
            for k in 0..len as isize {
                // SAFETY: each plane is part of the validated geometry (caller contract).
                unsafe { copy_plane::<S, D>(geo, d.offset(od + k * sd), s.offset(os + k * ss)) };
            }
        },
    );
}

/// One transposed plane: `dst[i * d_row + j] = src[i + j * s_col]` for `i < rows`, `j < cols`.
#[derive(Clone, Copy)]
struct Plane {
    rows: usize,
    cols: usize,
    d_row: isize,
    s_col: isize,
}

/// Copies one plane in `T x T` micro-tiles through a stack buffer, so both sides move whole cache
/// lines (strided reads of a power-of-two pitch would otherwise thrash the cache sets), grouped
/// in outer tiles; bands of rows are spread over the rayon pool.
///
/// # Safety
/// Every element of the plane lies inside the allocations behind `d` and `s`; `dst` does not
/// overlap itself or `src`.
unsafe fn copy_plane<S: Element, D: Element>(g: Plane, d: *mut D, s: *const S) {
    let (d, s) = (d as usize, s as usize);
    let band = |i0: usize| {
        let i1 = (i0 + OUTER).min(g.rows);
        for j0 in (0..g.cols).step_by(OUTER) {
            let j1 = (j0 + OUTER).min(g.cols);
            for ii in (i0..i1).step_by(T) {
                for jj in (j0..j1).step_by(T) {
                    let (ni, nj) = ((i1 - ii).min(T), (j1 - jj).min(T));
                    // SAFETY: (ii..ii+ni, jj..jj+nj) lies inside the plane (caller contract);
                    // bands write disjoint rows of `dst`.
                    unsafe { micro_tile::<S, D>(g, d as *mut D, s as *const S, ii, jj, ni, nj) };
                }
            }
        }
    };
    let bands: Vec<usize> = (0..g.rows).step_by(OUTER).collect();
    if g.rows * g.cols >= 2 * PAR_MIN_ELEMS
        && bands.len() > 1
        && super::threads::parallel()
        && rayon::current_thread_index().is_none()
    {
        use rayon::prelude::*;
        super::threads::install(|| bands.into_par_iter().for_each(band));
    } else {
        bands.into_iter().for_each(band);
    }
}

/// Copies the `ni x nj` tile at `(i0, j0)` of a plane: `src` columns into a stack buffer, then
/// the buffer's rows out to `dst`.
///
/// # Safety
/// As for [`copy_plane`], for the tile.
#[inline(always)]
unsafe fn micro_tile<S: Element, D: Element>(
    g: Plane,
    d: *mut D,
    s: *const S,
    i0: usize,
    j0: usize,
    ni: usize,
    nj: usize,
) {
    #[cfg(target_arch = "x86_64")]
    if S::DTYPE == D::DTYPE
        && std::mem::size_of::<S>() == 4
        && ni == T
        && nj == T
        && super::elementwise::simd() >= super::elementwise::Simd::Avx2
    {
        for a in (0..T).step_by(8) {
            for b in (0..T).step_by(8) {
                // SAFETY: the 8x8 block (rows i0 + a.., columns j0 + b..) lies inside the
                // full tile (caller contract); equal dtypes of 4 bytes move as f32 bit patterns
                // (loads and stores only, no arithmetic); AVX2 was detected at run time.
                unsafe {
                    transpose8x8_avx2(
                        d.offset((i0 + a) as isize * g.d_row + (j0 + b) as isize) as *mut f32,
                        g.d_row,
                        s.offset((j0 + b) as isize * g.s_col + (i0 + a) as isize) as *const f32,
                        g.s_col,
                    )
                };
            }
        }
        return;
    }
    let mut buf = [[D::default(); T]; T];
    for (j, col) in buf.iter_mut().enumerate().take(nj) {
        // SAFETY: caller contract; column j0 + j of the tile, ni elements from row i0.
        let sp = unsafe { s.offset((j0 + j) as isize * g.s_col + i0 as isize) };
        for (i, v) in col.iter_mut().enumerate().take(ni) {
            // SAFETY: as above.
            *v = unsafe { convert::<S, D>(sp.add(i)) };
        }
    }
    for i in 0..ni {
        // SAFETY: caller contract; row i0 + i of the tile, nj elements from column j0.
        let dp = unsafe { d.offset((i0 + i) as isize * g.d_row + j0 as isize) };
        for (j, col) in buf.iter().enumerate().take(nj) {
            // SAFETY: as above.
            unsafe { *dp.add(j) = col[i] };
        }
    }
}

/// An 8x8 block of 32-bit elements transposed in registers: row `k` of `dst` (8 elements at
/// `d + k dr`) is column `k` of the block whose row `j` is the 8 contiguous elements at
/// `s + j sc`. Loads, unpacks, shuffles and lane permutes only, so any 4-byte element moves
/// bit for bit. The full 16x16 micro-tiles of the transposing copy go through four of these
/// instead of the scalar stack-buffer loop: per-op sweep `contiguous_T`, `reshape_T` on AVX2
/// (Zen 3), 1024x1024 f32 in a standalone harness 2.2 -> 1.3 ms (1000x1000: 10.8 -> 1.2 ms).
///
/// # Safety
/// The CPU supports AVX2; the 8 rows of 8 elements at `s + j sc` and at `d + k dr` lie inside
/// their allocations, and the destination rows do not overlap the source rows.
#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
unsafe fn transpose8x8_avx2(d: *mut f32, dr: isize, s: *const f32, sc: isize) {
    use std::arch::x86_64::*;
    // SAFETY: the caller's contract covers every row read and written here; AVX2 is
    // enabled for this function, as `transpose8` requires.
    unsafe {
        let mut r: [__m256; 8] =
            std::array::from_fn(|j| _mm256_loadu_ps(s.offset(j as isize * sc)));
        super::gemm_x86::transpose8(&mut r);
        for (k, v) in r.into_iter().enumerate() {
            _mm256_storeu_ps(d.offset(k as isize * dr), v);
        }
    }
}

/// Fills the geometry with one value; with `par` (a geometry without self-overlap: `zeros`,
/// `ones`, `full`, `fill_`, `zero_`, `eye` of large tensors) its runs are split over the team.
///
/// # Safety
/// As for [`copy_cast`] (`dst` may overlap itself when `par` is false: every write stores the
/// same value).
pub(crate) unsafe fn fill<T: Element>(sizes: &[usize], dst: Raw<'_, *mut u8>, v: T, par: bool) {
    if par {
        // (the address as an integer so the range closure can run on other threads)
        let d = dst.ptr as usize;
        par_for_each_run(
            sizes,
            [dst.strides],
            [dst.offset],
            PAR_MIN_ELEMS,
            |[o], len, [st]| {
                let d = d as *mut T;
                // SAFETY: offsets come from the validated geometry, which does not overlap
                // itself (caller contract), so the team's ranges write disjoint elements.
                unsafe {
                    if st == 1 {
                        fill_run(std::slice::from_raw_parts_mut(d.offset(o), len), v);
                    } else {
                        for i in 0..len as isize {
                            *d.offset(o + i * st) = v;
                        }
                    }
                }
            },
        );
        return;
    }
    let d = dst.ptr as *mut T;
    for_each_run(sizes, [dst.strides], [dst.offset], |[o], len, [st]| {
        // SAFETY: offsets come from the validated geometry.
        unsafe {
            let mut p = d.offset(o);
            if st == 1 {
                fill_run(std::slice::from_raw_parts_mut(p, len), v);
            } else {
                for _ in 0..len {
                    *p = v;
                    p = p.offset(st);
                }
            }
        }
    });
}

/// `dst += src` element by element in logical order (sequential, so `dst` may overlap itself:
/// repeated locations accumulate every contribution).
///
/// # Safety
/// As for [`copy_cast`]; `src` and `dst` must not alias.
pub(crate) unsafe fn accumulate<T: Element>(
    sizes: &[usize],
    dst: Raw<'_, *mut u8>,
    src: Raw<'_, *const u8>,
    sdt: DType,
) {
    dispatch!(sdt, S => {
        let d = dst.ptr as *mut T;
        let s = src.ptr as *const S;
        for_each_run(sizes, [dst.strides, src.strides], [dst.offset, src.offset], |[od, os], len, [sd, ss]| {
            for i in 0..len as isize {
                // SAFETY: offsets come from validated geometry (caller contract).
                unsafe {
                    let p = d.offset(od + i * sd);
                    *p = (*p).add(cast::<S, T>(*s.offset(os + i * ss)));
                }
            }
        });
    })
}

/// The elements of `l` (dtype `dt`) in logical order, cast to `T`. Errors if `l` lies outside
/// `buf` or the result cannot be allocated.
pub(crate) fn read<T: Element>(buf: &CpuBuffer, l: &Layout, dt: DType) -> Result<Vec<T>> {
    if l.storage_span() * dt.size() > buf.len() {
        crate::bail!(
            InvalidArgument,
            "to_vec",
            "tensor geometry lies outside its storage"
        );
    }
    let mut out = crate::storage::try_vec(l.numel(), "to_vec")?;
    dispatch!(dt, S => {
        if l.is_contiguous() && l.numel() > 0 {
            // one slice pass: host reads of whole tensors (targets, index lists, `to_vec`)
            // skip the strided walk's per-element bookkeeping (per-op sweep row `nll_loss`)
            let all = super::index::elems::<S>(buf);
            let xs = &all[l.offset()..l.offset() + l.numel()];
            out.extend(xs.iter().map(|&v| cast::<S, T>(v)));
            return Ok(out);
        }
        let p = buf.as_ptr() as *const S;
        for off in l.offsets() {
            // SAFETY: off < storage_span <= buffer elements (checked above); the caller holds
            // the buffer's lock for the whole loop.
            out.push(cast::<S, T>(unsafe { *p.add(off) }));
        }
    });
    Ok(out)
}

impl CopyKernels for Cpu {
    unsafe fn copy(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: Source<'_, CpuBuffer>,
        sl: &Layout,
        sdt: DType,
    ) {
        let dp = dst.as_mut_ptr();
        let (sp, other) = match src {
            Source::Other(b) => (b.as_ptr(), Some(b.len())),
            Source::Same => (dp as *const u8, None),
        };
        // same dtype, both contiguous, different buffers: one memcpy (the common case in
        // CopySlices, where the per-call bookkeeping of the strided path dominates small copies:
        // fast path F7 of `autograd/builtin/mod.rs`)
        if let Some(src_len) = other
            && ddt == sdt
            && dl.is_contiguous()
            && sl.is_contiguous()
            && dl.numel() == sl.numel()
        {
            let esz = ddt.size();
            let n = dl.numel() * esz;
            let (d0, s0) = (dl.offset() * esz, sl.offset() * esz);
            // (a geometry outside a buffer shrunk by `set_`/`resize_` takes the general path)
            if d0 + n <= dst.len() && s0 + n <= src_len {
                // Large copies are split over the kernel team: one core's copy runs at about
                // half the bandwidth two cores get (workload `copy_f32_4M`, the yardstick of
                // every memory-bound kernel; fast path F16 of `autograd/builtin/mod.rs`).
                let (d, s) = (SharedOut(dp), SharedOut(sp as *mut u8));
                par_ranges(n, PAR_COPY_MIN_BYTES, |lo, hi| {
                    // SAFETY: both byte ranges lie inside their buffers (checked just above),
                    // the buffers are distinct, so the ranges do not overlap, and the parts
                    // write disjoint byte ranges `lo..hi` of the destination.
                    unsafe {
                        std::ptr::copy_nonoverlapping(
                            s.ptr().add(s0 + lo),
                            d.ptr().add(d0 + lo),
                            hi - lo,
                        )
                    };
                });
                return;
            }
        }
        let (ds, ss) = (istrides(dl), istrides(sl));
        let d = Raw {
            ptr: dp,
            strides: &ds,
            offset: dl.offset() as isize,
        };
        let s = Raw {
            ptr: sp,
            strides: &ss,
            offset: sl.offset() as isize,
        };
        // SAFETY: forwarded contract (geometries inside the buffers; `dst` without internal
        // overlap; a source in the same buffer is disjoint from it or identical).
        unsafe { copy_cast(dl.sizes(), d, ddt, s, sdt) }
    }

    unsafe fn fill(dst: &mut CpuBuffer, dl: &Layout, dt: DType, v: Scalar) {
        let ds = istrides(dl);
        let d = Raw {
            ptr: dst.as_mut_ptr(),
            strides: &ds,
            offset: dl.offset() as isize,
        };
        // (the team only for large dense geometries, which cannot overlap themselves)
        let par = dl.numel() >= 2 * PAR_MIN_ELEMS && dl.is_non_overlapping_and_dense();
        dispatch!(dt, T => {
            // SAFETY: forwarded contract (`dl` inside the buffer; fill tolerates self-overlap:
            // every write stores the same value; `par` only without self-overlap).
            unsafe { fill::<T>(dl.sizes(), d, v.to::<T>(), par) }
        })
    }

    unsafe fn accumulate(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
    ) {
        let (ds, ss) = (istrides(dl), istrides(sl));
        let d = Raw {
            ptr: dst.as_mut_ptr(),
            strides: &ds,
            offset: dl.offset() as isize,
        };
        let s = Raw {
            ptr: src.as_ptr(),
            strides: &ss,
            offset: sl.offset() as isize,
        };
        dispatch!(ddt, T => {
            // SAFETY: forwarded contract (geometries inside distinct buffers).
            unsafe { accumulate::<T>(dl.sizes(), d, s, sdt) }
        })
    }

    fn read<T: Element>(buf: &CpuBuffer, l: &Layout, dt: DType) -> Result<Vec<T>> {
        read(buf, l, dt)
    }

    unsafe fn ramp(dst: &mut CpuBuffer, off: usize, n: usize, dt: DType, r: Ramp) {
        // SAFETY: forwarded contract (the `n` elements from `off` lie inside `dst`, which the
        // caller holds exclusively).
        unsafe { super::ramp::ramp(dst.as_mut_ptr(), off, n, dt, r) }
    }
}
