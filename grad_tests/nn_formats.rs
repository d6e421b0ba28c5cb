//! Output geometry PyTorch 2.15 gives nn ops on unusual inputs (checked in torch, figures in
//! the comments): normalization of channels-last inputs (batch_norm and group_norm keep the
//! format in their output and input gradient, instance_norm and layer_norm are contiguous),
//! and which pool
//! and convolution arguments above int32 PyTorch refuses.

use crate::common::{R, f64s};
use tapegrad::autograd::{GradOptions, grad};
use tapegrad::{ConvOptions, ConvTransposeOptions, DType, ErrorKind, Tensor};

fn vals(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (0.37 * i as f64).sin() + 0.1 * i as f64 % 1.3)
        .collect()
}

/// A `[2, 3, 4, 5]` (or `[2, 3, 4, 5, 2]`) input in channels-last memory order, as
/// `x.contiguous(memory_format=torch.channels_last)` (`_3d`).
fn channels_last(shape: &[usize]) -> tapegrad::Result<Tensor> {
    let x = Tensor::from_vec(vals(shape.iter().product()), shape)?;
    let nd = shape.len() as i64;
    let last: Vec<i64> = [0].into_iter().chain(2..nd).chain([1]).collect();
    let back: Vec<i64> = [0, nd - 1].into_iter().chain(1..nd - 1).collect();
    x.permute(&last)?.contiguous()?.permute(&back)
}

type Norm = fn(&Tensor) -> tapegrad::Result<Tensor>;

fn norms() -> Vec<(&'static str, Norm, bool)> {
    fn ones() -> Tensor {
        Tensor::ones(&[3], DType::F64).unwrap()
    }
    fn zeros() -> Tensor {
        Tensor::zeros(&[3], DType::F64).unwrap()
    }
    vec![
        (
            "batch_norm train",
            |x| {
                x.batch_norm(
                    Some(&zeros()),
                    Some(&ones()),
                    Some(&ones()),
                    Some(&zeros()),
                    true,
                    0.1,
                    1e-5,
                )
            },
            true,
        ),
        (
            "batch_norm train, no stats",
            |x| x.batch_norm(None, None, None, None, true, 0.1, 1e-5),
            true,
        ),
        (
            "batch_norm eval",
            |x| {
                x.batch_norm(
                    Some(&zeros()),
                    Some(&ones()),
                    Some(&ones()),
                    None,
                    false,
                    0.1,
                    1e-5,
                )
            },
            true,
        ),
        (
            "group_norm",
            |x| x.group_norm(3, Some(&ones()), Some(&zeros()), 1e-5),
            true,
        ),
        (
            "group_norm, one group",
            |x| x.group_norm(1, None, None, 1e-5),
            true,
        ),
        (
            "instance_norm",
            |x| x.instance_norm(None, None, None, None, true, 0.1, 1e-5),
            false,
        ),
        (
            "instance_norm, running stats",
            |x| x.instance_norm(Some(&zeros()), Some(&ones()), None, None, true, 0.1, 1e-5),
            false,
        ),
        // layer_norm: output and input gradient contiguous (torch: (60, 20, 5, 1) for
        // normalized_shape (5,) and (3, 4, 5), with or without create_graph)
        (
            "layer_norm, last dim",
            |x| {
                let s = x.shape();
                let w = Tensor::ones(&s[s.len() - 1..], DType::F64)?;
                x.layer_norm(&s[s.len() - 1..], Some(&w), Some(&w), 1e-5)
            },
            false,
        ),
        (
            "layer_norm, all but the batch",
            |x| x.layer_norm(&x.shape()[1..], None, None, 1e-5),
            false,
        ),
    ]
}

