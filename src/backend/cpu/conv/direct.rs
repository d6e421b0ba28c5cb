//! Stride-1 f32 convolution on AVX-512 without a column matrix (serves `conv2d_3x3_c64_56`,
//! where building and packing the column matrix took a quarter of the time).
//!
//! The input rows one part needs are copied once, zero-padded, into a block of `wp`-wide rows
//! (`wp = w_in + 2 pad` or more, one channel after another). In that block the element that tap
//! `(c, kh, kw)` reads for output `(oh, ow)` sits at `off(c, kh, kw) + j` with the flat index
//! `j = oh * wp + ow`: each row of the column matrix is the block itself shifted by its `off`,
//! so the product reads the block in place:
//!
//! `out[oc, j] = sum_p w[oc, p] * block[off[p] + j]`
//!
//! The flat index also runs over the `wp - w_out` columns past each output row: those lanes
//! are computed and never stored (every store is masked to one output row's `w_out` columns).
//! The product runs as `6 x 32` register tiles (6 output channels, two vectors of 16 flat
//! positions); the weights are packed once per call into 6-row panels, one pass over a block
//! of input channels at a time (about `KC` taps) so that a tile's input stays in L1, the
//! passes after the first adding to the output.

use super::im2col::G3;
use super::{Shared, add_bias, with_cols};
use crate::backend::cpu::elementwise::{Simd, simd};
use crate::backend::cpu::team;
use std::arch::x86_64::*;

/// Output channels per register tile.
const MR: usize = 6;
/// Flat output positions per register tile (two 16-lane vectors).
const NR: usize = 32;
/// Most taps per pass: a tile's input (`KC` shifted 32-wide rows) and its weight panel stay in
/// L1 together.
const KC: usize = 320;
/// Bytes of one part's padded input block (it stays in L2 while its tiles run).
const BLOCK_BYTES: usize = 512 * 1024;

/// Whether the kernels here compute this call: f32 elements, unit strides, one or two spatial
/// dims, a kernel wider than one tap (1x1 kernels multiply the input in place already), an
/// AVX-512 CPU.
pub(super) fn fits<T: 'static>(g: &G3) -> bool {
    std::any::TypeId::of::<T>() == std::any::TypeId::of::<f32>()
        && g.s == [1; 3]
        && g.i[0] == 1
        && g.o[0] == 1
        && !g.pointwise()
        && simd() == Simd::Avx512
}

/// The fixed shape of one call: the padded block and the passes over input channels.
#[derive(Clone, Copy)]
struct Plan {
    /// Padded row width (`w_in + 2 pad`, or the last output column's reach when wider).
    wp: usize,
    /// Output rows per part (the last part of an image may have fewer).
    rows: usize,
    /// Padded rows per channel in the block (`rows` plus the kernel's reach).
    rs: usize,
    /// Input channels per pass.
    cb: usize,
    /// Register-tile panels of output channels per group.
    panels: usize,
    /// Taps per input channel.
    taps: usize,
}

impl Plan {
    fn new(g: &G3) -> Plan {
        // `padding="same"` with an even reach pads one more column on the right than on the
        // left: the row reaches to the last output column's last tap
        let wp = (g.i[2] + 2 * g.p[2]).max(g.o[2] + (g.k[2] - 1) * g.d[2]);
        let reach = (g.k[1] - 1) * g.d[1];
        let row_bytes = g.cg * wp * 4;
        let rows = (BLOCK_BYTES / row_bytes.max(1))
            .saturating_sub(reach)
            .clamp(1, g.o[1]);
        let taps = g.k[1] * g.k[2];
        let passes = (g.cg * taps).div_ceil(KC);
        Plan {
            wp,
            rows,
            rs: rows + reach,
            cb: g.cg.div_ceil(passes),
            panels: g.ocg.div_ceil(MR),
            taps,
        }
    }

    /// Elements of the padded block: every channel's `rs` rows, plus one tile's overreach.
    fn block_len(&self, g: &G3) -> usize {
        g.cg * self.rs * self.wp + NR
    }

    /// Parts of a call: (image, group, block of `rows` output rows).
    fn parts(&self, g: &G3) -> usize {
        g.n * g.groups * g.o[1].div_ceil(self.rows)
    }

    /// Part `p < parts`.
    fn part(&self, g: &G3, p: usize) -> Part {
        let chunks = g.o[1].div_ceil(self.rows);
        let (ng, ch) = (p / chunks, p % chunks);
        let oh0 = ch * self.rows;
        Part {
            n: ng / g.groups,
            gi: ng % g.groups,
            oh0,
            rows: self.rows.min(g.o[1] - oh0),
        }
    }
}

