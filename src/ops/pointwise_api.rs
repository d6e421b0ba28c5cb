//! Public `Tensor` methods for the ops of [`super::pointwise`] (forward + autograd recording).

use super::binary_extra::*;
use super::pointwise::*;
use crate::autograd::{SavedTensor, record};
use crate::dtype::Operand;
use crate::{DType, Result, Scalar, Tensor, bail};

fn where_record(cond: &Tensor, a: Operand, b: Operand) -> Result<Tensor> {
    let out = where_impl(cond, &a, &b)?;
    if out.dtype().is_differentiable() {
        let ts = tensors(&[&a, &b]);
        let refs: Vec<&Tensor> = ts.iter().collect();
        let has = [
            matches!(a, Operand::Tensor(_)),
            matches!(b, Operand::Tensor(_)),
        ];
        record(
            &[&out],
            &refs,
            || vec![SavedTensor::input(cond)],
            WhereBackward {
                has,
                name: "WhereBackward0",
            },
        )?;
    }
    Ok(out)
}

fn nan_to_num_result(
    x: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<Tensor> {
    use half::{bf16, f16};
    macro_rules! go {
        ($T:ty, $max:expr, $min:expr, $to:expr, $from:expr) => {{
            let (p, n) = (posinf.unwrap_or($max), neginf.unwrap_or($min));
            let (to, from) = ($to, $from);
            super::unary::unary_map::<$T, $T>(x, move |v| {
                let f: f64 = to(v);
                if f.is_nan() {
                    from(nan)
                } else if f == f64::INFINITY {
                    from(p)
                } else if f == f64::NEG_INFINITY {
                    from(n)
                } else {
                    v
                }
            })
        }};
    }
    match x.dtype() {
        DType::F64 => go!(f64, f64::MAX, f64::MIN, |v: f64| v, |v: f64| v),
        DType::F32 => go!(
            f32,
            f32::MAX as f64,
            f32::MIN as f64,
            |v: f32| v as f64,
            |v: f64| v as f32
        ),
        DType::F16 => go!(
            f16,
            f16::MAX.to_f64(),
            f16::MIN.to_f64(),
            |v: f16| v.to_f64(),
            f16::from_f64
        ),
        DType::BF16 => go!(
            bf16,
            bf16::MAX.to_f64(),
            bf16::MIN.to_f64(),
            |v: bf16| v.to_f64(),
            bf16::from_f64
        ),
        d if d.is_complex() => bail!(Unsupported, "nan_to_num", "not implemented for complex"),
        _ => x.copy(),
    }
}

impl Tensor {
    /// `cond ? a : b` elementwise with broadcasting; `a`/`b` are tensors or scalars and promote
    /// together (PyTorch `torch.where`). `cond` must be Bool.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let c = Tensor::from_vec(vec![true, false], &[2])?;
    /// let x = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert_eq!(Tensor::where_(&c, &x, 0.5)?.to_vec::<f32>()?, vec![1.0, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn where_(cond: &Tensor, a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Tensor> {
        where_record(cond, a.into(), b.into())
    }

    /// Copy of `self` with `value` where `mask` (Bool, broadcastable to `self`) is true.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// let m = Tensor::from_vec(vec![true, false], &[2])?;
    /// assert_eq!(x.masked_fill(&m, -1.0)?.to_vec::<f32>()?, vec![-1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn masked_fill(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<Tensor> {
        let value = value.into();
        check_mask(mask, &value, "masked_fill")?;
        let out = masked_fill_result(self, mask, &value)?;
        // PyTorch fills a row-major clone, whatever the input's memory order
        let out = if out.is_contiguous() {
            out
        } else {
            let _g = crate::autograd::no_grad();
            out.contiguous()?
        };
        if out.dtype().is_differentiable() {
            let mut ins = vec![self.clone()];
            ins.extend(tensors(&[&value]));
            let refs: Vec<&Tensor> = ins.iter().collect();
            let bw = MaskedFillBackward {
                value_tensor: ins.len() == 2,
            };
            record(&[&out], &refs, || vec![SavedTensor::input(mask)], bw)?;
        }
        Ok(out)
    }

    /// In-place [`Tensor::masked_fill`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// x.masked_fill_(&Tensor::from_vec(vec![false, true], &[2])?, 9)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 9]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn masked_fill_(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<Tensor> {
        let value = value.into();
        check_mask(mask, &value, "masked_fill_")?;
        let vt = tensors(&[&value]);
        let refs: Vec<&Tensor> = vt.iter().collect();
        let m = mask.clone();
        write_back(
            self,
            &refs,
            "masked_fill_",
            || masked_fill_result(self, mask, &value),
            |_, _| vec![SavedTensor::input(&m)],
            MaskedFillBackward {
                value_tensor: !vt.is_empty(),
            },
        )
    }

    /// Clamps into `[min, max]` (either may be `None`; NaN propagates; `min > max` gives `max`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, Scalar};
    /// let x = Tensor::from_vec(vec![-2.0f32, 0.5, 3.0], &[3])?;
    /// let y = x.clamp(Some(Scalar::from(-1.0)), Some(Scalar::from(1.0)))?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![-1.0, 0.5, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
        let out = clamp_result(self, min, max, "clamp")?;
        if out.dtype().is_differentiable() {
            let bw = ClampBackward {
                lo: min,
                hi: max,
                name: clamp_name(&min, &max),
            };
            record(&[&out], &[self], || vec![SavedTensor::input(self)], bw)?;
        }
        Ok(out)
    }
    /// In-place [`Tensor::clamp`] (a float bound on an integer tensor is a DTypeMismatch).
    ///
    /// ```
    /// # use tapegrad::{Tensor, Scalar};
    /// let x = Tensor::from_vec(vec![-2i64, 5], &[2])?;
    /// x.clamp_(Some(Scalar::from(0)), None)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![0, 5]);
    /// assert!(x.clamp_(Some(Scalar::from(0.5)), None).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_(&self, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
        let bw = ClampBackward {
            lo: min,
            hi: max,
            name: clamp_name(&min, &max),
        };
        write_back(
            self,
            &[],
            "clamp_",
            || clamp_result(self, min, max, "clamp_"),
            |o, _| o.into_iter().collect(),
            bw,
        )
    }
    /// `clamp(min, None)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2.0f32], &[1])?.clamp_min(0.0)?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_min(&self, min: impl Into<Scalar>) -> Result<Tensor> {
        self.clamp(Some(min.into()), None)
    }
    /// `clamp(None, max)`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![2.0f32], &[1])?.clamp_max(1.0)?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_max(&self, max: impl Into<Scalar>) -> Result<Tensor> {
        self.clamp(None, Some(max.into()))
    }
    /// In-place `clamp_min`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0f32], &[1])?;
    /// x.clamp_min_(0.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_min_(&self, min: impl Into<Scalar>) -> Result<Tensor> {
        self.clamp_(Some(min.into()), None)
    }
    /// In-place `clamp_max`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32], &[1])?;
    /// x.clamp_max_(1.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_max_(&self, max: impl Into<Scalar>) -> Result<Tensor> {
        self.clamp_(None, Some(max.into()))
    }

    /// `self ^ exponent` (tensor or scalar exponent, PyTorch promotion; an integer tensor to a
    /// negative integer scalar is an error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let i = Tensor::from_vec(vec![2i64, 3], &[2])?;
    /// assert_eq!(i.pow(2)?.to_vec::<i64>()?, vec![4, 9]);
    /// assert_eq!(i.pow(0.5)?.dtype(), tapegrad::DType::F32);
    /// assert!(i.pow(-1).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let e = exponent.into();
        let a = Operand::Tensor(self.clone());
        let out = pow_result(&a, &e)?;
        if out.dtype().is_differentiable() {
            match &e {
                Operand::Scalar(s) => {
                    let bw = PowBackward {
                        kind: 0,
                        scalar: *s,
                    };
                    record(&[&out], &[self], || vec![SavedTensor::input(self)], bw)?;
                }
                Operand::Tensor(t) => {
                    let bw = PowBackward {
                        kind: 1,
                        scalar: Scalar::Int(0),
                    };
                    record(
                        &[&out],
                        &[self, t],
                        || {
                            vec![
                                SavedTensor::input(self),
                                SavedTensor::input(t),
                                SavedTensor::output(&out, 0),
                            ]
                        },
                        bw,
                    )?;
                }
            }
        }
        Ok(out)
    }
    /// In-place [`Tensor::pow`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![3.0f32], &[1])?;
    /// x.pow_(2)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![9.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow_(&self, exponent: impl Into<Operand>) -> Result<Tensor> {
        let e = exponent.into();
        let a = Operand::Tensor(self.clone());
        let et = tensors(&[&e]);
        let refs: Vec<&Tensor> = et.iter().collect();
        let (kind, scalar) = match &e {
            Operand::Scalar(s) => (0, *s),
            Operand::Tensor(_) => (1, Scalar::Int(0)),
        };
        let et2 = et.clone();
        write_back(
            self,
            &refs,
            "pow_",
            || pow_result(&a, &e),
            move |o, out| {
                let mut v: Vec<SavedTensor> = o.into_iter().collect();
                if let Some(t) = et2.first() {
                    v.push(SavedTensor::input(t));
                    v.push(SavedTensor::output(out, 0));
                }
                v
            },
            PowBackward { kind, scalar },
        )
    }
    /// `base ^ exponent` for a scalar base (`torch.pow(2, t)`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![0i64, 5], &[2])?;
    /// assert_eq!(Tensor::pow_scalar_base(2, &t)?.to_vec::<i64>()?, vec![1, 32]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pow_scalar_base(base: impl Into<Scalar>, exponent: &Tensor) -> Result<Tensor> {
        let s = base.into();
        let out = pow_result(&Operand::Scalar(s), &Operand::Tensor(exponent.clone()))?;
        if out.dtype().is_differentiable() {
            let bw = PowBackward { kind: 2, scalar: s };
            record(
                &[&out],
                &[exponent],
                || vec![SavedTensor::output(&out, 0)],
                bw,
            )?;
        }
        Ok(out)
    }

    /// Elementwise maximum (NaN propagates).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, f64::NAN], &[2])?;
    /// let b = Tensor::from_vec(vec![2.0f64, 0.0], &[2])?;
    /// assert!(a.maximum(&b)?.to_vec::<f64>()?[1].is_nan());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Maximum)
    }
    /// Elementwise minimum (NaN propagates).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64], &[1])?;
    /// assert_eq!(a.minimum(&a.mul(2.0)?)?.to_vec::<f64>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Minimum)
    }
    /// Elementwise maximum ignoring NaN (NaN only if both are NaN).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f64::NAN], &[1])?;
    /// let b = Tensor::from_vec(vec![2.0f64], &[1])?;
    /// assert_eq!(a.fmax(&b)?.to_vec::<f64>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmax(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmax)
    }
    /// Elementwise minimum ignoring NaN.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f64::NAN], &[1])?;
    /// let b = Tensor::from_vec(vec![2.0f64], &[1])?;
    /// assert_eq!(a.fmin(&b)?.to_vec::<f64>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmin(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmin)
    }
    /// Floor division (integer division by zero is an InvalidArgument error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.floor_divide(2)?.to_vec::<i64>()?, vec![3, -4]);
    /// assert!(a.floor_divide(0).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn floor_divide(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::FloorDivide)
    }
    /// Python-style remainder (sign of the divisor).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.remainder(3)?.to_vec::<i64>()?, vec![1, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Remainder)
    }
    /// `scalar % tensor` with Python sign semantics (`torch.remainder(-3, t)`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![2i64, -2], &[2])?;
    /// assert_eq!(Tensor::remainder_scalar_base(-3, &t)?.to_vec::<i64>()?, vec![1, -1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder_scalar_base(base: impl Into<Scalar>, other: &Tensor) -> Result<Tensor> {
        bin_op(&Operand::Scalar(base.into()), &other.into(), Bin::Remainder)
    }
    /// C-style remainder (sign of the dividend).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.fmod(3)?.to_vec::<i64>()?, vec![1, -1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmod(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmod)
    }
    /// In-place [`Tensor::remainder`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![-7i64], &[1])?;
    /// a.remainder_(3)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Remainder, "remainder_")
    }
    /// In-place [`Tensor::fmod`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![-7i64], &[1])?;
    /// a.fmod_(3)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![-1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmod_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Fmod, "fmod_")
    }
    /// In-place [`Tensor::maximum`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// a.maximum_(&Tensor::from_vec(vec![2.0f32], &[1])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn maximum_(&self, other: &Tensor) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Maximum, "maximum_")
    }
    /// `atan2(self, other)` (integers promote to f32).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// assert_eq!(a.atan2(&Tensor::from_vec(vec![1.0f32], &[1])?)?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Atan2)
    }
    /// In-place [`Tensor::atan2`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// a.atan2_(&Tensor::from_vec(vec![1.0f32], &[1])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn atan2_(&self, other: &Tensor) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Atan2, "atan2_")
    }
    /// `sqrt(self^2 + other^2)` without overflow.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![3.0f32], &[1])?;
    /// assert_eq!(a.hypot(&Tensor::from_vec(vec![4.0f32], &[1])?)?.to_vec::<f32>()?, vec![5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn hypot(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Hypot)
    }

    /// `self + weight * (end - self)` (weight: tensor or scalar). Composed of differentiable ops.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// let b = Tensor::from_vec(vec![10.0f32], &[1])?;
    /// assert_eq!(a.lerp(&b, 0.25)?.to_vec::<f32>()?, vec![2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lerp(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        self.add(&end.sub(self)?.mul(weight)?)
    }
    /// In-place [`Tensor::lerp`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// a.lerp_(&Tensor::from_vec(vec![10.0f32], &[1])?, 0.5)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn lerp_(&self, end: &Tensor, weight: impl Into<Operand>) -> Result<Tensor> {
        let d = end.sub(self)?.mul(weight)?;
        self.add_(&d)
    }
    /// `self + value * t1 * t2`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// assert_eq!(a.addcmul(&a, &a, 2.0)?.to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcmul(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        self.add(&t1.mul(t2)?.mul(value.into())?)
    }
    /// In-place [`Tensor::addcmul`] (`self` may alias `t1`/`t2`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// a.addcmul_(&a, &a, 2.0)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addcmul_(&self, t1: &Tensor, t2: &Tensor, value: impl Into<Scalar>) -> Result<Tensor> {
        let p = t1.mul(t2)?.mul(value.into())?;
        self.add_(&p)
    }

    /// Replaces NaN by `nan`, +inf by `posinf` and -inf by `neginf` (defaults: the dtype's
    /// largest/lowest finite values).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::NAN, f32::NEG_INFINITY], &[2])?;
    /// assert_eq!(a.nan_to_num(0.0, None, Some(-1.0))?.to_vec::<f32>()?, vec![0.0, -1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nan_to_num(&self, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let out = nan_to_num_result(self, nan, posinf, neginf)?;
        if out.dtype().is_differentiable() {
            let m = {
                let _g = crate::autograd::no_grad();
                self.isfinite()?
            };
            let bw = WhereBackward {
                has: [true, false],
                name: "NanToNumBackward0",
            };
            record(&[&out], &[self], || vec![SavedTensor::private(m)], bw)?;
        }
        Ok(out)
    }
}
