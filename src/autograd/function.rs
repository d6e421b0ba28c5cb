//! User-defined differentiable ops: PyTorch's `torch.autograd.Function` ([`Function`], whose
//! documentation holds the rules and an example), the contexts its forward and backward see,
//! and `apply`, which runs the forward and records the node.

use super::node::{Backward, BackwardCtx, Grads, Node, OutputMeta, output_meta};
use super::saved::SavedTensor;
use super::view::{check_inplace, grad_edges, record_inplace};
use super::{is_grad_enabled, no_grad};
use crate::layout::Dims;
use crate::{DType, Result, Tensor, bail};
use std::sync::Arc;

/// A differentiable op defined by its forward and backward (PyTorch's
/// `torch.autograd.Function`). The implementing value is moved into the recorded node: fields
/// set in `forward` (`&mut self`) are what PyTorch code stores on `ctx` (non-tensor state for
/// the backward).
///
/// A type implementing [`Function`] gives a forward and a backward written with tapegrad
/// tensors; [`Function::apply`] runs the forward without recording (like PyTorch, under
/// [`no_grad`](crate::autograd::no_grad)) and records one node whose formula is the backward. What the
/// forward tells its [`FunctionCtx`] follows PyTorch's rules:
///
/// - [`save_for_backward`](FunctionCtx::save_for_backward): the tensors the backward reads
///   (inputs, outputs or intermediates). They are version-checked when the backward runs, with
///   the built-in ops' error (`SavedTensorModified`, the same message); a saved output leads
///   back to this node under `create_graph`.
/// - [`mark_dirty`](FunctionCtx::mark_dirty): inputs the forward wrote in place, returned as
///   outputs. The leaf and view checks of in-place ops apply, the tensor's history becomes this
///   node, and a written view rebases its base's history on a CopySlices (the function must
///   then return that one tensor).
/// - [`mark_non_differentiable`](FunctionCtx::mark_non_differentiable): outputs that get no
///   history (integer and bool outputs never do); their gradient reaches the backward as zeros.
/// - [`needs_input_grad`](FunctionCtx::needs_input_grad): whether input `i` requires grad, in
///   the forward and the backward.
///
/// The backward receives one gradient per output (zeros for an output that got none, PyTorch's
/// `materialize_grads`), and returns one optional gradient per input (extra trailing `None`s are
/// allowed; a gradient is reduced to its input's shape and cast to its dtype like a built-in
/// op's). It runs in grad mode under `create_graph`, so a backward made of differentiable ops
/// has a second derivative. Do not write the gradients it is given in place.
///
/// One deliberate difference: PyTorch assumes an in-place view is the function's *first* input
/// (its CopySlices takes edge 0 for the view), so with the written view elsewhere it sends
/// gradients to the wrong tensors; here any input may be the written view.
///
/// ```
/// use tapegrad::autograd::{Function, FunctionCtx, FunctionGradCtx};
/// use tapegrad::{Result, Tensor};
///
/// /// `x * exp(x)`, saving its input.
/// struct XExp;
///
/// impl Function for XExp {
///     fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
///         let x = &inputs[0];
///         ctx.save_for_backward(&[x]);
///         Ok(vec![x.mul(&x.exp()?)?])
///     }
///     fn backward(&self, ctx: &FunctionGradCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
///         let x = &ctx.saved_tensors()[0];
///         // d/dx x e^x = (1 + x) e^x
///         Ok(vec![Some(grads[0].mul(&x.add(1.0)?.mul(&x.exp()?)?)?)])
///     }
/// }
///
/// let x = Tensor::from_vec(vec![0.0f64, 1.0], &[2])?.requires_grad_(true)?;
/// let y = XExp.apply(&[&x])?.remove(0);
/// assert_eq!(y.grad_fn().unwrap().name(), "XExpBackward");
/// y.sum()?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![1.0, 2.0 * 1f64.exp()]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub trait Function: Send + Sync + Sized + 'static {
    /// The forward on `inputs` (the tensors given to [`apply`](Function::apply), same
    /// handles), run without recording. Returns the outputs.
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>>;

    /// The gradients of the inputs (one optional tensor each) from `grads`, the gradients of
    /// the outputs (one each, zeros for an output that received none).
    fn backward(&self, ctx: &FunctionGradCtx, grads: &[Tensor]) -> Result<Vec<Option<Tensor>>>;

    /// The recorded node's name. Default: PyTorch's, the type's name followed by `Backward`.
    fn name(&self) -> &'static str {
        default_name::<Self>()
    }

    /// Runs the function on `inputs` and records it when grad mode is on and an input requires
    /// grad. Errors: those of the forward, and of the in-place rules for inputs marked dirty.
    fn apply(self, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
        apply(self, inputs)
    }
}

