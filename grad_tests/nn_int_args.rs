//! The integer convention in the nn API (`tapegrad::IntoGeometry`, `Dim`, `MaybeDim`): every
//! pooling, fold/unfold, convolution option, resampling and layer constructor gives the same
//! result for `i64`, `i32`, `usize`, arrays, slices and `Vec<i64>` geometry, and refuses
//! negative values with PyTorch 2.15's error kinds and messages (recorded with
//! `torch.nn.functional` / `torch.nn` on this machine), leaving the input unchanged.

use crate::common::{R, f64s};
use tapegrad::nn::{
    AdaptiveAvgPool2d, AvgPool2d, BatchNorm2d, Conv1d, Conv2d, ConvTranspose2d, Embedding,
    EncoderLayerConfig, Flatten, Forward, GroupNorm, LayerNorm, Linear, MaxPool2d,
    MultiheadAttention, TransformerEncoderLayer,
};
use tapegrad::{
    ConvOptions, ConvTransposeOptions, DType, ErrorKind, InterpolateOptions, PadMode, Spatial,
    Tensor,
};

fn img() -> Tensor {
    let v: Vec<f64> = (0..2 * 3 * 6 * 6)
        .map(|i| ((i * 37) % 29) as f64 - 14.0)
        .collect();
    Tensor::from_vec(v, &[2, 3, 6, 6]).unwrap()
}

/// Equal shapes and values.
fn same(a: &Tensor, b: &Tensor) {
    assert_eq!(a.shape(), b.shape());
    assert_eq!(f64s(a), f64s(b));
}

/// Every form in `forms` equals the first.
fn all_same(forms: &[Tensor]) {
    forms[1..].iter().for_each(|f| same(&forms[0], f));
}

#[test]
fn pooling_geometry_any_integer_form() -> R {
    let x = img();
    let k: Vec<i64> = vec![3, 2];
    let s: Vec<i64> = vec![2, 1];
    let (ku, su): (&[usize], &[usize]) = (&[3, 2], &[2, 1]);
    all_same(&[
        x.max_pool2d(&k, &s, 1, 1, true)?,
        x.max_pool2d([3i32, 2], [2i32, 1], [1i32, 1], [1i32, 1], true)?,
        x.max_pool2d(ku, su, 1usize, 1usize, true)?,
        x.max_pool2d(k.clone(), s.clone(), vec![1i64], vec![1i64, 1], true)?,
        x.max_pool2d(&[3u32, 2], &[2u64, 1], [1isize], 1u32, true)?,
    ]);
    // one int for both dims and `None`/`()` strides (the kernel size)
    all_same(&[
        x.max_pool2d(2, None, 0, 1, false)?,
        x.max_pool2d([2usize, 2], (), [0i64, 0], [1i32], false)?,
        x.max_pool2d(&vec![2i64], [2u32, 2], 0usize, 1i64, false)?,
        x.max_pool2d(2i64, Some(2), 0, 1, false)?,
    ]);
    let (a, ia) = x.max_pool2d_with_indices(2, None, 0, 1, false)?;
    let (b, ib) = x.max_pool2d_with_indices(&vec![2i64, 2], &vec![2i64, 2], 0i32, 1usize, false)?;
    same(&a, &b);
    same(&ia, &ib);
    all_same(&[
        x.avg_pool2d(&k, &s, 1, true, false, None)?,
        x.avg_pool2d(ku, su, [1usize, 1], true, false, None)?,
        x.avg_pool2d([3i32, 2], vec![2i64, 1], 1i32, true, false, None)?,
    ]);
    all_same(&[
        x.avg_pool2d(2, None, 0, false, true, 3)?,
        x.avg_pool2d([2u32], (), 0, false, true, Some(3))?,
        x.avg_pool2d(2usize, 2usize, 0usize, false, true, 3usize)?,
    ]);
    all_same(&[
        x.adaptive_avg_pool2d([4, 3])?,
        x.adaptive_avg_pool2d(&vec![4i64, 3])?,
        x.adaptive_avg_pool2d(&[4usize, 3][..])?,
    ]);
    all_same(&[
        x.adaptive_max_pool2d(3)?,
        x.adaptive_max_pool2d(3usize)?,
        x.adaptive_max_pool2d(vec![3i32, 3])?,
    ]);
    let x1 = x.flatten(2, 3)?;
    all_same(&[
        x1.max_pool1d(3, 2, 1, 2, true)?,
        x1.max_pool1d(3usize, Some(2), 1i32, 2u32, true)?,
        x1.max_pool1d(3i64, 2i64, 1i64, 2i64, true)?,
    ]);
    all_same(&[
        x1.avg_pool1d(3, None, 1, false, true)?,
        x1.avg_pool1d(3usize, 3usize, 1u32, false, true)?,
    ]);
    all_same(&[x1.adaptive_avg_pool1d(5)?, x1.adaptive_avg_pool1d(5usize)?]);
    let (y, i) = x.max_pool2d_with_indices(2, None, 0, 1, false)?;
    all_same(&[
        y.max_unpool2d(&i, 2, None, 0, None)?,
        y.max_unpool2d(&i, [2usize, 2], (), [0i32], ())?,
        y.max_unpool2d(&i, &vec![2i64], &vec![2i64], 0, [6i64, 6])?,
        y.max_unpool2d(&i, 2, 2, 0, &vec![2usize, 3, 6, 6])?,
    ]);
    Ok(())
}

