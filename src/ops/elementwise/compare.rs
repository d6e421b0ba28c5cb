//! Comparisons (`eq ne lt le gt ge`), logical and bitwise ops and `isnan/isinf/isfinite`.
//! All results are Bool (bitwise ops keep the promoted integer dtype); none records autograd.

use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::{binary_map, operand_tensor};
use crate::ops::elementwise::unary::unary_map;
use crate::{DType, Result, Tensor, bail};

#[derive(Clone, Copy, PartialEq)]
enum Cmp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

fn compare(a: &Tensor, b: Operand, op: Cmp, name: &'static str) -> Result<Tensor> {
    a.check_strided(name)?;
    if let Operand::Tensor(t) = &b {
        t.check_strided(name)?;
    }
    let ao = Operand::Tensor(a.clone());
    let dt = result_type(&[&ao, &b]);
    let (ta, tb) = (operand_tensor(&ao, dt)?, operand_tensor(&b, dt)?);
    macro_rules! go {
        ($T:ty) => {
            match op {
                Cmp::Eq => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x == y),
                Cmp::Ne => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x != y),
                Cmp::Lt => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x < y),
                Cmp::Le => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x <= y),
                Cmp::Gt => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x > y),
                Cmp::Ge => binary_map::<$T, bool>(&ta, &tb, name, |x, y| x >= y),
            }
        };
    }
    crate::match_dtype!(dt, real, T => go!(T), else match (op, dt) {
        (Cmp::Eq, DType::C64) => binary_map::<crate::dtype::C64, bool>(&ta, &tb, name, |x, y| x == y),
        (Cmp::Eq, _) => binary_map::<crate::dtype::C128, bool>(&ta, &tb, name, |x, y| x == y),
        (Cmp::Ne, DType::C64) => binary_map::<crate::dtype::C64, bool>(&ta, &tb, name, |x, y| x != y),
        (Cmp::Ne, _) => binary_map::<crate::dtype::C128, bool>(&ta, &tb, name, |x, y| x != y),
        _ => bail!(DTypeMismatch, name, "not implemented for complex tensors"),
    })
}

fn as_bool(t: &Tensor) -> Result<Tensor> {
    if t.dtype() == DType::Bool {
        Ok(t.clone())
    } else {
        let _g = crate::autograd::no_grad();
        t.to_dtype(DType::Bool)
    }
}

#[derive(Clone, Copy)]
enum Bit {
    And,
    Or,
    Xor,
}

fn bitwise(a: &Tensor, b: Operand, op: Bit, name: &'static str) -> Result<Tensor> {
    let ao = Operand::Tensor(a.clone());
    let dt = result_type(&[&ao, &b]);
    if !dt.is_integral(true) {
        bail!(
            DTypeMismatch,
            name,
            "\"{}_cpu\" not implemented for '{}'",
            name,
            dt.torch_scalar_name()
        );
    }
    let (ta, tb) = (operand_tensor(&ao, dt)?, operand_tensor(&b, dt)?);
    macro_rules! go {
        ($T:ty) => {
            match op {
                Bit::And => binary_map::<$T, $T>(&ta, &tb, name, |x, y| x & y),
                Bit::Or => binary_map::<$T, $T>(&ta, &tb, name, |x, y| x | y),
                Bit::Xor => binary_map::<$T, $T>(&ta, &tb, name, |x, y| x ^ y),
            }
        };
    }
    match dt {
        DType::Bool => go!(bool),
        d => crate::match_dtype!(d, int, T => go!(T), else go!(i64)),
    }
}

