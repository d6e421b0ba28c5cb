//! [`TransformerEncoderLayer`] (`torch.nn.TransformerEncoderLayer`): self-attention and a
//! two-layer feed-forward block, each with a residual connection and a layer norm applied after
//! (`norm_first = false`, PyTorch's default) or before (`norm_first = true`) the block, with
//! PyTorch's parameter names (`self_attn.*`, `linear1`, `linear2`, `norm1`, `norm2`).

use super::attention::{MhaOptions, MultiheadAttention};
use super::{Dropout, Forward, LayerNorm, Linear, Module, Visitor, VisitorMut};
use crate::tensor::dims::dim;
use crate::{DType, Dim, Result, Tensor};

/// The feed-forward activation of a [`TransformerEncoderLayer`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Activation {
    /// `relu` (PyTorch's default).
    #[default]
    Relu,
    /// Exact (erf) `gelu`.
    Gelu,
}

/// Settings of [`TransformerEncoderLayer::new`] besides `d_model` and `nhead`, with PyTorch's
/// defaults (`dim_feedforward = 2048`, `dropout = 0.1`, relu, `layer_norm_eps = 1e-5`,
/// sequence-first, post-norm, biases).
#[derive(Clone, Copy, Debug)]
pub struct EncoderLayerConfig {
    /// Width of the feed-forward block (a negative one is refused by the constructor with
    /// PyTorch's tensor-creation error; any integer type through
    /// [`EncoderLayerConfig::dim_feedforward`]).
    pub dim_feedforward: i64,
    /// Dropout probability (attention weights, feed-forward and both residual branches).
    pub dropout: f64,
    /// Feed-forward activation.
    pub activation: Activation,
    /// `eps` of both layer norms.
    pub layer_norm_eps: f64,
    /// Inputs are `[N, L, E]` rather than `[L, N, E]`.
    pub batch_first: bool,
    /// Layer norm before each block (pre-norm) rather than after the residual sum.
    pub norm_first: bool,
    /// Biases in the linear layers and layer norms.
    pub bias: bool,
}

impl Default for EncoderLayerConfig {
    fn default() -> Self {
        EncoderLayerConfig {
            dim_feedforward: 2048,
            dropout: 0.1,
            activation: Activation::Relu,
            layer_norm_eps: 1e-5,
            batch_first: false,
            norm_first: false,
            bias: true,
        }
    }
}

impl EncoderLayerConfig {
    /// Builder setter of `dim_feedforward` accepting any integer type (one above `i64::MAX`
    /// is kept as `i64::MAX`, which the constructor cannot allocate).
    pub fn dim_feedforward(mut self, v: impl Dim) -> Self {
        self.dim_feedforward = v.to_i64().unwrap_or(i64::MAX);
        self
    }
}

/// Masks of [`TransformerEncoderLayer::forward`] (PyTorch's `src_mask`,
/// `src_key_padding_mask`, `is_causal`; boolean `true` = masked out).
#[derive(Clone, Copy, Debug, Default)]
pub struct EncoderMasks<'a> {
    /// `[L, L]` or `[N * nhead, L, L]`, boolean or additive float.
    pub src_mask: Option<&'a Tensor>,
    /// `[N, L]`, boolean or additive float.
    pub src_key_padding_mask: Option<&'a Tensor>,
    /// A hint that `src_mask` is the causal mask (it must be given).
    pub is_causal: bool,
}

/// One transformer encoder layer, initialised like PyTorch's.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{EncoderLayerConfig, EncoderMasks, TransformerEncoderLayer}};
/// let cfg = EncoderLayerConfig { dim_feedforward: 16, dropout: 0.0, batch_first: true, ..Default::default() };
/// let layer = TransformerEncoderLayer::new(8, 2, cfg, DType::F32)?;
/// let y = layer.forward(&Tensor::randn(&[2, 5, 8], DType::F32)?, EncoderMasks::default())?;
/// assert_eq!(y.shape(), vec![2, 5, 8]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct TransformerEncoderLayer {
    /// The self-attention block.
    pub self_attn: MultiheadAttention,
    /// `d_model -> dim_feedforward`.
    pub linear1: Linear,
    /// Dropout inside the feed-forward block.
    pub dropout: Dropout,
    /// `dim_feedforward -> d_model`.
    pub linear2: Linear,
    /// Norm of the attention block.
    pub norm1: LayerNorm,
    /// Norm of the feed-forward block.
    pub norm2: LayerNorm,
    /// Dropout on the attention branch.
    pub dropout1: Dropout,
    /// Dropout on the feed-forward branch.
    pub dropout2: Dropout,
    /// Feed-forward activation.
    pub activation: Activation,
    /// Pre-norm (true) or post-norm (false).
    pub norm_first: bool,
}