/// One part of a call: image `n`, group `gi`, output rows `oh0..oh0 + rows`.
#[derive(Clone, Copy)]
struct Part {
    n: usize,
    gi: usize,
    oh0: usize,
    rows: usize,
}

/// Runs `f` with the part's padded input block, filled by [`pad_rows`] (a per-thread buffer of
/// `block_len` elements).
///
/// # Safety
/// `x` addresses the whole input, `n * c_in * lin` elements.
unsafe fn with_block<R>(
    x: *const f32,
    g: &G3,
    plan: &Plan,
    t: Part,
    f: impl FnOnce(*const f32) -> R,
) -> R {
    with_cols::<f32, _>(plan.block_len(g), |block| {
        // SAFETY: (image n, group gi) addresses its own `cg * lin` elements of `x` (caller
        // contract); `block` holds `block_len` elements.
        unsafe {
            let xp = x.add((t.n * g.c_in + t.gi * g.cg) * g.lin);
            pad_rows(xp, block, g, plan, t.oh0, t.rows);
        }
        f(block)
    })
}

/// The weights of every group as 6-row panels, pass by pass: group `gi`'s pass starting at
/// channel `c0` (`kc` taps) is `panels` panels of `[kc][MR]` from element
/// `(gi * ck + c0 * taps) * panels * MR`; rows past `ocg` are zero.
fn pack_weights(w: &[f32], g: &G3, plan: &Plan) -> Vec<f32> {
    let stride = plan.panels * MR;
    let mut a = vec![0f32; g.groups * g.ck * stride];
    for gi in 0..g.groups {
        for c0 in (0..g.cg).step_by(plan.cb) {
            let (p0, kc) = (c0 * plan.taps, (plan.cb.min(g.cg - c0)) * plan.taps);
            let pass = &mut a[(gi * g.ck + p0) * stride..][..kc * stride];
            for oc in 0..g.ocg {
                let row = &w[(gi * g.ocg + oc) * g.ck + p0..][..kc];
                let panel = &mut pass[(oc / MR) * kc * MR..][..kc * MR];
                for (p, &v) in row.iter().enumerate() {
                    panel[p * MR + oc % MR] = v;
                }
            }
        }
    }
    a
}

/// See [`ConvKernels::conv_forward`](crate::backend::ConvKernels::conv_forward), for f32
/// geometries that [`fits`] accepts. Parts are (image, group, block of output rows), run on the
/// kernel team.
///
/// # Safety
/// As there; [`fits`] holds.
pub(super) unsafe fn forward(
    out: *mut f32,
    x: *const f32,
    w: *const f32,
    bias: Option<*const f32>,
    g: &G3,
) {
    let g = *g;
    let plan = Plan::new(&g);
    // SAFETY: `w` holds `c_out * ck` elements (caller contract).
    let a = pack_weights(
        unsafe { std::slice::from_raw_parts(w, g.c_out * g.ck) },
        &g,
        &plan,
    );
    let offs = offsets(&g, &plan);
    let (out, x, a) = (Shared(out), Shared::of(x), Shared::of(a.as_ptr()));
    let (offs, bias) = (Shared::of(offs.as_ptr()), bias.map(Shared::of));
    let part = move |p: usize| {
        let t = plan.part(&g, p);
        let body = |block: *const f32| {
            // SAFETY: (image n, group gi) addresses its own slices of the contiguous
            // operands (caller contract); the part writes output rows `oh0..oh0 + rows` of
            // its slice only.
            unsafe {
                let op = out
                    .get()
                    .add((t.n * g.c_out + t.gi * g.ocg) * g.lout + t.oh0 * g.o[2]);
                let ap = a.get().add(t.gi * g.ck * plan.panels * MR) as *const f32;
                products(op, ap, block, offs.get(), &g, &plan, t.rows);
                if let Some(b) = bias {
                    let b = b.get().add(t.gi * g.ocg) as *const f32;
                    add_bias(op, b, g.ocg, t.rows * g.o[2], g.lout);
                }
            }
        };
        // SAFETY: `x` holds every image (caller contract).
        unsafe { with_block(x.get(), &g, &plan, t, body) }
    };
    team::run(plan.parts(&g), &part);
}

