//! The collectives of a [`ProcessGroup`] on tensors of every dtype: `all_reduce_`,
//! `broadcast_`, `all_gather`, `reduce_scatter`, `barrier`, each blocking or (`_async`)
//! returning a [`Work`] to wait on.
//!
//! In-place collectives follow tapegrad's aliasing rules: the result is written with `copy_`
//! when the [`Work`] is waited on, so a non-contiguous destination works, a view writes through
//! to its base, the version is bumped once, and an expanded (self-overlapping) destination is
//! refused (`InvalidArgument`) before anything is sent. They are not differentiable: a
//! destination that requires grad is refused in grad mode (`Unsupported`; use the autograd-aware
//! [`all_reduce`](super::all_reduce), or run under `no_grad` as DDP does).
//!
//! Reductions ([`ReduceOp`]) apply to every dtype with PyTorch's exceptions: `Avg` is refused
//! for `bool` (where `Sum`/`Max` are logical or and `Product`/`Min` logical and), `Max`, `Min`
//! and `Product` for complex dtypes. `Avg` divides the sum by the group size (integers
//! truncating toward zero). `f16`/`bf16` reduce in `f32` and round once.

use super::process_group::{ProcessGroup, Snapshot, Work};
use super::wire::{Wire, check_reduce, mpi_op, on_wire};
use crate::autograd::{is_grad_enabled, no_grad};
use crate::ops::util::check_no_internal_overlap;
use crate::{Result, Tensor, bail};
use mpi::collective::CommunicatorCollectives;
use mpi::topology::{Communicator, Rank};
use mpi::traits::Root;

/// A reduction for [`ProcessGroup::all_reduce_`] and [`ProcessGroup::reduce_scatter`]
/// (PyTorch's `ReduceOp`).
///
/// Every dtype takes every reduction with PyTorch's exceptions: `Avg` is refused for `bool`
/// (where `Sum`/`Max` are logical or and `Product`/`Min` logical and, as NCCL maps them), and
/// `Max`, `Min` and `Product` for complex dtypes (PyTorch's `supports_complex`); refused
/// reductions are `Unsupported` errors raised before anything is sent. `Avg` divides the sum
/// by the group size (integers truncating toward zero). `f16`/`bf16` reduce in `f32` and are
/// rounded once.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ReduceOp {
    /// Elementwise sum.
    Sum,
    /// Sum divided by the group size.
    Avg,
    /// Elementwise product.
    Product,
    /// Elementwise maximum.
    Max,
    /// Elementwise minimum.
    Min,
}

/// Refuses a destination an in-place collective cannot write: expanded (self-overlapping), or
/// requiring grad while grad mode is on.
fn check_destination(t: &Tensor, what: &'static str) -> Result<()> {
    check_no_internal_overlap(&t.data(), what)?;
    if t.requires_grad() && is_grad_enabled() {
        bail!(
            Unsupported,
            what,
            "in-place collectives are not differentiable and the tensor requires grad: use the autograd-aware `distributed::all_reduce`, or call it under `no_grad`"
        );
    }
    Ok(())
}

/// Writes `w` (the elements of a tensor shaped like `dst`) into `dst` with `copy_`.
fn write_back(dst: &Tensor, w: &Wire) -> Result<()> {
    let r = w.to_tensor(0, &dst.shape(), dst.dtype())?;
    let _g = no_grad();
    dst.copy_(&r)?;
    Ok(())
}

impl ProcessGroup {
    /// Reduces `t` over the group with `op`, in place on every rank (PyTorch's
    /// `all_reduce(t, op)`); see [`ReduceOp`] for the dtypes each reduction applies to and
    /// [`ProcessGroup`] for destinations.
    ///
    /// Errors: `InvalidArgument` for an expanded destination, `Unsupported` for a reduction the
    /// dtype does not support or a destination requiring grad in grad mode. Nothing is sent
    /// then, so every rank must get the same error.
    pub fn all_reduce_(&self, t: &Tensor, op: ReduceOp) -> Result<()> {
        self.all_reduce_async_(t, op)?.wait()
    }

