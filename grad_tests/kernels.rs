//! The ordering, selection and reduction kernels added for the "CPU compute kernels" issue:
//! sort/argsort/topk, nonzero/masked_select, scatter_reduce, div with rounding modes,
//! binary_cross_entropy and functional linear. Expected values were recorded from PyTorch;
//! every differentiable op has a gradcheck.

use crate::common::{R, i64t, leaf64, t64};
use tapegrad::autograd::{GradcheckOptions, gradcheck};
use tapegrad::{
    DType, ErrorKind, IncludeSelf, Reduction, RoundingMode, ScatterReduce, Stability, Tensor,
};

fn o() -> GradcheckOptions {
    GradcheckOptions::default()
}

#[test]
fn sort_is_stable_and_orders_nan_last() -> R {
    let x = Tensor::from_vec(vec![3.0f32, 1.0, 3.0, 2.0, 1.0, 3.0], &[6])?;
    let (v, i) = x.sort(-1, false, Stability::Stable)?;
    assert_eq!(v.to_vec::<f32>()?, vec![1.0, 1.0, 2.0, 3.0, 3.0, 3.0]);
    assert_eq!(i.to_vec::<i64>()?, vec![1, 4, 3, 0, 2, 5]);
    assert_eq!(i.dtype(), DType::I64);
    let (_, i) = x.sort(0, true, Stability::Stable)?;
    assert_eq!(i.to_vec::<i64>()?, vec![0, 2, 5, 3, 1, 4]);
    assert_eq!(
        x.argsort(0, false, Stability::Stable)?.to_vec::<i64>()?,
        vec![1, 4, 3, 0, 2, 5]
    );
    let n = t64(
        &[3.0, f64::NAN, 1.0, f64::NEG_INFINITY, f64::INFINITY],
        &[5],
    );
    let (v, i) = n.sort(0, false, Stability::Stable)?;
    assert_eq!(i.to_vec::<i64>()?, vec![3, 2, 0, 4, 1]);
    assert!(v.to_vec::<f64>()?[4].is_nan());
    let (_, i) = n.sort(0, true, Stability::Stable)?;
    assert_eq!(i.to_vec::<i64>()?, vec![1, 4, 0, 2, 3]);
    // integer matrix along dim 0, and int64 values beyond 2^53 keep their exact order
    let m = i64t(&[2, 1, 2, 2, 0, -1], &[2, 3]);
    let (v, i) = m.sort(0, false, Stability::Stable)?;
    assert_eq!(v.to_vec::<i64>()?, vec![2, 0, -1, 2, 1, 2]);
    assert_eq!(i.to_vec::<i64>()?, vec![0, 1, 1, 1, 0, 0]);
    let big = i64t(&[(1 << 60) + 1, 1 << 60], &[2]);
    assert_eq!(
        big.argsort(0, false, Stability::Stable)?.to_vec::<i64>()?,
        vec![1, 0]
    );
    // 0-dim
    let (v, i) = Tensor::scalar(3.0f64).sort(-1, false, Stability::Any)?;
    assert_eq!(
        (v.shape(), v.item::<f64>()?, i.item::<i64>()?),
        (vec![], 3.0, 0)
    );
    let e = x.sort(1, false, Stability::Any).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DimOutOfRange);
    Ok(())
}

