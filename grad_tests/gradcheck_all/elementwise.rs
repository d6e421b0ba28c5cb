//! Table rows: views, arithmetic (broadcast, scalar, in-place, through views), unary math and
//! activations, pointwise extras.

use super::*;

/// Unary ops: (name, in-place name, lo, hi) with a domain where the op is smooth.
const UNARY: &[(&str, f64, f64)] = &[
    ("neg", -2.0, 2.0),
    ("abs", -2.0, 2.0),
    ("sign", -2.0, 2.0),
    ("relu", -2.0, 2.0),
    ("exp", -1.5, 1.5),
    ("exp2", -1.5, 1.5),
    ("log", 0.3, 3.0),
    ("log2", 0.3, 3.0),
    ("log10", 0.3, 3.0),
    ("log1p", -0.5, 2.0),
    ("expm1", -1.5, 1.5),
    ("sqrt", 0.3, 3.0),
    ("rsqrt", 0.3, 3.0),
    ("reciprocal", 0.3, 3.0),
    ("sin", -2.0, 2.0),
    ("cos", -2.0, 2.0),
    ("tan", -1.2, 1.2),
    ("asin", -0.8, 0.8),
    ("acos", -0.8, 0.8),
    ("atan", -2.0, 2.0),
    ("sinh", -1.5, 1.5),
    ("cosh", -1.5, 1.5),
    ("tanh", -1.5, 1.5),
    ("sigmoid", -2.0, 2.0),
    ("silu", -2.0, 2.0),
    ("floor", -2.0, 2.0),
    ("ceil", -2.0, 2.0),
    ("round", -2.0, 2.0),
    ("trunc", -2.0, 2.0),
    ("erf", -2.0, 2.0),
    ("frac", -1.9, 1.9),
    ("square", -2.0, 2.0),
];

fn apply_unary(name: &str, x: &Tensor, inplace: bool) -> tapegrad::Result<Tensor> {
    macro_rules! go {
        ($($n:ident, $n_:ident;)*) => {
            match name {
                $(stringify!($n) => if inplace { x.$n_() } else { x.$n() },)*
                _ => panic!("unknown unary op {name}"),
            }
        };
    }
    go! {
        neg, neg_; abs, abs_; sign, sign_; relu, relu_; exp, exp_; exp2, exp2_; log, log_;
        log2, log2_; log10, log10_; log1p, log1p_; expm1, expm1_; sqrt, sqrt_; rsqrt, rsqrt_;
        reciprocal, reciprocal_; sin, sin_; cos, cos_; tan, tan_; asin, asin_; acos, acos_;
        atan, atan_; sinh, sinh_; cosh, cosh_; tanh, tanh_; sigmoid, sigmoid_; silu, silu_;
        floor, floor_; ceil, ceil_; round, round_; trunc, trunc_; erf, erf_; frac, frac_;
        square, square_;
    }
}

pub(crate) fn unary_cases() -> Vec<Case> {
    let mut out = Vec::new();
    for (k, &(name, lo, hi)) in UNARY.iter().enumerate() {
        // out-of-place on a transposed (non-contiguous) input
        out.push(Case {
            name,
            inputs: vec![leaf(&[3, 2], lo, hi, k as u64)],
            f: Box::new(move |v: &[Tensor]| apply_unary(name, &v[0].t()?, false)),
        });
        // in-place on a clone, and on a strided view of a clone (CopySlices)
        let iname: &'static str = Box::leak(format!("{name}_").into_boxed_str());
        out.push(Case {
            name: iname,
            inputs: vec![leaf(&[4], lo, hi, k as u64 + 7)],
            f: Box::new(move |v: &[Tensor]| {
                let y = v[0].copy()?;
                apply_unary(name, &y, true)?;
                Ok(y)
            }),
        });
        let vname: &'static str = Box::leak(format!("{name}_/view").into_boxed_str());
        out.push(Case {
            name: vname,
            inputs: vec![leaf(&[2, 3], lo, hi, k as u64 + 3)],
            f: Box::new(move |v: &[Tensor]| {
                let y = v[0].copy()?;
                apply_unary(name, &y.slice(1, Some(0), None, 2)?, true)?;
                Ok(y)
            }),
        });
    }
    out
}

