//! Lane-parallel `max`/`min` with the first index, for f32/f64 rows read in memory order: the
//! fast path of [`super::reduce`]'s extremum fold (per-op sweep rows `amax`, `amin`,
//! `max_dim`, `min_dim`, `max_all`, `argmax`, `argmin` over contiguous rows, and `amax_0`, the
//! outer reduction whose columns are adjacent).
//!
//! The result is exactly the sequential scan's ([`super::reduce`]'s `Ext`): the first index of
//! the extremum (by `==`, so `-0.0` and `0.0` tie and the earlier one wins, with its sign), or of
//! the first NaN, which wins and stops the scan. Every step is the branch-free rule
//! `take = m == m && !(v <= m)` (`>=` for min): a NaN `m` keeps its place, a NaN `v` is taken,
//! a strict improvement is taken, a tie is not. A row is split into `L` interleaved lanes, each
//! scanned by that rule (so each lane holds its own first extremum or first NaN), merged by
//! (NaN first, then extremum, then smallest index), then the tail is scanned in order.
//! Without an index ([`value`]) the lanes only keep the value, and a NaN or zero result, whose
//! bits depend on which occurrence came first, is rescanned with indices.

use super::elementwise::{Simd, simd};

/// Interleaved lanes of a row scan (four AVX-512 registers of f32: independent chains hide the
/// latency of a compare and blend).
const L: usize = 64;

/// An element type with the extremum fast path.
pub(crate) trait ExtElem: crate::Element + PartialOrd {}
impl ExtElem for f32 {}
impl ExtElem for f64 {}

/// Whether `v` replaces the running extremum `m` (see the module doc).
#[inline(always)]
#[allow(clippy::eq_op)]
fn take<T: ExtElem, const MAX: bool>(m: T, v: T) -> bool {
    let not_worse = if MAX { v <= m } else { v >= m };
    m == m && !not_worse
}

/// Whether lane state `(a, ia)` beats `(b, ib)` when merging lanes.
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn beats<T: ExtElem, const MAX: bool>(a: T, ia: usize, b: T, ib: usize) -> bool {
    let (an, bn) = (a != a, b != b);
    if an || bn {
        return an && (!bn || ia < ib);
    }
    let better = if MAX { a > b } else { a < b };
    better || (a == b && ia < ib)
}

