//! Gradients taken under `create_graph` from PyTorch's fused backward nodes
//! (`convolution_backward`, `native_layer_norm_backward`, `native_batch_norm_backward`,
//! `avg_pool2d_backward`, `_adaptive_avg_pool2d_backward`): each is one node differentiable in
//! the forward's inputs, so every gradient it returns requires grad when one of those inputs
//! does, even one (a bias gradient, a pooling's input gradient for a constant cotangent) whose
//! value does not depend on them; and `binary_cross_entropy_with_logits`'s backward, in
//! PyTorch's order of operations (versions under `create_graph`, overflow before the mean's
//! division). Expected values recorded from PyTorch 2.15 (sweep cases `sw_f_conv1d_0019`,
//! `sw_f_avg_pool2d_0006`, `sw_layer_norm_0016`, `sw_f_batch_norm_0010`,
//! `sw_f_binary_cross_entropy_with_logits_0015` / `_0019` and the snippets quoted below).

use crate::common::{R, close_rel, f64s, leaf64, t64};
use tapegrad::autograd::{GradOptions, grad};
use tapegrad::{ConvOptions, ConvTransposeOptions, Tensor};

/// `torch.autograd.grad(y, of, ct, create_graph=True)` for a constant cotangent of ones.
fn grads_cg(y: &Tensor, of: &[Tensor]) -> tapegrad::Result<Vec<Tensor>> {
    let ct = Tensor::ones(&y.shape(), y.dtype())?;
    let gs = grad(
        std::slice::from_ref(y),
        of,
        &[Some(ct)],
        GradOptions::default().create_graph(true),
    )?;
    Ok(gs.into_iter().map(|g| g.expect("used input")).collect())
}

fn rgs(gs: &[Tensor]) -> Vec<bool> {
    gs.iter().map(|g| g.requires_grad()).collect()
}

fn leaf(shape: &[usize], seed: usize) -> Tensor {
    let n = shape.iter().product::<usize>();
    let v: Vec<f64> = (0..n)
        .map(|k| (((k + seed) * 7 % 11) as f64 - 5.0) / 4.0)
        .collect();
    leaf64(&v, shape)
}

fn constant(shape: &[usize], seed: usize) -> Tensor {
    leaf(shape, seed).detach()
}

/// `F.conv1d(x, w, b)`: with x and w requiring grad all three gradients do; with only the bias
/// none does (`convolution_backward` is differentiable in `grad_output`, `input`, `weight`).
#[test]
fn conv_gradients_require_grad_through_the_backward_node() -> R {
    let (x, w, b) = (leaf(&[2, 3, 7], 1), leaf(&[4, 3, 3], 2), leaf(&[4], 3));
    let y = x.conv1d(&w, Some(&b), &ConvOptions::default())?;
    assert_eq!(
        rgs(&grads_cg(&y, &[x.clone(), w.clone(), b.clone()])?),
        [true; 3]
    );
    // x and b only: the weight is a constant, the input gradient `conv^T(g, w)` still does
    let wc = w.detach();
    let y = x.conv1d(&wc, Some(&b), &ConvOptions::default())?;
    assert_eq!(rgs(&grads_cg(&y, &[x.clone(), b.clone()])?), [true, true]);
    // only the bias: PyTorch's bias gradient does not require grad
    let y = x.detach().conv1d(&wc, Some(&b), &ConvOptions::default())?;
    assert_eq!(rgs(&grads_cg(&y, std::slice::from_ref(&b))?), [false]);
    // the transposed convolution alike
    let (x, w, b) = (leaf(&[2, 3, 7], 4), leaf(&[3, 2, 3], 5), leaf(&[2], 6));
    let y = x.conv_transpose1d(&w, Some(&b), &ConvTransposeOptions::default())?;
    let gs = grads_cg(&y, &[x.clone(), w.clone(), b.clone()])?;
    assert_eq!(rgs(&gs), [true; 3]);
    // differentiating the bias gradient gives the inputs no gradient (PyTorch: None)
    gs[2].sum()?.backward()?;
    assert!(x.grad().is_none() && w.grad().is_none());
    Ok(())
}