/// See [`ConvKernels::conv_backward_input`](crate::backend::ConvKernels::conv_backward_input)
/// of a geometry [`fits`] accepts whose padding is at most the kernel's reach: with unit
/// strides, the input gradient is itself a unit-stride convolution, of `gy` padded by `reach -
/// pad` with the weights flipped in space and their channel axes exchanged (serves
/// `conv2d_3x3_c64_56_fwdbwd`). `false` (nothing written) for any other geometry.
///
/// # Safety
/// As there.
pub(super) unsafe fn backward_input(
    out: *mut f32,
    gy: *const f32,
    w: *const f32,
    bias: Option<*const f32>,
    g: &G3,
) -> bool {
    let Some(t) = transposed(g).filter(fits::<f32>) else {
        return false;
    };
    // SAFETY: `w` holds `c_out * ck` elements (caller contract).
    let w = unsafe { std::slice::from_raw_parts(w, g.c_out * g.ck) };
    let taps = g.k[1] * g.k[2];
    // `flipped[gi*cg + c][oc][tap] = w[gi*ocg + oc][c][taps - 1 - tap]`
    let mut flipped = vec![0f32; w.len()];
    for gi in 0..g.groups {
        for oc in 0..g.ocg {
            for c in 0..g.cg {
                let from = &w[((gi * g.ocg + oc) * g.cg + c) * taps..][..taps];
                let to = &mut flipped[((gi * g.cg + c) * g.ocg + oc) * taps..][..taps];
                for (d, &v) in to.iter_mut().zip(from.iter().rev()) {
                    *d = v;
                }
            }
        }
    }
    // SAFETY: `gy` and `out` hold the transposed geometry's input and output (the forward's
    // output and input); `flipped` its weights.
    unsafe { forward(out, gy, flipped.as_ptr(), bias, &t) };
    true
}

/// Output positions per pass of the weight gradient (whole output rows, at least one): a
/// pass's `gy` columns (`WK x 32`) stay in L1 while every tap's row reads them.
const WK: usize = 128;

/// See [`ConvKernels::conv_backward_weight`](crate::backend::ConvKernels::conv_backward_weight)
/// for f32 geometries that [`fits`] accepts (serves `conv2d_3x3_c64_56_fwdbwd`):
/// `dw[oc, p] = sum_(oh, ow) gy[oc, oh, ow] * block[off[p] + oh * wp + ow]` over each part's
/// padded block (only the `w_out` columns of each row: a column past them may read a
/// non-finite input that no product of the convolution reads). `gy` is transposed first,
/// `[position][oc]`, so a `6 x 32` tile holds 6 taps by 32 output channels. The parts (image,
/// group, block of rows) are split into one run per thread, each summing into its own
/// `[group][tap][oc]` partial; the partials are added in run order, so the result depends on
/// the team's size only.
///
/// # Safety
/// As there; [`fits`] holds.
pub(super) unsafe fn backward_weight(out: *mut f32, x: *const f32, gy: *const f32, g: &G3) {
    let g = *g;
    let plan = Plan::new(&g);
    let offs = offsets(&g, &plan);
    let ocp = g.ocg.next_multiple_of(NR);
    let items = plan.parts(&g);
    let runs = team::size().clamp(1, items);
    let (x, gy, offs_p) = (Shared::of(x), Shared::of(gy), Shared::of(offs.as_ptr()));
    let run = move |r: usize| -> Vec<f32> {
        let mut acc = vec![0f32; g.groups * g.ck * ocp];
        let mut gyt = vec![0f32; plan.rows * g.o[2] * ocp];
        for item in r * items / runs..(r + 1) * items / runs {
            let t = plan.part(&g, item);
            let body = |block: *const f32| {
                // SAFETY: (image n, group gi) addresses its own slices of the contiguous
                // operands (caller contract); `gyt` holds the part's `rows * w_out`
                // positions of `ocp`, `acc` the group's `ck * ocp`.
                unsafe {
                    let gp = gy
                        .get()
                        .add((t.n * g.c_out + t.gi * g.ocg) * g.lout + t.oh0 * g.o[2]);
                    transpose_gy(gp, &mut gyt, &g, t.rows * g.o[2], ocp);
                    let acc = acc.as_mut_ptr().add(t.gi * g.ck * ocp);
                    weight_products(acc, block, offs_p.get(), &gyt, &g, &plan, t.rows, ocp);
                }
            };
            // SAFETY: `x` holds every image (caller contract).
            unsafe { with_block(x.get(), &g, &plan, t, body) }
        }
        acc
    };
    let partial = if runs == 1 {
        vec![run(0)]
    } else {
        team::map(runs, &run)
    };
    // SAFETY: `out` holds `c_out * ck` elements (caller contract).
    let dw = unsafe { std::slice::from_raw_parts_mut(out, g.c_out * g.ck) };
    for gi in 0..g.groups {
        for oc in 0..g.ocg {
            for p in 0..g.ck {
                let at = (gi * g.ck + p) * ocp + oc;
                let mut v = partial[0][at];
                for part in &partial[1..] {
                    v += part[at];
                }
                dw[(gi * g.ocg + oc) * g.ck + p] = v;
            }
        }
    }
}

