//! `x = x op s` over a region of a buffer borrowed exclusively (the in-place scalar update behind
//! CopySlices' fast path): a flat vectorised loop, split over the rayon pool when large, for a
//! dense region, else a walk of the region's runs.

use super::elementwise::update1;
use crate::backend::ScalarArith;
use crate::layout::{Layout, PAR_MIN_ELEMS, for_each_run, par_ranges};
use crate::storage::CpuBuffer;
use crate::{DType, Element, Scalar};

/// See [`crate::backend::ElementwiseKernels::scalar_update`]. The values are those of the general
/// arithmetic kernel: `s` is converted to the element type, then `x * v` or `x / v`.
pub(super) fn update_region(
    buf: &mut CpuBuffer,
    region: &Layout,
    dt: DType,
    op: ScalarArith,
    s: Scalar,
) -> bool {
    macro_rules! go {
        ($T:ty) => {{
            let v: $T = s.to::<$T>();
            match op {
                ScalarArith::Mul => update::<$T>(buf, region, &move |x: $T| x * v),
                ScalarArith::Div => update::<$T>(buf, region, &move |x: $T| x / v),
            }
        }};
    }
    match dt {
        DType::F32 => go!(f32),
        DType::F64 => go!(f64),
        _ => false,
    }
}

/// `x = f(x)` over the elements of `region` in `buf`; false when `region` may name an element
/// twice. Lying inside `buf` is asserted for a non-empty region.
#[inline]
fn update<T: Element>(buf: &mut CpuBuffer, region: &Layout, f: &(impl Fn(T) -> T + Sync)) -> bool {
    if region.numel() == 0 {
        // (its offset may lie anywhere: no pointer is formed from it)
        return true;
    }
    let dense = region.is_non_overlapping_and_dense();
    if !dense && !region.is_surely_injective() {
        return false;
    }
    assert!(
        region.storage_span() * std::mem::size_of::<T>() <= buf.len(),
        "internal: a region outside its storage"
    );
    let base = buf.as_mut_ptr() as *mut T;
    if dense {
        let p = base as usize + region.offset() * std::mem::size_of::<T>();
        par_ranges(region.numel(), PAR_MIN_ELEMS, |lo, hi| {
            // SAFETY: a dense region covers numel elements from its offset, inside the buffer
            // (asserted above); `buf` is borrowed exclusively and concurrent calls get disjoint
            // ranges [lo, hi).
            let x = unsafe { std::slice::from_raw_parts_mut((p as *mut T).add(lo), hi - lo) };
            update1(x, f);
        });
        return true;
    }
    let istrides: smallvec::SmallVec<[isize; 4]> =
        region.strides().iter().map(|&s| s as isize).collect();
    for_each_run(
        region.sizes(),
        [&istrides],
        [region.offset() as isize],
        |[o], len, [st]| {
            for k in 0..len as isize {
                // SAFETY: every offset the walk yields is an element of `region`, inside the
                // buffer (asserted above) and named once (injective); `buf` is borrowed
                // exclusively.
                unsafe {
                    let p = base.offset(o + k * st);
                    *p = f(*p);
                }
            }
        },
    );
    true
}