    /// [`all_reduce_`](ProcessGroup::all_reduce_) without waiting: `t` is read now and written
    /// when the returned [`Work`] is waited on.
    pub fn all_reduce_async_(&self, t: &Tensor, op: ReduceOp) -> Result<Work> {
        check_reduce(op, t.dtype(), "all_reduce_")?;
        check_destination(t, "all_reduce_")?;
        let w = self.reduce_wire(Snapshot::of(t)?, op)?;
        let dst = t.clone();
        Ok(Work::new(w, move |w| write_back(&dst, &w)))
    }

    /// Queues the all-reduce of a snapshot; the receiver gets the reduced elements.
    pub(crate) fn reduce_wire(
        &self,
        s: Snapshot,
        op: ReduceOp,
    ) -> Result<std::sync::mpsc::Receiver<Wire>> {
        let n = self.world_size();
        let done = self.run(move |c| {
            let mop = mpi_op(op, s.dtype);
            let mut out = s.wire.like(s.wire.len());
            match (&s.wire, &mut out) {
                (Wire::U8(a), Wire::U8(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::I8(a), Wire::I8(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::I16(a), Wire::I16(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::I32(a), Wire::I32(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::I64(a), Wire::I64(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::F32(a), Wire::F32(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::F64(a), Wire::F64(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::C64(a), Wire::C64(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                (Wire::C128(a), Wire::C128(b)) => c.all_reduce_into(&a[..], &mut b[..], mop),
                _ => unreachable!("like() keeps the variant"),
            }
            if op == ReduceOp::Avg {
                out.divide(n);
            }
            out
        })?;
        Ok(done.into_receiver())
    }

    /// Overwrites `t` on every rank with its value on rank `src` of this group (PyTorch's
    /// `broadcast(t, src)`). Errors: `InvalidArgument` for `src` outside the group or an
    /// expanded destination, `Unsupported` for a destination requiring grad in grad mode.
    pub fn broadcast_(&self, t: &Tensor, src: usize) -> Result<()> {
        self.broadcast_async_(t, src)?.wait()
    }

    /// [`broadcast_`](ProcessGroup::broadcast_) without waiting.
    pub fn broadcast_async_(&self, t: &Tensor, src: usize) -> Result<Work> {
        if src >= self.world_size() {
            bail!(
                InvalidArgument,
                "broadcast_",
                "src rank {} is not in a group of size {}",
                src,
                self.world_size()
            );
        }
        check_destination(t, "broadcast_")?;
        let mut s = Snapshot::of(t)?;
        let done = self.run(move |c| {
            let root = c.process_at_rank(src as Rank);
            on_wire!(&mut s.wire, v => root.broadcast_into(&mut v[..]));
            s.wire
        })?;
        let dst = t.clone();
        Ok(Work::new(done.into_receiver(), move |w| {
            write_back(&dst, &w)
        }))
    }

    /// `t` of every rank, in rank order (PyTorch's `all_gather(list, t)`): new tensors of
    /// `t`'s shape and dtype. Every rank must pass the same shape and dtype (MPI aborts the job
    /// on a size mismatch).
    pub fn all_gather(&self, t: &Tensor) -> Result<Vec<Tensor>> {
        self.all_gather_async(t)?.wait()
    }

    /// [`all_gather`](ProcessGroup::all_gather) without waiting.
    pub fn all_gather_async(&self, t: &Tensor) -> Result<Work<Vec<Tensor>>> {
        let s = Snapshot::of(t)?;
        let n = self.world_size();
        let (shape, dtype) = (s.shape.clone(), s.dtype);
        let done = self.run(move |c| {
            let mut out = s.wire.like(s.wire.len() * n);
            match (&s.wire, &mut out) {
                (Wire::U8(a), Wire::U8(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::I8(a), Wire::I8(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::I16(a), Wire::I16(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::I32(a), Wire::I32(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::I64(a), Wire::I64(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::F32(a), Wire::F32(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::F64(a), Wire::F64(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::C64(a), Wire::C64(b)) => c.all_gather_into(&a[..], &mut b[..]),
                (Wire::C128(a), Wire::C128(b)) => c.all_gather_into(&a[..], &mut b[..]),
                _ => unreachable!("like() keeps the variant"),
            }
            out
        })?;
        Ok(Work::new(done.into_receiver(), move |w| {
            let len: usize = shape.iter().product();
            (0..n)
                .map(|r| w.to_tensor(r * len, &shape, dtype))
                .collect()
        }))
    }

    /// Reduces `inputs[r]` over the group with `op` and returns the result on rank `r`
    /// (PyTorch's `reduce_scatter(out, inputs, op)`, output returned). `inputs` holds one tensor
    /// per rank, all of one shape and dtype. Errors: `InvalidArgument` for a wrong count,
    /// `ShapeMismatch`/`DTypeMismatch` for differing inputs, `Unsupported` for a reduction the
    /// dtype does not support.
    pub fn reduce_scatter(&self, inputs: &[Tensor], op: ReduceOp) -> Result<Tensor> {
        self.reduce_scatter_async(inputs, op)?.wait()
    }

    /// [`reduce_scatter`](ProcessGroup::reduce_scatter) without waiting.
    pub fn reduce_scatter_async(&self, inputs: &[Tensor], op: ReduceOp) -> Result<Work<Tensor>> {
        let n = self.world_size();
        if inputs.len() != n {
            bail!(
                InvalidArgument,
                "reduce_scatter",
                "expected one input per rank ({}), got {}",
                n,
                inputs.len()
            );
        }
        let (shape, dtype) = (inputs[0].shape(), inputs[0].dtype());
        for t in inputs {
            if t.shape() != shape {
                bail!(
                    ShapeMismatch,
                    "reduce_scatter",
                    "inputs must have one shape: {:?} vs {:?}",
                    shape,
                    t.shape()
                );
            }
            if t.dtype() != dtype {
                bail!(
                    DTypeMismatch,
                    "reduce_scatter",
                    "inputs must have one dtype: {} vs {}",
                    dtype,
                    t.dtype()
                );
            }
        }
        check_reduce(op, dtype, "reduce_scatter")?;
        let wire = Wire::from_tensors(inputs)?;
        let len: usize = shape.iter().product();
        let done = self.run(move |c| {
            let mop = mpi_op(op, dtype);
            let mut out = wire.like(len);
            match (&wire, &mut out) {
                (Wire::U8(a), Wire::U8(b)) => c.reduce_scatter_block_into(&a[..], &mut b[..], mop),
                (Wire::I8(a), Wire::I8(b)) => c.reduce_scatter_block_into(&a[..], &mut b[..], mop),
                (Wire::I16(a), Wire::I16(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::I32(a), Wire::I32(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::I64(a), Wire::I64(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::F32(a), Wire::F32(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::F64(a), Wire::F64(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::C64(a), Wire::C64(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                (Wire::C128(a), Wire::C128(b)) => {
                    c.reduce_scatter_block_into(&a[..], &mut b[..], mop)
                }
                _ => unreachable!("like() keeps the variant"),
            }
            if op == ReduceOp::Avg {
                out.divide(n);
            }
            out
        })?;
        Ok(Work::new(done.into_receiver(), move |w| {
            w.to_tensor(0, &shape, dtype)
        }))
    }

    /// Blocks until every rank of the group has reached it (PyTorch's `barrier()`).
    pub fn barrier(&self) -> Result<()> {
        self.run(|c| c.barrier())?.recv_done()
    }
}
