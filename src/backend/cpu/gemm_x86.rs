//! Packed, cache-blocked GEMM for f32/f64 on x86_64 with AVX2+FMA (BLIS-style): `C = A @ B`
//! over arbitrary signed strides. A is packed into `MR`-row micro-panels per `MC x KC` block, B
//! into `NR`-column micro-panels per `KC x NC` block, and a register-blocked microkernel
//! (6x16 for f32, 6x8 for f64; AVX2, or AVX-512 with one register per row on CPUs that have it)
//! accumulates each `MR x NR` tile of C. Multithreading splits C
//! into one independent stripe per thread (along the longer of m and n), so threads never
//! synchronise inside the loops. Callers must check [`available`] first.

use std::arch::x86_64::*;
use std::cell::Cell;

/// Whether the CPU supports the instructions the kernels are compiled for.
pub(crate) fn available() -> bool {
    is_x86_feature_detected!("avx2") && is_x86_feature_detected!("fma")
}

/// A scalar type with a packed microkernel and its blocking parameters.
pub(crate) trait Kernel: Copy + Send + Sync + 'static {
    /// Rows of the register tile.
    const MR: usize;
    /// Columns of the register tile.
    const NR: usize;
    /// Depth of one packed block (the B micro-panel `KC x NR` stays in L1).
    const KC: usize;
    /// Rows of one packed A block (kept in L2).
    const MC: usize;
    /// Columns of one packed B block (kept in L3).
    const NC: usize;
    /// The additive identity (padding of partial panels).
    const ZERO: Self;

    /// `C[0..mr, 0..nr] (+)= sum_p A[p*MR + i] * B[p*NR + j]`.
    ///
    /// # Safety
    /// AVX2 and FMA must be available; `a` must hold `kc*MR` and `b` `kc*NR` readable elements;
    /// `c` with strides `(rs, cs)` must address `mr x nr` writable elements (`mr <= MR`,
    /// `nr <= NR`) that alias neither panel.
    #[allow(clippy::too_many_arguments)]
    unsafe fn micro(
        kc: usize,
        a: *const Self,
        b: *const Self,
        c: *mut Self,
        rs: isize,
        cs: isize,
        mr: usize,
        nr: usize,
        accumulate: bool,
    );

    /// Packs one full A micro-panel (`MR` rows of a row-major block, row stride `rs`, unit
    /// column stride): `dst[p*MR + i] = src[i*rs + p]`, transposing in registers.
    ///
    /// # Safety
    /// AVX2 available; `src` addresses `MR x kc` readable elements; `dst` holds `kc*MR`.
    unsafe fn pack_a_rows(kc: usize, src: *const Self, rs: isize, dst: *mut Self);

    /// Packs one full B micro-panel (`NR` columns of a column-major block, column stride `cs`,
    /// unit row stride): `dst[p*NR + j] = src[j*cs + p]`, transposing in registers.
    ///
    /// # Safety
    /// AVX2 available; `src` addresses `kc x NR` readable elements; `dst` holds `kc*NR`.
    unsafe fn pack_b_cols(kc: usize, src: *const Self, cs: isize, dst: *mut Self);
}

