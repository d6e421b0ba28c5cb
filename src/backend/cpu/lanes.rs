//! Vectorised folds of contiguous float rows: the fast paths of [`super::reduce`]'s row
//! reductions (per-op sweep rows `prod`, `norm`, `logsumexp`), each compiled for the
//! baseline, AVX2+FMA and AVX-512 and picked at run time, like `elementwise`'s loops.
//!
//! - `prod`: PyTorch's own order (four vector accumulators, see [`prod_body`]), so the
//!   product is torch's bit for bit (a test holds it to rows recorded from PyTorch); in AVX2
//!   vectors where the CPU has them. (PyTorch splits a full reduction of more than 32768
//!   elements over its threads, so that product can differ from one row's in the last bits.)
//!
//! The other folds keep `L` interleaved lane accumulators (enough independent chains to hide
//! the latency of an AVX-512 add), combine them pairwise ([`fold_pairs`]), then fold the tail
//! in order:
//!
//! - `abs_sum`: `sum(|x|)` or `sum(x^2)` in f64 lanes: the L1/L2 sums of `norm` up to their
//!   rounding order; an empty row gives the fold's `-0.0` (the zero `Iterator::sum` starts
//!   from).
//! - `logsumexp_f32`: the largest element `m` (NaN ignored) and whether a NaN was seen, then
//!   `m + ln(sum(exp(x - m)))` with `x - m` and `exp` ([`super::math::fp32`]) in f32 (as
//!   PyTorch's f32 kernel) and the sum in f64 lanes; a NaN row gives NaN and an infinite `m`
//!   gives `m`, as the f64 folds do.

use super::elementwise::{Simd, simd};
use super::math::fp32;
use crate::Element;
use crate::dtype::cast;

/// Interleaved lane accumulators of a fold.
const L: usize = 64;

