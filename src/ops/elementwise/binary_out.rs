//! `out=` variants of binary ops (currently `add_out`): the result is written into a
//! preallocated tensor of the broadcast shape. Like PyTorch, `out=` ops do not support autograd.

use crate::dtype::{Operand, result_type};
use crate::layout::broadcast_shapes;
use crate::ops::elementwise::binary::{binary_into, can_cast, cast_error};
use crate::ops::util::{check_no_internal_overlap, check_no_partial_overlap};
use crate::{Element, Result, Tensor, bail, dispatch};

impl Tensor {
    /// Writes `self + other` into `out` (which must already have the broadcast shape) and
    /// returns `out`. Inputs and `out` must not require grad while grad mode is on.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let a = Tensor::ones(&[3], DType::F32)?;
    /// let out = Tensor::zeros(&[3], DType::F32)?;
    /// a.add_out(&a, &out)?;
    /// assert_eq!(out.to_vec::<f32>()?, vec![2.0; 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn add_out(&self, other: &Tensor, out: &Tensor) -> Result<Tensor> {
        if crate::autograd::is_grad_enabled()
            && (self.requires_grad() || other.requires_grad() || out.requires_grad())
        {
            bail!(
                InvalidArgument,
                "add",
                "add(): functions with out=... arguments don't support automatic differentiation, but one of the arguments requires grad."
            );
        }
        let shape = broadcast_shapes(&self.shape(), &other.shape(), "add")?;
        if out.shape() != shape {
            bail!(
                ShapeMismatch,
                "add",
                "output with shape {:?} doesn't match the broadcast shape {:?}",
                out.shape(),
                shape
            );
        }
        let (oa, ob) = (Operand::from(self), Operand::from(other));
        let dt = result_type(&[&oa, &ob]);
        if !can_cast(dt, out.dtype()) {
            return Err(cast_error("add", dt, out.dtype()));
        }
        check_no_internal_overlap(&out.data_ref(), "add")?;
        check_no_partial_overlap(out, self, "add")?;
        check_no_partial_overlap(out, other, "add")?;
        if dt != out.dtype() {
            let r = self.add(other)?;
            out.copy_(&r)?;
            return Ok(out.clone());
        }
        let (a, b) = {
            let _g = crate::autograd::no_grad();
            (self.to_dtype(dt)?, other.to_dtype(dt)?)
        };
        dispatch!(dt, T => {
            let f = |x: T, y: T| x.add(y);
            if !crate::ops::dense::binary_into::<T>(out, &a, &b, &f) {
                binary_into::<T, T>(out, &shape, &a, &b, f);
            }
        });
        out.0.version.bump();
        Ok(out.clone())
    }
}
