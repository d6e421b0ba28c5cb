//! User-defined autograd functions (`tapegrad::autograd::Function`, PyTorch's
//! `autograd.Function`): gradients, several inputs and outputs, `needs_input_grad`,
//! `mark_non_differentiable`, `mark_dirty` (plain tensors and views), the saved-tensor version
//! check and double backward through a differentiable backward. The gradcheck and gradgradcheck
//! rows are in `gradcheck_all/custom.rs`; the functions both use are in `custom_fns.rs`.

use crate::common::{R, assert_close, leaf64, t64};
use crate::custom_fns::{ExpOut, MulInto, Three, XExp};
use std::sync::{Arc, Mutex};
use tapegrad::autograd::{self, Function, FunctionCtx, FunctionGradCtx};
use tapegrad::{ErrorKind, Result, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

fn three(x: &Tensor, y: &Tensor) -> Result<Vec<Tensor>> {
    Three.apply(&[x, y])
}

#[test]
fn gradient_and_node_name() -> R {
    let x = leaf64(&[0.0, 1.0, -0.5], &[3]);
    let y = XExp.apply(&[&x])?.remove(0);
    assert_eq!(y.grad_fn().unwrap().name(), "XExpBackward");
    assert_eq!(
        ExpOut.apply(&[&x])?[0].grad_fn().unwrap().name(),
        "MyExpBackward"
    );
    assert_eq!(vals(&y), vals(&x.mul(&x.exp()?)?));
    y.sum()?.backward()?;
    let want: Vec<f64> = [0.0f64, 1.0, -0.5]
        .iter()
        .map(|v| (1.0 + v) * v.exp())
        .collect();
    assert_close(&vals(&x.grad().unwrap()), &want, 1e-15);
    Ok(())
}

#[test]
fn several_outputs_one_unused() -> R {
    let x = leaf64(&[0.5, -1.0], &[2]);
    let y = leaf64(&[2.0, 3.0], &[2]);
    let outs = three(&x, &y)?;
    assert_eq!(outs.len(), 3);
    let node = outs[0].grad_fn().unwrap();
    assert_eq!(node.name(), "ThreeBackward");
    assert_eq!(node.next_functions().len(), 2);
    // only outputs 0 and 2 are used: output 1's gradient reaches the backward as zeros
    outs[0].mul(2.0)?.add(&outs[2])?.sum()?.backward()?;
    let gx: Vec<f64> = [(0.5f64, 2.0f64), (-1.0, 3.0)]
        .iter()
        .map(|(x, y)| 2.0 * y + x.cos())
        .collect();
    assert_close(&vals(&x.grad().unwrap()), &gx, 1e-15);
    assert_eq!(vals(&y.grad().unwrap()), vec![1.0, -2.0]);
    Ok(())
}

/// Records what the forward and backward saw of `needs_input_grad`.
struct Needs(Arc<Mutex<Vec<(bool, bool)>>>);

impl Function for Needs {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let seen = (ctx.needs_input_grad(0), ctx.needs_input_grad(1));
        self.0.lock().unwrap().push(seen);
        Ok(vec![inputs[0].mul(&inputs[1])?])
    }
    fn backward(&self, ctx: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        let seen = (ctx.needs_input_grad(0), ctx.needs_input_grad(1));
        self.0.lock().unwrap().push(seen);
        // returns a gradient for an input that needs none (ignored) and a trailing None
        Ok(vec![Some(g[0].clone()), Some(g[0].clone()), None])
    }
}

#[test]
fn needs_input_grad_in_forward_and_backward() -> R {
    let seen = Arc::new(Mutex::new(Vec::new()));
    let x = leaf64(&[1.0, 2.0], &[2]);
    let c = t64(&[3.0, 4.0], &[2]);
    let out = Needs(seen.clone()).apply(&[&c, &x])?.remove(0);
    out.sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![1.0, 1.0]);
    assert!(c.grad().is_none());
    // as in PyTorch, the flags are the inputs' requires_grad, also under no_grad
    {
        let _g = autograd::no_grad();
        let o = Needs(seen.clone()).apply(&[&x, &c])?.remove(0);
        assert!(o.grad_fn().is_none() && !o.requires_grad());
    }
    assert_eq!(
        *seen.lock().unwrap(),
        vec![(false, true), (false, true), (true, false)]
    );
    Ok(())
}

