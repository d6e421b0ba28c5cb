//! Strided copy with dtype conversion: the kernel behind `copy_`, `contiguous`, `to_dtype`,
//! `clone` and every materialisation. Unit-stride runs of the same dtype become `memcpy`; 2-D
//! transposes are copied in cache-sized tiles.

use crate::dtype::{Element, cast};
use crate::layout::for_each_run;
use crate::{DType, dispatch};

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
    let d = dst.ptr as *mut D;
    let s = src.ptr as *const S;
    if sizes.len() == 2 && tile_worthy(sizes, dst.strides, src.strides) {
        // SAFETY: forwarded contract.
        unsafe {
            copy_tiled::<S, D>(
                sizes,
                d,
                dst.strides,
                dst.offset,
                s,
                src.strides,
                src.offset,
            )
        };
        return;
    }
    for_each_run(
        sizes,
        [dst.strides, src.strides],
        [dst.offset, src.offset],
        |[od, os], len, [sd, ss]| {
            // SAFETY: offsets come from the validated geometry (caller contract).
            unsafe {
                if sd == 1 && ss == 1 {
                    if S::DTYPE == D::DTYPE {
                        std::ptr::copy(s.offset(os) as *const D, d.offset(od), len);
                    } else {
                        let (dp, sp) = (d.offset(od), s.offset(os));
                        for i in 0..len {
                            *dp.add(i) = cast::<S, D>(*sp.add(i));
                        }
                    }
                } else {
                    let (mut pd, mut ps) = (d.offset(od), s.offset(os));
                    for _ in 0..len {
                        *pd = cast::<S, D>(*ps);
                        pd = pd.offset(sd);
                        ps = ps.offset(ss);
                    }
                }
            }
        },
    );
}

fn tile_worthy(sizes: &[usize], ds: &[isize], ss: &[isize]) -> bool {
    sizes[0] >= 32 && sizes[1] >= 32 && ds[1] == 1 && ss[0] == 1 && ss[1] > 1
}

/// Cache-blocked 2-D copy for transposes (dst row-major, src column-major).
unsafe fn copy_tiled<S: Element, D: Element>(
    sizes: &[usize],
    d: *mut D,
    ds: &[isize],
    doff: isize,
    s: *const S,
    ss: &[isize],
    soff: isize,
) {
    const B: usize = 32;
    let (rows, cols) = (sizes[0], sizes[1]);
    for i0 in (0..rows).step_by(B) {
        for j0 in (0..cols).step_by(B) {
            for i in i0..(i0 + B).min(rows) {
                for j in j0..(j0 + B).min(cols) {
                    // SAFETY: (i, j) is inside sizes; caller guarantees geometry is in bounds.
                    unsafe {
                        let v = *s.offset(soff + i as isize * ss[0] + j as isize * ss[1]);
                        *d.offset(doff + i as isize * ds[0] + j as isize) = cast::<S, D>(v);
                    }
                }
            }
        }
    }
}

/// Fills the geometry with one value.
///
/// # Safety
/// As for [`copy_cast`] (`dst` may overlap itself: every write stores the same value).
pub(crate) unsafe fn fill<T: Element>(sizes: &[usize], dst: Raw<'_, *mut u8>, v: T) {
    let d = dst.ptr as *mut T;
    for_each_run(sizes, [dst.strides], [dst.offset], |[o], len, [st]| {
        // SAFETY: offsets come from the validated geometry.
        unsafe {
            let mut p = d.offset(o);
            if st == 1 {
                std::slice::from_raw_parts_mut(p, len).fill(v);
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
