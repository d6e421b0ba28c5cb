//! Front doors of the convolution family: the three products of one convolution geometry
//! ([`ConvKernels::conv_forward`](crate::backend::ConvKernels::conv_forward),
//! [`ConvKernels::conv_backward_input`](crate::backend::ConvKernels::conv_backward_input),
//! [`ConvKernels::conv_backward_weight`](crate::backend::ConvKernels::conv_backward_weight)) over
//! contiguous operands, and [`ConvGeom`], the geometry they share.

use crate::DType;
use crate::backend::Device;
use crate::storage::{DeviceBuffer, Storage};
use crate::tensor::TensorData;
use parking_lot::{RwLockReadGuard, RwLockWriteGuard};
use smallvec::SmallVec;

/// The geometry of one N-d convolution (`N` = 1, 2 or 3 spatial dims): input `[n, c_in,
/// in_sp..]`, weight `[c_out, c_in / groups, k..]`, output `[n, c_out, out_sp..]`. Input
/// position `o * stride + k * dilation - pad` feeds output position `o` through kernel tap `k`
/// (per spatial dim); positions outside the input read as zero. The output sizes are given,
/// not derived, so asymmetric padding (`padding="same"` with an even kernel) and the output
/// padding of a transposed convolution are the same geometry.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct ConvGeom {
    pub n: usize,
    pub c_in: usize,
    pub c_out: usize,
    pub groups: usize,
    pub in_sp: SmallVec<[usize; 3]>,
    pub out_sp: SmallVec<[usize; 3]>,
    pub k_sp: SmallVec<[usize; 3]>,
    pub stride: SmallVec<[usize; 3]>,
    pub pad: SmallVec<[usize; 3]>,
    pub dilation: SmallVec<[usize; 3]>,
}

impl ConvGeom {
    /// The kernels' invariant on positions: along every spatial dim the last input position
    /// an output reads before the padding is subtracted, `(out - 1) * stride + (k - 1) *
    /// dilation`, and the padding itself fit in int64 (so no position the kernels compute
    /// overflows an `isize`). Callers refuse other geometry with `InvalidArgument`.
    pub fn positions_fit(&self) -> bool {
        (0..self.in_sp.len()).all(|i| {
            let last = (self.out_sp[i] as i128 - 1).max(0) * self.stride[i] as i128
                + (self.k_sp[i] as i128 - 1).max(0) * self.dilation[i] as i128;
            last <= i64::MAX as i128 && self.pad[i] as i128 <= i64::MAX as i128
        })
    }
    /// Elements of the input `[n, c_in, in_sp..]`.
    pub fn input_numel(&self) -> usize {
        self.n * self.c_in * self.in_sp.iter().product::<usize>()
    }
    /// Elements of the output `[n, c_out, out_sp..]`.
    pub fn output_numel(&self) -> usize {
        self.n * self.c_out * self.out_sp.iter().product::<usize>()
    }
    /// Elements of the weight `[c_out, c_in / groups, k..]`.
    pub fn weight_numel(&self) -> usize {
        self.c_out * (self.c_in / self.groups) * self.k_sp.iter().product::<usize>()
    }
}

/// Write lock of `out` and read locks of the distinct storages of `ins`, taken in ascending
/// storage id order; returns the write guard and, per input, the index of its read guard.
pub(super) fn lock_all<'a>(
    out: &'a Storage,
    ins: &[&'a Storage],
) -> (
    RwLockWriteGuard<'a, DeviceBuffer>,
    Vec<RwLockReadGuard<'a, DeviceBuffer>>,
    Vec<usize>,
) {
    let mut uniq: Vec<&Storage> = Vec::new();
    let slot: Vec<usize> = ins
        .iter()
        .map(|s| match uniq.iter().position(|u| u.same(s)) {
            Some(i) => i,
            None => {
                uniq.push(s);
                uniq.len() - 1
            }
        })
        .collect();
    assert!(
        uniq.iter().all(|u| !u.same(out)),
        "internal: convolution output aliases an operand"
    );
    let mut order: Vec<usize> = (0..=uniq.len()).collect();
    let id = |i: usize| {
        if i == uniq.len() {
            out.id()
        } else {
            uniq[i].id()
        }
    };
    order.sort_by_key(|&i| id(i));
    let mut w = None;
    let mut reads: Vec<Option<RwLockReadGuard<'a, DeviceBuffer>>> =
        (0..uniq.len()).map(|_| None).collect();
    for i in order {
        if i == uniq.len() {
            w = Some(out.write_device());
        } else {
            reads[i] = Some(uniq[i].read_device());
        }
    }
    let reads = reads.into_iter().map(|r| r.expect("locked")).collect();
    (w.expect("locked"), reads, slot)
}

