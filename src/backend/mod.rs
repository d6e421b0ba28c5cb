//! Backends: kernels that see raw buffers and layouts, never `Tensor` or autograd. Only the CPU
//! backend exists; a `cuda` module behind the `cuda` feature will sit beside it with the same
//! entry points, so tensor and autograd code never change.

pub(crate) mod cpu;
