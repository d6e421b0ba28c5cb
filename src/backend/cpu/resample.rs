//! Resampling kernels over contiguous planes and the position plan of a [`PlaneMap`]:
//! [`plane_gather`] (a weighted sum of taps per output position, or a plain copy when the map
//! has no weights, in any dtype) and its adjoint [`plane_scatter`]. One task per block of
//! planes on the rayon pool when the size pays.

use super::Cpu;
use super::rowwise::{elems, elems_mut};
use crate::DType;
use crate::backend::PlaneMap;
use crate::backend::ResampleKernels;
use crate::dtype::{Element, FloatCompute};
use crate::match_dtype;
use crate::storage::CpuBuffer;
use rayon::prelude::*;

/// Elements from which a kernel runs on the rayon pool.
const PAR_ELEMS: usize = 1 << 15;

/// Runs `f(dst_plane, src_plane)` over every pair of planes (`dp` elements per plane of `d`,
/// `sp` of `s`), blocks of planes in parallel when the size pays.
fn per_plane<A: Send, B: Sync>(
    d: &mut [A],
    dp: usize,
    s: &[B],
    sp: usize,
    work: usize,
    f: impl Fn(&mut [A], &[B]) + Sync,
) {
    let n = d.len().checked_div(dp).unwrap_or(0);
    if n == 0 {
        return;
    }
    let run = |d: &mut [A], s: &[B]| {
        for p in 0..d.len() / dp {
            let sp_range = if sp == 0 {
                &s[..0]
            } else {
                &s[p * sp..(p + 1) * sp]
            };
            f(&mut d[p * dp..(p + 1) * dp], sp_range);
        }
    };
    if n > 1 && n * work >= PAR_ELEMS && super::threads::parallel() {
        let per = (PAR_ELEMS / work.max(1)).max(1);
        super::threads::install(|| {
            if sp == 0 {
                d.par_chunks_mut(per * dp).for_each(|d| run(d, &s[..0]));
            } else {
                d.par_chunks_mut(per * dp)
                    .zip(s.par_chunks(per * sp))
                    .for_each(|(d, s)| run(d, s));
            }
        });
    } else {
        run(d, s);
    }
}

/// See [`ResampleKernels::plane_gather`].
pub(super) fn plane_gather(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    map: &PlaneMap,
    fill: f64,
    dt: DType,
) {
    let (ip, op, taps) = (map.in_plane, map.out_plane, map.taps);
    assert!(
        map.src.len() == op * taps && map.weight.as_ref().is_none_or(|w| w.len() == op * taps),
        "internal: one source (and weight) per tap"
    );
    if map.planes * op == 0 {
        return;
    }
    match &map.weight {
        None => match_dtype!(dt, all, T => {
            let s = elems::<T>(src, so, map.planes * ip);
            let d = elems_mut::<T>(dst, map.planes * op);
            let fill = T::from_f64(fill);
            per_plane(d, op, s, ip, op * taps, |d, s| {
                for (o, out) in d.iter_mut().enumerate() {
                    let mut acc: Option<T> = None;
                    for &i in &map.src[o * taps..(o + 1) * taps] {
                        if i != PlaneMap::NONE {
                            acc = Some(match acc {
                                None => s[i],
                                Some(a) => a.add(s[i]),
                            });
                        }
                    }
                    *out = acc.unwrap_or(fill);
                }
            });
        }),
        Some(w) => match_dtype!(dt, float, (T, C) => {
            let s = elems::<T>(src, so, map.planes * ip);
            let d = elems_mut::<T>(dst, map.planes * op);
            let w: Vec<C> = w.iter().map(|&v| C::from_f64(v)).collect();
            let fill = T::from_f64(fill);
            per_plane(d, op, s, ip, op * taps, |d, s| {
                for (o, out) in d.iter_mut().enumerate() {
                    let mut acc = C::zero();
                    let mut any = false;
                    let range = o * taps..(o + 1) * taps;
                    for (&i, &wt) in map.src[range.clone()].iter().zip(&w[range]) {
                        if i != PlaneMap::NONE {
                            acc = acc.add(wt.mul(s[i].widen()));
                            any = true;
                        }
                    }
                    *out = if any { T::narrow(acc) } else { fill };
                }
            });
        }),
    }
}

/// See [`ResampleKernels::plane_scatter`].
pub(super) fn plane_scatter(
    dst: &mut CpuBuffer,
    src: &CpuBuffer,
    so: usize,
    map: &PlaneMap,
    dt: DType,
) {
    let (ip, op, taps) = (map.in_plane, map.out_plane, map.taps);
    assert!(
        map.src.len() == op * taps && map.weight.as_ref().is_none_or(|w| w.len() == op * taps),
        "internal: one source (and weight) per tap"
    );
    if map.planes * ip == 0 || op == 0 {
        return;
    }
    match &map.weight {
        None => match_dtype!(dt, all, T => {
            let s = elems::<T>(src, so, map.planes * op);
            let d = elems_mut::<T>(dst, map.planes * ip);
            per_plane(d, ip, s, op, op * taps, |d, s| {
                for (o, &g) in s.iter().enumerate() {
                    for &i in &map.src[o * taps..(o + 1) * taps] {
                        if i != PlaneMap::NONE {
                            d[i] = d[i].add(g);
                        }
                    }
                }
            });
        }),
        Some(w) => match_dtype!(dt, float, (T, C) => {
            let s = elems::<T>(src, so, map.planes * op);
            let d = elems_mut::<T>(dst, map.planes * ip);
            let w: Vec<C> = w.iter().map(|&v| C::from_f64(v)).collect();
            per_plane(d, ip, s, op, op * taps, |d, s| {
                // accumulate in the compute type, narrow once (f16/bf16 sums stay exact-ish)
                let mut acc = vec![C::zero(); d.len()];
                for (o, g) in s.iter().enumerate() {
                    let g = g.widen();
                    let range = o * taps..(o + 1) * taps;
                    for (&i, &wt) in map.src[range.clone()].iter().zip(&w[range]) {
                        if i != PlaneMap::NONE {
                            acc[i] = acc[i].add(wt.mul(g));
                        }
                    }
                }
                for (d, a) in d.iter_mut().zip(acc) {
                    *d = T::narrow(a);
                }
            });
        }),
    }
}

impl ResampleKernels for Cpu {
    fn plane_gather(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        map: &PlaneMap,
        fill: f64,
        dt: DType,
    ) {
        plane_gather(dst, src, so, map, fill, dt)
    }

    fn plane_scatter(dst: &mut CpuBuffer, src: &CpuBuffer, so: usize, map: &PlaneMap, dt: DType) {
        plane_scatter(dst, src, so, map, dt)
    }
}
