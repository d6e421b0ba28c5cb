//! Module forward hooks: [`Hooked`] wraps a one-tensor module ([`Forward`]) and runs forward
//! pre-hooks (which may replace the input) and forward hooks (which may replace the output)
//! around its forward, PyTorch's `register_forward_pre_hook` / `register_forward_hook`; each
//! registration returns a [`RemovableHandle`].

use super::module::{Forward, Module, Visitor, VisitorMut};
use crate::autograd::{RemovableHandle, next_hook_id};
use crate::{Result, Tensor};
use parking_lot::Mutex;
use std::sync::Arc;

/// A forward pre-hook: sees the module and its input; `Some(x)` replaces the input.
pub type ForwardPreHook = dyn Fn(&dyn Module, &Tensor) -> Result<Option<Tensor>> + Send + Sync;
/// A forward hook: sees the module, its input and its output; `Some(y)` replaces the output.
pub type ForwardHook =
    dyn Fn(&dyn Module, &Tensor, &Tensor) -> Result<Option<Tensor>> + Send + Sync;

#[derive(Default)]
struct Hooks {
    pre: Vec<(u64, Arc<ForwardPreHook>)>,
    post: Vec<(u64, Arc<ForwardHook>)>,
}

/// A module with forward hooks. Rust modules have no shared base object to keep hooks in, so
/// a module that should run hooks is wrapped where it is built (`Hooked::new(Linear::new(..)?)`,
/// also inside a [`Sequential`](super::Sequential)); hooks are then registered and removed at
/// any time through `&self`. The wrapper is transparent to the module tree: the same
/// parameters, keys, `Display` and train/eval as the wrapped module. Hooks run in registration
/// order, pre-hooks before the forward and hooks after it, each seeing the input (as replaced
/// by the pre-hooks) and the output so far; an error from a hook is the forward's error.
///
/// ```
/// use tapegrad::nn::{Forward, Hooked, Linear, Module};
/// use tapegrad::{DType, Tensor};
/// use std::sync::{Arc, Mutex};
///
/// let layer = Hooked::new(Linear::new(3, 2, false, DType::F64)?);
/// let seen = Arc::new(Mutex::new(Vec::new()));
/// let s = seen.clone();
/// let h = layer.register_forward_hook(move |_m, _x, y| {
///     s.lock().unwrap().push(y.shape());
///     Ok(None)
/// });
/// let doubled = layer.register_forward_pre_hook(|_m, x| Ok(Some(x.mul(2.0)?)));
/// let x = Tensor::ones(&[4, 3], DType::F64)?;
/// let y = layer.forward(&x)?;
/// assert_eq!(y.to_vec::<f64>()?, layer.inner().forward(&x.mul(2.0)?)?.to_vec::<f64>()?);
/// h.remove();
/// doubled.remove();
/// layer.forward(&x)?;
/// assert_eq!(*seen.lock().unwrap(), vec![vec![4, 2]]);
/// assert_eq!(layer.state_dict()?.names(), ["weight"]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct Hooked<M> {
    inner: M,
    hooks: Arc<Mutex<Hooks>>,
}

impl<M: Forward> Hooked<M> {
    /// Wraps `inner` (no hooks yet).
    pub fn new(inner: M) -> Hooked<M> {
        Hooked {
            inner,
            hooks: Arc::default(),
        }
    }

    /// The wrapped module.
    pub fn inner(&self) -> &M {
        &self.inner
    }

    /// The wrapped module, mutably.
    pub fn inner_mut(&mut self) -> &mut M {
        &mut self.inner
    }

    /// The wrapped module, without its hooks.
    pub fn into_inner(self) -> M {
        self.inner
    }

    fn handle(&self, id: u64) -> RemovableHandle {
        let hooks = Arc::downgrade(&self.hooks);
        RemovableHandle::new(id, move |id| {
            if let Some(h) = hooks.upgrade() {
                let mut h = h.lock();
                h.pre.retain(|(i, _)| *i != id);
                h.post.retain(|(i, _)| *i != id);
            }
        })
    }

    /// Registers a hook run before each forward (PyTorch's `register_forward_pre_hook`);
    /// returning `Some(x)` replaces the input.
    pub fn register_forward_pre_hook(
        &self,
        hook: impl Fn(&dyn Module, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> RemovableHandle {
        let id = next_hook_id();
        self.hooks.lock().pre.push((id, Arc::new(hook)));
        self.handle(id)
    }

    /// Registers a hook run after each forward (PyTorch's `register_forward_hook`); returning
    /// `Some(y)` replaces the output.
    pub fn register_forward_hook(
        &self,
        hook: impl Fn(&dyn Module, &Tensor, &Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> RemovableHandle {
        let id = next_hook_id();
        self.hooks.lock().post.push((id, Arc::new(hook)));
        self.handle(id)
    }
}

impl<M: Forward> Forward for Hooked<M> {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        // (the lists are copied out: a hook may register or remove hooks)
        let pre: Vec<Arc<ForwardPreHook>> = self
            .hooks
            .lock()
            .pre
            .iter()
            .map(|(_, h)| h.clone())
            .collect();
        let mut x = x.clone();
        for h in pre {
            if let Some(nx) = h(self.inner.as_module(), &x)? {
                x = nx;
            }
        }
        let mut y = self.inner.forward(&x)?;
        let post: Vec<Arc<ForwardHook>> = self
            .hooks
            .lock()
            .post
            .iter()
            .map(|(_, h)| h.clone())
            .collect();
        for h in post {
            if let Some(ny) = h(self.inner.as_module(), &x, &y)? {
                y = ny;
            }
        }
        Ok(y)
    }
}

impl<M: Forward> Module for Hooked<M> {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        self.inner.visit(v)
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        self.inner.visit_mut(v)
    }
    fn set_training(&mut self, on: bool) {
        self.inner.set_training(on)
    }
    fn type_name(&self) -> String {
        self.inner.type_name()
    }
    fn extra_repr(&self) -> String {
        self.inner.extra_repr()
    }
    fn repr(&self) -> String {
        self.inner.repr()
    }
}

impl<M: Forward> std::fmt::Display for Hooked<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}
