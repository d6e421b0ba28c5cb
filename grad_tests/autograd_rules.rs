//! One test per autograd rule of issue 5 (views, in-place, versions, errors), with PyTorch's
//! exact (stable-release) messages: saved-tensor version checks (inputs and outputs), leaf
//! in-place, CopySlices, view grad_fn regeneration, ViewInplaceForbidden variants, non-views
//! (unsafe_view, reshape's copy path), detach, retain_grad, hooks, BackwardTwice, NoGradFn,
//! shape-mismatched gradients and accumulation across backward calls.

use crate::common::{R, leaf64};
use std::sync::{Arc, Mutex};
use tapegrad::autograd::{self, no_grad};
use tapegrad::{DType, ErrorKind, Tensor};

const HINT: &str = " Hint: an in-place op (a method ending in `_`, or a compound assignment such as `+=`) wrote this tensor after it was saved for backward; use the out-of-place op, or apply the in-place one to a `copy()`.";
const MODIFIED: &str = "one of the variables needed for gradient computation has been modified by an inplace operation: ";

fn leaf32(v: &[f32]) -> Tensor {
    Tensor::from_vec(v.to_vec(), &[v.len()])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

fn grad64(t: &Tensor) -> Vec<f64> {
    t.grad().expect("grad").to_vec::<f64>().unwrap()
}

#[test]
fn saved_input_modified_exact_message() -> R {
    let x = leaf32(&[1.0, 2.0, 3.0]).copy()?;
    let y = x.sin()?;
    x.add_(1.0)?;
    x.mul_(2.0)?;
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
    assert_eq!(
        e.message(),
        format!(
            "{MODIFIED}[torch.FloatTensor [3]], which is output 0 of MulBackward0, is at version 2; expected version 0 instead.{HINT}"
        )
    );
    Ok(())
}

#[test]
fn saved_leaf_modified_under_no_grad_has_no_node_clause() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let y = x.mul(&x)?;
    {
        let _g = no_grad();
        x.add_(1.0)?;
    }
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
    assert_eq!(
        e.message(),
        format!(
            "{MODIFIED}[torch.DoubleTensor [2]] is at version 1; expected version 0 instead.{HINT}"
        )
    );
    assert!(x.grad().is_none());
    Ok(())
}

#[test]
fn saved_zero_dim_message_shape() -> R {
    let x = Tensor::scalar(2.0f32).requires_grad_(true)?.copy()?;
    let y = x.mul(&x)?;
    x.add_(1.0)?;
    let e = y.backward().unwrap_err();
    assert!(
        e.message()
            .contains("[torch.FloatTensor []], which is output 0 of AddBackward0, is at version 1"),
        "{e}"
    );
    Ok(())
}

/// Ops that save their output detect mutation of the output; the node named is the saver.
#[test]
fn ops_saving_their_output_detect_output_mutation() -> R {
    type Op = fn(&Tensor) -> tapegrad::Result<Tensor>;
    let ops: &[(&str, Op)] = &[
        ("ExpBackward0", |t| t.exp()),
        ("TanhBackward0", |t| t.tanh()),
        ("SigmoidBackward0", |t| t.sigmoid()),
        ("SqrtBackward0", |t| t.sqrt()),
        ("RsqrtBackward0", |t| t.rsqrt()),
        ("ReciprocalBackward0", |t| t.reciprocal()),
        ("TanBackward0", |t| t.tan()),
        ("Exp2Backward0", |t| t.exp2()),
        ("Expm1Backward0", |t| t.expm1()),
        ("ReluBackward0", |t| t.relu()),
        ("SoftmaxBackward0", |t| t.softmax(0)),
    ];
    for (name, op) in ops {
        let x = leaf32(&[0.5, 1.0, 1.5]);
        let y = op(&x)?;
        assert_eq!(y.grad_fn().unwrap().name(), *name);
        let z = y.mul(3.0)?; // does not save y
        y.add_(1.0)?; // allowed on a non-leaf; rebases y
        let e = z.sum()?.backward().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SavedTensorModified, "{name}");
        assert_eq!(
            e.message(),
            format!(
                "{MODIFIED}[torch.FloatTensor [3]], which is output 0 of {name}, is at version 1; expected version 0 instead.{HINT}"
            )
        );
    }
    // mutation under no_grad is caught too (the counter moves either way)
    let x = leaf32(&[0.5, 1.0]);
    let y = x.exp()?;
    {
        let _g = no_grad();
        y.zero_()?;
    }
    let e = y.sum()?.backward().unwrap_err();
    assert!(
        e.message()
            .contains("output 0 of ExpBackward0, is at version 1"),
        "{e}"
    );
    Ok(())
}

