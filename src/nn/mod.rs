//! Neural-network modules. A module is a plain struct that names its parameters, buffers and
//! child modules through the [`Module`] trait (by hand with [`Module::visit`], or with
//! `#[derive(Module)]`); every module-wide operation is provided once on top of that:
//! `named_parameters`, `named_buffers`, `named_modules`, `state_dict` / `load_state_dict`
//! (PyTorch's keys, `copy_` casts, strict or reporting [`IncompatibleKeys`]), `train`/`eval`,
//! the in-place `to(dtype)` that keeps the optimizer's handles, `requires_grad_`, `apply`,
//! `zero_grad`, `num_parameters` and a PyTorch-style `Display` of the tree.
//!
//! Forward passes are typed inherent methods, so a module can take a mask or targets beside its
//! input (see [`Module`] for why); one-tensor modules implement [`Forward`], which
//! [`Sequential`] chains. Containers: [`Sequential`], [`ModuleList`], [`ModuleDict`]. Layers
//! ([`Linear`], [`Embedding`], [`LayerNorm`], [`Dropout`]; [`Conv1d`], [`Conv2d`],
//! [`ConvTranspose2d`] in `conv.rs`; [`BatchNorm1d`], [`BatchNorm2d`], [`GroupNorm`] in
//! `norm.rs`; [`MaxPool2d`], [`AvgPool2d`], [`AdaptiveAvgPool2d`], [`Flatten`] in `pool.rs`),
//! attention ([`MultiheadAttention`], [`TransformerEncoderLayer`]), activations ([`Relu`], [`Tanh`],
//! [`Sigmoid`], [`Gelu`]), initialisers in [`init`], gradient clipping ([`clip_grad_norm_`],
//! [`clip_grad_value_`]) and safetensors files ([`save`], [`load_into`]). Forward (pre-)hooks:
//! wrap a module in [`Hooked`] (`hooks.rs`).
//!
//! Integers follow the [crate's rule](crate#integers): every size of a layer constructor is a
//! [`Dim`](crate::Dim) (`Linear::new(4usize, 3i64, ..)`), every PyTorch `int | tuple` geometry
//! an [`IntoGeometry`](crate::IntoGeometry) (`Conv2d::new(1, 16, 3, ..)`,
//! `MaxPool2d::new([2, 2], None, 0, 1, false)`), and a negative value is refused with
//! PyTorch's message for the layer (most: the weight's `Trying to create tensor with negative
//! dimension ...`); the pooling layers and [`Flatten`] check at the first forward, as in
//! PyTorch.
//!
//! ```
//! use tapegrad::nn::{Forward, LayerNorm, Linear, Module, ModuleList};
//! use tapegrad::{DType, Result, Tensor};
//!
//! #[derive(Module)]
//! struct Net {
//!     layers: ModuleList<Linear>,
//!     norm: LayerNorm,
//!     #[module(buffer, persistent = false)]
//!     step: Tensor,
//! }
//!
//! let net = Net {
//!     layers: (0..2).map(|_| Linear::new(4, 4, true, DType::F32)).collect::<Result<_>>()?,
//!     norm: LayerNorm::new(&[4], 1e-5, true, DType::F32)?,
//!     step: Tensor::zeros((), DType::I64)?,
//! };
//! let keys: Vec<String> = net.state_dict()?.names().iter().map(|k| k.to_string()).collect();
//! assert_eq!(keys, ["layers.0.weight", "layers.0.bias", "layers.1.weight", "layers.1.bias",
//!                   "norm.weight", "norm.bias"]);
//! assert_eq!(net.num_parameters(), 2 * (16 + 4) + 8);
//! net.to(DType::F64)?;
//! assert_eq!(net.layers[0].forward(&Tensor::ones(&[1, 4], DType::F64)?)?.dtype(), DType::F64);
//! assert_eq!(net.step.dtype(), DType::I64); // integer buffers stay
//! # Ok::<(), tapegrad::Error>(())
//! ```

mod activation;
mod attention;
mod checkpoint;
mod clip;
mod containers;
mod conv;
mod hooks;
pub mod init;
mod layers;
mod module;
mod norm;
mod pool;
mod sequential;
mod state;
mod transformer;
mod walk;

pub use activation::{Gelu, Relu, Sigmoid, Tanh};
pub use attention::{MhaOptions, MultiheadAttention};
pub use checkpoint::{load_into, save};
pub use clip::{ClipGradNorm, clip_grad_norm_, clip_grad_value_};
pub use containers::{ModuleDict, ModuleList};
pub use conv::{Conv1d, Conv2d, ConvTranspose2d};
pub use hooks::{ForwardHook, ForwardPreHook, Hooked};
pub use layers::{Dropout, Embedding, LayerNorm, Linear};
pub use module::{AsModule, Forward, IncompatibleKeys, Module, Visitor, VisitorMut};
#[doc(hidden)]
pub use module::{BufferMember, Member};
pub use norm::{BatchNorm1d, BatchNorm2d, GroupNorm};
pub use pool::{AdaptiveAvgPool2d, AvgPool2d, Flatten, MaxPool2d};
pub use sequential::Sequential;
/// `#[derive(Module)]` for a struct of parameters, buffers and submodules (see
/// [`Module`](trait@Module)): a `Tensor` field is a parameter, a module field a child, an
/// `Option` of either is registered when `Some`, plain settings (numbers, `bool`, `String`,
/// `DType`, `Vec<usize>`) are skipped. Field attributes: `#[module(skip)]`,
/// `#[module(buffer)]` / `#[module(buffer, persistent = false)]` on a `Tensor` or
/// `Option<Tensor>`, `#[module(training)]` on the `bool` that `train`/`eval` set. The field
/// name is the key; it also implements `Display` (the module tree).
pub use tapegrad_derive::Module;
pub use transformer::{Activation, EncoderLayerConfig, EncoderMasks, TransformerEncoderLayer};
