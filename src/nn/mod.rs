//! Neural-network building blocks as plain structs: a [`Module`] trait that lists named
//! parameters in order and switches train/eval, [`Linear`], [`Sequential`], [`Relu`], and
//! initialisers in [`init`]. No framework magic: a module is data plus a `forward`.

pub mod init;

use crate::{DType, Result, Tensor};

/// A layer or model: forward pass, named parameters (in a stable order) and a training flag.
pub trait Module: Send + Sync {
    /// Runs the layer.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;
    /// (name, parameter) pairs in registration order.
    fn named_parameters(&self) -> Vec<(String, Tensor)>;
    /// Switches training (true) or evaluation (false) behaviour.
    fn train(&mut self, _on: bool) {}
    /// The parameters, in order.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }
}

/// `y = x @ weight^T + bias` with PyTorch's default (Kaiming-uniform) initialisation.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Linear, Module}};
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
    /// the same bound for the bias, as `torch.nn.Linear`.
    pub fn new(
        in_features: usize,
        out_features: usize,
        bias: bool,
        dtype: DType,
    ) -> Result<Linear> {
        let weight = init::kaiming_uniform(&[out_features, in_features], 5f64.sqrt(), dtype)?
            .requires_grad_(true)?;
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

impl Module for Linear {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let y = x.matmul(&self.weight.t()?)?;
        match &self.bias {
            Some(b) => y.add(b),
            None => Ok(y),
        }
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        let mut v = vec![("weight".to_string(), self.weight.clone())];
        if let Some(b) = &self.bias {
            v.push(("bias".to_string(), b.clone()));
        }
        v
    }
}

/// `max(x, 0)`.
pub struct Relu;

impl Module for Relu {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.relu()
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![]
    }
}

/// Modules applied in order; parameters are named `<index>.<name>` like PyTorch.
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Linear, Relu, Sequential, Module}};
/// let m = Sequential::new().push(Linear::new(2, 4, true, DType::F32)?).push(Relu).push(Linear::new(4, 1, true, DType::F32)?);
/// assert_eq!(m.named_parameters()[2].0, "2.weight");
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Default)]
pub struct Sequential {
    layers: Vec<Box<dyn Module>>,
}

impl Sequential {
    /// An empty sequence.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a layer.
    pub fn push(mut self, m: impl Module + 'static) -> Self {
        self.layers.push(Box::new(m));
        self
    }
}

impl Module for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for l in &self.layers {
            h = l.forward(&h)?;
        }
        Ok(h)
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        self.layers
            .iter()
            .enumerate()
            .flat_map(|(i, l)| {
                l.named_parameters()
                    .into_iter()
                    .map(move |(n, p)| (format!("{i}.{n}"), p))
            })
            .collect()
    }
    fn train(&mut self, on: bool) {
        for l in &mut self.layers {
            l.train(on);
        }
    }
}