/// Defines `pub(crate) fn $name` dispatching to copies of `$body` compiled for the baseline,
/// AVX2+FMA and AVX-512.
macro_rules! multiversion {
    ($(#[$doc:meta])* fn $name:ident<$($g:ident: $b:path),*>($x:ident: $t:ty) -> $r:ty = $body:ident) => {
        $(#[$doc])*
        pub(crate) fn $name<$($g: $b),*>($x: $t) -> $r {
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn avx2<$($g: $b),*>($x: $t) -> $r {
                $body::<$($g),*>($x)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,fma")]
            fn avx512<$($g: $b),*>($x: $t) -> $r {
                $body::<$($g),*>($x)
            }
            match simd() {
                // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ and FMA (detected by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => unsafe { avx512::<$($g),*>($x) },
                // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { avx2::<$($g),*>($x) },
                _ => $body::<$($g),*>($x),
            }
        }
    };
}

/// Bytes of one vector of PyTorch's CPU reduction kernels (AVX2, the capability torch 2.15
/// picks on these machines, as [`super::row_sum`]'s): `prod`'s lane count is this over the
/// element size.
const PROD_VEC_BYTES: usize = 32;

/// The product of a row in PyTorch's order (`binary_kernel_reduce_vec`'s
/// `vectorized_inner_reduction`): four vector accumulators take the groups of `4 V` elements
/// in turn (the first group is their start), are combined as `(a0 a1)(a2 a3)` lane by lane,
/// then the lanes multiply in order; the elements past the last whole group multiply in
/// order onto that (from 1 when the row has no whole group). `V` is the lanes of a
/// [`PROD_VEC_BYTES`] vector of `T`.
#[inline(always)]
fn prod_body<T: Element>(x: &[T]) -> T {
    match PROD_VEC_BYTES / std::mem::size_of::<T>() {
        8 => prod_lanes::<T, 8>(x),
        4 => prod_lanes::<T, 4>(x),
        _ => prod_lanes::<T, 1>(x),
    }
}

#[inline(always)]
fn prod_lanes<T: Element, const V: usize>(x: &[T]) -> T {
    let (groups, tail) = x.split_at(x.len() / (4 * V) * (4 * V));
    let mut out = T::one();
    let mut gs = groups.chunks_exact(4 * V);
    if let Some(first) = gs.next() {
        let mut acc = [[T::one(); V]; 4];
        for (j, a) in acc.iter_mut().enumerate() {
            a.copy_from_slice(&first[j * V..(j + 1) * V]);
        }
        for g in gs {
            for (j, a) in acc.iter_mut().enumerate() {
                for l in 0..V {
                    a[l] = a[l].mul(g[j * V + l]);
                }
            }
        }
        let lane = |l: usize| (acc[0][l].mul(acc[1][l])).mul(acc[2][l].mul(acc[3][l]));
        out = (1..V).fold(lane(0), |p, l| p.mul(lane(l)));
    }
    for &v in tail {
        out = out.mul(v);
    }
    out
}

multiversion!(
    /// [`prod_body`] over lane arrays.
    fn prod_generic<T: Element>(x: &[T]) -> T = prod_body
);

/// The product of an f32/f64 row, bit for bit PyTorch's ([`prod_body`]): in AVX2 vectors
/// when the CPU has them (LLVM spills the lane arrays of the generic form: about 3x slower on
/// the per-op sweep row `prod`), else over lane arrays.
pub(crate) fn prod<T: Element>(x: &[T]) -> T {
    #[cfg(target_arch = "x86_64")]
    if simd() != Simd::Baseline {
        use super::vec256::retype;
        use std::arch::x86_64::{__m256, __m256d};
        if let Some(x) = retype::<T, f32>(x) {
            // SAFETY: the CPU has AVX2 (AVX-512 implies it), detected by simd().
            return T::from_f64(f64::from(unsafe { x86::prod::<__m256>(x) }));
        }
        if let Some(x) = retype::<T, f64>(x) {
            // SAFETY: as above.
            return T::from_f64(unsafe { x86::prod::<__m256d>(x) });
        }
    }
    prod_generic(x)
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::vec256::Vec256;
    use crate::Element;

    /// [`super::prod_body`] in `W` vectors: the same accumulators and order, so the same bits.
    #[target_feature(enable = "avx2")]
    pub(super) fn prod<W: Vec256>(x: &[W::E]) -> W::E {
        let v = W::V;
        let groups = x.len() / (4 * v);
        let mut out = W::E::one();
        if groups > 0 {
            let p = x.as_ptr();
            // SAFETY: vector `i < 4 groups` lies inside `x` (unchecked, as `row_sum`'s loads);
            // AVX2 is enabled in this function.
            let load = |i: usize| unsafe { W::load(p.add(i * v)) };
            // SAFETY: as above.
            let mul = |a: W, b: W| unsafe { a.mul(b) };
            let mut a = [load(0), load(1), load(2), load(3)];
            for g in 1..groups {
                for (k, a) in a.iter_mut().enumerate() {
                    *a = mul(*a, load(4 * g + k));
                }
            }
            let c = mul(mul(a[0], a[1]), mul(a[2], a[3]));
            // SAFETY: AVX2 is enabled in this function.
            let lanes = unsafe { c.lanes() };
            out = lanes[1..v].iter().fold(lanes[0], |p, &l| p.mul(l));
        }
        for &e in &x[groups * 4 * v..] {
            out = out.mul(e);
        }
        out
    }
}

/// A flag type choosing `sum(x^2)` (`true`) or `sum(|x|)` for [`abs_sum`].
pub(crate) trait Squares {
    const SQ: bool;
}
/// `sum(x^2)`.
pub(crate) struct Sq;
impl Squares for Sq {
    const SQ: bool = true;
}
/// `sum(|x|)`.
pub(crate) struct Abs;
impl Squares for Abs {
    const SQ: bool = false;
}

/// Lane accumulators (`N` a power of two) combined pairwise (lane `k` with lane `k + w`,
/// halving `w`): whole-vector adds. In lane order they were a chain of `N` dependent scalar
/// adds per row, about a fifth of the per-op sweep's `norm` row (1024-element rows).
#[inline(always)]
fn fold_pairs<const N: usize>(mut acc: [f64; N]) -> f64 {
    let mut w = N;
    while w > 1 {
        w /= 2;
        for k in 0..w {
            acc[k] += acc[k + w];
        }
    }
    acc[0]
}

#[inline(always)]
fn abs_sum_body<T: Element, S: Squares>(x: &[T]) -> f64 {
    if x.is_empty() {
        return std::iter::empty::<f64>().sum();
    }
    let term = |v: T| {
        let b = cast::<T, f64>(v);
        if S::SQ { b * b } else { b.abs() }
    };
    let mut acc = [0.0f64; L];
    let chunks = x.chunks_exact(L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..L {
            acc[l] += term(ch[l]);
        }
    }
    fold_pairs(acc) + tail.iter().map(|&v| term(v)).sum::<f64>()
}

multiversion!(
    /// `sum(x^2)` or `sum(|x|)` of a row in f64 (see the module doc).
    fn abs_sum<T: Element, S: Squares>(x: &[T]) -> f64 = abs_sum_body
);

/// Lanes of the logsumexp folds (each `exp` needs many registers of its own).
const LSE_L: usize = 16;

#[inline(always)]
#[allow(clippy::eq_op)]
fn lse_f32_body(x: &[f32]) -> f64 {
    let mut mx = [f32::NEG_INFINITY; LSE_L];
    let mut nan = [false; LSE_L];
    let chunks = x.chunks_exact(LSE_L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..LSE_L {
            let v = ch[l];
            mx[l] = if v > mx[l] { v } else { mx[l] };
            nan[l] |= v != v;
        }
    }
    let mut m = f32::NEG_INFINITY;
    let mut any_nan = nan.iter().any(|&b| b);
    for &v in mx.iter().chain(tail) {
        m = if v > m { v } else { m };
        any_nan |= v != v;
    }
    if any_nan {
        return f64::NAN;
    }
    if m.is_infinite() {
        return m as f64;
    }
    let mut acc = [0.0f64; LSE_L];
    let chunks = x.chunks_exact(LSE_L);
    let tail = chunks.remainder();
    for ch in chunks {
        for l in 0..LSE_L {
            acc[l] += fp32::exp(ch[l] - m) as f64;
        }
    }
    let mut s = fold_pairs(acc);
    for &v in tail {
        s += fp32::exp(v - m) as f64;
    }
    m as f64 + s.ln()
}

multiversion!(
    /// `logsumexp` of an f32 row (see the module doc; an empty row gives `-inf`).
    fn logsumexp_f32<>(x: &[f32]) -> f64 = lse_f32_body
);

#[cfg(test)]
mod tests {
    use super::*;

    /// `x.view(1, -1).prod(-1)` in PyTorch 2.15 (AVX2 build) of the rows
    /// `1 + ((37 i) % 101 - 50) 1e-3` (made in f64, then cast) of these lengths, as bits.
    #[test]
    fn products_are_pytorchs_bit_for_bit() {
        let lens = [0, 1, 31, 32, 33, 63, 64, 65, 100, 257, 1024, 1031];
        let row = |n: usize| (0..n).map(|i| 1.0 + (((i * 37) % 101) as f64 - 50.0) * 1e-3);
        let f32_bits: [u32; 12] = [
            0x3f800000, 0x3f733333, 0x3f7c70ba, 0x3f78e7f8, 0x3f7ea187, 0x3f7ffc73, 0x3f753c17,
            0x3f740231, 0x3f71d984, 0x3f606967, 0x3f1be6d0, 0x3f1d7799,
        ];
        let f64_bits: [u64; 12] = [
            0x3ff0000000000000,
            0x3fee666666666666,
            0x3fef8e17a5063294,
            0x3fef1cffc2f8496a,
            0x3fefd431ad160fb5,
            0x3fefff8f01f7d1fa,
            0x3feea7835e8eb11a,
            0x3fee80468d71d17f,
            0x3fee3b3127291ea8,
            0x3fec0d2cb03d1f34,
            0x3fe37cdbc6b5cd6e,
            0x3fe3aef4f714f3d0,
        ];
        for (k, &n) in lens.iter().enumerate() {
            let x32: Vec<f32> = row(n).map(|v| v as f32).collect();
            let x64: Vec<f64> = row(n).collect();
            assert_eq!(prod(&x32).to_bits(), f32_bits[k], "f32 row of {n}");
            assert_eq!(prod(&x64).to_bits(), f64_bits[k], "f64 row of {n}");
            // the lane-array form (CPUs without AVX2)
            assert_eq!(prod_generic(&x32).to_bits(), f32_bits[k], "f32 row of {n}");
            assert_eq!(prod_generic(&x64).to_bits(), f64_bits[k], "f64 row of {n}");
        }
    }

    #[test]
    fn rows_match_the_f64_formula() {
        let x: Vec<f32> = (0..1000)
            .map(|i| ((i * 37) % 101) as f32 * 0.3 - 15.0)
            .collect();
        let m = x.iter().fold(f64::NEG_INFINITY, |a, &v| a.max(v as f64));
        let want = m + x.iter().map(|&v| (v as f64 - m).exp()).sum::<f64>().ln();
        assert!((logsumexp_f32(&x) - want).abs() < 1e-6 * want.abs());
        assert!(logsumexp_f32(&[1.0, f32::NAN, 2.0]).is_nan());
        assert_eq!(logsumexp_f32(&[f32::INFINITY, 1.0]), f64::INFINITY);
        assert_eq!(logsumexp_f32(&[f32::NEG_INFINITY; 3]), f64::NEG_INFINITY);
        assert_eq!(logsumexp_f32(&[]), f64::NEG_INFINITY);
    }
}
