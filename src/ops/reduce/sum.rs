//! Reductions. `sum` (all dims or given dims, keepdim) and `sum_to_size` live here with their
//! backward, and the sums built on them: `nansum` (NaN counted as zero by the backend's row
//! reduction in one pass; the gradient is `g` where the input is not NaN, PyTorch's
//! `NansumBackward0`) and `count_nonzero`; integer and
//! bool sums accumulate (and return) i64, f16/bf16 accumulate in f32.
//! The kernels are the backend's (`Backend::sum_into`, `Backend::sum_dense`).

use crate::autograd::record;
use crate::layout::{Layout, wrap_dims};
use crate::ops::grad::{backward, input_grad};
use crate::{DType, Result, Tensor};

/// The dtype `sum` returns for an input dtype.
pub(crate) fn sum_dtype(d: DType) -> DType {
    if d.is_integral(true) { DType::I64 } else { d }
}

/// Sum over `dims` (all when `None`) without autograd; result in `sum_dtype`.
pub(crate) fn sum_raw(x: &Tensor, dims: Option<&[usize]>, keepdim: bool) -> Result<Tensor> {
    x.check_strided("sum")?;
    let shape = x.shape();
    let all: Vec<usize> = (0..shape.len()).collect();
    let dims = dims.unwrap_or(&all);
    let kshape: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &s)| if dims.contains(&i) { 1 } else { s })
        .collect();
    let fast = if dims.len() == shape.len() {
        full_sum_dense(x, &kshape)
    } else {
        None
    };
    let out = match fast {
        Some(out) => out?,
        None => sum_general(x, &shape, dims, &kshape)?,
    };
    if keepdim {
        return Ok(out);
    }
    let rshape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(i))
        .map(|(_, &s)| s)
        .collect();
    Ok(Tensor::from_parts(
        out.storage(),
        Layout::contiguous(&rshape),
        out.dtype(),
    ))
}

/// The full sum of a non-overlapping dense float tensor (in memory order, pairwise, f16/bf16
/// accumulated in f32) as a tensor of `kshape` in `sum_dtype`; `None` for other tensors.
fn full_sum_dense(x: &Tensor, kshape: &[usize]) -> Option<Result<Tensor>> {
    if !x.dtype().is_float() {
        return None;
    }
    let out = match Tensor::empty(kshape, x.dtype()) {
        Ok(t) => t,
        Err(e) => return Some(Err(e)),
    };
    crate::backend::sum_dense(&out.data(), &x.data(), x.dtype()).then_some(Ok(out))
}

/// Sum of `x` (of `shape`) over `dims` into a tensor of the keepdim shape `kshape`, in
/// `sum_dtype`: the strided kernel (parallel for full sums of large contiguous tensors of
/// dtypes without a dense fast path).
fn sum_general(x: &Tensor, shape: &[usize], dims: &[usize], kshape: &[usize]) -> Result<Tensor> {
    let acc = x.dtype().accumulate_dtype();
    let xin = if x.dtype() == acc {
        x.clone()
    } else {
        let _g = crate::autograd::no_grad();
        x.to_dtype(acc)?
    };
    let out = Tensor::zeros(kshape, acc)?;
    crate::backend::sum_into(&out.data(), &xin.data(), acc, dims.len() == shape.len());
    if out.dtype() != sum_dtype(x.dtype()) {
        let _g = crate::autograd::no_grad();
        out.to_dtype(sum_dtype(x.dtype()))
    } else {
        Ok(out)
    }
}

struct SumBackward {
    name: &'static str,
    shape: Vec<usize>,
    dims: Vec<usize>,
    keepdim: bool,
}

backward!(SumBackward, self.name, |self, _, g: Tensor| {
    let mut g = g;
    // the full sum's rule is PyTorch's `grad.expand(self.sizes())` (no unsqueezes first: the
    // new dims all get stride 0)
    if !self.keepdim && self.name != "SumBackward0" {
        let mut dims = self.dims.clone();
        dims.sort_unstable();
        for d in dims {
            g = g.unsqueeze(d as i64)?;
        }
    }
    input_grad(g.broadcast_to(&self.shape)?)
});

