//! Data movement that copies, one file per concept; each holds its public `impl Tensor` methods,
//! kernels and backward: [`copy`] (`copy`, `contiguous`, `to_dtype`, `copy_`, `fill_`, `zero_`),
//! [`shape`] (`cat`, `stack`, `flip`, `roll`, `repeat`, `tril`/`triu`, `one_hot`), [`gather`]
//! (`index_select`, `gather`, `scatter`, `scatter_add` — typed kernels reading the index in
//! place — and the [`gather::take`] / `put_add` primitives over flat positions),
//! [`scatter_reduce`] and [`select`] (`nonzero`, `masked_select`).
//!
//! Derivative rules (`g` = output gradient):
//! - copy/contiguous: `g`; to_dtype: `g.to_dtype(x.dtype)`; copy_: `g` to `src` (cast, summed to
//!   its shape), zero to the overwritten self; fill_/zero_: zero
//! - cat/stack: the slice of `g` that came from each input
//! - take (index_select, masked_select, embedding, sort): `g` scatter-added back to the
//!   source positions; put_add: `g` taken at the positions
//! - gather: `zeros(x.shape).scatter_add(dim, index, g)`
//! - scatter: `g.scatter(dim, index, 0)` for self, `g.gather(dim, index)` for `src` (a `src`
//!   larger than the index: `g` taken at the written positions, zero elsewhere); scatter_add:
//!   `g` for self, the same for `src`
//! - scatter_reduce: PyTorch's `scatter_reduce_backward` (sum, prod, mean, amax/amin)
//! - nonzero, one_hot: not differentiable

pub(crate) mod copy;
pub(crate) mod gather;
pub(crate) mod scatter_reduce;
pub(crate) mod select;
pub(crate) mod shape;

pub use scatter_reduce::{IncludeSelf, ScatterReduce};
