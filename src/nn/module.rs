//! The [`Module`] trait: a module names its own parameters, buffers and child modules to a
//! [`Visitor`] (and its children to a [`VisitorMut`]); every module-wide operation
//! (`named_parameters`, `state_dict`, `load_state_dict`, `train`, `to`, `apply`, `Display`, ...)
//! is a provided method written once over that enumeration (in `walk.rs` and `state.rs`).
//! [`Forward`] is the one-tensor forward that [`Sequential`](super::Sequential) chains.

use super::{state, walk};
use crate::checkpoint::StateDict;
use crate::{DType, Result, Tensor};
use std::any::Any;
use std::fmt;

/// Receives a module's own members, in registration order: parameters, buffers and children.
/// The lifetime lets a walk keep references (`named_modules` returns `&dyn Module`s).
pub trait Visitor<'a> {
    /// A parameter (trained; listed by `named_parameters`, saved by `state_dict`).
    fn parameter(&mut self, name: &str, t: &'a Tensor);
    /// A buffer (not trained; saved by `state_dict` when `persistent`, moved by `to(dtype)`
    /// when floating), PyTorch's `register_buffer(name, t, persistent)`.
    fn buffer(&mut self, name: &str, t: &'a Tensor, persistent: bool);
    /// A child module; its members get the key prefix `name.`.
    fn module(&mut self, name: &str, m: &'a dyn Module);
}

/// Receives a module's children mutably (for `train`/`eval` and `apply`). Closures
/// `FnMut(&str, &mut dyn Module)` are visitors.
pub trait VisitorMut {
    /// A child module.
    fn module(&mut self, name: &str, m: &mut dyn Module);
}

impl<F: FnMut(&str, &mut dyn Module)> VisitorMut for F {
    fn module(&mut self, name: &str, m: &mut dyn Module) {
        self(name, m)
    }
}

/// `&dyn Module` from any module, sized or not: lets the provided methods of [`Module`] hand
/// `self` to the walks. Implemented for every module; never implement it by hand.
pub trait AsModule {
    /// `self` as a trait object.
    fn as_module(&self) -> &dyn Module;
    /// `self` as a mutable trait object.
    fn as_module_mut(&mut self) -> &mut dyn Module;
}

impl<T: Module> AsModule for T {
    fn as_module(&self) -> &dyn Module {
        self
    }
    fn as_module_mut(&mut self) -> &mut dyn Module {
        self
    }
}

/// The keys `load_state_dict` did not match, PyTorch's `_IncompatibleKeys`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct IncompatibleKeys {
    /// Keys the module expects that the state dict lacks.
    pub missing_keys: Vec<String>,
    /// Keys in the state dict that the module does not have.
    pub unexpected_keys: Vec<String>,
}

/// A layer or model: a struct that names its parameters, buffers and child modules.
///
/// Implement [`visit`](Module::visit) (and [`visit_mut`](Module::visit_mut) when there are
/// child modules) or `#[derive(Module)]`; everything else is provided. Keys follow PyTorch's
/// `state_dict()`: `weight`, `0.bias`, `layers.1.attn.q.weight`. A module's own parameters come
/// before its buffers, then its children's members in order, as in PyTorch.
///
/// **Forward passes are not part of this trait.** A module defines its forward as an inherent
/// method with the inputs it needs (`fn forward(&self, x: &Tensor, mask: Option<&Tensor>)`), as
/// burn does: Rust has no variadic arguments, and a generic `Forward<Input>` trait would pack
/// inputs into tuples, lose their names and make call sites spell the input type, while a typed
/// method is checked by the compiler and documented like any function. Modules that map one
/// tensor to one tensor also implement [`Forward`], which is what
/// [`Sequential`](super::Sequential) chains.
///
/// ```
/// use tapegrad::nn::{Linear, Module};
/// use tapegrad::{DType, Result, Tensor};
///
/// #[derive(Module)]
/// struct Scaled {
///     proj: Linear,
///     #[module(buffer)]
///     scale: Tensor,
/// }
///
/// impl Scaled {
///     fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<Tensor> {
///         use tapegrad::nn::Forward;
///         self.proj.forward(x)?.mul(&self.scale)?.mul(mask)
///     }
/// }
///
/// let m = Scaled { proj: Linear::new(2, 2, true, DType::F32)?, scale: Tensor::ones(&[2], DType::F32)? };
/// let keys: Vec<String> = m.state_dict()?.names().iter().map(|s| s.to_string()).collect();
/// assert_eq!(keys, ["scale", "proj.weight", "proj.bias"]);
/// assert_eq!(m.parameters().len(), 2);
/// let y = m.forward(&Tensor::ones(&[1, 2], DType::F32)?, &Tensor::zeros(&[1, 2], DType::F32)?)?;
/// assert_eq!(y.to_vec::<f32>()?, vec![0.0, 0.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub trait Module: Any + Send + Sync + AsModule {
    /// Names this module's own parameters, buffers and direct children to `v`, in order.
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>);

    /// Hands each direct child to `v` mutably. The default has no children; a module with
    /// children must implement it (the derive does), or `train`/`apply` will not reach them.
    fn visit_mut(&mut self, _v: &mut dyn VisitorMut) {}

    /// Sets this module's own training flag (not its children's: [`train`](Module::train)
    /// walks them). Modules without train/eval behaviour ignore it.
    fn set_training(&mut self, _on: bool) {}

    /// The name printed by `Display` (default: the type's name without path or generics).
    fn type_name(&self) -> String {
        walk::short_type_name(std::any::type_name::<Self>())
    }

    /// The text inside the parentheses of a leaf's `Display` (PyTorch's `extra_repr`).
    fn extra_repr(&self) -> String {
        String::new()
    }

    /// The module tree as PyTorch's `repr` prints it: `Name(extra)` for a leaf, one
    /// `(name): child` line per child, indented by two spaces per level.
    fn repr(&self) -> String {
        walk::repr(self.as_module())
    }

    /// Every parameter with its dotted key, this module's own first, then each child's in
    /// order; a tensor registered twice (tied weights) is listed once, under its first key.
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        walk::named_tensors(self.as_module(), walk::Kind::Parameters)
    }

    /// The parameters, in [`named_parameters`](Module::named_parameters) order.
    fn parameters(&self) -> Vec<Tensor> {
        self.named_parameters()
            .into_iter()
            .map(|(_, p)| p)
            .collect()
    }

    /// Every buffer (persistent or not) with its dotted key; never a parameter.
    fn named_buffers(&self) -> Vec<(String, Tensor)> {
        walk::named_tensors(self.as_module(), walk::Kind::Buffers)
    }

    /// The buffers, in [`named_buffers`](Module::named_buffers) order.
    fn buffers(&self) -> Vec<Tensor> {
        self.named_buffers().into_iter().map(|(_, b)| b).collect()
    }

    /// The direct children with their names.
    fn named_children(&self) -> Vec<(String, &dyn Module)> {
        walk::own(self.as_module()).children
    }

    /// This module (key `""`) and every descendant, pre-order, with dotted keys.
    fn named_modules(&self) -> Vec<(String, &dyn Module)> {
        let mut out = Vec::new();
        walk::modules(self.as_module(), String::new(), &mut out);
        out
    }

    /// Number of parameter elements (tied parameters counted once).
    fn num_parameters(&self) -> usize {
        self.parameters().iter().map(|p| p.numel()).sum()
    }

    /// Parameters and persistent buffers under PyTorch's `state_dict()` keys (detached handles
    /// sharing storage), with metadata `format = "pt"` as `safetensors.torch` writes.
    fn state_dict(&self) -> Result<StateDict> {
        state::state_dict(self.as_module())
    }

    /// Copies `sd` into the parameters and persistent buffers in place, PyTorch's
    /// `load_state_dict(sd, strict)`: values are cast to each tensor's dtype (`copy_`
    /// semantics, one version bump per tensor), shapes must match (`ShapeMismatch`, also when
    /// not strict). With `strict`, a missing or unexpected key is an `InvalidArgument` error;
    /// otherwise they are returned. Everything is checked before the first copy: on error
    /// nothing has changed.
    fn load_state_dict(&self, sd: &StateDict, strict: bool) -> Result<IncompatibleKeys> {
        state::load_state_dict(self.as_module(), sd, strict)
    }

    /// Training (true) or evaluation (false) mode for this module and every descendant.
    fn train(&mut self, on: bool) {
        self.set_training(on);
        self.visit_mut(&mut |_: &str, c: &mut dyn Module| c.train(on));
    }

    /// Evaluation mode: `train(false)`.
    fn eval(&mut self) {
        self.train(false)
    }

    /// Converts every floating or complex parameter and buffer (and existing gradients) to
    /// `dtype` in place, keeping the tensor objects, as PyTorch's `module.to(dtype)` does: an
    /// optimizer built before keeps stepping the same parameters. Integer and bool tensors are
    /// left alone. `dtype` must be floating or complex (`InvalidArgument`). Call it while no
    /// other thread runs ops on the module's tensors (as with PyTorch's `.data =`).
    fn to(&self, dtype: DType) -> Result<()> {
        state::to_dtype(self.as_module(), dtype)
    }

    /// Sets `requires_grad` on every parameter (false freezes the module).
    fn requires_grad_(&self, on: bool) -> Result<()> {
        for p in self.parameters() {
            p.requires_grad_(on)?;
        }
        Ok(())
    }

    /// Clears every parameter's gradient (PyTorch's `zero_grad(set_to_none=True)`).
    fn zero_grad(&self) -> Result<()> {
        for p in self.parameters() {
            p.set_grad(None)?;
        }
        Ok(())
    }

    /// Calls `f` on every descendant (children first) and then on this module, PyTorch's
    /// `apply(fn)`; stops at the first error. Downcast with
    /// [`downcast_ref`](trait.Module.html#method.downcast_ref) to initialise one layer type.
    fn apply(&mut self, f: &mut dyn FnMut(&mut dyn Module) -> Result<()>) -> Result<()> {
        let mut res = Ok(());
        self.visit_mut(&mut |_: &str, c: &mut dyn Module| {
            if res.is_ok() {
                res = c.apply(f);
            }
        });
        res?;
        f(self.as_module_mut())
    }
}