/// Transposes the 8x8 f32 block held in `r` (row `i` in `r[i]`): afterwards `r[q]` holds
/// element `q` of every former row. Shuffles only, so any 4-byte pattern moves bit for bit
/// (the transposing copy uses it too).
#[target_feature(enable = "avx2")]
pub(crate) fn transpose8(r: &mut [__m256; 8]) {
    let t0 = _mm256_unpacklo_ps(r[0], r[1]);
    let t1 = _mm256_unpackhi_ps(r[0], r[1]);
    let t2 = _mm256_unpacklo_ps(r[2], r[3]);
    let t3 = _mm256_unpackhi_ps(r[2], r[3]);
    let t4 = _mm256_unpacklo_ps(r[4], r[5]);
    let t5 = _mm256_unpackhi_ps(r[4], r[5]);
    let t6 = _mm256_unpacklo_ps(r[6], r[7]);
    let t7 = _mm256_unpackhi_ps(r[6], r[7]);
    let u0 = _mm256_shuffle_ps::<0x44>(t0, t2);
    let u1 = _mm256_shuffle_ps::<0xEE>(t0, t2);
    let u2 = _mm256_shuffle_ps::<0x44>(t1, t3);
    let u3 = _mm256_shuffle_ps::<0xEE>(t1, t3);
    let u4 = _mm256_shuffle_ps::<0x44>(t4, t6);
    let u5 = _mm256_shuffle_ps::<0xEE>(t4, t6);
    let u6 = _mm256_shuffle_ps::<0x44>(t5, t7);
    let u7 = _mm256_shuffle_ps::<0xEE>(t5, t7);
    r[0] = _mm256_permute2f128_ps::<0x20>(u0, u4);
    r[1] = _mm256_permute2f128_ps::<0x20>(u1, u5);
    r[2] = _mm256_permute2f128_ps::<0x20>(u2, u6);
    r[3] = _mm256_permute2f128_ps::<0x20>(u3, u7);
    r[4] = _mm256_permute2f128_ps::<0x31>(u0, u4);
    r[5] = _mm256_permute2f128_ps::<0x31>(u1, u5);
    r[6] = _mm256_permute2f128_ps::<0x31>(u2, u6);
    r[7] = _mm256_permute2f128_ps::<0x31>(u3, u7);
}

/// Transposes the 4x4 f64 block held in `r` (as [`transpose8`]).
#[target_feature(enable = "avx2")]
fn transpose4(r: &mut [__m256d; 4]) {
    let t0 = _mm256_unpacklo_pd(r[0], r[1]);
    let t1 = _mm256_unpackhi_pd(r[0], r[1]);
    let t2 = _mm256_unpacklo_pd(r[2], r[3]);
    let t3 = _mm256_unpackhi_pd(r[2], r[3]);
    r[0] = _mm256_permute2f128_pd::<0x20>(t0, t2);
    r[1] = _mm256_permute2f128_pd::<0x20>(t1, t3);
    r[2] = _mm256_permute2f128_pd::<0x31>(t0, t2);
    r[3] = _mm256_permute2f128_pd::<0x31>(t1, t3);
}

/// The scalar tail of the transposing packs: `dst[p*w + i] = src[i*stride + p]` for
/// `i < w`, `p` in `from..kc`.
///
/// # Safety
/// As the calling pack function.
#[inline(always)]
unsafe fn pack_tail<T: Copy>(
    from: usize,
    kc: usize,
    w: usize,
    src: *const T,
    stride: isize,
    dst: *mut T,
) {
    for p in from..kc {
        for i in 0..w {
            // SAFETY: i < w and p < kc stay inside the caller's block and panel.
            unsafe { *dst.add(p * w + i) = *src.offset(i as isize * stride + p as isize) };
        }
    }
}

/// f32 A panel: 6 rows, 8 columns of p at a time through an 8x8 transpose (rows 6, 7 zero).
///
/// # Safety
/// As [`Kernel::pack_a_rows`].
#[target_feature(enable = "avx2")]
unsafe fn pack_a_rows_f32(kc: usize, src: *const f32, rs: isize, dst: *mut f32) {
    let mut p = 0;
    while p + 8 <= kc {
        let mut r = [_mm256_setzero_ps(); 8];
        for (i, v) in r.iter_mut().take(6).enumerate() {
            // SAFETY: row i < 6, columns p..p+8 <= kc are inside the block.
            *v = unsafe { _mm256_loadu_ps(src.offset(i as isize * rs + p as isize)) };
        }
        transpose8(&mut r);
        for (q, v) in r.iter().enumerate() {
            // SAFETY: dst[(p+q)*6 .. (p+q)*6 + 6] lies inside the kc*6 panel; the 4- and
            // 2-element stores write exactly those six elements.
            unsafe {
                let d = dst.add((p + q) * 6);
                _mm_storeu_ps(d, _mm256_castps256_ps128(*v));
                _mm_store_sd(
                    d.add(4) as *mut f64,
                    _mm_castps_pd(_mm256_extractf128_ps::<1>(*v)),
                );
            }
        }
        p += 8;
    }
    // SAFETY: forwarded contract.
    unsafe { pack_tail(p, kc, 6, src, rs, dst) };
}