/// Asserts that `t` is contiguous and holds `numel` elements of `dt` inside its storage.
fn check(buf: &DeviceBuffer, t: &TensorData, numel: usize, dt: DType) {
    assert!(
        t.layout.is_contiguous() && t.layout.numel() == numel,
        "internal: convolution operand must be contiguous with the geometry's sizes"
    );
    super::assert_inside(buf.len(), &t.layout, dt.size());
}

/// Which product of the geometry a front door runs.
#[derive(Clone, Copy)]
enum Product {
    Forward,
    BackwardInput,
    BackwardWeight,
}

/// Runs one product: `out` (fresh, contiguous, its own storage) from `a`, `b` and an optional
/// per-channel `bias` (all contiguous, dtype `dt`).
fn run(
    p: Product,
    out: &TensorData,
    a: &TensorData,
    b: &TensorData,
    bias: Option<&TensorData>,
    g: &ConvGeom,
    dt: DType,
) {
    let mut ins = vec![&a.storage, &b.storage];
    if let Some(t) = bias {
        ins.push(&t.storage);
    }
    // the kernels' invariants: every operand holds at least one element (the callers
    // compute empty products without a kernel, so every size product below is the size of
    // an allocation) and the positions fit (`ConvGeom::positions_fit`)
    assert!(
        [out, a, b].iter().all(|t| t.layout.numel() > 0) && g.positions_fit(),
        "internal: convolution kernel on an empty operand or with positions beyond int64"
    );
    let (mut w, reads, slot) = lock_all(&out.storage, &ins);
    let (out_n, a_n, b_n, bias_n) = match p {
        Product::Forward => (g.output_numel(), g.input_numel(), g.weight_numel(), g.c_out),
        Product::BackwardInput => (g.input_numel(), g.output_numel(), g.weight_numel(), g.c_in),
        Product::BackwardWeight => (g.weight_numel(), g.input_numel(), g.output_numel(), 0),
    };
    check(&w, out, out_n, dt);
    assert!(out.layout.offset() == 0, "internal: fresh output");
    let (ra, rb) = (&*reads[slot[0]], &*reads[slot[1]]);
    check(ra, a, a_n, dt);
    check(rb, b, b_n, dt);
    let rbias = bias.map(|t| {
        let r = &*reads[slot[2]];
        check(r, t, bias_n, dt);
        (r, t.layout.offset())
    });
    let (ao, bo) = (a.layout.offset(), b.layout.offset());
    on_device!(&mut *w, ra, |B, o, x| {
        on_device!(rb, |_B2, y| {
            let bias = rbias.map(|(r, off)| (<B as Device>::buffer(r), off));
            // SAFETY: every operand is contiguous with the geometry's element count and lies
            // inside its buffer (checked above); `out` is a distinct storage (asserted by
            // `lock_all`) and fresh, so it has no internal overlap.
            unsafe {
                match p {
                    Product::Forward => B::conv_forward(o, x, ao, y, bo, bias, g, dt),
                    Product::BackwardInput => B::conv_backward_input(o, x, ao, y, bo, bias, g, dt),
                    Product::BackwardWeight => B::conv_backward_weight(o, x, ao, y, bo, g, dt),
                }
            }
        })
    })
}

/// `out = conv(x, w) + bias`: see
/// [`ConvKernels::conv_forward`](crate::backend::ConvKernels::conv_forward).
pub(crate) fn forward(
    out: &TensorData,
    x: &TensorData,
    w: &TensorData,
    bias: Option<&TensorData>,
    g: &ConvGeom,
    dt: DType,
) {
    run(Product::Forward, out, x, w, bias, g, dt)
}

/// `out = conv_transpose(gy, w) + bias` (the input gradient): see
/// [`ConvKernels::conv_backward_input`](crate::backend::ConvKernels::conv_backward_input).
pub(crate) fn backward_input(
    out: &TensorData,
    gy: &TensorData,
    w: &TensorData,
    bias: Option<&TensorData>,
    g: &ConvGeom,
    dt: DType,
) {
    run(Product::BackwardInput, out, gy, w, bias, g, dt)
}

/// `out` = the weight gradient of `x` and `gy`: see
/// [`ConvKernels::conv_backward_weight`](crate::backend::ConvKernels::conv_backward_weight).
pub(crate) fn backward_weight(
    out: &TensorData,
    x: &TensorData,
    gy: &TensorData,
    g: &ConvGeom,
    dt: DType,
) {
    run(Product::BackwardWeight, out, x, gy, None, g, dt)
}
