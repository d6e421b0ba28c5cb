//! Neural-network functions: `softmax`, `log_softmax`, `nll_loss`, `cross_entropy` (class
//! indices or probabilities, weights, ignore_index, label smoothing), `mse_loss`, `l1_loss`,
//! `binary_cross_entropy_with_logits`, `dropout`, `embedding` (optionally with `padding_idx`),
//! `layer_norm`, with their option structs. Kernels compute in f64 and return the input dtype.

use crate::autograd::output_grad;
use std::sync::Arc;

use super::gather::{SKIP, cstrides, for_each_pos, put_add, take, take_with_grad_idx};
use crate::autograd::{Backward, BackwardCtx, SavedTensor, no_grad, record};
use crate::layout::wrap_dim;
use crate::{DType, Result, Tensor, bail};

/// How a loss reduces its per-element values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// Keep per-element losses.
    None,
    /// Mean (weighted mean for weighted class losses).
    #[default]
    Mean,
    /// Sum.
    Sum,
}

/// Options of [`Tensor::cross_entropy`].
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropyOptions<'a> {
    /// Per-class weight (shape `[C]`).
    pub weight: Option<&'a Tensor>,
    /// Class-index target value that is ignored (default -100).
    pub ignore_index: i64,
    /// Label smoothing in `[0, 1]`.
    pub label_smoothing: f64,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

impl Default for CrossEntropyOptions<'_> {
    fn default() -> Self {
        CrossEntropyOptions {
            weight: None,
            ignore_index: -100,
            label_smoothing: 0.0,
            reduction: Reduction::Mean,
        }
    }
}

/// Options of [`Tensor::nll_loss`].
#[derive(Clone, Copy, Debug)]
pub struct NllLossOptions<'a> {
    /// Per-class weight (shape `[C]`).
    pub weight: Option<&'a Tensor>,
    /// Ignored target value (default -100).
    pub ignore_index: i64,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

impl Default for NllLossOptions<'_> {
    fn default() -> Self {
        NllLossOptions {
            weight: None,
            ignore_index: -100,
            reduction: Reduction::Mean,
        }
    }
}

/// Options of [`Tensor::binary_cross_entropy_with_logits`].
#[derive(Clone, Copy, Debug, Default)]
pub struct BceWithLogitsOptions<'a> {
    /// Elementwise weight (broadcast).
    pub weight: Option<&'a Tensor>,
    /// Weight of positive examples (broadcast along the last dim); treated as a constant.
    pub pos_weight: Option<&'a Tensor>,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

pub(super) fn check_float(x: &Tensor, op: &'static str) -> Result<()> {
    if !x.dtype().is_float() {
        bail!(
            Unsupported,
            op,
            "\"{}\" not implemented for '{}'",
            op,
            x.dtype().torch_scalar_name()
        );
    }
    Ok(())
}

/// f64 tensor values -> tensor of `dtype` (no autograd).
pub(super) fn from_f64(v: Vec<f64>, shape: &[usize], dtype: DType) -> Result<Tensor> {
    let _g = no_grad();
    let t = Tensor::from_vec(v, shape)?;
    if dtype == DType::F64 {
        Ok(t)
    } else {
        t.to_dtype(dtype)
    }
}

/// (outer, n, inner) split of `shape` around `dim`.
fn split3(shape: &[usize], d: usize) -> (usize, usize, usize) {
    if shape.is_empty() {
        return (1, 1, 1);
    }
    (
        shape[..d].iter().product(),
        shape[d],
        shape[d + 1..].iter().product(),
    )
}