/// f32 B panel: 16 columns as two groups of 8, 8 rows of p at a time.
///
/// # Safety
/// As [`Kernel::pack_b_cols`].
#[target_feature(enable = "avx2")]
unsafe fn pack_b_cols_f32(kc: usize, src: *const f32, cs: isize, dst: *mut f32) {
    let mut p = 0;
    while p + 8 <= kc {
        for g in 0..2 {
            let mut r = [_mm256_setzero_ps(); 8];
            for (j, v) in r.iter_mut().enumerate() {
                // SAFETY: column g*8+j < 16, rows p..p+8 <= kc are inside the block.
                *v = unsafe { _mm256_loadu_ps(src.offset((g * 8 + j) as isize * cs + p as isize)) };
            }
            transpose8(&mut r);
            for (q, v) in r.iter().enumerate() {
                // SAFETY: dst[(p+q)*16 + g*8 ..][..8] lies inside the kc*16 panel.
                unsafe { _mm256_storeu_ps(dst.add((p + q) * 16 + g * 8), *v) };
            }
        }
        p += 8;
    }
    // SAFETY: forwarded contract.
    unsafe { pack_tail(p, kc, 16, src, cs, dst) };
}

/// f64 A panel: rows 0..4 through a 4x4 transpose, rows 4, 5 interleaved pairwise.
///
/// # Safety
/// As [`Kernel::pack_a_rows`].
#[target_feature(enable = "avx2")]
unsafe fn pack_a_rows_f64(kc: usize, src: *const f64, rs: isize, dst: *mut f64) {
    let mut p = 0;
    while p + 4 <= kc {
        let mut r = [_mm256_setzero_pd(); 4];
        // SAFETY: rows < 6 and columns p..p+4 <= kc are inside the block; every store
        // writes dst[(p+q)*6 ..][..6] inside the kc*6 panel.
        unsafe {
            for (i, v) in r.iter_mut().enumerate() {
                *v = _mm256_loadu_pd(src.offset(i as isize * rs + p as isize));
            }
            let r4 = _mm256_loadu_pd(src.offset(4 * rs + p as isize));
            let r5 = _mm256_loadu_pd(src.offset(5 * rs + p as isize));
            transpose4(&mut r);
            let lo = _mm256_unpacklo_pd(r4, r5);
            let hi = _mm256_unpackhi_pd(r4, r5);
            let pairs = [
                _mm256_castpd256_pd128(lo),
                _mm256_castpd256_pd128(hi),
                _mm256_extractf128_pd::<1>(lo),
                _mm256_extractf128_pd::<1>(hi),
            ];
            for q in 0..4 {
                let d = dst.add((p + q) * 6);
                _mm256_storeu_pd(d, r[q]);
                _mm_storeu_pd(d.add(4), pairs[q]);
            }
        }
        p += 4;
    }
    // SAFETY: forwarded contract.
    unsafe { pack_tail(p, kc, 6, src, rs, dst) };
}

/// f64 B panel: 8 columns as two groups of 4, 4 rows of p at a time.
///
/// # Safety
/// As [`Kernel::pack_b_cols`].
#[target_feature(enable = "avx2")]
unsafe fn pack_b_cols_f64(kc: usize, src: *const f64, cs: isize, dst: *mut f64) {
    let mut p = 0;
    while p + 4 <= kc {
        for g in 0..2 {
            let mut r = [_mm256_setzero_pd(); 4];
            // SAFETY: columns g*4+j < 8, rows p..p+4 <= kc are inside the block; stores
            // write dst[(p+q)*8 + g*4 ..][..4] inside the kc*8 panel.
            unsafe {
                for (j, v) in r.iter_mut().enumerate() {
                    *v = _mm256_loadu_pd(src.offset((g * 4 + j) as isize * cs + p as isize));
                }
                transpose4(&mut r);
                for (q, v) in r.iter().enumerate() {
                    _mm256_storeu_pd(dst.add((p + q) * 8 + g * 4), *v);
                }
            }
        }
        p += 4;
    }
    // SAFETY: forwarded contract.
    unsafe { pack_tail(p, kc, 8, src, cs, dst) };
}

