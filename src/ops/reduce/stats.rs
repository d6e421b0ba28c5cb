//! Statistical reductions: `mean`, `var`/`std` (with correction), `logsumexp`, `norm`
//! (any p: 1, 2 (= "fro"), inf, -inf, 0 (count of non-zeros) and general p), `all`/`any`.
//! `mean` is a composition of differentiable ops, `var` records PyTorch's `var_backward`
//! ([`VarBackward`]); the others record a weight-based backward (see `util::WeightedBackward`;
//! a general p's weight is PyTorch's `norm_backward`, built from ops so that double backward is
//! that formula's derivative).

use crate::backend::{ReduceOp, RowOp};
use crate::ops::elementwise::map::unary_map;
use crate::ops::grad::{backward, grads, input_grad};
use crate::ops::reduce::util::{
    Exact, norm_dims, record_weighted, reduce_to, row_map, rows, unsqueeze_dims,
};
use crate::{DType, Result, Tensor, bail};

/// Which vector norm [`Tensor::norm`] computes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum NormOrd {
    /// Sum of absolute values.
    L1,
    /// Euclidean (also "fro").
    L2,
    /// Largest absolute value.
    Inf,
    /// Smallest absolute value.
    NegInf,
    /// `(sum |x|^p)^(1/p)` for any other p (fractional, negative, > 2); `P(0.0)` counts the
    /// non-zero elements. `P(1.0)`, `P(2.0)` and `P(±inf)` are the named orders.
    P(f64),
}

impl NormOrd {
    /// The named order for `P(1)`, `P(2)`, `P(±inf)`; other orders as they are.
    fn canonical(self) -> NormOrd {
        match self {
            NormOrd::P(1.0) => NormOrd::L1,
            NormOrd::P(2.0) => NormOrd::L2,
            NormOrd::P(p) if p == f64::INFINITY => NormOrd::Inf,
            NormOrd::P(p) if p == f64::NEG_INFINITY => NormOrd::NegInf,
            o => o,
        }
    }
}

/// Orders without an identity (inf, -inf, p < 0) refuse to reduce an empty set: the whole
/// (empty) tensor, or a reduced dim of size 0.
fn no_identity_check(x: &Tensor, ord: NormOrd, all: bool, dims: &[usize]) -> Result<()> {
    let (no_identity, p) = match ord {
        NormOrd::Inf => (true, "inf".to_string()),
        NormOrd::NegInf => (true, "-inf".to_string()),
        NormOrd::P(p) => (p < 0.0, format!("{p}")),
        _ => (false, String::new()),
    };
    if !no_identity || x.numel() != 0 {
        return Ok(());
    }
    let shape = x.shape();
    if all {
        bail!(
            InvalidArgument,
            "norm",
            "linalg.vector_norm cannot compute the {} norm on an empty tensor because the operation does not have an identity",
            p
        );
    }
    if let Some(d) = dims.iter().find(|&&d| shape[d] == 0) {
        bail!(
            InvalidArgument,
            "norm",
            "linalg.vector_norm cannot compute the {} norm on the dimension {} because this dimension is empty and the operation does not have an identity",
            p,
            d
        );
    }
    Ok(())
}

/// `norm` of order 0 counts non-zeros: PyTorch's backward gives the input no gradient at all
/// (an undefined tensor, so a leaf's `grad` stays unset).
struct NormZeroBackward;
backward!(NormZeroBackward, "NormBackward1", |self, _, _g| grads::<1>(
    [None]
));

/// The weight `d norm / d x` of a general p (not 1, 2, ±inf) as PyTorch's `norm_backward`
/// computes it, from `x` and the norm `out` (kept dims): 0 for p = 0 (unused: p = 0 has no
/// gradient at all);
/// `sgn(x) |x|^(p-1) out^(1-p)` (0 where x = 0) for p < 1;
/// `sgn(x) |x|^(p-1) / out^(p-1)` for 1 < p < 2 and `x |x|^(p-2) / out^(p-1)` for p > 2
/// (0 where out = 0). Recorded ops when grad mode is on (double backward).
pub(crate) fn norm_p_weight(x: &Tensor, out: &Tensor, p: f64) -> Result<Tensor> {
    if p == 0.0 {
        return x.zeros_like();
    }
    if p < 1.0 {
        let scaled = x.sign()?.mul(&x.abs()?.pow(p - 1.0)?)?;
        let scaled = Tensor::where_(&x.eq(0)?, 0.0, &scaled)?;
        return scaled.mul(&out.pow(1.0 - p)?);
    }
    let scaled = if p < 2.0 {
        x.sign()?.mul(&x.abs()?.pow(p - 1.0)?)?
    } else {
        x.mul(&x.abs()?.pow(p - 2.0)?)?
    };
    let scale = Tensor::where_(&out.eq(0)?, 0.0, &out.pow(p - 1.0)?.reciprocal()?)?;
    scaled.mul(&scale)
}

