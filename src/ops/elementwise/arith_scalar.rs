//! Arithmetic of a dense f32/f64 tensor with a Rust scalar that does not promote it, straight
//! on the dense fast path (no 0-dim tensor for the scalar): out of place, in place, and on a
//! gradient the engine handed over. One table of closures serves all three, so they compute the
//! values of the general kernel (the scalar is converted to the element type first); the fourth
//! form, on a region of a gradient CopySlices holds, is the backend's `scalar_update`.

use super::binary::Arith;
use crate::ops::dense;
use crate::{DType, Result, Scalar, Tensor};

/// Evaluates `$call` with `$f` bound to `&|x: $T| x op v` (`v`: `$s` converted to `$T`) and
/// `$T` naming the element type when `$dt` is f32 or f64 (the `float` form of
/// [`crate::match_dtype!`] without its half types, which compute in f32); `$other` otherwise.
macro_rules! with_scalar_op {
    ($dt:expr, $op:expr, $s:expr, $other:expr, |$f:ident: $T:ident| $call:expr) => {{
        let dt: DType = $dt;
        if matches!(dt, DType::F16 | DType::BF16) {
            $other
        } else {
            crate::match_dtype!(dt, float, $T => {
                let v: $T = $s.to::<$T>();
                match $op {
                    Arith::Add => {
                        let $f = &move |x: $T| x + v;
                        $call
                    }
                    Arith::Sub => {
                        let $f = &move |x: $T| x - v;
                        $call
                    }
                    Arith::Mul => {
                        let $f = &move |x: $T| x * v;
                        $call
                    }
                    Arith::Div => {
                        let $f = &move |x: $T| x / v;
                        $call
                    }
                }
            }, else $other)
        }
    }};
}

/// `a op s`; `None` when `a` is not a canonically contiguous f32/f64 tensor.
#[inline]
pub(super) fn arith_scalar_dense(op: Arith, a: &Tensor, s: Scalar) -> Option<Result<Tensor>> {
    with_scalar_op!(a.dtype(), op, s, None, |f: T| dense::unary::<T, T>(a, f))
}

/// `a op= s`; false (nothing done) unless `a` is a non-overlapping dense f32/f64 tensor.
#[inline]
pub(super) fn arith_scalar_dense_inplace(op: Arith, a: &Tensor, s: Scalar) -> bool {
    with_scalar_op!(a.dtype(), op, s, false, |f: T| dense::unary_inplace::<T>(
        a, f
    ))
}

/// [`arith_scalar_dense_inplace`] on a gradient the engine handed over, if nobody else can
/// observe it (see [`dense::unary_inplace_owned`]; no locks).
#[inline]
pub(super) fn arith_scalar_dense_owned(op: Arith, a: &mut Tensor, s: Scalar) -> bool {
    with_scalar_op!(
        a.dtype(),
        op,
        s,
        false,
        |f: T| dense::unary_inplace_owned::<T>(a, f)
    )
}
