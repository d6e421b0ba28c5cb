//! Ordering ops along one dimension: `sort` (ascending/descending, stable), `argsort` and
//! `topk` (largest/smallest, sorted or not). NaN orders above every number, as in PyTorch.
//! Values are gathered with the differentiable [`take`] primitive, so their backward scatters
//! the gradient back to the picked positions (and double backward works); indices are int64.

use std::cmp::Ordering;
use std::sync::Arc;

use crate::autograd::no_grad;
use crate::ops::movement::gather::take;
use crate::ops::reduce::util::{one_dim, rows};
use crate::{DType, Result, Tensor, bail};

/// A sort key that orders like PyTorch: integers exactly, floats with NaN above `+inf`.
#[derive(Clone, Copy, PartialEq)]
enum Key {
    Int(i64),
    Float(f64),
}

fn cmp_keys(a: &Key, b: &Key) -> Ordering {
    match (a, b) {
        (Key::Int(x), Key::Int(y)) => x.cmp(y),
        (Key::Float(x), Key::Float(y)) => match (x.is_nan(), y.is_nan()) {
            (true, true) => Ordering::Equal,
            (true, false) => Ordering::Greater,
            (false, true) => Ordering::Less,
            _ => x.partial_cmp(y).unwrap_or(Ordering::Equal),
        },
        _ => unreachable!("internal: mixed sort keys"),
    }
}

/// Rows of `x` along `dim` (that dim last) as keys, plus the row-major flat position in `x` of
/// every row element, and the wrapped dim (`None` for a 0-dim tensor).
struct Sorted {
    m: usize,
    r: usize,
    keys: Vec<Key>,
    pos: Vec<usize>,
    dim: Option<usize>,
}

fn key_rows(x: &Tensor, dim: i64, op: &'static str) -> Result<Sorted> {
    let dt = x.dtype();
    if dt.is_complex() {
        bail!(
            Unsupported,
            op,
            "{}(): not implemented for '{}'",
            op,
            dt.torch_scalar_name()
        );
    }
    let dims = one_dim(dim, x.dim(), op)?;
    let _g = no_grad();
    let (rw, keys) = if dt.is_float() {
        let (rw, v) = rows::<f64>(x, &dims)?;
        (rw, v.into_iter().map(Key::Float).collect())
    } else {
        let (rw, v) = rows::<i64>(x, &dims)?;
        (rw, v.into_iter().map(Key::Int).collect())
    };
    let n = x.numel() as i64;
    let ar = Tensor::arange_dtype(0, n, 1, DType::I64)?
        .reshape(&x.shape().iter().map(|&s| s as i64).collect::<Vec<_>>())?;
    let (_, pos) = rows::<i64>(&ar, &dims)?;
    Ok(Sorted {
        m: rw.m,
        r: rw.r,
        keys,
        pos: pos.into_iter().map(|p| p as usize).collect(),
        dim: dims.first().copied(),
    })
}

/// Permutation of `keys` sorted ascending or descending (ties keep their order).
fn order(keys: &[Key], descending: bool) -> Vec<usize> {
    let mut p: Vec<usize> = (0..keys.len()).collect();
    if descending {
        p.sort_by(|&a, &b| cmp_keys(&keys[b], &keys[a]));
    } else {
        p.sort_by(|&a, &b| cmp_keys(&keys[a], &keys[b]));
    }
    p
}

/// Picks `k` entries per row (`pick(row_keys) -> positions within the row`) and returns the
/// differentiable values and the int64 indices, shaped like `x` with `dim` of size `k`.
fn pick_rows(
    x: &Tensor,
    s: &Sorted,
    k: usize,
    name: &'static str,
    pick: impl Fn(&[Key]) -> Vec<usize>,
) -> Result<(Tensor, Tensor)> {
    let mut shape = x.shape();
    if let Some(d) = s.dim {
        shape[d] = k;
    }
    // flat output position of (row i, slot j): the same row-major walk over the output shape
    let out_pos: Vec<usize> = {
        let _g = no_grad();
        let n: usize = shape.iter().product();
        let ar = Tensor::arange_dtype(0, n as i64, 1, DType::I64)?
            .reshape(&shape.iter().map(|&v| v as i64).collect::<Vec<_>>())?;
        let dims: Vec<usize> = s.dim.into_iter().collect();
        rows::<i64>(&ar, &dims)?
            .1
            .into_iter()
            .map(|p| p as usize)
            .collect()
    };
    let n = s.m * k;
    let (mut src, mut idx) = (vec![0usize; n], vec![0i64; n]);
    for i in 0..s.m {
        let row = &s.keys[i * s.r..(i + 1) * s.r];
        for (j, &p) in pick(row).iter().enumerate() {
            let o = out_pos[i * k + j];
            src[o] = s.pos[i * s.r + p];
            idx[o] = p as i64;
        }
    }
    let values = take(x, Arc::new(src), &shape, name)?;
    let indices = Tensor::from_vec(idx, &shape)?;
    Ok((values, indices))
}

impl Tensor {
    /// Sorts along `dim`; returns `(values, indices)`. NaN sorts as the largest value. The sort
    /// is always stable (ties keep their input order, also when descending), so `stable` only
    /// documents the caller's intent.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![3.0f32, 1.0, 2.0], &[3])?;
    /// let (v, i) = x.sort(-1, false, true)?;
    /// assert_eq!(v.to_vec::<f32>()?, vec![1.0, 2.0, 3.0]);
    /// assert_eq!(i.to_vec::<i64>()?, vec![1, 2, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sort(&self, dim: i64, descending: bool, stable: bool) -> Result<(Tensor, Tensor)> {
        let _ = stable;
        let s = key_rows(self, dim, "sort")?;
        pick_rows(self, &s, s.r, "SortBackward0", |row| order(row, descending))
    }

    /// Indices that sort `self` along `dim` (the second output of [`Tensor::sort`]).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![3i64, 1, 2], &[3])?;
    /// assert_eq!(x.argsort(0, true, true)?.to_vec::<i64>()?, vec![0, 2, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argsort(&self, dim: i64, descending: bool, stable: bool) -> Result<Tensor> {
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
        k: usize,
        dim: i64,
        largest: bool,
        sorted: bool,
    ) -> Result<(Tensor, Tensor)> {
        let s = key_rows(self, dim, "topk")?;
        if k > s.r {
            bail!(
                IndexOutOfRange,
                "topk",
                "selected index k out of range: k = {} but dim {} of shape {:?} has size {}",
                k,
                dim,
                self.shape(),
                s.r
            );
        }
        pick_rows(self, &s, k, "TopkBackward0", |row| {
            let mut p = order(row, largest);
            p.truncate(k);
            if !sorted {
                p.sort_unstable();
            }
            p
        })
    }
}
