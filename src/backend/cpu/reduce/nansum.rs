//! `nansum`: a sum with NaN read as zero. Contiguous float rows run the sum kernels (torch's
//! inner-sum order of [`row_sum`] for rows, the pairwise lanes of [`sum`]'s `sum()` for one
//! full row), other geometries the f64 [`NanSum`] fold.

use super::rows::Fold;
use crate::Element;
use crate::backend::cpu::elementwise::simd;
use crate::backend::cpu::{row_sum, sum};
use crate::dtype::cast;

/// The sum of a contiguous float row with NaN read as zero, in the compute type (f16/bf16 in
/// f32), in torch's inner-sum order ([`row_sum::row_sum`], in vectors for f32/f64 rows by
/// [`row_sum::dense`]; a row shorter than a vector in its ILP-4 order).
pub(super) fn nansum_row<T: Element + crate::dtype::FloatCompute>(x: &[T]) -> T::C
where
    T::C: Element,
{
    let simd = simd();
    match row_sum::dense::<T, true>(x, simd) {
        Some(s) => <T::C as Element>::from_f64(s),
        None => row_sum::row_sum(x, &nan_as_zero::<T>, simd),
    }
}

/// The sum of one long contiguous float row (a full `nansum`) with NaN read as zero, by
/// [`sum::sum`]'s pairwise lanes on the team: the order of `sum()` of the same tensor.
pub(super) fn nansum_all<T: Element + crate::dtype::FloatCompute>(x: &[T]) -> T::C
where
    T::C: Element,
{
    sum::sum(x, &nan_as_zero::<T>)
}

/// `v` in its compute type, NaN read as zero (the element conversion of both nansum kernels).
#[inline(always)]
#[allow(clippy::eq_op)]
fn nan_as_zero<T: Element + crate::dtype::FloatCompute>(v: T) -> T::C
where
    T::C: Element,
{
    let w = v.widen();
    if w == w { w } else { <T::C as Element>::zero() }
}

/// Sum in f64 from `+0.0` with NaN read as zero: `nansum` over rows that are not contiguous.
pub(super) struct NanSum;
impl<T: Element> Fold<T> for NanSum {
    type S = f64;
    fn init(&self, _: usize) -> f64 {
        0.0
    }
    #[inline(always)]
    #[allow(clippy::eq_op)]
    fn step(&self, s: &mut f64, v: T, _: usize) {
        let v = cast::<T, f64>(v);
        if v == v {
            *s += v;
        }
    }
}