/// What the forward tells autograd (PyTorch's `ctx` in `forward`).
pub struct FunctionCtx {
    needs: Vec<bool>,
    to_save: Vec<Tensor>,
    dirty: Vec<Tensor>,
    non_differentiable: Vec<Tensor>,
}

impl FunctionCtx {
    /// Saves `tensors` for the backward ([`FunctionGradCtx::saved_tensors`], in this order),
    /// replacing an earlier call's. Each is version-checked when the backward runs.
    pub fn save_for_backward(&mut self, tensors: &[&Tensor]) {
        self.to_save = tensors.iter().map(|t| (*t).clone()).collect();
    }
    /// Marks inputs the forward wrote in place; each must be returned as an output.
    pub fn mark_dirty(&mut self, tensors: &[&Tensor]) {
        self.dirty.extend(tensors.iter().map(|t| (*t).clone()));
    }
    /// Marks outputs that get no gradient history.
    pub fn mark_non_differentiable(&mut self, tensors: &[&Tensor]) {
        self.non_differentiable
            .extend(tensors.iter().map(|t| (*t).clone()));
    }
    /// Whether input `i` requires grad (false past the last input).
    pub fn needs_input_grad(&self, i: usize) -> bool {
        self.needs.get(i).copied().unwrap_or(false)
    }
}

/// What the backward reads (PyTorch's `ctx` in `backward`).
pub struct FunctionGradCtx<'a> {
    saved: &'a [Tensor],
    needs: &'a [bool],
}

impl FunctionGradCtx<'_> {
    /// The tensors given to [`FunctionCtx::save_for_backward`], checked against in-place
    /// modification since (under `create_graph`, with their history).
    pub fn saved_tensors(&self) -> &[Tensor] {
        self.saved
    }
    /// Whether input `i` required grad when the function ran (its gradient may be `None`
    /// otherwise).
    pub fn needs_input_grad(&self, i: usize) -> bool {
        self.needs.get(i).copied().unwrap_or(false)
    }
}

/// `<type name>Backward`, built once per type.
fn default_name<F: 'static>() -> &'static str {
    use std::any::TypeId;
    use std::collections::HashMap;
    static NAMES: parking_lot::Mutex<Option<HashMap<TypeId, &'static str>>> =
        parking_lot::Mutex::new(None);
    let mut names = NAMES.lock();
    names
        .get_or_insert_default()
        .entry(TypeId::of::<F>())
        .or_insert_with(|| {
            let full = std::any::type_name::<F>();
            let bare = full.split('<').next().unwrap_or(full);
            let last = bare.rsplit("::").next().unwrap_or(bare);
            Box::leak(format!("{last}Backward").into_boxed_str())
        })
}

fn same(a: &Tensor, b: &Tensor) -> bool {
    Arc::ptr_eq(&a.0, &b.0)
}

/// The recorded formula: the user's backward with PyTorch's checks around it. `order[k]` is the
/// user's input number of the node's input `k` (the written view first when the node sits in a
/// CopySlices, else the identity).
struct CustomBackward<F: Function> {
    f: F,
    name: &'static str,
    needs: Vec<bool>,
    outputs: Vec<(Dims, DType)>,
    order: Vec<usize>,
}

impl<F: Function> Backward for CustomBackward<F> {
    fn name(&self) -> &'static str {
        self.name
    }
    fn apply(&self, ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        let mut gs = Vec::with_capacity(self.outputs.len());
        for (k, (shape, dtype)) in self.outputs.iter().enumerate() {
            gs.push(match grads.get(k).cloned().flatten() {
                Some(g) => g,
                None => Tensor::zeros(shape, *dtype)?,
            });
        }
        let uctx = FunctionGradCtx {
            saved: ctx.saved,
            needs: &self.needs,
        };
        let res = self.f.backward(&uctx, &gs)?;
        let n = self.needs.len();
        if res.len() < n || res[n..].iter().any(Option::is_some) {
            bail!(
                InvalidArgument,
                "backward",
                "function {} returned an incorrect number of gradients (expected {}, got {})",
                self.name,
                n,
                res.len()
            );
        }
        Ok(self.order.iter().map(|&i| res[i].clone()).collect())
    }
}

/// How a forward output relates to the inputs.
#[derive(Clone, Copy, PartialEq)]
enum Out {
    /// Input `k`, written in place (marked dirty).
    Dirty(usize),
    /// Input `k`, returned unchanged: the output is an alias of it.
    Input(usize),
    Fresh,
}