#[test]
fn leaf_inplace_in_grad_mode_errors_and_is_allowed_under_no_grad() -> R {
    let x = leaf32(&[1.0, 2.0, 3.0]);
    let e = x.add_(1.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    assert_eq!(
        e.message(),
        "a leaf Variable that requires grad is being used in an in-place operation."
    );
    let e = x.narrow(0, 0, 2)?.mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    assert_eq!(
        e.message(),
        "a view of a leaf Variable that requires grad is being used in an in-place operation."
    );
    let e = x.exp_().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    // unchanged
    assert_eq!((x.version(), x.to_vec::<f32>()?), (0, vec![1.0, 2.0, 3.0]));
    {
        let _g = no_grad();
        x.add_(1.0)?;
        x.narrow(0, 0, 1)?.mul_(10.0)?;
    }
    assert_eq!((x.version(), x.to_vec::<f32>()?), (2, vec![20.0, 3.0, 4.0]));
    assert!(x.is_leaf() && x.requires_grad() && x.grad_fn().is_none());
    x.mul(2.0)?.sum()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![2.0; 3]);
    Ok(())
}

#[test]
fn copyslices_grads_for_self_and_other() -> R {
    let xv = [0.5, -1.0, 2.0, 1.5, 0.25, -0.75];
    let wv = [2.0, -3.0, 0.5];
    let cv = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0];
    let x = leaf64(&xv, &[2, 3]);
    let w = leaf64(&wv, &[3]);
    let c = Tensor::from_vec(cv.to_vec(), &[2, 3])?;
    let b = x.copy()?;
    let v = b.select(0, 1)?;
    v.mul_(&w)?;
    assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    assert_eq!((v.version(), b.version()), (1, 1));
    b.mul(&c)?.sum()?.backward()?;
    // loss = sum c0*x0 + sum c1*x1*w
    let mut gx = cv[..3].to_vec();
    gx.extend((0..3).map(|k| cv[3 + k] * wv[k]));
    assert_eq!(grad64(&x), gx);
    assert_eq!(
        grad64(&w),
        (0..3).map(|k| cv[3 + k] * xv[3 + k]).collect::<Vec<_>>()
    );
    Ok(())
}

#[test]
fn view_grad_fn_regenerates_after_base_inplace() -> R {
    let x = leaf64(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let b = x.copy()?;
    let v = b.narrow(0, 0, 2)?;
    assert_eq!(v.grad_fn().unwrap().name(), "SliceBackward0");
    b.mul_(3.0)?;
    assert_eq!(v.version(), 1);
    assert_eq!(v.grad_fn().unwrap().name(), "AsStridedBackward0");
    v.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![3.0, 3.0, 0.0, 0.0]);
    // a sibling view's in-place regenerates the other views too
    let x = leaf64(&[1.0, 2.0, 3.0, 4.0], &[4]);
    let b = x.copy()?;
    let (v1, v2) = (b.narrow(0, 0, 2)?, b.narrow(0, 1, 2)?);
    v1.mul_(2.0)?;
    assert_eq!(v2.grad_fn().unwrap().name(), "AsStridedBackward0");
    v2.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![0.0, 2.0, 1.0, 0.0]);
    Ok(())
}

