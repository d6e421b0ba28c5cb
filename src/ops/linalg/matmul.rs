//! Linear algebra products: `mm`, `bmm`, `dot` (with their backward), and the compositions
//! `matmul` (torch.matmul's 1-D/2-D/batched-broadcast rules), `addmm` and `outer`.
//! The kernel is the backend's batched matmul ([`Backend::bmm`](crate::backend)); f16/bf16 are
//! multiplied in f32.

use crate::autograd::{SavedTensor, record};
use crate::layout::broadcast_shapes;
use crate::ops::grad::{backward, grads};
use crate::{DType, Result, Scalar, Tensor, bail};

/// `out[b] = a[b] @ b[b]` for 3-D `a` `[B,m,k]`, `b` `[B,k,n]` of equal dtype; no autograd.
fn bmm_raw(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let dt = a.dtype();
    if matches!(dt, DType::F16 | DType::BF16) {
        let _g = crate::autograd::no_grad();
        return bmm_raw(&a.to_dtype(DType::F32)?, &b.to_dtype(DType::F32)?)?.to_dtype(dt);
    }
    let (sa, sb) = (a.shape(), b.shape());
    let (bs, m, n) = (sa[0], sa[1], sb[2]);
    // the kernel writes every element (zeros when k == 0), so a recycled block is fine
    let out = Tensor::empty_strided(&[bs, m, n], &[m * n, n, 1], dt)?;
    crate::backend::bmm(&out.data(), &a.data(), &b.data(), dt);
    Ok(out)
}

fn mm_raw(a: &Tensor, b: &Tensor) -> Result<Tensor> {
    let _g = crate::autograd::no_grad();
    let r = bmm_raw(&a.unsqueeze(0)?, &b.unsqueeze(0)?)?;
    let s = r.shape();
    crate::ops::util::fresh_output(&r, &s[1..])
}

/// `x.mm(y).t()`: while a graph is being built, the differentiable composite; otherwise the
/// product's storage laid out column-major as a fresh tensor (not a view), so `AccumulateGrad`
/// can keep it without a copy.
fn mm_t(x: &Tensor, y: &Tensor) -> Result<Tensor> {
    if crate::autograd::is_grad_enabled() {
        return x.mm(y)?.t();
    }
    let r = mm_raw(x, y)?;
    let (s, d) = (r.shape(), r.data());
    let layout = crate::layout::Layout::new(vec![s[1], s[0]], vec![1, s[1]], d.layout.offset());
    Ok(Tensor::from_parts(d.storage, layout, r.dtype()))
}

/// c10's lower-case scalar-type spelling used in PyTorch's mm messages.
fn c10_name(d: DType) -> String {
    match d {
        DType::F32 => "float".into(),
        DType::F64 => "double".into(),
        DType::I64 => "long int".into(),
        DType::I32 => "int".into(),
        _ => d.torch_scalar_name().to_lowercase(),
    }
}

/// PyTorch's CPU products have no bool kernel (`"addmm_impl_cpu_"`, `"bmm"`, `"dot"` not
/// implemented for 'Bool'); checked after the shapes, where its kernel lookup happens (`mm`
/// and `bmm` return before it for an empty result or an empty contraction: `work` false).
fn no_bool(a: &Tensor, work: bool, kernel: &str, op: &'static str) -> Result<()> {
    if a.dtype() == DType::Bool && work {
        bail!(
            DTypeMismatch,
            op,
            "\"{}\" not implemented for 'Bool'",
            kernel
        );
    }
    Ok(())
}

fn same_dtype(a: &Tensor, b: &Tensor, op: &'static str) -> Result<()> {
    if a.dtype() != b.dtype() {
        bail!(
            DTypeMismatch,
            op,
            "expected m1 and m2 to have the same dtype, but got: {} != {}",
            c10_name(a.dtype()),
            c10_name(b.dtype())
        );
    }
    Ok(())
}

/// Backward of `mm`/`bmm`: `grad @ b^H`, `a^H @ grad` (differentiable). Like PyTorch's
/// `mm_mat1_backward`/`mm_mat2_backward`, an `mm` input that was column-major (strides
/// `(1, rows)`, e.g. `weight.t()` in `linear`) gets its gradient computed as the transpose of a
/// row-major product, so it is column-major too (and the leaf's `.grad` contiguous).
struct MmBackward {
    name: &'static str,
    batched: bool,
    save_a: bool,
    save_b: bool,
    a_col_major: bool,
    b_col_major: bool,
}

