//! CPU kernels. Every function here is `unsafe` at the boundary: callers pass base pointers of
//! locked storages plus geometry that has already been bounds-checked against those storages.

pub(crate) mod copy;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gemm_x86;
pub(crate) mod matmul;