/// `gyt[q * ocp + oc] = gy[oc * lout + q]` for the part's `len` positions `q` (channels past
/// `ocg` stay zero).
///
/// # Safety
/// `gy` addresses the part's first position of the group's first channel: `len` positions of
/// `ocg` channels `lout` apart.
unsafe fn transpose_gy(gy: *const f32, gyt: &mut [f32], g: &G3, len: usize, ocp: usize) {
    for oc in 0..g.ocg {
        // SAFETY: positions `0..len` of channel `oc < ocg` (caller contract).
        let src = unsafe { std::slice::from_raw_parts(gy.add(oc * g.lout), len) };
        for (q, &v) in src.iter().enumerate() {
            gyt[q * ocp + oc] = v;
        }
    }
}

/// `acc[p][oc] += sum_(r, ow) block[off[p] + r * wp + ow] * gyt[r * w_out + ow][oc]` over the
/// part's output rows `r < rows`: passes of whole rows (about `WK` positions), then 32-wide
/// strips of output channels, then 6-tap tiles.
///
/// # Safety
/// `acc` addresses the group's `ck * ocp` partial sums, `block` a padded block filled for
/// these rows, `offs` the `ck` offsets; `gyt` holds `rows * w_out` positions of `ocp`.
#[target_feature(enable = "avx512f,fma")]
#[allow(clippy::too_many_arguments)]
unsafe fn weight_products(
    acc: *mut f32,
    block: *const f32,
    offs: *const usize,
    gyt: &[f32],
    g: &G3,
    plan: &Plan,
    rows: usize,
    ocp: usize,
) {
    let wo = g.o[2];
    let per = (WK / wo).max(1);
    for r0 in (0..rows).step_by(per) {
        let pass = Pass {
            rows: per.min(rows - r0),
            wo,
            wp: plan.wp,
            ldb: ocp,
        };
        for o0 in (0..ocp).step_by(NR) {
            let b = gyt[r0 * wo * ocp + o0..].as_ptr();
            for p0 in (0..g.ck).step_by(MR) {
                let mr = MR.min(g.ck - p0);
                // SAFETY: taps `p0..p0 + mr` have offsets (a missing tap row reads tap `p0`'s
                // and its sums are not stored); tap `p`'s row reads `block[off[p] + r * wp +
                // ow]` for output rows `r0 + r < rows` and columns `ow < w_out`, the elements
                // the forward's stored lanes read, inside the block; `acc` rows `p0..p0 + mr`
                // of strip `o0` are the group's.
                unsafe {
                    let at = |i: usize| *offs.add(p0 + if i < mr { i } else { 0 }) + r0 * plan.wp;
                    let t = weight_tile(std::array::from_fn(|i| block.add(at(i))), b, &pass);
                    for (i, v) in t.iter().enumerate().take(mr) {
                        let c = acc.add((p0 + i) * ocp + o0);
                        _mm512_storeu_ps(c, _mm512_add_ps(_mm512_loadu_ps(c), v[0]));
                        let c = c.add(16);
                        _mm512_storeu_ps(c, _mm512_add_ps(_mm512_loadu_ps(c), v[1]));
                    }
                }
            }
        }
    }
}

/// One pass of the weight gradient: `rows` output rows of `wo` positions, `wp` apart in the
/// block; `gyt`'s positions `ldb` apart.
struct Pass {
    rows: usize,
    wo: usize,
    wp: usize,
    ldb: usize,
}

