//! NN functions: values vs PyTorch fixtures, errors, gradchecks.

use crate::common::{R, assert_close_abs, i64t, rg, t64};
use tapegrad::autograd::{gradcheck, gradgradcheck};
use tapegrad::{
    BceWithLogitsOptions, CrossEntropyOptions, DType, ErrorKind, NllLossOptions, Reduction, Tensor,
};

const X: [f64; 12] = [
    2.0, -1.0, 0.5, 0.0, 1.0, 3.0, 1.5, 1.5, -2.0, -0.5, 2.0, 0.25,
];

#[test]
fn cross_entropy_fixture_values() -> R {
    let x = t64(&X, &[4, 3]);
    let y = i64t(&[0, 2, 1, 1], &[4]);
    let ce = |t: &Tensor, o: CrossEntropyOptions| {
        x.cross_entropy(t, o).unwrap().to_vec::<f64>().unwrap()
    };
    assert_close_abs(&ce(&y, Default::default()), &[0.33677752305667125], 1e-9);
    assert_close_abs(
        &ce(
            &y,
            CrossEntropyOptions {
                reduction: Reduction::Sum,
                ..Default::default()
            },
        ),
        &[1.347110092226685],
        1e-9,
    );
    assert_close_abs(
        &ce(
            &y,
            CrossEntropyOptions {
                reduction: Reduction::None,
                ..Default::default()
            },
        ),
        &[
            0.24131129665715703,
            0.16984601955628567,
            0.7081330215398184,
            0.22781975447342392,
        ],
        1e-9,
    );
    let w = t64(&[1.0, 2.0, 0.5], &[3]);
    let yi = i64t(&[0, 2, -100, 1], &[4]);
    assert_close_abs(
        &ce(
            &yi,
            CrossEntropyOptions {
                weight: Some(&w),
                ..Default::default()
            },
        ),
        &[0.22339251868061363],
        1e-9,
    );
    assert_close_abs(
        &ce(
            &yi,
            CrossEntropyOptions {
                weight: Some(&w),
                reduction: Reduction::None,
                ..Default::default()
            },
        ),
        &[
            0.24131129665715703,
            0.08492300977814284,
            0.0,
            0.45563950894684785,
        ],
        1e-9,
    );
    assert_close_abs(
        &ce(
            &i64t(&[0, 2, 2, 1], &[4]),
            CrossEntropyOptions {
                ignore_index: 2,
                ..Default::default()
            },
        ),
        &[0.23456552556529048],
        1e-9,
    );
    let all = x
        .slice(0, None, Some(1), 1)?
        .cross_entropy(&i64t(&[-100], &[1]), Default::default())?;
    assert!(all.item::<f64>()?.is_nan());
    // label smoothing
    let x3 = t64(&X[..9], &[3, 3]);
    let y3 = i64t(&[0, 2, 1], &[3]);
    let ce3 = |o: CrossEntropyOptions| x3.cross_entropy(&y3, o).unwrap().to_vec::<f64>().unwrap();
    assert_close_abs(
        &ce3(CrossEntropyOptions {
            label_smoothing: 0.1,
            ..Default::default()
        }),
        &[0.5175412236955315],
        1e-9,
    );
    assert_close_abs(
        &ce3(CrossEntropyOptions {
            label_smoothing: 0.3,
            reduction: Reduction::None,
            ..Default::default()
        }),
        &[0.691311296657157, 0.6698460195562856, 1.0581330215398181],
        1e-9,
    );
    assert_close_abs(
        &ce3(CrossEntropyOptions {
            weight: Some(&w),
            label_smoothing: 0.2,
            ..Default::default()
        }),
        &[0.7681432452631554],
        1e-9,
    );
    // probabilities
    let x2 = t64(&X[..6], &[2, 3]);
    let p = t64(&[0.5, 0.25, 0.25, 0.0, 0.0, 1.0], &[2, 3]);
    assert_close_abs(
        &x2.cross_entropy(&p, Default::default())?.to_vec::<f64>()?,
        &[0.7680786581067214],
        1e-9,
    );
    assert_close_abs(
        &x2.cross_entropy(
            &p,
            CrossEntropyOptions {
                label_smoothing: 0.1,
                reduction: Reduction::None,
                ..Default::default()
            },
        )?
        .to_vec::<f64>()?,
        &[1.4038112966571572, 0.33651268622295233],
        1e-9,
    );
    let w2 = t64(&[2.0, 1.0, 0.5], &[3]);
    assert_close_abs(
        &x2.cross_entropy(
            &p,
            CrossEntropyOptions {
                weight: Some(&w2),
                ..Default::default()
            },
        )?
        .to_vec::<f64>()?,
        &[0.6771130213408669],
        1e-9,
    );
    // k-dim
    let k = Tensor::arange_dtype(0.0, 12.0, 1.0, DType::F64)?.view(&[2, 3, 2])?;
    assert_close_abs(
        &k.cross_entropy(&i64t(&[0, 2, 1, 1], &[2, 2]), Default::default())?
            .to_vec::<f64>()?,
        &[2.142931628499899],
        1e-9,
    );
    // errors
    let e = x
        .cross_entropy(&i64t(&[0, 3, 0, 0], &[4]), Default::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    Ok(())
}

#[test]
fn nll_bce_fixture_values() -> R {
    let lp = Tensor::from_vec(
        vec![-0.5f32, -1.0, -2.0, -3.0, -0.25, -1.5, -1.0, -1.0, -1.0],
        &[3, 3],
    )?;
    let y = i64t(&[2, 1, 0], &[3]);
    let w = Tensor::from_vec(vec![0.5f32, 1.0, 2.0], &[3])?;
    let r = lp.nll_loss(&y, Default::default())?;
    assert_eq!((r.dtype(), r.item::<f32>()?), (DType::F32, 1.083_333_4));
    assert_eq!(
        lp.nll_loss(
            &y,
            NllLossOptions {
                weight: Some(&w),
                ..Default::default()
            }
        )?
        .item::<f32>()?,
        1.357_142_8
    );
    assert_eq!(
        lp.nll_loss(
            &y,
            NllLossOptions {
                weight: Some(&w),
                ignore_index: 1,
                reduction: Reduction::Sum
            }
        )?
        .item::<f32>()?,
        4.5
    );
    assert_eq!(
        lp.nll_loss(
            &y,
            NllLossOptions {
                reduction: Reduction::None,
                ..Default::default()
            }
        )?
        .to_vec::<f32>()?,
        vec![2.0, 0.25, 1.0]
    );
    assert_eq!(
        lp.nll_loss(&i64t(&[-1, 0, 0], &[3]), Default::default())
            .unwrap_err()
            .kind(),
        ErrorKind::IndexOutOfRange
    );
    let z = t64(&[100.0, -100.0, 0.5, -2.0], &[4]);
    let t = t64(&[0.0, 1.0, 0.25, 1.0], &[4]);
    let b = |o: BceWithLogitsOptions| {
        z.binary_cross_entropy_with_logits(&t, o)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
    };
    assert_close_abs(
        &b(BceWithLogitsOptions {
            reduction: Reduction::None,
            ..Default::default()
        }),
        &[100.0, 100.0, 0.8490769841801067, 2.1269280110429727],
        1e-9,
    );
    assert_close_abs(&b(Default::default()), &[50.744001248805766], 1e-9);
    let pw = t64(&[2.0, 2.0, 3.0, 0.5], &[4]);
    assert_close_abs(
        &b(BceWithLogitsOptions {
            pos_weight: Some(&pw),
            reduction: Reduction::None,
            ..Default::default()
        }),
        &[100.0, 200.0, 1.0861154762701601, 1.0634640055214863],
        1e-9,
    );
    let wt = t64(&[1.0, 0.0, 2.0, 1.0], &[4]);
    assert_close_abs(
        &b(BceWithLogitsOptions {
            weight: Some(&wt),
            reduction: Reduction::Sum,
            ..Default::default()
        }),
        &[103.8250819794032],
        1e-9,
    );
    Ok(())
}

#[test]
fn softmax_values_and_grads() -> R {
    let x = t64(&[1.0, 2.0, 3.0, 1000.0, 1000.0, 1000.0], &[2, 3]);
    let s = x.softmax(1)?.to_vec::<f64>()?;
    assert!(
        (s[3] - 1.0 / 3.0).abs() < 1e-12 && (s.iter().take(3).sum::<f64>() - 1.0).abs() < 1e-12
    );
    let l = x.t()?.log_softmax(0)?.to_vec::<f64>()?;
    assert!((l[1] + 3f64.ln()).abs() < 1e-12);
    let a = rg(&[3, 4]);
    gradcheck(
        |v| v[0].softmax(1),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |v| v[0].t()?.softmax(-1),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |v| v[0].log_softmax(0),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |v| v[0].slice(1, None, None, 2)?.log_softmax(1),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    assert_eq!(a.softmax(0)?.grad_fn().unwrap().name(), "SoftmaxBackward0");
    assert_eq!(
        a.log_softmax(0)?.grad_fn().unwrap().name(),
        "LogSoftmaxBackward0"
    );
    assert_eq!(
        i64t(&[1], &[1]).softmax(0).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    Ok(())
}

/// The reduced `mse_loss` is PyTorch's one node (`MseLossBackward0`) with its values and its
/// backward's rounding (`2/n (x - y) g`), recorded from torch 2.15 in f32.
#[test]
fn mse_loss_reduced_is_pytorchs_node() -> R {
    let x = Tensor::from_vec(vec![0.5f32, -1.25, 3.0, 0.1, 2.2, -0.7], &[2, 3])?;
    let y = Tensor::from_vec(vec![1.0f32, 0.25, -2.0, 0.3, 2.0, 0.0], &[2, 3])?;
    let (x, y) = (x.requires_grad_(true)?, y.requires_grad_(true)?);
    let mean_gx = [
        -0.16666667f32,
        -0.5,
        1.6666667,
        -0.06666668,
        0.066666685,
        -0.23333333,
    ];
    let sum_gx = [-1.0f32, -3.0, 10.0, -0.40000004, 0.4000001, -1.4];
    for (red, value, gx) in [
        (Reduction::Mean, 4.6783338f32, mean_gx),
        (Reduction::Sum, 28.070002, sum_gx),
    ] {
        let l = x.mse_loss(&y, red)?;
        assert_eq!(l.grad_fn().unwrap().name(), "MseLossBackward0");
        assert_eq!(l.item::<f32>()?.to_bits(), value.to_bits(), "{red:?}");
        let g = tapegrad::autograd::grad(&[l], &[x.clone(), y.clone()], &[], Default::default())?;
        let (gx_got, gy_got) = (g[0].as_ref().unwrap(), g[1].as_ref().unwrap());
        let bits = |v: Vec<f32>| v.iter().map(|v| v.to_bits()).collect::<Vec<_>>();
        let neg: Vec<f32> = gx.iter().map(|v| -v).collect();
        assert_eq!(bits(gx_got.to_vec::<f32>()?), bits(gx.to_vec()), "{red:?}");
        assert_eq!(bits(gy_got.to_vec::<f32>()?), bits(neg), "{red:?}");
    }
    Ok(())
}

#[test]
fn loss_grads() -> R {
    let a = rg(&[4, 3]);
    let y = i64t(&[0, 2, -100, 1], &[4]);
    let w = t64(&[1.0, 2.0, 0.5], &[3]);
    for o in [
        CrossEntropyOptions::default(),
        CrossEntropyOptions {
            weight: Some(&w),
            reduction: Reduction::None,
            ..Default::default()
        },
        CrossEntropyOptions {
            weight: Some(&w),
            label_smoothing: 0.2,
            ..Default::default()
        },
        CrossEntropyOptions {
            label_smoothing: 0.3,
            reduction: Reduction::Sum,
            ..Default::default()
        },
    ] {
        gradcheck(
            |v| v[0].cross_entropy(&y, o),
            std::slice::from_ref(&a),
            Default::default(),
        )?;
    }
    let p = t64(
        &[0.5, 0.25, 0.25, 0.0, 0.0, 1.0, 0.2, 0.3, 0.5, 1.0, 0.0, 0.0],
        &[4, 3],
    );
    gradcheck(
        |v| {
            v[0].t()?.t()?.cross_entropy(
                &p,
                CrossEntropyOptions {
                    label_smoothing: 0.1,
                    weight: Some(&w),
                    ..Default::default()
                },
            )
        },
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |v| {
            v[0].nll_loss(
                &y,
                NllLossOptions {
                    weight: Some(&w),
                    ..Default::default()
                },
            )
        },
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    assert_eq!(
        a.nll_loss(&y, Default::default())?
            .grad_fn()
            .unwrap()
            .name(),
        "NllLossBackward0"
    );
    let b = rg(&[4, 3]);
    gradcheck(
        |v| v[0].mse_loss(&v[1].t()?.t()?, Reduction::Mean),
        &[a.clone(), b.clone()],
        Default::default(),
    )?;
    gradcheck(
        |v| v[0].l1_loss(&v[1], Reduction::None),
        &[a.clone(), b.clone()],
        Default::default(),
    )?;
    let pw = t64(&[2.0, 1.0, 0.5], &[3]);
    let tw = Tensor::rand(&[4, 3], DType::F64)?;
    gradcheck(
        |v| {
            v[0].binary_cross_entropy_with_logits(
                &v[1],
                BceWithLogitsOptions {
                    weight: Some(&tw),
                    pos_weight: Some(&pw),
                    reduction: Reduction::Mean,
                },
            )
        },
        &[a.clone(), b.clone()],
        Default::default(),
    )?;
    // k-dim cross entropy
    let k = rg(&[2, 3, 2]);
    gradcheck(
        |v| {
            v[0].cross_entropy(
                &i64t(&[0, 2, 1, 1], &[2, 2]),
                CrossEntropyOptions {
                    label_smoothing: 0.1,
                    ..Default::default()
                },
            )
        },
        &[k],
        Default::default(),
    )?;
    Ok(())
}

#[test]
fn dropout_embedding_layer_norm() -> R {
    tapegrad::manual_seed(3);
    let x = Tensor::ones(&[1000], DType::F32)?;
    let d = x.dropout(0.3, true)?.to_vec::<f32>()?;
    let kept = d.iter().filter(|&&v| v != 0.0).count();
    assert!((600..800).contains(&kept));
    assert!(d.iter().all(|&v| v == 0.0 || (v - 1.0 / 0.7).abs() < 1e-6));
    let w = rg(&[5, 3]);
    let idx = i64t(&[4, 0, 4, 1], &[2, 2]);
    let e = Tensor::embedding(&idx, &w)?;
    assert_eq!(e.shape(), vec![2, 2, 3]);
    assert_eq!(e.grad_fn().unwrap().name(), "EmbeddingBackward0");
    gradcheck(
        |v| Tensor::embedding(&idx, &v[0]),
        std::slice::from_ref(&w),
        Default::default(),
    )?;
    assert_eq!(
        Tensor::embedding(&i64t(&[5], &[1]), &w).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    let a = rg(&[2, 3, 4]);
    let g = rg(&[3, 4]);
    let bb = rg(&[3, 4]);
    gradcheck(
        |v| v[0].layer_norm(&[3, 4], Some(&v[1]), Some(&v[2]), 1e-5),
        &[a.clone(), g, bb],
        Default::default(),
    )?;
    gradcheck(
        |v| v[0].transpose(0, 2)?.layer_norm(&[2], None, None, 1e-5),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    let y = t64(&[1.0, 3.0, 5.0, 5.0], &[2, 2]).layer_norm(&[2], None, None, 0.0)?;
    assert_close_abs(&y.to_vec::<f64>()?[..2], &[-1.0, 1.0], 1e-9);
    assert_eq!(
        a.layer_norm(&[4, 3], None, None, 1e-5).unwrap_err().kind(),
        ErrorKind::ShapeMismatch
    );
    Ok(())
}

/// The 4x3 table of the PyTorch snippets below (values exact in binary).
fn pad_table() -> Tensor {
    t64(
        &[
            0.5, -1.0, 2.0, 1.5, 0.25, -0.75, -2.0, 3.0, 0.125, 0.0625, -0.5, 1.25,
        ],
        &[4, 3],
    )
    .requires_grad_(true)
    .unwrap()
}

/// Values and gradients recorded from PyTorch 2.x:
/// ```python
/// w = torch.tensor([[0.5, -1.0, 2.0], [1.5, 0.25, -0.75], [-2.0, 3.0, 0.125],
///                   [0.0625, -0.5, 1.25]], dtype=torch.float64, requires_grad=True)
/// idx = torch.tensor([[0, 2, 3], [2, 2, 1]])
/// g = torch.arange(1., 19., dtype=torch.float64).view(2, 3, 3)
/// y = F.embedding(idx, w, padding_idx=2); (y * g).sum().backward()   # y, w.grad
/// w.grad = None; (F.embedding(idx, w, padding_idx=-1) * g).sum().backward()  # grad-1
/// w.grad = None; y = F.embedding(idx, w, padding_idx=2)
/// (gw,) = torch.autograd.grad((y * y * g).sum(), w, create_graph=True)  # gw
/// (gw * gw).sum().backward()  # ggw = w.grad
/// ```
#[test]
fn embedding_padding_idx_matches_pytorch() -> R {
    let w = pad_table();
    let idx = i64t(&[0, 2, 3, 2, 2, 1], &[2, 3]);
    let g = Tensor::arange(1, 19, 1)?
        .to_dtype(DType::F64)?
        .view(&[2, 3, 3])?;
    let y = Tensor::embedding_with(&idx, &w, Some(2))?;
    assert_eq!(y.shape(), vec![2, 3, 3]);
    assert_eq!(y.grad_fn().unwrap().name(), "EmbeddingBackward0");
    assert_eq!(
        y.to_vec::<f64>()?,
        [
            0.5, -1.0, 2.0, -2.0, 3.0, 0.125, 0.0625, -0.5, 1.25, -2.0, 3.0, 0.125, -2.0, 3.0,
            0.125, 1.5, 0.25, -0.75
        ]
    );
    y.mul(&g)?.sum()?.backward()?;
    assert_eq!(
        w.grad().unwrap().to_vec::<f64>()?,
        [
            1.0, 2.0, 3.0, 16.0, 17.0, 18.0, 0.0, 0.0, 0.0, 7.0, 8.0, 9.0
        ]
    );
    w.set_grad(None)?;
    Tensor::embedding_with(&idx, &w, Some(-1))?
        .mul(&g)?
        .sum()?
        .backward()?;
    assert_eq!(
        w.grad().unwrap().to_vec::<f64>()?,
        [
            1.0, 2.0, 3.0, 16.0, 17.0, 18.0, 27.0, 30.0, 33.0, 0.0, 0.0, 0.0
        ]
    );
    // create_graph: the gradient is itself differentiable, padding positions stay out of it
    w.set_grad(None)?;
    let y = Tensor::embedding_with(&idx, &w, Some(2))?;
    let l = y.mul(&y)?.mul(&g)?.sum()?;
    let gw = tapegrad::autograd::grad(
        &[l],
        std::slice::from_ref(&w),
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?
    .remove(0)
    .unwrap();
    assert_eq!(
        gw.to_vec::<f64>()?,
        [
            1.0, -4.0, 12.0, 48.0, 8.5, -27.0, 0.0, 0.0, 0.0, 0.875, -8.0, 22.5
        ]
    );
    gw.mul(&gw)?.sum()?.backward()?;
    assert_eq!(
        w.grad().unwrap().to_vec::<f64>()?,
        [
            4.0, -32.0, 144.0, 3072.0, 578.0, -1944.0, 0.0, 0.0, 0.0, 24.5, -256.0, 810.0
        ]
    );
    Ok(())
}

#[test]
fn embedding_padding_idx_gradchecks() -> R {
    // The padding row's analytic gradient is zero by definition while its numerical one is
    // not (PyTorch's OpInfo skips such samples for gradcheck too), so the padding row enters
    // as a constant and the other rows are checked, with repeated and padding indices present.
    let idx = i64t(&[4, 1, 0, 1, 1, 3, 4, 0], &[2, 4]);
    let pad = Tensor::randn(&[1, 3], DType::F64)?;
    let table = |v: &[Tensor]| -> tapegrad::Result<Tensor> {
        Tensor::cat(&[&v[0].narrow(0, 0, 1)?, &pad, &v[0].narrow(0, 1, 3)?], 0)
    };
    let f = |v: &[Tensor]| Tensor::embedding_with(&idx, &table(v)?, Some(1));
    gradcheck(f, &[rg(&[4, 3])], Default::default())?;
    gradgradcheck(
        |v| {
            let w = table(v)?;
            Tensor::embedding_with(&idx, &w, Some(1))?.mul(&w.narrow(0, 0, 4)?.view(&[1, 4, 3])?)
        },
        &[rg(&[4, 3])],
        Default::default(),
    )?;
    // indices that never hit the padding row: the whole table is checked, padding row included
    let idx2 = i64t(&[3, 1, 1, 2], &[4]);
    gradcheck(
        |v| Tensor::embedding_with(&idx2, &v[0], Some(-4)),
        &[rg(&[4, 2])],
        Default::default(),
    )?;
    gradgradcheck(
        |v| Tensor::embedding_with(&idx2, &v[0], Some(0))?.mul(&v[0]),
        &[rg(&[4, 2])],
        Default::default(),
    )?;
    Ok(())
}

#[test]
fn embedding_padding_idx_errors_change_nothing() -> R {
    let w = pad_table();
    let before = w.to_vec::<f64>()?;
    let v0 = w.version();
    let idx = i64t(&[0, 3], &[2]);
    for p in [4, -5, i64::MAX, i64::MIN] {
        let e = Tensor::embedding_with(&idx, &w, Some(p)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{p}");
        assert!(
            e.message()
                .contains("Padding_idx must be within num_embeddings"),
            "{e}"
        );
    }
    // every in-range value (negative ones count from the end) is accepted
    for p in -4..4 {
        Tensor::embedding_with(&idx, &w, Some(p))?;
    }
    // the index check still applies with a padding_idx
    let e = Tensor::embedding_with(&i64t(&[4], &[1]), &w, Some(0)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    let e = Tensor::embedding_with(&i64t(&[-1], &[1]), &w, Some(-1)).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    // PyTorch accepts padding_idx 0 for an empty table (there is nothing to look up)
    let empty = Tensor::zeros(&[0, 3], DType::F64)?;
    let y = Tensor::embedding_with(&i64t(&[], &[0]), &empty, Some(0))?;
    assert_eq!(y.shape(), vec![0, 3]);
    assert_eq!(w.to_vec::<f64>()?, before);
    assert_eq!(w.version(), v0);
    assert!(w.grad().is_none());
    Ok(())
}