impl TransformerEncoderLayer {
    /// `TransformerEncoderLayer(d_model, nhead, ...)` with the settings of `cfg`.
    pub fn new(
        d_model: impl Dim,
        nhead: impl Dim,
        cfg: EncoderLayerConfig,
        dtype: DType,
    ) -> Result<TransformerEncoderLayer> {
        let op = "TransformerEncoderLayer";
        let (d_model, nhead) = (dim(d_model, op)?, dim(nhead, op)?);
        let ln = |dt| -> Result<LayerNorm> {
            let mut n = LayerNorm::new(&[d_model], cfg.layer_norm_eps, true, dt)?;
            if !cfg.bias {
                n.bias = None;
            }
            Ok(n)
        };
        Ok(TransformerEncoderLayer {
            self_attn: MultiheadAttention::new(
                d_model,
                nhead,
                cfg.dropout,
                cfg.bias,
                cfg.batch_first,
                dtype,
            )?,
            linear1: Linear::new(d_model, cfg.dim_feedforward, cfg.bias, dtype)?,
            dropout: Dropout::new(cfg.dropout)?,
            linear2: Linear::new(cfg.dim_feedforward, d_model, cfg.bias, dtype)?,
            norm1: ln(dtype)?,
            norm2: ln(dtype)?,
            dropout1: Dropout::new(cfg.dropout)?,
            dropout2: Dropout::new(cfg.dropout)?,
            activation: cfg.activation,
            norm_first: cfg.norm_first,
        })
    }

    fn sa_block(&self, x: &Tensor, m: EncoderMasks<'_>) -> Result<Tensor> {
        let o = MhaOptions {
            key_padding_mask: m.src_key_padding_mask,
            need_weights: false,
            attn_mask: m.src_mask,
            average_attn_weights: true,
            is_causal: m.is_causal,
        };
        let (y, _) = self.self_attn.forward(x, x, x, o)?;
        self.dropout1.forward(&y)
    }

    fn ff_block(&self, x: &Tensor) -> Result<Tensor> {
        let h = self.linear1.forward(x)?;
        let h = match self.activation {
            Activation::Relu => h.relu()?,
            Activation::Gelu => h.gelu(crate::Approximate::None)?,
        };
        let y = self.linear2.forward(&self.dropout.forward(&h)?)?;
        self.dropout2.forward(&y)
    }

    /// The layer applied to `src` (`[L, N, E]`, `[N, L, E]` with `batch_first`, or `[L, E]`).
    pub fn forward(&self, src: &Tensor, masks: EncoderMasks<'_>) -> Result<Tensor> {
        if self.norm_first {
            let x = src.add(&self.sa_block(&self.norm1.forward(src)?, masks)?)?;
            x.add(&self.ff_block(&self.norm2.forward(&x)?)?)
        } else {
            let x = self.norm1.forward(&src.add(&self.sa_block(src, masks)?)?)?;
            self.norm2.forward(&x.add(&self.ff_block(&x)?)?)
        }
    }
}

impl Module for TransformerEncoderLayer {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.module("self_attn", &self.self_attn);
        v.module("linear1", &self.linear1);
        v.module("dropout", &self.dropout);
        v.module("linear2", &self.linear2);
        v.module("norm1", &self.norm1);
        v.module("norm2", &self.norm2);
        v.module("dropout1", &self.dropout1);
        v.module("dropout2", &self.dropout2);
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        v.module("self_attn", &mut self.self_attn);
        v.module("linear1", &mut self.linear1);
        v.module("dropout", &mut self.dropout);
        v.module("linear2", &mut self.linear2);
        v.module("norm1", &mut self.norm1);
        v.module("norm2", &mut self.norm2);
        v.module("dropout1", &mut self.dropout1);
        v.module("dropout2", &mut self.dropout2);
    }
}

super::module::display_as_repr!(TransformerEncoderLayer);