/// `F.avg_pool1d(x, 2)` / `F.adaptive_avg_pool1d(x, 3)`: the input gradient for a constant
/// cotangent requires grad (`avg_pool2d_backward(g, self)`, `self: zeros_like(self)`), its
/// values are PyTorch's, and differentiating it gives the input zeros.
#[test]
fn avg_pool_gradient_requires_grad_through_the_saved_input() -> R {
    let x = leaf64(&[0.5, -1.0, 2.0, 0.25, -0.75, 1.5], &[1, 1, 6]);
    let y = x.avg_pool1d(2, None, 0, false, true)?;
    let ct = t64(&[1.0, -2.0, 0.5], &[1, 1, 3]);
    let g = grad(
        std::slice::from_ref(&y),
        std::slice::from_ref(&x),
        &[Some(ct)],
        GradOptions::default().create_graph(true),
    )?
    .remove(0)
    .unwrap();
    assert!(g.requires_grad());
    assert_eq!(f64s(&g), [0.5, 0.5, -1.0, -1.0, 0.25, 0.25]);
    g.backward_with(Some(&Tensor::ones_like(&g)?), Default::default())?;
    assert_eq!(f64s(&x.grad().unwrap()), [0.0; 6]);
    let x = leaf64(&[0.5, -1.0, 2.0, 0.25, -0.75, 1.5, 1.0], &[1, 1, 7]);
    let gs = grads_cg(&x.adaptive_avg_pool1d(3)?, std::slice::from_ref(&x))?;
    assert_eq!(rgs(&gs), [true]);
    let (a, b) = (1.0 / 3.0, 2.0 / 3.0);
    assert_eq!(f64s(&gs[0]), [a, a, b, a, b, a, a]);
    Ok(())
}

/// `F.layer_norm(x, [3, 4], w, b)`: any one of x, w, b requiring grad makes every gradient
/// require grad (`native_layer_norm_backward`: `bias: Tensor()` is a differentiable input too).
#[test]
fn layer_norm_gradients_require_grad_through_the_backward_node() -> R {
    let (x, w, b) = (leaf(&[2, 3, 4], 1), leaf(&[3, 4], 2), leaf(&[3, 4], 3));
    let y = x.layer_norm(&[3, 4], Some(&w), Some(&b), 1e-5)?;
    assert_eq!(
        rgs(&grads_cg(&y, &[x.clone(), w.clone(), b.clone()])?),
        [true; 3]
    );
    for (rx, rw, rb) in [(1, 0, 0), (0, 1, 0), (0, 0, 1), (0, 1, 1)] {
        let pick = |t: &Tensor, on| if on == 1 { t.clone() } else { t.detach() };
        let (x, w, b) = (pick(&x, rx), pick(&w, rw), pick(&b, rb));
        let y = x.layer_norm(&[3, 4], Some(&w), Some(&b), 1e-5)?;
        let of: Vec<Tensor> = [x, w, b]
            .into_iter()
            .filter(|t| t.requires_grad())
            .collect();
        let gs = grads_cg(&y, &of)?;
        assert!(gs.iter().all(|g| g.requires_grad()), "x{rx} w{rw} b{rb}");
    }
    Ok(())
}

/// `F.batch_norm(x, rm, rv, w, b, training)`: the gradients require grad when x or w does
/// (`native_batch_norm_backward` is differentiable in `grad_out`, `input`, `weight`), not
/// when only the bias does.
#[test]
fn batch_norm_gradients_require_grad_through_the_backward_node() -> R {
    let (x, w, b) = (leaf(&[2, 3, 4], 1), leaf(&[3], 2), leaf(&[3], 3));
    for training in [true, false] {
        let (rm, rv) = (constant(&[3], 4), t64(&[0.5, 1.5, 2.0], &[3]));
        let bn = |x: &Tensor, w: &Tensor, b: &Tensor| {
            x.batch_norm(Some(&rm), Some(&rv), Some(w), Some(b), training, 0.3, 1e-3)
        };
        let y = bn(&x, &w, &b)?;
        assert_eq!(
            rgs(&grads_cg(&y, &[x.clone(), w.clone(), b.clone()])?),
            [true; 3]
        );
        let y = bn(&x.detach(), &w, &b)?;
        assert_eq!(rgs(&grads_cg(&y, &[w.clone(), b.clone()])?), [true, true]);
        let y = bn(&x.detach(), &w.detach(), &b)?;
        assert_eq!(rgs(&grads_cg(&y, std::slice::from_ref(&b))?), [false]);
    }
    Ok(())
}

