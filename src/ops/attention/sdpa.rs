//! `scaled_dot_product_attention`: `softmax(q k^T * scale + bias) v` with PyTorch 2.15's
//! semantics (boolean mask `true` = attend, additive float mask, top-left causal mask,
//! `1/sqrt(E)` default scale, dropout on the weights, grouped-query heads with
//! `enable_gqa`). A row with every key masked out gives zeros (PyTorch's CPU kernel) rather
//! than the NaN of a plain softmax, and passes no gradient back.

use crate::autograd::{is_grad_enabled, no_grad};
use crate::backend::{AttnGeom, attention};
use crate::{DType, Result, Tensor, bail};

const OP: &str = "scaled_dot_product_attention";

/// Options of [`Tensor::scaled_dot_product_attention`] (PyTorch's keywords).
#[derive(Clone, Copy, Debug, Default)]
pub struct SdpaOptions<'a> {
    /// Boolean mask (`true` = take part in attention) or additive float mask, broadcastable
    /// to `[..., L, S]`.
    pub attn_mask: Option<&'a Tensor>,
    /// Dropout probability on the attention weights (applied whenever `> 0`, as PyTorch).
    pub dropout_p: f64,
    /// Causal (top-left aligned lower-triangular) mask; exclusive with `attn_mask`.
    pub is_causal: bool,
    /// Scale of `q k^T` (default `1/sqrt(E)`).
    pub scale: Option<f64>,
    /// Let `q` have a multiple of `k`/`v`'s heads (dim -3); each `k`/`v` head then serves a
    /// group of consecutive query heads.
    pub enable_gqa: bool,
}

/// `x` with its dim -3 repeated `n` times per entry (`repeat_interleave(n, dim=-3)`).
fn repeat_heads(x: &Tensor, n: usize) -> Result<Tensor> {
    let s = x.shape();
    let d = s.len();
    let mut e: Vec<i64> = s.iter().map(|&v| v as i64).collect();
    e.insert(d - 2, n as i64);
    let mut r: Vec<i64> = s.iter().map(|&v| v as i64).collect();
    r[d - 3] *= n as i64;
    x.unsqueeze(d as i64 - 2)?.expand(&e)?.reshape(&r)
}

fn check(q: &Tensor, k: &Tensor, v: &Tensor, o: &SdpaOptions<'_>) -> Result<()> {
    for t in [q, k, v] {
        t.check_strided(OP)?;
    }
    if q.dim() < 2 || k.dim() < 2 || v.dim() < 2 {
        bail!(
            InvalidArgument,
            OP,
            "Expected query, key, and value to all be  at least 2 dimensional, but got query.dim: {} key.dim: {} and value.dim: {} instead.",
            q.dim(),
            k.dim(),
            v.dim()
        );
    }
    if q.dtype() != k.dtype() || q.dtype() != v.dtype() {
        bail!(
            DTypeMismatch,
            OP,
            "Expected query, key, and value to have the same dtype, but got query.dtype: {} key.dtype: {} and value.dtype: {} instead.",
            q.dtype().torch_scalar_name(),
            k.dtype().torch_scalar_name(),
            v.dtype().torch_scalar_name()
        );
    }
    if !q.dtype().is_float() {
        bail!(
            DTypeMismatch,
            OP,
            "\"{}\" not implemented for '{}'",
            OP,
            q.dtype().torch_scalar_name()
        );
    }
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let (e, ek) = (qs[qs.len() - 1], ks[ks.len() - 1]);
    if e != ek {
        bail!(
            ShapeMismatch,
            OP,
            "the last dim of query ({}) and key ({}) must match",
            e,
            ek
        );
    }
    let (sk, sv) = (ks[ks.len() - 2], vs[vs.len() - 2]);
    if sk != sv {
        bail!(
            ShapeMismatch,
            OP,
            "key and value must have the same sequence length, got {} and {}",
            sk,
            sv
        );
    }
    if let Some(m) = o.attn_mask {
        m.check_strided(OP)?;
        if o.is_causal {
            bail!(
                InvalidArgument,
                OP,
                "_scaled_dot_product_attention: Explicit attn_mask should not be set when is_causal=True"
            );
        }
        if m.dtype() != DType::Bool && !m.dtype().is_float() {
            bail!(
                DTypeMismatch,
                OP,
                "Expected attn_mask dtype to be bool or float or to match query dtype, but got attn_mask.dtype: {} and  query.dtype: {} instead.",
                m.dtype().torch_scalar_name(),
                q.dtype().torch_scalar_name()
            );
        }
    }
    if !(0.0..=1.0).contains(&o.dropout_p) {
        bail!(
            InvalidArgument,
            OP,
            "dropout probability has to be between 0 and 1, but got {}",
            o.dropout_p
        );
    }
    Ok(())
}

/// Fast path F13 (`sdpa_causal_b8h8t256d64`): without a graph to record, no mask (or the
/// causal one) and no dropout, f32/f64 operands of equal batch dims run the backend's fused
/// forward, which computes only the scores a causal row can see. `None`: take the composed
/// path (which also builds the graph the backward and double backward differentiate).
fn fused(
    q: &Tensor,
    k: &Tensor,
    v: &Tensor,
    o: &SdpaOptions<'_>,
    scale: f64,
) -> Result<Option<Tensor>> {
    let recording = is_grad_enabled() && [q, k, v].iter().any(|t| t.requires_grad());
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let d = qs.len();
    let batch_equal =
        ks.len() == d && vs.len() == d && qs[..d - 2] == ks[..d - 2] && qs[..d - 2] == vs[..d - 2];
    if recording
        || o.attn_mask.is_some()
        || o.dropout_p > 0.0
        || !matches!(q.dtype(), DType::F32 | DType::F64)
        || !batch_equal
        || [&qs, &ks, &vs].iter().any(|s| s.contains(&0))
    {
        return Ok(None);
    }
    let g = AttnGeom {
        bh: qs[..d - 2].iter().product(),
        l: qs[d - 2],
        s: ks[d - 2],
        e: qs[d - 1],
        ev: vs[d - 1],
        scale,
        causal: o.is_causal,
    };
    let (q, k, v) = (q.contiguous()?, k.contiguous()?, v.contiguous()?);
    let mut shape = qs;
    shape[d - 1] = g.ev;
    let out = Tensor::empty(&shape, q.dtype())?;
    attention::sdpa_forward(&out.data(), &q.data(), &k.data(), &v.data(), &g, q.dtype());
    Ok(Some(out))
}

