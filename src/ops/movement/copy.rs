//! Copies and fills: `copy` (PyTorch `clone`), `contiguous`, `to_dtype`, and the in-place
//! `copy_`, `fill_`, `zero_`. Backward formulas sit beside them.

use crate::autograd::{check_inplace, record, record_inplace};
use crate::backend::{copy_raw, fill};
use crate::layout::broadcast_shapes;
use crate::ops::grad::{GradIf, backward, grads, input_grad};
use crate::ops::util::{Overlap, check_no_internal_overlap, check_no_partial_overlap};
use crate::tensor::materialize;
use crate::{DType, Result, Scalar, Tensor, bail};

impl Tensor {
    /// A copy with its own storage and version counter (PyTorch `clone()`); keeps the memory
    /// order of a dense input (a transposed tensor stays column-major).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 3], DType::F32)?;
    /// let c = x.t()?.copy()?;
    /// assert_eq!(c.strides(), vec![1, 3]);
    /// assert!(!c.shares_storage(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
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
        let rec = check_inplace(self, &[src])?;
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
        self.fill_impl(value.into(), "FillBackward0")
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

    fn fill_impl(&self, v: Scalar, name: &'static str) -> Result<Tensor> {
        let rec = check_inplace(self, &[])?;
        fill(&self.data(), self.dtype(), v);
        self.0.version.bump();
        record_inplace(rec, self, Vec::new, ZeroGradBackward { name })?;
        Ok(self.clone())
    }
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
