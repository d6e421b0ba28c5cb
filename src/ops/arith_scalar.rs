//! Arithmetic of a dense f32/f64 tensor with a Rust scalar that does not promote it, straight
//! on the dense fast path (no 0-dim tensor for the scalar): out of place, in place, on a
//! gradient the engine handed over, and on a region of a gradient CopySlices holds. One table
//! of closures serves all four, so they compute the values of the general kernel (the scalar
//! is converted to the element type first).

use super::dense;
use super::elementwise::binary::Arith;
use crate::autograd::ScalarGrad;
use crate::layout::Layout;
use crate::{DType, Result, Scalar, Tensor};

/// Evaluates `$call` with `$f` bound to `&|x: $T| x op v` (`v`: `$s` converted to `$T`) and
/// `$T` naming the element type when `$dt` is f32 or f64; `$other` for any other type.
macro_rules! with_scalar_op {
    ($dt:expr, $op:expr, $s:expr, $other:expr, |$f:ident: $T:ident| $call:expr) => {{
        macro_rules! go {
            ($E:ty) => {{
                type $T = $E;
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
            }};
        }
        match $dt {
            DType::F32 => go!(f32),
            DType::F64 => go!(f64),
            _ => $other,
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

/// `g[region] = g[region] op s` for a gradient buffer CopySlices holds outright (see
/// [`crate::ops::geometry::owned_base_grad`]), with the values `ArithBackward`'s `g * s` /
/// `g / s` gives. False when not done: an element type other than f32/f64 (unless the
/// gradient passes through unchanged), or a region naming an element twice.
pub(crate) fn scalar_grad_region(g: &mut Tensor, region: &Layout, grad: ScalarGrad) -> bool {
    let (op, s) = match grad {
        ScalarGrad::Identity => return true,
        ScalarGrad::Mul(s) => (Arith::Mul, s),
        ScalarGrad::Div(s) => (Arith::Div, s),
    };
    with_scalar_op!(g.dtype(), op, s, false, |f: T| {
        dense::unary_region_owned::<T>(g, region, f)
    })
}
