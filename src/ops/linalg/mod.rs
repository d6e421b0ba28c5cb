//! Linear algebra: the matmul family in [`matmul`] (`mm`, `bmm`, `dot` with their backward, and
//! the compositions `matmul`, `addmm`, `outer`, `linear`), [`einsum`] (composed of views,
//! `sum_dims`, `mul` and `bmm`) and [`baddbmm`] (one node). The kernel is the backend's batched
//! matmul (`Backend::bmm`, CPU code in `backend/cpu/matmul.rs`); f16/bf16 are multiplied in f32.
//!
//! Derivative rules (`g` = output gradient):
//! - mm/bmm: `g @ conj(b)^T` for `a`, `conj(a)^T @ g` for `b`
//! - dot: `g conj(b)`, `g conj(a)`
//! - matmul of a matrix and a vector (PyTorch's `mv`, one node in `matmul.rs`): `outer(g,
//!   conj(v))` for the matrix, `conj(a)^T @ g` for the vector
//! - matmul (other ranks), addmm, outer, linear: composed of mm/bmm/dot, views and arithmetic
//! - einsum: composed (diagonal/permute/reshape views, sum_dims, mul, bmm)
//! - baddbmm: `beta g` (summed to `self`'s shape) for `self`, `alpha g @ batch2^H` for
//!   `batch1`, `alpha batch1^H @ g` for `batch2`

mod baddbmm;
mod einsum;
pub(crate) mod matmul;
