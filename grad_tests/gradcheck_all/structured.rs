//! Table rows: reductions, matmul forms, gather/scatter, shape ops, nn functions and losses,
//! copies and indexing, complex ops, compositions.

use super::*;

pub(crate) fn reduce_cases() -> Vec<Case> {
    let x = |s| leaf(&[2, 3, 2], -2.0, 2.0, s);
    vec![
        case!("sum", [x(140)], |v| v[0].transpose(0, 2)?.sum()),
        case!("sum_dims", [x(141)], |v| v[0].sum_dims(&[0, 2], false)),
        case!("sum_dims/keepdim", [x(142)], |v| v[0].sum_dims(&[-1], true)),
        case!("sum_dims_dtype", [x(143)], |v| v[0].sum_dims_dtype(
            &[1],
            false,
            DType::F64
        )),
        case!("sum_to_size", [x(144)], |v| v[0].sum_to_size(&[3, 1])),
        case!("mean", [x(145)], |v| v[0].mean((), false, None)),
        case!("mean/dims", [x(146)], |v| v[0].mean(&[0, 1], true, None)),
        case!("var", [x(147)], |v| v[0].var((), 1.0, false)),
        case!("var/dims", [x(148)], |v| v[0].var(&[1], 0.0, true)),
        case!("std", [x(149)], |v| v[0].std((), 1.0, false)),
        case!("std/dims", [x(150)], |v| v[0].std(&[0, 2], 1.0, false)),
        case!("prod", [x(151)], |v| v[0].prod((), false)),
        case!("prod/dims", [x(152)], |v| v[0].prod(&[1], true)),
        case!(
            "prod/zero",
            [leaf_v(&[0.5, 0.0, -1.5, 2.0, 0.7, 1.1], &[2, 3])],
            |v| v[0].prod(&[1], false)
        ),
        case!("prod_dtype", [x(180)], |v| v[0].prod_dtype(
            &[1],
            false,
            DType::F64
        )),
        case!(
            "prod/zeros_all",
            [leaf_v(&[0.5, 0.0, -1.5, 2.0, 0.0, 1.1], &[2, 3])],
            |v| v[0].prod((), false)
        ),
        case!(
            "prod/zero_dims",
            [leaf_v(&[0.5, 0.0, -1.5, 2.0, 0.7, 1.1], &[3, 2])],
            |v| v[0].prod(&[0, 1], true)
        ),
        case!("logsumexp", [x(153)], |v| v[0].logsumexp(&[1], false)),
        case!("logsumexp/keepdim", [x(154)], |v| v[0]
            .logsumexp(&[0, 2], true)),
        case!("norm", [x(155)], |v| v[0].norm(NormOrd::L2, (), false)),
        case!("norm/dims", [x(156)], |v| v[0].norm(
            NormOrd::L2,
            &[1],
            true
        )),
        case!("norm/l1", [x(157)], |v| v[0].norm(NormOrd::L1, &[0], false)),
        case!("norm/inf", [x(158)], |v| v[0].norm(
            NormOrd::Inf,
            &[2],
            false
        )),
        case!("norm/neginf", [x(159)], |v| v[0].norm(
            NormOrd::NegInf,
            (),
            false
        )),
        case!("norm/p3", [x(630)], |v| v[0].norm(
            NormOrd::P(3.0),
            &[1],
            false
        )),
        case!("norm/p1.5", [x(631)], |v| v[0].norm(
            NormOrd::P(1.5),
            (),
            false
        )),
        case!("norm/p0.5", [x(632)], |v| v[0].norm(
            NormOrd::P(0.5),
            &[0, 2],
            true
        )),
        case!("norm/p-1", [x(633)], |v| v[0].norm(
            NormOrd::P(-1.0),
            &[2],
            false
        )),
        case!("norm/p0", [x(634)], |v| v[0].norm(
            NormOrd::P(0.0),
            &[1],
            false
        )),
        case!("nansum", [x(635)], |v| {
            let mut n = vec![0.0; 12];
            n[3] = f64::NAN;
            v[0].add(&Tensor::from_vec(n, &[2, 3, 2])?)?
                .nansum(&[1], true, None)
        }),
        // (to f64 itself: a round trip through a narrower dtype defeats finite differences)
        case!("type_as", [x(636)], |v| v[0]
            .type_as(&Tensor::zeros(&[1], DType::F64)?)?
            .mul(2.0)),
        case!("fill_tensor_", [x(637), leaf(&[], -1.0, 1.0, 638)], |v| {
            let y = v[0].copy()?;
            y.select(1, 2)?.fill_tensor_(&v[1])?;
            y.mul(&v[0])
        }),
        case!("max", [x(160)], |v| v[0].max()),
        case!("min", [x(161)], |v| v[0].min()),
        case!("max/ties", [leaf_v(&[1.0, 3.0, 3.0, 2.0], &[4])], |v| v[0]
            .max()),
        case!("max_dim", [x(162)], |v| {
            let (m, i) = v[0].max_dim(1, false)?;
            // the indices are an integer output: check them against argmax
            assert_eq!(i.to_vec::<i64>()?, v[0].argmax(1, false)?.to_vec::<i64>()?);
            Ok(m)
        }),
        case!("min_dim", [x(163)], |v| Ok(v[0].min_dim(-1, true)?.0)),
        case!("amax", [x(164)], |v| v[0].amax(&[0, 2], false)),
        case!("amin", [x(165)], |v| v[0].amin(&[1], true)),
        case!("amax/ties", [leaf_v(&[1.0, 3.0, 3.0, 2.0], &[2, 2])], |v| v
            [0]
        .amax((), false)),
        case!("cumsum", [x(166)], |v| v[0].cumsum(1, None)),
        case!("cumprod", [x(167)], |v| v[0]
            .transpose(0, 1)?
            .cumprod(-1, None)),
        case!(
            "cumprod/zero",
            [leaf_v(&[0.5, 0.0, -1.5, 2.0, 0.7, 1.1], &[2, 3])],
            |v| v[0].cumprod(1, None)
        ),
    ]
}

