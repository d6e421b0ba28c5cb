//! `clamp` / `clamp_min` / `clamp_max` with scalar bounds and their in-place forms (NaN
//! propagates; `min > max` gives `max`); backward: the gradient passes where `lo < x < hi`
//! (PyTorch 2.15 gives the bounds themselves a zero gradient).

use crate::autograd::{SavedTensor, record};
use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::operand_tensor;
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
    let ta = operand_tensor(&ao, dt)?;
    macro_rules! go {
        ($T:ty) => {{
            let l: Option<$T> = lo.map(|s| s.to::<$T>());
            let h: Option<$T> = hi.map(|s| s.to::<$T>());
            crate::ops::elementwise::unary::unary_map::<$T, $T>(&ta, move |x| {
                #[allow(clippy::eq_op)]
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
            })
        }};
    }
    crate::match_dtype!(dt, real, T => go!(T), else bail!(Unsupported, name, "clamp is not supported for complex types"))
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
}