impl dyn Module {
    /// The module as its concrete type, if it is a `T`.
    pub fn downcast_ref<T: Module>(&self) -> Option<&T> {
        (self as &dyn Any).downcast_ref()
    }
    /// The module as its concrete type, mutably, if it is a `T`.
    pub fn downcast_mut<T: Module>(&mut self) -> Option<&mut T> {
        (self as &mut dyn Any).downcast_mut()
    }
}

impl fmt::Display for dyn Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

impl fmt::Debug for dyn Module {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.repr())
    }
}

/// A module mapping one tensor to one tensor: what [`Sequential`](super::Sequential) chains.
/// Modules with several inputs define an inherent `forward` instead (see [`Module`]).
pub trait Forward: Module {
    /// Runs the module.
    fn forward(&self, x: &Tensor) -> Result<Tensor>;
}

macro_rules! boxed_module {
    ($t:ty) => {
        impl Module for Box<$t> {
            fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
                (**self).visit(v)
            }
            fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
                (**self).visit_mut(v)
            }
            fn set_training(&mut self, on: bool) {
                (**self).set_training(on)
            }
            fn type_name(&self) -> String {
                (**self).type_name()
            }
            fn extra_repr(&self) -> String {
                (**self).extra_repr()
            }
            fn repr(&self) -> String {
                (**self).repr()
            }
        }
    };
}
boxed_module!(dyn Module);
boxed_module!(dyn Forward);

