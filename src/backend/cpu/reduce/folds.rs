//! The sequential folds of the reductions without a lane kernel for every geometry: the
//! element-type and wrapping-integer products, vector norms, the two passes of logsumexp and
//! `all`/`any`. Each visits a row's elements in order, as PyTorch's scalar loop does.

use super::rows::Fold;
use crate::dtype::cast;
use crate::{Element, NormOrd};

/// Product in the element type, sequential from 1 (`1 * x0 * x1 ...`, each step rounded to
/// `T`): PyTorch's scalar reduction loop for floats (f16/bf16 round at every step) and complex
/// (the naive `(ac - bd) + (ad + bc)i` product, so `1 * (inf + 0i)` is `inf + nan i`).
pub(super) struct ProdT;
impl<T: Element> Fold<T> for ProdT {
    type S = T;
    fn init(&self, _: usize) -> T {
        T::one()
    }
    #[inline(always)]
    fn step(&self, s: &mut T, v: T, _: usize) {
        *s = s.mul(v);
    }
}

/// Wrapping `i64` product.
pub(super) struct ProdI;
impl<T: Element> Fold<T> for ProdI {
    type S = i64;
    fn init(&self, _: usize) -> i64 {
        1
    }
    #[inline(always)]
    fn step(&self, s: &mut i64, v: T, _: usize) {
        *s = s.wrapping_mul(cast::<T, i64>(v));
    }
}

/// The zero `Iterator::sum` of f64 starts from (so empty rows keep its sign).
fn sum_zero() -> f64 {
    std::iter::empty::<f64>().sum()
}

/// Vector norms in f64 (L2 before its square root, a general p before its `1/p` power).
pub(super) struct Norm(pub(super) NormOrd);
impl<T: Element> Fold<T> for Norm {
    type S = f64;
    fn init(&self, _: usize) -> f64 {
        match self.0 {
            NormOrd::L1 | NormOrd::L2 | NormOrd::P(_) => sum_zero(),
            NormOrd::Inf => 0.0,
            NormOrd::NegInf => f64::INFINITY,
        }
    }
    #[inline(always)]
    fn step(&self, s: &mut f64, v: T, _: usize) {
        let b = cast::<T, f64>(v).abs();
        *s = match self.0 {
            NormOrd::L1 => *s + b,
            NormOrd::L2 => *s + b * b,
            NormOrd::Inf | NormOrd::NegInf if b.is_nan() || s.is_nan() => f64::NAN,
            NormOrd::Inf => s.max(b),
            NormOrd::NegInf => s.min(b),
            // p = 0 counts the non-zeros (NaN included)
            NormOrd::P(0.0) => *s + f64::from(u8::from(b != 0.0)),
            NormOrd::P(p) => *s + b.powf(p),
        };
    }
}

/// Largest element (NaN ignored) and whether a NaN was seen: pass 1 of logsumexp.
pub(super) struct LseMax;
impl<T: Element> Fold<T> for LseMax {
    type S = (f64, bool);
    fn init(&self, _: usize) -> Self::S {
        (f64::NEG_INFINITY, false)
    }
    #[inline(always)]
    fn step(&self, s: &mut Self::S, v: T, _: usize) {
        let v = cast::<T, f64>(v);
        s.0 = s.0.max(v);
        s.1 |= v.is_nan();
    }
}

/// `sum(exp(x - shift[row]))`: pass 2 of logsumexp.
pub(super) struct LseSum<'a>(pub(super) &'a [(f64, bool)]);
impl<T: Element> Fold<T> for LseSum<'_> {
    type S = (f64, f64);
    fn init(&self, row: usize) -> Self::S {
        (sum_zero(), self.0[row].0)
    }
    #[inline(always)]
    fn step(&self, s: &mut Self::S, v: T, _: usize) {
        s.0 += (cast::<T, f64>(v) - s.1).exp();
    }
}

/// `all` (`ALL`) or `any` of the elements as bool.
pub(super) struct Logic<const ALL: bool>;
impl<T: Element, const ALL: bool> Fold<T> for Logic<ALL> {
    type S = bool;
    fn init(&self, _: usize) -> bool {
        ALL
    }
    #[inline(always)]
    fn step(&self, s: &mut bool, v: T, _: usize) {
        let b = cast::<T, bool>(v);
        *s = if ALL { *s && b } else { *s || b };
    }
}
