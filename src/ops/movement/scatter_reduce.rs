//! `scatter_reduce` / `scatter_reduce_`: combine `src` into `self` at `index` along a dim with
//! sum, prod, mean, amax or amin, optionally without the values of `self` ([`IncludeSelf`]).
//! The backward is PyTorch's `scatter_reduce_backward` written with differentiable ops
//! (exclusive products for zeros, gradient shared evenly among tied maxima/minima).

use crate::autograd::{SavedTensor, check_inplace, no_grad};
use crate::autograd::{record, record_inplace};
use crate::backend::Reduce;
use crate::layout::wrap_dim;
use crate::ops::grad::{backward, grads};
use crate::ops::movement::gather::{output, scatter_pairs};
use crate::{DType, Result, Tensor, bail};

/// The reduction of [`Tensor::scatter_reduce`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ScatterReduce {
    /// Sum of the scattered values.
    Sum,
    /// Product.
    Prod,
    /// Mean (integer dtypes round toward negative infinity).
    Mean,
    /// Maximum (NaN propagates).
    Amax,
    /// Minimum (NaN propagates).
    Amin,
}

impl ScatterReduce {
    /// Parses PyTorch's `reduce=` string (`"sum"`, `"prod"`, `"mean"`, `"amax"`, `"amin"`).
    ///
    /// ```
    /// # use tapegrad::ScatterReduce;
    /// assert_eq!(ScatterReduce::from_name("amax"), Some(ScatterReduce::Amax));
    /// assert_eq!(ScatterReduce::from_name("max"), None);
    /// ```
    pub fn from_name(name: &str) -> Option<Self> {
        Some(match name {
            "sum" => ScatterReduce::Sum,
            "prod" => ScatterReduce::Prod,
            "mean" => ScatterReduce::Mean,
            "amax" => ScatterReduce::Amax,
            "amin" => ScatterReduce::Amin,
            _ => return None,
        })
    }
}

/// Whether [`Tensor::scatter_reduce`] combines the values of `self` at the scattered positions
/// with the scattered ones (PyTorch's `include_self=` keyword; `Yes` is its default).
///
/// ```
/// # use tapegrad::{IncludeSelf, ScatterReduce, Tensor};
/// let x = Tensor::from_vec(vec![10.0f32, 20.0], &[2])?;
/// let i = Tensor::from_vec(vec![0i64], &[1])?;
/// let s = Tensor::from_vec(vec![1.0f32], &[1])?;
/// let y = x.scatter_reduce(0, &i, &s, ScatterReduce::Sum, IncludeSelf::No)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![1.0, 20.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum IncludeSelf {
    /// The reduction includes `self`'s value (`include_self=True`, the default).
    #[default]
    Yes,
    /// Scattered positions are reduced over the `src` values alone (`include_self=False`).
    No,
}

/// Validates and computes the reduced tensor (no autograd).
fn forward(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: &Tensor,
    r: ScatterReduce,
    include_self: IncludeSelf,
    op: &'static str,
) -> Result<Tensor> {
    let shape = x.shape();
    let d = wrap_dim(dim, shape.len(), op)?;
    if src.dtype() != x.dtype() {
        bail!(
            DTypeMismatch,
            op,
            "{}(): Expected self.dtype to be equal to src.dtype, got {} and {}",
            op,
            x.dtype().torch_scalar_name(),
            src.dtype().torch_scalar_name()
        );
    }
    if x.dtype().is_complex() {
        bail!(
            Unsupported,
            op,
            "{}(): complex tensors are not supported",
            op
        );
    }
    let pairs = scatter_pairs(&shape, d, index, Some(&src.shape()), op)?;
    let _g = no_grad();
    let dt = x.dtype();
    let t = output(&shape, dt, op)?;
    crate::backend::copy_raw(&t.data(), &x.data(), dt, dt);
    let red = Reduce {
        pairs: &pairs,
        reduce: r,
        include_self: include_self == IncludeSelf::Yes,
    };
    crate::backend::movement::scatter_reduce(&t.data(), &src.data(), &red, dt)?;
    Ok(t)
}

/// Backward of scatter_reduce. Saved: self (before the op), src, result.
struct ScatterReduceBackward {
    dim: i64,
    index: Tensor,
    reduce: ScatterReduce,
    include_self: IncludeSelf,
}