/// `(x * 2, argmax-like index count)`: the second output is marked non-differentiable.
struct WithCount;

impl Function for WithCount {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let y = inputs[0].mul(2.0)?;
        let positive = inputs[0].gt(0.0)?.to_dtype(tapegrad::DType::F64)?;
        ctx.mark_non_differentiable(&[&positive]);
        Ok(vec![y, positive])
    }
    fn backward(&self, _: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        // the non-differentiable output's gradient is materialized as zeros
        assert_eq!(g[1].to_vec::<f64>()?, vec![0.0; 3]);
        Ok(vec![Some(g[0].mul(2.0)?)])
    }
}

#[test]
fn mark_non_differentiable() -> R {
    let x = leaf64(&[1.0, -2.0, 3.0], &[3]);
    let outs = WithCount.apply(&[&x])?;
    assert!(outs[0].requires_grad() && !outs[1].requires_grad());
    assert_eq!(vals(&outs[1]), vec![1.0, 0.0, 1.0]);
    outs[0].sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0; 3]);
    Ok(())
}

#[test]
fn saved_input_modified_in_place_is_the_builtin_error() -> R {
    let run = |custom: bool| -> tapegrad::Error {
        let leaf = leaf64(&[0.5, 1.5], &[2]);
        let x = leaf.mul(1.0).unwrap();
        let y = if custom {
            XExp.apply(&[&x]).unwrap().remove(0)
        } else {
            x.sin().unwrap()
        };
        x.add_(1.0).unwrap();
        y.sum().unwrap().backward().unwrap_err()
    };
    let (custom, builtin) = (run(true), run(false));
    assert_eq!(custom.kind(), ErrorKind::SavedTensorModified);
    assert_eq!(custom.kind(), builtin.kind());
    assert_eq!(custom.message(), builtin.message());
    // each names the node it was raised in and the forward call that created it
    assert!(
        custom.context().unwrap().starts_with(
            "raised in the backward of node XExpBackward, created by the forward op `XExp::apply`."
        ),
        "{:?}",
        custom.context()
    );
    assert!(
        builtin.context().unwrap().starts_with(
            "raised in the backward of node SinBackward0, created by the forward op `sin`."
        ),
        "{:?}",
        builtin.context()
    );
    // a saved output: named as this node's output, like a built-in's saved result
    let x = leaf64(&[0.5], &[1]);
    let y = ExpOut.apply(&[&x])?.remove(0);
    y.mul_(2.0)?;
    let e = y.sum()?.backward().unwrap_err();
    let b = x.exp()?;
    b.mul_(2.0)?;
    let eb = b.sum()?.backward().unwrap_err();
    assert_eq!(
        e.message().replace("MyExpBackward", "ExpBackward0"),
        eb.message()
    );
    Ok(())
}

#[test]
fn mark_dirty_on_a_plain_tensor() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let w = leaf64(&[3.0, -1.0], &[2]);
    let a = x.mul(1.0)?;
    let out = MulInto.apply(&[&w, &a])?.remove(0);
    // the input itself was written and returned, with the version bump and a new history
    assert!(a.shares_storage(&out) && a.version() == 1);
    assert_eq!(a.grad_fn().unwrap().name(), "MulIntoBackward");
    assert_eq!(vals(&a), vec![3.0, -2.0]);
    a.sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![3.0, -1.0]);
    assert_eq!(vals(&w.grad().unwrap()), vec![1.0, 2.0]);
    // on a leaf requiring grad: the built-in in-place error, after the forward ran
    let leaf = leaf64(&[1.0, 2.0], &[2]);
    let e = MulInto.apply(&[&w, &leaf]).unwrap_err();
    assert_eq!(e, leaf.mul_(2.0).unwrap_err());
    Ok(())
}

#[test]
fn mark_dirty_on_a_view_rebases_the_base() -> R {
    let x = leaf64(&[1.0, 2.0, 3.0], &[3]);
    let w = leaf64(&[5.0], &[1]);
    let b = x.copy()?;
    let v = b.narrow(0, 1, 2)?;
    let out = MulInto.apply(&[&w, &v])?.remove(0);
    assert!(out.is_view());
    assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    assert_eq!(vals(&b), vec![1.0, 10.0, 15.0]);
    b.sum()?.backward()?;
    // the written view is the second input: its gradient goes to the base's region, the first
    // input's to `w` (PyTorch sends both to the base here)
    assert_eq!(vals(&x.grad().unwrap()), vec![1.0, 5.0, 5.0]);
    assert_eq!(vals(&w.grad().unwrap()), vec![5.0]);
    Ok(())
}

