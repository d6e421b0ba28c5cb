//! Flat elementwise loops over slices: the innermost kernels of the dense fast paths (binary,
//! scalar and in-place arithmetic), of the contiguous runs of the strided maps (ternary too)
//! and of the row accumulation of `index_put_`.
//!
//! Each loop works on slices (so the compiler knows outputs and inputs do not alias and
//! vectorises without runtime overlap checks — which, for an in-place update whose output *is*
//! its input, would otherwise send the loop down the scalar fallback) and is compiled three
//! times: for the baseline target, with AVX2 and with AVX-512, picked at run time. The operation
//! itself is an inlined closure, so each copy vectorises it with its register width (256 or 512
//! bits). No fused multiply-add is formed unless a closure asks for one with `mul_add` (Rust
//! does not contract float expressions), and such a `mul_add` is fused in every copy (FMA in the
//! AVX2 and AVX-512 copies, libm's correctly rounded `fma` in the baseline), so all copies
//! produce bit-identical results.

/// The widest vector extension the running CPU supports (detected once, then cached).
#[derive(Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Debug)]
pub(crate) enum Simd {
    Baseline,
    /// AVX2 with FMA (Haswell, Zen and later).
    Avx2,
    /// AVX-512 F/BW/VL/DQ, and AVX2 with FMA (Skylake-SP, Ice Lake, Zen 4 and later): kernels
    /// written for 32-byte vectors run their AVX2 code here too.
    Avx512,
}

/// The [`Simd`] level of the running CPU (`TAPEGRAD_NO_AVX512` set: at most AVX2).
#[inline]
pub(crate) fn simd() -> Simd {
    static LEVEL: std::sync::OnceLock<Simd> = std::sync::OnceLock::new();
    *LEVEL.get_or_init(detect)
}

fn detect() -> Simd {
    #[cfg(target_arch = "x86_64")]
    {
        let avx2 = std::is_x86_feature_detected!("avx2") && std::is_x86_feature_detected!("fma");
        if avx2
            && std::is_x86_feature_detected!("avx512f")
            && std::is_x86_feature_detected!("avx512bw")
            && std::is_x86_feature_detected!("avx512vl")
            && std::is_x86_feature_detected!("avx512dq")
            && std::env::var_os("TAPEGRAD_NO_AVX512").is_none()
        {
            return Simd::Avx512;
        }
        if avx2 {
            return Simd::Avx2;
        }
    }
    Simd::Baseline
}