#[test]
fn resample_and_conv_geometry_any_integer_form() -> R {
    let x = img();
    let cols = x.unfold_blocks(2, 1, 0, 1)?;
    all_same(&[
        cols.clone(),
        x.unfold_blocks([2usize, 2], [1i32, 1], vec![0i64], &vec![1i64])?,
    ]);
    all_same(&[
        cols.fold(6, 2, 1, 0, 1)?,
        cols.fold([6usize, 6], [2u32, 2], 1usize, [0i64, 0], &[1i32][..])?,
    ]);
    all_same(&[
        x.pad([1, 2, 2, 1], PadMode::Reflect, None)?,
        x.pad(vec![1i64, 2, 2, 1], PadMode::Reflect, None)?,
        x.pad(&[1usize, 2, 2, 1][..], PadMode::Reflect, None)?,
    ]);
    let c = x.narrow(1, 0, 2)?.pixel_unshuffle(2)?;
    all_same(&[c.clone(), x.narrow(1, 0, 2)?.pixel_unshuffle(2usize)?]);
    all_same(&[c.pixel_shuffle(2)?, c.pixel_shuffle(2u32)?]);
    all_same(&[
        x.group_norm(3, None, None, 1e-5)?,
        x.group_norm(3usize, None, None, 1e-5)?,
    ]);
    all_same(&[
        x.layer_norm(6, None, None, 1e-5)?,
        x.layer_norm([6usize], None, None, 1e-5)?,
        x.layer_norm(&vec![6i64, 6][1..], None, None, 1e-5)?,
    ]);
    let o = |size: InterpolateOptions| x.interpolate(size);
    all_same(&[
        o(InterpolateOptions::default().size(9))?,
        o(InterpolateOptions::default().size([9usize, 9]))?,
        o(InterpolateOptions {
            size: Some(vec![9i64].into()),
            ..Default::default()
        })?,
    ]);
    // the options structs: builder setters and `From` impls of any integer type
    let w = Tensor::from_vec(
        (0..6 * 3 * 2).map(|i| (i % 7) as f64 - 3.0).collect(),
        &[6, 1, 3, 2],
    )?;
    let lit = ConvOptions {
        stride: [2, 1].into(),
        padding: 1.into(),
        dilation: [1, 2].into(),
        groups: 3,
    };
    let built = ConvOptions::default()
        .stride(vec![2usize, 1])
        .padding(1u32)
        .dilation(&[1i32, 2])
        .groups(3usize);
    assert_eq!(lit, built);
    let k: Vec<i64> = vec![2, 1];
    let from_vec = ConvOptions {
        stride: (&k).into(),
        padding: [1i64, 1].into(),
        dilation: Spatial::from([1u64, 2]),
        groups: 3,
    };
    all_same(&[
        x.conv2d(&w, None, &lit)?,
        x.conv2d(&w, None, &built)?,
        x.conv2d(&w, None, &from_vec)?,
    ]);
    let wt = w
        .transpose(0, 1)?
        .reshape(&[1, 6, 3, 2])?
        .repeat(&[3, 1, 1, 1])?;
    let t1 = ConvTransposeOptions {
        stride: 2.into(),
        output_padding: 1.into(),
        ..Default::default()
    };
    let t2 = ConvTransposeOptions::default()
        .stride([2usize, 2])
        .output_padding(vec![1i32]);
    all_same(&[
        x.conv_transpose2d(&wt, None, &t1)?,
        x.conv_transpose2d(&wt, None, &t2)?,
    ]);
    Ok(())
}

