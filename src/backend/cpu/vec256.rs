//! One AVX2 vector of f32 or f64 lanes behind one trait ([`Vec256`]), for kernels that must
//! follow an exact lane order and that LLVM does not keep in registers when written over lane
//! arrays: [`super::row_sum`] (torch's inner-sum cascade), [`super::lanes`]'s `prod` and
//! [`super::extremum`]'s value scan. Every method is a single intrinsic; the kernels are
//! generic over the element type.
#![cfg(target_arch = "x86_64")]

use crate::Element;
use std::arch::x86_64::*;

/// `x` as a slice of `E` when `T` is `E` (the same dtype), else `None`.
pub(crate) fn retype<T: Element, E: Element>(x: &[T]) -> Option<&[E]> {
    // SAFETY: each dtype has exactly one element type, so equal dtypes mean `T` is `E`: the
    // same elements, retyped.
    (T::DTYPE == E::DTYPE)
        .then(|| unsafe { std::slice::from_raw_parts(x.as_ptr().cast(), x.len()) })
}

/// One AVX2 vector of `V` lanes of `E` (torch's `Vectorized<E>` on these machines). Safety of
/// every method: the CPU has AVX2.
pub(crate) trait Vec256: Copy {
    type E: Element + PartialOrd;
    /// Lanes per vector.
    const V: usize;
    unsafe fn zero() -> Self;
    /// The `V` elements from `p` (all readable), in lane order.
    unsafe fn load(p: *const Self::E) -> Self;
    unsafe fn add(self, o: Self) -> Self;
    unsafe fn mul(self, o: Self) -> Self;
    /// Lanes of `o` that are greater than `self`'s, else `self`'s (NaN in either: `self`'s);
    /// `vmaxps(o, self)`.
    unsafe fn max_of(self, o: Self) -> Self;
    /// As [`Vec256::max_of`] with "less".
    unsafe fn min_of(self, o: Self) -> Self;
    /// All-ones lanes where `self` is NaN.
    unsafe fn nan_mask(self) -> Self;
    /// Lanes with NaN replaced by `+0.0`.
    unsafe fn nan_to_zero(self) -> Self;
    unsafe fn or(self, o: Self) -> Self;
    /// Whether any lane's sign bit is set (of a mask: any lane set).
    unsafe fn any(self) -> bool;
    /// The lanes in order, in the first `V` elements of an 8-element array.
    unsafe fn lanes(self) -> [Self::E; 8];
}

macro_rules! vec256 {
    ($v:ty, $e:ty, $n:expr, $zero:ident, $load:ident, $add:ident, $mul:ident, $max:ident,
     $min:ident, $cmp:ident, $and:ident, $or:ident, $movemask:ident, $store:ident) => {
        impl Vec256 for $v {
            type E = $e;
            const V: usize = $n;
            #[inline(always)]
            unsafe fn zero() -> Self {
                // SAFETY: the CPU has AVX2 (trait contract); so for each method below.
                unsafe { $zero() }
            }
            #[inline(always)]
            unsafe fn load(p: *const $e) -> Self {
                // SAFETY: the $n elements from `p` are readable (caller contract); AVX2.
                unsafe { $load(p) }
            }
            #[inline(always)]
            unsafe fn add(self, o: Self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $add(self, o) }
            }
            #[inline(always)]
            unsafe fn mul(self, o: Self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $mul(self, o) }
            }
            #[inline(always)]
            unsafe fn max_of(self, o: Self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $max(o, self) }
            }
            #[inline(always)]
            unsafe fn min_of(self, o: Self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $min(o, self) }
            }
            #[inline(always)]
            unsafe fn nan_mask(self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $cmp::<_CMP_UNORD_Q>(self, self) }
            }
            #[inline(always)]
            unsafe fn nan_to_zero(self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $and(self, $cmp::<_CMP_ORD_Q>(self, self)) }
            }
            #[inline(always)]
            unsafe fn or(self, o: Self) -> Self {
                // SAFETY: AVX2 (trait contract).
                unsafe { $or(self, o) }
            }
            #[inline(always)]
            unsafe fn any(self) -> bool {
                // SAFETY: AVX2 (trait contract).
                unsafe { $movemask(self) != 0 }
            }
            #[inline(always)]
            unsafe fn lanes(self) -> [$e; 8] {
                let mut l = [0.0; 8];
                // SAFETY: `l` holds the $n lanes written; AVX2 (trait contract).
                unsafe { $store(l.as_mut_ptr(), self) };
                l
            }
        }
    };
}

vec256!(
    __m256,
    f32,
    8,
    _mm256_setzero_ps,
    _mm256_loadu_ps,
    _mm256_add_ps,
    _mm256_mul_ps,
    _mm256_max_ps,
    _mm256_min_ps,
    _mm256_cmp_ps,
    _mm256_and_ps,
    _mm256_or_ps,
    _mm256_movemask_ps,
    _mm256_storeu_ps
);
vec256!(
    __m256d,
    f64,
    4,
    _mm256_setzero_pd,
    _mm256_loadu_pd,
    _mm256_add_pd,
    _mm256_mul_pd,
    _mm256_max_pd,
    _mm256_min_pd,
    _mm256_cmp_pd,
    _mm256_and_pd,
    _mm256_or_pd,
    _mm256_movemask_pd,
    _mm256_storeu_pd
);
