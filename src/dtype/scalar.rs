//! [`Scalar`]: a Rust number passed to an op (PyTorch's "wrapped number"). Its category, not its
//! Rust width, takes part in type promotion: an f64 scalar does not promote an f32 tensor.

use super::{C128, Category, DType, Element};

/// A scalar operand or fill value.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Scalar {
    /// A Python bool.
    Bool(bool),
    /// A Python int.
    Int(i64),
    /// A Python float.
    Float(f64),
    /// A Python complex.
    Complex(C128),
}

impl Scalar {
    /// The scalar's category.
    pub fn category(self) -> Category {
        match self {
            Scalar::Bool(_) => Category::Bool,
            Scalar::Int(_) => Category::Integral,
            Scalar::Float(_) => Category::Floating,
            Scalar::Complex(_) => Category::Complex,
        }
    }
    /// The dtype a lone scalar becomes (`torch.tensor(3.0)`: f32, `3`: i64).
    pub fn default_dtype(self) -> DType {
        match self {
            Scalar::Bool(_) => DType::Bool,
            Scalar::Int(_) => DType::I64,
            Scalar::Float(_) => DType::F32,
            Scalar::Complex(_) => DType::C64,
        }
    }
    /// Converts to an element type with C-style casting.
    pub fn to<T: Element>(self) -> T {
        match self {
            Scalar::Bool(b) => T::from_bool(b),
            Scalar::Int(i) => T::from_i64(i),
            Scalar::Float(f) => T::from_f64(f),
            Scalar::Complex(c) => T::from_c128(c),
        }
    }
    /// Value as f64 (complex: real part).
    pub fn to_f64(self) -> f64 {
        self.to::<f64>()
    }
    /// Value as i64.
    pub fn to_i64(self) -> i64 {
        self.to::<i64>()
    }
    /// True if the value equals zero (`-0.0` included).
    pub fn is_zero(self) -> bool {
        match self {
            Scalar::Bool(b) => !b,
            Scalar::Int(i) => i == 0,
            Scalar::Float(f) => f == 0.0,
            Scalar::Complex(c) => c.re == 0.0 && c.im == 0.0,
        }
    }
}

impl From<bool> for Scalar {
    fn from(v: bool) -> Self {
        Scalar::Bool(v)
    }
}
macro_rules! scalar_from {
    ($variant:ident, $conv:ty: $($t:ty),*) => {$(
        impl From<$t> for Scalar {
            fn from(v: $t) -> Self { Scalar::$variant(v as $conv) }
        }
    )*};
}
scalar_from!(Int, i64: i8, i16, i32, i64, u8, u16, u32, usize, isize);
scalar_from!(Float, f64: f32, f64);
impl From<half::f16> for Scalar {
    fn from(v: half::f16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
impl From<half::bf16> for Scalar {
    fn from(v: half::bf16) -> Self {
        Scalar::Float(v.to_f64())
    }
}
impl From<C128> for Scalar {
    fn from(v: C128) -> Self {
        Scalar::Complex(v)
    }
}
impl From<super::C64> for Scalar {
    fn from(v: super::C64) -> Self {
        Scalar::Complex(C128::new(v.re as f64, v.im as f64))
    }
}
