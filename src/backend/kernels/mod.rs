//! The kernel families a device implements, one trait per family (the supertraits of
//! [`Backend`](super::Backend)); the list with one line each is in the `backend` module docs.
//! Each file holds one family's methods with their contracts; the CPU bodies implement them in
//! the matching files of `cpu/`.

mod attention;
mod conv;
mod copy;
mod elementwise;
mod linalg;
mod movement;
mod nn;
mod norm;
mod optim;
mod pool;
mod reduce;
mod resample;
mod sparse;

pub(crate) use attention::AttentionKernels;
pub(crate) use conv::ConvKernels;
pub(crate) use copy::CopyKernels;
pub(crate) use copy::Ramp;
pub(crate) use elementwise::ElementwiseKernels;
pub(crate) use linalg::LinalgKernels;
pub(crate) use movement::MovementKernels;
pub(crate) use nn::NnKernels;
pub(crate) use norm::NormKernels;
pub(crate) use optim::OptimKernels;
pub(crate) use pool::PoolKernels;
pub(crate) use reduce::ReduceKernels;
pub(crate) use resample::ResampleKernels;
pub(crate) use sparse::SparseKernels;
