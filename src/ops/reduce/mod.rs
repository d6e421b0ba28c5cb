//! Reductions, one file per concept; each holds its public `impl Tensor` methods, kernels and
//! backward: [`sum`] (`sum`, `sum_dims`, `sum_to_size`, `nansum`, `count_nonzero`),
//! [`minmax`] (`max`/`min`, `amax`/`amin`, `argmax`/`argmin`), [`stats`] (`mean`, `var`/`std`,
//! `logsumexp`, `norm`, `all`/`any`), [`prod`] (`prod`, `prod_dtype`), [`scan`] (`cumsum`,
//! `cumprod`), [`sort`] (`sort`, `argsort`, `topk`); shared row plumbing and the weight-based
//! backward in [`util`].
//!
//! Derivative rules (`g` = output gradient re-expanded over the reduced dims, `x` = input,
//! `out` = result):
//! - sum: `g`; nansum: `g` where `x` is not NaN (else 0); sum_to_size: `g` expanded back;
//!   mean: composed; var: `(2 / dof) g (x - mean(x))`; std: var's with `0.5 g / out` (0 where
//!   `out == 0`)
//! - max/min (all), amax/amin: `g * ties / count(ties)` (split evenly among ties)
//! - max_dim/min_dim: `g` at the returned index; argmax/argmin: not differentiable
//! - prod: `g * conj(out / x)`; with a zero in the input `g * conj(excl_cumprod(x) *
//!   reverse_excl_cumprod(x))` (PyTorch's `prod_backward`); logsumexp: `g * conj(exp(x - out))`
//! - norm: L2 `g x / out` (0 where `out == 0`), L1 `g sign(x)`, ±inf `g` split among the extrema,
//!   p = 0: none (no gradient), other p: `g sgn(x) |x|^(p-1) / out^(p-1)` (masked at zeros);
//!   complex input: the norm of `abs(x)`
//! - all/any: not differentiable
//! - cumsum: `reverse_cumsum(g)`; cumprod: `reverse_cumsum(g conj(out)) / conj(x)`; with zeros
//!   PyTorch's first-zero rule, or its O(n^2) sum of omitted products while building a graph
//! - sort/topk: `g` scattered back to the picked positions (through `take`)

pub(crate) mod minmax;
pub(crate) mod prod;
pub(crate) mod scan;
pub(crate) mod sort;
pub(crate) mod stats;
pub(crate) mod sum;
pub(crate) mod util;

pub use sort::Stability;
pub use stats::NormOrd;
