//! PyTorch type promotion: the pairwise lattice ([`promote_types`]) and `result_type` with the
//! three priority classes (tensors with dims > 0, 0-dim tensors, wrapped scalars).

use super::{Category, DType, Scalar};
use crate::Tensor;

/// Promotes two dtypes along PyTorch's lattice (`torch.promote_types`).
pub fn promote_types(a: DType, b: DType) -> DType {
    use DType::*;
    if a == b {
        return a;
    }
    if a == Bool {
        return b;
    }
    if b == Bool {
        return a;
    }
    let (ca, cb) = (a.category(), b.category());
    match (ca, cb) {
        (Category::Integral, Category::Integral) => {
            // u8 is the only unsigned: with a signed int it needs at least i16.
            let rank = |d: DType| match d {
                I8 => 1,
                U8 | I16 => 2,
                I32 => 3,
                _ => 4,
            };
            match rank(a).max(rank(b)) {
                2 => I16,
                3 => I32,
                _ => I64,
            }
        }
        (Category::Integral, _) => b,
        (_, Category::Integral) => a,
        (Category::Floating, Category::Floating) => {
            if (a == F16 && b == BF16) || (a == BF16 && b == F16) {
                F32
            } else {
                a.max(b)
            }
        }
        _ => {
            // at least one complex
            if a == F64 || b == F64 || a == C128 || b == C128 {
                C128
            } else {
                C64
            }
        }
    }
}

/// One operand of a binary/ternary op: a tensor or a Rust scalar (a "wrapped number").
#[derive(Clone, Debug)]
pub enum Operand {
    /// A tensor operand.
    Tensor(Tensor),
    /// A scalar operand.
    Scalar(Scalar),
}

impl From<&Tensor> for Operand {
    fn from(t: &Tensor) -> Self {
        Operand::Tensor(t.clone())
    }
}
impl From<Tensor> for Operand {
    fn from(t: Tensor) -> Self {
        Operand::Tensor(t)
    }
}
impl<S: Into<Scalar>> From<S> for Operand {
    fn from(s: S) -> Self {
        Operand::Scalar(s.into())
    }
}

fn combine_categories(higher: Option<DType>, lower: Option<DType>) -> Option<DType> {
    let Some(h) = higher else { return lower };
    let Some(l) = lower else { return Some(h) };
    if h.is_complex() {
        return Some(h);
    }
    if l.is_complex() {
        return Some(if h.is_float() { h.to_complex() } else { l });
    }
    if h.is_float() {
        return Some(h);
    }
    if h == DType::Bool || l.is_float() {
        return Some(promote_types(h, l));
    }
    Some(h)
}

fn join(acc: Option<DType>, d: DType) -> Option<DType> {
    Some(match acc {
        None => d,
        Some(a) => promote_types(a, d),
    })
}

/// `torch.result_type` over several operands: tensors with dims outrank 0-dim tensors, which
/// outrank scalars, except that a higher *category* (bool < int < float < complex) always wins.
pub fn result_type(operands: &[&Operand]) -> DType {
    // with a single tensor its rank does not matter (dims > 0 and 0-dim both outrank scalars
    // alone), so it is not read: reading it takes the tensor's geometry lock
    let tensors = operands
        .iter()
        .filter(|o| matches!(o, Operand::Tensor(_)))
        .count();
    let (mut dim, mut zero, mut wrapped) = (None, None, None);
    for op in operands {
        match op {
            Operand::Tensor(t) if tensors < 2 || t.dim() > 0 => dim = join(dim, t.dtype()),
            Operand::Tensor(t) => zero = join(zero, t.dtype()),
            Operand::Scalar(s) => wrapped = join(wrapped, s.default_dtype()),
        }
    }
    combine_categories(dim, combine_categories(zero, wrapped)).unwrap_or(DType::F32)
}

/// `result_type(tensor of dtype t, scalar s)` without building operands.
pub(crate) fn result_type_scalar(t: DType, s: &Scalar) -> DType {
    combine_categories(Some(t), Some(s.default_dtype())).unwrap_or(t)
}
