//! `clamp` / `clamp_min` / `clamp_max` with scalar bounds and their in-place forms (NaN
//! propagates; `min > max` gives `max`); backward: the gradient passes where `lo < x < hi`
//! (PyTorch 2.15 gives the bounds themselves a zero gradient).
//!
//! With tensor bounds (`clamp_tensor`, `clamp_min`/`clamp_max` given a tensor) the bounds take
//! part in type promotion and the op is `minimum(maximum(x, lo), hi)`, whose gradient is
//! PyTorch 2.15's: `g` to whichever of `x` and the bound was taken, halved on ties. The
//! in-place forms clamp a recorded clone of `self` and copy the result back (`copy_`: one
//! version bump, CopySlices on views).

use crate::autograd::{SavedTensor, record};
use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::can_cast;
use crate::ops::elementwise::binary::operand_tensor;
use crate::ops::elementwise::map::unary_map;
use crate::ops::grad::{backward, input_grad};
use crate::ops::util::write_back;
use crate::{Result, Scalar, Tensor, bail};

pub(crate) fn clamp_result(
    a: &Tensor,
    lo: Option<Scalar>,
    hi: Option<Scalar>,
    name: &'static str,
) -> Result<Tensor> {
    if lo.is_none() && hi.is_none() {
        bail!(
            InvalidArgument,
            name,
            "At least one of 'min' or 'max' must not be None"
        );
    }
    let ao = Operand::Tensor(a.clone());
    let los = lo.map(Operand::Scalar);
    let his = hi.map(Operand::Scalar);
    let mut ops = vec![&ao];
    ops.extend(los.iter());
    ops.extend(his.iter());
    let dt = result_type(&ops);
    let (lo, hi) = int_bounds(dt, lo, hi, name)?;
    let ta = operand_tensor(&ao, dt)?;
    macro_rules! go {
        ($T:ty) => {{
            let l: Option<$T> = lo.map(|s| s.to::<$T>());
            let h: Option<$T> = hi.map(|s| s.to::<$T>());
            #[allow(clippy::eq_op)]
            match (l, h) {
                // per-op sweep row `clamp`: bounds that are numbers give two compares and
                // selects, which the backend's loops vectorise (the general closure below,
                // with its `Option`s and NaN tests, did not). A NaN `x` fails both compares
                // and passes through; `min > max` gives `max`, as below.
                (Some(l), Some(h)) if l == l && h == h => unary_map::<$T, $T>(&ta, move |x| {
                    let v = if x < l { l } else { x };
                    if v > h { h } else { v }
                }),
                (Some(l), None) if l == l => {
                    unary_map::<$T, $T>(&ta, move |x| if x < l { l } else { x })
                }
                (None, Some(h)) if h == h => {
                    unary_map::<$T, $T>(&ta, move |x| if x > h { h } else { x })
                }
                // a NaN bound: every result is NaN except a NaN `x`'s own
                _ => unary_map::<$T, $T>(&ta, move |x| {
                    if x != x {
                        return x;
                    }
                    let mut v = x;
                    if let Some(l) = l {
                        if v < l || l != l {
                            v = l;
                        }
                    }
                    if let Some(h) = h {
                        if v > h || h != h {
                            v = h;
                        }
                    }
                    v
                }),
            }
        }};
    }
    crate::match_dtype!(dt, real, T => go!(T), else bail!(Unsupported, name, "clamp is not supported for complex types"))
}

/// PyTorch's integer bounds: a bound beyond the dtype's range on the side that cannot bind
/// (a min below it, a max above it) is dropped; one that would empty the range is an error.
fn int_bounds(
    dt: crate::DType,
    lo: Option<Scalar>,
    hi: Option<Scalar>,
    name: &'static str,
) -> Result<(Option<Scalar>, Option<Scalar>)> {
    use crate::DType::*;
    let (tmin, tmax): (i128, i128) = match dt {
        U8 => (0, u8::MAX as i128),
        I8 => (i8::MIN as i128, i8::MAX as i128),
        I16 => (i16::MIN as i128, i16::MAX as i128),
        I32 => (i32::MIN as i128, i32::MAX as i128),
        I64 => (i64::MIN as i128, i64::MAX as i128),
        _ => return Ok((lo, hi)),
    };
    let check = |b: Option<Scalar>, is_min: bool| -> Result<Option<Scalar>> {
        let Some(Scalar::Int(v)) = b else {
            return Ok(b);
        };
        let v = v as i128;
        let (cannot_bind, empties) = if is_min {
            (v < tmin, v > tmax)
        } else {
            (v > tmax, v < tmin)
        };
        if empties {
            bail!(
                InvalidArgument,
                name,
                "Clamp {} value {} is outside the representable range of {}",
                if is_min { "min" } else { "max" },
                v,
                dt.torch_scalar_name()
            );
        }
        Ok(if cannot_bind { None } else { b })
    };
    let (l, h) = (check(lo, true)?, check(hi, false)?);
    if l.is_none() && h.is_none() {
        // both dropped: nothing binds, a plain copy
        return Ok((Some(Scalar::Int(tmin as i64)), None));
    }
    Ok((l, h))
}

/// Backward of clamp with scalar bounds: saved self; grad passes where `lo < x < hi` (PyTorch
/// 2.15 gives the bounds themselves a zero gradient).
pub(crate) struct ClampBackward {
    pub(crate) lo: Option<Scalar>,
    pub(crate) hi: Option<Scalar>,
    pub(crate) name: &'static str,
}