#[test]
fn module_constructors_any_integer_type() -> R {
    // the same seed and sizes of different integer types: the same parameters
    let pairs: Vec<(Tensor, Tensor)> = vec![
        {
            tapegrad::manual_seed(7);
            let a = Linear::new(4usize, 3usize, true, DType::F32)?;
            tapegrad::manual_seed(7);
            let b = Linear::new(4i64, 3i32, true, DType::F32)?;
            (a.weight, b.weight)
        },
        {
            tapegrad::manual_seed(7);
            let a = Conv2d::new(2, 4, 3, ConvOptions::default(), true, DType::F32)?;
            tapegrad::manual_seed(7);
            let k: Vec<i64> = vec![3, 3];
            let b = Conv2d::new(2usize, 4u32, &k, ConvOptions::default(), true, DType::F32)?;
            (a.weight, b.weight)
        },
        {
            tapegrad::manual_seed(7);
            let a = Conv1d::new(2, 4, [3], ConvOptions::default(), false, DType::F32)?;
            tapegrad::manual_seed(7);
            let b = Conv1d::new(
                2i64,
                4i64,
                3usize,
                ConvOptions::default(),
                false,
                DType::F32,
            )?;
            (a.weight, b.weight)
        },
        {
            tapegrad::manual_seed(7);
            let o = ConvTransposeOptions::default;
            let a = ConvTranspose2d::new(4, 2, [3, 2], o(), true, DType::F32)?;
            tapegrad::manual_seed(7);
            let b = ConvTranspose2d::new(4u64, 2usize, vec![3i64, 2], o(), true, DType::F32)?;
            (a.weight, b.weight)
        },
        {
            tapegrad::manual_seed(7);
            let a = Embedding::new(5, 3, DType::F32)?;
            tapegrad::manual_seed(7);
            let b = Embedding::with_padding_idx(5usize, 3i32, -1i64, DType::F32)?;
            (a.weight.narrow(0, 0, 4)?, b.weight.narrow(0, 0, 4)?)
        },
    ];
    for (a, b) in &pairs {
        same(a, b);
    }
    let shapes = [
        BatchNorm2d::new(3usize, 1e-5, Some(0.1), true, true, DType::F32)?
            .forward(&img().to_dtype(DType::F32)?)?
            .shape(),
        GroupNorm::new(3i64, 3u32, 1e-5, true, DType::F32)?
            .forward(&img().to_dtype(DType::F32)?)?
            .shape(),
        LayerNorm::new(6usize, 1e-5, true, DType::F32)?
            .forward(&img().to_dtype(DType::F32)?)?
            .shape(),
        MaxPool2d::new([2u32, 2], None, 0i64, 1usize, false)
            .forward(&img())?
            .shape(),
        AvgPool2d::new(&vec![2i64], 2usize, 0, false, true, 4u32)
            .forward(&img())?
            .shape(),
        AdaptiveAvgPool2d::new(vec![1usize, 2])
            .forward(&img())?
            .shape(),
        Flatten::new(1usize, -1i64).forward(&img())?.shape(),
    ];
    assert_eq!(
        shapes,
        [
            vec![2, 3, 6, 6],
            vec![2, 3, 6, 6],
            vec![2, 3, 6, 6],
            vec![2, 3, 3, 3],
            vec![2, 3, 3, 3],
            vec![2, 3, 1, 2],
            vec![2, 108],
        ]
    );
    let m = MultiheadAttention::new(8usize, 2i32, 0.0, true, true, DType::F32)?;
    assert_eq!((m.embed_dim, m.num_heads), (8, 2));
    let cfg = EncoderLayerConfig {
        dropout: 0.0,
        ..Default::default()
    }
    .dim_feedforward(16usize);
    let l = TransformerEncoderLayer::new(8u32, 2i64, cfg, DType::F32)?;
    assert_eq!(l.linear1.weight.shape(), vec![16, 8]);
    Ok(())
}

