//! Row sums in PyTorch's inner-sum order (`vectorized_inner_sum` of `SumKernel.cpp`): the
//! kernel of `sum`, `mean` and `nansum` over a contiguous last dim, bit for bit torch's result.
//! [`row_sum`] is the order written once over lane arrays, for every element type and
//! conversion; [`dense`] runs the same order in AVX2 vectors for f32/f64 rows (LLVM spills and
//! re-packs the lane arrays of the generic form around every cascade step: 1.4-1.7x slower on
//! a 1024-element row), and a test holds the two to the same bits.

use super::elementwise::Simd;
use crate::Element;

/// Bytes of one vector of PyTorch's CPU sum kernels (AVX2, the capability torch 2.15 picks on
/// these machines): the lane count of [`row_sum`] is `ROW_VEC_BYTES / size_of::<A>()`.
const ROW_VEC_BYTES: usize = 32;
/// Independent vector accumulators of [`row_sum`] (torch's `ilp_factor`).
const ROW_ILP: usize = 4;
/// Cascade levels of [`row_sum`] (torch's `num_levels`).
const ROW_LEVELS: usize = 4;

/// `ceil(log2(x))`, 1 for `x <= 2` (torch's `utils::CeilLog2`).
fn ceil_log2(x: usize) -> usize {
    if x <= 2 {
        1
    } else {
        (usize::BITS - (x - 1).leading_zeros()) as usize
    }
}

/// The sum of one contiguous row in PyTorch's inner-sum order (`vectorized_inner_sum` of
/// `SumKernel.cpp`): the row is read as vectors of `V` lanes, vector `i` goes to accumulator
/// `i % ROW_ILP`, whose sums cascade up [`ROW_LEVELS`] levels every `2^p` steps; the leftover
/// vectors join accumulator 0, the accumulators are added in order; the elements past the last
/// whole vector are added in order from zero, then the lanes in order. Rows shorter than one
/// vector take torch's scalar path (`scalar_inner_sum`): the same order with `V = 1`.
#[inline(always)]
fn row_sum_body<S: Copy, A: Element, const V: usize>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    let vecs = x.len() / V;
    let (body, tail) = x.split_at(vecs * V);
    let groups = vecs / ROW_ILP;
    let power = 4.max(ceil_log2(groups) / ROW_LEVELS);
    let (step, mask) = (1usize << power, (1usize << power) - 1);
    let mut acc = [[[A::zero(); V]; ROW_ILP]; ROW_LEVELS];
    let add_group = |acc: &mut [[A; V]; ROW_ILP], g: &[S]| {
        for (k, v) in g.chunks_exact(V).enumerate() {
            for l in 0..V {
                acc[k][l] = acc[k][l].add(conv(v[l]));
            }
        }
    };
    let mut gs = body.chunks_exact(V * ROW_ILP);
    let mut i = 0;
    while i + step <= groups {
        for g in gs.by_ref().take(step) {
            add_group(&mut acc[0], g);
        }
        i += step;
        for j in 1..ROW_LEVELS {
            let (lo, hi) = acc.split_at_mut(j);
            for k in 0..ROW_ILP {
                for l in 0..V {
                    hi[0][k][l] = hi[0][k][l].add(lo[j - 1][k][l]);
                    lo[j - 1][k][l] = A::zero();
                }
            }
            if i & (mask << (j * power)) != 0 {
                break;
            }
        }
    }
    for g in gs.by_ref() {
        add_group(&mut acc[0], g);
    }
    let mut part = acc[0];
    for level in &acc[1..] {
        for k in 0..ROW_ILP {
            for l in 0..V {
                part[k][l] = part[k][l].add(level[k][l]);
            }
        }
    }
    for v in gs.remainder().chunks_exact(V) {
        for (p, &e) in part[0].iter_mut().zip(v) {
            *p = p.add(conv(e));
        }
    }
    let (first, rest) = part.split_at_mut(1);
    for pk in rest.iter() {
        for (p, &e) in first[0].iter_mut().zip(pk) {
            *p = p.add(e);
        }
    }
    let mut s = A::zero();
    for &v in tail {
        s = s.add(conv(v));
    }
    for &p in &part[0] {
        s = s.add(p);
    }
    s
}