/// Defines `pub(crate) fn $name` (baseline / AVX2 / AVX-512 dispatch) around the loop body
/// `$body`, which sees the parameters by name.
macro_rules! kernel {
    (
        $(#[$doc:meta])*
        fn $name:ident<$($g:ident),*>($($p:ident: $t:ty),*) where $($w:tt)*
    ) => {
        $(#[$doc])*
        #[inline]
        pub(crate) fn $name<$($g),*>($($p: $t),*) where $($w)* {
            #[inline(always)]
            fn body<$($g),*>($($p: $t),*) where $($w)* {
                kernel!(@body $name, $($p),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx2,fma")]
            fn body_avx2<$($g),*>($($p: $t),*) where $($w)* {
                body($($p),*)
            }
            #[cfg(target_arch = "x86_64")]
            #[target_feature(enable = "avx512f,avx512bw,avx512vl,avx512dq,fma")]
            fn body_avx512<$($g),*>($($p: $t),*) where $($w)* {
                body($($p),*)
            }
            match simd() {
                // SAFETY: the CPU supports AVX-512 F/BW/VL/DQ (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx512 => unsafe { body_avx512($($p),*) },
                // SAFETY: the CPU supports AVX2 and FMA (detected at run time by simd()).
                #[cfg(target_arch = "x86_64")]
                Simd::Avx2 => unsafe { body_avx2($($p),*) },
                _ => body($($p),*),
            }
        }
    };
    (@body map1, $out:ident, $a:ident, $f:ident) => {
        for (o, &x) in $out.iter_mut().zip($a) {
            *o = $f(x);
        }
    };
    (@body fill, $x:ident, $v:ident) => {
        $x.fill($v)
    };
    (@body update1, $x:ident, $f:ident) => {
        for v in $x.iter_mut() {
            *v = $f(*v);
        }
    };
    (@body map2, $out:ident, $a:ident, $b:ident, $f:ident) => {
        for ((o, &x), &y) in $out.iter_mut().zip($a).zip($b) {
            *o = $f(x, y);
        }
    };
    (@body map3, $out:ident, $c:ident, $a:ident, $b:ident, $f:ident) => {
        for (((o, &z), &x), &y) in $out.iter_mut().zip($c).zip($a).zip($b) {
            *o = $f(z, x, y);
        }
    };
    (@body update2, $x:ident, $b:ident, $f:ident) => {
        for (v, &y) in $x.iter_mut().zip($b) {
            *v = $f(*v, y);
        }
    };
    (@body map2_fallback, $out:ident, $a:ident, $b:ident, $fast:ident, $slow:ident) => {
        for ((o, a), b) in $out
            .chunks_mut(FALLBACK_CHUNK)
            .zip($a.chunks(FALLBACK_CHUNK))
            .zip($b.chunks(FALLBACK_CHUNK))
        {
            let mut any = false;
            for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
                let (v, s) = $fast(x, y);
                *o = v;
                any |= s;
            }
            if any {
                for ((o, &x), &y) in o.iter_mut().zip(a).zip(b) {
                    if $fast(x, y).1 {
                        *o = $slow(x, y);
                    }
                }
            }
        }
    };
    (@body map1_fallback, $out:ident, $a:ident, $fast:ident, $slow:ident) => {
        for (o, a) in $out.chunks_mut(FALLBACK_CHUNK).zip($a.chunks(FALLBACK_CHUNK)) {
            let mut any = false;
            for (o, &x) in o.iter_mut().zip(a) {
                let (v, s) = $fast(x);
                *o = v;
                any |= s;
            }
            if any {
                for (o, &x) in o.iter_mut().zip(a) {
                    if $fast(x).1 {
                        *o = $slow(x);
                    }
                }
            }
        }
    };
    (@body add_rows, $dst:ident, $row_stride:ident, $vals:ident, $rows:ident) => {{
        let r = $vals.len() / $rows.len().max(1);
        for (&k, v) in $rows.iter().zip($vals.chunks_exact(r.max(1))) {
            let lo = k as usize * $row_stride;
            for (d, &y) in $dst[lo..lo + r].iter_mut().zip(v) {
                *d = crate::Element::add(*d, y);
            }
        }
    }};
}

kernel! {
    /// `out[i] = f(a[i])` over the common length.
    fn map1<T, U, F>(out: &mut [U], a: &[T], f: &F) where T: Copy, F: Fn(T) -> U
}

kernel! {
    /// `x[i] = v`: the contiguous runs of `copy::fill` (`zeros`, `ones`, `full`, `fill_`,
    /// `zero_`, `eye`). The baseline copy stores 16 bytes at a time, the AVX2 copy 32: per-op
    /// sweep rows `zero_`, `fill_`, `zeros`, `eye`, 1M f32 at 2 threads, 55-65 -> 38-46 us.
    fn fill<T>(x: &mut [T], v: T) where T: Copy
}

kernel! {
    /// `x[i] = f(x[i])`.
    fn update1<T, F>(x: &mut [T], f: &F) where T: Copy, F: Fn(T) -> T
}

kernel! {
    /// `out[i] = f(a[i], b[i])` over the common length.
    fn map2<T, U, F>(out: &mut [U], a: &[T], b: &[T], f: &F) where T: Copy, F: Fn(T, T) -> U
}

kernel! {
    /// `out[i] = f(c[i], a[i], b[i])` over the common length.
    fn map3<C, T, U, F>(out: &mut [U], c: &[C], a: &[T], b: &[T], f: &F)
    where C: Copy, T: Copy, F: Fn(C, T, T) -> U
}

kernel! {
    /// `x[i] = f(x[i], b[i])` over the common length.
    fn update2<T, F>(x: &mut [T], b: &[T], f: &F) where T: Copy, F: Fn(T, T) -> T
}

/// The chunk of [`map2_fallback`] / [`map1_fallback`]: one "needs the slow path" flag per this
/// many elements.
const FALLBACK_CHUNK: usize = 64;

kernel! {
    /// `out[i] = f(a[i], b[i])` over the common length for an `f` that is `fast` where it is
    /// branch-free and exact and `slow` (an exact scalar function, typically a libm call) on
    /// the rest: `fast` returns its value and whether the element needs `slow`. Each chunk of
    /// [`FALLBACK_CHUNK`] elements runs `fast` in the vectorised loop (writing its values and
    /// OR-ing the flags), then, only if a flag is set, a scalar pass recomputes the flagged
    /// elements with `slow` — so the call stays out of the vector loop, and each element's value
    /// depends on that element alone. Serves the per-op speed sweep rows `fmod`, `remainder`
    /// and `floor_divide` (f32; `math::fmod::fmod32_fast`), whose scalar `fmodf` call kept the
    /// whole loop scalar.
    fn map2_fallback<T, U, F, G>(out: &mut [U], a: &[T], b: &[T], fast: &F, slow: &G)
    where T: Copy, F: Fn(T, T) -> (U, bool), G: Fn(T, T) -> U
}

kernel! {
    /// [`map2_fallback`] with one input: a binary op with a broadcast operand the closures hold
    /// (`fmod` by a scalar), or a unary rule whose cheap form covers most inputs (the sweep's
    /// `sin`, `cos`, `tan`: Cody–Waite in `fast`, the whole rule with Payne–Hanek for huge
    /// arguments in `slow`, which a flagged element gets).
    fn map1_fallback<T, U, F, G>(out: &mut [U], a: &[T], fast: &F, slow: &G)
    where T: Copy, F: Fn(T) -> (U, bool), G: Fn(T) -> U
}

kernel! {
    /// Row accumulation: for each `j`, `dst[rows[j] * row_stride ..][..r] += vals[j * r ..][..r]`
    /// in order, with `r = vals.len() / rows.len()`. Panics (never reads or writes out of
    /// bounds) if a row does not fit in `dst`.
    fn add_rows<T>(dst: &mut [T], row_stride: usize, vals: &[T], rows: &[u32])
    where T: crate::Element
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernels_match_scalar_loops() {
        let a: Vec<f32> = (0..1003).map(|i| i as f32 * 0.5 - 7.0).collect();
        let b: Vec<f32> = (0..1003).map(|i| (i % 13) as f32 + 0.25).collect();
        let mut out = vec![0f32; 1003];
        map2(&mut out, &a, &b, &|x: f32, y: f32| x * y - 1.0);
        assert!(out.iter().enumerate().all(|(i, &o)| o == a[i] * b[i] - 1.0));
        let mut x = a.clone();
        update2(&mut x, &b, &|x: f32, y: f32| x / y);
        assert!(x.iter().enumerate().all(|(i, &o)| o == a[i] / b[i]));
        update1(&mut x, &|v: f32| v + 2.0);
        assert!(x.iter().enumerate().all(|(i, &o)| o == a[i] / b[i] + 2.0));
        let mut y = vec![0i64; 1003];
        map1(&mut y, &a, &|v: f32| v as i64);
        assert!(y.iter().enumerate().all(|(i, &o)| o == a[i] as i64));
    }

    #[test]
    fn add_rows_accumulates_in_order() {
        // 3 rows of 2 at stride 3 (the third column is untouched)
        let mut dst = vec![0f64; 9];
        let vals = [1.0, 2.0, 10.0, 20.0, 100.0, 200.0];
        add_rows(&mut dst, 3, &vals, &[2, 0, 2]);
        assert_eq!(dst, vec![10.0, 20.0, 0.0, 0.0, 0.0, 0.0, 101.0, 202.0, 0.0]);
    }
}