fn float_only(x: &Tensor, op: &'static str) -> Result<()> {
    if !x.dtype().is_float() {
        bail!(
            InvalidArgument,
            op,
            "{}(): input dtype should be floating point, but got {}",
            op,
            x.dtype().torch_scalar_name()
        );
    }
    Ok(())
}

/// `var`/`std` take floating and complex inputs only (PyTorch's dtype error).
fn float_or_complex(x: &Tensor, op: &'static str) -> Result<()> {
    if !(x.dtype().is_float() || x.dtype().is_complex()) {
        bail!(
            DTypeMismatch,
            op,
            "std and var only support floating point and complex dtypes, got {}",
            x.dtype().torch_scalar_name()
        );
    }
    Ok(())
}

/// PyTorch's `mean_backward`: `g` re-expanded to the input's shape, divided by the count
/// (a fresh tensor, not a view of `g`).
struct MeanBackward {
    name: &'static str,
    dims: Vec<usize>,
    keepdim: bool,
    shape: Vec<usize>,
    /// The count of reduced elements, as the divisor (see [`Tensor::mean`]).
    n: f64,
}

backward!(MeanBackward, self.name, |self, _, g: Tensor| {
    let g = unsqueeze_dims(&g, &self.dims, self.keepdim)?;
    let shape: Vec<i64> = self.shape.iter().map(|&s| s as i64).collect();
    input_grad(g.expand(&shape)?.div(self.n)?)
});

