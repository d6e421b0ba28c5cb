//! Selections whose result size depends on the data: `nonzero` (the `[n, ndim]` coordinates of
//! the nonzero elements, laid out column-major like PyTorch's) and `masked_select` (the
//! elements under a broadcast bool mask, differentiable through [`take`]).

use std::sync::Arc;

use crate::autograd::no_grad;
use crate::layout::broadcast_shapes;
use crate::ops::movement::gather::take;
use crate::{DType, Result, Tensor, bail};

impl Tensor {
    /// Coordinates of the nonzero elements (NaN counts as nonzero, `-0.0` does not), in
    /// row-major order, as an int64 `[n, ndim]` tensor with strides `[1, n]` (PyTorch's
    /// column-major result layout).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f32, 1.5, 0.0, -2.0], &[2, 2])?;
    /// let nz = x.nonzero()?;
    /// assert_eq!(nz.shape(), vec![2, 2]);
    /// assert_eq!(nz.to_vec::<i64>()?, vec![0, 1, 1, 1]);
    /// assert_eq!(nz.strides(), vec![1, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nonzero(&self) -> Result<Tensor> {
        let shape = self.shape();
        let nd = shape.len();
        let hits = crate::backend::movement::nonzero(&self.data(), self.dtype())?;
        let n = hits.len();
        // the `[n, nd]` result with strides `[1, n]` (all coordinates of dim 0, then of dim
        // 1, ...), written by the backend straight into its fresh storage
        let out = Tensor::empty_strided(&[n, nd], &[1, n], DType::I64)?;
        crate::backend::movement::nonzero_coords(&out.data(), &hits, &shape);
        Ok(out)
    }

    /// The elements of `self` where `mask` (bool, broadcast together with `self`) is true, as
    /// a 1-D tensor in row-major order of the broadcast shape.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2])?;
    /// let m = Tensor::from_vec(vec![true, false], &[2])?;
    /// assert_eq!(x.masked_select(&m)?.to_vec::<i64>()?, vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn masked_select(&self, mask: &Tensor) -> Result<Tensor> {
        let op = "masked_select";
        if mask.dtype() != DType::Bool {
            bail!(
                DTypeMismatch,
                op,
                "masked_select: expected BoolTensor for mask, got {}",
                mask.dtype().torch_scalar_name()
            );
        }
        let shape = broadcast_shapes(&self.shape(), &mask.shape(), op)?;
        let ishape: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
        let picks: Vec<usize> = {
            let _g = no_grad();
            let m = mask.expand(&ishape)?;
            crate::backend::movement::nonzero(&m.data(), DType::Bool)?
        };
        let x = if self.shape() == shape {
            self.clone()
        } else {
            self.expand(&ishape)?
        };
        let n = picks.len();
        take(&x, Arc::new(picks), &[n], "MaskedSelectBackward0")
    }
}