pub(crate) fn matmul_cases() -> Vec<Case> {
    let m = |r, c, s| leaf(&[r, c], -1.0, 1.0, s);
    vec![
        case!("mm", [m(2, 3, 170), m(3, 2, 171)], |v| v[0].mm(&v[1])),
        case!("mm/transposed", [m(3, 2, 172), m(3, 2, 173)], |v| v[0]
            .t()?
            .mm(&v[1])),
        case!(
            "bmm",
            [
                leaf(&[2, 2, 3], -1.0, 1.0, 174),
                leaf(&[2, 3, 2], -1.0, 1.0, 175)
            ],
            |v| v[0].bmm(&v[1])
        ),
        case!(
            "dot",
            [leaf(&[4], -1.0, 1.0, 176), leaf(&[4], -1.0, 1.0, 177)],
            |v| v[0].dot(&v[1])
        ),
        case!(
            "matmul",
            [leaf(&[3], -1.0, 1.0, 178), leaf(&[3], -1.0, 1.0, 179)],
            |v| v[0].matmul(&v[1])
        ),
        case!(
            "matmul/mv",
            [m(2, 3, 180), leaf(&[3], -1.0, 1.0, 181)],
            |v| v[0].matmul(&v[1])
        ),
        case!(
            "matmul/vm",
            [leaf(&[2], -1.0, 1.0, 182), m(2, 3, 183)],
            |v| v[0].matmul(&v[1])
        ),
        case!("matmul/mm", [m(2, 3, 184), m(3, 2, 185)], |v| v[0]
            .matmul(&v[1])),
        case!(
            "matmul/batched_broadcast",
            [leaf(&[2, 2, 3], -1.0, 1.0, 186), m(3, 2, 187)],
            |v| v[0].matmul(&v[1])
        ),
        case!(
            "matmul/vector_batched",
            [leaf(&[3], -1.0, 1.0, 188), leaf(&[2, 3, 2], -1.0, 1.0, 189)],
            |v| v[0].matmul(&v[1])
        ),
        case!(
            "matmul/batch_broadcast_both",
            [
                leaf(&[2, 1, 2, 3], -1.0, 1.0, 190),
                leaf(&[3, 3, 1], -1.0, 1.0, 191)
            ],
            |v| v[0].matmul(&v[1])
        ),
        case!(
            "addmm",
            [leaf(&[2], -1.0, 1.0, 192), m(2, 3, 193), m(3, 2, 194)],
            |v| v[0].addmm(&v[1], &v[2], 0.5, 2.0)
        ),
        case!(
            "outer",
            [leaf(&[3], -1.0, 1.0, 195), leaf(&[2], -1.0, 1.0, 196)],
            |v| v[0].outer(&v[1])
        ),
    ]
}