/// [`row_sum_body`] with `V` = the lanes of one [`ROW_VEC_BYTES`] vector of `A`.
#[inline(always)]
fn row_sum_lanes<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    // (torch's vector path needs one whole vector of the element type `S`)
    if x.len() < ROW_VEC_BYTES / std::mem::size_of::<S>().max(1) {
        return row_sum_body::<S, A, 1>(x, conv);
    }
    match ROW_VEC_BYTES / std::mem::size_of::<A>() {
        8 => row_sum_body::<S, A, 8>(x, conv),
        4 => row_sum_body::<S, A, 4>(x, conv),
        2 => row_sum_body::<S, A, 2>(x, conv),
        _ => row_sum_body::<S, A, 1>(x, conv),
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2")]
fn row_sum_avx2<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A) -> A {
    row_sum_lanes(x, conv)
}

/// The sum of one contiguous row in `A` in PyTorch's order ([`row_sum_body`]), each element
/// converted by `conv`; the same bits at every vector width (no contraction).
#[inline]
pub(crate) fn row_sum<S: Copy, A: Element>(x: &[S], conv: &impl Fn(S) -> A, simd: Simd) -> A {
    match simd {
        // SAFETY: the caller detected AVX2 (`Simd::Avx512` includes it) on the running CPU. The lanes are 32-byte vectors, so an AVX-512 copy
        // gains nothing, and on Zen 4 it lost: `count_nonzero` (bool -> i64 rows) 0.85 ms per
        // [1024, 1024], against 0.36 for the AVX2 copy.
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 | Simd::Avx512 => unsafe { row_sum_avx2(x, conv) },
        _ => row_sum_lanes(x, conv),
    }
}

/// [`row_sum`] of a row read as is (`sum`, `mean`): the vector form for f32/f64 rows when
/// the CPU has it ([`dense`]), else the generic one.
#[inline]
pub(crate) fn plain<T: Element>(x: &[T], simd: Simd) -> T {
    match dense::<T, false>(x, simd) {
        Some(s) => T::from_f64(s),
        None => row_sum(x, &|v: T| v, simd),
    }
}

