//! The backend's front door: takes the storages' locks, matches the device buffers' variants in
//! one place ([`on_device!`]) and calls that device's [`Backend`] method. Callers pass a tensor's
//! strided data (a storage and a layout; no autograd) and get no device type back.

use super::{Backend, ScalarArith, Source};
use crate::layout::Layout;
use crate::storage::{DeviceBuffer, Storage};
use crate::tensor::TensorData;
use crate::{DType, Element, Result, Scalar};
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};

/// Binds `$B` to the backend of a buffer's device and `$b` to its payload, then evaluates
/// `$body` (the pair form binds two buffers of one device). The only match on `DeviceBuffer`:
/// a second device adds its arms here (and an error arm for buffers on different devices).
/// `$body` sees [`Device`](super::Device) and every kernel family trait (`backend/kernels/`), so
/// `$B::method` resolves.
macro_rules! on_device {
    ($buf:expr, |$B:ident, $b:ident| $body:expr) => {
        match $buf {
            DeviceBuffer::Cpu($b) => {
                #[allow(unused_imports)]
                use $crate::backend::{Device as _, kernels::*};
                type $B = $crate::backend::cpu::Cpu;
                $body
            }
        }
    };
    ($dst:expr, $src:expr, |$B:ident, $d:ident, $s:ident| $body:expr) => {
        match ($dst, $src) {
            (DeviceBuffer::Cpu($d), DeviceBuffer::Cpu($s)) => {
                #[allow(unused_imports)]
                use $crate::backend::{Device as _, kernels::*};
                type $B = $crate::backend::cpu::Cpu;
                $body
            }
        }
    };
}

// Every device `on_device!` binds implements the whole [`Backend`] (a new device adds its line).
const _: () = is_backend::<super::cpu::Cpu>();
const fn is_backend<B: Backend>() {}

pub(crate) mod attention;
pub(crate) mod conv;
mod nn;
pub(crate) mod norm;
pub(crate) mod pool;
pub(crate) mod reduce;
pub(crate) mod resample;
pub(crate) use nn::{bmm, optim_step, read_at, rowwise};
pub(crate) use nn::{
    group_norm, group_norm_backward, layer_norm, layer_norm_backward, rowwise_backward,
};

// (declared after `on_device!`, which it uses)
mod elementwise;
pub(crate) use elementwise::{
    FlatArg, any, flat_fresh1, flat_fresh1_fallback, flat_fresh2_fallback, flat_fresh2_split,
    flat_into1, flat_into2, map1, map2, map3, update_owned,
};

/// The write lock of `dst` and the read lock of a distinct `src`, taken in ascending storage id
/// order (the global lock order of `storage`).
fn lock_pair<'a>(
    dst: &'a Storage,
    src: &'a Storage,
) -> (
    RwLockWriteGuard<'a, DeviceBuffer>,
    RwLockReadGuard<'a, DeviceBuffer>,
) {
    if dst.id() < src.id() {
        let w = dst.write_device();
        (w, src.read_device())
    } else {
        let r = src.read_device();
        (dst.write_device(), r)
    }
}

/// Panics unless `l`, read at `elem` bytes per element, lies inside a buffer of `len` bytes: the
/// precondition every `unsafe` kernel call below states. A tensor's geometry satisfies it at the
/// tensor's dtype. The check keeps it true when another thread's `Module::to`
/// (`Tensor::retype_`, `tensor/retype.rs`) changes a dtype between two reads of one op: that
/// misuse ends in this panic, never in an access outside a buffer.
#[inline]
pub(super) fn assert_inside(len: usize, l: &Layout, elem: usize) {
    let span = l.storage_span();
    assert!(
        span.checked_mul(elem).is_some_and(|b| b <= len),
        "internal: a geometry of {span} elements of {elem} bytes exceeds its {len}-byte storage \
         (was a dtype changed by Module::to on another thread?)"
    );
}

/// `l` read with `sizes` (which it broadcasts to: stride 0 on new and size-1 dims).
fn broadcast_to(l: &Layout, sizes: &[usize]) -> Layout {
    let (nd, ld) = (sizes.len(), l.dim());
    let strides: smallvec::SmallVec<[usize; 6]> = (0..nd)
        .map(|i| match (i + ld).checked_sub(nd) {
            Some(j) if !(l.sizes()[j] == 1 && sizes[i] != 1) => l.strides()[j],
            _ => 0,
        })
        .collect();
    Layout::new(sizes, &strides[..], l.offset())
}

/// Copies `src` into `dst`, converting dtypes: the strided copy behind `copy_`, `contiguous`,
/// `to_dtype` and every materialisation. `src`'s sizes equal `dst`'s or broadcast to them. Both
/// are tensor geometries (inside their storages); `dst` has no internal overlap and does not
/// partially overlap `src` (the callers' overlap checks).
pub(crate) fn copy_raw(dst: &TensorData, src: &TensorData, ddt: DType, sdt: DType) {
    if dst.layout.numel() == 0 {
        // nothing to copy; an empty geometry may carry any offset (its byte offset can overflow)
        return;
    }
    let bcast;
    let sl = if src.layout.sizes() == dst.layout.sizes() {
        &src.layout
    } else {
        bcast = broadcast_to(&src.layout, dst.layout.sizes());
        &bcast
    };
    if dst.storage.same(&src.storage) {
        let mut w = dst.storage.write_device();
        assert_inside(w.len(), &dst.layout, ddt.size());
        assert_inside(w.len(), sl, sdt.size());
        on_device!(&mut *w, |B, d| {
            // SAFETY: tensor geometries lie inside their storage (checked); the caller rejected internal
            // and partial overlap, so the geometries are disjoint or identical.
            unsafe { B::copy(d, &dst.layout, ddt, Source::Same, sl, sdt) }
        });
    } else {
        let (mut w, r) = lock_pair(&dst.storage, &src.storage);
        assert_inside(w.len(), &dst.layout, ddt.size());
        assert_inside(r.len(), sl, sdt.size());
        on_device!(&mut *w, &*r, |B, d, s| {
            // SAFETY: tensor geometries lie inside their storages (checked), which are distinct; `dst`
            // has no internal overlap (caller contract).
            unsafe { B::copy(d, &dst.layout, ddt, Source::Other(s), sl, sdt) }
        });
    }
}