impl Tensor {
    /// Mean over `dims` (empty = all). Integer inputs need an explicit floating `dtype`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 6.0], &[2, 2])?;
    /// assert_eq!(x.mean((), false, None)?.item::<f32>()?, 3.0);
    /// assert_eq!(x.mean(&[1], true, None)?.to_vec::<f32>()?, vec![1.5, 4.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn mean(
        &self,
        dims: impl crate::IntoShape,
        keepdim: bool,
        dtype: Option<DType>,
    ) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "mean")?;
        let dims = &dims[..];
        self.check_strided("mean")?;
        let dt = dtype.unwrap_or(self.dtype());
        if !(dt.is_float() || dt.is_complex()) {
            bail!(
                DTypeMismatch,
                "mean",
                "mean(): could not infer output dtype. {} dtype must be either a floating point or complex dtype. Got: {}",
                if dtype.is_some() { "Optional" } else { "Input" },
                dt.torch_scalar_name()
            );
        }
        let ds = norm_dims(Some(dims), self.dim(), "mean")?;
        // the count as the f64 divisor it becomes: an empty input may have reduced sizes whose
        // integer product overflows (`[2^40, 0, 2^40]` over dims 0 and 2; libFuzzer
        // nn_geometry finding in a batch-norm backward); exact below 2^53, and 0 (a NaN mean,
        // as PyTorch's 0/0) whenever a reduced size is 0
        let n: f64 = ds.iter().map(|&d| self.shape()[d] as f64).product();
        let acc = dt.accumulate_dtype();
        let x = if self.dtype() != acc {
            self.to_dtype(acc)?
        } else {
            self.clone()
        };
        let dl: Vec<i64> = ds.iter().map(|&d| d as i64).collect();
        let m = {
            let _g = crate::autograd::no_grad();
            // PyTorch's CPU mean: the sum divided by the count (a 0-d input is its own sum);
            // out of place: torch's in-place division inside its kernel leaves the result's
            // version at 0, which `div_` would bump
            let s = if self.dim() == 0 {
                x
            } else {
                x.sum_dims(&dl, keepdim)?
            };
            let m = s.div(n)?;
            if m.dtype() != dt { m.to_dtype(dt)? } else { m }
        };
        if dt.is_differentiable() {
            let bw = MeanBackward {
                name: if dims.is_empty() {
                    "MeanBackward0"
                } else {
                    "MeanBackward1"
                },
                dims: ds,
                keepdim,
                shape: self.shape(),
                n,
            };
            crate::autograd::record(&[&m], &[self], Vec::new, bw)?;
        }
        Ok(m)
    }

    /// Variance over `dims` (empty = all) with `correction` (1 = unbiased). A complex input
    /// gives a real variance: that of its real part plus that of its imaginary part.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4])?;
    /// assert_eq!(x.var((), 0.0, false)?.item::<f64>()?, 1.25);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn var(
        &self,
        dims: impl crate::IntoShape,
        correction: f64,
        keepdim: bool,
    ) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "var")?;
        let dims = &dims[..];
        float_or_complex(self, "var")?;
        let ds = norm_dims(Some(dims), self.dim(), "var")?;
        // the count in f64, as in `mean` (its integer product may overflow for an empty input)
        let n: f64 = ds.iter().map(|&d| self.shape()[d] as f64).product();
        let dl: Vec<i64> = ds.iter().map(|&d| d as i64).collect();
        let dof = (n - correction).max(0.0);
        let out = {
            let _g = crate::autograd::no_grad();
            let d = self.sub(&self.mean(&dl, true, None)?)?;
            // complex: |d|^2, real (PyTorch adds the variances of the real and imaginary parts)
            let sq = if d.dtype().is_complex() {
                let m = d.abs()?;
                m.mul(&m)?
            } else {
                d.mul(&d)?
            };
            let s = if self.dim() == 0 {
                sq
            } else {
                sq.sum_dims(&dl, keepdim)?
            };
            s.div(dof)?
        };
        if crate::autograd::is_grad_enabled() && self.requires_grad() {
            crate::autograd::record(
                &[&out],
                &[self],
                || vec![crate::autograd::SavedTensor::input(self)],
                VarBackward {
                    dims: ds,
                    keepdim,
                    dof,
                    all: dims.is_empty() || self.dim() == 0,
                },
            )?;
        }
        Ok(out)
    }

    /// Standard deviation over `dims` with `correction`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0], &[2])?;
    /// assert_eq!(x.std((), 0.0, false)?.item::<f64>()?, 1.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn std(
        &self,
        dims: impl crate::IntoShape,
        correction: f64,
        keepdim: bool,
    ) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "std")?;
        let dims = &dims[..];
        let v = self.var(dims, correction, keepdim)?;
        sqrt_of(&v)
    }

    /// `log(sum(exp(x)))` over `dims`, computed stably (max-shifted).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1000.0f64, 1000.0], &[2])?;
    /// let r = x.logsumexp(&[0], false)?.item::<f64>()?;
    /// assert!((r - (1000.0 + 2f64.ln())).abs() < 1e-9);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn logsumexp(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "logsumexp")?;
        let dims = &dims[..];
        let ds = norm_dims(Some(dims), self.dim(), "logsumexp")?;
        let dt = if self.dtype().is_float() || self.dtype().is_complex() {
            self.dtype()
        } else {
            DType::F32
        };
        if !keepdim && dims.is_empty() && self.dim() > 0 && self.numel() > 0 {
            // PyTorch reduces `dims = []` (all dims) to a 0-dim result, then adds its
            // keepdim-shaped max in place into it (any dtype): that write fails
            bail!(
                ShapeMismatch,
                "logsumexp",
                "output with shape [] doesn't match the broadcast shape {:?}",
                vec![1; self.dim()]
            );
        }
        if dt.is_complex() && self.numel() > 0 {
            let out = {
                let _g = crate::autograd::no_grad();
                logsumexp_complex(self, &ds, keepdim)?
            };
            if crate::autograd::is_grad_enabled() && self.requires_grad() {
                crate::autograd::record(
                    &[&out],
                    &[self],
                    || {
                        vec![
                            crate::autograd::SavedTensor::input(self),
                            crate::autograd::SavedTensor::output(&out, 0),
                        ]
                    },
                    LogsumexpComplexBackward { dims: ds, keepdim },
                )?;
            }
            return Ok(out);
        }
        let rw = rows(self, &ds, "logsumexp")?;
        let g = crate::autograd::no_grad();
        // in f64 first: the backward weights use the unrounded result
        let v = reduce_to(self, &rw, DType::F64, ReduceOp::Logsumexp, "logsumexp")?;
        let out = crate::ops::util::fresh_output(&v.to_dtype(dt)?, rw.shape(keepdim))?;
        drop(g);
        record_weighted(
            &out,
            self,
            "LogsumexpBackward0",
            &rw,
            keepdim,
            Exact::Logsumexp,
            || {
                let _g = crate::autograd::no_grad();
                if self.numel() == 0 {
                    // no element to weigh (and no complex row kernel needed)
                    return Tensor::zeros(&self.shape(), dt);
                }
                row_map(self, Some(&v), &rw, dt, RowOp::ExpShift, "logsumexp")
            },
        )?;
        Ok(out)
    }

    /// Vector norm over `dims` (empty = all), e.g. `NormOrd::L2` (= Frobenius) or any
    /// `NormOrd::P(p)`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, NormOrd};
    /// let x = Tensor::from_vec(vec![3.0f64, -4.0, 0.0], &[3])?;
    /// assert_eq!(x.norm(NormOrd::L2, (), false)?.item::<f64>()?, 5.0);
    /// assert_eq!(x.norm(NormOrd::L1, (), false)?.item::<f64>()?, 7.0);
    /// assert_eq!(x.norm(NormOrd::P(0.0), (), false)?.item::<f64>()?, 2.0);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn norm(&self, ord: NormOrd, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "norm")?;
        let dims = &dims[..];
        let ord = ord.canonical();
        if self.dtype().is_complex() {
            // the norm of the magnitudes (real); `abs`'s backward gives the `sgn(z)` factor
            return self.abs()?.norm(ord, dims, keepdim);
        }
        float_only(self, "norm")?;
        let ds = norm_dims(Some(dims), self.dim(), "norm")?;
        no_identity_check(self, ord, dims.is_empty(), &ds)?;
        let dt = self.dtype();
        let rw = rows(self, &ds, "norm")?;
        let g = crate::autograd::no_grad();
        // in f64 first: the backward weights use the unrounded result
        let v = reduce_to(self, &rw, DType::F64, ReduceOp::Norm(ord), "norm")?;
        let out = crate::ops::util::fresh_output(&v.to_dtype(dt)?, rw.shape(keepdim))?;
        drop(g);
        if ord == NormOrd::P(0.0) {
            crate::autograd::record(&[&out], &[self], Vec::new, NormZeroBackward)?;
            return Ok(out);
        }
        let exact = match ord {
            NormOrd::L2 => Exact::NormL2,
            NormOrd::P(p) => Exact::NormP(p),
            _ => Exact::Linked,
        };
        record_weighted(&out, self, "NormBackward1", &rw, keepdim, exact, || {
            let _g = crate::autograd::no_grad();
            match ord {
                NormOrd::P(p) => norm_p_weight(self, &unsqueeze_dims(&out, &rw.dims, keepdim)?, p),
                _ => row_map(self, Some(&v), &rw, dt, RowOp::NormWeights(ord), "norm"),
            }
        })?;
        Ok(out)
    }

    /// True (bool tensor) where every element over `dims` is non-zero; uint8 input gives uint8.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 0, 2, 3], &[2, 2])?;
    /// assert_eq!(x.all(&[1], false)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn all(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "all")?;
        let dims = &dims[..];
        logical(self, dims, keepdim, true)
    }

    /// True where any element over `dims` is non-zero; uint8 input gives uint8.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f32, 0.0, 2.0, 0.0], &[2, 2])?;
    /// assert_eq!(x.any(&[1], false)?.to_vec::<bool>()?, vec![false, true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn any(&self, dims: impl crate::IntoShape, keepdim: bool) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "any")?;
        let dims = &dims[..];
        logical(self, dims, keepdim, false)
    }
}