/// PyTorch's column-major test on a 2-D input: `strides[0] == 1 && strides[1] == sizes[0]`.
fn col_major(t: &Tensor) -> bool {
    let (sh, st) = (t.shape(), t.strides());
    sh.len() == 2 && st[0] == 1 && st[1] == sh[0]
}

backward!(MmBackward, self.name, |self, ctx, g: Tensor| {
    let mut it = ctx.saved.iter();
    let a = if self.save_a { it.next() } else { None };
    let b = if self.save_b { it.next() } else { None };
    let tr = |t: &Tensor| -> Result<Tensor> {
        let t = t.conj_if_complex()?;
        if self.batched {
            t.transpose(1, 2)
        } else {
            t.t()
        }
    };
    let prod = |x: &Tensor, y: &Tensor| if self.batched { x.bmm(y) } else { x.mm(y) };
    let ga = match (ctx.needs(0), b) {
        (true, Some(b)) if self.a_col_major => Some(mm_t(&b.conj_if_complex()?, &g.t()?)?),
        (true, Some(b)) => Some(prod(&g, &tr(b)?)?),
        _ => None,
    };
    let gb = match (ctx.needs(1), a) {
        (true, Some(a)) if self.b_col_major => Some(mm_t(&g.t()?, &a.conj_if_complex()?)?),
        (true, Some(a)) => Some(prod(&tr(a)?, &g)?),
        _ => None,
    };
    grads([ga, gb])
});

fn record_mm(out: &Tensor, a: &Tensor, b: &Tensor, batched: bool) -> Result<()> {
    let (save_a, save_b) = (b.requires_grad(), a.requires_grad());
    record(
        &[out],
        &[a, b],
        || {
            let mut s = Vec::new();
            if save_a {
                s.push(SavedTensor::input(a));
            }
            if save_b {
                s.push(SavedTensor::input(b));
            }
            s
        },
        MmBackward {
            name: if batched {
                "BmmBackward0"
            } else {
                "MmBackward0"
            },
            batched,
            save_a,
            save_b,
            a_col_major: !batched && col_major(a),
            b_col_major: !batched && col_major(b),
        },
    )
}

struct DotBackward {
    save_a: bool,
    save_b: bool,
}

backward!(DotBackward, "DotBackward0", |self, ctx, g: Tensor| {
    let mut it = ctx.saved.iter();
    let a = if self.save_a { it.next() } else { None };
    let b = if self.save_b { it.next() } else { None };
    let ga = match (ctx.needs(0), b) {
        (true, Some(b)) => Some(b.conj_if_complex()?.mul(&g)?),
        _ => None,
    };
    let gb = match (ctx.needs(1), a) {
        (true, Some(a)) => Some(a.conj_if_complex()?.mul(&g)?),
        _ => None,
    };
    grads([ga, gb])
});

/// Backward of `matmul`'s matrix @ vector (PyTorch's `MvBackward0`): `outer(g, conj v)` for
/// the matrix, `conj(a)ᵀ @ g` (a matrix-vector product again) for the vector; both fresh
/// tensors. Saved: the matrix (if the vector needs a gradient), then the vector (if the matrix
/// does).
struct MvBackward {
    save_a: bool,
    save_v: bool,
}

backward!(MvBackward, "MvBackward0", |self, ctx, g: Tensor| {
    let mut it = ctx.saved.iter();
    let a = if self.save_a { it.next() } else { None };
    let v = if self.save_v { it.next() } else { None };
    let ga = match (ctx.needs(0), v) {
        (true, Some(v)) => Some(g.outer(&v.conj_if_complex()?)?),
        _ => None,
    };
    let gv = match (ctx.needs(1), a) {
        (true, Some(a)) => Some(a.conj_if_complex()?.t()?.matmul(&g)?),
        _ => None,
    };
    grads([ga, gv])
});

