//! Matrix-multiply kernel: `dst = lhs @ rhs` over arbitrary (signed) strides. On x86_64 with
//! AVX2+FMA, f32/f64 use the packed kernel in `gemm_x86`; otherwise f32/f64 go through the
//! `gemm` crate. Both run multithreaded for large products (the packed kernel on the kernel
//! team, `gemm` on rayon). c64/c128 use the unfused serial loop `complex_rounded` (MKL's
//! rounding); every other dtype uses a simple triple loop (callers widen f16/bf16 to f32
//! first).

use super::Cpu;
use super::team::SharedOut;
use crate::DType;
use crate::Element;
use crate::backend::LinalgKernels;
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use std::any::TypeId;

/// Strided 2-D operand: base pointer (already offset) with row and column strides in elements.
#[derive(Clone, Copy)]
pub(crate) struct Mat<P> {
    pub ptr: P,
    pub rs: isize,
    pub cs: isize,
}

/// Products at least this large (m*n*k) run the packed kernel on every kernel team thread.
#[cfg(target_arch = "x86_64")]
const PACKED_PAR_THRESHOLD: usize = 64 * 64 * 64;

impl<T> Mat<*mut T> {
    fn cast<U>(self) -> Mat<*mut U> {
        Mat {
            ptr: self.ptr.cast(),
            rs: self.rs,
            cs: self.cs,
        }
    }
}

impl<T> Mat<*const T> {
    fn cast<U>(self) -> Mat<*const U> {
        Mat {
            ptr: self.ptr.cast(),
            rs: self.rs,
            cs: self.cs,
        }
    }
}

/// Forwards to the packed AVX2 kernel.
///
/// # Safety
/// As [`matmul`], plus AVX2+FMA must be available.
#[cfg(target_arch = "x86_64")]
unsafe fn packed<K: super::gemm_x86::Kernel>(
    m: usize,
    n: usize,
    k: usize,
    dst: Mat<*mut K>,
    lhs: Mat<*const K>,
    rhs: Mat<*const K>,
    threads: usize,
) {
    use super::gemm_x86::{Strided, gemm};
    let s = |p: Mat<*const K>| Strided {
        ptr: p.ptr,
        rs: p.rs,
        cs: p.cs,
    };
    let c = Strided {
        ptr: dst.ptr,
        rs: dst.rs,
        cs: dst.cs,
    };
    // SAFETY: forwarded contract.
    unsafe { gemm::<K>(m, n, k, c, s(lhs), s(rhs), threads) };
}

/// Products at least this large (m*n*k) run gemm with rayon parallelism.
const PAR_THRESHOLD: usize = 96 * 96 * 96;

/// Computes `dst[m,n] = lhs[m,k] @ rhs[k,n]`, overwriting `dst`.
///
/// # Safety
/// Every pointer plus its strides must address valid elements of type `T` for the given sizes;
/// `dst` must not alias `lhs`/`rhs` and must have no internal overlap.
pub(crate) unsafe fn matmul<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    dst: Mat<*mut T>,
    lhs: Mat<*const T>,
    rhs: Mat<*const T>,
) {
    // SAFETY: forwarded contract.
    unsafe { matmul_on(m, n, k, dst, lhs, rhs, true) }
}

/// [`matmul`] on the calling thread only: for products that are one part of a parallel
/// kernel (the fused attention blocks), which would otherwise split into stripes that all
/// run on this thread anyway.
///
/// # Safety
/// As [`matmul`].
pub(crate) unsafe fn matmul_serial<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    dst: Mat<*mut T>,
    lhs: Mat<*const T>,
    rhs: Mat<*const T>,
) {
    // SAFETY: forwarded contract.
    unsafe { matmul_on(m, n, k, dst, lhs, rhs, false) }
}