pub(crate) fn gather_cases() -> Vec<Case> {
    let x = |s| leaf(&[3, 4], -1.0, 1.0, s);
    let gi = || ids(&[0, 2, 1, 0, 2, 2], &[2, 3]);
    // scatter indices unique per column (scatter without add is only differentiable then)
    let si = || ids(&[1, 0, 2, 2, 1, 0], &[2, 3]);
    vec![
        case!("index_select", [x(200)], |v| v[0]
            .index_select(1, &ids(&[3, 0, 3], &[3]))),
        case!("gather", [x(201)], |v| v[0].gather(0, &gi())),
        case!("scatter", [x(202), leaf(&[2, 3], -1.0, 1.0, 203)], |v| v[0]
            .scatter(0, &si(), &v[1])),
        case!("scatter_value", [x(204)], |v| v[0].scatter_value(
            0,
            &si(),
            0.5
        )),
        case!("scatter_", [x(205), leaf(&[2, 3], -1.0, 1.0, 206)], |v| {
            let y = v[0].copy()?;
            y.scatter_(0, &si(), &v[1])?;
            Ok(y)
        }),
        case!("scatter_value_", [x(207)], |v| {
            let y = v[0].copy()?;
            y.scatter_value_(0, &si(), -0.5)?;
            Ok(y)
        }),
        case!(
            "scatter_add",
            [x(208), leaf(&[2, 3], -1.0, 1.0, 209)],
            |v| v[0].scatter_add(0, &gi(), &v[1])
        ),
        case!(
            "scatter_add_",
            [x(210), leaf(&[2, 3], -1.0, 1.0, 211)],
            |v| {
                let y = v[0].t()?.copy()?.t()?;
                y.scatter_add_(0, &gi(), &v[1])?;
                Ok(y)
            }
        ),
    ]
}

pub(crate) fn shape_cases() -> Vec<Case> {
    vec![
        case!(
            "cat",
            [leaf(&[2, 3], -1.0, 1.0, 220), leaf(&[1, 3], -1.0, 1.0, 221)],
            |v| Tensor::cat(&[&v[0], &v[1], &v[0]], 0)
        ),
        case!(
            "cat/dim1",
            [leaf(&[2, 3], -1.0, 1.0, 222), leaf(&[3, 2], -1.0, 1.0, 223)],
            |v| Tensor::cat(&[&v[0], &v[1].t()?], 1)
        ),
        case!(
            "stack",
            [leaf(&[2, 3], -1.0, 1.0, 224), leaf(&[2, 3], -1.0, 1.0, 225)],
            |v| Tensor::stack(&[&v[0], &v[1]], 1)
        ),
        case!("flip", [leaf(&[2, 3], -1.0, 1.0, 226)], |v| v[0]
            .flip(&[0, 1])),
        case!("roll", [leaf(&[2, 3], -1.0, 1.0, 227)], |v| v[0]
            .roll(&[1, -1], &[0, 1])),
        case!("roll/flat", [leaf(&[2, 3], -1.0, 1.0, 228)], |v| v[0]
            .roll(&[2], ())),
        case!("repeat", [leaf(&[2, 2], -1.0, 1.0, 229)], |v| v[0]
            .repeat(&[2, 1, 3])),
        case!("tril", [leaf(&[3, 3], -1.0, 1.0, 230)], |v| v[0].tril(0)),
        case!("triu", [leaf(&[3, 4], -1.0, 1.0, 231)], |v| v[0].triu(1)),
    ]
}

