//! Elementwise ops, one file per concept; each file holds its public `impl Tensor` methods, the
//! kernel calls and the backward struct.
//!
//! - [`map`]: the one-input drivers (`unary_map`, `unary_into`) and dtype runners
//!   (`float_go!`, `int_go!`, ...) every file below uses.
//! - [`unary`]: math, activations and rounding ([`unary::UOp`]) with their in-place forms;
//!   derivatives in [`unary_grad`] (a table), the GELU math in [`activation`], the complex
//!   forms (values and `g conj(f'(z))` gradients) in [`unary_complex`].
//! - [`binary`]: `add`/`sub` (with alpha), `mul`, `div` and in-place forms; [`binary_out`]:
//!   `add_out`; [`div_round`]: `div_rounding`.
//! - [`binary_extra`]: `maximum`/`minimum`, `fmax`/`fmin`, `floor_divide`/`remainder`/`fmod`,
//!   `atan2`, `hypot` (with in-place forms).
//! - [`mask`]: `where_`, `masked_fill`, `nan_to_num`; [`clamp`]; [`pow`] (and `square`);
//!   [`lerp`]: `lerp` (PyTorch's two-branch kernel), `addcdiv`, `addcmul` (composed values).
//! - [`arith_scalar`]: the dense fast path of arithmetic with a non-promoting Rust scalar (out
//!   of place, in place, on a gradient the engine hands over).
//! - [`compare`]: comparisons, logical and bitwise ops, `isnan`/`isinf`/`isfinite`, and their
//!   in-place twins (no autograd but the zero gradient of the in-place comparisons);
//!   [`close`]: `isclose`, `allclose`, `equal`.
//!
//! Derivative rules (`g` = output gradient, `x`/`y` = inputs, `out` = result):
//! - unary ops: see the table in [`unary_grad`]; complex inputs: `g conj(f'(z))`
//! - add/sub: `g`, `±alpha g` (summed to each input's shape); mul: `g conj(y)`, `g conj(x)`;
//!   div: `g / conj(y)`, `-g conj((x / y) / y)`; conj: `conj(g)`
//! - maximum/minimum: `g` to the chosen input, halved on ties; fmax/fmin: `g` to the chosen
//!   input (`x` on ties or when `y` is NaN)
//! - remainder/fmod: `g`, `-g * floor(x / y)` (fmod: `trunc`); floor_divide: none (backward
//!   through it is a `NotImplemented` error, as in PyTorch)
//! - atan2: `g y / (x² + y²)`, `-g x / (x² + y²)` (0 where `x² + y² = 0`); hypot: `g x / out`,
//!   `g y / out`
//! - div_rounding: zero for both inputs
//! - where_: `g` where `cond` (else 0) for `a`, `g` where `!cond` for `b`; masked_fill: `g` where
//!   `!mask` for self, `sum(g where mask)` for a tensor value; nan_to_num: `g` where finite
//! - clamp: `g` where `lo < x < hi` (NaN passes), else 0; with tensor bounds: maximum then
//!   minimum's rule
//! - pow: `g e x^(e-1)` for the base (0 for `e == 0`), `g out ln(x)` for a tensor exponent (0
//!   where `x == 0` and `e >= 0`), `g out ln(base)` for a scalar base
//! - lerp: `g (1 - conj w)`, `g conj w`, `g conj(end - x)` for a tensor weight
//! - addcdiv: `g`, `g conj(value / t2)`, `-g conj(value t1 / (t2 t2))`
//! - addcmul: composed of add/mul; square: pow's rule (`2 g x`)
//! - in-place comparisons (`eq_`, ...): zero for `self` and `other`
//! - comparisons, logical, bitwise: not differentiable

pub(crate) mod activation;
pub(crate) mod arith_scalar;
pub(crate) mod binary;
pub(crate) mod binary_extra;
pub(crate) mod binary_out;
pub(crate) mod clamp;
pub(crate) mod close;
pub(crate) mod compare;
pub(crate) mod div_round;
pub(crate) mod lerp;
pub(crate) mod map;
pub(crate) mod mask;
pub(crate) mod pow;
pub(crate) mod unary;
pub(crate) mod unary_complex;
pub(crate) mod unary_grad;

pub use activation::Approximate;
pub use div_round::RoundingMode;
