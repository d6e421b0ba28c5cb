//! Memory formats of convolutions and poolings (issue 27): PyTorch 2.15's CPU kernels give a
//! channels-last output and gradients for channels-last operands. Every stride below was
//! recorded from torch 2.15 (CPU, 2 threads) with the same shapes and arguments; values are
//! checked against the same op on contiguous copies.

use crate::common::{R, f64s};
use tapegrad::autograd::{GradOptions, grad};
use tapegrad::{ConvOptions, ConvTransposeOptions, DType, Tensor};

fn vals(n: usize) -> Vec<f64> {
    (0..n)
        .map(|i| (0.37 * i as f64).sin() + 0.1 * (i % 7) as f64)
        .collect()
}

/// A tensor of `shape` and `dt`, in channels-last memory order when `cl`
/// (`x.contiguous(memory_format=torch.channels_last)`, `_3d` for 5 dims; for 3 dims the
/// `[N, L, C]` order, `x.transpose(1, 2).contiguous().transpose(1, 2)`).
fn input(shape: &[usize], dt: DType, cl: bool) -> tapegrad::Result<Tensor> {
    in_order(
        Tensor::from_vec(vals(shape.iter().product()), shape)?,
        dt,
        cl,
    )
}

/// `x` as `dt`, in channels-last memory order when `cl` (see [`input`]).
fn in_order(x: Tensor, dt: DType, cl: bool) -> tapegrad::Result<Tensor> {
    let shape = x.shape();
    let x = x.to_dtype(dt)?;
    if !cl {
        return Ok(x);
    }
    let nd = shape.len() as i64;
    let last: Vec<i64> = [0].into_iter().chain(2..nd).chain([1]).collect();
    let back: Vec<i64> = [0, nd - 1].into_iter().chain(1..nd - 1).collect();
    x.permute(&last)?.contiguous()?.permute(&back)
}

/// The gradients of `y` (summed against a fixed output gradient) for `xs`, under
/// create_graph as the sweep's.
fn grads_of(y: &Tensor, xs: &[Tensor]) -> tapegrad::Result<Vec<Tensor>> {
    let g = Tensor::from_vec(vals(y.numel()), &y.shape()[..])?.to_dtype(y.dtype())?;
    let opts = GradOptions::default().retain_graph(true).create_graph(true);
    let gs = grad(std::slice::from_ref(y), xs, &[Some(g)], opts)?;
    Ok(gs.into_iter().map(|g| g.unwrap()).collect())
}

type Conv = fn(&Tensor, &Tensor) -> tapegrad::Result<Tensor>;