impl Tensor {
    /// Sum of all elements (0-dim). Integers and bool sum to i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// assert_eq!(x.sum()?.item::<i64>()?, 6);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum(&self) -> Result<Tensor> {
        if self.is_sparse() {
            return crate::sparse::sum(self);
        }
        let out = sum_raw(self, None, false)?;
        let dims = (0..self.dim()).collect();
        record(
            &[&out],
            &[self],
            Vec::new,
            SumBackward {
                name: "SumBackward0",
                shape: self.shape(),
                dims,
                keepdim: false,
            },
        )?;
        Ok(out)
    }

    /// Sum over `dims` (negatives allowed), keeping them as size 1 if `keepdim`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// assert_eq!(x.sum_dims(&[1], false)?.to_vec::<i64>()?, vec![3, 12]);
    /// assert_eq!(x.sum_dims(&[0], true)?.shape(), vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_dims(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "sum_dims")?;
        let dims = &dims[..];
        let ds = wrap_dims(dims, self.dim(), "sum")?;
        let ds = if ds.is_empty() {
            (0..self.dim()).collect()
        } else {
            ds
        };
        let out = sum_raw(self, Some(&ds), keepdim)?;
        record(
            &[&out],
            &[self],
            Vec::new,
            SumBackward {
                name: "SumBackward1",
                shape: self.shape(),
                dims: ds,
                keepdim,
            },
        )?;
        Ok(out)
    }

    /// `sum(dims, keepdim, dtype=...)`: the input is cast to `dtype` first and the result keeps
    /// `dtype` (so an int32 sum stays int32, wrapping like PyTorch). Empty `dims` = all dims.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.sum_dims_dtype(&[0], false, DType::I32)?.dtype(), DType::I32);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_dims_dtype(
        &self,
        dims: impl crate::IntoShape,
        keepdim: bool,
        dtype: DType,
    ) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "sum_dims_dtype")?;
        let dims = &dims[..];
        let x = self.to_dtype(dtype)?;
        let s = if dims.is_empty() && !keepdim {
            x.sum()?
        } else {
            x.sum_dims(dims, keepdim)?
        };
        s.to_dtype(dtype)
    }

    /// Sum treating NaN as zero over `dims` (empty: all dims), keeping them as size 1 if
    /// `keepdim`; with `dtype` the input is cast to it first. Integers and bool sum to i64;
    /// complex is refused (as PyTorch on CPU).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, f32::NAN, 2.0], &[3])?;
    /// assert_eq!(x.nansum((), false, None)?.item::<f32>()?, 3.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nansum(
        &self,
        dims: impl crate::IntoShape,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "nansum")?;
        let dims = &dims[..];
        if self.dtype().is_complex() || dtype.is_some_and(|d| d.is_complex()) {
            crate::bail!(
                Unsupported,
                "nansum",
                "nansum does not support complex inputs"
            );
        }
        let x = match dtype {
            Some(d) if d != self.dtype() => self.to_dtype(d)?,
            _ => self.clone(),
        };
        if x.dtype().is_float() {
            use crate::ops::reduce::util::{Exact, norm_dims, record_weighted, reduce_to, rows};
            let ds = norm_dims(Some(dims), x.dim(), "nansum")?;
            let rw = rows(&x, &ds, "nansum")?;
            let out = {
                let _g = crate::autograd::no_grad();
                let out = reduce_to(
                    &x,
                    &rw,
                    x.dtype(),
                    crate::backend::ReduceOp::NanSum,
                    "nansum",
                )?;
                crate::ops::util::fresh_output(&out, rw.shape(keepdim))?
            };
            record_weighted(
                &out,
                &x,
                "NansumBackward0",
                &rw,
                keepdim,
                Exact::None,
                || {
                    let _g = crate::autograd::no_grad();
                    x.isnan()?.logical_not()?.to_dtype(x.dtype())
                },
            )?;
            return Ok(out);
        }
        if dims.is_empty() && !keepdim {
            // (the dims are checked against the input even when all are reduced)
            x.sum()
        } else {
            x.sum_dims(dims, keepdim)
        }
    }

    /// The number of non-zero elements over `dims` (empty: all dims), as i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0i32, 3, 0, 1], &[2, 2])?;
    /// assert_eq!(x.count_nonzero(&[1])?.to_vec::<i64>()?, vec![1, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn count_nonzero(&self, dims: impl crate::IntoShape) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "count_nonzero")?;
        let dims = &dims[..];
        let nz = self.ne(0)?;
        if dims.is_empty() {
            nz.sum()
        } else {
            nz.sum_dims(dims, false)
        }
    }

    /// Sums broadcast dims away so the result has `shape` (the inverse of broadcasting).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let g = Tensor::ones(&[4, 2, 3], DType::F32)?;
    /// let s = g.sum_to_size(&[2, 1])?;
    /// assert_eq!((s.shape(), s.to_vec::<f32>()?), (vec![2, 1], vec![12.0, 12.0]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_to_size(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "sum_to_size")?;
        let shape = &shape[..];
        let mine = self.shape();
        if mine == shape {
            return Ok(self.clone());
        }
        if shape.len() > mine.len() {
            crate::bail!(
                ShapeMismatch,
                "sum_to_size",
                "size {:?} is not expandable to size {:?}",
                shape,
                mine
            );
        }
        if shape.is_empty() {
            // PyTorch's `sum_to` of a 0-dim target is a plain `sum()` (not a view)
            return self.sum();
        }
        let lead = mine.len() - shape.len();
        let mut dims: Vec<i64> = (0..lead as i64).collect();
        for (i, &s) in shape.iter().enumerate() {
            let m = mine[lead + i];
            if s == 1 && m != 1 {
                dims.push((lead + i) as i64);
            } else if s != m {
                crate::bail!(
                    ShapeMismatch,
                    "sum_to_size",
                    "size {:?} is not expandable to size {:?}",
                    shape,
                    mine
                );
            }
        }
        let mut r = if dims.is_empty() {
            self.clone()
        } else {
            self.sum_dims(&dims, true)?
        };
        if lead > 0 {
            let s: Vec<i64> = shape.iter().map(|&v| v as i64).collect();
            r = r.view(&s)?;
        }
        Ok(r)
    }
}