/// A strided view's node is built when its grad_fn is first read, yet it keeps the place in the
/// tape it had when the view was made: hooks run in PyTorch's order (`w`, recorded after the
/// view, first), and a view of a leaf view (whose root base needs no grad) still requires grad.
#[test]
fn view_history_built_on_first_read_keeps_its_tape_place() -> R {
    let x = leaf64(&[0.0, 1.0, 2.0, 3.0, 4.0, 5.0], &[6]);
    let t = x.mul(1.0)?;
    let v = t.narrow(0, 1, 3)?;
    let w = t.mul(3.0)?;
    let order = Arc::new(Mutex::new(Vec::new()));
    for (name, tensor) in [("v", &v), ("w", &w)] {
        let order = order.clone();
        tensor.register_hook(move |_| {
            order.lock().unwrap().push(name);
            Ok(None)
        })?;
    }
    assert!(v.requires_grad());
    let gf = v.grad_fn().unwrap();
    assert_eq!(gf.name(), "SliceBackward0");
    assert_eq!(
        gf.next_functions()[0].as_ref().unwrap().name(),
        "MulBackward0"
    );
    v.sum()?.add(&w.sum()?)?.backward()?;
    assert_eq!(*order.lock().unwrap(), vec!["w", "v"]);
    assert_eq!(grad64(&x), vec![3.0, 4.0, 4.0, 4.0, 3.0, 3.0]);

    let b = Tensor::zeros(&[4], DType::F64)?;
    let v = b.narrow(0, 0, 3)?.requires_grad_(true)?;
    let u = v.narrow(0, 0, 2)?;
    assert!(u.requires_grad());
    assert_eq!(u.grad_fn().unwrap().name(), "SliceBackward0");
    u.sum()?.backward()?;
    assert_eq!(grad64(&v), vec![1.0, 1.0, 0.0]);
    Ok(())
}

const NO_GRAD_TAIL: &str = " no_grad mode and is being modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked).";
const MULTI_TAIL: &str = " This view is the output of a function that returns multiple views. Such functions do not allow the output views to be modified inplace. You should replace the inplace operation by an out-of-place one.";

#[test]
fn no_grad_views_refuse_inplace_in_grad_mode() -> R {
    let x = leaf32(&[1.0, 2.0, 3.0]);
    let y = x.mul(1.0)?;
    let v = {
        let _g = no_grad();
        y.slice(0, Some(0), Some(2), 1)?
    };
    let e = v.mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(e.message(), format!("A view was created in{NO_GRAD_TAIL}"));
    assert_eq!((v.version(), y.to_vec::<f32>()?), (0, vec![1.0, 2.0, 3.0]));
    // a view of that view names its own node
    let w = v.slice(0, Some(0), Some(1), 1)?;
    let e = w.mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(
        e.message(),
        format!(
            "Output 0 of SliceBackward0 is a view of a view which was created in{NO_GRAD_TAIL}"
        )
    );
    // indirect: the base changed in grad mode, the no_grad view cannot regenerate
    y.mul_(2.0)?;
    let e = v.mul(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(
        e.message(),
        format!(
            "A view was created in no_grad mode and its base or another view of its base has been modified inplace with grad mode enabled. Given that this use case is ambiguous and error-prone, it is forbidden. You can clarify your code by moving both the view and the inplace either both inside the no_grad block (if you don't want the inplace to be tracked) or both outside (if you want the inplace to be tracked)."
        )
    );
    // under no_grad both are fine
    let _g = no_grad();
    v.mul_(2.0)?;
    Ok(())
}

#[test]
fn multi_output_views_refuse_inplace_both_variants() -> R {
    let x = leaf32(&[1.0, 2.0, 3.0]);
    let y = x.mul(1.0)?;
    let parts = y.unbind(0)?;
    let e = parts[1].mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(
        e.message(),
        format!("Output 1 of UnbindBackward0 is a view and is being modified inplace.{MULTI_TAIL}")
    );
    let sp = y.split(1, 0)?;
    let e = sp[0].add_(1.0).unwrap_err();
    assert_eq!(
        e.message(),
        format!("Output 0 of SplitBackward0 is a view and is being modified inplace.{MULTI_TAIL}")
    );
    let ch = y.chunk(3, 0)?;
    let e = ch[2].zero_().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert!(e.message().starts_with("Output 2 of Split"), "{e}");
    // a view of a multi-output view inherits the ban
    let e = parts[2].unsqueeze(0)?.mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(y.version(), 0);
    // indirect: the base was modified, the outputs cannot regenerate
    y.mul_(2.0)?;
    let e = parts[0].mul(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ViewInplaceForbidden);
    assert_eq!(
        e.message(),
        format!(
            "Output 0 of UnbindBackward0 is a view and its base or another view of its base has been modified inplace.{MULTI_TAIL}"
        )
    );
    Ok(())
}

#[test]
fn unsafe_view_and_reshape_copy_are_not_views() -> R {
    let x = leaf64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    let r = x.reshape(&[6])?;
    assert!(r.is_view() && r.shares_storage(&x));
    assert_eq!(r.grad_fn().unwrap().name(), "ViewBackward0");
    let rc = x.t()?.reshape(&[6])?;
    assert!(!rc.is_view() && !rc.shares_storage(&x));
    let gf = rc.grad_fn().unwrap();
    assert_eq!(gf.name(), "UnsafeViewBackward0");
    assert_eq!(
        gf.next_functions()[0].as_ref().unwrap().name(),
        "CloneBackward0"
    );
    // in-place on the copy is fine and does not touch x
    rc.mul_(2.0)?;
    assert_eq!(x.version(), 0);
    let u = x.mul(1.0)?.unsafe_view(&[3, 2])?;
    assert!(!u.is_view());
    u.add_(1.0)?;
    u.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![1.0; 6]);
    Ok(())
}