#[test]
fn norms_of_channels_last_inputs_keep_pytorchs_format() -> R {
    // torch: channels_last strides (60, 1, 15, 3) / (120, 1, 30, 6, 3); contiguous
    // (60, 20, 5, 1) / (120, 40, 10, 2, 1)
    for (shape, cl, contiguous) in [
        (
            vec![2usize, 3, 4, 5],
            vec![60usize, 1, 15, 3],
            vec![60usize, 20, 5, 1],
        ),
        (
            vec![2, 3, 4, 5, 2],
            vec![120, 1, 30, 6, 3],
            vec![120, 40, 10, 2, 1],
        ),
    ] {
        for (name, f, keeps) in norms() {
            let x = channels_last(&shape)?.requires_grad_(true)?;
            assert_eq!(x.strides(), cl);
            let y = f(&x)?;
            let want = if keeps { &cl } else { &contiguous };
            assert_eq!(&y.strides(), want, "{name} {shape:?} output");
            // torch `_is_view()`: true only for instance_norm (a view of its batch_norm)
            assert_eq!(
                y.is_view(),
                name.starts_with("instance_norm"),
                "{name} {shape:?} is_view"
            );
            // the same values as for a contiguous input
            let xc = x.detach().contiguous()?.requires_grad_(true)?;
            let yc = f(&xc)?;
            assert_eq!(yc.strides(), contiguous, "{name} contiguous input");
            assert_eq!(f64s(&y), f64s(&yc), "{name} values");
            // input gradients: a contiguous and a channels-last output gradient
            let g = Tensor::from_vec(
                vals(y.numel()).iter().map(|v| v * 0.5 - 0.2).collect(),
                &shape,
            )?;
            let gcl = channels_last(&shape)?;
            // torch: group_norm's gradient under create_graph is its composite's, in the
            // output gradient's layout; every other one is the same in both modes
            for (go, create_graph) in [(&g, false), (&gcl, false), (&g, true), (&gcl, true)] {
                let opts = GradOptions::default()
                    .retain_graph(true)
                    .create_graph(create_graph);
                let gx = grad(
                    std::slice::from_ref(&y),
                    std::slice::from_ref(&x),
                    &[Some(go.clone())],
                    opts,
                )?;
                let gx = gx[0].as_ref().unwrap();
                let want = if keeps && create_graph && name.starts_with("group_norm") {
                    go.strides()
                } else {
                    want.clone()
                };
                assert_eq!(
                    gx.strides(),
                    want,
                    "{name} {shape:?} input gradient (create_graph {create_graph})"
                );
                let gxc = grad(
                    std::slice::from_ref(&yc),
                    std::slice::from_ref(&xc),
                    &[Some(go.clone())],
                    GradOptions::default().retain_graph(true),
                )?;
                let d: f64 = f64s(gx)
                    .iter()
                    .zip(f64s(gxc[0].as_ref().unwrap()))
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0, f64::max);
                assert!(d < 1e-12, "{name} gradient values differ by {d}");
            }
        }
    }
    Ok(())
}