/// Writes the top-left `mr x nr` of a register tile spilled row by row into `tmp` (row length
/// `ld`) to C, adding to it when `accumulate`: the partial-tile exit of every microkernel.
///
/// # Safety
/// `c` with strides `(rs, cs)` must address `mr x nr` writable elements; `tmp` holds `mr` rows.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn store_partial<T: Copy + std::ops::Add<Output = T>>(
    tmp: &[T],
    ld: usize,
    c: *mut T,
    rs: isize,
    cs: isize,
    mr: usize,
    nr: usize,
    accumulate: bool,
) {
    for i in 0..mr {
        for j in 0..nr {
            // SAFETY: (i, j) lies inside the caller's `mr x nr` tile of C.
            unsafe {
                let p = c.offset(i as isize * rs + j as isize * cs);
                let v = tmp[i * ld + j];
                *p = if accumulate { *p + v } else { v };
            }
        }
    }
}

/// Generates one `MR = 6`, `NR = 2 * lanes` microkernel from its AVX intrinsics.
macro_rules! microkernel {
    ($t:ty, $lanes:expr, $zero:ident, $load:ident, $store:ident, $bcast:ident, $fma:ident, $add:ident) => {
        #[target_feature(enable = "avx2,fma")]
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn micro(
            kc: usize,
            a: *const $t,
            b: *const $t,
            c: *mut $t,
            rs: isize,
            cs: isize,
            mr: usize,
            nr: usize,
            accumulate: bool,
        ) {
            const NR: usize = 2 * $lanes;
            let mut r = [[$zero(); 2]; 6];
            // SAFETY: the caller guarantees `kc*6` elements behind `a` and `kc*NR` behind `b`;
            // every offset below stays below those bounds; AVX2/FMA are enabled on this fn.
            unsafe {
                let (mut ap, mut bp) = (a, b);
                for _ in 0..kc {
                    let b0 = $load(bp);
                    let b1 = $load(bp.add($lanes));
                    for (i, row) in r.iter_mut().enumerate() {
                        let av = $bcast(&*ap.add(i));
                        row[0] = $fma(av, b0, row[0]);
                        row[1] = $fma(av, b1, row[1]);
                    }
                    ap = ap.add(6);
                    bp = bp.add(NR);
                }
            }
            if mr == 6 && nr == NR && cs == 1 {
                for (i, row) in r.iter().enumerate() {
                    // SAFETY: a full tile with unit column stride: row `i` holds NR
                    // contiguous writable elements at `c + i*rs` (caller contract).
                    unsafe {
                        let p = c.offset(i as isize * rs);
                        let (mut v0, mut v1) = (row[0], row[1]);
                        if accumulate {
                            v0 = $add($load(p), v0);
                            v1 = $add($load(p.add($lanes)), v1);
                        }
                        $store(p, v0);
                        $store(p.add($lanes), v1);
                    }
                }
                return;
            }
            let mut tmp = [0.0 as $t; 6 * NR];
            for (i, row) in r.iter().enumerate() {
                // SAFETY: `tmp` holds 6*NR elements; row `i` writes [i*NR, (i+1)*NR).
                unsafe {
                    $store(tmp.as_mut_ptr().add(i * NR), row[0]);
                    $store(tmp.as_mut_ptr().add(i * NR + $lanes), row[1]);
                }
            }
            // SAFETY: forwarded caller contract (C addresses the `mr x nr` tile).
            unsafe { store_partial(&tmp, NR, c, rs, cs, mr, nr, accumulate) };
        }
    };
}