#[test]
fn detach_shares_storage_and_version_but_cuts_the_graph() -> R {
    let x = leaf32(&[1.0, 2.0, 3.0]);
    let y = x.mul(&x)?;
    let d = x.detach();
    assert!(!d.requires_grad() && d.is_leaf() && !d.is_view() && d.shares_storage(&x));
    d.add_(1.0)?; // allowed: d does not require grad
    assert_eq!((x.version(), d.version()), (1, 1));
    assert_eq!(x.to_vec::<f32>()?, vec![2.0, 3.0, 4.0]);
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(
        e.message(),
        format!(
            "{MODIFIED}[torch.FloatTensor [3]] is at version 1; expected version 0 instead.{HINT}"
        )
    );
    // ops on the detached tensor are not recorded
    assert!(d.mul(2.0)?.grad_fn().is_none());
    Ok(())
}

#[test]
fn retain_grad_keeps_non_leaf_grads_and_accumulates() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let y = x.mul(2.0)?;
    let z = x.mul(3.0)?;
    y.retain_grad()?;
    let s = y.mul(&y)?.add(&z)?.sum()?;
    s.backward_with(
        None,
        tapegrad::autograd::BackwardOptions::default().retain_graph(true),
    )?;
    assert_eq!(grad64(&y), vec![4.0, 8.0]);
    assert!(z.grad().is_none());
    s.backward()?;
    assert_eq!(grad64(&y), vec![8.0, 16.0]);
    // on a leaf: no-op; on a tensor without grad: error
    x.retain_grad()?;
    let e = Tensor::ones(&[1], DType::F64)?.retain_grad().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    Ok(())
}

#[test]
fn hooks_observe_and_replace_grads_retain_grad_sees_hooked_value() -> R {
    let seen: Arc<Mutex<Vec<f64>>> = Arc::new(Mutex::new(Vec::new()));
    let x = leaf64(&[1.0, 1.0], &[2]);
    let s2 = seen.clone();
    x.register_hook(move |g| {
        s2.lock().unwrap().extend(g.to_vec::<f64>()?);
        Ok(None)
    })?;
    // non-leaf hook replacing the grad, registered after retain_grad: retain sees the hooked value
    let y = x.mul(1.0)?;
    y.retain_grad()?;
    y.register_hook(|g| Ok(Some(g.mul(2.0)?)))?;
    y.mul(3.0)?.sum()?.backward()?;
    assert_eq!(grad64(&y), vec![6.0, 6.0]);
    assert_eq!(grad64(&x), vec![6.0, 6.0]);
    assert_eq!(*seen.lock().unwrap(), vec![6.0, 6.0]);
    // a hook on a tensor without grad is refused
    let e = Tensor::ones(&[1], DType::F64)?
        .register_hook(|_| Ok(None))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    Ok(())
}

