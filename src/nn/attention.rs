//! [`MultiheadAttention`] (`torch.nn.MultiheadAttention` with one embedding size for query,
//! key and value): the packed input projection `in_proj_weight`/`in_proj_bias`, the output
//! projection `out_proj`, PyTorch's boolean-mask convention (`true` = masked out, the opposite
//! of [`scaled_dot_product_attention`](Tensor::scaled_dot_product_attention)), and its two
//! paths: attention weights through `baddbmm`/`softmax` when they are asked for, the fused
//! `scaled_dot_product_attention` otherwise.

use super::{Forward, Linear, Module, Visitor, VisitorMut, init};
use crate::tensor::dims::dim;
use crate::{DType, Dim, Result, SdpaOptions, Tensor, bail};

const OP: &str = "MultiheadAttention";

/// Options of [`MultiheadAttention::forward`] (PyTorch's keywords and defaults).
#[derive(Clone, Copy, Debug)]
pub struct MhaOptions<'a> {
    /// `[N, S]` (or `[S]` unbatched): `true` (or an additive float) masks a key out.
    pub key_padding_mask: Option<&'a Tensor>,
    /// Return the attention weights (default `true`).
    pub need_weights: bool,
    /// `[L, S]` or `[N * num_heads, L, S]`: `true` (or an additive float) masks a position.
    pub attn_mask: Option<&'a Tensor>,
    /// Average the returned weights over the heads (default `true`).
    pub average_attn_weights: bool,
    /// A hint that `attn_mask` is the causal mask (it must be given).
    pub is_causal: bool,
}

impl Default for MhaOptions<'_> {
    fn default() -> Self {
        MhaOptions {
            key_padding_mask: None,
            need_weights: true,
            attn_mask: None,
            average_attn_weights: true,
            is_causal: false,
        }
    }
}

/// Multi-head attention with PyTorch's parameter names and initialisation
/// (`in_proj_weight` xavier-uniform, biases zero, `out_proj` a [`Linear`]).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{MhaOptions, MultiheadAttention}};
/// let mha = MultiheadAttention::new(8, 2, 0.0, true, true, DType::F32)?;
/// let x = Tensor::randn(&[3, 5, 8], DType::F32)?;
/// let (y, w) = mha.forward(&x, &x, &x, MhaOptions::default())?;
/// assert_eq!(y.shape(), vec![3, 5, 8]);
/// assert_eq!(w.unwrap().shape(), vec![3, 5, 5]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct MultiheadAttention {
    /// `[3 * embed_dim, embed_dim]`: the query, key and value projections stacked.
    pub in_proj_weight: Tensor,
    /// `[3 * embed_dim]`.
    pub in_proj_bias: Option<Tensor>,
    /// The output projection.
    pub out_proj: Linear,
    /// Model width `E`.
    pub embed_dim: usize,
    /// Number of heads (divides `embed_dim`).
    pub num_heads: usize,
    /// Dropout on the attention weights in training mode.
    pub dropout: f64,
    /// Inputs are `[N, L, E]` rather than `[L, N, E]`.
    pub batch_first: bool,
    training: bool,
}

impl Module for MultiheadAttention {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.parameter("in_proj_weight", &self.in_proj_weight);
        if let Some(b) = &self.in_proj_bias {
            v.parameter("in_proj_bias", b);
        }
        v.module("out_proj", &self.out_proj);
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        v.module("out_proj", &mut self.out_proj);
    }
    fn set_training(&mut self, on: bool) {
        self.training = on;
    }
    /// PyTorch's repr: its `out_proj` is a `NonDynamicallyQuantizableLinear` (a `Linear`
    /// subclass), and it prints no `extra_repr`.
    fn repr(&self) -> String {
        format!(
            "MultiheadAttention(\n  (out_proj): NonDynamicallyQuantizableLinear({})\n)",
            self.out_proj.extra_repr()
        )
    }
}

/// A boolean mask (`true` = masked) as an additive float mask of `dtype`; a float mask cast.
fn canonical_mask(m: &Tensor, dtype: DType, name: &str) -> Result<Tensor> {
    if m.dtype() == DType::Bool {
        Tensor::zeros(&m.shape(), dtype)?.masked_fill(m, f64::NEG_INFINITY)
    } else if m.dtype().is_float() {
        m.to_dtype(dtype)
    } else {
        bail!(
            DTypeMismatch,
            OP,
            "only bool and floating types of {} are supported",
            name
        )
    }
}