impl Tensor {
    /// Elementwise `self == other` (after promotion) as a Bool tensor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert_eq!(a.eq(2.0)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn eq(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Eq, "eq")
    }
    /// Elementwise `self != other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert_eq!(a.ne(2)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ne(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Ne, "ne")
    }
    /// Elementwise `self < other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 3], &[2])?;
    /// assert_eq!(a.lt(2.5)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lt(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Lt, "lt")
    }
    /// Elementwise `self <= other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 3], &[2])?;
    /// assert_eq!(a.le(1)?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn le(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Le, "le")
    }
    /// Elementwise `self > other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 3.0], &[2])?;
    /// assert_eq!(a.gt(1)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn gt(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Gt, "gt")
    }
    /// Elementwise `self >= other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 3.0], &[2])?;
    /// assert_eq!(a.ge(3)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ge(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare(self, other.into(), Cmp::Ge, "ge")
    }
    /// Logical and of the truth values (any dtype) as Bool.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0], &[2])?;
    /// assert_eq!(a.logical_and(&a)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_and(&self, other: &Tensor) -> Result<Tensor> {
        binary_map::<bool, bool>(&as_bool(self)?, &as_bool(other)?, "logical_and", |x, y| {
            x & y
        })
    }
    /// Logical or as Bool.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0], &[2])?;
    /// assert_eq!(a.logical_or(&a)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_or(&self, other: &Tensor) -> Result<Tensor> {
        binary_map::<bool, bool>(&as_bool(self)?, &as_bool(other)?, "logical_or", |x, y| {
            x | y
        })
    }
    /// Logical xor as Bool.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0], &[2])?;
    /// assert_eq!(a.logical_xor(&a)?.to_vec::<bool>()?, vec![false, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_xor(&self, other: &Tensor) -> Result<Tensor> {
        binary_map::<bool, bool>(&as_bool(self)?, &as_bool(other)?, "logical_xor", |x, y| {
            x ^ y
        })
    }
    /// Logical not as Bool (NaN counts as true).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, f32::NAN], &[2])?;
    /// assert_eq!(a.logical_not()?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_not(&self) -> Result<Tensor> {
        unary_map::<bool, bool>(&as_bool(self)?, |x| !x)
    }
    /// Bitwise and (integer and bool dtypes).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i64], &[1])?;
    /// assert_eq!(a.bitwise_and(3)?.to_vec::<i64>()?, vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_and(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bitwise(self, other.into(), Bit::And, "bitwise_and")
    }
    /// Bitwise or.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i64], &[1])?;
    /// assert_eq!(a.bitwise_or(1)?.to_vec::<i64>()?, vec![7]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_or(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bitwise(self, other.into(), Bit::Or, "bitwise_or")
    }
    /// Bitwise xor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i64], &[1])?;
    /// assert_eq!(a.bitwise_xor(3)?.to_vec::<i64>()?, vec![5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_xor(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bitwise(self, other.into(), Bit::Xor, "bitwise_xor")
    }
    /// Bitwise not (logical not for bool).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0i64], &[1])?;
    /// assert_eq!(a.bitwise_not()?.to_vec::<i64>()?, vec![-1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_not(&self) -> Result<Tensor> {
        match self.dtype() {
            DType::Bool => unary_map::<bool, bool>(self, |x| !x),
            d if d.is_integral(false) => {
                crate::match_dtype!(d, int, T => unary_map::<T, T>(self, |x| !x))
            }
            d => bail!(
                DTypeMismatch,
                "bitwise_not",
                "not implemented for '{}'",
                d.torch_scalar_name()
            ),
        }
    }
    /// True where the element is NaN.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::NAN, 1.0], &[2])?;
    /// assert_eq!(a.isnan()?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn isnan(&self) -> Result<Tensor> {
        self.classify("isnan", |x| x.is_nan())
    }
    /// True where the element is +-inf.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::INFINITY, 1.0], &[2])?;
    /// assert_eq!(a.isinf()?.to_vec::<bool>()?, vec![true, false]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn isinf(&self) -> Result<Tensor> {
        self.classify("isinf", |x| x.is_infinite())
    }
    /// True where the element is finite (always true for integers).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::INFINITY, 1.0], &[2])?;
    /// assert_eq!(a.isfinite()?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn isfinite(&self) -> Result<Tensor> {
        self.classify("isfinite", |x| x.is_finite())
    }

    fn classify(&self, _op: &'static str, f: impl Fn(f64) -> bool + Copy + Sync) -> Result<Tensor> {
        match self.dtype() {
            d if d.is_float() => {
                crate::match_dtype!(d, float, T => unary_map::<T, bool>(self, move |x| f(crate::Element::to_f64(x))))
            }
            DType::C64 => unary_map::<crate::dtype::C64, bool>(self, move |x| {
                if f(1.0) {
                    f(x.re as f64) && f(x.im as f64)
                } else {
                    f(x.re as f64) || f(x.im as f64)
                }
            }),
            DType::C128 => unary_map::<crate::dtype::C128, bool>(self, move |x| {
                if f(1.0) {
                    f(x.re) && f(x.im)
                } else {
                    f(x.re) || f(x.im)
                }
            }),
            _ => {
                let v = f(1.0);
                Tensor::full(&self.shape(), v, DType::Bool)
            }
        }
    }
}