impl Forward for Box<dyn Forward> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        (**self).forward(x)
    }
}

/// How `#[derive(Module)]` registers a field: a [`Tensor`] is a parameter, a [`Module`] a child,
/// an `Option` of either is registered when `Some`, and plain settings (numbers, `bool`,
/// `String`, [`DType`], `Vec<usize>`) are not registered. Other field types need
/// `#[module(skip)]`.
#[doc(hidden)]
pub trait Member {
    fn visit_member<'a>(&'a self, name: &str, v: &mut dyn Visitor<'a>);
    fn visit_member_mut(&mut self, _name: &str, _v: &mut dyn VisitorMut) {}
}

impl Member for Tensor {
    fn visit_member<'a>(&'a self, name: &str, v: &mut dyn Visitor<'a>) {
        v.parameter(name, self)
    }
}

impl<M: Module> Member for M {
    fn visit_member<'a>(&'a self, name: &str, v: &mut dyn Visitor<'a>) {
        v.module(name, self)
    }
    fn visit_member_mut(&mut self, name: &str, v: &mut dyn VisitorMut) {
        v.module(name, self)
    }
}

impl<T: Member> Member for Option<T> {
    fn visit_member<'a>(&'a self, name: &str, v: &mut dyn Visitor<'a>) {
        if let Some(x) = self {
            x.visit_member(name, v)
        }
    }
    fn visit_member_mut(&mut self, name: &str, v: &mut dyn VisitorMut) {
        if let Some(x) = self {
            x.visit_member_mut(name, v)
        }
    }
}

macro_rules! setting {
    ($($t:ty),*) => {$(
        impl Member for $t {
            fn visit_member<'a>(&'a self, _name: &str, _v: &mut dyn Visitor<'a>) {}
        }
    )*};
}
setting!(
    bool,
    u8,
    u16,
    u32,
    u64,
    usize,
    i8,
    i16,
    i32,
    i64,
    isize,
    f32,
    f64,
    String,
    DType,
    Vec<usize>
);

/// How `#[derive(Module)]` registers a `#[module(buffer)]` field ([`Tensor`] or
/// `Option<Tensor>`).
#[doc(hidden)]
pub trait BufferMember {
    fn visit_buffer<'a>(&'a self, name: &str, persistent: bool, v: &mut dyn Visitor<'a>);
}

impl BufferMember for Tensor {
    fn visit_buffer<'a>(&'a self, name: &str, persistent: bool, v: &mut dyn Visitor<'a>) {
        v.buffer(name, self, persistent)
    }
}

impl BufferMember for Option<Tensor> {
    fn visit_buffer<'a>(&'a self, name: &str, persistent: bool, v: &mut dyn Visitor<'a>) {
        if let Some(t) = self {
            v.buffer(name, t, persistent)
        }
    }
}

/// `Display` as [`Module::repr`] for built-in modules (the derive writes the same impl).
macro_rules! display_as_repr {
    ($($t:ty),* $(,)?) => {$(
        impl std::fmt::Display for $t {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(&$crate::nn::Module::repr(self))
            }
        }
    )*};
}
pub(crate) use display_as_repr;
