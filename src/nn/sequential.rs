//! [`Sequential`]: one-tensor modules ([`Forward`]) applied in order, with PyTorch's
//! `<index>.<name>` keys; a `Sequential` is itself [`Forward`], so sequences nest.

use super::{Forward, Module, Visitor, VisitorMut};
use crate::{Result, Tensor};

/// Modules applied in order; parameters are named `<index>.<name>` like PyTorch, and
/// [`train`](Module::train) / [`eval`](Module::eval) reach every child (nested ones too).
///
/// ```
/// # use tapegrad::{Tensor, DType, nn::{Forward, Linear, Relu, Sequential, Module}};
/// let inner = Sequential::new().push(Linear::new(2, 4, true, DType::F32)?).push(Relu);
/// let m = Sequential::new().push(inner).push(Linear::new(4, 1, true, DType::F32)?);
/// assert_eq!(m.named_parameters()[2].0, "1.weight");
/// assert_eq!(m.named_parameters()[0].0, "0.0.weight");
/// assert_eq!(m.forward(&Tensor::ones(&[3, 2], DType::F32)?)?.shape(), vec![3, 1]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Sequential {
    layers: Vec<Box<dyn Forward>>,
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
    pub fn push(mut self, m: impl Forward) -> Self {
        let mut m: Box<dyn Forward> = Box::new(m);
        m.train(self.training);
        self.layers.push(m);
        self
    }
    /// Layer `i`.
    pub fn get(&self, i: usize) -> Option<&dyn Forward> {
        self.layers.get(i).map(|b| &**b)
    }
    /// The layers, in order.
    pub fn iter(&self) -> impl Iterator<Item = &dyn Forward> {
        self.layers.iter().map(|b| &**b)
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

impl Forward for Sequential {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        let mut h = x.clone();
        for l in &self.layers {
            h = l.forward(&h)?;
        }
        Ok(h)
    }
}

impl Module for Sequential {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        for (i, l) in self.layers.iter().enumerate() {
            v.module(&i.to_string(), &**l);
        }
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        for (i, l) in self.layers.iter_mut().enumerate() {
            v.module(&i.to_string(), &mut **l);
        }
    }
    fn set_training(&mut self, on: bool) {
        self.training = on;
    }
}

super::module::display_as_repr!(Sequential);
