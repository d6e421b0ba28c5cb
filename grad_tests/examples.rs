//! The examples as tests: each example file is included as a module and its `run` is called, so
//! CI checks what the examples demonstrate, not only that they build. (train_mlp has its own
//! test, grad_tests/train.rs.) Expected numbers were worked out by hand and checked in PyTorch.

#[path = "../examples/quickstart.rs"]
mod quickstart;
#[path = "../examples/regression.rs"]
mod regression;
#[path = "../examples/sparse_slice.rs"]
mod sparse_slice;
#[path = "../examples/transformer_block.rs"]
mod transformer_block;
#[path = "../examples/views_and_versions.rs"]
mod views_and_versions;

use tapegrad::autograd::gradcheck;
use tapegrad::nn::{Linear, Sequential, Tanh};
use tapegrad::{DType, ErrorKind, Tensor};

#[test]
fn quickstart_views_versions_and_grads() {
    let _serial = crate::serial();
    let q = quickstart::run(false).expect("quickstart runs");
    // x = [[0, 1, 2], [3, 4, 5]]; column 1 has strides [3] at offset 1, and *= 10 reaches x
    assert_eq!(q.column_geometry, (vec![3], 1));
    assert_eq!(q.x, vec![0.0, 10.0, 2.0, 3.0, 40.0, 5.0]);
    assert_eq!(q.version, 1);
    // b = [[1, 2], [30, 40]], loss = sum(b^2): dloss/dw = 2 b * [[1, 1], [10, 10]]
    assert_eq!(q.grad, vec![2.0, 4.0, 600.0, 800.0]);
}

#[test]
fn views_and_versions_error_and_fixes() {
    let _serial = crate::serial();
    let o = views_and_versions::run(false).expect("example runs");
    assert_eq!(
        o.base,
        vec![0.0, 0.0, 5.0, 0.0, 1.0, 1.0, 6.0, 1.0, 0.0, 0.0, 5.0, 0.0]
    );
    assert_eq!(o.versions, (2, 2, 2));
    assert_eq!(o.error_kind, ErrorKind::SavedTensorModified);
    assert!(
        o.error_message.contains("modified by an inplace operation")
            && o.error_message
                .contains("is at version 1; expected version 0"),
        "{}",
        o.error_message
    );
    let e = [1f64.exp(), 2f64.exp(), 3f64.exp()];
    let want = [2.0, 2.0 * e[0], e[1], e[2]];
    for got in [&o.grad_copy_fix, &o.grad_out_of_place_fix] {
        for (g, w) in got.iter().zip(want) {
            assert!((g - w).abs() < 1e-12, "{got:?} vs {want:?}");
        }
    }
}

#[test]
fn regression_with_gradient_penalty_learns_a_smoother_fit() {
    let _serial = crate::serial();
    let r = regression::run(300, false).expect("example runs");
    let (first, last) = (r.losses[0], *r.losses.last().unwrap());
    assert!(last < 0.25 * first, "loss {first} -> {last}");
    // the penalised model fits the trend yet has a smaller input gradient than the plain one
    let ((fit, pen), (fit0, pen0)) = (r.with_penalty, r.without_penalty);
    assert!(fit < 0.1, "mse with penalty {fit}");
    assert!(fit0 <= fit, "penalty trades fit ({fit0} vs {fit}) ...");
    assert!(pen < pen0, "... for smoothness: {pen} vs {pen0}");
}

/// The penalised loss contains a first derivative, so its gradient w.r.t. the parameters goes
/// through second derivatives: gradcheck of it checks the double backward the example relies on.
#[test]
fn regression_penalized_loss_gradients_are_exact() {
    let _serial = crate::serial();
    let (x, y) = regression::data().unwrap();
    let (x, y) = (x.narrow(0, 0, 64).unwrap(), y);
    let p = |s: &[usize]| {
        Tensor::randn(s, DType::F64)
            .unwrap()
            .requires_grad_(true)
            .unwrap()
    };
    let params = [p(&[4, 1]), p(&[4]), p(&[1, 4]), p(&[1])];
    gradcheck(
        |v| {
            let m = Sequential::new()
                .push(Linear {
                    weight: v[0].clone(),
                    bias: Some(v[1].clone()),
                })
                .push(Tanh)
                .push(Linear {
                    weight: v[2].clone(),
                    bias: Some(v[3].clone()),
                });
            Ok(regression::penalized_loss(&m, &x, &y, 0.5)?.0)
        },
        &params,
        Default::default(),
    )
    .expect("gradient of the penalised loss matches finite differences");
}

#[test]
fn sparse_slice_grads_keep_the_pattern() {
    let _serial = crate::serial();
    let d = sparse_slice::run(false).expect("example runs");
    // x = [[1, 2, 0, 4], [0, 5, 6, 0], [7, 0, 8, 9]]
    assert_eq!(
        d.coo_slice.to_vec::<f64>().unwrap(),
        vec![5.0, 6.0, 0.0, 8.0]
    );
    // d sum(v^2) / dx = 2x inside the window, 0 elsewhere
    assert_eq!(
        d.coo_grad_dense.to_vec::<f64>().unwrap(),
        vec![0., 0., 0., 0., 0., 10., 12., 0., 0., 0., 16., 0.]
    );
    // x's values in CSR order are 1 2 4 5 6 7 8 9; columns 2..4 hold 4, 6, 8, 9
    assert_eq!(
        d.csr_grad_values.to_vec::<f64>().unwrap(),
        vec![0., 0., 1., 0., 1., 0., 1., 1.]
    );
    assert_eq!(
        d.product.to_vec::<f64>().unwrap(),
        vec![7., 7., 11., 11., 24., 24.]
    );
    // d sum(x @ w) / dw[k, j] = sum_i x[i, k]
    assert_eq!(
        d.w_grad.to_vec::<f64>().unwrap(),
        vec![8., 8., 7., 7., 14., 14., 13., 13.]
    );
}

#[test]
fn transformer_block_learns_to_continue_sequences() {
    let _serial = crate::serial();
    let (losses, acc) = transformer_block::run(150, false).expect("training runs");
    let (again, acc2) = transformer_block::run(150, false).expect("training runs");
    assert_eq!((&losses, acc), (&again, acc2), "same seed, same run");
    let first = losses[..10].iter().sum::<f64>() / 10.0;
    let last = losses[losses.len() - 10..].iter().sum::<f64>() / 10.0;
    assert!(last < first / 10.0, "loss {first:.4} -> {last:.4}");
    assert!(acc >= 0.95, "next-token accuracy {acc:.3}");
}
