//! Extremum reductions: `max`/`min` (all elements, or along a dim with indices), `amax`/`amin`
//! over dims and `argmax`/`argmin`. NaN propagates (and wins the index); ties take the first
//! index. Full reductions and amax/amin split the gradient evenly among ties; `max(dim)` routes
//! it to the returned index.

use crate::backend::ReduceOp;
use crate::ops::reduce::util::{Exact, Rows, fresh, norm_dims, one_dim, record_weighted, rows};
use crate::{DType, Result, Tensor, bail};

/// Extremum values (keepdim shape, `x`'s dtype) and, when asked for, their first indices (i64,
/// keepdim shape) per row over `dims`.
struct Ext {
    rw: Rows,
    vals: Tensor,
    idx: Option<Tensor>,
}

fn extremum(
    x: &Tensor,
    dims: Vec<usize>,
    max: bool,
    op: &'static str,
    all: bool,
    want_idx: bool,
) -> Result<Ext> {
    let dt = x.dtype();
    if dt.is_complex() {
        bail!(Unsupported, op, "{}(): does not support complex input", op);
    }
    let rw = rows(x, &dims, op)?;
    if rw.r == 0 {
        if all {
            bail!(
                InvalidArgument,
                op,
                "{}(): Expected reduction dim to be specified for input.numel() == 0. Specify the reduction dim with the 'dim' argument.",
                op
            );
        }
        bail!(
            IndexOutOfRange,
            op,
            "{}(): Expected reduction dim {} to have non-zero size.",
            op,
            dims.first().copied().unwrap_or(0)
        );
    }
    let vals = fresh(&rw.kshape, dt)?;
    let idx = if want_idx {
        Some(fresh(&rw.kshape, DType::I64)?)
    } else {
        None
    };
    let rop = if max { ReduceOp::Max } else { ReduceOp::Min };
    crate::backend::reduce(
        &vals.data(),
        dt,
        idx.as_ref().map(|i| i.data()).as_ref(),
        &x.data(),
        dt,
        &rw.dims,
        rop,
        op,
    )?;
    Ok(Ext { rw, vals, idx })
}

impl Ext {
    fn out(&self, keepdim: bool) -> Result<Tensor> {
        crate::ops::util::fresh_output(&self.vals, self.rw.shape(keepdim))
    }
    fn indices(&self, keepdim: bool) -> Result<Tensor> {
        crate::ops::util::fresh_output(self.idx(), self.rw.shape(keepdim))
    }
    fn idx(&self) -> &Tensor {
        self.idx
            .as_ref()
            .expect("internal: extremum indices were asked for")
    }
    /// Weights 1/count (computed in f64) at elements equal to their row's extremum. `evenly`
    /// (full `max`/`min`, PyTorch's `evenly_distribute_backward`): a NaN extremum is shared by
    /// the NaN elements. Otherwise (`amax`/`amin`, PyTorch's `mask / mask.sum()`): a row whose
    /// extremum is NaN matches nothing and its weights are `0 / 0`, NaN.
    fn tie_weights(&self, x: &Tensor, evenly: bool) -> Result<Tensor> {
        let _g = crate::autograd::no_grad();
        let x = x.detach();
        let mut mask = x.eq(&self.vals)?;
        if evenly {
            mask = mask.logical_or(&x.isnan()?.logical_and(&self.vals.isnan()?)?)?;
        }
        let dims: Vec<i64> = self.rw.dims.iter().map(|&d| d as i64).collect();
        let count = if dims.is_empty() {
            mask.to_dtype(DType::I64)?
        } else {
            mask.sum_dims(&dims, true)?
        };
        mask.to_dtype(DType::F64)?
            .div(&count.to_dtype(DType::F64)?)?
            .to_dtype(x.dtype())?
            .contiguous()
    }
    /// One-hot weights at the returned indices.
    fn onehot(&self, x: &Tensor) -> Result<Tensor> {
        let _g = crate::autograd::no_grad();
        let Some(&d) = self.rw.dims.first() else {
            return x.detach().ones_like();
        };
        let mut shape = vec![1i64; x.dim()];
        shape[d] = self.rw.r as i64;
        let pos = Tensor::arange_dtype(0, self.rw.r as i64, 1, DType::I64)?.reshape(&shape)?;
        pos.eq(self.idx())?.to_dtype(x.dtype())?.contiguous()
    }
}

fn full(x: &Tensor, max: bool, op: &'static str, name: &'static str) -> Result<Tensor> {
    let e = extremum(x, norm_dims(None, x.dim(), op)?, max, op, true, false)?;
    let out = e.out(false)?;
    record_weighted(&out, x, name, &e.rw, false, Exact::None, || {
        e.tie_weights(x, true)
    })?;
    Ok(out)
}

fn along(
    x: &Tensor,
    dim: i64,
    keepdim: bool,
    max: bool,
    op: &'static str,
) -> Result<(Tensor, Tensor)> {
    let e = extremum(x, one_dim(dim, x.dim(), op)?, max, op, false, true)?;
    let out = e.out(keepdim)?;
    let idx = e.indices(keepdim)?;
    let name = if max { "MaxBackward0" } else { "MinBackward0" };
    record_weighted(&out, x, name, &e.rw, keepdim, Exact::None, || e.onehot(x))?;
    Ok((out, idx))
}