fn softmax_raw(x: &Tensor, d: usize, log: bool) -> Result<Tensor> {
    let shape = x.shape();
    let (outer, n, inner) = split3(&shape, d);
    let v = x.to_vec::<f64>()?;
    let mut out = vec![0.0; v.len()];
    for o in 0..outer {
        for i in 0..inner {
            let at = |k: usize| o * n * inner + k * inner + i;
            let m = (0..n).map(|k| v[at(k)]).fold(f64::NEG_INFINITY, f64::max);
            let m = if m.is_finite() {
                m
            } else if m.is_nan() {
                m
            } else {
                0.0
            };
            let s: f64 = (0..n).map(|k| (v[at(k)] - m).exp()).sum();
            for k in 0..n {
                out[at(k)] = if log {
                    v[at(k)] - m - s.ln()
                } else {
                    (v[at(k)] - m).exp() / s
                };
            }
        }
    }
    from_f64(out, &shape, x.dtype())
}

struct SoftmaxBackward {
    dim: usize,
    log: bool,
}

impl Backward for SoftmaxBackward {
    fn name(&self) -> &'static str {
        if self.log {
            "LogSoftmaxBackward0"
        } else {
            "SoftmaxBackward0"
        }
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let d = [self.dim as i64];
        let s = &ctx.saved[0];
        let r = if self.log {
            // saved: input x; grad = g - softmax(x) * sum(g)
            g.sub(&s.softmax(self.dim as i64)?.mul(&g.sum_dims(&d, true)?)?)?
        } else {
            // saved: output y; grad = y * (g - sum(g * y))
            let gy = g.mul(s)?;
            gy.sub(&s.mul(&gy.sum_dims(&d, true)?)?)?
        };
        Ok(smallvec::smallvec![Some(r)])
    }
}

fn softmax_impl(x: &Tensor, dim: i64, log: bool) -> Result<Tensor> {
    let op = if log { "log_softmax" } else { "softmax" };
    x.check_strided(op)?;
    check_float(x, op)?;
    let d = wrap_dim(dim, x.dim(), op)?;
    let out = {
        let _g = no_grad();
        softmax_raw(x, d, log)?
    };
    let saved = if log { x.clone() } else { out.clone() };
    record(
        &[&out],
        &[x],
        || {
            vec![if log {
                SavedTensor::input(&saved)
            } else {
                SavedTensor::output(&saved, 0)
            }]
        },
        SoftmaxBackward { dim: d, log },
    )?;
    Ok(out)
}

pub(super) fn reduce(l: Tensor, r: Reduction) -> Result<Tensor> {
    match r {
        Reduction::None => Ok(l),
        Reduction::Sum => l.sum(),
        Reduction::Mean => {
            let n = l.numel() as f64;
            l.sum()?.div(n)
        }
    }
}

/// Validated class-target geometry: flat input index per target (SKIP if ignored) and weight.
struct Picks {
    idx: Vec<usize>,
    w: Vec<f64>,
    tshape: Vec<usize>,
}

fn class_picks(
    input: &Tensor,
    target: &Tensor,
    weight: Option<&Tensor>,
    ignore: i64,
    op: &'static str,
) -> Result<Picks> {
    let ish = input.shape();
    if ish.is_empty() {
        bail!(InvalidArgument, op, "input tensor should be 1D or more");
    }
    if target.dtype() != DType::I64 {
        bail!(
            DTypeMismatch,
            op,
            "expected scalar type Long but found {}",
            target.dtype().torch_scalar_name()
        );
    }
    let cd = if ish.len() == 1 { 0 } else { 1 };
    let c = ish[cd];
    let mut expect = ish.clone();
    expect.remove(cd);
    let tsh = target.shape();
    if tsh != expect {
        bail!(
            ShapeMismatch,
            op,
            "Expected target of shape {:?} for input of shape {:?}, got {:?}",
            expect,
            ish,
            tsh
        );
    }
    let wv = match weight {
        Some(w) => {
            if w.shape() != [c] {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight tensor should be defined either for all {} classes or no classes but got weight tensor of shape: {:?}",
                    c,
                    w.shape()
                );
            }
            w.to_vec::<f64>()?
        }
        None => vec![1.0; c],
    };
    let tv = target.to_vec::<i64>()?;
    let st = cstrides(&ish);
    let mut idx = Vec::with_capacity(tv.len());
    let mut w = Vec::with_capacity(tv.len());
    let mut bad = None;
    for_each_pos(&tsh, |flat, pos| {
        let t = tv[flat];
        if t == ignore {
            idx.push(SKIP);
            w.push(0.0);
            return;
        }
        if t < 0 || t as usize >= c {
            bad.get_or_insert(t);
            return;
        }
        let mut f = t as usize * st[cd];
        for (k, &p) in pos.iter().enumerate() {
            let id = if k < cd { k } else { k + 1 };
            f += p * st[id];
        }
        idx.push(f);
        w.push(wv[t as usize]);
    });
    if let Some(t) = bad {
        bail!(IndexOutOfRange, op, "Target {} is out of bounds.", t);
    }
    Ok(Picks {
        idx,
        w,
        tshape: tsh,
    })
}