/// [`row_sum`] of an f32 or f64 row in its own type, each element read as is or, with
/// `NAN_ZERO`, NaN as `+0.0` (`nansum`), in AVX2 vectors: the value as f64 (exactly the
/// element type's sum). `None` for other element types, rows shorter than one vector (torch's
/// scalar path) and CPUs without AVX2 (per-op sweep rows `sum`, `mean`, `nansum`).
#[inline]
pub(crate) fn dense<T: Element, const NAN_ZERO: bool>(x: &[T], simd: Simd) -> Option<f64> {
    #[cfg(target_arch = "x86_64")]
    if simd != Simd::Baseline && x.len() >= ROW_VEC_BYTES / std::mem::size_of::<T>() {
        use super::vec256::retype;
        use std::arch::x86_64::{__m256, __m256d};
        if let Some(x) = retype::<T, f32>(x) {
            // SAFETY: `simd` is AVX2 or AVX-512, detected on the running CPU.
            return Some(f64::from(unsafe { x86::sum::<__m256, NAN_ZERO>(x) }));
        }
        if let Some(x) = retype::<T, f64>(x) {
            // SAFETY: as above.
            return Some(unsafe { x86::sum::<__m256d, NAN_ZERO>(x) });
        }
    }
    let _ = (x, simd);
    None
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::vec256::Vec256;
    use super::{ROW_ILP, ROW_LEVELS, ceil_log2};
    use crate::Element;

    /// [`super::row_sum_body`] in `W` vectors: the same accumulators, cascade and order (see
    /// there), so the same bits. `x` holds at least one vector.
    #[target_feature(enable = "avx2")]
    #[allow(clippy::needless_range_loop)] // (indexed as `row_sum_body` and torch's loop are)
    pub(super) fn sum<W: Vec256, const NAN_ZERO: bool>(x: &[W::E]) -> W::E {
        let v = W::V;
        let vecs = x.len() / v;
        let groups = vecs / ROW_ILP;
        let power = 4.max(ceil_log2(groups) / ROW_LEVELS);
        let (step, mask) = (1usize << power, (1usize << power) - 1);
        let load = |i: usize| {
            debug_assert!(i < vecs);
            // SAFETY: every caller's `i < vecs`, so vector `i` lies inside `x` (unchecked: the
            // bound checks were a third of the loop); AVX2 is enabled here.
            unsafe {
                let w = W::load(x.as_ptr().add(i * v));
                if NAN_ZERO { w.nan_to_zero() } else { w }
            }
        };
        // SAFETY: AVX2 is enabled in this function.
        let z = unsafe { W::zero() };
        // SAFETY: as above.
        let add = |a: W, b: W| unsafe { a.add(b) };
        let mut acc = [[z; ROW_ILP]; ROW_LEVELS];
        let (mut g, mut i) = (0, 0);
        while i + step <= groups {
            for _ in 0..step {
                for k in 0..ROW_ILP {
                    acc[0][k] = add(acc[0][k], load(g * ROW_ILP + k));
                }
                g += 1;
            }
            i += step;
            for j in 1..ROW_LEVELS {
                for k in 0..ROW_ILP {
                    acc[j][k] = add(acc[j][k], acc[j - 1][k]);
                    acc[j - 1][k] = z;
                }
                if i & (mask << (j * power)) != 0 {
                    break;
                }
            }
        }
        for g in g..groups {
            for k in 0..ROW_ILP {
                acc[0][k] = add(acc[0][k], load(g * ROW_ILP + k));
            }
        }
        let mut part = acc[0];
        for level in &acc[1..] {
            for k in 0..ROW_ILP {
                part[k] = add(part[k], level[k]);
            }
        }
        for r in groups * ROW_ILP..vecs {
            part[0] = add(part[0], load(r));
        }
        for k in 1..ROW_ILP {
            part[0] = add(part[0], part[k]);
        }
        let mut s = W::E::zero();
        #[allow(clippy::eq_op)]
        for &e in &x[vecs * v..] {
            s = s.add(if NAN_ZERO && e != e { W::E::zero() } else { e });
        }
        // SAFETY: AVX2 is enabled in this function.
        for &l in &unsafe { part[0].lanes() }[..v] {
            s = s.add(l);
        }
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::elementwise::simd;

    /// Rows of every length up to a few cascade steps (and a few long ones) with values of
    /// mixed magnitude, so a different order would round differently; every 97th element is
    /// NaN, ±inf or -0.0 in the second pass.
    fn rows() -> Vec<Vec<f64>> {
        let mut next = crate::backend::cpu::test_uniform(0x2545_f491_4f6c_dd1d);
        let lens = (0..700).chain([1023, 1024, 1025, 4096, 8195, 70_001]);
        let mut out = Vec::new();
        for special in [false, true] {
            for n in lens.clone() {
                let row = (0..n)
                    .map(|i| match (special, i % 97, i % 3) {
                        (true, 5, 0) => f64::NAN,
                        (true, 5, 1) => f64::INFINITY,
                        (true, 5, _) => -0.0,
                        _ => (next() - 0.5) * 10f64.powi((next() * 8.0) as i32 - 4),
                    })
                    .collect();
                out.push(row);
            }
        }
        out
    }

    #[allow(clippy::eq_op)]
    fn nan_zero<T: Element>(v: T) -> T {
        if v != v { T::zero() } else { v }
    }

    /// The vector forms of `x` against the generic order, as is and with NaN as zero, and
    /// whether the vector form ran (wherever the CPU has it, from one whole vector on).
    fn check<T: Element>(x: &[T], simd: Simd) {
        let bits = |v: T| v.to_f64().to_bits();
        let (dt, n) = (T::DTYPE, x.len());
        let generic = row_sum(x, &|v: T| v, Simd::Baseline);
        assert_eq!(bits(plain(x, simd)), bits(generic), "{dt:?} n={n}");
        if let Some(d) = dense::<T, true>(x, simd) {
            let generic = row_sum(x, &nan_zero::<T>, Simd::Baseline);
            assert_eq!(bits(T::from_f64(d)), bits(generic), "{dt:?} nan n={n}");
        }
        let vector = cfg!(target_arch = "x86_64") && simd != Simd::Baseline;
        let lanes = ROW_VEC_BYTES / std::mem::size_of::<T>();
        assert_eq!(dense::<T, false>(x, simd).is_some(), vector && n >= lanes);
    }

    #[test]
    fn vector_form_is_the_generic_order_bit_for_bit() {
        let simd = simd();
        for row in rows() {
            let x32: Vec<f32> = row.iter().map(|&v| v as f32).collect();
            check(&x32, simd);
            check(&row, simd);
        }
    }
}