/// Writes its input in place, marks it dirty, and also returns a second tensor.
struct DirtyTwo;

impl Function for DirtyTwo {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        let x = &inputs[0];
        x.mul_(2.0)?;
        ctx.mark_dirty(&[x]);
        Ok(vec![x.clone(), x.add(1.0)?])
    }
    fn backward(&self, _: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(g[0].add(&g[1])?.mul(2.0)?)])
    }
}

/// Writes its input in place, marks it dirty, but does not return it.
struct DirtyHidden;

impl Function for DirtyHidden {
    fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        inputs[0].add_(1.0)?;
        ctx.mark_dirty(&[&inputs[0]]);
        Ok(vec![inputs[0].mul(2.0)?])
    }
    fn backward(&self, _: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(g[0].mul(2.0)?)])
    }
}

#[test]
fn mark_dirty_errors() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let e = DirtyHidden.apply(&[&x.copy()?]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().starts_with("Some elements marked as dirty"));
    // several outputs are fine for a plain tensor, refused for a view
    let a = x.copy()?;
    let outs = DirtyTwo.apply(&[&a])?;
    outs[0].add(&outs[1])?.sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![4.0, 4.0]);
    let b = x.copy()?;
    let e = DirtyTwo.apply(&[&b.narrow(0, 0, 1)?]).unwrap_err();
    assert!(e.message().contains("cannot return more than one Tensor"));
    Ok(())
}

/// Returns a wrong number of gradients.
struct TooMany;

impl Function for TooMany {
    fn forward(&mut self, _: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].mul(2.0)?])
    }
    fn backward(&self, _: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(g[0].clone()), Some(g[0].clone())])
    }
}

#[test]
fn wrong_gradient_count_is_an_error() -> R {
    let x = leaf64(&[1.0], &[1]);
    let e = TooMany.apply(&[&x])?[0].sum()?.backward().unwrap_err();
    assert_eq!(
        e.message(),
        "function TooManyBackward returned an incorrect number of gradients (expected 1, got 2)"
    );
    Ok(())
}

/// Returns its input unchanged (and its double).
struct PassThrough;

impl Function for PassThrough {
    fn forward(&mut self, _: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
        Ok(vec![inputs[0].clone(), inputs[0].mul(2.0)?])
    }
    fn backward(&self, _: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
        Ok(vec![Some(g[0].mul(3.0)?.add(&g[1].mul(2.0)?)?)])
    }
}

#[test]
fn an_input_returned_unchanged_is_an_alias_with_the_new_history() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let outs = PassThrough.apply(&[&x])?;
    assert!(outs[0].is_view() && outs[0].shares_storage(&x));
    assert!(x.grad_fn().is_none());
    assert_eq!(outs[0].grad_fn().unwrap().name(), "PassThroughBackward");
    outs[0].sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![3.0, 3.0]);
    Ok(())
}

#[test]
fn double_backward_through_the_user_backward() -> R {
    // d²/dx² (x e^x) = (2 + x) e^x
    let x = leaf64(&[0.25, -1.0], &[2]);
    let y = XExp.apply(&[&x])?.remove(0);
    let g = autograd::grad(
        &[y.sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    let g = g[0].clone().unwrap();
    assert!(g.requires_grad());
    let gg = autograd::grad(
        &[g.sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    let want: Vec<f64> = [0.25f64, -1.0]
        .iter()
        .map(|v| (2.0 + v) * v.exp())
        .collect();
    assert_close(&vals(gg[0].as_ref().unwrap()), &want, 1e-14);
    // a saved output leads back to the node: d²/dx² e^x = e^x
    let y = ExpOut.apply(&[&x])?.remove(0);
    let g = autograd::grad(
        &[y.sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    let gg = autograd::grad(
        &[g[0].clone().unwrap().sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    assert_eq!(vals(gg[0].as_ref().unwrap()), vals(&x.exp()?));
    Ok(())
}
