//! Rust operators on tensors: `+ - * / %` between tensors and with Rust numbers (on either
//! side), unary `-`, and the compound assignments `+= -= *= /= %=` as in-place ops.
//!
//! A number on the left is an `f64` or an `i64` (what float and integer literals become): with
//! one impl per literal kind, `2.0 * &t` and `3 - &t` infer the literal's type. On the right,
//! any Rust number (anything `Into<Scalar>`).
//!
//! Each operator is the op method of the same name, so values, dtypes, broadcasting, autograd
//! and errors are the method's: `a + b` is [`Tensor::add`], `a % b` is [`Tensor::remainder`]
//! (Python's `%`), `2.0 - a` is [`Tensor::sub_scalar_base`], `-a` is `neg`, and `a += b` is
//! [`Tensor::add_`] (the version bump, the leaf check and CopySlices on views included).
//!
//! # Panics
//!
//! An operator cannot return a `Result`: where its method returns an error (shapes that do not
//! broadcast, an in-place result that cannot be cast, a leaf requiring grad written in place)
//! the operator panics with that error's message (`"add: The size of tensor a (2) must match
//! ..."`), as tch-rs does. The methods stay the checked way: `a.add(&b)?`.
//!
//! The example is in [`Tensor`]'s documentation (section *Operators*).

use super::Tensor;
use crate::{Operand, Result, Scalar};
use std::borrow::Borrow;
use std::ops::{
    Add, AddAssign, Div, DivAssign, Mul, MulAssign, Neg, Rem, RemAssign, Sub, SubAssign,
};

/// The value of an operator's method, or a panic with its error's message.
#[track_caller]
fn or_panic(r: Result<Tensor>) -> Tensor {
    match r {
        Ok(t) => t,
        Err(e) => panic!("{e}"),
    }
}

/// `impl Trait<Rhs> for Lhs` for every tensor/tensor and tensor/number pairing, through
/// `method` (a tensor on the left) and `scalar_lhs` (a number `s` on the left of tensor `t`).
macro_rules! binary_operator {
    ($Trait:ident, $fn:ident, $method:ident, |$s:ident, $t:ident| $scalar_lhs:expr) => {
        binary_operator!(@pair $Trait, $fn, $method, &Tensor, &Tensor);
        binary_operator!(@pair $Trait, $fn, $method, &Tensor, Tensor);
        binary_operator!(@pair $Trait, $fn, $method, Tensor, &Tensor);
        binary_operator!(@pair $Trait, $fn, $method, Tensor, Tensor);
        impl<S: Into<Scalar>> $Trait<S> for &Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: S) -> Tensor {
                or_panic(Tensor::$method(self, Operand::Scalar(rhs.into())))
            }
        }
        impl<S: Into<Scalar>> $Trait<S> for Tensor {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: S) -> Tensor {
                or_panic(Tensor::$method(&self, Operand::Scalar(rhs.into())))
            }
        }
        binary_operator!(@scalar_first $Trait, $fn, |$s, $t| $scalar_lhs; f64, i64);
    };
    (@pair $Trait:ident, $fn:ident, $method:ident, $L:ty, $R:ty) => {
        impl $Trait<$R> for $L {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, rhs: $R) -> Tensor {
                or_panic(Tensor::$method(Borrow::<Tensor>::borrow(&self), Operand::from(rhs)))
            }
        }
    };
    (@scalar_first $Trait:ident, $fn:ident, |$s:ident, $t:ident| $scalar_lhs:expr; $($N:ty),*) => {$(
        impl $Trait<&Tensor> for $N {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, $t: &Tensor) -> Tensor {
                let $s = Scalar::from(self);
                or_panic($scalar_lhs)
            }
        }
        impl $Trait<Tensor> for $N {
            type Output = Tensor;
            #[track_caller]
            fn $fn(self, $t: Tensor) -> Tensor {
                let ($s, $t) = (Scalar::from(self), &$t);
                or_panic($scalar_lhs)
            }
        }
    )*};
}

// `s + t` and `s * t` are `t + s` and `t * s` (PyTorch's `__radd__`, `__rmul__`); the others
// keep the scalar as the first operand (`__rsub__`, `__rtruediv__`, `__rmod__`).
binary_operator!(Add, add, add, |s, t| t.add(s));
binary_operator!(Sub, sub, sub, |s, t| Tensor::sub_scalar_base(s, t));
binary_operator!(Mul, mul, mul, |s, t| t.mul(s));
binary_operator!(Div, div, div, |s, t| Tensor::div_scalar_base(s, t));
binary_operator!(Rem, rem, remainder, |s, t| Tensor::remainder_scalar_base(
    s, t
));

impl Neg for &Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        or_panic(Tensor::neg(self))
    }
}

impl Neg for Tensor {
    type Output = Tensor;
    #[track_caller]
    fn neg(self) -> Tensor {
        or_panic(Tensor::neg(&self))
    }
}

/// `impl TraitAssign<Rhs> for Tensor` (tensor, `&Tensor`, any Rust number) through the
/// in-place method.
macro_rules! assign_operator {
    ($Trait:ident, $fn:ident, $method:ident) => {
        impl $Trait<&Tensor> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: &Tensor) {
                or_panic(Tensor::$method(self, rhs));
            }
        }
        impl $Trait<Tensor> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: Tensor) {
                or_panic(Tensor::$method(self, &rhs));
            }
        }
        impl<S: Into<Scalar>> $Trait<S> for Tensor {
            #[track_caller]
            fn $fn(&mut self, rhs: S) {
                or_panic(Tensor::$method(self, Operand::Scalar(rhs.into())));
            }
        }
    };
}

assign_operator!(AddAssign, add_assign, add_);
assign_operator!(SubAssign, sub_assign, sub_);
assign_operator!(MulAssign, mul_assign, mul_);
assign_operator!(DivAssign, div_assign, div_);
assign_operator!(RemAssign, rem_assign, remainder_);