/// One `6 x 32` weight-gradient tile over a pass: `t[i][h]` lane `l` = `sum_(r, ow) taps[i][r *
/// wp + ow] * b[(r * wo + ow) * ldb + 16 h + l]`.
///
/// # Safety
/// Each tap row addresses the pass's positions; `b` the pass's `rows * wo` positions of `ldb`
/// with 32 readable each.
#[target_feature(enable = "avx512f,fma")]
unsafe fn weight_tile(taps: [*const f32; MR], b: *const f32, e: &Pass) -> [[__m512; 2]; MR] {
    let mut t = [[_mm512_setzero_ps(); 2]; MR];
    for r in 0..e.rows {
        for ow in 0..e.wo {
            // SAFETY: inside the bounds above.
            unsafe {
                let bp = b.add((r * e.wo + ow) * e.ldb);
                let (b0, b1) = (_mm512_loadu_ps(bp), _mm512_loadu_ps(bp.add(16)));
                let a = r * e.wp + ow;
                for (i, row) in t.iter_mut().enumerate() {
                    let av = _mm512_set1_ps(*taps[i].add(a));
                    row[0] = _mm512_fmadd_ps(av, b0, row[0]);
                    row[1] = _mm512_fmadd_ps(av, b1, row[1]);
                }
            }
        }
    }
    t
}

/// The geometry of the input gradient of a unit-stride convolution as a convolution: `gy`'s
/// channels and positions in, the input's out, padding `reach - pad` (`None` when negative).
fn transposed(g: &G3) -> Option<G3> {
    let mut p = [0; 3];
    for (d, p) in p.iter_mut().enumerate() {
        *p = ((g.k[d] - 1) * g.d[d]).checked_sub(g.p[d])?;
    }
    Some(G3 {
        c_in: g.c_out,
        c_out: g.c_in,
        cg: g.ocg,
        ocg: g.cg,
        i: g.o,
        o: g.i,
        p,
        lin: g.lout,
        lout: g.lin,
        ck: g.ocg * g.k.iter().product::<usize>(),
        ..*g
    })
}

/// `off[p]` of every tap `p = (c, kh, kw)` of a group: its element in the padded block.
fn offsets(g: &G3, plan: &Plan) -> Vec<usize> {
    let mut offs = Vec::with_capacity(g.ck);
    for c in 0..g.cg {
        for kh in 0..g.k[1] {
            for kw in 0..g.k[2] {
                offs.push((c * plan.rs + kh * g.d[1]) * plan.wp + kw * g.d[2]);
            }
        }
    }
    offs
}

/// Copies the input rows output rows `oh0..oh0 + rows` read, zero-padded, into `block`
/// (channel `c`'s padded row `r` at `(c * rs + r) * wp`).
///
/// # Safety
/// `x` addresses the group's `cg * lin` input elements; `block` holds `block_len` elements.
unsafe fn pad_rows(x: *const f32, block: *mut f32, g: &G3, plan: &Plan, oh0: usize, rows: usize) {
    let (wi, pw, wp) = (g.i[2], g.p[2], plan.wp);
    let reach = plan.rs - plan.rows;
    for c in 0..g.cg {
        for r in 0..rows + reach {
            // padded row `oh0 + r` is input row `oh0 + r - pad`
            let ih = (oh0 + r).checked_sub(g.p[1]).filter(|&ih| ih < g.i[1]);
            // SAFETY: row `r < rs` of channel `c < cg` lies inside `block`; input row `ih`
            // of channel `c` lies inside the group's input.
            unsafe {
                let dst = block.add((c * plan.rs + r) * wp);
                match ih {
                    None => std::ptr::write_bytes(dst, 0, wp),
                    Some(ih) => {
                        std::ptr::write_bytes(dst, 0, pw);
                        std::ptr::copy_nonoverlapping(
                            x.add((c * g.i[1] + ih) * wi),
                            dst.add(pw),
                            wi,
                        );
                        std::ptr::write_bytes(dst.add(pw + wi), 0, wp - pw - wi);
                    }
                }
            }
        }
    }
}

