//! Copies and fills: `copy` (PyTorch `clone`), `contiguous`, `to_dtype` / `type_as`, and the
//! in-place `copy_`, `fill_`, `zero_`. Backward formulas sit beside them.

use crate::autograd::{check_inplace, record, record_inplace};
use crate::backend::{copy_raw, fill};
use crate::layout::broadcast_shapes;
use crate::ops::grad::{GradIf, backward, grads, input_grad};
use crate::ops::util::{Overlap, check_no_internal_overlap, check_no_partial_overlap};
use crate::tensor::materialize;
use crate::{DType, Result, Scalar, Tensor, bail};

impl Tensor {
    /// A copy with its own storage and version counter (PyTorch `clone()`); keeps the memory
    /// order of a dense input (a transposed tensor stays column-major). Differentiable
    /// (`CloneBackward0`). Rust's `Clone::clone` on a `Tensor` copies the handle, not the data:
    /// see [`Tensor`].
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 3], DType::F32)?;
    /// let c = x.t()?.copy()?;
    /// assert_eq!(c.strides(), vec![1, 3]);
    /// assert!(!c.shares_storage(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    #[doc(alias = "clone")]
    pub fn copy(&self) -> Result<Tensor> {
        if self.is_sparse() {
            return crate::sparse::copy(self);
        }
        let out = materialize(self, self.dtype(), &self.layout().preserved_strides())?;
        record(
            &[&out],
            &[self],
            Vec::new,
            PassBackward {
                name: "CloneBackward0",
            },
        )?;
        Ok(out)
    }

    /// `self` if already contiguous, else a contiguous copy.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 3], DType::F32)?;
    /// assert!(x.contiguous()?.is_same(&x));
    /// assert!(x.t()?.contiguous()?.is_contiguous());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn contiguous(&self) -> Result<Tensor> {
        self.check_strided("contiguous")?;
        if self.is_contiguous() {
            return Ok(self.clone());
        }
        let out = materialize(
            self,
            self.dtype(),
            &crate::layout::contiguous_strides(&self.shape()),
        )?;
        record(
            &[&out],
            &[self],
            Vec::new,
            PassBackward {
                name: "CloneBackward0",
            },
        )?;
        Ok(out)
    }

    /// Converts to `dtype` (returns `self` when it already has that dtype).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::from_vec(vec![1.7f32, -1.7], &[2])?;
    /// assert_eq!(x.to_dtype(DType::I64)?.to_vec::<i64>()?, vec![1, -1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_dtype(&self, dtype: DType) -> Result<Tensor> {
        if dtype == self.dtype() {
            return Ok(self.clone());
        }
        if self.is_sparse() {
            return crate::sparse::to_dtype(self, dtype);
        }
        let out = materialize(self, dtype, &self.layout().preserved_strides())?;
        if dtype.is_differentiable() {
            record(
                &[&out],
                &[self],
                Vec::new,
                ToCopyBackward {
                    dtype: self.dtype(),
                },
            )?;
        }
        Ok(out)
    }

    /// Converts to `other`'s dtype (`to_dtype(other.dtype())`; `self` when they agree).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::from_vec(vec![1i64], &[1])?;
    /// assert_eq!(x.type_as(&Tensor::zeros(&[2], DType::F64)?)?.dtype(), DType::F64);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn type_as(&self, other: &Tensor) -> Result<Tensor> {
        self.to_dtype(other.dtype())
    }

    /// Copies `src` (broadcast to this shape, converted to this dtype) into `self`; returns
    /// `self`. Bumps the version once.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 2], DType::F64)?;
    /// x.copy_(&Tensor::from_vec(vec![1i64, 2], &[2])?)?;
    /// assert_eq!(x.to_vec::<f64>()?, vec![1.0, 2.0, 1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn copy_(&self, src: &Tensor) -> Result<Tensor> {
        let shape = self.shape();
        let b = broadcast_shapes(&shape, &src.shape(), "copy_")?;
        if b != shape {
            bail!(
                ShapeMismatch,
                "copy_",
                "output with shape {:?} doesn't match the broadcast shape {:?}",
                shape,
                b
            );
        }
        // an integral or bool `self` cannot carry a gradient: nothing is recorded (PyTorch's
        // result does not require grad even when `src` does)
        let rec = if self.dtype().is_differentiable() {
            check_inplace(self, &[src])?
        } else {
            None
        };
        let sd = self.data();
        check_no_internal_overlap(&sd, "copy_")?;
        let ov = check_no_partial_overlap(self, src, "copy_")?;
        if !(ov == Overlap::Full && self.dtype() == src.dtype()) {
            if ov == Overlap::Full {
                // same memory, different dtype reinterpretation: copy through a temporary
                let tmp = src.detach().copy()?;
                copy_raw_broadcast(&sd, &tmp, self.dtype());
            } else {
                copy_raw_broadcast(&sd, src, self.dtype());
            }
        }
        self.0.version.bump();
        let (src_shape, src_dtype) = (src.shape(), src.dtype());
        record_inplace(
            rec,
            self,
            Vec::new,
            CopyBackwards {
                src_shape,
                src_dtype,
            },
        )?;
        Ok(self.clone())
    }

    /// Fills `self` with `value` (cast to its dtype); returns `self`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[3], DType::I32)?;
    /// x.fill_(7)?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![7, 7, 7]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fill_(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        let v = value.into();
        check_fits(v, self.dtype(), "fill_")?;
        self.fill_impl(v, "FillBackward0")
    }

    /// Fills `self` with the value of a 0-dim tensor (cast to `self`'s dtype); returns `self`.
    /// The value gets the gradient summed over `self` (it is `copy_`'s rule).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[3], DType::I32)?;
    /// x.fill_tensor_(&Tensor::scalar(2.5f64))?;
    /// assert_eq!(x.to_vec::<i32>()?, vec![2, 2, 2]);
    /// assert!(x.fill_tensor_(&Tensor::zeros(&[1], DType::I32)?).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fill_tensor_(&self, value: &Tensor) -> Result<Tensor> {
        if value.dim() != 0 {
            bail!(
                InvalidArgument,
                "fill_",
                "fill_ only supports 0-dimension value tensor but got tensor with {} dimensions.",
                value.dim()
            );
        }
        // (a value read from `self` itself is taken before the write)
        let v = if value.shares_storage(self) {
            value.copy()?
        } else {
            value.clone()
        };
        self.copy_(&v)
    }

    /// Fills `self` with zeros; returns `self`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.zero_()?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn zero_(&self) -> Result<Tensor> {
        self.fill_impl(Scalar::Int(0), "ZeroBackward0")
    }

    /// Writes `values` (this shape, any dtype; drawn by a sampler such as `normal_`) into
    /// `self` through its geometry, bumps the version once and records `name` as a node whose
    /// gradient is zero (PyTorch's `NormalBackward0`, ...). The samplers of `crate::random` use it.
    pub(crate) fn write_sampled_(
        &self,
        values: &Tensor,
        op: &'static str,
        name: &'static str,
    ) -> Result<Tensor> {
        let rec = check_inplace(self, &[])?;
        check_no_internal_overlap(&self.data(), op)?;
        copy_raw_broadcast(&self.data(), values, self.dtype());
        self.0.version.bump();
        record_inplace(rec, self, Vec::new, ZeroGradBackward { name })?;
        Ok(self.clone())
    }

    fn fill_impl(&self, v: Scalar, name: &'static str) -> Result<Tensor> {
        let rec = check_inplace(self, &[])?;
        fill(&self.data(), self.dtype(), v);
        self.0.version.bump();
        record_inplace(rec, self, Vec::new, ZeroGradBackward { name })?;
        Ok(self.clone())
    }
}