#[test]
fn topk_largest_smallest_sorted_and_unsorted() -> R {
    let x = Tensor::from_vec(
        vec![1.0f32, 9.0, 4.0, 7.0, 4.5, 0.0, -2.0, 6.0, 5.0, 3.0],
        &[2, 5],
    )?;
    let (v, i) = x.topk(2, -1, true, true)?;
    assert_eq!(v.to_vec::<f32>()?, vec![9.0, 7.0, 6.0, 5.0]);
    assert_eq!(i.to_vec::<i64>()?, vec![1, 3, 2, 3]);
    let (v, i) = x.topk(3, 1, false, true)?;
    assert_eq!(v.to_vec::<f32>()?, vec![1.0, 4.0, 4.5, -2.0, 0.0, 3.0]);
    assert_eq!(i.to_vec::<i64>()?, vec![0, 2, 4, 1, 0, 4]);
    let (v, i) = x.topk(1, 0, true, true)?;
    assert_eq!(v.shape(), vec![1, 5]);
    assert_eq!(i.to_vec::<i64>()?, vec![0, 0, 1, 0, 0]);
    // unsorted: the same set of entries (PyTorch leaves the order unspecified)
    let (v, i) = x.topk(3, 1, false, false)?;
    let (vv, iv) = (v.to_vec::<f32>()?, i.to_vec::<i64>()?);
    let xv = x.to_vec::<f32>()?;
    for r in 0..2 {
        let mut s: Vec<i64> = iv[r * 3..r * 3 + 3].to_vec();
        for (j, &ix) in s.iter().enumerate() {
            assert_eq!(vv[r * 3 + j], xv[r * 5 + ix as usize]);
        }
        s.sort();
        assert_eq!(s, if r == 0 { vec![0, 2, 4] } else { vec![0, 1, 4] });
    }
    let e = x.topk(6, 1, true, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    assert_eq!(x.topk(0, 1, true, true)?.0.shape(), vec![2, 0]);
    Ok(())
}

#[test]
fn sort_and_topk_gradients() -> R {
    let v = [0.5, -1.25, 2.0, 0.75, -0.5, 1.5];
    gradcheck(
        |x| Ok(x[0].sort(1, false, Stability::Any)?.0),
        &[leaf64(&v, &[2, 3])],
        o(),
    )?;
    gradcheck(
        |x| Ok(x[0].sort(0, true, Stability::Stable)?.0),
        &[leaf64(&v, &[2, 3])],
        o(),
    )?;
    gradcheck(
        |x| Ok(x[0].t()?.topk(1, 0, true, true)?.0),
        &[leaf64(&v, &[2, 3])],
        o(),
    )?;
    gradcheck(
        |x| Ok(x[0].topk(2, -1, false, true)?.0),
        &[leaf64(&v, &[2, 3])],
        o(),
    )?;
    // the gradient lands on the picked positions only
    let x = leaf64(&v, &[6]);
    x.topk(2, 0, true, true)?.0.sum()?.backward()?;
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>()?,
        vec![0.0, 0.0, 1.0, 0.0, 0.0, 1.0]
    );
    Ok(())
}

#[test]
fn nonzero_is_column_major() -> R {
    let x = Tensor::from_vec(vec![0.0f32, 1.5, -0.0, f32::NAN, 0.0, -2.0], &[2, 3])?;
    let nz = x.nonzero()?;
    assert_eq!(nz.shape(), vec![3, 2]);
    assert_eq!(nz.strides(), vec![1, 3]);
    assert_eq!(nz.dtype(), DType::I64);
    assert_eq!(nz.to_vec::<i64>()?, vec![0, 1, 1, 0, 1, 2]);
    assert!(!nz.is_view());
    let none = i64t(&[0, 0], &[2]).nonzero()?;
    assert_eq!((none.shape(), none.strides()), (vec![0, 1], vec![1, 0]));
    let s = Tensor::scalar(5.0f64).nonzero()?;
    assert_eq!((s.shape(), s.strides()), (vec![1, 0], vec![1, 1]));
    Ok(())
}

#[test]
fn masked_select_broadcasts_and_differentiates() -> R {
    let x = t64(&[0.0, 1.5, -0.0, 4.0, 0.0, -2.0], &[2, 3]);
    let m = Tensor::from_vec(vec![true, false, true], &[3])?;
    assert_eq!(
        x.masked_select(&m)?.to_vec::<f64>()?,
        vec![0.0, -0.0, 4.0, -2.0]
    );
    // the input broadcasts against a bigger mask
    let row = t64(&[1.0, 2.0, 3.0], &[3]);
    let mm = Tensor::from_vec(vec![true, true, false, false, true, true], &[2, 3])?;
    assert_eq!(
        row.masked_select(&mm)?.to_vec::<f64>()?,
        vec![1.0, 2.0, 2.0, 3.0]
    );
    gradcheck(
        |v| v[0].masked_select(&mm),
        &[leaf64(&[1.0, 2.0, 3.0], &[3])],
        o(),
    )?;
    gradcheck(
        |v| v[0].t()?.masked_select(&mm.t()?),
        &[leaf64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])],
        o(),
    )?;
    assert_eq!(
        x.masked_select(&i64t(&[1, 0, 1], &[3])).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    let bad = Tensor::ones(&[2], DType::Bool)?;
    assert_eq!(
        x.masked_select(&bad).unwrap_err().kind(),
        ErrorKind::ShapeMismatch
    );
    Ok(())
}