pub(crate) fn nn_cases() -> Vec<Case> {
    let logits = |s| leaf(&[3, 4], -2.0, 2.0, s);
    let y = || ids(&[1, 3, 0], &[3]);
    let w = || Tensor::from_vec(vec![0.5f64, 1.0, 2.0, 1.5], &[4]).unwrap();
    let probs = || {
        Tensor::from_vec(
            vec![
                0.1f64, 0.2, 0.3, 0.4, 0.25, 0.25, 0.25, 0.25, 0.7, 0.1, 0.1, 0.1,
            ],
            &[3, 4],
        )
        .unwrap()
    };
    vec![
        case!("softmax", [logits(240)], |v| v[0].softmax(1)),
        case!("softmax/dim0", [logits(241)], |v| v[0].t()?.softmax(0)),
        case!("log_softmax", [logits(242)], |v| v[0].log_softmax(-1)),
        case!("nll_loss", [logits(243)], |v| v[0]
            .log_softmax(1)?
            .nll_loss(&y(), Default::default())),
        case!("nll_loss/weighted_ignore", [logits(244)], |v| {
            let w = w();
            v[0].nll_loss(
                &ids(&[1, -100, 2], &[3]),
                NllLossOptions {
                    weight: Some(&w),
                    ignore_index: -100,
                    reduction: Reduction::Mean,
                },
            )
        }),
        case!("nll_loss/none", [logits(245)], |v| {
            v[0].nll_loss(
                &y(),
                NllLossOptions {
                    reduction: Reduction::None,
                    ..Default::default()
                },
            )
        }),
        case!("cross_entropy", [logits(246)], |v| v[0]
            .cross_entropy(&y(), Default::default())),
        case!("cross_entropy/smoothing_weight", [logits(247)], |v| {
            let w = w();
            v[0].cross_entropy(
                &y(),
                CrossEntropyOptions {
                    weight: Some(&w),
                    label_smoothing: 0.2,
                    reduction: Reduction::Sum,
                    ..Default::default()
                },
            )
        }),
        case!("cross_entropy/probs", [logits(248)], |v| v[0]
            .cross_entropy(&probs(), Default::default())),
        case!(
            "cross_entropy/probs_grad",
            [logits(249), leaf(&[3, 4], 0.1, 0.9, 250)],
            |v| v[0].cross_entropy(
                &v[1],
                CrossEntropyOptions {
                    label_smoothing: 0.1,
                    reduction: Reduction::None,
                    ..Default::default()
                }
            )
        ),
        case!(
            "linear",
            [
                leaf(&[2, 3], -1.0, 1.0, 300),
                leaf(&[4, 3], -1.0, 1.0, 301),
                leaf(&[4], -1.0, 1.0, 302)
            ],
            |v| Tensor::linear(&v[0], &v[1], Some(&v[2]))
        ),
        case!(
            "linear/no_bias",
            [leaf(&[2, 3], -1.0, 1.0, 303), leaf(&[4, 3], -1.0, 1.0, 304)],
            |v| Tensor::linear(&v[0], &v[1], None)
        ),
        case!(
            "binary_cross_entropy",
            [leaf(&[2, 3], 0.1, 0.9, 305), leaf(&[2, 3], 0.0, 1.0, 306)],
            |v| v[0].binary_cross_entropy(&v[1], None, Reduction::Mean)
        ),
        case!(
            "binary_cross_entropy/weight",
            [leaf(&[2, 3], 0.1, 0.9, 307), leaf(&[2, 3], 0.0, 1.0, 308)],
            |v| {
                // a constant weight: PyTorch refuses a weight that requires grad
                let w = Tensor::from_vec(vec![0.5, 1.0, 1.5], &[3])?;
                v[0].binary_cross_entropy(&v[1], Some(&w), Reduction::Sum)
            }
        ),
        case!(
            "mse_loss",
            [leaf(&[2, 3], -1.0, 1.0, 251), leaf(&[2, 3], -1.0, 1.0, 252)],
            |v| v[0].mse_loss(&v[1], Reduction::Mean)
        ),
        case!(
            "mse_loss/none",
            [leaf(&[2, 3], -1.0, 1.0, 253), leaf(&[2, 3], -1.0, 1.0, 254)],
            |v| v[0].mse_loss(&v[1], Reduction::None)
        ),
        case!(
            "l1_loss",
            [leaf(&[2, 3], -1.0, 1.0, 255), leaf(&[2, 3], -1.0, 1.0, 256)],
            |v| v[0].l1_loss(&v[1], Reduction::Sum)
        ),
        case!(
            "binary_cross_entropy_with_logits",
            [leaf(&[2, 3], -2.0, 2.0, 257), leaf(&[2, 3], 0.1, 0.9, 258)],
            |v| v[0].binary_cross_entropy_with_logits(&v[1], Default::default())
        ),
        case!(
            "binary_cross_entropy_with_logits/weights",
            [leaf(&[2, 3], -2.0, 2.0, 259), leaf(&[2, 3], 0.1, 0.9, 260)],
            |v| {
                let w = Tensor::from_vec(vec![0.5f64, 1.0, 2.0], &[3])?;
                let pw = Tensor::from_vec(vec![1.5f64, 0.5, 3.0], &[3])?;
                v[0].binary_cross_entropy_with_logits(
                    &v[1],
                    BceWithLogitsOptions {
                        weight: Some(&w),
                        pos_weight: Some(&pw),
                        reduction: Reduction::None,
                    },
                )
            }
        ),
        case!("dropout", [leaf(&[2, 3], -1.0, 1.0, 261)], |v| {
            tapegrad::manual_seed(7);
            v[0].dropout(0.4, true)
        }),
        case!("dropout/eval", [leaf(&[2, 3], -1.0, 1.0, 262)], |v| v[0]
            .dropout(0.4, false)),
        case!("embedding", [leaf(&[4, 3], -1.0, 1.0, 263)], |v| {
            Tensor::embedding(&ids(&[2, 0, 2, 3], &[2, 2]), &v[0])
        }),
        // padding row 1 is a constant (its gradient is zero by definition, so its numerical
        // derivative would not match) while the indices look it up
        case!(
            "embedding_with/padding_idx",
            [leaf(&[3, 3], -1.0, 1.0, 350)],
            |v| {
                let pad = Tensor::from_vec(vec![0.25f64, -0.5, 0.75], &[1, 3])?;
                let w = Tensor::cat(&[&v[0].narrow(0, 0, 1)?, &pad, &v[0].narrow(0, 1, 2)?], 0)?;
                Tensor::embedding_with(&ids(&[1, 0, 3, 1, 2, 0], &[2, 3]), &w, Some(-3))
            }
        ),
        case!(
            "layer_norm",
            [
                leaf(&[2, 2, 3], -2.0, 2.0, 264),
                leaf(&[3], 0.5, 1.5, 265),
                leaf(&[3], -1.0, 1.0, 266)
            ],
            |v| v[0].layer_norm(&[3], Some(&v[1]), Some(&v[2]), 1e-5)
        ),
        case!("layer_norm/2d", [leaf(&[2, 2, 3], -2.0, 2.0, 267)], |v| v
            [0]
        .layer_norm(&[2, 3], None, None, 1e-5)),
    ]
}