pub(crate) fn view_cases() -> Vec<Case> {
    vec![
        case!("permute", [leaf(&[2, 3, 2], -1.0, 1.0, 1)], |v| v[0]
            .permute(&[2, 0, 1])),
        case!("transpose", [leaf(&[2, 3], -1.0, 1.0, 2)], |v| v[0]
            .transpose(0, 1)),
        case!("t", [leaf(&[2, 3], -1.0, 1.0, 3)], |v| v[0].t()),
        case!("movedim", [leaf(&[2, 3, 2], -1.0, 1.0, 4)], |v| v[0]
            .movedim(&[0], &[2])),
        case!("squeeze", [leaf(&[2, 1, 3], -1.0, 1.0, 5)], |v| v[0]
            .squeeze()),
        case!("squeeze_dim", [leaf(&[2, 1, 3], -1.0, 1.0, 6)], |v| v[0]
            .squeeze_dim(1)),
        case!("squeeze_dims", [leaf(&[1, 2, 1], -1.0, 1.0, 7)], |v| v[0]
            .squeeze_dims(&[0, 2])),
        case!("unsqueeze", [leaf(&[2, 3], -1.0, 1.0, 8)], |v| v[0]
            .unsqueeze(1)),
        case!("flatten", [leaf(&[2, 3, 2], -1.0, 1.0, 9)], |v| v[0]
            .transpose(0, 2)?
            .flatten(0, -1)),
        case!("t_", [leaf(&[2, 3], -1.0, 1.0, 10)], |v| v[0]
            .mul(1.5)?
            .t_()),
        case!("transpose_", [leaf(&[2, 3, 2], -1.0, 1.0, 11)], |v| v[0]
            .mul(1.5)?
            .transpose_(0, 2)),
        case!("unsqueeze_", [leaf(&[2, 3], -1.0, 1.0, 12)], |v| v[0]
            .mul(1.5)?
            .unsqueeze_(0)),
        case!("squeeze_", [leaf(&[2, 1, 3], -1.0, 1.0, 13)], |v| v[0]
            .mul(1.5)?
            .squeeze_(Some(1))),
        case!("view", [leaf(&[2, 3], -1.0, 1.0, 14)], |v| v[0]
            .view(&[3, 2])),
        case!("reshape", [leaf(&[2, 3], -1.0, 1.0, 15)], |v| v[0]
            .reshape(&[6])),
        case!("reshape/copy", [leaf(&[2, 3], -1.0, 1.0, 16)], |v| v[0]
            .t()?
            .reshape(&[6])),
        case!("unsafe_view", [leaf(&[2, 3], -1.0, 1.0, 17)], |v| v[0]
            .mul(2.0)?
            .unsafe_view(&[3, 2])),
        case!("as_strided", [leaf(&[6], -1.0, 1.0, 18)], |v| v[0]
            .as_strided(&[2, 2], &[1, 2], Some(1))),
        case!("as_strided/overlap", [leaf(&[4], -1.0, 1.0, 19)], |v| v[0]
            .as_strided(&[3, 2], &[1, 1], None)),
        case!("expand", [leaf(&[2, 1], -1.0, 1.0, 20)], |v| v[0]
            .expand(&[3, 2, 4])),
        case!(
            "expand_as",
            [leaf(&[1, 3], -1.0, 1.0, 21), leaf(&[2, 3], -1.0, 1.0, 22)],
            |v| v[0].expand_as(&v[1])?.mul(&v[1])
        ),
        case!("broadcast_to", [leaf(&[3], -1.0, 1.0, 23)], |v| v[0]
            .broadcast_to(&[2, 3])),
        case!("alias", [leaf(&[3], -1.0, 1.0, 24)], |v| v[0].alias()),
        case!("unflatten", [leaf(&[6], -1.0, 1.0, 25)], |v| v[0]
            .unflatten(0, &[2, 3])),
        case!("select", [leaf(&[3, 4], -1.0, 1.0, 26)], |v| v[0]
            .t()?
            .select(0, 2)),
        case!("narrow", [leaf(&[3, 4], -1.0, 1.0, 27)], |v| v[0]
            .narrow(1, 1, 2)),
        case!("slice", [leaf(&[3, 5], -1.0, 1.0, 28)], |v| v[0].slice(
            1,
            Some(0),
            None,
            2
        )),
        case!("diagonal", [leaf(&[3, 4], -1.0, 1.0, 29)], |v| v[0]
            .diagonal(1, 0, 1)),
        case!("unbind", [leaf(&[3, 2], -1.0, 1.0, 30)], |v| {
            let p = v[0].unbind(0)?;
            p[0].mul(2.0)?.add(&p[2])
        }),
        case!("split", [leaf(&[5, 2], -1.0, 1.0, 31)], |v| {
            let p = v[0].split(2, 0)?;
            Tensor::cat(&[&p[2], &p[0].mul(3.0)?], 0)
        }),
        case!("split_with_sizes", [leaf(&[5, 2], -1.0, 1.0, 32)], |v| {
            let p = v[0].split_with_sizes(&[1, 4], 0)?;
            p[1].mul(&p[0])
        }),
        case!("chunk", [leaf(&[2, 6], -1.0, 1.0, 33)], |v| {
            let p = v[0].chunk(3, 1)?;
            p[0].sub(&p[2].mul(2.0)?)
        }),
    ]
}