/// `matmul` of a matrix `[m, k]` and a vector `[k]` (PyTorch's `mv`): the product as `mm` with
/// the vector as a column (its checks and kernel), recorded as one node whose gradients are
/// fresh tensors, not views of a column.
fn mv(a: &Tensor, v: &Tensor, m: usize) -> Result<Tensor> {
    let out = {
        let _g = crate::autograd::no_grad();
        a.mm(&v.unsqueeze(1)?)?.unsafe_view(&[m as i64])?
    };
    let (save_a, save_v) = (v.requires_grad(), a.requires_grad());
    record(
        &[&out],
        &[a, v],
        || {
            let mut s = Vec::new();
            if save_a {
                s.push(SavedTensor::input(a));
            }
            if save_v {
                s.push(SavedTensor::input(v));
            }
            s
        },
        MvBackward { save_a, save_v },
    )?;
    Ok(out)
}

impl Tensor {
    /// Matrix product of two 2-D tensors of the same dtype.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(a.mm(&a)?.to_vec::<f32>()?, vec![7.0, 10.0, 15.0, 22.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn mm(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 2 {
            bail!(InvalidArgument, "mm", "self must be a matrix");
        }
        if other.dim() != 2 {
            bail!(InvalidArgument, "mm", "mat2 must be a matrix");
        }
        let (sa, sb) = (self.shape(), other.shape());
        if sa[1] != sb[0] {
            bail!(
                ShapeMismatch,
                "mm",
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                sa[0],
                sa[1],
                sb[0],
                sb[1]
            );
        }
        same_dtype(self, other, "mm")?;
        no_bool(
            self,
            sa[0] * sb[1] > 0 && sa[1] > 0,
            "addmm_impl_cpu_",
            "mm",
        )?;
        let out = mm_raw(self, other)?;
        record_mm(&out, self, other, false)?;
        Ok(out)
    }

    /// Batched matrix product of `[B,n,k]` and `[B,k,m]` tensors.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let a = Tensor::ones(&[3, 2, 4], DType::F64)?;
    /// let b = Tensor::ones(&[3, 4, 5], DType::F64)?;
    /// assert_eq!(a.bmm(&b)?.shape(), vec![3, 2, 5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bmm(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 3 || other.dim() != 3 {
            bail!(
                InvalidArgument,
                "bmm",
                "batch1 and batch2 must be 3D tensors"
            );
        }
        let (sa, sb) = (self.shape(), other.shape());
        if sa[0] != sb[0] || sa[2] != sb[1] {
            bail!(
                ShapeMismatch,
                "bmm",
                "Expected size for first two dimensions of batch2 tensor to be: [{}, {}] but got: [{}, {}].",
                sa[0],
                sa[2],
                sb[0],
                sb[1]
            );
        }
        same_dtype(self, other, "bmm")?;
        no_bool(self, sa[0] * sa[1] * sb[2] > 0 && sa[2] > 0, "bmm", "bmm")?;
        let out = bmm_raw(self, other)?;
        record_mm(&out, self, other, true)?;
        Ok(out)
    }

    /// Dot product of two 1-D tensors of the same dtype and length (0-dim result).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    /// assert_eq!(a.dot(&a)?.item::<i64>()?, 14);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dot(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || other.dim() != 1 {
            bail!(
                InvalidArgument,
                "dot",
                "1D tensors expected, but got {}D and {}D tensors",
                self.dim(),
                other.dim()
            );
        }
        if self.dtype() != other.dtype() {
            bail!(
                DTypeMismatch,
                "dot",
                "dot : expected both vectors to have same dtype, but found {} and {}",
                self.dtype().torch_scalar_name(),
                other.dtype().torch_scalar_name()
            );
        }
        let (n, m) = (self.numel(), other.numel());
        if n != m {
            bail!(
                ShapeMismatch,
                "dot",
                "inconsistent tensor size, expected tensor [{}] and src [{}] to have the same number of elements, but got {} and {} elements respectively",
                n,
                m,
                n,
                m
            );
        }
        no_bool(self, true, "dot", "dot")?;
        let out = {
            let _g = crate::autograd::no_grad();
            if let Some(v) = crate::backend::dot_dense(&self.data(), &other.data(), self.dtype()) {
                Tensor::full((), v, self.dtype())?
            } else if matches!(self.dtype(), DType::F32 | DType::F64) {
                // the vectorised product and the pairwise full sum (the per-op speed sweep's
                // `dot` of 2^20 f32: a [1, n] x [n, 1] GEMM took 78x PyTorch's time)
                self.mul(other)?.sum()?
            } else {
                mm_raw(&self.unsqueeze(0)?, &other.unsqueeze(1)?)?
                    .view(())?
                    .copy()?
            }
        };
        let (save_a, save_b) = (other.requires_grad(), self.requires_grad());
        record(
            &[&out],
            &[self, other],
            || {
                let mut s = Vec::new();
                if save_a {
                    s.push(SavedTensor::input(self));
                }
                if save_b {
                    s.push(SavedTensor::input(other));
                }
                s
            },
            DotBackward { save_a, save_b },
        )?;
        Ok(out)
    }

    /// `torch.matmul`: dot for 1-D @ 1-D, matrix-vector, vector-matrix, matrix product and
    /// batched products with broadcast batch dimensions (1-D operands are promoted to
    /// matrices and the added dimension removed).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let a = Tensor::ones(&[2, 1, 3, 4], DType::F32)?;
    /// let b = Tensor::ones(&[5, 4, 2], DType::F32)?;
    /// assert_eq!(a.matmul(&b)?.shape(), vec![2, 5, 3, 2]);
    /// let v = Tensor::ones(&[4], DType::F32)?;
    /// assert_eq!(a.matmul(&v)?.shape(), vec![2, 1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn matmul(&self, other: &Tensor) -> Result<Tensor> {
        if self.is_sparse() {
            return crate::sparse::matmul(self, other);
        }
        other.check_strided("matmul")?;
        let (da, db) = (self.dim(), other.dim());
        if da == 0 || db == 0 {
            bail!(
                InvalidArgument,
                "matmul",
                "both arguments to matmul need to be at least 1D, but they are {}D and {}D",
                da,
                db
            );
        }
        let (sa, sb) = (self.shape(), other.shape());
        match (da, db) {
            (1, 1) => return self.dot(other),
            (2, 1) => {
                if sa[1] != sb[0] {
                    bail!(
                        ShapeMismatch,
                        "matmul",
                        "size mismatch, got input ({}), mat ({}x{}), vec ({})",
                        sa[0],
                        sa[0],
                        sa[1],
                        sb[0]
                    );
                }
                return mv(self, other, sa[0]);
            }
            // PyTorch squeezes this result in place (its version is 1)
            (1, 2) => return self.unsqueeze(0)?.mm(other)?.squeeze_(Some(0)),
            (2, 2) => return self.mm(other),
            _ => {}
        }
        // batched: promote 1-D operands, broadcast batch dims, fold into bmm
        let a = if da == 1 {
            self.unsqueeze(0)?
        } else {
            self.clone()
        };
        let b = if db == 1 {
            other.unsqueeze(1)?
        } else {
            other.clone()
        };
        let (sa, sb) = (a.shape(), b.shape());
        let (n, k) = (sa[sa.len() - 2], sa[sa.len() - 1]);
        let (k2, p) = (sb[sb.len() - 2], sb[sb.len() - 1]);
        if k != k2 {
            bail!(
                ShapeMismatch,
                "matmul",
                "mat1 and mat2 shapes cannot be multiplied ({}x{} and {}x{})",
                sa[..sa.len() - 1].iter().product::<usize>(),
                k,
                k2,
                p
            );
        }
        let out = if b.dim() == 2 {
            // fold a's batch dims into rows: one big mm
            let rows = sa[..sa.len() - 1].iter().product::<usize>() as i64;
            let r = a.reshape(&[rows, k as i64])?.mm(&b)?;
            let mut shape: Vec<i64> = sa[..sa.len() - 1].iter().map(|&s| s as i64).collect();
            shape.push(p as i64);
            (r, shape)
        } else {
            let batch = broadcast_shapes(&sa[..sa.len() - 2], &sb[..sb.len() - 2], "matmul")?;
            let bn: usize = batch.iter().product();
            let mut ea: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
            let mut eb = ea.clone();
            ea.extend([n as i64, k as i64]);
            eb.extend([k as i64, p as i64]);
            let a3 = a.expand(&ea)?.reshape(&[bn as i64, n as i64, k as i64])?;
            let b3 = b.expand(&eb)?.reshape(&[bn as i64, k as i64, p as i64])?;
            let mut shape: Vec<i64> = batch.iter().map(|&s| s as i64).collect();
            shape.extend([n as i64, p as i64]);
            (a3.bmm(&b3)?, shape)
        };
        // drop the dims of promoted 1-D operands; the result is not a view (`_unsafe_view`)
        let (r, mut shape) = out;
        let nd = shape.len();
        if db == 1 {
            shape.remove(nd - 1);
        }
        if da == 1 {
            shape.remove(nd - 2);
        }
        r.unsafe_view(&shape)
    }

    /// `beta * self + alpha * (m1 @ m2)`; with `beta == 0` `self` is ignored (NaN/inf included).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let bias = Tensor::ones(&[2], DType::F64)?;
    /// let m = Tensor::eye(2, DType::F64)?;
    /// let r = bias.addmm(&m, &m, 0.5, 2.0)?;
    /// assert_eq!(r.to_vec::<f64>()?, vec![2.5, 0.5, 0.5, 2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn addmm(&self, m1: &Tensor, m2: &Tensor, beta: f64, alpha: f64) -> Result<Tensor> {
        let p = m1.mm(m2)?;
        broadcast_shapes(&self.shape(), &p.shape(), "addmm")?;
        if self.dim() > 2 || broadcast_shapes(&self.shape(), &p.shape(), "addmm")? != p.shape() {
            bail!(
                ShapeMismatch,
                "addmm",
                "The expanded size of the tensor ({:?}) must match the existing size ({:?})",
                p.shape(),
                self.shape()
            );
        }
        // an integral product reads `beta`/`alpha` in its own dtype (truncated toward zero,
        // PyTorch's `to<scalar_t>()`), so the result keeps the integral dtype
        let int = p.dtype().is_integral(true);
        let (beta, alpha) = if int {
            (beta.trunc(), alpha.trunc())
        } else {
            (beta, alpha)
        };
        let scalar = |v: f64| {
            if int {
                Scalar::Int(v as i64)
            } else {
                Scalar::Float(v)
            }
        };
        let p = if alpha != 1.0 {
            p.mul(scalar(alpha))?
        } else {
            p
        };
        if beta == 0.0 {
            if !(self.requires_grad() && crate::autograd::is_grad_enabled()) {
                return Ok(p);
            }
            // `self`'s values (NaN/inf included) are ignored, but it still gets PyTorch's
            // gradient `beta * g` (zeros): a zero term that keeps the edge
            let zero = self.mul(0.0)?.nan_to_num(0.0, Some(0.0), Some(0.0))?;
            return p.add(&zero);
        }
        let inp = if beta != 1.0 {
            self.mul(scalar(beta))?
        } else {
            self.clone()
        };
        inp.add(&p)
    }

    /// Outer product of two 1-D tensors (with type promotion): `out[i, j] = a[i] * b[j]`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// assert_eq!(a.outer(&a)?.to_vec::<f32>()?, vec![1.0, 2.0, 2.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn outer(&self, other: &Tensor) -> Result<Tensor> {
        if self.dim() != 1 || other.dim() != 1 {
            bail!(InvalidArgument, "outer", "outer: expected 1-D tensors");
        }
        self.unsqueeze(1)?.mul(&other.unsqueeze(0)?)
    }

    /// PyTorch's functional `linear`: `input @ weight.T + bias` with `weight` `[out, in]` (or
    /// 1-D `[in]`) and an optional `bias` broadcast over the output.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[1, 2])?;
    /// let w = Tensor::from_vec(vec![1.0f32, 0.0, 0.5, 0.5, -1.0, 1.0], &[3, 2])?;
    /// let b = Tensor::from_vec(vec![0.0f32, 1.0, 0.0], &[3])?;
    /// assert_eq!(Tensor::linear(&x, &w, Some(&b))?.to_vec::<f32>()?, vec![1.0, 2.5, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn linear(input: &Tensor, weight: &Tensor, bias: Option<&Tensor>) -> Result<Tensor> {
        if weight.dim() > 2 {
            bail!(
                InvalidArgument,
                "linear",
                "linear: weight must be 1-D or 2-D, got shape {:?}",
                weight.shape()
            );
        }
        let y = input.matmul(&weight.t()?)?;
        match bias {
            // PyTorch's fused paths (`addmm` for a 2-D input, the flattened `addmm` for a
            // contiguous 3-D input or a 1-D bias): a fresh result
            Some(b)
                if input.dim() == 2
                    || (input.is_contiguous() && (input.dim() == 3 || b.dim() == 1)) =>
            {
                y.add(b)
            }
            // otherwise `matmul` then `add_` in place (the result's version counts it)
            Some(b) => y.add_(b),
            None => Ok(y),
        }
    }
}