/// Generates the AVX-512 variant of a microkernel over the *same* packed panels (`MR = 6`, one
/// 512-bit register per row of `NR = lanes` columns). Even and odd steps of `k` accumulate into
/// separate registers (12 independent FMA chains, enough to keep both FMA pipes busy), summed
/// at the end.
macro_rules! microkernel512 {
    ($t:ty, $lanes:expr, $zero:ident, $load:ident, $store:ident, $set1:ident, $fma:ident, $add:ident) => {
        #[target_feature(enable = "avx512f,fma")]
        #[allow(clippy::too_many_arguments)]
        pub(super) unsafe fn micro512(
            kc: usize,
            a: *const $t,
            b: *const $t,
            c: *mut $t,
            rs: isize,
            cs: isize,
            mr: usize,
            nr: usize,
            accumulate: bool,
        ) {
            const NR: usize = $lanes;
            let mut even = [$zero(); 6];
            let mut odd = [$zero(); 6];
            // SAFETY: the caller guarantees `kc*6` elements behind `a` and `kc*NR` behind `b`;
            // every offset below stays below those bounds; AVX-512F/FMA are enabled on this fn.
            unsafe {
                let (mut ap, mut bp) = (a, b);
                for _ in 0..kc / 2 {
                    let b0 = $load(bp);
                    let b1 = $load(bp.add(NR));
                    for i in 0..6 {
                        even[i] = $fma($set1(*ap.add(i)), b0, even[i]);
                        odd[i] = $fma($set1(*ap.add(6 + i)), b1, odd[i]);
                    }
                    ap = ap.add(12);
                    bp = bp.add(2 * NR);
                }
                if kc % 2 == 1 {
                    let b0 = $load(bp);
                    for i in 0..6 {
                        even[i] = $fma($set1(*ap.add(i)), b0, even[i]);
                    }
                }
            }
            let mut r = [$zero(); 6];
            for i in 0..6 {
                r[i] = $add(even[i], odd[i]);
            }
            if mr == 6 && nr == NR && cs == 1 {
                for (i, v) in r.iter().enumerate() {
                    // SAFETY: a full tile with unit column stride: row `i` holds NR
                    // contiguous writable elements at `c + i*rs` (caller contract).
                    unsafe {
                        let p = c.offset(i as isize * rs);
                        let v = if accumulate { $add($load(p), *v) } else { *v };
                        $store(p, v);
                    }
                }
                return;
            }
            let mut tmp = [0.0 as $t; 6 * NR];
            for (i, v) in r.iter().enumerate() {
                // SAFETY: `tmp` holds 6*NR elements; row `i` writes [i*NR, (i+1)*NR).
                unsafe { $store(tmp.as_mut_ptr().add(i * NR), *v) };
            }
            // SAFETY: forwarded caller contract (C addresses the `mr x nr` tile).
            unsafe { store_partial(&tmp, NR, c, rs, cs, mr, nr, accumulate) };
        }
    };
}

mod f32_kernel {
    use super::*;
    microkernel!(
        f32,
        8,
        _mm256_setzero_ps,
        _mm256_loadu_ps,
        _mm256_storeu_ps,
        _mm256_broadcast_ss,
        _mm256_fmadd_ps,
        _mm256_add_ps
    );
    microkernel512!(
        f32,
        16,
        _mm512_setzero_ps,
        _mm512_loadu_ps,
        _mm512_storeu_ps,
        _mm512_set1_ps,
        _mm512_fmadd_ps,
        _mm512_add_ps
    );
}

mod f64_kernel {
    use super::*;
    microkernel!(
        f64,
        4,
        _mm256_setzero_pd,
        _mm256_loadu_pd,
        _mm256_storeu_pd,
        _mm256_broadcast_sd,
        _mm256_fmadd_pd,
        _mm256_add_pd
    );
    microkernel512!(
        f64,
        8,
        _mm512_setzero_pd,
        _mm512_loadu_pd,
        _mm512_storeu_pd,
        _mm512_set1_pd,
        _mm512_fmadd_pd,
        _mm512_add_pd
    );
}

