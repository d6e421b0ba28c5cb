//! Ordering ops along one dimension: `sort` (ascending/descending, stable), `argsort` and
//! `topk` (largest/smallest, sorted or not). NaN orders above every number, as in PyTorch.
//! Values are gathered with the differentiable [`take_strided`] primitive, so their backward
//! scatters the gradient back to the picked positions (and double backward works); indices are
//! int64. `sort` keeps its input's memory order (PyTorch's dense strides), `topk` is contiguous.

use std::sync::Arc;

use crate::autograd::no_grad;
use crate::ops::movement::gather::take_strided;
use crate::ops::reduce::util::one_dim;
use crate::{DType, Result, Tensor, bail};

/// Whether [`Tensor::sort`] / [`Tensor::argsort`] must keep tied elements in input order
/// (PyTorch's `stable=` keyword). tapegrad's sort is always stable, so both give the same
/// result; `Stable` states that the caller relies on it.
///
/// ```
/// # use tapegrad::{Stability, Tensor};
/// let x = Tensor::from_vec(vec![1.0f32, 0.0, 1.0], &[3])?;
/// let (_, i) = x.sort(0, false, Stability::Stable)?;
/// assert_eq!(i.to_vec::<i64>()?, vec![1, 0, 2]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum Stability {
    /// Ties may come in any order (`stable=False`, the default).
    #[default]
    Any,
    /// Ties keep their input order (`stable=True`).
    Stable,
}

/// The wrapped dim (`None` for a 0-dim tensor) and its size, after the dtype check.
fn sort_dim(x: &Tensor, dim: i64, op: &'static str) -> Result<(Option<usize>, usize)> {
    let dt = x.dtype();
    if dt.is_complex() {
        bail!(
            DTypeMismatch,
            op,
            "{}(): not implemented for '{}'",
            op,
            dt.torch_scalar_name()
        );
    }
    let d = one_dim(dim, x.dim(), op)?.first().copied();
    x.check_strided(op)?;
    Ok((d, d.map_or(1, |d| x.shape()[d])))
}

/// Sorts `x` along `d` (keys ascending, or descending when `descending`), keeps `k` per row
/// (in input order unless `sorted`), and returns the differentiable values and the int64
/// indices, shaped like `x` with `d` of size `k`, both with dense `strides`.
#[allow(clippy::too_many_arguments)]
fn pick_rows(
    x: &Tensor,
    d: Option<usize>,
    k: usize,
    descending: bool,
    sorted: bool,
    strides: &[usize],
    name: &'static str,
) -> Result<(Tensor, Tensor)> {
    let mut shape = x.shape();
    if let Some(d) = d {
        shape[d] = k;
    }
    crate::layout::check_numel(&shape, name)?;
    let indices = Tensor::empty_strided(&shape, strides, DType::I64)?;
    let src = crate::backend::sort_rows(
        &indices.data(),
        &x.data(),
        x.dtype(),
        d,
        k,
        descending,
        sorted,
    )?;
    // the backend lists the source positions in the storage order of `indices` (fresh, dense,
    // offset 0); `take` reads them in logical order
    let src = if indices.layout().is_contiguous() {
        src
    } else {
        indices.layout().offsets().map(|o| src[o]).collect()
    };
    let values = take_strided(x, Arc::new(src), &shape, strides, name)?;
    Ok((values, indices))
}

impl Tensor {
    /// Sorts along `dim`; returns `(values, indices)`. NaN sorts as the largest value. The sort
    /// is always stable (ties keep their input order, also when descending), so
    /// [`Stability`] only documents the caller's intent.
    ///
    /// ```
    /// # use tapegrad::{Stability, Tensor};
    /// let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0], &[3])?;
    /// let (v, i) = x.sort(-1, false, Stability::Stable)?;
    /// assert_eq!(v.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
    /// assert_eq!(i.to_vec::<i64>()?, vec![1, 2, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sort(
        &self,
        dim: impl crate::Dim,
        descending: bool,
        stable: Stability,
    ) -> Result<(Tensor, Tensor)> {
        let dim = crate::tensor::dims::dim(dim, "sort")?;
        let _ = stable;
        let (d, r) = sort_dim(self, dim, "sort")?;
        // PyTorch's sort keeps the input's memory order (its strides when dense)
        let strides = self.layout().preserved_strides();
        pick_rows(self, d, r, descending, true, &strides, "SortBackward0")
    }

    /// Indices that sort `self` along `dim` (the second output of [`Tensor::sort`]).
    ///
    /// ```
    /// # use tapegrad::{Stability, Tensor};
    /// let x = Tensor::from_vec(vec![3i64, 1, 2], &[3])?;
    /// assert_eq!(x.argsort(0, true, Stability::Any)?.to_vec::<i64>()?, vec![0, 2, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argsort(
        &self,
        dim: impl crate::Dim,
        descending: bool,
        stable: Stability,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "argsort")?;
        let _g = no_grad();
        Ok(self.sort(dim, descending, stable)?.1)
    }

    /// The `k` largest (or smallest) entries along `dim`, as `(values, indices)`; with
    /// `sorted` they come in order (largest first when `largest`), otherwise in input order.
    /// Errors with `IndexOutOfRange` when `k` exceeds the size of `dim`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 9.0, 4.0, 7.0], &[4])?;
    /// let (v, i) = x.topk(2, -1, true, true)?;
    /// assert_eq!(v.to_vec::<f32>()?, vec![9.0, 7.0]);
    /// assert_eq!(i.to_vec::<i64>()?, vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn topk(
        &self,
        k: impl crate::Dim,
        dim: impl crate::Dim,
        largest: bool,
        sorted: bool,
    ) -> Result<(Tensor, Tensor)> {
        let k = crate::tensor::dims::size(k, "topk", |_| "selected index k out of range".into())?;
        let dim = crate::tensor::dims::dim(dim, "topk")?;
        let (d, r) = sort_dim(self, dim, "topk")?;
        if k > r {
            bail!(
                IndexOutOfRange,
                "topk",
                "selected index k out of range: k = {} but dim {} of shape {:?} has size {}",
                k,
                dim,
                self.shape(),
                r
            );
        }
        let mut shape = self.shape();
        if let Some(d) = d {
            shape[d] = k;
        }
        let strides = crate::layout::contiguous_strides(&shape);
        pick_rows(self, d, k, largest, sorted, &strides, "TopkBackward0")
    }
}
