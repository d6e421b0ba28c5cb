//! Activation checkpointing (`autograd::checkpoint`, PyTorch's non-reentrant
//! `torch.utils.checkpoint`): gradients equal to the run without it (several inputs, inputs
//! that do not require grad, captured parameters, in-place ops and views inside the function,
//! `autograd::grad`, double backward), the saved-input version rule with the built-in message,
//! backward twice, and the recomputation check. Dropout and the peak-memory figure depend on
//! process-global state (the generator, the live-bytes gauge): they are in `seeded`'s
//! `checkpoint_seeded.rs`.

use crate::common::{R, leaf64, t64};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use tapegrad::autograd::{self, checkpoint};
use tapegrad::{ErrorKind, Result, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

/// Fresh leaves holding the same values, requiring grad like the originals.
fn twin(ts: &[&Tensor]) -> Vec<Tensor> {
    ts.iter()
        .map(|t| {
            let d = t.detach().copy().unwrap();
            if t.requires_grad() {
                d.requires_grad_(true).unwrap()
            } else {
                d
            }
        })
        .collect()
}

/// The function under test: two inputs requiring grad (one a non-leaf), one that does not,
/// two captured parameters, two outputs, an in-place op and a written view.
fn block(i: &[Tensor], w: &Tensor, v: &Tensor) -> Result<Vec<Tensor>> {
    let h = i[0].matmul(w)?.mul(&i[1])?;
    h.narrow(1, 0, 2)?.mul_(3.0)?;
    h.tanh_()?;
    let o0 = h.add(&i[2])?.sin()?;
    let o1 = i[0].sin()?.mul(&i[2])?.matmul(v)?.exp()?;
    Ok(vec![o0, o1])
}

fn loss(o: &[Tensor]) -> Result<Tensor> {
    o[0].sum()?.add(&o[1].pow(2.0)?.sum()?)
}

const A: [f64; 6] = [0.3, -0.2, 0.5, 0.1, -0.4, 0.7];
const B: [f64; 6] = [1.0, 0.5, -0.5, 2.0, 1.5, -1.0];
const C: [f64; 6] = [0.2, 0.0, -0.3, 0.4, 0.1, -0.6];
const W: [f64; 9] = [0.1, 0.2, -0.3, 0.4, -0.5, 0.6, 0.7, -0.8, 0.9];
const V: [f64; 6] = [0.3, -0.1, 0.2, 0.5, -0.4, 0.6];

#[test]
fn gradients_equal_the_plain_run_for_inputs_and_parameters() -> R {
    let run = |ck: bool| -> Result<Vec<Vec<f64>>> {
        let a0 = leaf64(&A, &[2, 3]);
        let b = leaf64(&B, &[2, 3]);
        let c = t64(&C, &[2, 3]);
        let w = leaf64(&W, &[3, 3]);
        let v = leaf64(&V, &[3, 2]);
        let a = a0.mul(1.5)?;
        let outs = if ck {
            let (w2, v2) = (w.clone(), v.clone());
            checkpoint(move |i| block(i, &w2, &v2), &[&a, &b, &c])?
        } else {
            block(&[a.clone(), b.clone(), c.clone()], &w, &v)?
        };
        assert!(outs[0].requires_grad());
        loss(&outs)?.backward()?;
        let mut r = vec![vals(&outs[0]), vals(&outs[1])];
        for t in [&a0, &b, &w, &v] {
            r.push(vals(&t.grad().unwrap()));
        }
        assert!(c.grad().is_none());
        Ok(r)
    };
    let plain = run(false)?;
    let ck = run(true)?;
    assert_eq!(ck, plain);
    Ok(())
}

#[test]
fn parameters_get_gradients_when_no_input_requires_grad() -> R {
    let x = t64(&A, &[2, 3]);
    let w = leaf64(&W, &[3, 3]);
    let w2 = w.clone();
    let y = checkpoint(move |i| Ok(vec![i[0].matmul(&w2)?.tanh()?.exp()?]), &[&x])?;
    assert!(y[0].requires_grad());
    let g = autograd::grad(
        &[y[0].sum()?],
        std::slice::from_ref(&w),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    let wt = twin(&[&w]).remove(0);
    let want = autograd::grad(
        &[x.matmul(&wt)?.tanh()?.exp()?.sum()?],
        std::slice::from_ref(&wt),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    assert_eq!(
        vals(g[0].as_ref().unwrap()),
        vals(want[0].as_ref().unwrap())
    );
    assert!(w.grad().is_none(), "autograd::grad does not accumulate");
    Ok(())
}

#[test]
fn double_backward_through_a_checkpoint() -> R {
    let f = |x: &Tensor| -> Result<Tensor> { x.sin()?.mul(x)?.exp() };
    let x = leaf64(&A, &[6]);
    let y = checkpoint(move |i| Ok(vec![f(&i[0])?]), &[&x])?;
    let g = autograd::grad(
        &[y[0].sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    g[0].as_ref().unwrap().pow(2.0)?.sum()?.backward()?;
    let xt = leaf64(&A, &[6]);
    let gt = autograd::grad(
        &[f(&xt)?.sum()?],
        std::slice::from_ref(&xt),
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    gt[0].as_ref().unwrap().pow(2.0)?.sum()?.backward()?;
    assert_eq!(vals(g[0].as_ref().unwrap()), vals(gt[0].as_ref().unwrap()));
    assert_eq!(vals(&x.grad().unwrap()), vals(&xt.grad().unwrap()));
    Ok(())
}

#[test]
fn an_input_written_in_place_after_the_forward_is_refused_like_a_saved_tensor() -> R {
    // the function saves its input (sin): the same error, word for word, as without checkpoint
    let err = |ck: bool| -> tapegrad::Error {
        let x = leaf64(&A, &[6]);
        let a = x.mul(2.0).unwrap();
        let y = if ck {
            checkpoint(|i| Ok(vec![i[0].sin()?]), &[&a])
                .unwrap()
                .remove(0)
        } else {
            a.sin().unwrap()
        };
        a.add_(1.0).unwrap();
        y.sum().unwrap().backward().unwrap_err()
    };
    let (plain, ck) = (err(false), err(true));
    assert_eq!(ck.kind(), ErrorKind::SavedTensorModified);
    assert_eq!(ck.message(), plain.message());
    assert!(
        ck.message()
            .contains("[torch.DoubleTensor [6]], which is output 0 of AddBackward0, is at version 1; expected version 0"),
        "{}",
        ck.message()
    );
    // the function does not save its input, but the checkpoint does (PyTorch's rule: the
    // recomputation would read the written values)
    let x = leaf64(&A, &[6]);
    let a = x.mul(2.0)?;
    let y = checkpoint(|i| Ok(vec![i[0].add(1.0)?.exp()?]), &[&a])?.remove(0);
    a.add_(1.0)?;
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
    assert!(
        e.message().contains("is at version 1; expected version 0"),
        "{}",
        e.message()
    );
    assert!(x.grad().is_none(), "a failed backward accumulates nothing");
    Ok(())
}

#[test]
fn backward_twice_needs_retain_graph() -> R {
    let x = leaf64(&A, &[6]);
    let y = checkpoint(|i| Ok(vec![i[0].sin()?.exp()?]), &[&x])?.remove(0);
    let s = y.sum()?;
    s.backward()?;
    let e = s.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackwardTwice);

    let x = leaf64(&A, &[6]);
    let y = checkpoint(|i| Ok(vec![i[0].sin()?.exp()?]), &[&x])?.remove(0);
    let s = y.sum()?;
    s.backward_with(
        None,
        tapegrad::autograd::BackwardOptions::default().retain_graph(true),
    )?;
    let once = vals(&x.grad().unwrap());
    s.backward()?;
    let twice: Vec<f64> = once.iter().map(|g| 2.0 * g).collect();
    assert_eq!(vals(&x.grad().unwrap()), twice);
    Ok(())
}

#[test]
fn a_recomputation_that_saves_differently_is_an_error() -> R {
    let runs = Arc::new(AtomicUsize::new(0));
    let r = runs.clone();
    let x = leaf64(&A, &[6]);
    let y = checkpoint(
        move |i| {
            let first = r.fetch_add(1, Ordering::Relaxed) == 0;
            let h = i[0].sin()?;
            Ok(vec![if first { h } else { h.cos()? }])
        },
        &[&x],
    )?
    .remove(0);
    let e = y.exp()?.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::CheckpointMismatch);
    assert!(
        e.message().contains(
            "Number of tensors saved during forward: 1\nNumber of tensors saved during recomputation: 2"
        ),
        "{}",
        e.message()
    );
    assert_eq!(runs.load(Ordering::Relaxed), 2);
    Ok(())
}

#[test]
fn without_grad_mode_the_function_just_runs() -> R {
    let x = leaf64(&A, &[6]);
    let y = {
        let _g = autograd::no_grad();
        checkpoint(|i| Ok(vec![i[0].sin()?]), &[&x])?.remove(0)
    };
    assert!(!y.requires_grad());
    assert_eq!(vals(&y), vals(&x.detach().sin()?));
    Ok(())
}