/// One convolution case: dtype, input (shape, channels-last), weight (shape,
/// channels-last), the op, then torch's strides of the output, input and weight gradients.
type ConvCase = (
    DType,
    (&'static [usize], bool),
    (&'static [usize], bool),
    Conv,
    [&'static [usize]; 3],
);

fn c2(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv2d(w, None, &ConvOptions::default())
}
fn c2_g3(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv2d(
        w,
        None,
        &ConvOptions {
            groups: 3,
            padding: 1.into(),
            ..Default::default()
        },
    )
}
fn c2_groups3(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv2d(
        w,
        None,
        &ConvOptions {
            groups: 3,
            ..Default::default()
        },
    )
}
fn c3(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv3d(w, None, &ConvOptions::default())
}
fn ct2(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv_transpose2d(
        w,
        None,
        &ConvTransposeOptions {
            stride: 2.into(),
            ..Default::default()
        },
    )
}
fn ct2_g3(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv_transpose2d(
        w,
        None,
        &ConvTransposeOptions {
            groups: 3,
            ..Default::default()
        },
    )
}
fn c1(x: &Tensor, w: &Tensor) -> tapegrad::Result<Tensor> {
    x.conv1d(w, None, &ConvOptions::default())
}

#[rustfmt::skip]
fn conv_cases() -> Vec<ConvCase> {
    use DType::{F32, F64};
    vec![
        // oneDNN (float32) and the slow kernels (float64) keep channels-last for 2-d: from
        // the input or from the weight
        (F32, (&[2, 3, 5, 4], true), (&[4, 3, 3, 2], false), c2, [&[36, 1, 12, 4], &[60, 1, 12, 3], &[18, 1, 6, 3]]),
        (F64, (&[2, 3, 5, 4], true), (&[4, 3, 3, 2], false), c2, [&[36, 1, 12, 4], &[60, 1, 12, 3], &[18, 1, 6, 3]]),
        (F32, (&[2, 3, 5, 4], false), (&[4, 3, 3, 2], true), c2, [&[36, 1, 12, 4], &[60, 1, 12, 3], &[18, 1, 6, 3]]),
        (F64, (&[2, 3, 5, 4], false), (&[4, 3, 3, 2], true), c2, [&[36, 1, 12, 4], &[60, 1, 12, 3], &[18, 1, 6, 3]]),
        (F64, (&[1, 3, 5, 4], true), (&[4, 3, 3, 2], false), c2, [&[36, 1, 12, 4], &[60, 1, 12, 3], &[18, 1, 6, 3]]),
        // size-1 output dims: the exact channels-last strides
        (F64, (&[2, 3, 3, 2], true), (&[4, 3, 3, 2], false), c2, [&[4, 1, 4, 4], &[18, 1, 6, 3], &[18, 1, 6, 3]]),
        // groups: the slow kernels' weight gradient is `contiguous(channels_last)` of a
        // contiguous one (kept as is with one input channel per group)
        (F32, (&[2, 3, 5, 4], true), (&[3, 1, 3, 3], false), c2_g3, [&[60, 1, 12, 3], &[60, 1, 12, 3], &[9, 1, 3, 1]]),
        (F64, (&[2, 3, 5, 4], true), (&[3, 1, 3, 3], false), c2_g3, [&[60, 1, 12, 3], &[60, 1, 12, 3], &[9, 9, 3, 1]]),
        (F64, (&[2, 6, 5, 4], false), (&[6, 2, 3, 3], true), c2_groups3, [&[36, 1, 12, 6], &[120, 1, 24, 6], &[18, 1, 6, 2]]),
        (F64, (&[2, 3, 5, 4], true), (&[3, 1, 3, 3], false), ct2_g3, [&[126, 1, 18, 3], &[60, 1, 12, 3], &[9, 9, 3, 1]]),
        // 3-d: oneDNN only (float32 with a batch); the slow kernels are contiguous
        (F32, (&[2, 3, 4, 3, 4], true), (&[2, 3, 2, 2, 2], false), c3, [&[36, 1, 12, 6, 2], &[144, 1, 36, 12, 3], &[24, 1, 12, 6, 3]]),
        (F64, (&[2, 3, 4, 3, 4], true), (&[2, 3, 2, 2, 2], false), c3, [&[36, 18, 6, 3, 1], &[144, 48, 12, 4, 1], &[24, 8, 4, 2, 1]]),
        (F32, (&[1, 3, 4, 3, 4], true), (&[2, 3, 2, 2, 2], false), c3, [&[36, 18, 6, 3, 1], &[144, 48, 12, 4, 1], &[24, 8, 4, 2, 1]]),
        // transposed
        (F32, (&[2, 3, 4, 3], true), (&[3, 2, 2, 2], false), ct2, [&[96, 1, 12, 2], &[36, 1, 9, 3], &[8, 1, 4, 2]]),
        (F64, (&[2, 3, 4, 3], true), (&[3, 2, 2, 2], false), ct2, [&[96, 1, 12, 2], &[36, 1, 9, 3], &[8, 1, 4, 2]]),
        // 1-d: contiguous whatever the input's order
        (F64, (&[2, 3, 5], true), (&[4, 3, 2], false), c1, [&[16, 4, 1], &[15, 5, 1], &[6, 2, 1]]),
    ]
}

#[test]
fn convolutions_keep_pytorchs_memory_format() -> R {
    for (i, (dt, (xs, xcl), (ws, wcl), f, want)) in conv_cases().into_iter().enumerate() {
        let x = input(xs, dt, xcl)?.requires_grad_(true)?;
        let w = input(ws, dt, wcl)?.requires_grad_(true)?;
        let y = f(&x, &w)?;
        let gs = grads_of(&y, &[x.clone(), w.clone()])?;
        let got = [y.strides(), gs[0].strides(), gs[1].strides()];
        for (k, what) in ["output", "input gradient", "weight gradient"]
            .iter()
            .enumerate()
        {
            assert_eq!(got[k], want[k], "case {i} {dt:?} {what}");
        }
        assert_eq!(y.grad_fn().unwrap().name(), "ConvolutionBackward0");
        // the same values as on contiguous operands
        let (xc, wc) = (x.detach().contiguous()?, w.detach().contiguous()?);
        let (xc, wc) = (xc.requires_grad_(true)?, wc.requires_grad_(true)?);
        let yc = f(&xc, &wc)?;
        let gc = grads_of(&yc, &[xc.clone(), wc.clone()])?;
        assert_eq!(f64s(&y), f64s(&yc), "case {i} values");
        assert_eq!(f64s(&gs[0]), f64s(&gc[0]), "case {i} input gradient values");
        assert_eq!(
            f64s(&gs[1]),
            f64s(&gc[1]),
            "case {i} weight gradient values"
        );
    }
    Ok(())
}

#[test]
fn complex_convolution_gradients_are_contiguous() -> R {
    // torch 2.15, complex64: output (36, 1, 12, 4), input gradient (60, 20, 4, 1), weight
    // gradient (18, 6, 2, 1)
    let x = input(&[2, 3, 5, 4], DType::C64, true)?.requires_grad_(true)?;
    let w = input(&[4, 3, 3, 2], DType::C64, false)?.requires_grad_(true)?;
    let y = c2(&x, &w)?;
    assert_eq!(y.strides(), vec![36, 1, 12, 4]);
    let g = Tensor::ones(&[2, 4, 3, 3], DType::C64)?;
    let gs = grad(
        std::slice::from_ref(&y),
        &[x, w],
        &[Some(g)],
        GradOptions::default(),
    )?;
    assert_eq!(gs[0].as_ref().unwrap().strides(), vec![60, 20, 4, 1]);
    assert_eq!(gs[1].as_ref().unwrap().strides(), vec![18, 6, 2, 1]);
    Ok(())
}

type Pool = fn(&Tensor) -> tapegrad::Result<Tensor>;

#[test]
fn poolings_keep_pytorchs_memory_format() -> R {
    // torch 2.15 (float64, channels-last [2, 3, 5, 6] input: strides (90, 1, 18, 3)):
    // output strides, then the input gradient's
    #[rustfmt::skip]
    let cases: Vec<(&str, Pool, &[usize], &[usize])> = vec![
        ("max_pool2d", |x| x.max_pool2d(2, None, 0, 1, false), &[18, 1, 9, 3], &[90, 1, 18, 3]),
        ("max_pool2d indices", |x| Ok(x.max_pool2d_with_indices(3, 2, 1, 1, false)?.1), &[27, 1, 9, 3], &[]),
        ("max_pool2d dilated", |x| x.max_pool2d(2, 1, 1, 2, false), &[90, 1, 18, 3], &[90, 1, 18, 3]),
        ("avg_pool2d", |x| x.avg_pool2d(2, None, 0, false, true, None), &[18, 1, 9, 3], &[90, 1, 18, 3]),
        ("avg_pool2d ceil", |x| x.avg_pool2d(3, 2, 1, true, false, None), &[36, 1, 12, 3], &[90, 1, 18, 3]),
        ("adaptive_avg_pool2d", |x| x.adaptive_avg_pool2d([3, 2]), &[18, 1, 6, 3], &[90, 1, 18, 3]),
        // PyTorch's `mean` for a 1 x 1 output: a contiguous gradient
        ("adaptive_avg_pool2d 1", |x| x.adaptive_avg_pool2d(1), &[3, 1, 3, 3], &[90, 30, 6, 1]),
        ("adaptive_max_pool2d", |x| x.adaptive_max_pool2d([2, 4]), &[24, 1, 12, 3], &[90, 1, 18, 3]),
    ];
    for (name, f, out, gx) in cases {
        let x = input(&[2, 3, 5, 6], DType::F64, true)?.requires_grad_(true)?;
        let y = f(&x)?;
        assert_eq!(y.strides(), out, "{name} output");
        let xc = x.detach().contiguous()?;
        assert_eq!(f64s(&y), f64s(&f(&xc)?), "{name} values");
        if gx.is_empty() {
            continue;
        }
        let g = grads_of(&y, std::slice::from_ref(&x))?;
        assert_eq!(g[0].strides(), gx, "{name} input gradient");
        // a fresh tensor (torch `_is_view()` false)
        assert!(!g[0].is_view(), "{name} gradient is a view");
    }
    Ok(())
}

#[test]
fn max_pool1d_of_a_channels_last_input_is_channels_last() -> R {
    // torch: max_pool1d runs max_pool2d on `x.unsqueeze(-2)`: [2, 3, 1, 7] with strides
    // (21, 1, 21, 3) suggests channels-last, so the output [2, 3, 1, 3] has (9, 1, 9, 3) and
    // squeezed (9, 1, 3); the input gradient (21, 1, 3)
    let x = input(&[2, 3, 7], DType::F64, true)?.requires_grad_(true)?;
    assert_eq!(x.strides(), vec![21, 1, 3]);
    let y = x.max_pool1d(2, None, 0, 1, false)?;
    assert_eq!(y.strides(), vec![9, 1, 3]);
    let g = grads_of(&y, std::slice::from_ref(&x))?;
    assert_eq!(g[0].strides(), vec![21, 1, 3]);
    let (y, i) = x.max_pool1d_with_indices(2, None, 0, 1, false)?;
    assert_eq!((y.strides(), i.strides()), (vec![9, 1, 3], vec![9, 1, 3]));
    Ok(())
}

#[test]
fn integer_max_pool_keeps_channels_last() -> R {
    // torch 2.15, int64 and uint8 [2, 2, 5, 6] channels-last, kernel 2, ceil_mode: (18, 1, 6, 2)
    for dt in [DType::I64, DType::U8] {
        let v: Vec<i64> = (0..120).map(|i| (i * 7) % 11).collect();
        let x = in_order(Tensor::from_vec(v, &[2, 2, 5, 6])?, dt, true)?;
        let y = x.max_pool2d(2, None, 0, 1, true)?;
        assert_eq!(y.strides(), vec![18, 1, 6, 2], "{dt:?}");
    }
    Ok(())
}

#[test]
fn max_pool_gradient_is_not_a_view() -> R {
    // torch 2.15: F.max_pool2d(x [1, 2, 4, 1] float64, [1, 2], [2, 1], [0, 1], [1, 2],
    // return_indices=True): the input gradient under create_graph has strides (8, 4, 1, 1)
    // and `_is_view()` false (the backward kernel's own tensor), windows without a tap
    // inside the input too
    let x = input(&[1, 2, 4, 1], DType::F64, false)?.requires_grad_(true)?;
    let (y, _) = x.max_pool2d_with_indices([1, 2], [2, 1], [0, 1], [1, 2], false)?;
    let g = grads_of(&y, std::slice::from_ref(&x))?;
    assert_eq!(g[0].strides(), vec![8, 4, 1, 1]);
    assert!(!g[0].is_view());
    // windows with taps inside: the contiguous strides too
    let x = input(&[2, 3, 5, 6], DType::F64, false)?.requires_grad_(true)?;
    let y = x.max_pool2d(2, None, 0, 1, false)?;
    let g = grads_of(&y, std::slice::from_ref(&x))?;
    assert_eq!(g[0].strides(), vec![90, 30, 6, 1]);
    assert!(!g[0].is_view());
    Ok(())
}

#[test]
fn max_unpool2d_checks_output_size_as_pytorch() -> R {
    // torch 2.15: a [1, 1, 2, 2] pooling of a 4 x 4 plane (kernel 2): the default size is
    // 4, a given size must lie strictly between 2 and 6 (ValueError `invalid output_size
    // "[6, 6]" (dim 0 must be between 2 and 6)`); 2 or 4 elements (`output_size should be a
    // sequence containing 2 or 4 elements, but it has a length of '1'`)
    let x = input(&[1, 1, 4, 4], DType::F32, false)?;
    let (y, i) = x.max_pool2d_with_indices(2, None, 0, 1, false)?;
    for ok in [vec![4usize, 4], vec![5, 5], vec![1, 1, 5, 3]] {
        let u = y.max_unpool2d(&i, 2, None, 0, &ok)?;
        assert_eq!(u.shape()[2..], ok[ok.len() - 2..]);
    }
    for (bad, msg) in [
        (
            vec![6usize, 6],
            "invalid output_size \"[6, 6]\" (dim 0 must be between 2 and 6)",
        ),
        (
            vec![2, 2],
            "invalid output_size \"[2, 2]\" (dim 0 must be between 2 and 6)",
        ),
        (
            vec![4, 7],
            "invalid output_size \"[4, 7]\" (dim 1 must be between 2 and 6)",
        ),
        (
            vec![5],
            "output_size should be a sequence containing 2 or 4 elements, but it has a length of '1'",
        ),
        (
            vec![1, 5, 5],
            "output_size should be a sequence containing 2 or 4 elements, but it has a length of '3'",
        ),
    ] {
        let e = y.max_unpool2d(&i, 2, None, 0, &bad).unwrap_err();
        assert_eq!(e.kind(), tapegrad::ErrorKind::InvalidArgument, "{bad:?}");
        assert!(e.to_string().contains(msg), "{bad:?}: {e}");
    }
    Ok(())
}

#[test]
fn max_pool1d_output_size_message_is_pytorchs() -> R {
    // torch 2.15: F.max_pool1d(x [1, 1, 3], 4, 1, 0) -> "max_pool1d() Invalid computed
    // output size: 0"; with return_indices the 2-d kernel's "Given input size: (1x1x3).
    // Calculated output size: (1x1x0). Output size is too small"
    let x = input(&[1, 1, 3], DType::F64, false)?;
    let e = x.max_pool1d(4, 1, 0, 1, false).unwrap_err();
    assert_eq!(e.kind(), tapegrad::ErrorKind::InvalidArgument);
    assert!(
        e.to_string()
            .contains("max_pool1d() Invalid computed output size: 0"),
        "{e}"
    );
    let e = x.max_pool1d_with_indices(4, 1, 0, 1, false).unwrap_err();
    assert!(
        e.to_string().contains(
            "Given input size: (1x1x3). Calculated output size: (1x1x0). Output size is too small"
        ),
        "{e}"
    );
    Ok(())
}

#[test]
fn unbatched_convolution_nodes_are_pytorchs() -> R {
    // torch 2.15 (float64): F.conv2d(x [3, 5, 4], w [2, 3, 2, 2]) is
    // `conv(x.unsqueeze(0)).squeeze(0)`: output node SqueezeBackward1, a view, strides
    // (12, 3, 1); the input gradient under create_graph also SqueezeBackward1, a view,
    // (20, 4, 1). conv1d of [3, 5] with [2, 3, 2]: both nodes SqueezeBackward1 too
    let x = input(&[3, 5, 4], DType::F64, false)?.requires_grad_(true)?;
    let w = input(&[2, 3, 2, 2], DType::F64, false)?.requires_grad_(true)?;
    let y = c2(&x, &w)?;
    assert_eq!(y.grad_fn().unwrap().name(), "SqueezeBackward1");
    assert!(y.is_view());
    assert_eq!(y.strides(), vec![12, 3, 1]);
    let g = grads_of(&y, std::slice::from_ref(&x))?;
    assert_eq!(g[0].grad_fn().unwrap().name(), "SqueezeBackward1");
    assert!(g[0].is_view());
    assert_eq!(g[0].strides(), vec![20, 4, 1]);
    let x1 = input(&[3, 5], DType::F64, false)?.requires_grad_(true)?;
    let w1 = input(&[2, 3, 2], DType::F64, false)?;
    let y1 = c1(&x1, &w1)?;
    assert_eq!(y1.grad_fn().unwrap().name(), "SqueezeBackward1");
    let g1 = grads_of(&y1, std::slice::from_ref(&x1))?;
    assert_eq!(g1[0].grad_fn().unwrap().name(), "SqueezeBackward1");
    assert!(g1[0].is_view());
    Ok(())
}
