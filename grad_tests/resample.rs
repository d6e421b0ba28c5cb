//! Resampling (`ops/resample/`): values against PyTorch 2.15 (numbers recorded with
//! `torch.nn.functional` on `sin(0.7 * arange(40)).reshape(1, 2, 4, 5)`, f64), node names,
//! dtype rules and errors that change nothing. The full PyTorch comparison (values, grads,
//! second order, errors) is the sweep's `resample` family.

use crate::common::{R, assert_close, f64s, t64};
use tapegrad::{DType, ErrorKind, InterpolateMode, InterpolateOptions, PadMode, Tensor};

fn img() -> Tensor {
    let v: Vec<f64> = (0..40).map(|i| (0.7 * i as f64).sin()).collect();
    t64(&v, &[1, 2, 4, 5])
}

fn head(t: &Tensor) -> Vec<f64> {
    f64s(t)[..8].to_vec()
}

fn opts<'a>(
    size: Option<&[usize]>,
    scale_factor: Option<&'a [f64]>,
    mode: InterpolateMode,
    align_corners: Option<bool>,
) -> InterpolateOptions<'a> {
    InterpolateOptions {
        size: size.map(Into::into),
        scale_factor,
        mode,
        align_corners,
        recompute_scale_factor: None,
    }
}

#[test]
fn interpolate_matches_torch() -> R {
    let x = img();
    let y = x.interpolate(opts(None, Some(&[1.5]), InterpolateMode::Bilinear, None))?;
    assert_eq!(y.shape(), vec![1, 2, 6, 7]);
    let want = [
        0.0,
        0.322108843618845,
        0.701089694362819,
        0.928577722863332,
        0.924329548318667,
        0.775172497233379,
        0.4230250195714,
        -0.17539161384481,
    ];
    assert_close(&head(&y), &want, 1e-12);
    let y = x.interpolate(opts(
        Some(&[3, 7]),
        None,
        InterpolateMode::Bilinear,
        Some(true),
    ))?;
    let want = [
        0.0,
        0.429478458158461,
        0.757961701487947,
        0.98544972998846,
        0.903956154428736,
        0.687135627817885,
        0.334988150155905,
        0.153101685514585,
    ];
    assert_close(&head(&y), &want, 1e-12);
    let y = x.interpolate(opts(None, Some(&[1.5]), InterpolateMode::Nearest, None))?;
    let want = [
        0.0,
        0.0,
        0.644217687237691,
        0.9854497299884601,
        0.9854497299884601,
        0.8632093666488739,
        0.3349881501559051,
        0.0,
    ];
    assert_close(&head(&y), &want, 1e-15);
    Ok(())
}

#[test]
fn bilinear_backward_spreads_the_weights() -> R {
    let x = img().requires_grad_(true)?;
    let y = x.interpolate(opts(None, Some(&[1.5]), InterpolateMode::Bilinear, None))?;
    assert_eq!(y.grad_fn().unwrap().name(), "UpsampleBilinear2DBackward0");
    y.sum()?.backward()?;
    let g = x.grad().expect("a gradient");
    assert_close(
        &head(&g),
        &[2.25, 2.25, 2.25, 2.25, 1.5, 2.25, 2.25, 2.25],
        1e-12,
    );
    Ok(())
}

#[test]
fn pad_and_unfold_match_torch() -> R {
    let x = img();
    let y = x.pad(&[2, 1, 1, 2], PadMode::Reflect, None)?;
    assert_eq!(y.shape(), vec![1, 2, 7, 8]);
    let want = [
        -0.9824526126243326,
        -0.8715757724135877,
        -0.35078322768961984,
        -0.8715757724135877,
        -0.9824526126243326,
        -0.6312666378723216,
        0.016813900484349713,
        -0.6312666378723216,
    ];
    assert_close(&head(&y), &want, 0.0);
    let y = x.pad(&[2, 1, -1, 2], PadMode::Circular, None)?;
    let want = [
        -0.6312666378723216,
        0.016813900484349713,
        -0.35078322768961984,
        -0.8715757724135877,
        -0.9824526126243326,
        -0.6312666378723216,
        0.016813900484349713,
        -0.35078322768961984,
    ];
    assert_close(&head(&y), &want, 0.0);
    let y = x.unfold_blocks(&[2], &[2, 1], &[1], &[2, 1])?;
    let mut want = [0.0; 8];
    want[7] = -0.35078322768961984;
    assert_close(&head(&y), &want, 0.0);
    Ok(())
}

#[test]
fn node_names_are_pytorchs() -> R {
    let x = img().requires_grad_(true)?;
    let name = |t: Tensor| t.grad_fn().unwrap().name();
    let cases = [
        (
            x.pad(&[1, 1], PadMode::Constant, None)?,
            "ConstantPadNdBackward0",
        ),
        (
            x.pad(&[1, 1, 1, 1], PadMode::Reflect, None)?,
            "ReflectionPad2DBackward0",
        ),
        (
            x.reshape(&[2, 4, 5])?
                .pad(&[1, 1], PadMode::Reflect, None)?,
            "ReflectionPad1DBackward0",
        ),
        (
            x.pad(&[1, 1, 1, 1], PadMode::Replicate, None)?,
            "ReplicationPad2DBackward0",
        ),
        (x.unfold_blocks(&[2], &[1], &[0], &[1])?, "Im2ColBackward0"),
        (x.pixel_unshuffle(1)?, "PixelUnshuffleBackward0"),
        (
            x.reshape(&[1, 8, 1, 5])?.pixel_shuffle(2)?,
            "PixelShuffleBackward0",
        ),
    ];
    for (t, want) in cases {
        assert_eq!(name(t), want);
    }
    let c = x.pad(&[2, 1, -1, 3], PadMode::Circular, None)?;
    assert_eq!(
        (c.grad_fn().unwrap().name(), c.version()),
        ("CopySlices", 4)
    );
    let cols = x.unfold_blocks(&[2], &[1], &[0], &[1])?;
    let back = cols.fold(&[4, 5], &[2], &[1], &[0], &[1])?;
    assert_eq!(back.grad_fn().unwrap().name(), "Col2ImBackward0");
    Ok(())
}