/// PyTorch's checked scalar conversion (`c10::checked_convert`): an integer dtype refuses NaN,
/// infinities and values beyond its range (uint8 wraps negative *integers* down to -255, a
/// negative float is out of its range); a floating dtype refuses finite values beyond its
/// range (infinities and NaN pass); bool and complex take anything.
pub(crate) fn check_fits(v: Scalar, dt: DType, op: &'static str) -> Result<()> {
    let (lo, hi) = match dt {
        DType::U8 => (0.0, u8::MAX as f64),
        DType::I8 => (i8::MIN as f64, i8::MAX as f64),
        DType::I16 => (i16::MIN as f64, i16::MAX as f64),
        DType::I32 => (i32::MIN as f64, i32::MAX as f64),
        DType::I64 => (i64::MIN as f64, i64::MAX as f64),
        DType::F16 => (-65504.0, 65504.0),
        DType::BF16 => (-3.3895313892515355e38, 3.3895313892515355e38),
        DType::F32 => (f32::MIN as f64, f32::MAX as f64),
        _ => return Ok(()),
    };
    let bad = match v {
        Scalar::Int(_) if dt == DType::I64 => false,
        // an unsigned dtype takes negatives down to -max (two's complement wrapping)
        Scalar::Int(i) if dt == DType::U8 => !(-hi..=hi).contains(&(i as f64)),
        Scalar::Int(i) => (i as f64) < lo || (i as f64) > hi,
        Scalar::Float(f) if dt.is_float() => f.is_finite() && (f < lo || f > hi),
        Scalar::Float(f) => !f.is_finite() || f < lo || f > hi,
        _ => false,
    };
    if bad {
        bail!(
            InvalidArgument,
            op,
            "value cannot be converted to type {} without overflow",
            dt.name()
        );
    }
    Ok(())
}

/// `dst = src` (broadcast to `dst`'s shape; partial overlap already rejected).
fn copy_raw_broadcast(dst: &crate::tensor::TensorData, src: &Tensor, ddt: DType) {
    copy_raw(dst, &src.data(), ddt, src.dtype());
}

/// Gradient passes through unchanged (clone, contiguous, alias).
pub(crate) struct PassBackward {
    pub(crate) name: &'static str,
}
backward!(PassBackward, self.name, |self, _, g| Ok(g));

struct ToCopyBackward {
    dtype: DType,
}
backward!(ToCopyBackward, "ToCopyBackward0", |self, _, g: Tensor| {
    input_grad(g.to_dtype(self.dtype)?)
});

/// `copy_`: the old value of self gets no gradient; `src` gets the gradient summed to its shape.
struct CopyBackwards {
    src_shape: Vec<usize>,
    src_dtype: DType,
}
backward!(
    CopyBackwards,
    "CopyBackwards",
    |self, ctx, g: Tensor| grads([
        ctx.grad_if(0, || g.zeros_like())?,
        ctx.grad_if(1, || g
            .sum_to_size(&self.src_shape)?
            .to_dtype(self.src_dtype))?,
    ])
);

/// `fill_`/`zero_`: the overwritten value gets a zero gradient.
struct ZeroGradBackward {
    name: &'static str,
}
backward!(
    ZeroGradBackward,
    self.name,
    |self, _, g: Tensor| input_grad(g.zeros_like()?)
);
