//! Tests of the GEMM microkernels (`gemm_x86.rs`): the AVX2 and AVX-512 variants against a
//! scalar reference over the same packed panels.

use super::*;

/// A microkernel's signature: (depth, packed A, packed B, C, C's row and column strides, rows,
/// columns, accumulate).
type Micro<T> = unsafe fn(usize, *const T, *const T, *mut T, isize, isize, usize, usize, bool);

/// Both microkernels of a type against a scalar reference over the same packed panels, for
/// full and partial tiles, odd and even depths, strided C and accumulation (whichever of
/// them the running CPU can execute).
fn check<T: Kernel + Into<f64> + From<f32>>(kernels: &[Micro<T>]) {
    let lanes = T::NR;
    for kc in [1usize, 2, 7, 64] {
        let a: Vec<T> = (0..kc * 6)
            .map(|i| T::from((i % 13) as f32 * 0.25 - 1.0))
            .collect();
        let b: Vec<T> = (0..kc * lanes)
            .map(|i| T::from((i % 7) as f32 * 0.5 - 1.5))
            .collect();
        for (mr, nr) in [(6, lanes), (5, lanes - 3), (1, 1)] {
            for (rs, cs) in [(lanes as isize, 1isize), (1, 6)] {
                for accumulate in [false, true] {
                    for k in kernels {
                        let mut c = vec![T::from(2.0); 6 * lanes];
                        // SAFETY: the panels hold kc*6 and kc*NR elements; C holds a
                        // 6 x NR tile under both stride pairs; the CPU supports the kernel.
                        unsafe {
                            k(
                                kc,
                                a.as_ptr(),
                                b.as_ptr(),
                                c.as_mut_ptr(),
                                rs,
                                cs,
                                mr,
                                nr,
                                accumulate,
                            )
                        };
                        for i in 0..6 {
                            for j in 0..lanes {
                                let got: f64 = c[i * rs as usize + j * cs as usize].into();
                                let mut want = if accumulate || i >= mr || j >= nr {
                                    2.0
                                } else {
                                    0.0
                                };
                                if i < mr && j < nr {
                                    for p in 0..kc {
                                        let (x, y): (f64, f64) =
                                            (a[p * 6 + i].into(), b[p * lanes + j].into());
                                        want += x * y;
                                    }
                                }
                                assert_eq!(
                                    got, want,
                                    "kc {kc} tile {mr}x{nr} ({i}, {j}) strides ({rs}, {cs}) acc {accumulate}"
                                );
                            }
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn avx2_and_avx512_microkernels_match_a_scalar_reference() {
    if !available() {
        return;
    }
    let avx512 = is_x86_feature_detected!("avx512f");
    let mut k32: Vec<Micro<f32>> = vec![f32_kernel::micro];
    let mut k64: Vec<Micro<f64>> = vec![f64_kernel::micro];
    if avx512 {
        k32.push(f32_kernel::micro512);
        k64.push(f64_kernel::micro512);
    }
    check::<f32>(&k32);
    check::<f64>(&k64);
}
