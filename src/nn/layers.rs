//! Layers with parameters or a training mode: [`Linear`], [`Embedding`], [`LayerNorm`],
//! [`Dropout`], each initialised like its `torch.nn` counterpart and printed like its `repr`.

use super::walk::{py_bool, py_float};
use super::{Forward, Module, Visitor, init};
use crate::ops::nn::wrap_padding_idx;
use crate::tensor::dims::{dim, geometry, maybe_dim, sizes};
use crate::{DType, Dim, IntoGeometry, MaybeDim, Result, Tensor, bail};

/// `y = x @ weight^T + bias` with PyTorch's default (Kaiming-uniform) initialisation.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Forward, Linear}};
/// tapegrad::manual_seed(0);
/// let l = Linear::new(4, 3, true, DType::F32)?;
/// let y = l.forward(&Tensor::ones(&[2, 4], DType::F32)?)?;
/// assert_eq!(y.shape(), vec![2, 3]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Linear {
    /// `[out_features, in_features]`.
    pub weight: Tensor,
    /// `[out_features]`.
    pub bias: Option<Tensor>,
}

impl Linear {
    /// A layer with weights `U(-1/sqrt(in), 1/sqrt(in))` (kaiming_uniform with a = sqrt(5)) and
    /// the same bound for the bias, as `torch.nn.Linear` (sizes of any integer type; a
    /// negative one is PyTorch's tensor-creation error).
    pub fn new(
        in_features: impl Dim,
        out_features: impl Dim,
        bias: bool,
        dtype: DType,
    ) -> Result<Linear> {
        let op = "Linear";
        let shape = sizes([dim(out_features, op)?, dim(in_features, op)?], op)?;
        let (out_features, in_features) = (shape[0], shape[1]);
        let weight = init::kaiming_uniform(&shape, 5f64.sqrt(), dtype)?.requires_grad_(true)?;
        let bound = if in_features > 0 {
            1.0 / (in_features as f64).sqrt()
        } else {
            0.0
        };
        let bias = if bias {
            Some(init::uniform(&[out_features], -bound, bound, dtype)?.requires_grad_(true)?)
        } else {
            None
        };
        Ok(Linear { weight, bias })
    }
}

impl Forward for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = x.matmul(&self.weight.t()?)?;
        match &self.bias {
            Some(b) => y.add(b),
            None => Ok(y),
        }
    }
}

impl Module for Linear {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.parameter("weight", &self.weight);
        if let Some(b) = &self.bias {
            v.parameter("bias", b);
        }
    }
    fn extra_repr(&self) -> String {
        let s = self.weight.shape();
        format!(
            "in_features={}, out_features={}, bias={}",
            s.get(1).copied().unwrap_or(0),
            s.first().copied().unwrap_or(0),
            py_bool(self.bias.is_some())
        )
    }
}

/// A lookup table `[num_embeddings, embedding_dim]` initialised `N(0, 1)` (`torch.nn.Embedding`
/// without `max_norm`); `forward` takes int64 indices of any shape and appends
/// `embedding_dim`. With a `padding_idx` ([`Embedding::with_padding_idx`]) that row starts at
/// zero and never receives a gradient.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Embedding, Forward}};
/// let e = Embedding::new(10, 3, DType::F32)?;
/// let y = e.forward(&Tensor::from_vec(vec![1i64, 9, 1, 0], &[2, 2])?)?;
/// assert_eq!(y.shape(), vec![2, 2, 3]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Embedding {
    /// `[num_embeddings, embedding_dim]`.
    pub weight: Tensor,
    /// The row whose lookups get no gradient (already wrapped to `0..num_embeddings`), as
    /// PyTorch's `Embedding.padding_idx`.
    pub padding_idx: Option<usize>,
}

impl Embedding {
    /// A table with `N(0, 1)` rows (sizes of any integer type; a negative one is PyTorch's
    /// tensor-creation error).
    pub fn new(
        num_embeddings: impl Dim,
        embedding_dim: impl Dim,
        dtype: DType,
    ) -> Result<Embedding> {
        let shape = table_shape(num_embeddings, embedding_dim)?;
        let weight = init::normal(&shape, 0.0, 1.0, dtype)?.requires_grad_(true)?;
        Ok(Embedding {
            weight,
            padding_idx: None,
        })
    }