/// Complex `logsumexp`'s backward, PyTorch's `logsumexp_backward`: `g conj(exp(x - out))` from
/// the saved input and result (built from differentiable ops).
struct LogsumexpComplexBackward {
    dims: Vec<usize>,
    keepdim: bool,
}

backward!(
    LogsumexpComplexBackward,
    "LogsumexpBackward0",
    |self, ctx, g: Tensor| {
        let (x, out) = (&ctx.saved[0], &ctx.saved[1]);
        let g = unsqueeze_dims(&g, &self.dims, self.keepdim)?;
        let out = unsqueeze_dims(out, &self.dims, self.keepdim)?;
        input_grad(g.mul(&x.sub(&out)?.exp()?.conj_if_complex()?)?)
    }
);

/// Complex `logsumexp` as PyTorch computes it: shifted by the largest real part per row (0
/// where that is infinite), `log(sum(exp(x - m))) + m` (run without recording; the backward
/// is [`LogsumexpComplexBackward`]).
fn logsumexp_complex(x: &Tensor, ds: &[usize], keepdim: bool) -> Result<Tensor> {
    let dl: Vec<i64> = ds.iter().map(|&d| d as i64).collect();
    let shift = |keep: bool| -> Result<Tensor> {
        let _g = crate::autograd::no_grad();
        let re = match x.dtype() {
            DType::C64 => unary_map::<crate::dtype::C64, f32>(x, |z| z.re)?,
            _ => unary_map::<crate::dtype::C128, f64>(x, |z| z.re)?,
        };
        let m = re.amax(&dl, keep)?;
        Tensor::where_(&m.abs()?.eq(f64::INFINITY)?, 0.0, &m)
    };
    let s = x.sub(&shift(true)?)?.exp()?;
    let s = if x.dim() == 0 {
        s
    } else {
        s.sum_dims(&dl, keepdim)?
    };
    s.log()?.add(&shift(keepdim)?)
}