impl Kernel for f32 {
    const MR: usize = 6;
    const NR: usize = 16;
    const KC: usize = 256;
    const MC: usize = 144;
    const NC: usize = 4080;
    const ZERO: Self = 0.0;
    unsafe fn micro(
        kc: usize,
        a: *const f32,
        b: *const f32,
        c: *mut f32,
        rs: isize,
        cs: isize,
        mr: usize,
        nr: usize,
        accumulate: bool,
    ) {
        if super::elementwise::simd() == super::elementwise::Simd::Avx512 {
            // SAFETY: forwarded contract; the CPU supports AVX-512F (detected by simd()).
            return unsafe { f32_kernel::micro512(kc, a, b, c, rs, cs, mr, nr, accumulate) };
        }
        // SAFETY: forwarded contract (identical preconditions).
        unsafe { f32_kernel::micro(kc, a, b, c, rs, cs, mr, nr, accumulate) }
    }
    unsafe fn pack_a_rows(kc: usize, src: *const f32, rs: isize, dst: *mut f32) {
        // SAFETY: forwarded contract.
        unsafe { pack_a_rows_f32(kc, src, rs, dst) }
    }
    unsafe fn pack_b_cols(kc: usize, src: *const f32, cs: isize, dst: *mut f32) {
        // SAFETY: forwarded contract.
        unsafe { pack_b_cols_f32(kc, src, cs, dst) }
    }
}

impl Kernel for f64 {
    const MR: usize = 6;
    const NR: usize = 8;
    const KC: usize = 256;
    const MC: usize = 72;
    const NC: usize = 4080;
    const ZERO: Self = 0.0;
    unsafe fn micro(
        kc: usize,
        a: *const f64,
        b: *const f64,
        c: *mut f64,
        rs: isize,
        cs: isize,
        mr: usize,
        nr: usize,
        accumulate: bool,
    ) {
        if super::elementwise::simd() == super::elementwise::Simd::Avx512 {
            // SAFETY: forwarded contract; the CPU supports AVX-512F (detected by simd()).
            return unsafe { f64_kernel::micro512(kc, a, b, c, rs, cs, mr, nr, accumulate) };
        }
        // SAFETY: forwarded contract (identical preconditions).
        unsafe { f64_kernel::micro(kc, a, b, c, rs, cs, mr, nr, accumulate) }
    }
    unsafe fn pack_a_rows(kc: usize, src: *const f64, rs: isize, dst: *mut f64) {
        // SAFETY: forwarded contract.
        unsafe { pack_a_rows_f64(kc, src, rs, dst) }
    }
    unsafe fn pack_b_cols(kc: usize, src: *const f64, cs: isize, dst: *mut f64) {
        // SAFETY: forwarded contract.
        unsafe { pack_b_cols_f64(kc, src, cs, dst) }
    }
}

/// A strided matrix operand: base pointer and (row, column) strides in elements.
#[derive(Clone, Copy)]
pub(crate) struct Strided<P> {
    pub ptr: P,
    pub rs: isize,
    pub cs: isize,
}

/// Packs an operand block into micro-panels of `w` lanes (`dst[panel][p][i]`, zero-padding the
/// last panel's missing lanes): lane `i` of panel `q` is element `q*w + i` along the panel
/// direction (stride `ps`), `p < kc` runs along the shared `k` dimension (stride `ds`).
/// `transposing` packs one full panel when `ds == 1` (register transposes).
///
/// A's `mc x kc` block packs as `pack_panels(mc, kc, a.ptr, a.rs, a.cs, MR, pack_a_rows)`, B's
/// `kc x nc` block as `pack_panels(nc, kc, b.ptr, b.cs, b.rs, NR, pack_b_cols)`.
///
/// # Safety
/// AVX2 available; `src` must address `n x kc` readable elements at these strides; `dst` must
/// hold `ceil(n/w)*w*kc` elements.
#[inline(always)]
#[allow(clippy::too_many_arguments)]
unsafe fn pack_panels<K: Kernel>(
    n: usize,
    kc: usize,
    src: *const K,
    ps: isize,
    ds: isize,
    w: usize,
    transposing: unsafe fn(usize, *const K, isize, *mut K),
    dst: *mut K,
) {
    for (panel, i0) in (0..n).step_by(w).enumerate() {
        let lanes = w.min(n - i0);
        // SAFETY: panel `panel` occupies [panel*w*kc, (panel+1)*w*kc) of `dst`; source
        // elements (i0+i, p) with i < lanes, p < kc lie inside the caller's block.
        unsafe {
            let d = dst.add(panel * w * kc);
            let s0 = src.offset(i0 as isize * ps);
            if ps == 1 && lanes == w {
                for p in 0..kc {
                    std::ptr::copy_nonoverlapping(s0.offset(p as isize * ds), d.add(p * w), w);
                }
            } else if ds == 1 && lanes == w {
                transposing(kc, s0, ps, d);
            } else {
                for i in 0..lanes {
                    let line = s0.offset(i as isize * ps);
                    for p in 0..kc {
                        *d.add(p * w + i) = *line.offset(p as isize * ds);
                    }
                }
                for i in lanes..w {
                    for p in 0..kc {
                        *d.add(p * w + i) = K::ZERO;
                    }
                }
            }
        }
    }
}