#[test]
fn backward_twice_errors_unless_retained() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let s = x.mul(&x)?.sum()?;
    s.backward()?;
    let e = s.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackwardTwice);
    assert_eq!(
        e.message(),
        "Trying to backward through the graph a second time (or directly access saved tensors after they have already been freed). Saved intermediate values of the graph are freed when you call `Tensor::backward` or `autograd::grad`. Pass `retain_graph: true` (to `Tensor::backward_with`, `autograd::backward` or `autograd::grad`) if you need to backward through the graph a second time or if you need to access saved tensors after calling backward."
    );
    let y = x.exp()?.sum()?;
    autograd::grad(
        std::slice::from_ref(&y),
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    let e = autograd::grad(
        &[y],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::BackwardTwice);
    // retained: the second pass works
    let s = x.mul(&x)?.sum()?;
    x.set_grad(None)?;
    s.backward_with(
        None,
        tapegrad::autograd::BackwardOptions::default().retain_graph(true),
    )?;
    s.backward()?;
    assert_eq!(grad64(&x), vec![4.0, 8.0]);
    Ok(())
}

#[test]
fn no_grad_fn_and_shape_mismatch_errors() -> R {
    let e = Tensor::ones(&[2], DType::F32)?
        .sum()?
        .backward()
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NoGradFn);
    assert_eq!(
        e.message(),
        "element 0 of tensors does not require grad and does not have a grad_fn"
    );
    let x = leaf32(&[1.0, 2.0]);
    let y = {
        let _g = no_grad();
        x.mul(2.0)?
    };
    assert!(!y.requires_grad());
    assert_eq!(y.sum()?.backward().unwrap_err().kind(), ErrorKind::NoGradFn);
    let e = x
        .mul(2.0)?
        .backward_with(
            Some(&Tensor::ones(&[3], DType::F32)?),
            tapegrad::autograd::BackwardOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(
        e.message(),
        "Mismatch in shape: grad_output[0] has a shape of [3] and output[0] has a shape of [2]."
    );
    assert!(x.grad().is_none());
    Ok(())
}

#[test]
fn grads_accumulate_across_backward_calls() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    x.mul(&x)?.sum()?.backward()?;
    x.mul(3.0)?.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![5.0, 7.0]);
    // the accumulated grad object is updated in place when no graph is built
    let g = x.grad().unwrap();
    x.sum()?.backward()?;
    assert!(x.grad().unwrap().is_same(&g));
    assert_eq!(grad64(&x), vec![6.0, 8.0]);
    x.set_grad(None)?;
    x.exp()?.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![1f64.exp(), 2f64.exp()]);
    // with create_graph the accumulated grad is differentiable
    let z = leaf64(&[1.5], &[1]);
    z.mul(&z)?.mul(&z)?.sum()?.backward_with(
        None,
        tapegrad::autograd::BackwardOptions::default().create_graph(true),
    )?;
    let gz = z.grad().unwrap();
    assert!(gz.requires_grad());
    let h = autograd::grad(
        &[gz.sum()?],
        std::slice::from_ref(&z),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    assert_eq!(h[0].as_ref().unwrap().to_vec::<f64>()?, vec![6.0 * 1.5]);
    Ok(())
}