backward!(ClampBackward, self.name, |self, ctx, g: Tensor| {
    let x = &ctx.saved[0];
    let mut m: Option<Tensor> = None;
    if let Some(l) = self.lo {
        m = Some(x.gt(l)?);
    }
    if let Some(h) = self.hi {
        let mh = x.lt(h)?;
        m = Some(match m {
            Some(m) => m.logical_and(&mh)?,
            None => mh,
        });
    }
    let m = m.expect("internal: clamp without bounds");
    input_grad(Tensor::where_(&m, &g, 0.0)?)
});

/// `minimum(maximum(x, lo), hi)` for tensor bounds (at least one).
fn clamp_by_tensors(x: &Tensor, lo: Option<&Tensor>, hi: Option<&Tensor>) -> Result<Tensor> {
    let r = match lo {
        Some(l) => x.maximum(l)?,
        None => x.clone(),
    };
    match hi {
        Some(h) => r.minimum(h),
        None => Ok(r),
    }
}

/// The checks of a tensor-bound clamp before anything runs: a bound given, no complex
/// operand, and (in place) a result dtype `self` can hold.
fn check_tensor_bounds(
    x: &Tensor,
    lo: Option<&Tensor>,
    hi: Option<&Tensor>,
    name: &'static str,
    inplace: bool,
) -> Result<()> {
    if lo.is_none() && hi.is_none() {
        bail!(
            InvalidArgument,
            name,
            "At least one of 'min' or 'max' must not be None"
        );
    }
    let ops: Vec<Operand> = std::iter::once(x)
        .chain(lo)
        .chain(hi)
        .map(|t| Operand::Tensor(t.clone()))
        .collect();
    let refs: Vec<&Operand> = ops.iter().collect();
    let dt = result_type(&refs);
    if dt.is_complex() {
        bail!(
            Unsupported,
            name,
            "clamp is not supported for complex types"
        );
    }
    // (one bound is `maximum` / `minimum`, which take bool; both bounds are clamp's kernel)
    if dt == crate::DType::Bool && lo.is_some() && hi.is_some() {
        bail!(
            DTypeMismatch,
            name,
            "\"clamp_cpu\" not implemented for 'Bool'"
        );
    }
    if inplace && !can_cast(dt, x.dtype()) {
        return Err(crate::ops::elementwise::binary::cast_error(
            name,
            dt,
            x.dtype(),
        ));
    }
    Ok(())
}

/// In place through a recorded clone: `self.copy_(clamp(self.clone()))`.
fn clamp_tensor_inplace(
    x: &Tensor,
    lo: Option<&Tensor>,
    hi: Option<&Tensor>,
    name: &'static str,
) -> Result<Tensor> {
    check_tensor_bounds(x, lo, hi, name, true)?;
    let r = clamp_by_tensors(&x.copy()?, lo, hi)?;
    x.copy_(&r)
}

pub(crate) fn clamp_name(lo: &Option<Scalar>, hi: &Option<Scalar>) -> &'static str {
    match (lo, hi) {
        (Some(_), None) => "ClampMinBackward0",
        (None, Some(_)) => "ClampMaxBackward0",
        _ => "ClampBackward1",
    }
}

impl Tensor {
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
    /// Clamps into `[min, max]` given as tensors (broadcast; they take part in type promotion;
    /// either may be `None`): `minimum(maximum(self, min), max)`, so NaN propagates, `min > max`
    /// gives `max`, and ties split the gradient with the bound.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![-2.0f32, 0.5, 3.0], &[3])?;
    /// let lo = Tensor::from_vec(vec![-1.0f32, 1.0, -1.0], &[3])?;
    /// assert_eq!(x.clamp_tensor(Some(&lo), None)?.to_vec::<f32>()?, vec![-1.0, 1.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_tensor(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        check_tensor_bounds(self, min, max, "clamp", false)?;
        clamp_by_tensors(self, min, max)
    }
    /// In-place [`Tensor::clamp_tensor`] (`self` must hold the promoted result).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![-2i64, 5], &[2])?;
    /// x.clamp_tensor_(None, Some(&Tensor::from_vec(vec![1i64], &[1])?))?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![-2, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_tensor_(&self, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
        clamp_tensor_inplace(self, min, max, "clamp_")
    }
    /// `clamp(min, None)`; `min` is a scalar or a tensor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![-2.0f32], &[1])?.clamp_min(0.0)?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_min(&self, min: impl Into<Operand>) -> Result<Tensor> {
        match min.into() {
            Operand::Scalar(s) => self.clamp(Some(s), None),
            Operand::Tensor(t) => self.clamp_tensor(Some(&t), None),
        }
    }
    /// `clamp(None, max)`; `max` is a scalar or a tensor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::from_vec(vec![2.0f32], &[1])?.clamp_max(1.0)?.to_vec::<f32>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn clamp_max(&self, max: impl Into<Operand>) -> Result<Tensor> {
        match max.into() {
            Operand::Scalar(s) => self.clamp(None, Some(s)),
            Operand::Tensor(t) => self.clamp_tensor(None, Some(&t)),
        }
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
    pub fn clamp_min_(&self, min: impl Into<Operand>) -> Result<Tensor> {
        match min.into() {
            Operand::Scalar(s) => self.clamp_(Some(s), None),
            Operand::Tensor(t) => clamp_tensor_inplace(self, Some(&t), None, "clamp_min_"),
        }
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
    pub fn clamp_max_(&self, max: impl Into<Operand>) -> Result<Tensor> {
        match max.into() {
            Operand::Scalar(s) => self.clamp_(None, Some(s)),
            Operand::Tensor(t) => clamp_tensor_inplace(self, None, Some(&t), "clamp_max_"),
        }
    }
}