pub(crate) fn arith_cases() -> Vec<Case> {
    let two = |s1: u64| [leaf(&[2, 3], -2.0, 2.0, s1), leaf(&[3], 0.5, 2.0, s1 + 1)];
    let mut out = Vec::new();
    // broadcasting tensor-tensor, scalar and 0-dim operands
    let [a, b] = two(40);
    out.push(case!("add", [a, b], |v| v[0].add(&v[1])));
    let [a, b] = two(42);
    out.push(case!("add_alpha", [a, b], |v| v[0].add_alpha(&v[1], 2.5)));
    let [a, b] = two(44);
    out.push(case!("sub", [a, b], |v| v[1].sub(&v[0].t()?.unsqueeze(2)?)));
    let [a, b] = two(46);
    out.push(case!("sub_alpha", [a, b], |v| v[0].sub_alpha(&v[1], -1.5)));
    let [a, b] = two(48);
    out.push(case!("mul", [a, b], |v| v[0].mul(&v[1])));
    out.push(case!("mul/scalar", [leaf(&[3], -1.0, 1.0, 50)], |v| v[0]
        .mul(-2.5)));
    out.push(case!(
        "mul/0dim",
        [leaf(&[2, 2], -1.0, 1.0, 51), leaf(&[], 0.5, 1.0, 52)],
        |v| v[0].mul(&v[1])
    ));
    let [a, b] = two(53);
    out.push(case!("div", [a, b], |v| v[0].div(&v[1])));
    out.push(case!("div/scalar", [leaf(&[3], -1.0, 1.0, 55)], |v| v[0]
        .div(0.75)));
    // in-place: self and other both differentiable, also through a view
    macro_rules! inpl {
        ($name:expr, $m:ident $(, $extra:expr)*) => {{
            let [a, b] = two(60);
            out.push(case!($name, [a, b], |v| {
                let y = v[0].copy()?;
                y.$m(&v[1] $(, $extra)*)?;
                Ok(y)
            }));
            let [a, b] = two(61);
            out.push(case!(concat!($name, "/view"), [a, b], |v| {
                let y = v[0].t()?.copy()?;
                y.narrow(0, 1, 1)?.$m(&v[1].narrow(0, 0, 2)?.unsqueeze(0)? $(, $extra)*)?;
                Ok(y)
            }));
        }};
    }
    inpl!("add_", add_);
    inpl!("add_alpha_", add_alpha_, 2.0);
    inpl!("sub_", sub_);
    inpl!("sub_alpha_", sub_alpha_, 0.5);
    inpl!("mul_", mul_);
    inpl!("div_", div_);
    // scalar in-place ops through dense, strided and stepped views (CopySlices applies their
    // formula to the gradient region in place), stacked on one base
    for (name, seed) in [("mul_/scalar_views", 62), ("div_/scalar_views", 63)] {
        out.push(Case {
            name,
            inputs: vec![leaf(&[3, 4], -1.0, 1.0, seed)],
            f: Box::new(|v: &[Tensor]| {
                let y = v[0].copy()?;
                y.select(1, 0)?.mul_(-2.5)?;
                y.narrow(1, 1, 2)?.div_(0.75)?;
                y.slice(0, Some(0), None, 2)?.add_(1.5)?.sub_(0.25)?;
                y.t()?.narrow(0, 2, 2)?.mul_(3.0)?.div_(-1.25)?;
                y.mul(&y)
            }),
        });
    }
    out
}

