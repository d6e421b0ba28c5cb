//! The built-in backward functions that need kernels: AccumulateGrad (a leaf's gradient sink),
//! CopySlices (a base's history after an in-place op on a view), the strided-view backward
//! (`AsStridedBackward0`, the multi-output view backward, their differentiable scatter) and
//! view regeneration. They call the backend's front door (`crate::backend`) and tensor methods;
//! the rest of `autograd/` (node, engine, saved tensors, metadata, grad mode) imports nothing
//! from `ops` or `backend`.

mod accumulate;
mod as_strided;
mod copy_slices;

pub(crate) use accumulate::{accumulate_into, grad_accumulator};
pub(crate) use as_strided::{AsStridedBackward, MultiViewBackward, regenerate};
pub(crate) use copy_slices::{CopySlices, ScalarGrad};