thread_local! {
    /// Per-thread packing workspace, reused across calls (taken out while in use, so a
    /// re-entrant call simply allocates its own).
    static WORKSPACE: Cell<Vec<u64>> = const { Cell::new(Vec::new()) };
}

/// Runs `f` with a 64-byte aligned scratch buffer of at least `elems` elements of `K`.
fn with_workspace<K: Kernel, R>(elems: usize, f: impl FnOnce(*mut K) -> R) -> R {
    let bytes = elems * std::mem::size_of::<K>();
    let words = bytes.div_ceil(8) + 8;
    let mut buf = WORKSPACE.with(|w| w.take());
    if buf.len() < words {
        buf = vec![0u64; words];
    }
    let base = buf.as_mut_ptr() as *mut u8;
    let off = base.align_offset(64);
    // SAFETY: `off < 64 = 8 words` and the buffer has `bytes` + 64 spare bytes, so the aligned
    // pointer has `bytes` bytes behind it; u64 storage is valid for any f32/f64 bit pattern.
    let r = f(unsafe { base.add(off) } as *mut K);
    WORKSPACE.with(|w| w.set(buf));
    r
}

/// Single-threaded blocked product `C[m,n] = A[m,k] @ B[k,n]` (k > 0).
///
/// # Safety
/// AVX2+FMA available; the operands address valid `m x k`, `k x n`, `m x n` elements and C
/// aliases neither input and has no internal overlap.
#[target_feature(enable = "avx2,fma")]
unsafe fn gemm_serial<K: Kernel>(
    m: usize,
    n: usize,
    k: usize,
    c: Strided<*mut K>,
    a: Strided<*const K>,
    b: Strided<*const K>,
) {
    let kc_max = K::KC.min(k);
    let a_len = K::MC.min(m).next_multiple_of(K::MR) * kc_max;
    let b_len = K::NC.min(n).next_multiple_of(K::NR) * kc_max;
    with_workspace::<K, _>(a_len + b_len, |ws| {
        // SAFETY: `ws` holds a_len + b_len elements; the A block uses [0, a_len) and the B
        // block [a_len, a_len + b_len); every pack/microkernel call below passes sub-blocks
        // inside the operands' m x k, k x n, m x n extents (caller contract).
        unsafe {
            let (abuf, bbuf) = (ws, ws.add(a_len));
            for jc in (0..n).step_by(K::NC) {
                let nc = K::NC.min(n - jc);
                for pc in (0..k).step_by(K::KC) {
                    let kc = K::KC.min(k - pc);
                    let bsrc = b.ptr.offset(pc as isize * b.rs + jc as isize * b.cs);
                    pack_panels::<K>(nc, kc, bsrc, b.cs, b.rs, K::NR, K::pack_b_cols, bbuf);
                    for ic in (0..m).step_by(K::MC) {
                        let mc = K::MC.min(m - ic);
                        let asrc = a.ptr.offset(ic as isize * a.rs + pc as isize * a.cs);
                        pack_panels::<K>(mc, kc, asrc, a.rs, a.cs, K::MR, K::pack_a_rows, abuf);
                        for jr in (0..nc).step_by(K::NR) {
                            let nr = K::NR.min(nc - jr);
                            let bp = bbuf.add(jr * kc);
                            for ir in (0..mc).step_by(K::MR) {
                                let mr = K::MR.min(mc - ir);
                                let cp = c
                                    .ptr
                                    .offset((ic + ir) as isize * c.rs + (jc + jr) as isize * c.cs);
                                K::micro(kc, abuf.add(ir * kc), bp, cp, c.rs, c.cs, mr, nr, pc > 0);
                            }
                        }
                    }
                }
            }
        }
    })
}