impl Tensor {
    /// `torch.nn.functional.scaled_dot_product_attention(query, key, value, ...)`:
    /// `softmax(q k^T * scale + bias) v` for `q` `[..., L, E]`, `k` `[..., S, E]`, `v`
    /// `[..., S, Ev]` (batch dims broadcast), giving `[..., L, Ev]`. See [`SdpaOptions`] for
    /// the mask, causal, dropout, scale and grouped-query options. A row whose keys are all
    /// masked out is zero.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, SdpaOptions};
    /// let q = Tensor::ones(&[1, 2, 3, 4], DType::F32)?;
    /// let v = Tensor::arange(0, 24, 1)?.to_dtype(DType::F32)?.view(&[1, 2, 3, 4])?;
    /// let opts = SdpaOptions { is_causal: true, ..Default::default() };
    /// let y = Tensor::scaled_dot_product_attention(&q, &q, &v, opts)?;
    /// assert_eq!(y.shape(), vec![1, 2, 3, 4]);
    /// // the first query sees only the first key
    /// assert_eq!(y.to_vec::<f32>()?[..4], [0.0, 1.0, 2.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scaled_dot_product_attention(
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        opts: SdpaOptions<'_>,
    ) -> Result<Tensor> {
        check(query, key, value, &opts)?;
        if query.dim() == 3 && key.dim() == 3 && value.dim() == 3 {
            // PyTorch runs 3-D inputs as one batch of heads (`unsqueeze(0)`) and squeezes that
            // dim off again: its result is a view of the 4-D output
            let out = Self::scaled_dot_product_attention(
                &query.unsqueeze(0)?,
                &key.unsqueeze(0)?,
                &value.unsqueeze(0)?,
                opts,
            )?;
            return out.squeeze_dim(0);
        }
        let (mut k, mut v) = (key.clone(), value.clone());
        if opts.enable_gqa {
            // PyTorch reads the heads as `size(-3)` of query, key and value, in that order
            if let Some(t) = [query, key, value].into_iter().find(|t| t.dim() < 3) {
                bail!(
                    DimOutOfRange,
                    OP,
                    "Dimension out of range (expected to be in range of [{}, {}], but got -3)",
                    -(t.dim() as i64),
                    t.dim() as i64 - 1
                );
            }
            let (hq, hk, hv) = (
                query.shape()[query.dim() - 3],
                key.shape()[key.dim() - 3],
                value.shape()[value.dim() - 3],
            );
            if hk == 0 || hv == 0 || !hq.is_multiple_of(hk) || !hq.is_multiple_of(hv) {
                bail!(
                    InvalidArgument,
                    OP,
                    "number of heads in key and value must divide the number of heads in query, got {}, {} and {}",
                    hk,
                    hv,
                    hq
                );
            }
            if hk != hq {
                k = repeat_heads(&k, hq / hk)?;
            }
            if hv != hq {
                v = repeat_heads(&v, hq / hv)?;
            }
        }
        let qs = query.shape();
        let (l, e) = (qs[qs.len() - 2], qs[qs.len() - 1]);
        let s_len = k.shape()[k.dim() - 2];
        let scale = opts.scale.unwrap_or(1.0 / (e as f64).sqrt());
        if let Some(y) = fused(query, &k, &v, &opts, scale)? {
            return Ok(y);
        }
        let scores = query.mul(scale)?.matmul(&k.transpose(-2, -1)?)?;
        let (scores, dead) = match opts.attn_mask {
            // no score to mask (the `[L, S]` mask of an empty batch may be huge)
            _ if opts.is_causal && scores.numel() == 0 => (scores, None),
            _ if opts.is_causal => {
                let keep = {
                    let _g = no_grad();
                    Tensor::ones(&[l, s_len], DType::Bool)?.tril(0)?
                };
                (
                    scores.masked_fill(&keep.logical_not()?, f64::NEG_INFINITY)?,
                    None,
                )
            }
            None => (scores, None),
            Some(m) => {
                let masked = if m.dtype() == DType::Bool {
                    scores.masked_fill(&m.logical_not()?, f64::NEG_INFINITY)?
                } else {
                    scores.add(&m.to_dtype(query.dtype())?)?
                };
                // rows with every key masked out: zero output, no gradient
                let dead = {
                    let _g = no_grad();
                    masked.amax(&[-1], true)?.eq(f64::NEG_INFINITY)?
                };
                let any_dead = {
                    let _g = no_grad();
                    dead.any((), false)?.item::<bool>()?
                };
                if any_dead {
                    (masked.masked_fill(&dead, 0.0)?, Some(dead))
                } else {
                    (masked, None)
                }
            }
        };
        let mut attn = scores.softmax(-1)?;
        if let Some(d) = &dead {
            attn = attn.masked_fill(d, 0.0)?;
        }
        if opts.dropout_p > 0.0 {
            attn = attn.dropout(opts.dropout_p, true)?;
        }
        attn.matmul(&v)
    }
}