#[test]
fn double_backward_through_inplace_on_view() -> R {
    // y = clone(x); y[::2].exp_(): the saved output of ExpBackward0 leads back through CopySlices
    let x = leaf64(&[0.1, 0.2, 0.3, 0.4], &[4]);
    let y = x.copy()?;
    y.slice(0, None, None, 2)?.exp_()?;
    let g = autograd::grad(
        &[y.sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default()
            .retain_graph(true)
            .create_graph(true),
    )?;
    let g = g[0].clone().unwrap();
    assert_eq!(
        g.to_vec::<f64>()?,
        vec![0.1f64.exp(), 1.0, 0.3f64.exp(), 1.0]
    );
    let h = autograd::grad(
        &[g.sum()?],
        &[x],
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    assert_eq!(
        h[0].as_ref().unwrap().to_vec::<f64>()?,
        vec![0.1f64.exp(), 0.0, 0.3f64.exp(), 0.0]
    );
    Ok(())
}

/// A scalar mul/div backward overwrites its incoming gradient when the engine holds the only
/// handle; a gradient anyone else can see (a second consumer, a hook's capture, a retained
/// `.grad`, a CopySlices base gradient outside the slice) must keep its values.
#[test]
fn scalar_backward_reuses_only_unobserved_gradients() -> R {
    // one gradient handle fanned out to two scalar muls of the same leaf
    let x = leaf64(&[1., 2., 3.], &[3]);
    x.mul(2.0)?.add(&x.mul(3.0)?)?.div(4.0)?.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![1.25; 3]);
    // a hook keeps the gradient flowing into a scalar mul
    let x = leaf64(&[1., 2.], &[2]);
    let y = x.mul(1.0)?;
    let z = y.mul(5.0)?;
    let seen = Arc::new(Mutex::new(None));
    let s2 = seen.clone();
    z.register_hook(move |g| {
        *s2.lock().unwrap() = Some(g.clone());
        Ok(None)
    })?;
    z.mul(3.0)?.sum()?.backward()?;
    let g = seen.lock().unwrap().clone().unwrap();
    assert_eq!(g.to_vec::<f64>()?, vec![3., 3.]);
    assert_eq!(grad64(&x), vec![15., 15.]);
    // retained gradients of intermediate results stay as they were
    let x = leaf64(&[1., 2.], &[2]);
    let y = x.mul(2.0)?;
    let z = y.mul(7.0)?;
    y.retain_grad()?;
    z.retain_grad()?;
    z.div(2.0)?.sum()?.backward()?;
    assert_eq!(z.grad().unwrap().to_vec::<f64>()?, vec![0.5, 0.5]);
    assert_eq!(y.grad().unwrap().to_vec::<f64>()?, vec![3.5, 3.5]);
    assert_eq!(grad64(&x), vec![7., 7.]);
    // in-place scalar ops on views: CopySlices hands the slice over, the rest of the base's
    // gradient is untouched
    let x = leaf64(&[1., 2., 3., 4.], &[4]);
    let b = x.copy()?;
    b.narrow(0, 1, 2)?.mul_(10.0)?;
    b.narrow(0, 2, 2)?.div_(4.0)?;
    b.mul(2.0)?.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![2., 20., 5., 0.5]);
    Ok(())
}

/// CopySlices applies an in-place scalar op's formula (`mul_(s)`, `div_(s)`, `add_(s)`) to the
/// view's region of the base gradient in place. Its gradients must be bit for bit those of the
/// general path (taken with a 0-dim tensor operand) for every view geometry (dense, strided,
/// stepped, transposed), upstream gradient (broadcast from `sum`, dense from a product) and
/// dtype (f32/f64 take the region path; f16 and complex64 fall back to the general one).
#[test]
fn scalar_inplace_on_views_matches_the_general_path() -> R {
    let vals: Vec<f64> = (0..12).map(|i| 0.3 + 0.71 * i as f64).collect();
    for dt in [DType::F32, DType::F64, DType::F16, DType::C64] {
        for weighted in [false, true] {
            let run = |tensor_operand: bool| -> tapegrad::Result<Tensor> {
                let s = |v: f64| -> tapegrad::Result<tapegrad::Operand> {
                    Ok(if tensor_operand {
                        Tensor::full((), v, dt)?.into()
                    } else {
                        v.into()
                    })
                };
                let x = Tensor::from_vec(vals.clone(), &[3, 4])?
                    .to_dtype(dt)?
                    .requires_grad_(true)?;
                let y = x.copy()?;
                y.narrow(0, 1, 1)?.mul_(s(3.0)?)?;
                y.select(1, 2)?.div_(s(7.0)?)?;
                y.slice(1, Some(0), None, 2)?.mul_(s(-0.3)?)?;
                y.t()?.narrow(0, 1, 2)?.add_(s(1.5)?)?.div_(s(3.0)?)?;
                let w = Tensor::from_vec(vals.iter().map(|v| v * v).collect(), &[3, 4])?
                    .to_dtype(dt)?;
                let out = if weighted { y.mul(&w)? } else { y };
                let one = Tensor::full((), 1.0, dt)?;
                out.sum()?
                    .backward_with(Some(&one), tapegrad::autograd::BackwardOptions::default())?;
                Ok(x.grad().expect("grad"))
            };
            let (fast, general) = (run(false)?, run(true)?);
            let same = fast.eq(&general)?.all((), false)?.to_vec::<bool>()?;
            assert_eq!(same, vec![true], "{dt:?} weighted={weighted}");
        }
    }
    // the values themselves (f64, broadcast upstream gradient)
    let x = leaf64(&[1., 2., 3., 4., 5., 6.], &[2, 3]);
    let y = x.copy()?;
    y.select(1, 1)?.mul_(4.0)?;
    y.t()?.narrow(0, 1, 2)?.div_(2.0)?;
    y.slice(1, Some(0), None, 2)?.add_(9.0)?;
    y.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![1., 2., 0.5, 1., 2., 0.5]);
    Ok(())
}