fn logical(x: &Tensor, dims: &[i64], keepdim: bool, all: bool) -> Result<Tensor> {
    let op = if all { "all" } else { "any" };
    let ds = norm_dims(Some(dims), x.dim(), op)?;
    let rw = rows(x, &ds, op)?;
    let dt = if x.dtype() == DType::U8 {
        DType::U8
    } else {
        DType::Bool
    };
    let rop = if all { ReduceOp::All } else { ReduceOp::Any };
    let _g = crate::autograd::no_grad();
    let out = reduce_to(x, &rw, dt, rop, op)?;
    crate::ops::util::fresh_output(&out, rw.shape(keepdim))
}

/// `var`'s backward, PyTorch's `var_backward`: `(2 / dof) g (x - mean(x))`, with `g`
/// re-expanded over the reduced dims (not through the mean, whose gradient share is zero).
struct VarBackward {
    dims: Vec<usize>,
    keepdim: bool,
    dof: f64,
    /// Reduced over all dims without naming them (PyTorch's `dim=None` branch).
    all: bool,
}

backward!(VarBackward, "VarBackward0", |self, ctx, g: Tensor| {
    let x = &ctx.saved[0];
    let g = unsqueeze_dims(&g, &self.dims, self.keepdim)?;
    let dl: Vec<i64> = self.dims.iter().map(|&d| d as i64).collect();
    if self.all && self.dof <= 0.0 {
        // PyTorch (no dims): `g * where(x == mean(x), nan, inf)`, a mask of the input (not
        // differentiable: only `g` carries a graph)
        let f = {
            let _ng = crate::autograd::no_grad();
            let x = x.detach();
            let same = x.eq(&x.mean(&dl, true, None)?)?;
            // real, as PyTorch's `where` of two scalars: a complex input's gradient is then
            // `nan + 0i` once cast back
            let inf = Tensor::full(&same.shape(), f64::INFINITY, x.dtype().to_real())?;
            Tensor::where_(&same, f64::NAN, &inf)?
        };
        return input_grad(g.mul(&f)?);
    }
    let d = x.sub(&x.mean(&dl, true, None)?)?;
    input_grad(g.mul(2.0 / self.dof)?.mul(&d)?)
});

/// Square root used by `std`, with backward `g / (2 * out)` (rebuilt from the saved output
/// under `create_graph`).
fn sqrt_of(v: &Tensor) -> Result<Tensor> {
    // in f64 then rounded, as a correctly rounded square root of every dtype
    let g = crate::autograd::no_grad();
    let s64 = v.detach().to_dtype(DType::F64)?.sqrt()?;
    let out = s64.to_dtype(v.dtype())?.contiguous()?;
    drop(g);
    if crate::autograd::is_grad_enabled() && v.requires_grad() {
        let w = {
            let _g = crate::autograd::no_grad();
            // 0.5 / sqrt(v) (a reciprocal scaled by a power of two), 0 where the std is 0
            // (PyTorch's std_backward masks it)
            let w = s64.reciprocal()?.mul(0.5)?;
            Tensor::where_(&s64.eq(0)?, 0.0, &w)?.to_dtype(v.dtype())?
        };
        crate::autograd::record(
            &[&out],
            &[v],
            || {
                vec![
                    crate::autograd::SavedTensor::input(v),
                    crate::autograd::SavedTensor::output(&out, 0),
                ]
            },
            crate::ops::reduce::util::WeightedBackward {
                name: "StdBackward0",
                w,
                dims: vec![],
                keepdim: true,
                exact: Exact::Sqrt,
            },
        )?;
    }
    Ok(out)
}