/// [`matmul`], multithreaded for large products only when `parallel`.
///
/// # Safety
/// As [`matmul`].
unsafe fn matmul_on<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    dst: Mat<*mut T>,
    lhs: Mat<*const T>,
    rhs: Mat<*const T>,
    parallel: bool,
) {
    if m == 0 || n == 0 {
        return;
    }
    let id = TypeId::of::<T>();
    #[cfg(target_arch = "x86_64")]
    if (id == TypeId::of::<f32>() || id == TypeId::of::<f64>()) && super::gemm_x86::available() {
        let threads = if parallel && m * n * k >= PACKED_PAR_THRESHOLD {
            super::team::size()
        } else {
            1
        };
        // SAFETY: T is f32 or f64 (checked above), so the pointer casts are identity casts;
        // validity, bounds and non-aliasing are this function's contract; AVX2+FMA checked.
        unsafe {
            if id == TypeId::of::<f32>() {
                packed::<f32>(m, n, k, dst.cast(), lhs.cast(), rhs.cast(), threads);
            } else {
                packed::<f64>(m, n, k, dst.cast(), lhs.cast(), rhs.cast(), threads);
            }
        }
        return;
    }
    if id == TypeId::of::<gemm::c32>() || id == TypeId::of::<gemm::c64>() {
        // SAFETY: forwarded contract.
        unsafe { complex_rounded(m, n, k, dst, lhs, rhs) };
        return;
    }
    let gemmable = id == TypeId::of::<f32>() || id == TypeId::of::<f64>();
    if gemmable && k > 0 {
        let par = if parallel && m * n * k >= PAR_THRESHOLD && super::threads::parallel() {
            gemm::Parallelism::Rayon(super::threads::num_threads())
        } else {
            gemm::Parallelism::None
        };
        // SAFETY: T is one of gemm's supported types (checked above); pointers/strides are
        // valid per this function's contract. alpha (dst scale) is unused as read_dst = false.
        let call = move || unsafe {
            gemm::gemm::<T>(
                m,
                n,
                k,
                dst.ptr,
                dst.cs,
                dst.rs,
                false,
                lhs.ptr,
                lhs.cs,
                lhs.rs,
                rhs.ptr,
                rhs.cs,
                rhs.rs,
                T::zero(),
                T::one(),
                false,
                false,
                false,
                par,
            );
        };
        if matches!(par, gemm::Parallelism::None) {
            call();
        } else {
            // gemm's rayon parallelism runs on the crate's pool (`threads::install`)
            let call = super::threads::AssertSend(call);
            super::threads::install(move || {
                let call = call;
                (call.0)()
            });
        }
        return;
    }
    for i in 0..m as isize {
        for j in 0..n as isize {
            let mut acc = T::zero();
            for p in 0..k as isize {
                // SAFETY: indices are within the sizes the caller vouched for.
                unsafe {
                    let a = *lhs.ptr.offset(i * lhs.rs + p * lhs.cs);
                    let b = *rhs.ptr.offset(p * rhs.rs + j * rhs.cs);
                    acc = acc.add(a.mul(b));
                }
            }
            // SAFETY: (i, j) is inside dst.
            unsafe { *dst.ptr.offset(i * dst.rs + j * dst.cs) = acc };
        }
    }
}

/// The complex product as MKL's `cgemm`/`zgemm` (PyTorch's CPU BLAS) rounds it: every complex
/// product `(ac - bd, ad + bc)` from rounded real products (no fused multiply-add, so equal
/// products cancel exactly; the `gemm` crate's fused kernel leaves the rounding residue of
/// `bd`, e.g. 2^44 for `1e30 * 0.6875`), summed over `k` in order, then scaled by BLAS's
/// `alpha = 1 + 0i` (so `inf + 0i` becomes NaN + NaN i, as in PyTorch). Rows of `dst` are
/// accumulated `i, p, j` so a unit-stride `rhs`/`dst` row streams.
///
/// # Safety
/// As [`matmul`].
unsafe fn complex_rounded<T: Element>(
    m: usize,
    n: usize,
    k: usize,
    dst: Mat<*mut T>,
    lhs: Mat<*const T>,
    rhs: Mat<*const T>,
) {
    for i in 0..m as isize {
        for j in 0..n as isize {
            // SAFETY: (i, j) is inside dst.
            unsafe { *dst.ptr.offset(i * dst.rs + j * dst.cs) = T::zero() };
        }
        for p in 0..k as isize {
            // SAFETY: (i, p) is inside lhs.
            let a = unsafe { *lhs.ptr.offset(i * lhs.rs + p * lhs.cs) };
            for j in 0..n as isize {
                // SAFETY: (p, j) is inside rhs and (i, j) inside dst, which does not alias it.
                unsafe {
                    let b = *rhs.ptr.offset(p * rhs.rs + j * rhs.cs);
                    let d = dst.ptr.offset(i * dst.rs + j * dst.cs);
                    *d = (*d).add(a.mul(b));
                }
            }
        }
        // BLAS's `alpha * (A B)` with alpha = 1 + 0i, a full complex product: an infinite
        // part makes both parts NaN (0 * inf), as PyTorch's results show
        for j in 0..n as isize {
            // SAFETY: (i, j) is inside dst.
            unsafe {
                let d = dst.ptr.offset(i * dst.rs + j * dst.cs);
                *d = T::one().mul(*d);
            }
        }
    }
}