/// The in-place region update of that fast path only ever writes a gradient buffer nobody else
/// holds: a retained `.grad`, a hook's capture and a user-supplied gradient keep their values.
/// An empty view far past the storage's end, and a region the injectivity test cannot prove
/// (taken by the general path), give the right gradients too.
#[test]
fn scalar_inplace_fast_path_leaves_observed_gradients_alone() -> R {
    let w = Tensor::from_vec(vec![1.0f64, 2., 3., 4.], &[2, 2])?;
    let expect = vec![1., 2., 9., 12.];
    // retain_grad on the base after the in-place op
    let x = leaf64(&[1., 2., 3., 4.], &[2, 2]);
    let y = x.copy()?;
    y.select(0, 1)?.mul_(3.0)?;
    y.retain_grad()?;
    y.mul(&w)?.sum()?.backward()?;
    assert_eq!(grad64(&y), vec![1., 2., 3., 4.]);
    assert_eq!(grad64(&x), expect);
    // a hook keeping the gradient it saw
    let x = leaf64(&[1., 2., 3., 4.], &[2, 2]);
    let y = x.copy()?;
    y.select(0, 1)?.mul_(3.0)?;
    let seen = Arc::new(Mutex::new(Vec::new()));
    let s2 = seen.clone();
    y.register_hook(move |g| {
        s2.lock().unwrap().push(g.detach());
        Ok(None)
    })?;
    y.mul(&w)?.sum()?.backward()?;
    assert_eq!(
        seen.lock().unwrap()[0].to_vec::<f64>()?,
        vec![1., 2., 3., 4.]
    );
    assert_eq!(grad64(&x), expect);
    // a gradient the caller passes in
    let x = leaf64(&[1., 2., 3., 4.], &[2, 2]);
    let y = x.copy()?;
    y.select(0, 1)?.mul_(3.0)?;
    y.backward_with(Some(&w), tapegrad::autograd::BackwardOptions::default())?;
    assert_eq!(w.to_vec::<f64>()?, vec![1., 2., 3., 4.]);
    assert_eq!(grad64(&x), expect);
    // an empty view whose offset lies past the end of the storage
    let x = leaf64(&[1., 2., 3., 4.], &[2, 2]);
    let y = x.copy()?;
    y.as_strided(&[0], &[1], Some(1000))?.mul_(2.0)?;
    y.sum()?.backward()?;
    assert_eq!(grad64(&x), vec![1.; 4]);
    // offsets 1, 4, 3, 6, 5, 8: distinct, but not provably so (general path)
    let x = leaf64(&[1.; 12], &[12]);
    let y = x.copy()?;
    y.as_strided(&[3, 2], &[2, 3], Some(1))?.mul_(3.0)?;
    y.sum()?.backward()?;
    let mut want = vec![1.; 12];
    for k in [1, 3, 4, 5, 6, 8] {
        want[k] = 3.;
    }
    assert_eq!(grad64(&x), want);
    Ok(())
}
