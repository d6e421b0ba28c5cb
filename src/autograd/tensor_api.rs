//! The autograd surface of `Tensor`: requires_grad, leaves, `.grad`, `grad_fn`, hooks,
//! `retain_grad`, `detach` / `detach_` and `backward`.

use super::hook_handle::{RemovableHandle, next_hook_id};
use super::meta::CreationMeta;
use super::node::{Hook, Node, NodeRef};
use super::view::grad_fn_of;
use crate::{Result, Tensor, bail};
use std::sync::Arc;

impl Tensor {
    /// Sets the leaf flag (only on leaves; only float/complex dtypes may require grad).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// assert!(x.requires_grad() && x.is_leaf());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn requires_grad_(&self, requires_grad: bool) -> Result<Tensor> {
        if requires_grad && !self.dtype().is_differentiable() {
            bail!(
                DTypeMismatch,
                "requires_grad_",
                "only Tensors of floating point and complex dtype can require gradients (got {})",
                self.dtype()
            );
        }
        if !self.is_leaf() {
            if !requires_grad {
                bail!(
                    InvalidArgument,
                    "requires_grad_",
                    "you can only change requires_grad flags of leaf variables. If you want to use a computed variable in a subgraph that doesn't require differentiation use `let var_no_grad = var.detach();`."
                );
            }
            return Ok(self.clone());
        }
        self.0.meta.lock().requires_grad = requires_grad;
        Ok(self.clone())
    }

    /// True if gradients flow to this tensor (leaf flag, a grad_fn, or a base requiring grad).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// assert!(x.mul(2.0)?.requires_grad());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn requires_grad(&self) -> bool {
        let m = self.0.meta.lock();
        m.requires_grad
            || m.grad_fn.is_some()
            || m.view
                .as_ref()
                .is_some_and(|v| v.pending.is_some() || v.base.requires_grad())
    }

    /// True if the tensor has no grad_fn (after regenerating a stale view's history).
    /// Panics only if regeneration is forbidden; use [`Tensor::try_is_leaf`] to get that error.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// assert!(x.is_leaf() && !x.mul(2.0)?.is_leaf());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_leaf(&self) -> bool {
        self.try_is_leaf().unwrap_or(false)
    }

    /// Like [`is_leaf`](Self::is_leaf) but returns the error PyTorch raises for a view whose
    /// history cannot be regenerated (ViewInplaceForbidden).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert!(Tensor::ones(&[1], DType::F32)?.try_is_leaf()?);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn try_is_leaf(&self) -> Result<bool> {
        Ok(self.grad_fn_checked()?.is_none())
    }

    /// The node that produced this tensor (for debugging; `None` for leaves).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// assert_eq!(x.mul(2.0)?.grad_fn().unwrap().name(), "MulBackward0");
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn grad_fn(&self) -> Option<NodeRef> {
        self.grad_fn_checked().ok().flatten().map(NodeRef)
    }

    pub(crate) fn grad_fn_checked(&self) -> Result<Option<Arc<Node>>> {
        grad_fn_of(self)
    }

    pub(crate) fn output_nr(&self) -> usize {
        self.0.meta.lock().output_nr
    }

    /// (root base, creation meta) if this tensor is a differentiable view.
    pub(crate) fn view_info(&self) -> Option<(Tensor, CreationMeta)> {
        self.0
            .meta
            .lock()
            .view
            .as_ref()
            .map(|v| (v.base.clone(), v.creation))
    }

    /// True if this tensor is a (differentiable) view of another (PyTorch `_is_view()`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 2], DType::F32)?;
    /// assert!(x.t()?.is_view() && !x.detach().is_view());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_view(&self) -> bool {
        self.0.meta.lock().view.is_some()
    }

    /// The root base of a view (PyTorch `_base`), `None` for non-views.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 2], DType::F32)?;
    /// assert!(x.t()?.select(0, 1)?.base().unwrap().is_same(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn base(&self) -> Option<Tensor> {
        self.view_info().map(|v| v.0)
    }

    /// The accumulated gradient of a leaf (or a non-leaf after `retain_grad`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// x.mul(3.0)?.sum()?.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![3.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn grad(&self) -> Option<Tensor> {
        self.0.meta.lock().grad.clone()
    }

    /// Replaces (or clears with `None`) the accumulated gradient.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// x.sum()?.backward()?;
    /// x.set_grad(None)?;
    /// assert!(x.grad().is_none());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn set_grad(&self, grad: Option<Tensor>) -> Result<()> {
        if let Some(g) = &grad {
            if g.shape() != self.shape() {
                bail!(
                    ShapeMismatch,
                    "set_grad",
                    "assigned grad has data of a different size: {:?} vs {:?}",
                    g.shape(),
                    self.shape()
                );
            }
            if g.dtype() != self.dtype() {
                bail!(
                    DTypeMismatch,
                    "set_grad",
                    "assigned grad has data of a different type: {} vs {}",
                    g.dtype(),
                    self.dtype()
                );
            }
        }
        self.0.meta.lock().grad = grad;
        Ok(())
    }

    /// Keeps `.grad` for a non-leaf after backward (no-op on leaves).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// let y = x.mul(2.0)?;
    /// y.retain_grad()?;
    /// y.sum()?.backward()?;
    /// assert_eq!(y.grad().unwrap().to_vec::<f64>()?, vec![1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn retain_grad(&self) -> Result<()> {
        if !self.requires_grad() {
            bail!(
                InvalidArgument,
                "retain_grad",
                "can't retain_grad on a Tensor that does not require grad (`requires_grad()` is false)"
            );
        }
        let Some(node) = self.grad_fn_checked()? else {
            return Ok(());
        };
        let mut m = self.0.meta.lock();
        if m.retains_grad {
            return Ok(());
        }
        m.retains_grad = true;
        node.add_retained(m.output_nr, Arc::downgrade(&self.0));
        Ok(())
    }

    /// Registers a hook run on this tensor's gradient during backward; returning `Some(g)`
    /// replaces the gradient. The returned handle removes the hook
    /// ([`RemovableHandle::remove`]); dropping it keeps the hook, as in PyTorch.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// let handle = x.register_hook(|g| Ok(Some(g.mul(10.0)?)))?;
    /// x.sum()?.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![10.0, 10.0]);
    /// handle.remove();
    /// x.sum()?.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![11.0, 11.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn register_hook(
        &self,
        hook: impl Fn(&Tensor) -> Result<Option<Tensor>> + Send + Sync + 'static,
    ) -> Result<RemovableHandle> {
        if !self.requires_grad() {
            bail!(
                InvalidArgument,
                "register_hook",
                "cannot register a hook on a tensor that doesn't require gradient"
            );
        }
        let h: Hook = Arc::new(hook);
        let id = next_hook_id();
        Ok(match self.grad_fn_checked()? {
            None => {
                self.0.meta.lock().hooks.push((id, h));
                let leaf = Arc::downgrade(&self.0);
                RemovableHandle::new(id, move |id| {
                    if let Some(t) = leaf.upgrade() {
                        t.meta.lock().hooks.retain(|(i, _)| *i != id);
                    }
                })
            }
            Some(node) => {
                let nr = self.output_nr();
                node.add_pre_hook(nr, id, h);
                let node = Arc::downgrade(&node);
                RemovableHandle::new(id, move |id| {
                    if let Some(n) = node.upgrade() {
                        n.remove_pre_hook(id);
                    }
                })
            }
        })
    }

    /// Registers a hook run on this leaf after each backward has accumulated a gradient into
    /// its `.grad` (PyTorch's `register_post_accumulate_grad_hook`): the hook gets the leaf and
    /// reads the updated `x.grad()`. Only leaves requiring grad accept one (`InvalidArgument`).
    /// The returned handle removes the hook ([`RemovableHandle::remove`]).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// x.register_post_accumulate_grad_hook(|p| {
    ///     assert_eq!(p.grad().unwrap().to_vec::<f64>()?, vec![3.0, 3.0]);
    ///     Ok(())
    /// })?;
    /// x.mul(3.0)?.sum()?.backward()?;
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn register_post_accumulate_grad_hook(
        &self,
        hook: impl Fn(&Tensor) -> Result<()> + Send + Sync + 'static,
    ) -> Result<RemovableHandle> {
        if !self.requires_grad() {
            bail!(
                InvalidArgument,
                "register_post_accumulate_grad_hook",
                "cannot register a hook on a tensor that doesn't require gradient"
            );
        }
        if !self.try_is_leaf()? {
            bail!(
                InvalidArgument,
                "register_post_accumulate_grad_hook",
                "post accumulate grad hooks cannot be registered on non-leaf tensors"
            );
        }
        let id = next_hook_id();
        self.0
            .meta
            .lock()
            .post_accumulate_hooks
            .push((id, Arc::new(hook)));
        let leaf = Arc::downgrade(&self.0);
        Ok(RemovableHandle::new(id, move |id| {
            if let Some(t) = leaf.upgrade() {
                t.meta
                    .lock()
                    .post_accumulate_hooks
                    .retain(|(i, _)| *i != id);
            }
        }))
    }

    /// A tensor sharing storage and version counter, cut from the graph (not a view).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// let d = x.detach();
    /// assert!(!d.requires_grad() && d.shares_storage(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn detach(&self) -> Tensor {
        self.shallow()
    }

    /// Cuts this tensor from the graph in place: no history, no leaf flag (a leaf afterwards).
    /// A view cannot be detached in place (use [`Tensor::detach`]); the version is unchanged.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?.requires_grad_(true)?;
    /// let y = x.mul(2.0)?;
    /// y.detach_()?;
    /// assert!(!y.requires_grad() && y.is_leaf());
    /// assert!(x.narrow(0, 0, 1)?.detach_().is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn detach_(&self) -> Result<Tensor> {
        let mut m = self.0.meta.lock();
        if m.view.is_some() {
            bail!(
                ViewInplaceForbidden,
                "detach_",
                "Can't detach views in-place. Use detach() instead."
            );
        }
        m.requires_grad = false;
        m.grad_fn = None;
        m.output_nr = 0;
        Ok(self.clone())
    }

    /// `backward()` of a one-element tensor (gradient 1).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[3], DType::F64)?.requires_grad_(true)?;
    /// x.sum()?.backward()?;
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![1.0; 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn backward(&self) -> Result<()> {
        super::backward(std::slice::from_ref(self), &[None], Default::default())
    }

    /// PyTorch's `backward(gradient, retain_graph=, create_graph=)`, the keywords as
    /// [`BackwardOptions`](crate::autograd::BackwardOptions).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, autograd::BackwardOptions};
    /// let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    /// let y = x.mul(2.0)?;
    /// let g = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    /// y.backward_with(Some(&g), BackwardOptions::default().retain_graph(true))?;
    /// y.backward_with(Some(&g), BackwardOptions::default())?; // the graph was kept
    /// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![4.0, 8.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn backward_with(
        &self,
        gradient: Option<&Tensor>,
        options: crate::autograd::BackwardOptions,
    ) -> Result<()> {
        super::backward(std::slice::from_ref(self), &[gradient.cloned()], options)
    }

    pub(crate) fn storage_unique(&self) -> bool {
        self.storage().is_unique()
    }
}