/// Every tile of one part: passes over input channels, then 32-wide strips of flat positions,
/// then panels of output channels (a strip's input is read from L1 by every panel).
///
/// # Safety
/// `out` addresses output row `oh0` of the group's first output channel (rows `0..rows` of
/// every channel are written), `a` the group's packed weights, `block` a padded block filled
/// by [`pad_rows`] for these rows, `offs` the group's `ck` offsets.
#[target_feature(enable = "avx512f,fma")]
unsafe fn products(
    out: *mut f32,
    a: *const f32,
    block: *const f32,
    offs: *const usize,
    g: &G3,
    plan: &Plan,
    rows: usize,
) {
    let flat = (rows - 1) * plan.wp + g.o[2];
    for c0 in (0..g.cg).step_by(plan.cb) {
        let (p0, kc) = (c0 * plan.taps, plan.cb.min(g.cg - c0) * plan.taps);
        let edge = Edge {
            wp: plan.wp,
            wo: g.o[2],
            lout: g.lout,
            rows,
            accumulate: c0 > 0,
        };
        for j0 in (0..flat).step_by(NR) {
            for q in 0..plan.panels {
                // SAFETY: pass `p0` of panel `q` lies inside the packed weights; the tile's
                // reads `block[off + j0 .. off + j0 + NR]` lie inside the block (`block_len`
                // covers the largest offset plus one tile); its stores are output rows
                // `0..rows` of channels `q*MR..` below `ocg` (caller contract).
                unsafe {
                    let ap = a.add(p0 * plan.panels * MR + q * kc * MR);
                    let acc = tile(kc, ap, block.add(j0), offs.add(p0));
                    let mr = MR.min(g.ocg - q * MR);
                    store(acc, out.add(q * MR * g.lout), mr, j0, &edge);
                }
            }
        }
    }
}

/// One `6 x 32` tile: `acc[i][h]` lanes `l` = `sum_p a[p][i] * b[off[p] + 16 h + l]`.
///
/// # Safety
/// `a` addresses `kc * MR` elements, `offs` `kc` offsets, `b + off + 0..NR` readable elements
/// for each.
#[target_feature(enable = "avx512f,fma")]
unsafe fn tile(kc: usize, a: *const f32, b: *const f32, offs: *const usize) -> [[__m512; 2]; MR] {
    let mut acc = [[_mm512_setzero_ps(); 2]; MR];
    for p in 0..kc {
        // SAFETY: inside the bounds above.
        unsafe {
            let bp = b.add(*offs.add(p));
            let (b0, b1) = (_mm512_loadu_ps(bp), _mm512_loadu_ps(bp.add(16)));
            for (i, row) in acc.iter_mut().enumerate() {
                let av = _mm512_set1_ps(*a.add(p * MR + i));
                row[0] = _mm512_fmadd_ps(av, b0, row[0]);
                row[1] = _mm512_fmadd_ps(av, b1, row[1]);
            }
        }
    }
    acc
}

/// Where a tile's flat positions land in the output of one part.
struct Edge {
    wp: usize,
    wo: usize,
    lout: usize,
    rows: usize,
    accumulate: bool,
}

/// Stores (or adds, after the first pass) the first `mr` rows of a tile at flat position `j0`:
/// per output row the tile touches, a masked store of the lanes inside that row's `wo` columns.
///
/// # Safety
/// `out` addresses output row 0 of the tile's first channel; rows `0..e.rows` of `mr` channels
/// `e.lout` apart are writable.
#[target_feature(enable = "avx512f,fma")]
unsafe fn store(acc: [[__m512; 2]; MR], out: *mut f32, mr: usize, j0: usize, e: &Edge) {
    let mut r = j0 / e.wp;
    while r < e.rows && r * e.wp < j0 + NR {
        let lo = (r * e.wp).max(j0) - j0;
        let hi = (r * e.wp + e.wo).min(j0 + NR).saturating_sub(j0);
        if lo < hi {
            let mask = (((1u64 << (hi - lo)) - 1) << lo) as u32;
            // lane `l` is output column `j0 + l - r * wp` of row `r`; the pointer for lane 0
            // may lie outside the output, so it is formed by wrapping arithmetic and only the
            // masked-in lanes (columns `0..wo` of row `r`) are accessed
            let lane0 = out
                .wrapping_add(r * e.wo)
                .wrapping_offset(j0 as isize - (r * e.wp) as isize);
            for (h, m) in [mask as u16, (mask >> 16) as u16].into_iter().enumerate() {
                if m == 0 {
                    continue;
                }
                for (i, row) in acc.iter().enumerate().take(mr) {
                    let p = lane0.wrapping_add(i * e.lout + 16 * h);
                    // SAFETY: the lanes in `m` address columns `0..wo` of output row `r <
                    // rows` of channel `i < mr` (caller contract); masked-out lanes are not
                    // accessed.
                    unsafe {
                        let v = if e.accumulate {
                            _mm512_add_ps(row[h], _mm512_maskz_loadu_ps(m, p))
                        } else {
                            row[h]
                        };
                        _mm512_mask_storeu_ps(p, m, v);
                    }
                }
            }
        }
        r += 1;
    }
}