/// Fills `dst` (any tensor geometry, overlapping itself or not) with `v` converted to `dt`.
pub(crate) fn fill(dst: &TensorData, dt: DType, v: Scalar) {
    if dst.layout.numel() == 0 {
        return;
    }
    let mut w = dst.storage.write_device();
    assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, |B, d| {
        // SAFETY: a tensor geometry lies inside its storage (checked).
        unsafe { B::fill(d, &dst.layout, dt, v) }
    });
}

/// Writes the ramp `r` of `arange`/`linspace` (see [`CopyKernels::ramp`](super::CopyKernels))
/// into the contiguous `dst` of dtype `dt`.
pub(crate) fn ramp(dst: &TensorData, dt: DType, r: super::Ramp) {
    let n = dst.layout.numel();
    if n == 0 {
        return;
    }
    assert!(
        dst.layout.is_contiguous(),
        "internal: a ramp is written to a contiguous tensor"
    );
    let mut w = dst.storage.write_device();
    assert_inside(w.len(), &dst.layout, dt.size());
    on_device!(&mut *w, |B, d| {
        // SAFETY: the contiguous geometry, `n` elements from its offset, lies inside its
        // storage (checked).
        unsafe { B::ramp(d, dst.layout.offset(), n, dt, r) }
    });
}

/// `dst += src` element by element in logical order (repeated locations of `dst` accumulate
/// every contribution). `src`'s sizes equal or broadcast to `dst`'s; the two lie in distinct storages
/// (asserted); both are tensor geometries.
pub(crate) fn accumulate(dst: &TensorData, ddt: DType, src: &TensorData, sdt: DType) {
    assert!(
        !dst.storage.same(&src.storage),
        "internal: accumulating a storage into itself"
    );
    if dst.layout.numel() == 0 {
        return;
    }
    let bcast;
    let sl = if src.layout.sizes() == dst.layout.sizes() {
        &src.layout
    } else {
        bcast = broadcast_to(&src.layout, dst.layout.sizes());
        &bcast
    };
    let (mut w, r) = lock_pair(&dst.storage, &src.storage);
    assert_inside(w.len(), &dst.layout, ddt.size());
    assert_inside(r.len(), sl, sdt.size());
    on_device!(&mut *w, &*r, |B, d, s| {
        // SAFETY: tensor geometries lie inside their (distinct) storages (checked).
        unsafe { B::accumulate(d, &dst.layout, ddt, s, sl, sdt) }
    })
}

/// The elements of `src` (dtype `dt`) in logical order, cast to `T` (`to_vec`). Errors if the
/// geometry lies outside the storage (one shrunk by `set_`/`resize_`).
pub(crate) fn read_vec<T: Element>(src: &TensorData, dt: DType) -> Result<Vec<T>> {
    let r = src.storage.read_device();
    on_device!(&*r, |B, b| B::read::<T>(b, &src.layout, dt))
}

/// `x = x op s` over `region` of a storage held by nobody else (borrowed without its lock):
/// [`ElementwiseKernels::scalar_update`](crate::backend::ElementwiseKernels::scalar_update). False
/// (nothing done) when the storage is shared or the kernel declines.
pub(crate) fn scalar_update_owned(
    storage: &mut Storage,
    region: &Layout,
    dt: DType,
    op: ScalarArith,
    s: Scalar,
) -> bool {
    let Some(buf) = storage.get_mut_device() else {
        return false;
    };
    on_device!(buf, |B, b| B::scalar_update(b, region, dt, op, s))
}

/// Front door of the gather/scatter/index and data-movement family.
pub(crate) mod movement;
/// Front door of the sparse family.
pub(crate) mod sparse;

#[cfg(test)]
mod tests {
    use super::*;

    /// An operand read at a larger element size than its storage holds (the dtype race of
    /// `tensor/retype.rs`) stops at the front door instead of reaching the kernel.
    #[test]
    #[should_panic(expected = "exceeds its 16-byte storage")]
    fn an_operand_outside_its_buffer_panics_before_the_kernel() {
        let data = |nbytes| TensorData {
            storage: Storage::zeroed(nbytes).expect("alloc"),
            layout: Layout::contiguous(&[4]),
        };
        // four f32 in 16 bytes, read as four f64 (32 bytes)
        let (dst, src) = (data(32), data(16));
        copy_raw(&dst, &src, DType::F64, DType::F64);
    }

    #[test]
    fn an_operand_inside_its_buffer_passes() {
        let data = |nbytes| TensorData {
            storage: Storage::zeroed(nbytes).expect("alloc"),
            layout: Layout::contiguous(&[4]),
        };
        let (dst, src) = (data(32), data(32));
        fill(&src, DType::F64, Scalar::Float(2.5));
        copy_raw(&dst, &src, DType::F64, DType::F64);
        let v: Vec<f64> = read_vec(&dst, DType::F64).expect("read");
        assert_eq!(v, [2.5; 4]);
    }
}