fn apply<F: Function>(mut f: F, inputs: &[&Tensor]) -> Result<Vec<Tensor>> {
    let needs: Vec<bool> = inputs.iter().map(|t| t.requires_grad()).collect();
    let mut ctx = FunctionCtx {
        needs: needs.clone(),
        to_save: Vec::new(),
        dirty: Vec::new(),
        non_differentiable: Vec::new(),
    };
    let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
    let outputs = {
        let _g = no_grad();
        f.forward(&mut ctx, &owned)?
    };
    if ctx
        .dirty
        .iter()
        .any(|d| !outputs.iter().any(|o| same(o, d)))
    {
        bail!(
            InvalidArgument,
            "apply",
            "Some elements marked as dirty during the forward method were not returned as output. The inputs that are modified inplace must all be outputs of the Function."
        );
    }
    let kinds: Vec<Out> = outputs
        .iter()
        .map(|o| match inputs.iter().position(|i| same(i, o)) {
            Some(k) if ctx.dirty.iter().any(|d| same(d, o)) => Out::Dirty(k),
            Some(k) => Out::Input(k),
            None => Out::Fresh,
        })
        .collect();
    let differentiable: Vec<bool> = outputs
        .iter()
        .map(|o| {
            o.dtype().is_differentiable() && !ctx.non_differentiable.iter().any(|n| same(n, o))
        })
        .collect();
    let executable = is_grad_enabled() && needs.iter().any(|&b| b);
    if !executable {
        return alias_inputs(outputs, &kinds, &differentiable, false);
    }
    let dirty_view = kinds.iter().find_map(|k| match k {
        Out::Dirty(k) if inputs[*k].is_view() => Some(*k),
        _ => None,
    });
    // (after the outputs are final: a saved output is one of them, by handle)
    let saved_of = |outs: &[Tensor]| -> Vec<SavedTensor> {
        ctx.to_save
            .iter()
            .map(|s| match outs.iter().position(|o| same(o, s)) {
                Some(j) if differentiable[j] && !matches!(kinds[j], Out::Input(_)) => {
                    SavedTensor::output(s, j)
                }
                _ if inputs.iter().any(|i| same(i, s)) => SavedTensor::input(s),
                _ => SavedTensor::private(s.clone()),
            })
            .collect()
    };
    let meta: Vec<(Dims, DType)> = outputs.iter().map(output_meta).collect();
    let name = f.name();
    if let Some(k) = dirty_view {
        if outputs.len() != 1 {
            bail!(
                InvalidArgument,
                "apply",
                "If your Function modifies inplace an input that is a view of another Tensor, your Function cannot return more than one Tensor. Make sure the input is not a view (use copy() for example) or make your Function return only that Tensor."
            );
        }
        let view = inputs[k];
        let others: Vec<&Tensor> = (0..inputs.len())
            .filter(|&i| i != k)
            .map(|i| inputs[i])
            .collect();
        let rec = check_inplace(view, &others)?;
        let order: Vec<usize> = std::iter::once(k)
            .chain((0..inputs.len()).filter(|&i| i != k))
            .collect();
        let saved = saved_of(&outputs);
        let bw = CustomBackward {
            f,
            name,
            needs,
            outputs: meta,
            order,
        };
        record_inplace(rec, view, || saved, bw)?;
        return Ok(outputs);
    }
    for (o, k) in outputs.iter().zip(&kinds) {
        if let Out::Dirty(_) = k {
            // the leaf check of in-place ops (the written tensor is not a view here)
            check_inplace(o, &[])?;
        }
    }
    let Some(edges) = grad_edges(inputs)? else {
        return alias_inputs(outputs, &kinds, &differentiable, false);
    };
    let outputs = alias_inputs(outputs, &kinds, &differentiable, true)?;
    let saved = saved_of(&outputs);
    let out_meta: OutputMeta = meta.iter().cloned().collect();
    let bw = CustomBackward {
        f,
        name,
        needs,
        outputs: meta,
        order: (0..inputs.len()).collect(),
    };
    let node = Node::new(bw, edges, saved, out_meta);
    for (j, o) in outputs.iter().enumerate() {
        if differentiable[j] {
            let version = o.version();
            o.0.meta.lock().set_history(Some(node.clone()), j, version);
        }
    }
    Ok(outputs)
}

/// The outputs with each returned-unchanged input replaced by an alias of it: a view (given a
/// history later) when `differentiable` and `recorded`, else a detached alias.
fn alias_inputs(
    mut outputs: Vec<Tensor>,
    kinds: &[Out],
    differentiable: &[bool],
    recorded: bool,
) -> Result<Vec<Tensor>> {
    for (j, o) in outputs.iter_mut().enumerate() {
        if let Out::Input(_) = kinds[j] {
            *o = if recorded && differentiable[j] {
                let _g = no_grad();
                o.alias()?
            } else {
                o.detach()
            };
        }
    }
    Ok(outputs)
}