const SR_X: [f64; 8] = [1.0, 0.0, 3.0, 2.0, 0.0, 0.0, 5.0, -1.0];
const SR_I: [i64; 8] = [0, 0, 2, 0, 1, 1, 1, 3];
const SR_S: [f64; 8] = [2.0, 3.0, 0.0, 4.0, 0.0, 5.0, 0.0, 2.0];

#[test]
fn scatter_reduce_values_match_pytorch() -> R {
    let (x, i, s) = (
        t64(&SR_X, &[2, 4]),
        i64t(&SR_I, &[2, 4]),
        t64(&SR_S, &[2, 4]),
    );
    use ScatterReduce::*;
    // recorded from torch.Tensor.scatter_reduce(1, i, s, reduce, include_self=...)
    let (yes, no) = (IncludeSelf::Yes, IncludeSelf::No);
    let want: [(ScatterReduce, IncludeSelf, [f64; 8]); 10] = [
        (Sum, yes, [10.0, 0.0, 3.0, 2.0, 0.0, 5.0, 5.0, 1.0]),
        (Sum, no, [9.0, 0.0, 0.0, 2.0, 0.0, 5.0, 5.0, 2.0]),
        (Prod, yes, [24.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, -2.0]),
        (Prod, no, [24.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, 2.0]),
        (Mean, yes, [2.5, 0.0, 1.5, 2.0, 0.0, 1.25, 5.0, 0.5]),
        (Mean, no, [3.0, 0.0, 0.0, 2.0, 0.0, 5.0 / 3.0, 5.0, 2.0]),
        (Amax, yes, [4.0, 0.0, 3.0, 2.0, 0.0, 5.0, 5.0, 2.0]),
        (Amax, no, [4.0, 0.0, 0.0, 2.0, 0.0, 5.0, 5.0, 2.0]),
        (Amin, yes, [1.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, -1.0]),
        (Amin, no, [2.0, 0.0, 0.0, 2.0, 0.0, 0.0, 5.0, 2.0]),
    ];
    for (r, inc, w) in want {
        let y = x.scatter_reduce(1, &i, &s, r, inc)?;
        assert_eq!(y.to_vec::<f64>()?, w.to_vec(), "{r:?} {inc:?}");
        let z = x.copy()?;
        z.scatter_reduce_(1, &i, &s, r, inc)?;
        assert_eq!((z.to_vec::<f64>()?, z.version()), (w.to_vec(), 1));
    }
    // integer mean rounds toward -inf; NaN propagates through amax
    let xi = i64t(&[1, 2, 3, 4], &[4]);
    let (ii, si) = (i64t(&[0, 0, 2], &[3]), i64t(&[-5, 2, 7], &[3]));
    assert_eq!(
        xi.scatter_reduce(0, &ii, &si, Mean, IncludeSelf::Yes)?
            .to_vec::<i64>()?,
        vec![-1, 2, 5, 4]
    );
    assert_eq!(
        xi.scatter_reduce(0, &ii, &si, Mean, IncludeSelf::No)?
            .to_vec::<i64>()?,
        vec![-2, 2, 7, 4]
    );
    let n = t64(&[5.0, f64::NAN, 7.0], &[3]);
    let y = t64(&[1.0, 2.0, 3.0, 4.0], &[4]).scatter_reduce(0, &ii, &n, Amax, IncludeSelf::Yes)?;
    assert!(y.to_vec::<f64>()?[0].is_nan());
    assert_eq!(ScatterReduce::from_name("mean"), Some(Mean));
    Ok(())
}

#[test]
fn scatter_reduce_gradients() -> R {
    let x = [1.5, -0.5, 3.0, 2.0, 0.7, 0.2, 5.0, -1.0];
    let s = [2.0, 3.0, 0.25, 4.0, 0.5, 5.5, -0.3, 2.5];
    let s_zero = [2.0, 0.0, 0.25, 4.0, 0.5, 5.5, -0.3, 2.5];
    let i = i64t(&SR_I, &[2, 4]);
    for r in [
        ScatterReduce::Sum,
        ScatterReduce::Prod,
        ScatterReduce::Mean,
        ScatterReduce::Amax,
        ScatterReduce::Amin,
    ] {
        for inc in [IncludeSelf::Yes, IncludeSelf::No] {
            gradcheck(
                |v| v[0].scatter_reduce(1, &i, &v[1], r, inc),
                &[leaf64(&x, &[2, 4]), leaf64(&s, &[2, 4])],
                o(),
            )?;
            if r == ScatterReduce::Prod {
                gradcheck(
                    |v| v[0].scatter_reduce(1, &i, &v[1], r, inc),
                    &[leaf64(&x, &[2, 4]), leaf64(&s_zero, &[2, 4])],
                    o(),
                )?;
            }
            // in-place form through a non-leaf copy
            gradcheck(
                |v| {
                    let c = v[0].mul(1.0)?;
                    c.scatter_reduce_(1, &i, &v[1], r, inc)
                },
                &[leaf64(&x, &[2, 4]), leaf64(&s, &[2, 4])],
                o(),
            )?;
        }
    }
    Ok(())
}