#[inline(always)]
fn row_body<T: ExtElem, const MAX: bool>(x: &[T]) -> (T, usize) {
    let n = x.len();
    let chunks = n / L;
    if chunks < 2 || n > u32::MAX as usize {
        let mut m = x[0];
        let mut mi = 0;
        for (j, &v) in x.iter().enumerate().skip(1) {
            if take::<T, MAX>(m, v) {
                m = v;
                mi = j;
            }
        }
        return (m, mi);
    }
    let mut m: [T; L] = x[..L].try_into().expect("L lanes");
    let mut c = [0u32; L];
    for (k, ch) in x[..chunks * L].chunks_exact(L).enumerate().skip(1) {
        let k = k as u32;
        for l in 0..L {
            let v = ch[l];
            let t = take::<T, MAX>(m[l], v);
            m[l] = if t { v } else { m[l] };
            c[l] = if t { k } else { c[l] };
        }
    }
    let (mut bm, mut bi) = (m[0], c[0] as usize * L);
    for l in 1..L {
        let i = c[l] as usize * L + l;
        if beats::<T, MAX>(m[l], i, bm, bi) {
            (bm, bi) = (m[l], i);
        }
    }
    for (j, &v) in x.iter().enumerate().skip(chunks * L) {
        if take::<T, MAX>(bm, v) {
            (bm, bi) = (v, j);
        }
    }
    (bm, bi)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn row_avx2<T: ExtElem, const MAX: bool>(x: &[T]) -> (T, usize) {
    row_body::<T, MAX>(x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn row_avx512<T: ExtElem, const MAX: bool>(x: &[T]) -> (T, usize) {
    row_body::<T, MAX>(x)
}

/// The extremum of the non-empty row `x` and its first index.
pub(crate) fn row<T: ExtElem, const MAX: bool>(x: &[T]) -> (T, usize) {
    match simd() {
        // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { row_avx512::<T, MAX>(x) },
        // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { row_avx2::<T, MAX>(x) },
        _ => row_body::<T, MAX>(x),
    }
}

/// The running extremum `m` after seeing `v`, when no index is kept: a strict improvement or a
/// NaN `v` is taken, and a NaN `m` is kept by everything but another NaN (so a row with a NaN
/// ends NaN, though not necessarily with the first NaN's bits).
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn pick<T: ExtElem, const MAX: bool>(m: T, v: T) -> T {
    let better = if MAX { v > m } else { v < m };
    if better || v != v { v } else { m }
}

/// Whether an extremum found by [`pick`] may differ in its bits from the first one of the
/// sequential scan: a NaN (payload) or a zero (sign). Any other value has one bit pattern.
#[inline(always)]
#[allow(clippy::eq_op)]
pub(crate) fn ambiguous<T: ExtElem>(m: T) -> bool {
    m != m || m == T::zero()
}

#[inline(always)]
fn value_body<T: ExtElem, const MAX: bool>(x: &[T]) -> T {
    let n = x.len();
    let chunks = n / L;
    if chunks < 2 {
        return row_body::<T, MAX>(x).0;
    }
    let mut m: [T; L] = x[..L].try_into().expect("L lanes");
    for ch in x[L..chunks * L].chunks_exact(L) {
        for l in 0..L {
            m[l] = pick::<T, MAX>(m[l], ch[l]);
        }
    }
    // lanes merged as a tree (halves picked against halves, vectorised: a serial fold over 64
    // lanes took as long as the scan of a 1024-element row; per-op sweep `amax`, `amin`), then
    // the last 8 and the tail in order; any order gives the one non-ambiguous extremum
    let mut h = L / 2;
    while h >= 8 {
        for l in 0..h {
            m[l] = pick::<T, MAX>(m[l], m[l + h]);
        }
        h /= 2;
    }
    let mut bm = m[0];
    for &v in m[1..2 * h].iter().chain(&x[chunks * L..]) {
        bm = pick::<T, MAX>(bm, v);
    }
    if ambiguous(bm) {
        return row_body::<T, MAX>(x).0;
    }
    bm
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn value_avx2<T: ExtElem, const MAX: bool>(x: &[T]) -> T {
    value_body::<T, MAX>(x)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn value_avx512<T: ExtElem, const MAX: bool>(x: &[T]) -> T {
    value_body::<T, MAX>(x)
}

/// The extremum of the non-empty row `x` without its index (`amax`, `amin`, `max_all`): lanes
/// of [`pick`] alone, which run at memory speed; a NaN or zero result is rescanned by [`row`],
/// so the value is [`row`]'s bit for bit. On x86 CPUs with AVX2 (AVX-512 ones too: on Zen 4
/// the AVX-512 copy of the lanes took 0.097 ms per `amax` of [1024, 1024] f32, these 0.058),
/// f32/f64 rows first try [`x86::value`].
pub(crate) fn value<T: ExtElem, const MAX: bool>(x: &[T]) -> T {
    match simd() {
        // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ and AVX2 (detected at run time by
        // simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe {
            x86::try_value::<T, MAX>(x).unwrap_or_else(|| value_avx512::<T, MAX>(x))
        },
        // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe {
            x86::try_value::<T, MAX>(x).unwrap_or_else(|| value_avx2::<T, MAX>(x))
        },
        _ => value_body::<T, MAX>(x),
    }
}

#[cfg(target_arch = "x86_64")]
mod x86 {
    use super::super::vec256::Vec256;
    use crate::Element;

    /// [`value`] of a row whose element type is f32 or f64, as `T`; `None` for other types
    /// and for the rows `value` declines.
    ///
    /// # Safety
    /// The CPU has AVX2.
    pub(super) unsafe fn try_value<T: Element, const MAX: bool>(x: &[T]) -> Option<T> {
        use super::super::vec256::retype;
        use std::arch::x86_64::{__m256, __m256d};
        // SAFETY: the CPU has AVX2 (caller contract).
        let v = unsafe {
            match (retype::<T, f32>(x), retype::<T, f64>(x)) {
                (Some(x), _) => value::<__m256, MAX>(x),
                (_, Some(x)) => value::<__m256d, MAX>(x),
                _ => None,
            }
        };
        v.map(T::from_f64)
    }

    /// Vectors per step of [`value`]: independent chains enough for a one-cycle `vmaxps`.
    const U: usize = 4;

    /// The extremum of `x` as f64 by `vmaxps`/`vminps` lanes (per-op sweep rows `amax`,
    /// `amin`: the lane arrays of `value_body` took four instructions per vector and spilled
    /// merging 64 lanes). `None` when the row is shorter than two steps, holds a NaN, or the
    /// extremum is a zero: the cases whose bits depend on which occurrence came first, which
    /// the caller rescans. Any other extremum has one bit pattern, so this equals `row`'s.
    #[target_feature(enable = "avx2")]
    #[allow(clippy::needless_range_loop, clippy::eq_op)] // (lanes indexed like the steps)
    pub(super) fn value<W: Vec256, const MAX: bool>(x: &[W::E]) -> Option<f64> {
        let v = W::V;
        let chunks = x.len() / (U * v);
        if chunks < 2 {
            return None;
        }
        let at = |i: usize| {
            debug_assert!(i < chunks * U);
            // SAFETY: vector `i < chunks * U` lies inside `x`; AVX2 is enabled here.
            unsafe { W::load(x.as_ptr().add(i * v)) }
        };
        // SAFETY: AVX2 is enabled in this function.
        let pick = |m: W, w: W| unsafe { if MAX { m.max_of(w) } else { m.min_of(w) } };
        let mut m: [W; U] = std::array::from_fn(at);
        // SAFETY: as above.
        let mut nan: [W; U] = std::array::from_fn(|u| unsafe { m[u].nan_mask() });
        for c in 1..chunks {
            for u in 0..U {
                let w = at(c * U + u);
                m[u] = pick(m[u], w);
                // SAFETY: as above.
                nan[u] = unsafe { nan[u].or(w.nan_mask()) };
            }
        }
        for u in 1..U {
            m[0] = pick(m[0], m[u]);
            // SAFETY: as above.
            nan[0] = unsafe { nan[0].or(nan[u]) };
        }
        // SAFETY: as above.
        let (any_nan, lanes) = unsafe { (nan[0].any(), m[0].lanes()) };
        if any_nan {
            return None;
        }
        let better = |a: W::E, b: W::E| if MAX { a > b } else { a < b };
        let mut bm = lanes[0];
        for &e in lanes[1..v].iter().chain(&x[chunks * U * v..]) {
            if e != e {
                return None;
            }
            if better(e, bm) {
                bm = e;
            }
        }
        (bm != W::E::zero()).then(|| bm.to_f64())
    }
}

// The column scans write each step into a second buffer instead of updating in place: LLVM
// turns a store of `if t { v } else { *m }` back to `m` into a masked store (`vmaskmovps`),
// which AMD cores microcode; on Zen 3 (AVX2) `amax_0` ran 5x slower so (per-op sweep `amax_0`).

#[inline(always)]
fn cols_body<T: ExtElem, const MAX: bool>(step: ColStep<'_, T>) {
    let ColStep {
        m_out,
        i_out,
        m,
        idx,
        v,
        j,
    } = step;
    for (((mo, io), (&m, &i)), &v) in m_out.iter_mut().zip(i_out).zip(m.iter().zip(idx)).zip(v) {
        let t = take::<T, MAX>(m, v);
        *mo = if t { v } else { m };
        *io = if t { j } else { i };
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn cols_avx2<T: ExtElem, const MAX: bool>(step: ColStep<'_, T>) {
    cols_body::<T, MAX>(step)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn cols_avx512<T: ExtElem, const MAX: bool>(step: ColStep<'_, T>) {
    cols_body::<T, MAX>(step)
}

/// One step of many column scans at once (the outer reduction of `argmax(0)`, `max_dim(0)`):
/// column `c`, at running extremum `m[c]` found at index `idx[c]`, sees element `v[c]` at
/// index `j`; the new state goes to `m_out[c]`, `i_out[c]`.
pub(crate) struct ColStep<'a, T> {
    pub m_out: &'a mut [T],
    pub i_out: &'a mut [usize],
    pub m: &'a [T],
    pub idx: &'a [usize],
    pub v: &'a [T],
    pub j: usize,
}

/// Runs one [`ColStep`].
pub(crate) fn cols<T: ExtElem, const MAX: bool>(step: ColStep<'_, T>) {
    match simd() {
        // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { cols_avx512::<T, MAX>(step) },
        // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { cols_avx2::<T, MAX>(step) },
        _ => cols_body::<T, MAX>(step),
    }
}

#[inline(always)]
fn cols_value_body<T: ExtElem, const MAX: bool>(out: &mut [T], m: &[T], v: &[T]) {
    for ((o, &m), &v) in out.iter_mut().zip(m).zip(v) {
        *o = pick::<T, MAX>(m, v);
    }
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
fn cols_value_avx2<T: ExtElem, const MAX: bool>(out: &mut [T], m: &[T], v: &[T]) {
    cols_value_body::<T, MAX>(out, m, v)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq")]
fn cols_value_avx512<T: ExtElem, const MAX: bool>(out: &mut [T], m: &[T], v: &[T]) {
    cols_value_body::<T, MAX>(out, m, v)
}

/// One step of many column scans without indices (`amax_0`): `out[c] = pick(m[c], v[c])`. A
/// column ending NaN or zero must be rescanned with [`row`] (see [`ambiguous`]).
pub(crate) fn cols_value<T: ExtElem, const MAX: bool>(out: &mut [T], m: &[T], v: &[T]) {
    match simd() {
        // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx512 => unsafe { cols_value_avx512::<T, MAX>(out, m, v) },
        // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
        #[cfg(target_arch = "x86_64")]
        Simd::Avx2 => unsafe { cols_value_avx2::<T, MAX>(out, m, v) },
        _ => cols_value_body::<T, MAX>(out, m, v),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sequential scan the fast path must equal.
    fn scan<const MAX: bool>(x: &[f32]) -> (f32, usize) {
        let (mut m, mut mi) = (x[0], 0);
        for (j, &v) in x.iter().enumerate() {
            if m.is_nan() {
                break;
            }
            if v.is_nan() || (MAX && v > m) || (!MAX && v < m) {
                (m, mi) = (v, j);
            }
        }
        (m, mi)
    }

    #[test]
    fn lanes_equal_the_sequential_scan() {
        let mut s = 7u64;
        let mut next = || {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            (s >> 33) as u32
        };
        for n in [1usize, 5, 16, 31, 32, 33, 100, 1000] {
            for case in 0..40 {
                let x: Vec<f32> = (0..n)
                    .map(|_| match next() % 13 {
                        0 if case % 3 == 0 => f32::NAN,
                        1 => 0.0,
                        2 => -0.0,
                        3 => f32::INFINITY,
                        4 => f32::NEG_INFINITY,
                        k => (k % 5) as f32 - 2.0,
                    })
                    .collect();
                for (got, want) in [
                    (row::<f32, true>(&x), scan::<true>(&x)),
                    (row::<f32, false>(&x), scan::<false>(&x)),
                ] {
                    assert_eq!(got.1, want.1, "{x:?}");
                    assert_eq!(got.0.to_bits(), want.0.to_bits(), "{x:?}");
                }
                for (got, want) in [
                    (value::<f32, true>(&x), scan::<true>(&x).0),
                    (value::<f32, false>(&x), scan::<false>(&x).0),
                ] {
                    assert_eq!(got.to_bits(), want.to_bits(), "{x:?}");
                }
                let (mut m, mut i) = (vec![x[0]], vec![0]);
                for (j, v) in x.iter().enumerate().skip(1) {
                    let (mut m2, mut i2) = (vec![0.0], vec![0]);
                    cols::<f32, true>(ColStep {
                        m_out: &mut m2,
                        i_out: &mut i2,
                        m: &m,
                        idx: &i,
                        v: &[*v],
                        j,
                    });
                    (m, i) = (m2, i2);
                }
                let want = scan::<true>(&x);
                assert_eq!((m[0].to_bits(), i[0]), (want.0.to_bits(), want.1), "{x:?}");
                let mut m = vec![x[0]];
                for v in &x[1..] {
                    let mut next = vec![0.0];
                    cols_value::<f32, true>(&mut next, &m, &[*v]);
                    m = next;
                }
                if !ambiguous(m[0]) {
                    assert_eq!(m[0].to_bits(), want.0.to_bits(), "{x:?}");
                }
            }
        }
    }

    /// `value` against `row` on rows of random magnitudes (so every lane order matters), f32
    /// and f64, with a NaN, an infinity or a zero extremum planted in some; on AVX2 CPUs the
    /// vector scan must take every clean row of two steps or more.
    #[test]
    fn vector_values_equal_the_indexed_scan() {
        fn check<T: ExtElem>(x: &[T]) {
            let vector_len = 2 * 4 * 32 / std::mem::size_of::<T>();
            let bits = |v: T| v.to_f64().to_bits();
            assert_eq!(bits(value::<T, true>(x)), bits(row::<T, true>(x).0));
            assert_eq!(bits(value::<T, false>(x)), bits(row::<T, false>(x).0));
            #[cfg(target_arch = "x86_64")]
            if simd() == Simd::Avx2 && x.len() >= vector_len {
                let clean = |m: T| !ambiguous(m);
                let (hi, lo) = (row::<T, true>(x).0, row::<T, false>(x).0);
                // SAFETY: simd() detected AVX2.
                let (vhi, vlo) =
                    unsafe { (x86::try_value::<T, true>(x), x86::try_value::<T, false>(x)) };
                let no_nan = !x.iter().any(|v| v != v);
                assert_eq!(vhi.is_some(), no_nan && clean(hi));
                assert_eq!(vlo.is_some(), no_nan && clean(lo));
            }
        }
        let mut next = crate::backend::cpu::test_uniform(0x9e37_79b9_7f4a_7c15);
        for n in (1..300).chain([1023, 1024, 4099]) {
            for plant in 0..5 {
                let mut x: Vec<f64> = (0..n)
                    .map(|_| (next() - 0.5) * 10f64.powi((next() * 12.0) as i32 - 6))
                    .collect();
                let at = (next() * n as f64) as usize;
                match plant {
                    1 => x[at] = f64::NAN,
                    2 => x[at] = f64::NEG_INFINITY,
                    3 => x.iter_mut().for_each(|v| *v = -v.abs()),
                    _ => {}
                }
                if plant == 3 {
                    x[at] = -0.0;
                    x[(at + 7) % n] = 0.0;
                }
                if plant == 4 {
                    x.iter_mut().for_each(|v| *v = v.abs() + 1.0);
                    x[at] = 0.0;
                }
                check(&x);
                check(&x.iter().map(|&v| v as f32).collect::<Vec<f32>>());
            }
        }
    }
}