pub(crate) fn copy_index_cases() -> Vec<Case> {
    let x = |s| leaf(&[3, 4], -1.0, 1.0, s);
    vec![
        case!("copy", [x(280)], |v| v[0].t()?.copy()),
        case!("contiguous", [x(281)], |v| v[0].t()?.contiguous()),
        case!("to_dtype", [x(282)], |v| v[0]
            .to_dtype(DType::C128)?
            .to_dtype(DType::F64)),
        case!("copy_", [x(283), leaf(&[4], -1.0, 1.0, 284)], |v| {
            let y = v[0].mul(2.0)?;
            y.narrow(0, 1, 1)?.copy_(&v[1])?;
            Ok(y)
        }),
        case!(
            "copy_/broadcast_whole",
            [x(285), leaf(&[4], -1.0, 1.0, 286)],
            |v| {
                let y = v[0].mul(2.0)?;
                y.copy_(&v[1])?;
                y.mul(&v[0])
            }
        ),
        case!("fill_", [x(287)], |v| {
            let y = v[0].copy()?;
            y.select(1, 2)?.fill_(3.0)?;
            y.mul(&v[0])
        }),
        case!("zero_", [x(288)], |v| {
            let y = v[0].copy()?;
            y.t()?.narrow(0, 0, 2)?.zero_()?;
            Ok(y)
        }),
        case!("index", [x(289)], |v| v[0].index(&[
            sl(Some(1), None, 1),
            TensorIndex::Tensor(ids(&[3, 0, 3], &[3])),
        ])),
        case!("index/basic", [x(290)], |v| v[0]
            .index(&[TensorIndex::Int(-1), sl(None, None, 2),])),
        case!("index/mask", [x(291)], |v| v[0].index(&[
            TensorIndex::Tensor(mask(
                &[
                    true, false, true, false, false, true, true, false, true, false, true, true
                ],
                &[3, 4]
            ))
        ])),
        case!("i", [x(292)], |v| v[0].i((1i64, 0i64..3))),
        case!("index_tensors", [x(293)], |v| v[0].index_tensors(&[
            Some(ids(&[2, 0, 2], &[3])),
            Some(ids(&[1, 3, 1], &[3])),
        ])),
        case!("index_put", [x(294), leaf(&[2], -1.0, 1.0, 295)], |v| v[0]
            .index_put(
                &[Some(ids(&[0, 2], &[2])), Some(ids(&[1, 3], &[2]))],
                &v[1],
                false
            )),
        case!(
            "index_put/accumulate",
            [x(296), leaf(&[3], -1.0, 1.0, 297)],
            |v| v[0].index_put(
                &[Some(ids(&[0, 2, 0], &[3])), Some(ids(&[1, 3, 1], &[3]))],
                &v[1],
                true
            )
        ),
        case!("index_put_", [x(298), leaf(&[2, 4], -1.0, 1.0, 299)], |v| {
            let y = v[0].copy()?;
            y.index_put_(&[Some(ids(&[2, 0], &[2]))], &v[1], false)?;
            Ok(y)
        }),
        case!("index_set", [x(300), leaf(&[2], -1.0, 1.0, 301)], |v| {
            let y = v[0].copy()?;
            y.index_set(&[TensorIndex::Int(1), sl(Some(0), None, 2)], &v[1])?;
            Ok(y)
        }),
        case!("i_set", [x(302), leaf(&[], -1.0, 1.0, 303)], |v| {
            let y = v[0].copy()?;
            y.i_set((ids(&[0, 2], &[2]), 1i64), &v[1])?;
            Ok(y)
        }),
    ]
}