    /// `torch.nn.Embedding(num_embeddings, embedding_dim, padding_idx=padding_idx)`: `N(0, 1)`
    /// rows except row `padding_idx`, which is zero and gets no gradient. A negative
    /// `padding_idx` counts from the end (`padding_idx + num_embeddings`); one outside
    /// `[-num_embeddings, num_embeddings)` is an `InvalidArgument` error ("Padding_idx must be
    /// within num_embeddings").
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, nn::{Embedding, Forward}};
    /// let e = Embedding::with_padding_idx(4, 2, -1, DType::F64)?;
    /// assert_eq!(e.padding_idx, Some(3));
    /// assert_eq!(e.weight.select(0, 3)?.to_vec::<f64>()?, vec![0.0, 0.0]);
    /// let y = e.forward(&Tensor::from_vec(vec![3i64, 1], &[2])?)?;
    /// y.sum()?.backward()?;
    /// let g = e.weight.grad().unwrap().to_vec::<f64>()?;
    /// assert_eq!(g, vec![0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 0.0, 0.0]);
    /// assert!(Embedding::with_padding_idx(4, 2, 4, DType::F64).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn with_padding_idx(
        num_embeddings: impl Dim,
        embedding_dim: impl Dim,
        padding_idx: impl Dim,
        dtype: DType,
    ) -> Result<Embedding> {
        let shape = table_shape(num_embeddings, embedding_dim)?;
        let p = wrap_padding_idx(dim(padding_idx, "Embedding")?, shape[0], "Embedding")?;
        let weight = init::normal(&shape, 0.0, 1.0, dtype)?;
        // PyTorch's `_fill_padding_idx_with_zero` (an empty table has no row 0: IndexOutOfRange)
        weight.select(0, p as i64)?.zero_()?;
        Ok(Embedding {
            weight: weight.requires_grad_(true)?,
            padding_idx: Some(p),
        })
    }

    /// `torch.nn.Embedding.from_pretrained(embeddings, freeze, padding_idx)`: a layer whose
    /// weight shares storage with `embeddings` (detached; it requires grad unless `freeze`).
    /// The padding row keeps its values (as in PyTorch) but gets no gradient. `embeddings`
    /// must be 2-D (`InvalidArgument`); `padding_idx` follows
    /// [`with_padding_idx`](Embedding::with_padding_idx).
    ///
    /// ```
    /// # use tapegrad::{Tensor, nn::{Embedding, Forward}};
    /// let table = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let e = Embedding::from_pretrained(&table, true, None)?;
    /// assert!(!e.weight.requires_grad());
    /// let y = e.forward(&Tensor::from_vec(vec![1i64], &[1])?)?;
    /// assert_eq!(y.to_vec::<f32>()?, vec![3.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn from_pretrained(
        embeddings: &Tensor,
        freeze: bool,
        padding_idx: impl MaybeDim,
    ) -> Result<Embedding> {
        let op = "Embedding::from_pretrained";
        let padding_idx = maybe_dim(padding_idx, op)?;
        if embeddings.dim() != 2 {
            bail!(
                InvalidArgument,
                op,
                "Embeddings parameter is expected to be 2-dimensional, got shape {:?}",
                embeddings.shape()
            );
        }
        let padding_idx = match padding_idx {
            Some(p) => Some(wrap_padding_idx(p, embeddings.shape()[0], op)?),
            None => None,
        };
        Ok(Embedding {
            weight: embeddings.detach().requires_grad_(!freeze)?,
            padding_idx,
        })
    }
}

/// `[num_embeddings, embedding_dim]`, checked non-negative.
fn table_shape(num_embeddings: impl Dim, embedding_dim: impl Dim) -> Result<Vec<usize>> {
    let op = "Embedding";
    sizes([dim(num_embeddings, op)?, dim(embedding_dim, op)?], op)
}

impl Forward for Embedding {
    fn forward(&self, indices: &Tensor) -> Result<Tensor> {
        let p = self
            .padding_idx
            .map(|p| i64::try_from(p).unwrap_or(i64::MAX));
        Tensor::embedding_with(indices, &self.weight, p)
    }
}

impl Module for Embedding {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.parameter("weight", &self.weight);
    }
    fn extra_repr(&self) -> String {
        let s = self.weight.shape();
        let mut r = format!(
            "{}, {}",
            s.first().copied().unwrap_or(0),
            s.get(1).copied().unwrap_or(0)
        );
        if let Some(p) = self.padding_idx {
            r += &format!(", padding_idx={p}");
        }
        r
    }
}

