//! Neural-network building blocks as plain structs: a [`Module`] trait that lists named
//! parameters in order and switches train/eval, layers ([`Linear`], [`Embedding`],
//! [`LayerNorm`], [`Dropout`]), activations ([`Relu`], [`Tanh`], [`Sigmoid`], [`Gelu`]),
//! [`Sequential`] composition, initialisers in [`init`] and safetensors checkpoints
//! ([`save`], [`load_into`]). No framework magic: a module is data plus a `forward`.

mod activation;
mod checkpoint;
pub mod init;
mod layers;
mod sequential;

pub use activation::{Gelu, Relu, Sigmoid, Tanh};
pub use checkpoint::{load_into, load_state_dict, save, state_dict};
pub use layers::{Dropout, Embedding, LayerNorm, Linear};
pub use sequential::Sequential;

use crate::{Result, Tensor};

/// A layer or model: forward pass, named parameters (in a stable order) and a training flag.
///
/// Parameter names follow PyTorch's `named_parameters()` (`weight`, `bias`, and `0.weight`,
/// `1.2.bias`, ... inside [`Sequential`]), so checkpoints match PyTorch's `state_dict()` keys.
pub trait Module: Send + Sync {
    /// Runs the layer.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;
    /// (name, parameter) pairs in registration order.
    fn named_parameters(&self) -> Vec<(String, Tensor)>;
    /// Switches training (true) or evaluation (false) behaviour; containers forward it to
    /// their children. Layers without such behaviour ignore it.
    fn train(&mut self, _on: bool) {}
    /// Evaluation mode: `train(false)`.
    fn eval(&mut self) {
        self.train(false)
    }
    /// The parameters, in order.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }
}
