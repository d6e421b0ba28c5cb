//! Fused scaled dot-product attention forward (no autograd graph), f32 and f64: per (head,
//! block of [`BQ`] query rows), the scores against only the keys that block can see (causal:
//! keys `j < i_end`), their row softmax (the masked tail of each row is zero), then the
//! product with `v`, all in a block-sized scratch on the part's thread.
//!
//! Serves `sdpa_causal_b8h8t256d64`: the composed path computes the whole `[L, S]` score
//! matrix, masks its upper triangle, soft-maxes and multiplies it (half of both products and
//! three full passes over the score matrix wasted); here a causal block computes only up to
//! its diagonal. Each row's softmax is the row kernel of `rowwise` and both products are the
//! GEMM of `matmul`, so the result matches the composed path's to rounding of the scale.

use super::Cpu;
use super::matmul::{Mat, matmul_serial};
use super::rowwise::{Real, elems, elems_mut, fwd_rows};
use super::team::{self, SharedOut};
use crate::DType;
use crate::backend::AttentionKernels;
use crate::backend::AttnGeom;
use crate::dtype::{Element, FloatCompute};
use crate::storage::CpuBuffer;

/// Query rows per unit of work (a `BQ x S` score block stays in L2).
const BQ: usize = 64;

/// See [`AttentionKernels::sdpa_forward`].
pub(super) fn sdpa_forward(
    out: &mut CpuBuffer,
    (q, qo): (&CpuBuffer, usize),
    (k, ko): (&CpuBuffer, usize),
    (v, vo): (&CpuBuffer, usize),
    g: &AttnGeom,
    dt: DType,
) {
    match dt {
        DType::F32 => body::<f32, f32>(out, (q, qo), (k, ko), (v, vo), g),
        DType::F64 => body::<f64, f64>(out, (q, qo), (k, ko), (v, vo), g),
        _ => panic!("internal: sdpa_forward takes f32 or f64, got {dt:?}"),
    }
}

fn body<T, C>(
    out: &mut CpuBuffer,
    (q, qo): (&CpuBuffer, usize),
    (k, ko): (&CpuBuffer, usize),
    (v, vo): (&CpuBuffer, usize),
    g: &AttnGeom,
) where
    T: Element + FloatCompute<C = C>,
    C: Real,
{
    let (bh, l, s, e, ev) = (g.bh, g.l, g.s, g.e, g.ev);
    let q = elems::<T>(q, qo, bh * l * e);
    let k = elems::<T>(k, ko, bh * s * e);
    let v = elems::<T>(v, vo, bh * s * ev);
    let out = elems_mut::<T>(out, bh * l * ev);
    if out.is_empty() {
        return;
    }
    let scale = T::narrow(C::of(g.scale));
    let blocks = l.div_ceil(BQ);
    let dst = SharedOut(out.as_mut_ptr());
    let part = |p: usize| {
        let (b, i0) = (p / blocks, (p % blocks) * BQ);
        let m = BQ.min(l - i0);
        // the keys this block sees: causal rows `i < i0 + m` see keys `j <= i`
        let kend = if g.causal { s.min(i0 + m) } else { s };
        // SAFETY: part `p` writes rows `[i0, i0 + m)` of head `b`, disjoint from every other
        // part's and inside `out`, which is borrowed exclusively for the whole call.
        let o = unsafe { std::slice::from_raw_parts_mut(dst.ptr().add((b * l + i0) * ev), m * ev) };
        if kend == 0 {
            o.fill(T::zero());
            return;
        }
        // `q * scale` first, as the composed path rounds it
        let qs: Vec<T> = q[(b * l + i0) * e..][..m * e]
            .iter()
            .map(|&x| x.mul(scale))
            .collect();
        let (kb, vb) = (&k[b * s * e..][..kend * e], &v[b * s * ev..][..kend * ev]);
        let mut sc = vec![T::zero(); m * kend];
        let mut pr = vec![T::zero(); m * kend];
        let mut scratch = vec![C::ZERO; kend];
        // SAFETY: every operand is a slice of the stated size: `sc` [m, kend] row-major,
        // `qs` [m, e] row-major, `kb` [kend, e] row-major read as its transpose [e, kend];
        // `sc` is a fresh vector distinct from both.
        unsafe {
            matmul_serial::<T>(
                m,
                kend,
                e,
                Mat {
                    ptr: sc.as_mut_ptr(),
                    rs: kend as isize,
                    cs: 1,
                },
                Mat {
                    ptr: qs.as_ptr(),
                    rs: e as isize,
                    cs: 1,
                },
                Mat {
                    ptr: kb.as_ptr(),
                    rs: 1,
                    cs: e as isize,
                },
            );
        }
        for r in 0..m {
            let n = if g.causal {
                (i0 + r + 1).min(kend)
            } else {
                kend
            };
            let (row_p, row_s) = (&mut pr[r * kend..][..n], &sc[r * kend..][..n]);
            fwd_rows::<T, C>(row_p, row_s, &mut scratch[..n], n, false);
        }
        // SAFETY: `o` [m, ev] row-major (this part's rows), `pr` [m, kend] row-major (masked
        // tails still zero), `vb` [kend, ev] row-major; `o` is distinct from both.
        unsafe {
            matmul_serial::<T>(
                m,
                ev,
                kend,
                Mat {
                    ptr: o.as_mut_ptr(),
                    rs: ev as isize,
                    cs: 1,
                },
                Mat {
                    ptr: pr.as_ptr(),
                    rs: kend as isize,
                    cs: 1,
                },
                Mat {
                    ptr: vb.as_ptr(),
                    rs: ev as isize,
                    cs: 1,
                },
            );
        }
    };
    let parts = bh * blocks;
    if parts == 1 {
        part(0);
    } else {
        team::run(parts, &part);
    }
}

impl AttentionKernels for Cpu {
    fn sdpa_forward(
        out: &mut CpuBuffer,
        q: (&CpuBuffer, usize),
        k: (&CpuBuffer, usize),
        v: (&CpuBuffer, usize),
        g: &AttnGeom,
        dt: DType,
    ) {
        sdpa_forward(out, q, k, v, g, dt)
    }
}