impl MultiheadAttention {
    /// `MultiheadAttention(embed_dim, num_heads, dropout, bias, batch_first=...)` (sizes of
    /// any integer type; both must be positive, PyTorch's check and message).
    pub fn new(
        embed_dim: impl Dim,
        num_heads: impl Dim,
        dropout: f64,
        bias: bool,
        batch_first: bool,
        dtype: DType,
    ) -> Result<MultiheadAttention> {
        let (e, h) = (dim(embed_dim, OP)?, dim(num_heads, OP)?);
        if e <= 0 || h <= 0 {
            bail!(
                InvalidArgument,
                OP,
                "embed_dim and num_heads must be greater than 0, got embed_dim={} and num_heads={} instead",
                e,
                h
            );
        }
        // both positive: checked above
        let (embed_dim, num_heads) = (e as usize, h as usize);
        if !embed_dim.is_multiple_of(num_heads) {
            bail!(
                InvalidArgument,
                OP,
                "embed_dim must be divisible by num_heads"
            );
        }
        if !(0.0..=1.0).contains(&dropout) {
            bail!(
                InvalidArgument,
                OP,
                "dropout probability has to be between 0 and 1, but got {}",
                dropout
            );
        }
        let in_proj_weight =
            init::xavier_uniform(&[3 * embed_dim, embed_dim], 1.0, dtype)?.requires_grad_(true)?;
        let in_proj_bias = if bias {
            Some(Tensor::zeros(&[3 * embed_dim], dtype)?.requires_grad_(true)?)
        } else {
            None
        };
        let out_proj = Linear::new(embed_dim, embed_dim, bias, dtype)?;
        if let Some(b) = &out_proj.bias {
            let _g = crate::autograd::no_grad();
            b.zero_()?;
        }
        Ok(MultiheadAttention {
            in_proj_weight,
            in_proj_bias,
            out_proj,
            embed_dim,
            num_heads,
            dropout,
            batch_first,
            training: true,
        })
    }

    /// Query, key and value projections (one packed product for self-attention).
    fn project(&self, q: &Tensor, k: &Tensor, v: &Tensor) -> Result<[Tensor; 3]> {
        let e = self.embed_dim as i64;
        let w = &self.in_proj_weight;
        let b = self.in_proj_bias.as_ref();
        if q.is_same(k) && k.is_same(v) {
            let p = Tensor::linear(q, w, b)?;
            let c = p.chunk(3, -1)?;
            return Ok([c[0].clone(), c[1].clone(), c[2].clone()]);
        }
        let part = |t: &Tensor, i: i64| -> Result<Tensor> {
            let wi = w.narrow(0, i * e, e as usize)?;
            let bi = match b {
                Some(b) => Some(b.narrow(0, i * e, e as usize)?),
                None => None,
            };
            Tensor::linear(t, &wi, bi.as_ref())
        };
        Ok([part(q, 0)?, part(k, 1)?, part(v, 2)?])
    }