#[test]
fn integer_and_bool_inputs_follow_torch() -> R {
    let i = Tensor::from_vec((0..12i64).collect(), &[1, 3, 4])?;
    let b = Tensor::ones(&[1, 3, 4], DType::Bool)?;
    // copies work in any dtype
    let p = i.pad(&[1, 0], PadMode::Constant, Some(7.0))?;
    assert_eq!(p.to_vec::<i64>()?[..6], [7, 0, 1, 2, 3, 7]);
    assert_eq!(
        i.pad(&[1, 1], PadMode::Reflect, None)?.to_vec::<i64>()?[..6],
        [1, 0, 1, 2, 3, 2]
    );
    assert_eq!(
        b.pad(&[1, 1], PadMode::Circular, None)?.dtype(),
        DType::Bool
    );
    assert_eq!(
        i.reshape(&[4, 1, 3])?.pixel_shuffle(2)?.to_vec::<i64>()?,
        vec![0, 3, 1, 4, 2, 5, 6, 9, 7, 10, 8, 11]
    );
    assert_eq!(
        b.reshape(&[1, 1, 3, 4])?
            .unfold_blocks(&[2], &[1], &[0], &[1])?
            .dtype(),
        DType::Bool
    );
    // kernels PyTorch lacks for these dtypes
    let kind = |r: tapegrad::Result<Tensor>| r.unwrap_err().kind();
    assert_eq!(
        kind(b.pad(&[1, 1], PadMode::Reflect, None)),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        kind(b.pad(&[1, 1], PadMode::Replicate, None)),
        ErrorKind::DTypeMismatch
    );
    let i4 = i.reshape(&[1, 1, 3, 4])?;
    assert_eq!(
        kind(i4.unfold_blocks(&[2], &[1], &[0], &[1])),
        ErrorKind::DTypeMismatch
    );
    let o = opts(None, Some(&[2.0]), InterpolateMode::Nearest, None);
    assert_eq!(kind(i4.interpolate(o.clone())), ErrorKind::DTypeMismatch);
    let u8s = i4.to_dtype(DType::U8)?.interpolate(o)?;
    assert_eq!(u8s.to_vec::<u8>()?[..4], [0, 0, 1, 1]);
    Ok(())
}

#[test]
fn errors_are_pytorchs_and_change_nothing() -> R {
    let x = img().requires_grad_(true)?;
    let before = (f64s(&x), x.version());
    let kind = |r: tapegrad::Result<Tensor>| r.unwrap_err().kind();
    let ia = ErrorKind::InvalidArgument;
    assert_eq!(kind(x.pad(&[1], PadMode::Constant, None)), ia);
    assert_eq!(kind(x.pad(&[1; 10], PadMode::Constant, None)), ia);
    assert_eq!(kind(x.pad(&[-3, -3], PadMode::Constant, None)), ia);
    assert_eq!(kind(x.pad(&[5, 0, 0, 0], PadMode::Reflect, None)), ia);
    assert_eq!(kind(x.pad(&[6, 0, 0, 0], PadMode::Circular, None)), ia);
    assert_eq!(kind(x.pad(&[1, 1, 1, 1], PadMode::Reflect, Some(1.0))), ia);
    assert_eq!(kind(x.pad(&[1; 8], PadMode::Replicate, None)), ia);
    assert_eq!(kind(x.unfold_blocks(&[6], &[1], &[0], &[1])), ia);
    assert_eq!(kind(x.unfold_blocks(&[0], &[1], &[0], &[1])), ia);
    assert_eq!(
        kind(x.reshape(&[1, 8, 5])?.fold(&[4, 5], &[3], &[1], &[0], &[1])),
        ia
    );
    let none = opts(None, None, InterpolateMode::Nearest, None);
    assert_eq!(kind(x.interpolate(none)), ia);
    let both = opts(Some(&[3]), Some(&[2.0]), InterpolateMode::Nearest, None);
    assert_eq!(kind(x.interpolate(both)), ia);
    let align = opts(Some(&[3]), None, InterpolateMode::Nearest, Some(true));
    assert_eq!(kind(x.interpolate(align)), ia);
    let linear4d = opts(Some(&[3]), None, InterpolateMode::Linear, None);
    assert_eq!(kind(x.interpolate(linear4d)), ia);
    let empty = opts(None, Some(&[0.1]), InterpolateMode::Nearest, None);
    assert_eq!(kind(x.interpolate(empty)), ia);
    assert_eq!(kind(x.pixel_shuffle(2)), ia);
    assert_eq!(kind(x.pixel_unshuffle(2)), ia);
    assert_eq!(kind(x.pixel_shuffle(0)), ia);
    assert_eq!((f64s(&x), x.version()), before);
    assert!(x.grad().is_none());
    Ok(())
}