/// Raw operand pointers that may cross to kernel team workers.
#[derive(Clone, Copy)]
struct Operands<K> {
    c: Strided<*mut K>,
    a: Strided<*const K>,
    b: Strided<*const K>,
}

// SAFETY: the pointers are only dereferenced by `gemm_serial` on disjoint stripes of C (and
// read-only on A/B) while the caller of `gemm` keeps all three alive and unaliased.
unsafe impl<K: Kernel> Send for Operands<K> {}
// SAFETY: as above; shared access only reads A/B and writes disjoint parts of C.
unsafe impl<K: Kernel> Sync for Operands<K> {}

/// `C[m,n] = A[m,k] @ B[k,n]` (overwriting C; zeros when `k == 0`) in up to `threads` stripes
/// run on the kernel team.
///
/// # Safety
/// [`available`] must be true; every operand must address valid elements for its sizes and
/// strides; C must alias neither input and have no internal overlap.
pub(crate) unsafe fn gemm<K: Kernel>(
    m: usize,
    n: usize,
    k: usize,
    c: Strided<*mut K>,
    a: Strided<*const K>,
    b: Strided<*const K>,
    threads: usize,
) {
    if m == 0 || n == 0 {
        return;
    }
    if k == 0 {
        for i in 0..m {
            for j in 0..n {
                // SAFETY: (i, j) is inside C (caller contract).
                unsafe { *c.ptr.offset(i as isize * c.rs + j as isize * c.cs) = K::ZERO };
            }
        }
        return;
    }
    // split the longer dimension into stripes of whole register tiles, one per thread
    let split_n = n >= m;
    let (len, unit) = if split_n { (n, K::NR) } else { (m, K::MR) };
    let tiles = len.div_ceil(unit);
    let parts = threads.clamp(1, tiles);
    if parts == 1 {
        // SAFETY: forwarded caller contract.
        unsafe { gemm_serial::<K>(m, n, k, c, a, b) };
        return;
    }
    let ops = Operands { c, a, b };
    let per = tiles.div_ceil(parts) * unit;
    // stripe `t` covers rows (or columns) [t*per, t*per + size) of C and the matching rows of
    // A (or columns of B)
    let stripe = move |t: usize| {
        let ops = ops;
        let start = t * per;
        if start >= len {
            return;
        }
        let size = per.min(len - start);
        let o = start as isize;
        // SAFETY: stripes are disjoint, so no two threads write the same element of C; each
        // stripe's sub-operands lie inside the caller's operands.
        unsafe {
            if split_n {
                let c = Strided {
                    ptr: ops.c.ptr.offset(o * ops.c.cs),
                    ..ops.c
                };
                let b = Strided {
                    ptr: ops.b.ptr.offset(o * ops.b.cs),
                    ..ops.b
                };
                gemm_serial::<K>(m, size, k, c, ops.a, b);
            } else {
                let c = Strided {
                    ptr: ops.c.ptr.offset(o * ops.c.rs),
                    ..ops.c
                };
                let a = Strided {
                    ptr: ops.a.ptr.offset(o * ops.a.rs),
                    ..ops.a
                };
                gemm_serial::<K>(size, n, k, c, a, ops.b);
            }
        }
    };
    // stripes run on the kernel team, whose idle workers are still polling when one product
    // follows another (a parked rayon worker took tens of microseconds to wake)
    super::team::run(parts, &stripe);
}

#[cfg(test)]
#[path = "gemm_x86_tests.rs"]
mod tests;
