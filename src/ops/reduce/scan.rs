//! Scans along one dim: `cumsum` (backward = reverse cumsum, differentiable) and `cumprod`
//! (backward computed from the saved input, exact with zeros). Integers/bool accumulate in i64.

use crate::autograd::{SavedTensor, record};
use crate::ops::grad::{backward, input_grad};
use crate::ops::reduce::util::{Rows, one_dim, rows, unrows};
use crate::{DType, Result, Tensor};

fn scan_dtype(x: &Tensor, dtype: Option<DType>) -> DType {
    dtype.unwrap_or(if x.dtype().is_integral(true) {
        DType::I64
    } else {
        x.dtype()
    })
}

/// Runs `f` over each row (kept dims first, `dim` last) and returns values in `x`'s shape.
fn scan_f64(
    x: &Tensor,
    dim: i64,
    dt: DType,
    op: &'static str,
    f: impl Fn(&mut [f64]),
) -> Result<(Tensor, Rows, Vec<f64>)> {
    let ds = one_dim(dim, x.dim(), op)?;
    let (rw, d) = rows::<f64>(x, &ds)?;
    let mut v = d.clone();
    for row in v.chunks_mut(rw.r.max(1)) {
        f(row);
    }
    Ok((unrows(v, x, &rw, dt)?, rw, d))
}

fn scan_i64(x: &Tensor, dim: i64, op: &'static str, f: impl Fn(&mut [i64])) -> Result<Tensor> {
    let ds = one_dim(dim, x.dim(), op)?;
    let (rw, mut d) = rows::<i64>(x, &ds)?;
    for row in d.chunks_mut(rw.r.max(1)) {
        f(row);
    }
    unrows(d, x, &rw, DType::I64)
}

struct CumsumBackward {
    dim: i64,
}

backward!(CumsumBackward, "CumsumBackward0", |self, _, g: Tensor| {
    if g.dim() == 0 {
        return input_grad(g);
    }
    // reverse cumsum: total - cumsum + g
    let total = g.sum_dims(&[self.dim], true)?;
    input_grad(total.sub(&g.cumsum(self.dim, None)?)?.add(&g)?)
});

impl Tensor {
    /// Cumulative sum along `dim`; integers accumulate in i64 unless `dtype` is given.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// assert_eq!(x.cumsum(0, None)?.to_vec::<i64>()?, vec![1, 3, 6]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cumsum(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let dt = scan_dtype(self, dtype);
        let out = if dt.is_integral(true) {
            let r = scan_i64(self, dim, "cumsum", |row| {
                for j in 1..row.len() {
                    row[j] = row[j].wrapping_add(row[j - 1]);
                }
            })?;
            if dt != DType::I64 { r.to_dtype(dt)? } else { r }
        } else if dt.is_complex() || self.dtype().is_complex() {
            crate::bail!(
                Unsupported,
                "cumsum",
                "cumsum: complex inputs are not supported yet"
            );
        } else {
            // accumulate in the accumulation dtype (f32 for f16/bf16/f32), round on output
            let src = if self.dtype() != dt {
                let _g = crate::autograd::no_grad();
                self.to_dtype(dt)?
            } else {
                self.clone()
            };
            let round = |v: f64| -> f64 {
                match dt {
                    DType::F64 => v,
                    _ => v as f32 as f64,
                }
            };
            scan_f64(&src, dim, dt, "cumsum", |row| {
                for j in 1..row.len() {
                    row[j] = round(row[j] + row[j - 1]);
                }
            })?
            .0
        };
        if dt.is_differentiable() {
            let d = crate::layout::wrap_dim(dim, self.dim(), "cumsum")? as i64;
            record(&[&out], &[self], Vec::new, CumsumBackward { dim: d })?;
        }
        Ok(out)
    }

    /// Cumulative product along `dim`; integers accumulate in i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![2.0f32, 0.0, 4.0], &[3])?;
    /// assert_eq!(x.cumprod(0, None)?.to_vec::<f32>()?, vec![2.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cumprod(&self, dim: i64, dtype: Option<DType>) -> Result<Tensor> {
        let dt = scan_dtype(self, dtype);
        if dt.is_integral(true) {
            let r = scan_i64(self, dim, "cumprod", |row| {
                for j in 1..row.len() {
                    row[j] = row[j].wrapping_mul(row[j - 1]);
                }
            })?;
            return if dt != DType::I64 {
                r.to_dtype(dt)
            } else {
                Ok(r)
            };
        }
        if dt.is_complex() || self.dtype().is_complex() {
            crate::bail!(
                Unsupported,
                "cumprod",
                "cumprod: complex inputs are not supported yet"
            );
        }
        let (out, rw, d) = scan_f64(self, dim, dt, "cumprod", |row| {
            for j in 1..row.len() {
                row[j] *= row[j - 1];
            }
        })?;
        if crate::autograd::is_grad_enabled() && self.requires_grad() {
            let x = self.clone();
            let dim = if self.dim() == 0 {
                0
            } else {
                crate::layout::wrap_dim(dim, self.dim(), "cumprod")?
            };
            record(
                &[&out],
                &[self],
                || vec![SavedTensor::input(self)],
                CumprodBackward {
                    x_rows: d,
                    rw,
                    x,
                    dim,
                },
            )?;
        }
        Ok(out)
    }
}

/// grad_i = sum_{k >= i} g_k * prod_{j <= k, j != i} x_j (exact with zeros), computed from the
/// input rows; under `create_graph` the same sum is built from recorded ops on the saved input.
struct CumprodBackward {
    x_rows: Vec<f64>,
    rw: Rows,
    x: Tensor,
    dim: usize,
}

impl CumprodBackward {
    /// `[.., i, k]` holds `prod_{j <= k, j != i} x_j` (cumprod of x with x_i replaced by 1);
    /// grad_i sums `g_k` times it over `k >= i`.
    fn differentiable(&self, x: &Tensor, g: &Tensor) -> Result<Tensor> {
        let d = self.dim as i64;
        let r = x.shape()[self.dim];
        let xm = x.movedim(&[d], &[-1])?;
        let gm = g.movedim(&[d], &[-1])?;
        let eye = Tensor::eye(r, DType::F64)?.gt(0.5)?;
        let c = Tensor::where_(&eye, 1.0, &xm.unsqueeze(-2)?)?.cumprod(-1, None)?;
        let upper = Tensor::ones(&[r, r], x.dtype())?.triu(0)?;
        c.mul(&gm.unsqueeze(-2)?)?
            .mul(&upper)?
            .sum_dims(&[-1], false)?
            .movedim(&[-1], &[d])
    }
}

backward!(
    CumprodBackward,
    "CumprodBackward0",
    |self, ctx, g: Tensor| {
        if ctx.create_graph && g.dim() > 0 {
            return input_grad(self.differentiable(&ctx.saved[0], &g)?);
        }
        let (_, gr) = rows::<f64>(&g, &self.rw.dims)?;
        let r = self.rw.r;
        let mut out = vec![0.0f64; gr.len()];
        for row in 0..self.rw.m {
            let (x, gg) = (
                &self.x_rows[row * r..(row + 1) * r],
                &gr[row * r..(row + 1) * r],
            );
            for i in 0..r {
                let mut pre: f64 = x[..i].iter().product();
                let mut acc = 0.0;
                for k in i..r {
                    if k > i {
                        pre *= x[k];
                    }
                    acc += gg[k] * pre;
                }
                out[row * r + i] = acc;
            }
        }
        input_grad(unrows(out, &self.x, &self.rw, g.dtype())?)
    }
);
