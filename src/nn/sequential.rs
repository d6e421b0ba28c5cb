//! [`Sequential`]: modules applied in order, with PyTorch's `<index>.<name>` parameter names
//! and train/eval propagation to every child.

use super::Module;
use crate::{Result, Tensor};

/// Modules applied in order; parameters are named `<index>.<name>` like PyTorch, and
/// [`train`](Module::train) / [`eval`](Module::eval) reach every child (nested ones too).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Linear, Relu, Sequential, Module}};
/// let m = Sequential::new().push(Linear::new(2, 4, true, DType::F32)?).push(Relu).push(Linear::new(4, 1, true, DType::F32)?);
/// assert_eq!(m.named_parameters()[2].0, "2.weight");
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Sequential {
    layers: Vec<Box<dyn Module>>,
    training: bool,
}

impl Default for Sequential {
    fn default() -> Self {
        Sequential {
            layers: Vec::new(),
            training: true,
        }
    }
}

impl Sequential {
    /// An empty sequence (in training mode, like a new PyTorch module).
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a layer. It is switched to this container's current mode.
    pub fn push(mut self, m: impl Module + 'static) -> Self {
        let mut m: Box<dyn Module> = Box::new(m);
        m.train(self.training);
        self.layers.push(m);
        self
    }
    /// Number of layers.
    pub fn len(&self) -> usize {
        self.layers.len()
    }
    /// True when there is no layer.
    pub fn is_empty(&self) -> bool {
        self.layers.is_empty()
    }
    /// True in training mode.
    pub fn is_training(&self) -> bool {
        self.training
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
        self.training = on;
        for l in &mut self.layers {
            l.train(on);
        }
    }
}