#[test]
fn pool_and_transposed_conv_geometry_above_int32() -> R {
    // torch: max_pool2d, the return_indices forms and avg_pool1d/2d narrow kernel, stride,
    // padding and dilation to int ("value cannot be converted to type int without overflow");
    // plain float max_pool1d computes in int64 (stride 2^31 -> [1, 4, 1]); conv_transpose*d
    // narrow stride and dilation ("stride should be greater than zero, but got ...
    // -2147483648"); plain convolutions take any int64 (stride 2^31 -> [1, 1, 1, 1])
    let big = 1i64 << 31;
    let x = Tensor::from_vec(vals(16), &[1, 1, 4, 4])?;
    let x1 = x.squeeze_dim(0)?;
    let kind = |r: tapegrad::Result<Tensor>| r.unwrap_err().kind();
    let ia = ErrorKind::InvalidArgument;
    assert_eq!(kind(x.max_pool2d(&[big], None, &[0], &[1], false)), ia);
    assert_eq!(kind(x.max_pool2d(&[2], &[big], &[0], &[1], false)), ia);
    assert_eq!(kind(x.max_pool2d(&[2], None, &[0], &[big], false)), ia);
    assert_eq!(
        kind(x.max_pool2d(&[2 * big], None, &[big], &[1], false)),
        ia
    );
    let e = x
        .max_pool2d_with_indices(&[2], &[big], &[0], &[1], false)
        .unwrap_err();
    assert!(
        e.to_string().contains("max_pool2d") && e.to_string().contains("int"),
        "{e}"
    );
    let e = x1
        .max_pool1d_with_indices(2, Some(big), 0, 1, false)
        .unwrap_err();
    assert_eq!(e.kind(), ia);
    assert!(e.to_string().contains("max_pool1d"), "{e}");
    assert_eq!(
        x1.max_pool1d(2, Some(big), 0, 1, false)?.shape(),
        vec![1, 4, 1]
    );
    assert_eq!(
        kind(x.avg_pool2d(&[2], &[big], &[0], false, true, None)),
        ia
    );
    assert_eq!(
        kind(x.avg_pool2d(&[big], None, &[0], false, true, None)),
        ia
    );
    let e = x1.avg_pool1d(2, Some(big), 0, false, true).unwrap_err();
    assert_eq!(e.kind(), ia);
    assert!(e.to_string().contains("avg_pool1d"), "{e}");
    // int32::MAX itself is fine; a divisor above it too
    assert_eq!(
        x.max_pool2d(&[2], &[big - 1], &[0], &[1], false)?.shape(),
        vec![1, 1, 1, 1]
    );
    let d = Some(big);
    assert_eq!(
        x.avg_pool2d(&[2], None, &[0], false, true, d)?.shape(),
        vec![1, 1, 2, 2]
    );
    let w = Tensor::from_vec(vals(4), &[1, 1, 2, 2])?;
    let o = ConvOptions {
        stride: big.into(),
        ..Default::default()
    };
    assert_eq!(x.conv2d(&w, None, &o)?.shape(), vec![1, 1, 1, 1]);
    // torch wraps 2^32 + 1 to 1 (a stride-1 product into an output sized for 2^32 + 1): a
    // garbage geometry, refused here like every value above int32::MAX
    let wraps = (1i64 << 32) + 1;
    for (stride, dilation) in [(big, 1i64), (1, big), (big + 1, 1), (wraps, 1), (1, wraps)] {
        let o = ConvTransposeOptions {
            stride: stride.into(),
            dilation: dilation.into(),
            ..Default::default()
        };
        let e = x.conv_transpose2d(&w, None, &o).unwrap_err();
        assert_eq!(e.kind(), ia);
        assert!(e.to_string().contains("int32"), "{e}");
        let w1 = Tensor::from_vec(vals(2), &[1, 1, 2])?;
        assert_eq!(
            kind(x1.narrow(1, 0, 1)?.conv_transpose1d(&w1, None, &o)),
            ia
        );
        let w3 = Tensor::from_vec(vals(8), &[1, 1, 2, 2, 2])?;
        let x3 = Tensor::from_vec(vals(8), &[1, 1, 2, 2, 2])?;
        let e = x3.conv_transpose3d(&w3, None, &o).unwrap_err();
        assert_eq!(e.kind(), ia);
        assert!(e.to_string().contains("conv_transpose3d"), "{e}");
    }
    Ok(())
}

#[test]
fn layer_norm_gradients_are_contiguous_as_pytorchs() -> R {
    // torch 2.15: a channels-last [2, 3, 4, 5] input, normalized_shape (5,): grads of input,
    // weight, bias strides (60, 20, 5, 1), (1,), (1,) with or without create_graph, for a
    // contiguous or channels-last output gradient; a transposed [5, 4] input: (4, 1)
    let x = channels_last(&[2, 3, 4, 5])?.requires_grad_(true)?;
    let w = Tensor::from_vec(vals(5), &[5])?.requires_grad_(true)?;
    let b = Tensor::from_vec(vals(5), &[5])?.requires_grad_(true)?;
    let y = x.layer_norm(&[5], Some(&w), Some(&b), 1e-5)?;
    let g = Tensor::from_vec(vals(120), &[2, 3, 4, 5])?;
    for go in [g.clone(), channels_last(&[2, 3, 4, 5])?] {
        for create in [false, true] {
            let opts = GradOptions::default()
                .retain_graph(true)
                .create_graph(create);
            let gs = grad(
                std::slice::from_ref(&y),
                &[x.clone(), w.clone(), b.clone()],
                &[Some(go.clone())],
                opts,
            )?;
            let st: Vec<Vec<usize>> = gs.iter().map(|g| g.as_ref().unwrap().strides()).collect();
            assert_eq!(st, vec![vec![60, 20, 5, 1], vec![1], vec![1]], "{create}");
        }
    }
    let xt = Tensor::from_vec(vals(20), &[4, 5])?
        .t()?
        .requires_grad_(true)?;
    let y = xt.layer_norm(&[4], None, None, 1e-5)?;
    let go = Tensor::from_vec(vals(20), &[4, 5])?.t()?;
    for create in [false, true] {
        let opts = GradOptions::default()
            .retain_graph(true)
            .create_graph(create);
        let gs = grad(
            std::slice::from_ref(&y),
            std::slice::from_ref(&xt),
            &[Some(go.clone())],
            opts,
        )?;
        assert_eq!(gs[0].as_ref().unwrap().strides(), vec![4, 1], "{create}");
    }
    Ok(())
}