/// The kind and message of `r`'s error.
fn err<T>(r: tapegrad::Result<T>) -> (ErrorKind, String) {
    match r {
        Ok(_) => panic!("expected an error"),
        Err(e) => (e.kind(), e.message().to_string()),
    }
}

/// An `InvalidArgument` error with exactly `msg`.
fn refused<T>(r: tapegrad::Result<T>, msg: &str) {
    assert_eq!(err(r), (ErrorKind::InvalidArgument, msg.to_string()));
}

#[test]
fn negative_geometry_refused_as_torch() -> R {
    // the messages of PyTorch 2.15 for F.max_pool2d(x, -1), F.unfold(x, 2, padding=-1), ...
    let x = img();
    let x1 = x.flatten(2, 3)?;
    let before = (x.version(), f64s(&x));
    refused(
        x.max_pool2d(-1, None, 0, 1, false),
        "kernel size should be greater than zero, but got kH: -1 kW: -1",
    );
    refused(
        x.max_pool2d(2, -1, 0, 1, false),
        "stride should be greater than zero, but got dH: -1 dW: -1",
    );
    refused(
        x.max_pool2d(2, 2, -1, 1, false),
        "pad must be non-negative, but got pad: -1",
    );
    refused(
        x.max_pool2d(2, 2, 0, -1, false),
        "dilation should be greater than zero, but got dilationH: -1 dilationW: -1",
    );
    // several bad: PyTorch's output-size computation (stride zero, padding) comes first
    refused(
        x.max_pool2d(-1, -1, -1, -1, false),
        "pad must be non-negative, but got pad: -1",
    );
    refused(
        x.max_pool2d(2, 0, -1, 1, false),
        "stride should not be zero",
    );
    refused(
        x.max_pool2d_with_indices(-1, None, 0, 1, false),
        "kernel size should be greater than zero, but got kH: -1 kW: -1",
    );
    refused(
        x.avg_pool2d(-1, None, 0, false, true, None),
        "kernel size should be greater than zero, but got kH: -1 kW: -1",
    );
    refused(
        x.avg_pool2d(2, -1, 0, false, true, None),
        "stride should be greater than zero, but got dH: -1 dW: -1",
    );
    refused(
        x.avg_pool2d(2, 2, -1, false, true, None),
        "pad must be non-negative, but got pad: -1",
    );
    refused(
        x1.max_pool1d(-1, None, 0, 1, false),
        "max_pool1d() kernel_size must be greater than zero, but got -1",
    );
    refused(
        x1.max_pool1d(2, -1, 0, 1, false),
        "max_pool1d() stride must be greater than zero, but got -1",
    );
    refused(
        x1.max_pool1d(2, 2, -1, 1, false),
        "max_pool1d() padding must be non-negative, but got -1",
    );
    refused(
        x1.max_pool1d(2, 2, 0, -1, false),
        "max_pool1d() dilation must be greater than zero, but got -1",
    );
    refused(
        x1.max_pool1d(2, 2, 2, 1, false),
        "max_pool1d() padding should be at most half of kernel size, but got padding=2 and kernel_size=2",
    );
    refused(
        x1.max_pool1d_with_indices(-1, None, 0, 1, false),
        "kernel size should be greater than zero, but got kH: 1 kW: -1",
    );
    refused(
        x1.avg_pool1d(-1, None, 0, false, true),
        "kernel size should be greater than zero, but got kH: 1 kW: -1",
    );
    refused(
        x1.avg_pool1d(2, -1, 0, false, true),
        "stride should be greater than zero, but got dH: 1 dW: -1",
    );
    refused(
        x1.avg_pool1d(2, 2, -1, false, true),
        "pad must be non-negative, but got pad: -1",
    );
    refused(
        x.adaptive_avg_pool2d(-1),
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-1, -1}",
    );
    refused(
        x.adaptive_avg_pool2d([-2, 2]),
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {-2, 2}",
    );
    refused(
        x1.adaptive_avg_pool1d(-1),
        "adaptive_avg_pool2d: elements of output_size must be greater than or equal to 0 but received {1, -1}",
    );
    refused(
        x.adaptive_max_pool2d([2, -2]),
        "Trying to create tensor with negative dimension -2: [2, 3, 2, -2]",
    );
    let (y, i) = x.max_pool2d_with_indices(2, None, 0, 1, false)?;
    refused(
        y.max_unpool2d(&i, -1, None, 0, None),
        "max_unpooling: output_size must contain non-negative spatial dimensions, but got output_size[0]=-3",
    );
    refused(
        x.unfold_blocks(-1, 1, 0, 1),
        "kernel size should be greater than zero, but got kernel_height: -1 kernel_width: -1",
    );
    refused(
        x.unfold_blocks(2, -1, 0, 1),
        "dilation should be greater than zero, but got dilation_height: -1 dilation_width: -1",
    );
    refused(
        x.unfold_blocks(2, 1, -1, 1),
        "padding should be non-negative, but got pad_height: -1 pad_width: -1",
    );
    refused(
        x.unfold_blocks(2, 1, 0, -1),
        "stride should be greater than zero, but got stride_height: -1 stride_width: -1",
    );
    // several bad: PyTorch checks the padding before the stride
    refused(
        x.unfold_blocks(2, 1, -1, -1),
        "padding should be non-negative, but got pad_height: -1 pad_width: -1",
    );
    let cols = x.unfold_blocks(2, 1, 0, 1)?;
    refused(
        cols.fold(6, -1, 1, 0, 1),
        "kernel size should be greater than zero, but got kernel_height: -1 kernel_width: -1",
    );
    refused(
        cols.fold(6, 2, 1, -1, 1),
        "padding should be non-negative, but got pad_height: -1 pad_width: -1",
    );
    // a size below 1 whose block count matches (through the padding)
    let c120 = Tensor::zeros(&[1, 4, 120], DType::F64)?;
    refused(
        c120.fold([-1, 6], 2, 1, 5, 1),
        "Expected output spatial size to be positive, but got: output_size=(-1, 6).",
    );
    let c135 = Tensor::zeros(&[1, 4, 135], DType::F64)?;
    refused(
        c135.fold([0, 6], 2, 1, 5, 1),
        "Expected output spatial size to be positive, but got: output_size=(0, 6).",
    );
    refused(
        x.pixel_shuffle(-1),
        "pixel_shuffle expects a positive upscale_factor, but got -1",
    );
    refused(
        x.pixel_unshuffle(-1),
        "pixel_unshuffle expects a positive downscale_factor, but got -1",
    );
    refused(
        x.group_norm(-1, None, None, 1e-5),
        "Expected num groups to be greater than 0, got -1",
    );
    refused(
        x.interpolate(InterpolateOptions::default().size([2, -1])),
        "Input and output sizes should be greater than 0, but got input (H: 6, W: 6) output (H: 2, W: -1)",
    );
    let w = Tensor::ones(&[1, 3, 1, 1], DType::F64)?;
    let c = |o: ConvOptions| x.conv2d(&w, None, &o);
    refused(
        c(ConvOptions::default().stride(-1)),
        "non-positive stride is not supported",
    );
    refused(
        c(ConvOptions::default().padding(-1)),
        "negative padding is not supported",
    );
    refused(
        c(ConvOptions::default().dilation(-1)),
        "dilation should be greater than zero",
    );
    refused(
        c(ConvOptions::default().groups(-1)),
        "non-positive groups is not supported",
    );
    let wt = Tensor::ones(&[3, 1, 1, 1], DType::F64)?;
    refused(
        x.conv_transpose2d(&wt, None, &ConvTransposeOptions::default().stride(-1)),
        "non-positive stride is not supported",
    );
    refused(
        x.conv_transpose2d(
            &wt,
            None,
            &ConvTransposeOptions::default().output_padding(-1),
        ),
        "negative output_padding is not supported",
    );
    // the input is untouched by every refusal
    assert_eq!((x.version(), f64s(&x)), before);
    Ok(())
}

