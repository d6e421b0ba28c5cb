//! Comparisons (`eq ne lt le gt ge`), logical and bitwise ops and `isnan/isinf/isfinite`,
//! with the in-place twins (`eq_`, `logical_and_`, `bitwise_not_`, ...: the result is cast to
//! `self`'s dtype, which must be able to hold it). Results are Bool (bitwise ops keep the
//! promoted integer dtype); the out-of-place forms record no autograd. Like PyTorch, the
//! in-place comparisons record a node whose gradient is zero for both inputs, and the in-place
//! logical and bitwise ops record nothing (`self` keeps its history).

use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::{binary_map, operand_tensor};
use crate::ops::elementwise::map::unary_map;
use crate::ops::grad::{GradIf, backward, grads};
use crate::ops::util::{tensors, write_back, write_back_untracked};
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

impl Cmp {
    fn backward_name(self, tensor_other: bool) -> &'static str {
        match (self, tensor_other) {
            (Cmp::Eq, false) => "EqBackward0",
            (Cmp::Eq, true) => "EqBackward1",
            (Cmp::Ne, false) => "NeBackward0",
            (Cmp::Ne, true) => "NeBackward1",
            (Cmp::Lt, false) => "LtBackward0",
            (Cmp::Lt, true) => "LtBackward1",
            (Cmp::Le, false) => "LeBackward0",
            (Cmp::Le, true) => "LeBackward1",
            (Cmp::Gt, false) => "GtBackward0",
            (Cmp::Gt, true) => "GtBackward1",
            (Cmp::Ge, false) => "GeBackward0",
            (Cmp::Ge, true) => "GeBackward1",
        }
    }
}

/// Backward of the in-place comparisons: zero for `self` and for a tensor `other` (its shape
/// and dtype kept, not the tensor).
struct CompareBackward {
    name: &'static str,
    other: Option<(Vec<usize>, DType)>,
}

backward!(CompareBackward, self.name, |self, ctx, g: Tensor| {
    let gs = ctx.grad_if(0, || g.zeros_like())?;
    match &self.other {
        None => grads([gs]),
        Some((shape, dt)) => grads([gs, ctx.grad_if(1, || Tensor::zeros(shape, *dt))?]),
    }
});

/// The in-place comparison: `self = (self op other)` cast to `self`'s dtype.
fn compare_(a: &Tensor, b: Operand, op: Cmp, name: &'static str) -> Result<Tensor> {
    let bt = tensors(&[&b]);
    let others: Vec<&Tensor> = bt.iter().collect();
    let bw = CompareBackward {
        name: op.backward_name(!bt.is_empty()),
        other: bt.first().map(|t| (t.shape(), t.dtype())),
    };
    write_back(
        a,
        &others,
        name,
        || compare(a, b, op, name),
        |_, _| vec![],
        bw,
    )
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
        if !self.dtype().is_float() && !self.dtype().is_complex() {
            // PyTorch's `self != self` (an elementwise op's layout, not `zeros_like`'s)
            return self.ne(self);
        }
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
        let out = self.classify("isfinite", |x| x.is_finite())?;
        // PyTorch's complex `isfinite` is `isfinite(real).__iand__(isfinite(imag))`: the
        // in-place `&=` leaves its result at version 1
        if self.dtype().is_complex() {
            out.0.version.bump();
        }
        Ok(out)
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
                // PyTorch answers integers with `zeros_like`/`ones_like`: its preserved layout
                let v = f(1.0);
                self.full_like_dtype(v, DType::Bool)
            }
        }
    }
}

impl Tensor {
    /// In-place [`Tensor::eq`]: `self` becomes `self == other` in its own dtype (1/0).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// a.eq_(2)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn eq_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Eq, "eq_")
    }
    /// In-place [`Tensor::ne`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// a.ne_(2)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ne_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Ne, "ne_")
    }
    /// In-place [`Tensor::lt`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 3], &[2])?;
    /// a.lt_(2.5)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lt_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Lt, "lt_")
    }
    /// In-place [`Tensor::le`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 3], &[2])?;
    /// a.le_(1)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn le_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Le, "le_")
    }
    /// In-place [`Tensor::gt`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 3.0], &[2])?;
    /// a.gt_(1)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn gt_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Gt, "gt_")
    }
    /// In-place [`Tensor::ge`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 3.0], &[2])?;
    /// a.ge_(3)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ge_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        compare_(self, other.into(), Cmp::Ge, "ge_")
    }
    /// In-place [`Tensor::logical_and`] (not differentiated: `self` keeps its history).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32, 2.0], &[2])?;
    /// a.logical_and_(&Tensor::from_vec(vec![true, true], &[2])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_and_(&self, other: &Tensor) -> Result<Tensor> {
        write_back_untracked(self, &[other], "logical_and_", || self.logical_and(other))
    }
    /// In-place [`Tensor::logical_or`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0i64, 2], &[2])?;
    /// a.logical_or_(&Tensor::from_vec(vec![false, false], &[2])?)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_or_(&self, other: &Tensor) -> Result<Tensor> {
        write_back_untracked(self, &[other], "logical_or_", || self.logical_or(other))
    }
    /// In-place [`Tensor::logical_xor`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0i64, 2], &[2])?;
    /// a.logical_xor_(&Tensor::from_vec(vec![true, true], &[2])?)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_xor_(&self, other: &Tensor) -> Result<Tensor> {
        write_back_untracked(self, &[other], "logical_xor_", || self.logical_xor(other))
    }
    /// In-place [`Tensor::logical_not`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0i64, 2], &[2])?;
    /// a.logical_not_()?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logical_not_(&self) -> Result<Tensor> {
        write_back_untracked(self, &[], "logical_not_", || self.logical_not())
    }
    /// In-place [`Tensor::bitwise_and`] (`self` must hold the promoted integer result).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i32], &[1])?;
    /// a.bitwise_and_(3)?;
    /// assert_eq!(a.to_vec::<i32>()?, vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_and_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.bitwise_(other.into(), Bit::And, "bitwise_and_")
    }
    /// In-place [`Tensor::bitwise_or`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i64], &[1])?;
    /// a.bitwise_or_(1)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![7]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_or_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.bitwise_(other.into(), Bit::Or, "bitwise_or_")
    }
    /// In-place [`Tensor::bitwise_xor`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![6i64], &[1])?;
    /// a.bitwise_xor_(3)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_xor_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        self.bitwise_(other.into(), Bit::Xor, "bitwise_xor_")
    }
    /// In-place [`Tensor::bitwise_not`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0i64], &[1])?;
    /// a.bitwise_not_()?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![-1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bitwise_not_(&self) -> Result<Tensor> {
        write_back_untracked(self, &[], "bitwise_not_", || self.bitwise_not())
    }

    fn bitwise_(&self, other: Operand, op: Bit, name: &'static str) -> Result<Tensor> {
        // (PyTorch checks that self can hold the result before the kernel's dtype check)
        let dt = result_type(&[&Operand::Tensor(self.clone()), &other]);
        if !crate::ops::elementwise::binary::can_cast(dt, self.dtype()) {
            return Err(crate::ops::elementwise::binary::cast_error(
                name,
                dt,
                self.dtype(),
            ));
        }
        let ot = tensors(&[&other]);
        let refs: Vec<&Tensor> = ot.iter().collect();
        write_back_untracked(self, &refs, name, || {
            bitwise(self, other, op, name.trim_end_matches('_'))
        })
    }
}