    /// Attention of `query` `[L, N, E]` over `key`/`value` `[S, N, E]` (`[N, L, E]` with
    /// `batch_first`; `[L, E]` unbatched): the output and, with `need_weights`, the weights
    /// `[N, L, S]` (averaged over heads) or `[N, H, L, S]`.
    pub fn forward(
        &self,
        query: &Tensor,
        key: &Tensor,
        value: &Tensor,
        o: MhaOptions<'_>,
    ) -> Result<(Tensor, Option<Tensor>)> {
        let batched = query.dim() == 3;
        if !batched && query.dim() != 2 {
            bail!(
                InvalidArgument,
                OP,
                "query should be unbatched 2D or batched 3D tensor but received {}-D query tensor",
                query.dim()
            );
        }
        if key.dim() != query.dim() || value.dim() != query.dim() {
            bail!(
                InvalidArgument,
                OP,
                "key and value must have the dimensions of query ({}), got {} and {}",
                query.dim(),
                key.dim(),
                value.dim()
            );
        }
        if o.is_causal && o.attn_mask.is_none() {
            bail!(
                InvalidArgument,
                OP,
                "Need attn_mask if specifying the is_causal hint. You may use the Transformer module method `generate_square_subsequent_mask` to create this mask."
            );
        }
        // to [L, N, E], keeping self-attention's identity
        let seq_first = |t: &Tensor| -> Result<Tensor> {
            if !batched {
                t.unsqueeze(1)
            } else if self.batch_first {
                t.transpose(0, 1)
            } else {
                Ok(t.clone())
            }
        };
        let q_in = seq_first(query)?;
        let k_in = if key.is_same(query) {
            q_in.clone()
        } else {
            seq_first(key)?
        };
        let v_in = if value.is_same(key) {
            k_in.clone()
        } else {
            seq_first(value)?
        };
        let (l, n, e) = (q_in.shape()[0], q_in.shape()[1], q_in.shape()[2]);
        let s = k_in.shape()[0];
        if e != self.embed_dim {
            bail!(
                ShapeMismatch,
                OP,
                "was expecting embedding dimension of {}, but got {}",
                self.embed_dim,
                e
            );
        }
        if k_in.shape() != v_in.shape() {
            bail!(
                ShapeMismatch,
                OP,
                "key shape {:?} does not match value shape {:?}",
                key.shape(),
                value.shape()
            );
        }
        let (h, hd) = (self.num_heads, self.embed_dim / self.num_heads);
        let dt = query.dtype();
        let [q, k, v] = self.project(&q_in, &k_in, &v_in)?;
        // masks: additive float, [1 or N*H, L, S]
        let mut mask = match o.attn_mask {
            Some(_) if o.is_causal && o.key_padding_mask.is_none() && !o.need_weights => None,
            Some(m) => {
                let m = canonical_mask(m, dt, "attn_mask")?;
                match m.dim() {
                    2 if m.shape() == [l, s] => Some(m.unsqueeze(0)?),
                    3 if m.shape() == [n * h, l, s] => Some(m),
                    _ => bail!(
                        ShapeMismatch,
                        OP,
                        "The shape of the attn_mask is {:?}, but should be {:?} or {:?}.",
                        m.shape(),
                        [l, s],
                        [n * h, l, s]
                    ),
                }
            }
            None => None,
        };
        let causal = o.is_causal && mask.is_none();
        if let Some(kpm) = o.key_padding_mask {
            let kpm = if batched {
                kpm.clone()
            } else {
                kpm.unsqueeze(0)?
            };
            if kpm.shape() != [n, s] {
                bail!(
                    ShapeMismatch,
                    OP,
                    "expecting key_padding_mask shape of {:?}, but got {:?}",
                    [n, s],
                    kpm.shape()
                );
            }
            let kpm = canonical_mask(&kpm, dt, "key_padding_mask")?
                .view(&[n as i64, 1, 1, s as i64])?
                .expand(&[n as i64, h as i64, 1, s as i64])?
                .reshape(&[(n * h) as i64, 1, s as i64])?;
            mask = Some(match mask {
                Some(m) => m.add(&kpm)?,
                None => kpm,
            });
        }
        let p = if self.training { self.dropout } else { 0.0 };
        let heads = |t: &Tensor, len: usize| -> Result<Tensor> {
            t.reshape(&[len as i64, (n * h) as i64, hd as i64])?
                .transpose(0, 1)
        };
        let (q, k, v) = (heads(&q, l)?, heads(&k, s)?, heads(&v, s)?);
        let (out, weights) = if o.need_weights {
            let qs = q.mul((1.0 / hd as f64).sqrt())?;
            let kt = k.transpose(-2, -1)?;
            let w = match &mask {
                Some(m) => m.baddbmm(&qs, &kt, 1.0, 1.0)?,
                None => qs.bmm(&kt)?,
            };
            let mut w = w.softmax(-1)?;
            if p > 0.0 {
                w = w.dropout(p, true)?;
            }
            let out = w
                .bmm(&v)?
                .transpose(0, 1)?
                .contiguous()?
                .view(&[(l * n) as i64, e as i64])?;
            let w = w.view(&[n as i64, h as i64, l as i64, s as i64])?;
            let w = if o.average_attn_weights {
                w.mean(&[1], false, None)?
            } else {
                w
            };
            (out, Some(w))
        } else {
            let mask = match mask {
                Some(m) if m.shape()[0] == 1 => Some(m.unsqueeze(0)?),
                Some(m) => Some(m.view(&[n as i64, h as i64, -1, s as i64])?),
                None => None,
            };
            let four =
                |t: &Tensor, len: usize| t.view(&[n as i64, h as i64, len as i64, hd as i64]);
            let out = Tensor::scaled_dot_product_attention(
                &four(&q, l)?,
                &four(&k, s)?,
                &four(&v, s)?,
                SdpaOptions {
                    attn_mask: mask.as_ref(),
                    dropout_p: p,
                    is_causal: causal,
                    ..Default::default()
                },
            )?;
            let out = out
                .permute(&[2, 0, 1, 3])?
                .contiguous()?
                .view(&[(l * n) as i64, e as i64])?;
            (out, None)
        };
        let out = self
            .out_proj
            .forward(&out)?
            .view(&[l as i64, n as i64, e as i64])?;
        let out = if !batched {
            out.squeeze_dim(1)?
        } else if self.batch_first {
            out.transpose(0, 1)?
        } else {
            out
        };
        let weights = match weights {
            Some(w) if !batched => Some(w.squeeze_dim(0)?),
            w => w,
        };
        Ok((out, weights))
    }

    /// True in training mode (dropout on the attention weights).
    pub fn is_training(&self) -> bool {
        self.training
    }
}

super::module::display_as_repr!(MultiheadAttention);
