//! Rows of the backward formulas PyTorch runs as one node differentiable in the forward's
//! inputs (`convolution_backward`, `native_layer_norm_backward`, `native_batch_norm_backward`,
//! `avg_pool2d_backward`, `_adaptive_avg_pool2d_backward`): the first-order gradients taken
//! with a constant cotangent under `create_graph` (so they require grad only through that
//! node's link to the inputs), then differentiated; and the reductions and weights of
//! `binary_cross_entropy_with_logits`, whose backward divides by the element count last.

use super::*;
use tapegrad::autograd::GradOptions;
use tapegrad::{ConvOptions, ConvTransposeOptions};

/// The gradients of `y` w.r.t. `of` for a constant cotangent (seeded), with `create_graph`.
fn grads_of(y: &Tensor, of: &[Tensor], seed: u64) -> tapegrad::Result<Vec<Tensor>> {
    let ct = Tensor::from_vec(vals(y.numel(), -1.0, 1.0, seed), &y.shape())?;
    let gs = tapegrad::autograd::grad(
        std::slice::from_ref(y),
        of,
        &[Some(ct)],
        GradOptions::default().create_graph(true),
    )?;
    Ok(gs.into_iter().map(|g| g.expect("used input")).collect())
}

/// `sum` of every tensor of `ts` (one scalar output for tensors of different shapes).
fn total(ts: &[Tensor]) -> tapegrad::Result<Tensor> {
    let mut acc = ts[0].sum()?;
    for t in &ts[1..] {
        acc = acc.add(&t.sum()?)?;
    }
    Ok(acc)
}

/// `binary_cross_entropy_with_logits` of `v[0]` (logits) and `v[1]` (target) with the
/// constant weights `[0.5, 1, 2]` / pos_weights `[1.5, 0.5, 3]` when asked.
fn bce(v: &[Tensor], w: bool, pw: bool, reduction: Reduction) -> tapegrad::Result<Tensor> {
    let wt = Tensor::from_vec(vec![0.5f64, 1.0, 2.0], &[3])?;
    let pwt = Tensor::from_vec(vec![1.5f64, 0.5, 3.0], &[3])?;
    v[0].binary_cross_entropy_with_logits(
        &v[1],
        BceWithLogitsOptions {
            weight: w.then_some(&wt),
            pos_weight: pw.then_some(&pwt),
            reduction,
        },
    )
}

pub(crate) fn backward_link_cases() -> Vec<Case> {
    vec![
        case!(
            "conv1d/grads_of_constant_cotangent",
            [
                leaf(&[2, 3, 5], -1.0, 1.0, 2100),
                leaf(&[4, 3, 3], -1.0, 1.0, 2101),
                leaf(&[4], -1.0, 1.0, 2102)
            ],
            |v| {
                let y = v[0].conv1d(&v[1], Some(&v[2]), &ConvOptions::default())?;
                total(&grads_of(&y, v, 2103)?)
            }
        ),
        case!(
            "conv_transpose1d/grads_of_constant_cotangent",
            [
                leaf(&[2, 3, 4], -1.0, 1.0, 2104),
                leaf(&[3, 2, 3], -1.0, 1.0, 2105),
                leaf(&[2], -1.0, 1.0, 2106)
            ],
            |v| {
                let o = ConvTransposeOptions::default();
                let y = v[0].conv_transpose1d(&v[1], Some(&v[2]), &o)?;
                total(&grads_of(&y, v, 2107)?)
            }
        ),
        case!(
            "avg_pool2d/grad_of_constant_cotangent",
            [leaf(&[2, 2, 5, 6], -1.0, 1.0, 2108)],
            |v| {
                let y = v[0].avg_pool2d(&[2], None, &[0], false, true, None)?;
                total(&grads_of(&y, v, 2109)?)
            }
        ),
        case!(
            "adaptive_avg_pool1d/grad_of_constant_cotangent",
            [leaf(&[2, 3, 7], -1.0, 1.0, 2110)],
            |v| total(&grads_of(&v[0].adaptive_avg_pool1d(3)?, v, 2111)?)
        ),
        case!(
            "layer_norm/grads_of_constant_cotangent",
            [
                leaf(&[2, 3, 4], -1.0, 1.0, 2112),
                leaf(&[3, 4], 0.5, 1.5, 2113),
                leaf(&[3, 4], -1.0, 1.0, 2114)
            ],
            |v| {
                let y = v[0].layer_norm(&[3, 4], Some(&v[1]), Some(&v[2]), 1e-5)?;
                total(&grads_of(&y, v, 2115)?)
            }
        ),
        case!(
            "layer_norm/bias_grad_only",
            [leaf(&[3, 4], -1.0, 1.0, 2116)],
            |v| {
                let x = Tensor::from_vec(vals(24, -1.0, 1.0, 2117), &[2, 3, 4])?;
                let y = x.layer_norm(&[3, 4], None, Some(&v[0]), 1e-5)?;
                total(&grads_of(&y, v, 2118)?)
            }
        ),
        case!(
            "batch_norm/grads_of_constant_cotangent",
            [
                leaf(&[2, 3, 4], -1.0, 1.0, 2119),
                leaf(&[3], 0.5, 1.5, 2120),
                leaf(&[3], -1.0, 1.0, 2121)
            ],
            |v| {
                let y = v[0].batch_norm(None, None, Some(&v[1]), Some(&v[2]), true, 0.1, 1e-3)?;
                total(&grads_of(&y, v, 2122)?)
            }
        ),
        case!(
            "binary_cross_entropy_with_logits/weight_mean",
            [
                leaf(&[2, 3], -2.0, 2.0, 2123),
                leaf(&[2, 3], 0.1, 0.9, 2124)
            ],
            |v| bce(v, true, false, Reduction::Mean)
        ),
        case!(
            "binary_cross_entropy_with_logits/pos_weight_mean",
            [
                leaf(&[2, 3], -2.0, 2.0, 2125),
                leaf(&[2, 3], 0.1, 0.9, 2126)
            ],
            |v| bce(v, false, true, Reduction::Mean)
        ),
        case!(
            "binary_cross_entropy_with_logits/weights_sum",
            [
                leaf(&[2, 3], -2.0, 2.0, 2127),
                leaf(&[2, 3], 0.1, 0.9, 2128)
            ],
            |v| bce(v, true, true, Reduction::Sum)
        ),
    ]
}