impl ScatterReduceBackward {
    fn grads(&self, g: &Tensor, x: &Tensor, src: &Tensor, res: &Tensor) -> Result<[Tensor; 2]> {
        let (d, idx, r, inc) = (self.dim, &self.index, self.reduce, self.include_self);
        let dt = x.dtype();
        let (gx, gs) = match r {
            ScatterReduce::Sum => (g.clone(), g.gather(d, idx)?),
            ScatterReduce::Mean => {
                let n0 = if inc == IncludeSelf::Yes {
                    g.ones_like()?
                } else {
                    g.zeros_like()?
                };
                let n = n0.scatter_add(d, idx, &src.ones_like()?.to_dtype(g.dtype())?)?;
                let n = n.masked_fill(&n.eq(0)?, 1)?;
                (g.div(&n)?, g.gather(d, idx)?.div(&n.gather(d, idx)?)?)
            }
            ScatterReduce::Prod => {
                let masked_x = x.masked_fill(&x.eq(0)?, 1)?;
                let mx_res = masked_x.scatter_reduce(d, idx, src, r, inc)?;
                let gx = g.mul(&mx_res)?.div(&masked_x)?;
                let src_zero = src.eq(0)?;
                let nz = x
                    .zeros_like()?
                    .scatter_add(d, idx, &src_zero.to_dtype(dt)?)?
                    .gather(d, idx)?;
                let single = src_zero.logical_and(&nz.eq(1)?)?;
                let ms_res = x.scatter_reduce(d, idx, &src.masked_fill(&single, 1)?, r, inc)?;
                let a = g.mul(&ms_res)?.gather(d, idx)?;
                let b = g
                    .mul(res)?
                    .gather(d, idx)?
                    .div(&src.masked_fill(&src_zero, 1)?)?;
                (gx, Tensor::where_(&single, &a, &b)?)
            }
            ScatterReduce::Amax | ScatterReduce::Amin => {
                let value = res.gather(d, idx)?;
                let x_is = x.eq(res)?;
                let s_is = src.eq(&value)?;
                let n = x_is
                    .to_dtype(dt)?
                    .scatter_add(d, idx, &s_is.to_dtype(dt)?)?;
                let gd = g.div(&n)?;
                (gd.mul(&x_is)?, gd.gather(d, idx)?.mul(&s_is)?)
            }
        };
        let gx = if inc == IncludeSelf::Yes {
            gx
        } else {
            gx.scatter_value(d, idx, 0.0)?
        };
        Ok([gx, gs])
    }
}

backward!(
    ScatterReduceBackward,
    "ScatterReduceBackward0",
    |self, ctx, g: Tensor| {
        let (x, src, res) = (&ctx.saved[0], &ctx.saved[1], &ctx.saved[2]);
        if ctx.needs(1) && src.shape() != self.index.shape() {
            bail!(
                NotImplemented,
                "scatter_reduce",
                "scatter_reduce(): gradient for src is only implemented for src.shape == index.shape (src {:?}, index {:?})",
                src.shape(),
                self.index.shape()
            );
        }
        let [gx, gs] = self.grads(&g, x, src, res)?;
        grads([ctx.needs(0).then_some(gx), ctx.needs(1).then_some(gs)])
    }
);

fn differentiable(t: &Tensor) -> bool {
    t.dtype().is_float() && t.dtype() != DType::Bool
}

impl Tensor {
    /// Out-of-place scatter with a reduction: position `index[i][j]` along `dim` of a copy of
    /// `self` combines `src[i][j]` (and the original value with [`IncludeSelf::Yes`]).
    /// Untouched positions keep `self`'s value.
    ///
    /// ```
    /// # use tapegrad::{IncludeSelf, Tensor, ScatterReduce};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    /// let i = Tensor::from_vec(vec![0i64, 0, 2], &[3])?;
    /// let s = Tensor::from_vec(vec![5.0f32, 7.0, -1.0], &[3])?;
    /// let y = x.scatter_reduce(0, &i, &s, ScatterReduce::Amax, IncludeSelf::Yes)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![7.0, 2.0, 3.0]);
    /// let m = x.scatter_reduce(0, &i, &s, ScatterReduce::Mean, IncludeSelf::No)?;
    /// assert_eq!(m.to_vec::<f32>()?, vec![6.0, 2.0, -1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_reduce(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: IncludeSelf,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_reduce")?;
        let out = forward(
            self,
            dim,
            index,
            src,
            reduce,
            include_self,
            "scatter_reduce",
        )?;
        if differentiable(self) {
            let bw = ScatterReduceBackward {
                dim,
                index: index.detach(),
                reduce,
                include_self,
            };
            record(
                &[&out],
                &[self, src],
                || {
                    vec![
                        SavedTensor::input(self),
                        SavedTensor::input(src),
                        SavedTensor::output(&out, 0),
                    ]
                },
                bw,
            )?;
        }
        Ok(out)
    }

    /// In-place [`Tensor::scatter_reduce`] (bumps the version; errors leave `self` unchanged).
    ///
    /// ```
    /// # use tapegrad::{IncludeSelf, Tensor, ScatterReduce};
    /// let x = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    /// let i = Tensor::from_vec(vec![1i64, 1], &[2])?;
    /// x.scatter_reduce_(0, &i, &Tensor::from_vec(vec![4i64, 5], &[2])?, ScatterReduce::Prod, IncludeSelf::Yes)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 40, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_reduce_(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        src: &Tensor,
        reduce: ScatterReduce,
        include_self: IncludeSelf,
    ) -> Result<Tensor> {
        let op = "scatter_reduce_";
        let dim = crate::tensor::dims::dim(dim, op)?;
        let result = forward(self, dim, index, src, reduce, include_self, op)?;
        crate::ops::util::check_no_internal_overlap(&self.data_ref(), op)?;
        let rec = check_inplace(self, &[src])?;
        let orig = if rec.is_some() {
            let _g = no_grad();
            Some(self.detach().copy()?)
        } else {
            None
        };
        crate::backend::copy_raw(&self.data(), &result.data(), self.dtype(), self.dtype());
        self.0.version.bump();
        let bw = ScatterReduceBackward {
            dim,
            index: index.detach(),
            reduce,
            include_self,
        };
        record_inplace(
            rec,
            self,
            || match orig {
                Some(o) => vec![
                    SavedTensor::private(o),
                    SavedTensor::input(src),
                    SavedTensor::private(result),
                ],
                None => Vec::new(),
            },
            bw,
        )?;
        Ok(self.clone())
    }
}