struct NllLossBackward {
    idx: Arc<Vec<usize>>,
    coef: Tensor,
    in_shape: Vec<usize>,
}

impl Backward for NllLossBackward {
    fn name(&self) -> &'static str {
        "NllLossBackward0"
    }
    fn apply(
        &self,
        _: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let gi = g.mul(&self.coef)?;
        Ok(smallvec::smallvec![Some(put_add(
            &gi,
            self.idx.clone(),
            &self.in_shape
        )?)])
    }
}

fn nll_impl(input: &Tensor, p: Picks, reduction: Reduction) -> Result<Tensor> {
    let xv = input.to_vec::<f64>()?;
    let vals: Vec<f64> = p
        .idx
        .iter()
        .zip(&p.w)
        .map(|(&i, &w)| if i == SKIP { 0.0 } else { -w * xv[i] })
        .collect();
    let wsum: f64 = p.w.iter().sum();
    let dt = input.dtype();
    let (out, coef) = match reduction {
        Reduction::None => (
            from_f64(vals, &p.tshape, dt)?,
            from_f64(p.w.iter().map(|w| -w).collect(), &p.tshape, dt)?,
        ),
        Reduction::Sum => (
            from_f64(vec![vals.iter().sum()], &[], dt)?,
            from_f64(p.w.iter().map(|w| -w).collect(), &p.tshape, dt)?,
        ),
        Reduction::Mean => (
            from_f64(vec![vals.iter().sum::<f64>() / wsum], &[], dt)?,
            from_f64(p.w.iter().map(|w| -w / wsum).collect(), &p.tshape, dt)?,
        ),
    };
    record(
        &[&out],
        &[input],
        Vec::new,
        NllLossBackward {
            idx: Arc::new(p.idx),
            coef,
            in_shape: input.shape(),
        },
    )?;
    Ok(out)
}

struct RsqrtBackward;

impl Backward for RsqrtBackward {
    fn name(&self) -> &'static str {
        "RsqrtBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let y = &ctx.saved[0];
        Ok(smallvec::smallvec![Some(
            g.mul(&y.mul(y)?.mul(y)?)?.mul(-0.5)?
        )])
    }
}

fn rsqrt(x: &Tensor) -> Result<Tensor> {
    let v: Vec<f64> = x.to_vec::<f64>()?.iter().map(|a| 1.0 / a.sqrt()).collect();
    let out = from_f64(v, &x.shape(), x.dtype())?;
    record(
        &[&out],
        &[x],
        || vec![SavedTensor::output(&out, 0)],
        RsqrtBackward,
    )?;
    Ok(out)
}

