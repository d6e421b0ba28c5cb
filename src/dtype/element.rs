//! The sealed [`Element`] trait: the Rust types that can live in a tensor, with lossless-where-
//! possible conversions between them (PyTorch's C-style casts: float -> int truncates, complex ->
//! real drops the imaginary part, anything -> bool is `!= 0`).

use super::{C64, C128, Category, DType};
use half::{bf16, f16};

mod sealed {
    pub trait Sealed {}
}

/// A Rust type that can be a tensor element. Sealed: implemented for exactly the 12 dtypes.
pub trait Element:
    Copy + Send + Sync + 'static + PartialEq + std::fmt::Debug + Default + sealed::Sealed
{
    /// The dtype of this Rust type.
    const DTYPE: DType;
    /// Value as f64 (complex: real part; bool: 0/1).
    fn to_f64(self) -> f64;
    /// Value as i64 (floats truncate toward zero, saturating).
    fn to_i64(self) -> i64;
    /// Value as complex128.
    fn to_c128(self) -> C128;
    /// `self != 0`.
    fn to_bool(self) -> bool;
    /// From f64 (C-style cast).
    fn from_f64(v: f64) -> Self;
    /// From i64 (wrapping for narrower integers, like C).
    fn from_i64(v: i64) -> Self;
    /// From complex128 (real types keep the real part).
    fn from_c128(v: C128) -> Self;
    /// From bool (0/1).
    fn from_bool(v: bool) -> Self;
    /// Additive identity.
    fn zero() -> Self {
        Self::default()
    }
    /// Multiplicative identity.
    fn one() -> Self {
        Self::from_i64(1)
    }
    /// `self + o` (wrapping for integers, `or` for bool).
    fn add(self, o: Self) -> Self;
    /// `self - o` (wrapping for integers, `xor` for bool).
    fn sub(self, o: Self) -> Self;
    /// `self * o` (wrapping for integers, `and` for bool).
    fn mul(self, o: Self) -> Self;
}

/// Casts one element to another type with PyTorch's conversion rules.
#[inline(always)]
pub(crate) fn cast<S: Element, D: Element>(s: S) -> D {
    match S::DTYPE.category() {
        Category::Bool => D::from_bool(s.to_bool()),
        Category::Integral => D::from_i64(s.to_i64()),
        Category::Floating => D::from_f64(s.to_f64()),
        Category::Complex => D::from_c128(s.to_c128()),
    }
}

macro_rules! int_element {
    ($t:ty, $d:ident) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self as i64
            }
            #[inline(always)]
            fn to_c128(self) -> C128 {
                C128::new(self as f64, 0.0)
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self != 0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                (v as i64) as $t
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                v as $t
            }
            #[inline(always)]
            fn from_c128(v: C128) -> Self {
                (v.re as i64) as $t
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                v as $t
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self.wrapping_add(o)
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self.wrapping_sub(o)
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self.wrapping_mul(o)
            }
        }
    };
}
int_element!(u8, U8);
int_element!(i8, I8);
int_element!(i16, I16);
int_element!(i32, I32);
int_element!(i64, I64);

impl sealed::Sealed for bool {}
impl Element for bool {
    const DTYPE: DType = DType::Bool;
    #[inline(always)]
    fn to_f64(self) -> f64 {
        self as u8 as f64
    }
    #[inline(always)]
    fn to_i64(self) -> i64 {
        self as i64
    }
    #[inline(always)]
    fn to_c128(self) -> C128 {
        C128::new(self as u8 as f64, 0.0)
    }
    #[inline(always)]
    fn to_bool(self) -> bool {
        self
    }
    #[inline(always)]
    fn from_f64(v: f64) -> Self {
        v != 0.0
    }
    #[inline(always)]
    fn from_i64(v: i64) -> Self {
        v != 0
    }
    #[inline(always)]
    fn from_c128(v: C128) -> Self {
        v.re != 0.0 || v.im != 0.0
    }
    #[inline(always)]
    fn from_bool(v: bool) -> Self {
        v
    }
    #[inline(always)]
    fn add(self, o: Self) -> Self {
        self | o
    }
    #[inline(always)]
    fn sub(self, o: Self) -> Self {
        self ^ o
    }
    #[inline(always)]
    fn mul(self, o: Self) -> Self {
        self & o
    }
}

macro_rules! float_element {
    ($t:ty, $d:ident, $to:expr, $from:expr) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                ($to)(self)
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                ($to)(self) as i64
            }
            #[inline(always)]
            fn to_c128(self) -> C128 {
                C128::new(($to)(self), 0.0)
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                ($to)(self) != 0.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                ($from)(v)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                ($from)(v as f64)
            }
            #[inline(always)]
            fn from_c128(v: C128) -> Self {
                ($from)(v.re)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                ($from)(v as u8 as f64)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
        }
    };
}
float_element!(f32, F32, |x: f32| x as f64, |v: f64| v as f32);
float_element!(f64, F64, |x: f64| x, |v: f64| v);
float_element!(f16, F16, |x: f16| x.to_f64(), f16::from_f64);
float_element!(bf16, BF16, |x: bf16| x.to_f64(), bf16::from_f64);

macro_rules! complex_element {
    ($t:ty, $d:ident, $p:ty) => {
        impl sealed::Sealed for $t {}
        impl Element for $t {
            const DTYPE: DType = DType::$d;
            #[inline(always)]
            fn to_f64(self) -> f64 {
                self.re as f64
            }
            #[inline(always)]
            fn to_i64(self) -> i64 {
                self.re as i64
            }
            #[inline(always)]
            fn to_c128(self) -> C128 {
                C128::new(self.re as f64, self.im as f64)
            }
            #[inline(always)]
            fn to_bool(self) -> bool {
                self.re != 0.0 || self.im != 0.0
            }
            #[inline(always)]
            fn from_f64(v: f64) -> Self {
                <$t>::new(v as $p, 0.0)
            }
            #[inline(always)]
            fn from_i64(v: i64) -> Self {
                <$t>::new(v as $p, 0.0)
            }
            #[inline(always)]
            fn from_c128(v: C128) -> Self {
                <$t>::new(v.re as $p, v.im as $p)
            }
            #[inline(always)]
            fn from_bool(v: bool) -> Self {
                <$t>::new(v as u8 as $p, 0.0)
            }
            #[inline(always)]
            fn add(self, o: Self) -> Self {
                self + o
            }
            #[inline(always)]
            fn sub(self, o: Self) -> Self {
                self - o
            }
            #[inline(always)]
            fn mul(self, o: Self) -> Self {
                self * o
            }
        }
    };
}
complex_element!(C64, C64, f32);
complex_element!(C128, C128, f64);