#[test]
fn div_rounding_modes() -> R {
    let a = i64t(&[7, -7, 7, -7, 6, -1], &[6]);
    let b = i64t(&[2, 2, -2, -2, -3, 5], &[6]);
    let t = a.div_rounding(&b, RoundingMode::Trunc)?;
    assert_eq!(
        (t.dtype(), t.to_vec::<i64>()?),
        (DType::I64, vec![3, -3, -3, 3, -2, 0])
    );
    let f = a.div_rounding(&b, RoundingMode::Floor)?;
    assert_eq!(f.to_vec::<i64>()?, vec![3, -4, -4, 3, -2, -1]);
    let x = t64(&[7.5, -7.5, 1.0, -1.0], &[4]);
    let z = t64(&[2.0, 2.0, 0.0, 0.0], &[4]);
    let t = x.div_rounding(&z, RoundingMode::Trunc)?.to_vec::<f64>()?;
    assert_eq!(t, vec![3.0, -3.0, f64::INFINITY, f64::NEG_INFINITY]);
    let f = x.div_rounding(&z, RoundingMode::Floor)?.to_vec::<f64>()?;
    assert_eq!(f, vec![3.0, -4.0, f64::INFINITY, f64::NEG_INFINITY]);
    let t8 = Tensor::from_vec(vec![7i8, -7], &[2])?.div_rounding(2.0, RoundingMode::Trunc)?;
    assert_eq!(
        (t8.dtype(), t8.to_vec::<f32>()?),
        (DType::F32, vec![3.0, -3.0])
    );
    let e = a.div_rounding(0, RoundingMode::Trunc).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // zero gradient for both operands (DivBackward2)
    let (p, q) = (leaf64(&[1.5, -2.5], &[2]), leaf64(&[2.0, 2.0], &[2]));
    let y = p.div_rounding(&q, RoundingMode::Floor)?;
    assert!(y.requires_grad());
    y.sum()?.backward()?;
    assert_eq!(p.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.0]);
    assert_eq!(q.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.0]);
    Ok(())
}

#[test]
fn binary_cross_entropy_values_and_gradients() -> R {
    let p = t64(&[0.2, 0.9, 0.5, 0.0], &[2, 2]);
    let t = t64(&[1.0, 0.0, 0.25, 1.0], &[2, 2]);
    // recorded from F.binary_cross_entropy
    let none = p
        .binary_cross_entropy(&t, None, Reduction::None)?
        .to_vec::<f64>()?;
    let want = [
        1.6094379124341003,
        std::f64::consts::LN_10,
        std::f64::consts::LN_2,
        100.0,
    ];
    for (a, b) in none.iter().zip(want) {
        assert!((a - b).abs() < 1e-12, "{a} vs {b}");
    }
    let mean = p
        .binary_cross_entropy(&t, None, Reduction::Mean)?
        .item::<f64>()?;
    assert!((mean - 26.15129254649702).abs() < 1e-12);
    let w = t64(&[2.0, 0.5], &[2]);
    let sum = p
        .binary_cross_entropy(&t, Some(&w), Reduction::Sum)?
        .item::<f64>()?;
    assert!((sum - 55.75646273248511).abs() < 1e-12);
    let pin = [0.2, 0.9, 0.5, 0.35];
    // target leaves inside (0, 1): a perturbed 1.0 or 0.0 leaves the range PyTorch checks
    gradcheck(
        |v| v[0].binary_cross_entropy(&v[1], Some(&w), Reduction::Mean),
        &[
            leaf64(&pin, &[2, 2]),
            leaf64(&[0.9, 0.1, 0.25, 0.6], &[2, 2]),
        ],
        o(),
    )?;
    gradcheck(
        |v| v[0].t()?.binary_cross_entropy(&v[1], None, Reduction::None),
        &[
            leaf64(&pin, &[2, 2]),
            leaf64(&[0.9, 0.1, 0.25, 0.6], &[2, 2]),
        ],
        o(),
    )?;
    let e = t64(&[1.5], &[1]).binary_cross_entropy(&t64(&[1.0], &[1]), None, Reduction::Mean);
    assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // the first element out of [0, 1] in either tensor names it, the input on a tie (recorded
    // from F.binary_cross_entropy)
    for (x, t, which) in [
        ([0.5, 2.0], [1.5, 0.5], "target"),
        ([2.0, 0.5], [1.5, 0.5], "input"),
        ([0.5, 0.5], [0.5, f64::NAN], "target"),
        ([0.5, f64::NAN], [0.5, 0.5], "input"),
        ([0.5, 0.2], [0.7, -1.0], "target"),
    ] {
        let e = t64(&x, &[2])
            .binary_cross_entropy(&t64(&t, &[2]), None, Reduction::Mean)
            .unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        let want = format!("all elements of {which} should be between 0 and 1");
        assert!(e.to_string().contains(&want), "{x:?} {t:?}: {e}");
    }
    let e = p.binary_cross_entropy(&t.to_dtype(DType::F32)?, None, Reduction::Mean);
    assert_eq!(e.unwrap_err().kind(), ErrorKind::DTypeMismatch);
    Ok(())
}

