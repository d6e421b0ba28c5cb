//! Hook handles: `register_hook` returns a `RemovableHandle` that takes the hook out (leaf and
//! non-leaf tensors, twice, after the tensor is gone), and module forward pre-hooks and forward
//! hooks through `nn::Hooked` (replacing the input or the output, order, removal, inside a
//! `Sequential`, transparent to the module tree).

use crate::common::{R, leaf64, t64};
use std::sync::{Arc, Mutex};
use tapegrad::nn::{Forward, Hooked, Linear, Module, Relu, Sequential};
use tapegrad::{DType, ErrorKind, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn removing_a_tensor_hook_stops_it_on_leaves_and_non_leaves() -> R {
    let x = leaf64(&[1.0, 2.0], &[2]);
    let calls = Arc::new(Mutex::new(0));
    let c = calls.clone();
    let hx = x.register_hook(move |_| {
        *c.lock().unwrap() += 1;
        Ok(None)
    })?;
    let y = x.mul(3.0)?;
    let hy = y.register_hook(|g| Ok(Some(g.mul(10.0)?)))?;
    let keep = y.register_hook(|g| Ok(Some(g.add(1.0)?)))?;
    assert_ne!(hx.id(), hy.id());
    y.sum()?.backward_with(
        None,
        tapegrad::autograd::BackwardOptions::default().retain_graph(true),
    )?;
    // (1 * 10 + 1) * 3
    assert_eq!(vals(&x.grad().unwrap()), vec![33.0, 33.0]);
    assert_eq!(*calls.lock().unwrap(), 1);
    hy.remove();
    hx.remove();
    hx.remove(); // twice: nothing
    x.set_grad(None)?;
    y.sum()?.backward()?;
    // only the kept hook: (1 + 1) * 3
    assert_eq!(vals(&x.grad().unwrap()), vec![6.0, 6.0]);
    assert_eq!(*calls.lock().unwrap(), 1);
    drop((x, y));
    keep.remove(); // the tensor and its node are gone: nothing
    Ok(())
}

#[test]
fn a_hook_error_names_the_node_it_ran_in() -> R {
    let x = leaf64(&[1.0], &[1]);
    let y = x.exp()?;
    y.register_hook(|_| {
        Err(tapegrad::Error::new(
            ErrorKind::InvalidArgument,
            "hook",
            "refused",
        ))
    })?;
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(e.message(), "refused");
    assert!(
        e.context().unwrap().starts_with(
            "raised in the backward of node ExpBackward0, created by the forward op `exp`"
        ),
        "{:?}",
        e.context()
    );
    Ok(())
}

#[test]
fn module_forward_pre_hooks_and_hooks_replace_and_are_removed() -> R {
    let lin = Linear::new(3, 2, true, DType::F64)?;
    let plain = |x: &Tensor| lin.forward(x);
    let x = t64(&[0.5, -1.0, 2.0, 1.0, 0.0, -0.5], &[2, 3]);
    let want_plain = vals(&plain(&x)?);
    let want_hooked = vals(&plain(&x.mul(2.0)?)?.add(1.0)?);
    let h = Hooked::new(Linear {
        weight: lin.weight.clone(),
        bias: lin.bias.clone(),
    });
    let order = Arc::new(Mutex::new(Vec::<String>::new()));
    let (o1, o2, o3) = (order.clone(), order.clone(), order.clone());
    let pre = h.register_forward_pre_hook(move |m, x| {
        o1.lock()
            .unwrap()
            .push(format!("pre {} {:?}", m.type_name(), x.shape()));
        Ok(Some(x.mul(2.0)?))
    });
    let post = h.register_forward_hook(move |_, x, y| {
        // sees the input as the pre-hook replaced it
        o2.lock().unwrap().push(format!("post {:?}", vals(x)[0]));
        Ok(Some(y.add(1.0)?))
    });
    let watch = h.register_forward_hook(move |_, _, y| {
        o3.lock().unwrap().push(format!("watch {:?}", y.shape()));
        Ok(None)
    });
    assert_eq!(vals(&h.forward(&x)?), want_hooked);
    assert_eq!(
        *order.lock().unwrap(),
        ["pre Linear [2, 3]", "post 1.0", "watch [2, 2]"]
    );
    pre.remove();
    post.remove();
    assert_eq!(vals(&h.forward(&x)?), want_plain);
    watch.remove();
    h.forward(&x)?;
    assert_eq!(order.lock().unwrap().len(), 4);
    // transparent to the tree
    let keys = |m: &dyn Module| -> Vec<String> {
        m.named_parameters().into_iter().map(|(k, _)| k).collect()
    };
    assert_eq!(keys(&h), keys(&lin));
    assert_eq!(h.to_string(), lin.to_string());
    Ok(())
}

#[test]
fn hooks_inside_a_sequential_and_gradients_through_them() -> R {
    let lin = Hooked::new(Linear::new(2, 2, false, DType::F64)?);
    let w = lin.inner().weight.clone();
    let _h = lin.register_forward_hook(|_, _, y| Ok(Some(y.mul(3.0)?)));
    let seq = Sequential::new().push(lin).push(Relu);
    let keys: Vec<String> = seq.named_parameters().into_iter().map(|(k, _)| k).collect();
    assert_eq!(keys, ["0.weight"]);
    let x = t64(&[1.0, 2.0], &[1, 2]);
    seq.forward(&x)?.sum()?.backward()?;
    let wv = vals(&w.detach());
    // d/dW sum(relu(3 x W^T)) = 3 [row active] x
    let mut want = Vec::new();
    for r in 0..2 {
        let active = wv[2 * r] + 2.0 * wv[2 * r + 1] > 0.0;
        for c in [1.0, 2.0] {
            want.push(if active { 3.0 * c } else { 0.0 });
        }
    }
    assert_eq!(vals(&w.grad().unwrap()), want);
    // reachable through the tree for later registration
    let mods = seq.named_modules();
    let (_, m) = &mods[1];
    let hooked = m
        .downcast_ref::<Hooked<Linear>>()
        .expect("the wrapped layer");
    let late = hooked.register_forward_pre_hook(|_, x| Ok(Some(x.mul(0.0)?)));
    assert_eq!(vals(&seq.forward(&x)?), vec![0.0, 0.0]);
    late.remove();
    Ok(())
}
