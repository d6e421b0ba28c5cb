//! Front door of the attention family: [`sdpa_forward`]
//! ([`AttentionKernels::sdpa_forward`](crate::backend::AttentionKernels::sdpa_forward)), the fused
//! forward of `scaled_dot_product_attention` over contiguous operands, and [`AttnGeom`], its
//! geometry.

use super::conv::lock_all;
use crate::DType;
use crate::storage::DeviceBuffer;
use crate::tensor::TensorData;

/// The geometry of one attention forward: `bh` independent heads of `l` queries and `s` keys,
/// query/key width `e`, value width `ev`, scores scaled by `scale`, keys `j > i` masked out
/// for query `i` when `causal`.
#[derive(Clone, Copy, Debug)]
pub(crate) struct AttnGeom {
    pub bh: usize,
    pub l: usize,
    pub s: usize,
    pub e: usize,
    pub ev: usize,
    pub scale: f64,
    pub causal: bool,
}

/// Asserts that `t` is contiguous with `numel` elements of `dt` inside its storage.
fn check(buf: &DeviceBuffer, t: &TensorData, numel: usize, dt: DType) {
    assert!(
        t.layout.is_contiguous() && t.layout.numel() == numel,
        "internal: attention operand must be contiguous with the geometry's sizes"
    );
    super::assert_inside(buf.len(), &t.layout, dt.size());
}

/// `out [bh, l, ev]` (fresh, contiguous, its own storage) = attention of `q [bh, l, e]`, `k
/// [bh, s, e]` and `v [bh, s, ev]` (contiguous, dtype `dt`, f32 or f64): see
/// [`AttentionKernels::sdpa_forward`](crate::backend::AttentionKernels::sdpa_forward).
pub(crate) fn sdpa_forward(
    out: &TensorData,
    q: &TensorData,
    k: &TensorData,
    v: &TensorData,
    g: &AttnGeom,
    dt: DType,
) {
    let (mut w, reads, slot) = lock_all(&out.storage, &[&q.storage, &k.storage, &v.storage]);
    check(&w, out, g.bh * g.l * g.ev, dt);
    assert!(out.layout.offset() == 0, "internal: fresh output");
    let (rq, rk, rv) = (&*reads[slot[0]], &*reads[slot[1]], &*reads[slot[2]]);
    check(rq, q, g.bh * g.l * g.e, dt);
    check(rk, k, g.bh * g.s * g.e, dt);
    check(rv, v, g.bh * g.s * g.ev, dt);
    on_device!(&mut *w, rq, |B, o, bq| {
        on_device!(rk, |_B2, bk| {
            on_device!(rv, |_B3, bv| {
                B::sdpa_forward(
                    o,
                    (bq, q.layout.offset()),
                    (bk, k.layout.offset()),
                    (bv, v.layout.offset()),
                    g,
                    dt,
                )
            })
        })
    })
}