pub(crate) fn pointwise_cases() -> Vec<Case> {
    let m = || mask(&[true, false, false, true, true, false], &[2, 3]);
    vec![
        case!(
            "where_",
            [leaf(&[2, 3], -1.0, 1.0, 70), leaf(&[3], -1.0, 1.0, 71)],
            |v| Tensor::where_(&m(), &v[0], &v[1])
        ),
        case!("where_/scalar", [leaf(&[2, 3], -1.0, 1.0, 72)], |v| {
            Tensor::where_(&m(), 0.5, &v[0])
        }),
        case!("masked_fill", [leaf(&[2, 3], -1.0, 1.0, 73)], |v| v[0]
            .masked_fill(&m(), -3.0)),
        case!(
            "masked_fill/tensor",
            [leaf(&[2, 3], -1.0, 1.0, 74), leaf(&[], -1.0, 1.0, 75)],
            |v| v[0].masked_fill(&m(), &v[1])
        ),
        case!(
            "masked_fill_",
            [leaf(&[2, 3], -1.0, 1.0, 76), leaf(&[], -1.0, 1.0, 77)],
            |v| {
                let y = v[0].copy()?;
                y.masked_fill_(&m(), &v[1])?;
                Ok(y)
            }
        ),
        case!("clamp", [leaf(&[2, 3], -2.0, 2.0, 78)], |v| v[0]
            .clamp(Some(Scalar::Float(-0.77)), Some(Scalar::Float(0.93)))),
        case!("clamp_", [leaf(&[2, 3], -2.0, 2.0, 79)], |v| {
            let y = v[0].copy()?;
            y.clamp_(Some(Scalar::Float(-0.77)), Some(Scalar::Float(0.93)))?;
            Ok(y)
        }),
        case!("clamp_min", [leaf(&[2, 3], -2.0, 2.0, 80)], |v| v[0]
            .clamp_min(0.13)),
        case!("clamp_max", [leaf(&[2, 3], -2.0, 2.0, 81)], |v| v[0]
            .clamp_max(0.13)),
        case!("clamp_min_", [leaf(&[2, 3], -2.0, 2.0, 82)], |v| {
            let y = v[0].copy()?;
            y.clamp_min_(0.13)?;
            Ok(y)
        }),
        case!("clamp_max_", [leaf(&[2, 3], -2.0, 2.0, 83)], |v| {
            let y = v[0].copy()?;
            y.clamp_max_(0.13)?;
            Ok(y)
        }),
        case!("pow", [leaf(&[2, 3], -2.0, 2.0, 84)], |v| v[0].pow(3)),
        case!("pow/float", [leaf(&[2, 3], 0.3, 2.0, 85)], |v| v[0]
            .pow(2.5)),
        case!(
            "pow/tensor",
            [leaf(&[2, 3], 0.3, 2.0, 86), leaf(&[3], -1.0, 2.0, 87)],
            |v| v[0].pow(&v[1])
        ),
        case!(
            "pow_",
            [leaf(&[2, 3], 0.3, 2.0, 88), leaf(&[3], -1.0, 2.0, 89)],
            |v| {
                let y = v[0].copy()?;
                y.pow_(&v[1])?;
                Ok(y)
            }
        ),
        case!("pow_scalar_base", [leaf(&[3], -1.0, 1.0, 90)], |v| {
            Tensor::pow_scalar_base(2.5, &v[0])
        }),
        case!(
            "maximum",
            [leaf(&[2, 3], -1.0, 1.0, 91), leaf(&[2, 3], -1.0, 1.0, 92)],
            |v| v[0].maximum(&v[1])
        ),
        case!(
            "minimum",
            [leaf(&[2, 3], -1.0, 1.0, 93), leaf(&[3], -1.0, 1.0, 94)],
            |v| v[0].minimum(&v[1])
        ),
        case!(
            "fmax",
            [leaf(&[2, 3], -1.0, 1.0, 95), leaf(&[2, 3], -1.0, 1.0, 96)],
            |v| v[0].fmax(&v[1])
        ),
        case!(
            "fmin",
            [leaf(&[2, 3], -1.0, 1.0, 97), leaf(&[2, 3], -1.0, 1.0, 98)],
            |v| v[0].fmin(&v[1])
        ),
        case!(
            "maximum_",
            [leaf(&[2, 3], -1.0, 1.0, 99), leaf(&[2, 3], -1.0, 1.0, 100)],
            |v| {
                let y = v[0].copy()?;
                y.maximum_(&v[1])?;
                Ok(y)
            }
        ),
        case!(
            "remainder",
            [leaf(&[2, 3], -3.0, 3.0, 103), leaf(&[3], 0.7, 1.3, 104)],
            |v| v[0].remainder(&v[1])
        ),
        case!(
            "fmod",
            [leaf(&[2, 3], -3.0, 3.0, 106), leaf(&[3], 0.7, 1.3, 107)],
            |v| v[0].fmod(&v[1])
        ),
        case!(
            "remainder_",
            [leaf(&[2, 3], -3.0, 3.0, 108), leaf(&[2, 3], 0.7, 1.3, 109)],
            |v| {
                let y = v[0].copy()?;
                y.remainder_(&v[1])?;
                Ok(y)
            }
        ),
        case!("fmod_", [leaf(&[2, 3], -3.0, 3.0, 110)], |v| {
            let y = v[0].copy()?;
            y.fmod_(0.9)?;
            Ok(y)
        }),
        case!(
            "atan2",
            [leaf(&[2, 3], -1.0, 1.0, 111), leaf(&[2, 3], 0.3, 1.0, 112)],
            |v| v[0].atan2(&v[1])
        ),
        case!(
            "atan2_",
            [leaf(&[2, 3], -1.0, 1.0, 113), leaf(&[2, 3], 0.3, 1.0, 114)],
            |v| {
                let y = v[0].copy()?;
                y.atan2_(&v[1])?;
                Ok(y)
            }
        ),
        case!(
            "hypot",
            [leaf(&[2, 3], -1.0, 1.0, 115), leaf(&[3], 0.3, 1.0, 116)],
            |v| v[0].hypot(&v[1])
        ),
        case!(
            "lerp",
            [leaf(&[2, 3], -1.0, 1.0, 117), leaf(&[2, 3], -1.0, 1.0, 118)],
            |v| v[0].lerp(&v[1], 0.3)
        ),
        case!(
            "lerp/tensor",
            [
                leaf(&[2, 3], -1.0, 1.0, 119),
                leaf(&[2, 3], -1.0, 1.0, 120),
                leaf(&[3], 0.0, 1.0, 121)
            ],
            |v| v[0].lerp(&v[1], &v[2])
        ),
        case!(
            "lerp_",
            [leaf(&[2, 3], -1.0, 1.0, 122), leaf(&[2, 3], -1.0, 1.0, 123)],
            |v| {
                let y = v[0].copy()?;
                y.lerp_(&v[1], 0.3)?;
                Ok(y)
            }
        ),
        case!(
            "addcmul",
            [
                leaf(&[2, 3], -1.0, 1.0, 124),
                leaf(&[2, 3], -1.0, 1.0, 125),
                leaf(&[3], -1.0, 1.0, 126)
            ],
            |v| v[0].addcmul(&v[1], &v[2], 0.5)
        ),
        case!(
            "addcmul_",
            [
                leaf(&[2, 3], -1.0, 1.0, 127),
                leaf(&[2, 3], -1.0, 1.0, 128),
                leaf(&[3], -1.0, 1.0, 129)
            ],
            |v| {
                let y = v[0].copy()?;
                y.addcmul_(&v[1], &v[2], -2.0)?;
                Ok(y)
            }
        ),
        case!("nan_to_num", [leaf(&[2, 3], -1.0, 1.0, 130)], |v| {
            // the NaN position is replaced (zero grad), the rest passes through
            let nan = Tensor::from_vec(vec![f64::NAN, 0.0, 0.0, 0.0, 0.0, 0.0], &[2, 3])?;
            v[0].add(&nan)?.nan_to_num(0.0, Some(1.0), Some(-1.0))
        }),
        case!("gelu", [leaf(&[2, 3], -2.0, 2.0, 131)], |v| v[0]
            .gelu(tapegrad::Approximate::None)),
        case!("gelu/tanh", [leaf(&[2, 3], -2.0, 2.0, 132)], |v| v[0]
            .gelu(tapegrad::Approximate::Tanh)),
        case!("softplus", [leaf(&[2, 3], -2.0, 2.0, 133)], |v| v[0]
            .softplus(1.5, 20.0)),
        case!("softplus/threshold", [leaf(&[2, 3], -2.0, 2.0, 134)], |v| v
            [0]
        .softplus(2.0, 1.1)),
        case!("elu", [leaf(&[2, 3], -2.0, 2.0, 135)], |v| v[0].elu(0.7)),
        case!("leaky_relu", [leaf(&[2, 3], -2.0, 2.0, 136)], |v| v[0]
            .leaky_relu(0.1)),
    ]
}