#[test]
fn linear_matches_matmul_and_differentiates() -> R {
    let x = t64(&[1.0, 2.0, -1.0, 0.5, 0.0, 3.0], &[2, 3]);
    let w = t64(&[1.0, 0.0, 2.0, -1.0, 1.0, 0.5], &[2, 3]);
    let b = t64(&[0.25, -1.0], &[2]);
    let y = Tensor::linear(&x, &w, Some(&b))?;
    assert_eq!(y.to_vec::<f64>()?, vec![-0.75, -0.5, 6.75, 0.0]);
    assert_eq!(
        Tensor::linear(&x, &w.select(0, 0)?, None)?.to_vec::<f64>()?,
        vec![-1.0, 6.5]
    );
    gradcheck(
        |v| Tensor::linear(&v[0], &v[1], Some(&v[2])),
        &[
            leaf64(&[1.0, 2.0, -1.0, 0.5, 0.0, 3.0], &[2, 3]),
            leaf64(&[1.0, 0.0, 2.0, -1.0, 1.0, 0.5], &[2, 3]),
            leaf64(&[0.25, -1.0], &[2]),
        ],
        o(),
    )?;
    let e = Tensor::linear(&x, &t64(&[1.0; 4], &[2, 2]), None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    Ok(())
}

/// `Stability` and `IncludeSelf` default to PyTorch's `stable=False`, `include_self=True`; the
/// sort is stable either way (ties keep input order, also descending).
#[test]
fn sort_and_scatter_reduce_option_enums() -> R {
    assert_eq!(Stability::default(), Stability::Any);
    assert_eq!(IncludeSelf::default(), IncludeSelf::Yes);
    let x = t64(&[2.0, 1.0, 2.0, 1.0, 2.0], &[5]);
    for desc in [false, true] {
        let (va, ia) = x.sort(0, desc, Stability::Any)?;
        let (vs, is) = x.sort(0, desc, Stability::Stable)?;
        assert_eq!(va.to_vec::<f64>()?, vs.to_vec::<f64>()?);
        assert_eq!(ia.to_vec::<i64>()?, is.to_vec::<i64>()?);
        let want = if desc {
            [0, 2, 4, 1, 3]
        } else {
            [1, 3, 0, 2, 4]
        };
        assert_eq!(is.to_vec::<i64>()?, want.to_vec());
        assert_eq!(
            x.argsort(0, desc, Stability::default())?.to_vec::<i64>()?,
            want.to_vec()
        );
    }
    let s = t64(&[1.0, 1.0], &[2]);
    let i = i64t(&[0, 0], &[2]);
    let d = IncludeSelf::default();
    let y = x.scatter_reduce(0, &i, &s, ScatterReduce::Sum, d)?;
    assert_eq!(y.to_vec::<f64>()?[0], 4.0);
    let y = x.scatter_reduce(0usize, &i, &s, ScatterReduce::Sum, IncludeSelf::No)?;
    assert_eq!(y.to_vec::<f64>()?[0], 2.0);
    Ok(())
}
