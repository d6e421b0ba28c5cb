//! Sorting rows of a strided source (its last dim, see [`super::reduce::Geo`]) by order keys:
//! every element maps to a `u64` whose unsigned order is PyTorch's (integers exactly, floats
//! with `-0 == +0` and every NaN equal and above `+inf`), inverted for descending order. Pairs
//! `(key, index)` then sort unstably, which is the stable order by key; `topk` selects its `k`
//! first with `select_nth_unstable` before sorting them. Rows run on the kernel team.

use super::reduce::{Geo, elems, elems_mut};
use super::team;
use crate::layout::Layout;
use crate::storage::CpuBuffer;
use crate::{DType, Element, match_dtype};

/// Elements of work below which a sort runs on one thread.
const PAR_MIN: usize = 1 << 14;

/// The order key of a float.
#[inline]
fn fkey(v: f64) -> u64 {
    if v.is_nan() {
        return u64::MAX;
    }
    let b = if v == 0.0 { 0 } else { v.to_bits() };
    if b >> 63 == 1 { !b } else { b | 1 << 63 }
}

/// The order key of an integer.
#[inline]
fn ikey(v: i64) -> u64 {
    (v as u64) ^ (1 << 63)
}

/// [`crate::backend::ReduceKernels::sort`] on the CPU.
#[allow(clippy::too_many_arguments)]
pub(crate) fn sort(
    idx: &mut CpuBuffer,
    il: &Layout,
    src: &CpuBuffer,
    sl: &Layout,
    sdt: DType,
    pl: &Layout,
    k: usize,
    descending: bool,
    sorted: bool,
) -> Vec<usize> {
    let gs = Geo::new(sl, 1);
    let gi = Geo::new(il, 1);
    let gp = Geo::new(pl, 1);
    let (m, r) = (gs.m, gs.r);
    let flip = if descending { u64::MAX } else { 0 };
    let float = sdt.is_float();
    let np = if m * r < PAR_MIN || m < 2 {
        1
    } else {
        (team::size() * team::PARTS_PER_THREAD).min(m)
    };
    let per = m.div_ceil(np);
    let picked = team::map(np, &|p| {
        let (lo, hi) = ((p * per).min(m), ((p + 1) * per).min(m));
        let mut out: Vec<u32> = Vec::with_capacity((hi - lo) * k);
        let mut keys: Vec<(u64, u32)> = Vec::with_capacity(r);
        for i in lo..hi {
            keys.clear();
            let b = gs.base(i);
            match_dtype!(sdt, real, T => {
                let x = elems::<T>(src);
                keys.extend(gs.red.iter().enumerate().map(|(j, &o)| {
                    let v = x[(b + o) as usize];
                    let key = if float { fkey(v.to_f64()) } else { ikey(v.to_i64()) };
                    (key ^ flip, j as u32)
                }));
            });
            if k < r && k > 0 {
                keys.select_nth_unstable(k - 1);
                keys.truncate(k);
            }
            keys.truncate(k);
            if sorted {
                keys.sort_unstable();
            } else {
                keys.sort_unstable_by_key(|p| p.1);
            }
            out.extend(keys.iter().map(|p| p.1));
        }
        out
    });
    // indices into `idx`; the logical source position of every output position
    let d = elems_mut::<i64>(idx);
    let mut pos = vec![0usize; m * k];
    let mut i = 0;
    for ch in &picked {
        for row in ch.chunks_exact(k.max(1)) {
            let (bi, bp) = (gi.base(i), gp.base(i));
            for (&o, &j) in gi.red.iter().zip(row) {
                d[(bi + o) as usize] = j as i64;
                pos[(bi + o) as usize] = (bp + gp.red[j as usize]) as usize;
            }
            i += 1;
        }
    }
    pos
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_order_like_torch() {
        let v = [
            f64::NEG_INFINITY,
            -1.5,
            -0.0,
            0.0,
            2.0,
            f64::INFINITY,
            f64::NAN,
        ];
        let k: Vec<u64> = v.iter().map(|&x| fkey(x)).collect();
        assert!(k.windows(2).all(|w| w[0] <= w[1]));
        assert_eq!(k[2], k[3]);
        assert!(k[4] < k[5] && k[5] < k[6]);
        assert_eq!(fkey(-f64::NAN), fkey(f64::NAN));
        assert!(ikey(-3) < ikey(0) && ikey(0) < ikey(i64::MAX));
    }
}