/// Rows of the ops and forms the sweep found missing (issue 21 part 3): in-place twins,
/// tensor bounds, general norms, scalar-first arithmetic.
pub(crate) fn missing_api_cases() -> Vec<Case> {
    vec![
        case!("elu_", [leaf(&[2, 3], -2.0, 2.0, 600)], |v| {
            let y = v[0].copy()?;
            y.elu_(0.7)?;
            Ok(y)
        }),
        case!("leaky_relu_", [leaf(&[2, 3], -2.0, 2.0, 601)], |v| {
            let y = v[0].copy()?;
            y.t()?.leaky_relu_(0.1)?;
            Ok(y)
        }),
        case!(
            "hypot_",
            [leaf(&[2, 3], 0.5, 2.0, 602), leaf(&[3], 0.5, 2.0, 603)],
            |v| {
                let y = v[0].copy()?;
                y.hypot_(&v[1])?;
                Ok(y)
            }
        ),
        case!("nan_to_num_", [leaf(&[2, 3], -1.0, 1.0, 604)], |v| {
            let nan = Tensor::from_vec(vec![0.0, f64::NAN, 0.0, 0.0, 0.0, 0.0], &[2, 3])?;
            let y = v[0].add(&nan)?;
            y.narrow(1, 0, 2)?.nan_to_num_(0.5, None, None)?;
            Ok(y)
        }),
        case!(
            "addcdiv",
            [
                leaf(&[2, 3], -1.0, 1.0, 605),
                leaf(&[2, 3], -1.0, 1.0, 606),
                leaf(&[3], 0.5, 2.0, 607)
            ],
            |v| v[0].addcdiv(&v[1], &v[2], 0.5)
        ),
        case!(
            "addcdiv_",
            [
                leaf(&[2, 3], -1.0, 1.0, 608),
                leaf(&[3], -1.0, 1.0, 609),
                leaf(&[2, 3], 0.5, 2.0, 610)
            ],
            |v| {
                let y = v[0].copy()?;
                y.addcdiv_(&v[1], &v[2], -2.0)?;
                Ok(y)
            }
        ),
        case!(
            "clamp_tensor",
            [
                leaf(&[2, 3], -2.0, 2.0, 611),
                leaf(&[3], -1.5, -0.1, 612),
                leaf(&[2, 1], 0.1, 1.5, 613)
            ],
            |v| v[0].clamp_tensor(Some(&v[1]), Some(&v[2]))
        ),
        case!(
            "clamp_tensor_",
            [leaf(&[2, 3], -2.0, 2.0, 614), leaf(&[3], -1.5, 1.5, 615)],
            |v| {
                let y = v[0].copy()?;
                y.t()?.clamp_tensor_(None, Some(&v[1].unsqueeze(1)?))?;
                Ok(y)
            }
        ),
        case!(
            "clamp_min/tensor",
            [leaf(&[2, 3], -2.0, 2.0, 616), leaf(&[3], -1.5, 1.5, 617)],
            |v| v[0].clamp_min(&v[1])
        ),
        case!(
            "clamp_max_/tensor",
            [leaf(&[2, 3], -2.0, 2.0, 618), leaf(&[2, 3], -1.5, 1.5, 619)],
            |v| {
                let y = v[0].copy()?;
                y.clamp_max_(&v[1])?;
                Ok(y)
            }
        ),
        case!("round_decimals", [leaf(&[2, 3], -2.0, 2.0, 620)], |v| v[0]
            .round_decimals(1)),
        case!("round_decimals_", [leaf(&[2, 3], -2.0, 2.0, 621)], |v| {
            let y = v[0].copy()?;
            y.round_decimals_(-1)?;
            Ok(y)
        }),
        case!("sub_scalar_base", [leaf(&[2, 3], -2.0, 2.0, 622)], |v| {
            Tensor::sub_scalar_base(1.5, &v[0])
        }),
        case!("div_scalar_base", [leaf(&[2, 3], 0.5, 2.0, 623)], |v| {
            Tensor::div_scalar_base(-1.5, &v[0])
        }),
    ]
}