impl Tensor {
    /// Softmax along `dim` (numerically stable).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0], &[2])?;
    /// assert_eq!(x.softmax(0)?.to_vec::<f64>()?, vec![0.5, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn softmax(&self, dim: i64) -> Result<Tensor> {
        softmax_impl(self, dim, false)
    }

    /// Log-softmax along `dim` (numerically stable).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1000.0f64, 1000.0], &[2])?;
    /// assert!((x.log_softmax(0)?.to_vec::<f64>()?[0] + 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn log_softmax(&self, dim: i64) -> Result<Tensor> {
        softmax_impl(self, dim, true)
    }

    /// Negative log-likelihood of log-probabilities `self` (`[C]`, `[N, C]` or `[N, C, d..]`)
    /// at i64 class `target`; mean divides by the summed weights of non-ignored targets.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let lp = Tensor::from_vec(vec![-1.0f32, -2.0, -3.0, -4.0], &[2, 2])?;
    /// let y = Tensor::from_vec(vec![1i64, 0], &[2])?;
    /// assert_eq!(lp.nll_loss(&y, Default::default())?.item::<f32>()?, 2.5);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nll_loss(&self, target: &Tensor, opts: NllLossOptions<'_>) -> Result<Tensor> {
        check_float(self, "nll_loss")?;
        let p = class_picks(self, target, opts.weight, opts.ignore_index, "nll_loss")?;
        nll_impl(self, p, opts.reduction)
    }

    /// Cross entropy of logits `self` with i64 class targets or float class-probability targets
    /// (same shape as `self`): `log_softmax` over dim 1 (dim 0 for 1-D input) + NLL, with
    /// optional label smoothing `(1-ε)·nll + ε/C·smooth`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![0.0f64, 0.0], &[1, 2])?;
    /// let y = Tensor::from_vec(vec![1i64], &[1])?;
    /// let l = x.cross_entropy(&y, Default::default())?.item::<f64>()?;
    /// assert!((l - 2f64.ln()).abs() < 1e-12);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cross_entropy(&self, target: &Tensor, opts: CrossEntropyOptions<'_>) -> Result<Tensor> {
        let op = "cross_entropy";
        check_float(self, op)?;
        if self.dim() == 0 {
            bail!(InvalidArgument, op, "input tensor should be 1D or more");
        }
        let eps = opts.label_smoothing;
        if !(0.0..=1.0).contains(&eps) {
            bail!(
                InvalidArgument,
                op,
                "label_smoothing must be between 0.0 and 1.0. Got: {}",
                eps
            );
        }
        let cd: i64 = if self.dim() == 1 { 0 } else { 1 };
        let c = self.shape()[cd as usize];
        // weight broadcast along the class dim
        let wview = |w: &Tensor| -> Result<Tensor> {
            let mut s = vec![1i64; self.dim()];
            s[cd as usize] = c as i64;
            w.to_dtype(self.dtype())?.view(&s)
        };
        if target.dtype().is_float() {
            if target.shape() != self.shape() {
                bail!(
                    ShapeMismatch,
                    op,
                    "Expected target size {:?}, got {:?}",
                    self.shape(),
                    target.shape()
                );
            }
            if let Some(w) = opts.weight
                && w.shape() != [c]
            {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight tensor should be defined for all {} classes",
                    c
                );
            }
            let lp = self.log_softmax(cd)?;
            let t = if eps > 0.0 {
                target.mul(1.0 - eps)?.add(eps / c as f64)?
            } else {
                target.clone()
            };
            let mut prod = lp.mul(&t)?;
            if let Some(w) = opts.weight {
                prod = prod.mul(&wview(w)?)?;
            }
            let per = prod.sum_dims(&[cd], false)?.neg()?;
            return match opts.reduction {
                Reduction::None => Ok(per),
                Reduction::Sum => per.sum(),
                Reduction::Mean => {
                    let n = (self.numel() / c.max(1)) as f64;
                    per.sum()?.div(n)
                }
            };
        }
        let p = class_picks(self, target, opts.weight, opts.ignore_index, op)?;
        let lp = self.log_softmax(cd)?;
        let keep: Vec<f64> = p
            .idx
            .iter()
            .map(|&i| if i == SKIP { 0.0 } else { 1.0 })
            .collect();
        let wsum: f64 = p.w.iter().sum();
        let tshape = p.tshape.clone();
        let nll = nll_impl(&lp, p, opts.reduction)?;
        if eps == 0.0 {
            return Ok(nll);
        }
        let mut wl = lp.clone();
        if let Some(w) = opts.weight {
            wl = wl.mul(&wview(w)?)?;
        }
        let mask = from_f64(keep.clone(), &tshape, self.dtype())?;
        let smooth = wl.sum_dims(&[cd], false)?.neg()?.mul(&mask)?;
        let smooth = match opts.reduction {
            Reduction::None => smooth,
            Reduction::Sum => smooth.sum()?,
            Reduction::Mean => {
                let denom = if opts.weight.is_some() {
                    wsum
                } else {
                    keep.iter().sum()
                };
                smooth.sum()?.div(denom)?
            }
        };
        nll.mul(1.0 - eps)?.add(&smooth.mul(eps / c as f64)?)
    }

    /// Dropout: in training, zeroes each element with probability `p` (global seeded RNG) and
    /// scales the rest by `1/(1-p)`; identity when `train` is false.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[4], DType::F32)?;
    /// assert_eq!(x.dropout(0.5, false)?.to_vec::<f32>()?, vec![1.0; 4]);
    /// let v = x.dropout(0.5, true)?.to_vec::<f32>()?;
    /// assert!(v.iter().all(|&a| a == 0.0 || a == 2.0));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dropout(&self, p: f64, train: bool) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            bail!(
                InvalidArgument,
                "dropout",
                "dropout probability has to be between 0 and 1, but got {}",
                p
            );
        }
        if !train || p == 0.0 {
            return self.mul(1.0);
        }
        let n = self.numel();
        let scale = if p == 1.0 { 0.0 } else { 1.0 / (1.0 - p) };
        let m: Vec<f64> = crate::tensor::with_rng(|r| {
            use rand::Rng;
            (0..n)
                .map(|_| if r.r#gen::<f64>() >= p { scale } else { 0.0 })
                .collect()
        });
        let mask = from_f64(m, &self.shape(), self.dtype())?;
        self.mul(&mask)
    }

    /// Embedding lookup: rows of `weight` (`[V, D]`) at i64 `indices` (any shape).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let w = Tensor::arange(0, 6, 1)?.view(&[3, 2])?;
    /// let i = Tensor::from_vec(vec![2i64, 0], &[2])?;
    /// assert_eq!(Tensor::embedding(&i, &w)?.to_vec::<i64>()?, vec![4, 5, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn embedding(indices: &Tensor, weight: &Tensor) -> Result<Tensor> {
        Tensor::embedding_with(indices, weight, None)
    }

    /// Embedding lookup with an optional `padding_idx`, like
    /// `torch.nn.functional.embedding(indices, weight, padding_idx)`: the forward is the plain
    /// lookup (the padding row is returned as it is), but positions that look up row
    /// `padding_idx` contribute no gradient, so that row's gradient is zero. A negative
    /// `padding_idx` counts from the end (`padding_idx + V`); one outside `[-V, V)` is an
    /// `InvalidArgument` error ("Padding_idx must be within num_embeddings").
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let w = Tensor::ones(&[3, 2], DType::F64)?.requires_grad_(true)?;
    /// let i = Tensor::from_vec(vec![0i64, 2, 0, 1], &[4])?;
    /// let y = Tensor::embedding_with(&i, &w, Some(0))?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![1.0; 8]); // forward unchanged
    /// y.sum()?.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn embedding_with(
        indices: &Tensor,
        weight: &Tensor,
        padding_idx: Option<i64>,
    ) -> Result<Tensor> {
        let op = "embedding";
        if weight.dim() != 2 {
            bail!(
                InvalidArgument,
                op,
                "'weight' must be 2-D, got a weight of shape {:?}",
                weight.shape()
            );
        }
        let (v, d) = (weight.shape()[0], weight.shape()[1]);
        let pad = match padding_idx {
            Some(p) => Some(wrap_padding_idx(p, v, op)?),
            None => None,
        };
        let iv = super::gather::index_values(indices, op, true)?;
        let mut idx = Vec::with_capacity(iv.len() * d);
        for &i in &iv {
            if i < 0 || i as usize >= v {
                bail!(
                    IndexOutOfRange,
                    op,
                    "index out of range in self: index {} for a weight of {} rows",
                    i,
                    v
                );
            }
            idx.extend((0..d).map(|k| i as usize * d + k));
        }
        let mut sh = indices.shape();
        sh.push(d);
        let name = "EmbeddingBackward0";
        match pad {
            None => take(weight, Arc::new(idx), &sh, name),
            Some(p) => {
                let grad_idx: Vec<usize> = iv
                    .iter()
                    .flat_map(|&i| {
                        let skip = i as usize == p;
                        (0..d).map(move |k| if skip { SKIP } else { i as usize * d + k })
                    })
                    .collect();
                take_with_grad_idx(weight, Arc::new(idx), Arc::new(grad_idx), &sh, name)
            }
        }
    }

    /// Layer normalisation over the trailing `normalized_shape` dims, with optional affine
    /// `weight`/`bias` (biased variance, `eps` inside the square root).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f64, 3.0], &[1, 2])?;
    /// let y = x.layer_norm(&[2], None, None, 0.0)?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn layer_norm(
        &self,
        normalized_shape: &[usize],
        weight: Option<&Tensor>,
        bias: Option<&Tensor>,
        eps: f64,
    ) -> Result<Tensor> {
        let op = "layer_norm";
        check_float(self, op)?;
        let sh = self.shape();
        let k = normalized_shape.len();
        if k == 0 || k > sh.len() || sh[sh.len() - k..] != *normalized_shape {
            bail!(
                ShapeMismatch,
                op,
                "Given normalized_shape={:?}, expected input with shape [*, {:?}], but got input of size {:?}",
                normalized_shape,
                normalized_shape,
                sh
            );
        }
        for t in [weight, bias].into_iter().flatten() {
            if t.shape() != normalized_shape {
                bail!(
                    ShapeMismatch,
                    op,
                    "weight/bias of shape {:?} do not match normalized_shape {:?}",
                    t.shape(),
                    normalized_shape
                );
            }
        }
        let dims: Vec<i64> = (sh.len() - k..sh.len()).map(|d| d as i64).collect();
        let n: usize = normalized_shape.iter().product();
        let mean = self.sum_dims(&dims, true)?.div(n as f64)?;
        let xc = self.sub(&mean)?;
        let var = xc.mul(&xc)?.sum_dims(&dims, true)?.div(n as f64)?;
        let mut y = xc.mul(&rsqrt(&var.add(eps)?)?)?;
        if let Some(w) = weight {
            y = y.mul(w)?;
        }
        if let Some(b) = bias {
            y = y.add(b)?;
        }
        Ok(y)
    }
}

/// `padding_idx` of a table with `num_embeddings` rows as a row number, PyTorch's rule: a
/// negative value counts from the end, and one outside `[-num_embeddings, num_embeddings)` is
/// an `InvalidArgument` error (`0` is always accepted, as in PyTorch).
pub(crate) fn wrap_padding_idx(
    padding_idx: i64,
    num_embeddings: usize,
    op: &'static str,
) -> Result<usize> {
    let n = i64::try_from(num_embeddings).unwrap_or(i64::MAX);
    if padding_idx >= n.max(1) || padding_idx < -n {
        bail!(
            InvalidArgument,
            op,
            "Padding_idx must be within num_embeddings: padding_idx {} for {} embeddings",
            padding_idx,
            num_embeddings
        );
    }
    Ok(if padding_idx < 0 {
        (padding_idx + n) as usize
    } else {
        padding_idx as usize
    })
}
