//! CPU kernels. The strided ones (`copy`, `matmul`) are `unsafe` at the boundary: callers pass
//! base pointers of locked storages plus geometry that has already been bounds-checked against
//! those storages. The flat ones (`elementwise`, `sum`) work on slices.

pub(crate) mod copy;
pub(crate) mod elementwise;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gemm_x86;
pub(crate) mod matmul;
pub(crate) mod sum;
pub(crate) mod team;