/// Complex ops, checked through real inputs: x (f64) -> complex128 -> op -> real output.
/// Gradients of real-valued functions of complex intermediates follow PyTorch's conjugate
/// Wirtinger convention; a missing conjugation shows up as a wrong real gradient here.
pub(crate) fn complex_cases() -> Vec<Case> {
    let c = || cplx(&[(0.3, -0.7), (1.2, 0.4), (-0.5, 0.9)], &[3]);
    let to_c = |re: &Tensor, im: &Tensor| -> tapegrad::Result<Tensor> {
        // re + i*im with a complex constant i
        let i = cplx(&[(0.0, 1.0)], &[]);
        re.to_dtype(DType::C128)?
            .add(&im.to_dtype(DType::C128)?.mul(&i)?)
    };
    let xs = |s| [leaf(&[3], -1.0, 1.0, s), leaf(&[3], -1.0, 1.0, s + 1)];
    let mut out = Vec::new();
    let [a, b] = xs(320);
    out.push(case!("mul/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .mul(c())?
        .abs()));
    let [a, b] = xs(322);
    out.push(case!("mul/complex_both", [a, b], |v| {
        let z = to_c(&v[0], &v[1])?;
        z.mul(&z)?.add(c())?.abs()
    }));
    let [a, b] = xs(324);
    out.push(case!("div/complex", [a, b], |v| c()
        .div(&to_c(&v[0], &v[1])?.add(c())?)?
        .abs()));
    let [a, b] = xs(326);
    out.push(case!("exp/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .exp()?
        .mul(c())?
        .to_dtype(DType::F64)));
    let [a, b] = xs(328);
    out.push(case!("neg/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .neg()?
        .mul(c())?
        .abs()));
    let [a, b] = xs(330);
    out.push(case!("sub/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .sub(c())?
        .abs()));
    let [a, b] = xs(332);
    out.push(case!("dot/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .dot(&c())?
        .abs()));
    let [a, b] = xs(334);
    out.push(case!("mm/complex", [a, b], |v| {
        let z = to_c(&v[0], &v[1])?.view(&[1, 3])?;
        z.mm(&c().view(&[3, 1])?)?.abs()
    }));
    let [a, b] = xs(336);
    out.push(case!("sum/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .mul(c())?
        .sum()?
        .abs()));
    // the complex unary ops on z = (re + i im) / 2 + shift, away from branch cuts and poles
    let mut seed = 600;
    macro_rules! unary {
        ($($name:literal => $m:ident, $shift:expr;)*) => {$(
            let [a, b] = xs(seed);
            seed += 2;
            out.push(case!(concat!($name, "/complex"), [a, b], |v| {
                to_c(&v[0].mul(0.5)?, &v[1].mul(0.5)?)?
                    .add($shift)?
                    .$m()?
                    .mul(c())?
                    .abs()
            }));
        )*};
    }
    unary! {
        "exp2" => exp2, 0.0; "log" => log, 2.0; "log2" => log2, 2.0; "log10" => log10, 2.0;
        "log1p" => log1p, 1.0; "expm1" => expm1, 0.0; "sqrt" => sqrt, 2.0; "rsqrt" => rsqrt, 2.0;
        "reciprocal" => reciprocal, 2.0; "sin" => sin, 0.0; "cos" => cos, 0.0; "tan" => tan, 0.0;
        "asin" => asin, 0.0; "acos" => acos, 0.0; "atan" => atan, 0.0; "sinh" => sinh, 0.0;
        "cosh" => cosh, 0.0; "tanh" => tanh, 0.0; "sigmoid" => sigmoid, 0.0;
    }
    let _ = seed;
    let [a, b] = xs(660);
    out.push(case!("var/complex", [a, b], |v| to_c(&v[0], &v[1])?.var(
        (),
        1.0,
        false
    )));
    let [a, b] = xs(662);
    out.push(case!("std/complex", [a, b], |v| to_c(&v[0], &v[1])?.std(
        &[0],
        1.0,
        true
    )));
    let [a, b] = xs(666);
    out.push(case!("cumsum/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .cumsum(0, None)?
        .mul(c())?
        .abs()));
    let [a, b] = xs(664);
    out.push(case!("logsumexp/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .logsumexp(&[0], false)?
        .abs()));
    // complex prod / cumprod (issue 21): conj(out / z) weights, and the zero-safe paths (the
    // middle element masked to an exact complex zero)
    let zero_mid = || cplx(&[(1.0, 0.0), (0.0, 0.0), (1.0, 0.0)], &[3]);
    let [a, b] = xs(668);
    out.push(case!("prod/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .add(c())?
        .prod((), false)?
        .abs()));
    let [a, b] = xs(670);
    out.push(case!("prod/complex_dims", [a, b], |v| to_c(&v[0], &v[1])?
        .add(c())?
        .view(&[1, 3])?
        .prod(&[1], true)?
        .mul(c())?
        .abs()));
    let [a, b] = xs(672);
    out.push(case!("prod/complex_zero", [a, b], |v| to_c(&v[0], &v[1])?
        .add(c())?
        .mul(zero_mid())?
        .view(&[1, 3])?
        .prod(&[1], false)?
        .abs()));
    let [a, b] = xs(674);
    out.push(case!("cumprod/complex", [a, b], |v| to_c(&v[0], &v[1])?
        .add(c())?
        .cumprod(0, None)?
        .mul(c())?
        .abs()));
    let [a, b] = xs(676);
    out.push(case!("cumprod/complex_zero", [a, b], |v| to_c(
        &v[0], &v[1]
    )?
    .add(c())?
    .mul(zero_mid())?
    .cumprod(0, None)?
    .mul(c())?
    .abs()));
    out
}

