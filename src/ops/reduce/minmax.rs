//! Extremum reductions: `max`/`min` (all elements, or along a dim with indices), `amax`/`amin`
//! over dims and `argmax`/`argmin`. NaN propagates (and wins the index); ties take the first
//! index. Full reductions and amax/amin split the gradient evenly among ties; `max(dim)` routes
//! it to the returned index.

use crate::ops::reduce::util::{
    Exact, Rows, build, norm_dims, one_dim, record_weighted, rows, unrows,
};
use crate::{DType, Result, Tensor, bail};

/// Per-row extremum and its first index (NaN wins).
fn ext_rows<T: PartialOrd + Copy>(d: &[T], m: usize, r: usize, max: bool) -> (Vec<T>, Vec<i64>) {
    let (mut vs, mut is) = (Vec::with_capacity(m), Vec::with_capacity(m));
    for row in d.chunks_exact(r.max(1)).take(m) {
        let (mut best, mut bi) = (row[0], 0usize);
        #[allow(clippy::eq_op)]
        if best == best {
            for (j, &v) in row.iter().enumerate().skip(1) {
                #[allow(clippy::eq_op)]
                if v != v {
                    best = v;
                    bi = j;
                    break;
                }
                if (max && v > best) || (!max && v < best) {
                    best = v;
                    bi = j;
                }
            }
        }
        vs.push(best);
        is.push(bi as i64);
    }
    (vs, is)
}

/// Computes extremum values (as f64 or i64 per dtype, built in `x`'s dtype), indices, and the
/// even-split tie weights / one-hot weights on demand.
struct Ext {
    rw: Rows,
    vals: Tensor,
    idx: Vec<i64>,
    /// row-major data as f64 (for weights)
    data: Vec<f64>,
    vf: Vec<f64>,
}

fn extremum(x: &Tensor, dims: Vec<usize>, max: bool, op: &'static str, all: bool) -> Result<Ext> {
    let dt = x.dtype();
    if dt.is_complex() {
        bail!(Unsupported, op, "{}(): does not support complex input", op);
    }
    let (rw, data) = rows::<f64>(x, &dims)?;
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
    let (vals, idx, vf) = if dt.is_float() {
        let (v, i) = ext_rows(&data, rw.m, rw.r, max);
        (build(v.clone(), &rw.kshape, dt)?, i, v)
    } else {
        let (_, di) = rows::<i64>(x, &dims)?;
        let (v, i) = ext_rows(&di, rw.m, rw.r, max);
        let vf = v.iter().map(|&a| a as f64).collect();
        (build(v, &rw.kshape, dt)?, i, vf)
    };
    Ok(Ext {
        rw,
        vals,
        idx,
        data,
        vf,
    })
}

impl Ext {
    fn out(&self, keepdim: bool) -> Result<Tensor> {
        crate::ops::util::fresh_output(&self.vals, self.rw.shape(keepdim))
    }
    /// Weights 1/count at elements equal to their row's extremum.
    fn tie_weights(&self, x: &Tensor) -> Result<Tensor> {
        let r = self.rw.r;
        let mut w = vec![0.0f64; self.data.len()];
        for (i, row) in self.data.chunks_exact(r).enumerate() {
            let c = row.iter().filter(|&&v| v == self.vf[i]).count();
            for (j, &v) in row.iter().enumerate() {
                if v == self.vf[i] {
                    w[i * r + j] = 1.0 / c as f64;
                }
            }
        }
        unrows(w, x, &self.rw, x.dtype())
    }
    fn onehot(&self, x: &Tensor) -> Result<Tensor> {
        let r = self.rw.r;
        let mut w = vec![0.0f64; self.data.len()];
        for (i, &k) in self.idx.iter().enumerate() {
            w[i * r + k as usize] = 1.0;
        }
        unrows(w, x, &self.rw, x.dtype())
    }
}

fn full(x: &Tensor, max: bool, op: &'static str, name: &'static str) -> Result<Tensor> {
    let e = extremum(x, norm_dims(None, x.dim(), op)?, max, op, true)?;
    let out = e.out(false)?;
    record_weighted(&out, x, name, &e.rw, false, Exact::None, || {
        e.tie_weights(x)
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
    let e = extremum(x, one_dim(dim, x.dim(), op)?, max, op, false)?;
    let out = e.out(keepdim)?;
    let idx = build(e.idx.clone(), e.rw.shape(keepdim), DType::I64)?;
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
    let e = extremum(x, norm_dims(Some(dims), x.dim(), op)?, max, op, false)?;
    let out = e.out(keepdim)?;
    let name = if max {
        "AmaxBackward0"
    } else {
        "AminBackward0"
    };
    record_weighted(&out, x, name, &e.rw, keepdim, Exact::None, || {
        e.tie_weights(x)
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
            let e = extremum(&flat, vec![0], max, op, false)?;
            let shape = if keepdim { vec![1; x.dim()] } else { vec![] };
            build(e.idx, &shape, DType::I64)
        }
        Some(d) => {
            let e = extremum(x, one_dim(d, x.dim(), op)?, max, op, false)?;
            build(e.idx.clone(), e.rw.shape(keepdim), DType::I64)
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
    pub fn max_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
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
    pub fn min_dim(&self, dim: i64, keepdim: bool) -> Result<(Tensor, Tensor)> {
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
    pub fn amax(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
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
    pub fn amin(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        amax_impl(self, dims, keepdim, false, "amin")
    }

    /// Index (i64) of the maximum, over the flattened tensor when `dim` is `None`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 2.0], &[2, 2])?;
    /// assert_eq!(x.argmax(None, false)?.item::<i64>()?, 2);
    /// assert_eq!(x.argmax(Some(1), false)?.to_vec::<i64>()?, vec![1, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argmax(&self, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
        arg_impl(self, dim, keepdim, true, "argmax")
    }

    /// Index (i64) of the minimum, over the flattened tensor when `dim` is `None`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 7.0, 0.0], &[2, 2])?;
    /// assert_eq!(x.argmin(None, false)?.item::<i64>()?, 3);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn argmin(&self, dim: Option<i64>, keepdim: bool) -> Result<Tensor> {
        arg_impl(self, dim, keepdim, false, "argmin")
    }
}