fn amax_impl(
    x: &Tensor,
    dims: &[i64],
    keepdim: bool,
    max: bool,
    op: &'static str,
) -> Result<Tensor> {
    // `dims = []` reduces everything: an empty input then needs a dim (PyTorch's RuntimeError)
    let all = dims.is_empty();
    let e = extremum(x, norm_dims(Some(dims), x.dim(), op)?, max, op, all, false)?;
    let out = e.out(keepdim)?;
    let name = if max {
        "AmaxBackward0"
    } else {
        "AminBackward0"
    };
    record_weighted(&out, x, name, &e.rw, keepdim, Exact::None, || {
        e.tie_weights(x, false)
    })?;
    Ok(out)
}

fn arg_impl(
    x: &Tensor,
    dim: Option<i64>,
    keepdim: bool,
    max: bool,
    op: &'static str,
) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    match dim {
        None => {
            let flat = x.reshape(&[-1])?;
            let e = extremum(&flat, vec![0], max, op, false, true)?;
            let shape = if keepdim { vec![1; x.dim()] } else { vec![] };
            crate::ops::util::fresh_output(e.idx(), &shape)
        }
        Some(d) => {
            let e = extremum(x, one_dim(d, x.dim(), op)?, max, op, false, true)?;
            e.indices(keepdim)
        }
    }
}

impl Tensor {
    /// Largest element (0-dim); NaN propagates. Errors on an empty tensor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 3.0], &[3])?;
    /// assert_eq!(x.max()?.item::<f32>()?, 5.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn max(&self) -> Result<Tensor> {
        full(self, true, "max", "MaxBackward1")
    }

    /// Smallest element (0-dim); NaN propagates. Errors on an empty tensor.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 5, -3], &[3])?;
    /// assert_eq!(x.min()?.item::<i32>()?, -3);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn min(&self) -> Result<Tensor> {
        full(self, false, "min", "MinBackward1")
    }

    /// `(values, indices)` of the maximum along `dim` (indices are i64, first occurrence).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 2.0], &[2, 2])?;
    /// let (v, i) = x.max_dim(1, false)?;
    /// assert_eq!((v.to_vec::<f32>()?, i.to_vec::<i64>()?), (vec![5.0, 7.0], vec![1, 0]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn max_dim(&self, dim: impl crate::Dim, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = crate::tensor::dims::dim(dim, "max_dim")?;
        along(self, dim, keepdim, true, "max")
    }

    /// `(values, indices)` of the minimum along `dim`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 2.0], &[2, 2])?;
    /// assert_eq!(x.min_dim(0, true)?.1.to_vec::<i64>()?, vec![0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn min_dim(&self, dim: impl crate::Dim, keepdim: bool) -> Result<(Tensor, Tensor)> {
        let dim = crate::tensor::dims::dim(dim, "min_dim")?;
        along(self, dim, keepdim, false, "min")
    }

    /// Maximum over `dims` (empty = all); the gradient is split evenly among ties.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 5.0, 7.0, 2.0], &[2, 2])?;
    /// assert_eq!(x.amax(&[0], false)?.to_vec::<f64>()?, vec![7.0, 5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn amax(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "amax")?;
        let dims = &dims[..];
        amax_impl(self, dims, keepdim, true, "amax")
    }

    /// Minimum over `dims` (empty = all).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 5.0, 7.0, 2.0], &[2, 2])?;
    /// assert_eq!(x.amin(&[1], true)?.to_vec::<f64>()?, vec![1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn amin(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "amin")?;
        let dims = &dims[..];
        amax_impl(self, dims, keepdim, false, "amin")
    }

    /// Index (i64) of the maximum along `dim`, or over the flattened tensor when `dim` is
    /// `None` (any [`MaybeDim`](crate::MaybeDim)).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 2.0], &[2, 2])?;
    /// assert_eq!(x.argmax(None, false)?.item::<i64>()?, 2);
    /// assert_eq!(x.argmax(1, false)?.to_vec::<i64>()?, vec![1, 0]);
    /// assert_eq!(x.argmax(-1, true)?.shape(), vec![2, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argmax(&self, dim: impl crate::MaybeDim, keepdim: bool) -> Result<Tensor> {
        let dim = crate::tensor::dims::maybe_dim(dim, "argmax")?;
        arg_impl(self, dim, keepdim, true, "argmax")
    }

    /// Index (i64) of the minimum along `dim`, or over the flattened tensor when `dim` is
    /// `None` (any [`MaybeDim`](crate::MaybeDim)).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 0.0], &[2, 2])?;
    /// assert_eq!(x.argmin(None, false)?.item::<i64>()?, 3);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argmin(&self, dim: impl crate::MaybeDim, keepdim: bool) -> Result<Tensor> {
        let dim = crate::tensor::dims::maybe_dim(dim, "argmin")?;
        arg_impl(self, dim, keepdim, false, "argmin")
    }
}