/// Options, versions of the input and target gradients, their values.
type BceCase<'a> = (
    tapegrad::BceWithLogitsOptions<'a>,
    u64,
    u64,
    [f64; 6],
    [f64; 6],
);

/// `F.binary_cross_entropy_with_logits`: the target gradient is `-x * g` before the mean's
/// division (so `x = ±f64::MAX` with `g = 1.25` overflows to `∓inf`, as PyTorch), and under
/// `create_graph` the gradients carry PyTorch's versions (its in-place `mul_` / `sub_` /
/// `div_`) and values.
#[test]
fn bce_with_logits_backward_in_pytorchs_order() -> R {
    let m = f64::MAX;
    let x = leaf64(&[m, -m, 3.0], &[1, 1, 3]);
    let t = leaf64(&[0.5, 1.0, 0.0], &[1, 1, 3]);
    let l = x.binary_cross_entropy_with_logits(&t, Default::default())?;
    l.backward_with(Some(&t64(&[1.25], &[])), Default::default())?;
    let gx = f64s(&x.grad().unwrap());
    for (g, e) in gx
        .iter()
        .zip([0.20833333333333334, -0.4166666666666667, 0.3969058861760139])
    {
        assert!(close_rel(*g, e, 1e-12), "{gx:?}");
    }
    assert_eq!(
        f64s(&t.grad().unwrap()),
        [f64::NEG_INFINITY, f64::INFINITY, -1.25]
    );

    let x = leaf64(&[-1.0, 0.5, 2.0, 0.25, -0.5, 1.5], &[2, 3]);
    let t = leaf64(&[0.0, 1.0, 0.5, 1.0, 0.25, 0.0], &[2, 3]);
    let w = t64(&[0.5, 1.0, 2.0], &[3]);
    let pw = t64(&[1.5, 0.5, 3.0], &[3]);
    use tapegrad::{BceWithLogitsOptions as O, Reduction};
    let cases: [BceCase; 3] = [
        (
            O::default(),
            1,
            1,
            [
                0.04482357022833252,
                -0.0629234447996909,
                0.06346617966298039,
                -0.07297058318570032,
                0.021256778133024234,
                0.1362624126989406,
            ],
            [
                0.16666666666666666,
                -0.08333333333333333,
                -0.3333333333333333,
                -0.041666666666666664,
                0.08333333333333333,
                -0.25,
            ],
        ),
        (
            O {
                weight: Some(&w),
                pos_weight: Some(&pw),
                reduction: Reduction::Mean,
            },
            1,
            4,
            [
                0.02241178511416626,
                -0.03146172239984545,
                0.08719805198525488,
                -0.05472793738927525,
                0.034224680866396205,
                0.2725248253978812,
            ],
            [
                0.1380525703132593,
                -0.12283974868167556,
                -0.5820479926380183,
                0.0031641424949518104,
                0.002160251318324443,
                -0.3657244813448317,
            ],
        ),
        (
            O {
                weight: Some(&w),
                pos_weight: Some(&pw),
                reduction: Reduction::Sum,
            },
            0,
            3,
            [
                0.13447071068499755,
                -0.1887703343990727,
                0.5231883119115293,
                -0.3283676243356515,
                0.20534808519837722,
                1.6351489523872873,
            ],
            [
                0.8283154218795558,
                -0.7370384920900533,
                -3.49228795582811,
                0.018984854969710863,
                0.012961507909946657,
                -2.1943468880689903,
            ],
        ),
    ];
    for (o, vx, vt, ex, et) in cases {
        let l = x.binary_cross_entropy_with_logits(&t, o)?;
        let gs = grads_cg(&l, &[x.clone(), t.clone()])?;
        assert_eq!((gs[0].version(), gs[1].version()), (vx, vt), "{o:?}");
        for (g, e) in [(&gs[0], ex), (&gs[1], et)] {
            assert!(g.requires_grad());
            let got = f64s(g);
            assert!(
                got.iter().zip(e).all(|(a, b)| close_rel(*a, b, 1e-12)),
                "{o:?}: {got:?}"
            );
        }
    }
    Ok(())
}