#[test]
fn negative_layer_sizes_refused_as_torch() {
    // nn.Conv2d(1, 1, -1), nn.Linear(-1, 2), ... in PyTorch 2.15
    let f = DType::F32;
    let o = ConvOptions::default;
    let neg = |d: i64, shape: &str| {
        format!("Trying to create tensor with negative dimension {d}: {shape}")
    };
    refused(
        Conv2d::new(1, 1, -1, o(), true, f),
        &neg(-1, "[1, 1, -1, -1]"),
    );
    refused(
        Conv2d::new(-1, 1, 1, o(), true, f),
        &neg(-1, "[1, -1, 1, 1]"),
    );
    refused(
        Conv2d::new(1, -1, 1, o(), true, f),
        &neg(-1, "[-1, 1, 1, 1]"),
    );
    refused(
        Conv2d::new(1, 1, 1, o().groups(-1), true, f),
        "groups must be a positive integer",
    );
    refused(
        Conv2d::new(1, 1, 1, o().groups(0), true, f),
        "groups must be a positive integer",
    );
    refused(
        ConvTranspose2d::new(1, 1, -1, ConvTransposeOptions::default(), true, f),
        &neg(-1, "[1, 1, -1, -1]"),
    );
    refused(Linear::new(-1, 2, true, f), &neg(-1, "[2, -1]"));
    refused(Linear::new(2, -1, true, f), &neg(-1, "[-1, 2]"));
    refused(Embedding::new(-1, 2, f), &neg(-1, "[-1, 2]"));
    refused(Embedding::new(2, -1, f), &neg(-1, "[2, -1]"));
    refused(
        BatchNorm2d::new(-1, 1e-5, Some(0.1), true, true, f),
        &neg(-1, "[-1]"),
    );
    refused(GroupNorm::new(1, -2, 1e-5, true, f), &neg(-2, "[-2]"));
    refused(LayerNorm::new(-1, 1e-5, true, f), &neg(-1, "[-1]"));
    refused(
        MultiheadAttention::new(-1, 2, 0.0, true, false, f),
        "embed_dim and num_heads must be greater than 0, got embed_dim=-1 and num_heads=2 instead",
    );
    refused(
        MultiheadAttention::new(4, -2, 0.0, true, false, f),
        "embed_dim and num_heads must be greater than 0, got embed_dim=4 and num_heads=-2 instead",
    );
    let cfg = EncoderLayerConfig::default;
    refused(
        TransformerEncoderLayer::new(-4, 2, cfg().dim_feedforward(8), f),
        "embed_dim and num_heads must be greater than 0, got embed_dim=-4 and num_heads=2 instead",
    );
    refused(
        TransformerEncoderLayer::new(4, 2, cfg().dim_feedforward(-8), f),
        &neg(-8, "[-8, 4]"),
    );
    // GroupNorm(-1, 2) constructs in PyTorch; its forward refuses
    let g = GroupNorm::new(-1, 2, 1e-5, true, f).unwrap();
    refused(
        g.forward(&Tensor::ones(&[1, 2, 3], f).unwrap()),
        "Expected num groups to be greater than 0, got -1",
    );
    // the pooling layers and Flatten check at the first forward, as in PyTorch
    let x = img();
    refused(
        MaxPool2d::new(-1, None, 0, 1, false).forward(&x),
        "kernel size should be greater than zero, but got kH: -1 kW: -1",
    );
    assert_eq!(
        err(Flatten::new(-5, -1).forward(&x)),
        (
            ErrorKind::DimOutOfRange,
            "Dimension out of range (expected to be in range of [-4, 3], but got -5)".to_string()
        )
    );
}