/// See [`LinalgKernels::bmm`]: [`matmul`] over each matrix of the leading dim. A batch that
/// fills the team evenly (at least two matrices per thread, or a multiple of the thread count)
/// is split over the team by matrices, each product on one thread: per-matrix parallelism
/// synchronised the team once per product (per-op sweep row `bmm_16x64`, 16 products of
/// 64x64x64 at 0.57x PyTorch). Every product is computed the same way either way.
///
/// # Safety
/// As [`LinalgKernels::bmm`].
pub(super) unsafe fn bmm(
    out: &mut crate::storage::CpuBuffer,
    ol: &crate::layout::Layout,
    a: &crate::storage::CpuBuffer,
    al: &crate::layout::Layout,
    b: &crate::storage::CpuBuffer,
    bl: &crate::layout::Layout,
    dt: crate::DType,
) {
    let (bs, m, n) = (ol.sizes()[0], ol.sizes()[1], ol.sizes()[2]);
    let k = al.sizes()[2];
    let (os, ast, bst) = (ol.strides(), al.strides(), bl.strides());
    let threads = super::team::size();
    let by_matrix = threads > 1
        && bs >= 2
        && bs.saturating_mul(m * n * k) >= PAR_BATCH_MIN
        && (bs >= 2 * threads || bs % threads == 0);
    crate::dispatch!(dt, T => {
        let po = SharedOut((out.as_mut_ptr() as *mut T).wrapping_add(ol.offset()));
        let pa = SharedOut((a.as_ptr() as *mut T).wrapping_add(al.offset()));
        let pb = SharedOut((b.as_ptr() as *mut T).wrapping_add(bl.offset()));
        let one = |i: usize, parallel: bool| {
            let (po, pa, pb) = (po.ptr(), pa.ptr() as *const T, pb.ptr() as *const T);
            // SAFETY: the geometries lie inside their buffers and `out` is distinct from the
            // operands without internal overlap (this function's contract), so each matrix
            // `i` addresses valid elements, and distinct matrices of `out` are disjoint (the
            // parts of the team write only their own).
            unsafe {
                matmul_on::<T>(
                    m, n, k,
                    Mat { ptr: po.wrapping_add(i * os[0]), rs: os[1] as isize, cs: os[2] as isize },
                    Mat { ptr: pa.wrapping_add(i * ast[0]), rs: ast[1] as isize, cs: ast[2] as isize },
                    Mat { ptr: pb.wrapping_add(i * bst[0]), rs: bst[1] as isize, cs: bst[2] as isize },
                    parallel,
                );
            }
        };
        if by_matrix {
            super::team::run(bs, &|i| one(i, false));
        } else {
            (0..bs).for_each(|i| one(i, true));
        }
    })
}

/// Work (batch x m x n x k) from which [`bmm`] splits a batch over the team by matrices: the
/// threshold of one parallel product.
#[cfg(target_arch = "x86_64")]
const PAR_BATCH_MIN: usize = PACKED_PAR_THRESHOLD;
#[cfg(not(target_arch = "x86_64"))]
const PAR_BATCH_MIN: usize = PAR_THRESHOLD;

impl LinalgKernels for Cpu {
    unsafe fn bmm(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: &CpuBuffer,
        al: &Layout,
        b: &CpuBuffer,
        bl: &Layout,
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { bmm(out, ol, a, al, b, bl, dt) }
    }
}