/// Compositions used for second-order checks (and first-order, for free).
pub(crate) fn compose_cases() -> Vec<Case> {
    vec![
        case!(
            "compose/mlp_tanh",
            [
                leaf(&[2, 3], -1.0, 1.0, 340),
                leaf(&[3, 4], -1.0, 1.0, 341),
                leaf(&[4], -0.5, 0.5, 342),
                leaf(&[4, 2], -1.0, 1.0, 343)
            ],
            |v| v[0]
                .matmul(&v[1])?
                .add(&v[2])?
                .tanh()?
                .matmul(&v[3])?
                .sigmoid()?
                .mean((), false, None)
        ),
        case!(
            "compose/mlp_cross_entropy",
            [
                leaf(&[3, 3], -1.0, 1.0, 344),
                leaf(&[3, 4], -1.0, 1.0, 345),
                leaf(&[4], -0.5, 0.5, 346)
            ],
            |v| v[0]
                .mm(&v[1])?
                .add(&v[2])?
                .exp()?
                .log1p()?
                .cross_entropy(&ids(&[0, 3, 2], &[3]), Default::default())
        ),
        case!(
            "compose/mse_regression",
            [
                leaf(&[3, 2], -1.0, 1.0, 347),
                leaf(&[2, 1], -1.0, 1.0, 348),
                leaf(&[3, 1], -1.0, 1.0, 349)
            ],
            |v| v[0].mm(&v[1])?.pow(2)?.mse_loss(&v[2], Reduction::Mean)
        ),
    ]
}