/// Layer normalisation over the trailing `normalized_shape` dims (`torch.nn.LayerNorm`), with
/// an optional affine `weight` (ones) and `bias` (zeros).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Forward, LayerNorm}};
/// let ln = LayerNorm::new(&[2], 0.0, true, DType::F64)?;
/// let y = ln.forward(&Tensor::from_vec(vec![1.0f64, 3.0], &[1, 2])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![-1.0, 1.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct LayerNorm {
    /// The trailing dims normalised over.
    pub normalized_shape: Vec<usize>,
    /// Added to the variance (PyTorch default `1e-5`).
    pub eps: f64,
    /// Scale, shape `normalized_shape` (None without `elementwise_affine`).
    pub weight: Option<Tensor>,
    /// Shift, shape `normalized_shape` (None without `elementwise_affine`).
    pub bias: Option<Tensor>,
}

impl LayerNorm {
    /// `LayerNorm(normalized_shape, eps, elementwise_affine)` (`normalized_shape`: one size
    /// or a list, any integer type; a negative size is PyTorch's tensor-creation error).
    pub fn new(
        normalized_shape: impl IntoGeometry,
        eps: f64,
        elementwise_affine: bool,
        dtype: DType,
    ) -> Result<LayerNorm> {
        let op = "LayerNorm";
        let normalized_shape = &sizes(&geometry(normalized_shape, op)?, op)?[..];
        if normalized_shape.is_empty() {
            bail!(
                InvalidArgument,
                "LayerNorm",
                "normalized_shape must have at least one dimension"
            );
        }
        let (weight, bias) = if elementwise_affine {
            (
                Some(Tensor::ones(normalized_shape, dtype)?.requires_grad_(true)?),
                Some(Tensor::zeros(normalized_shape, dtype)?.requires_grad_(true)?),
            )
        } else {
            (None, None)
        };
        Ok(LayerNorm {
            normalized_shape: normalized_shape.to_vec(),
            eps,
            weight,
            bias,
        })
    }
}

impl Forward for LayerNorm {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.layer_norm(
            &self.normalized_shape,
            self.weight.as_ref(),
            self.bias.as_ref(),
            self.eps,
        )
    }
}

impl Module for LayerNorm {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        if let Some(w) = &self.weight {
            v.parameter("weight", w);
        }
        if let Some(b) = &self.bias {
            v.parameter("bias", b);
        }
    }
    fn extra_repr(&self) -> String {
        let dims: Vec<String> = self
            .normalized_shape
            .iter()
            .map(|d| d.to_string())
            .collect();
        let shape = if dims.len() == 1 {
            format!("({},)", dims[0])
        } else {
            format!("({})", dims.join(", "))
        };
        format!(
            "{shape}, eps={}, elementwise_affine={}, bias={}",
            py_float(self.eps),
            py_bool(self.weight.is_some()),
            py_bool(self.bias.is_some())
        )
    }
}

/// Zeroes elements with probability `p` and scales the rest by `1/(1-p)` in training mode; the
/// identity in evaluation mode (`torch.nn.Dropout`). Draws from the global seeded generator.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Dropout, Forward, Module}};
/// let mut d = Dropout::new(0.5)?;
/// let x = Tensor::ones(&[8], DType::F32)?;
/// assert!(d.forward(&x)?.to_vec::<f32>()?.iter().all(|&v| v == 0.0 || v == 2.0));
/// d.eval();
/// assert_eq!(d.forward(&x)?.to_vec::<f32>()?, vec![1.0; 8]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug)]
pub struct Dropout {
    p: f64,
    training: bool,
}

impl Dropout {
    /// A dropout layer in training mode; `p` must be in `[0, 1]`.
    pub fn new(p: f64) -> Result<Dropout> {
        if !(0.0..=1.0).contains(&p) {
            bail!(
                InvalidArgument,
                "Dropout",
                "dropout probability has to be between 0 and 1, but got {}",
                p
            );
        }
        Ok(Dropout { p, training: true })
    }
    /// The drop probability.
    pub fn p(&self) -> f64 {
        self.p
    }
    /// True in training mode.
    pub fn is_training(&self) -> bool {
        self.training
    }
}

impl Forward for Dropout {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.dropout(self.p, self.training)
    }
}

impl Module for Dropout {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn set_training(&mut self, on: bool) {
        self.training = on;
    }
    fn extra_repr(&self) -> String {
        format!("p={}, inplace=False", py_float(self.p))
    }
}

super::module::display_as_repr!(Linear, Embedding, LayerNorm, Dropout);
