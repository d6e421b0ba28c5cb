//! Reductions: values vs references on contiguous/transposed/stepped inputs, dtypes, NaN and
//! tie rules, error paths and gradchecks.

use crate::common::{R, rg, t64};
use tapegrad::autograd::gradcheck;
use tapegrad::{DType, ErrorKind, NormOrd, Tensor};

#[test]
fn mean_var_std() -> R {
    let x = t64(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]);
    assert_eq!(x.mean((), false, None)?.item::<f64>()?, 3.5);
    assert_eq!(
        x.t()?.mean(&[0], true, None)?.to_vec::<f64>()?,
        vec![2.0, 5.0]
    );
    assert_eq!(x.mean(&[0, -1], true, None)?.shape(), vec![1, 1]);
    let i = Tensor::from_vec(vec![1i32, 2], &[2])?;
    // PyTorch's kind: the dtype cannot hold a mean
    assert_eq!(
        i.mean((), false, None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        i.var((), 1.0, false).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(i.mean((), false, Some(DType::F64))?.item::<f64>()?, 1.5);
    let e = Tensor::zeros(&[0], DType::F32)?;
    assert!(e.mean((), false, None)?.item::<f32>()?.is_nan());
    let v = t64(&[1.0, 2.0, 3.0, 8.0], &[2, 2]);
    assert_eq!(v.var(&[1], 0.0, false)?.to_vec::<f64>()?, vec![0.25, 6.25]);
    assert_eq!(v.var(&[1], 1.0, true)?.to_vec::<f64>()?, vec![0.5, 12.5]);
    assert_eq!(v.std(&[0], 0.0, false)?.to_vec::<f64>()?, vec![1.0, 3.0]);
    assert!(
        t64(&[1.0], &[1])
            .var((), 1.0, false)?
            .item::<f64>()?
            .is_nan()
    );
    Ok(())
}

#[test]
fn half_accumulation() -> R {
    let h = Tensor::from_vec(vec![half::f16::from_f32(2048.0); 4], &[4])?;
    let s = h.mean((), false, None)?;
    assert_eq!(
        (s.dtype(), s.to_dtype(DType::F64)?.item::<f64>()?),
        (DType::F16, 2048.0)
    );
    let i = Tensor::from_vec(vec![2_000_000_000i32, 1_000_000_000], &[2])?;
    assert_eq!(
        i.cumsum(0, None)?.to_vec::<i64>()?,
        vec![2_000_000_000, 3_000_000_000]
    );
    assert_eq!(i.prod((), false)?.dtype(), DType::I64);
    Ok(())
}

#[test]
fn max_min_rules() -> R {
    let x = t64(&[1.0, 5.0, 5.0, f64::NAN, 2.0, 0.0], &[2, 3]);
    assert!(x.max()?.item::<f64>()?.is_nan());
    let (v, i) = x.max_dim(1, false)?;
    assert_eq!(v.to_vec::<f64>()?[0], 5.0);
    assert!(v.to_vec::<f64>()?[1].is_nan());
    assert_eq!(i.to_vec::<i64>()?, vec![1, 0]);
    let (v, i) = x.min_dim(0, true)?;
    assert_eq!(v.shape(), vec![1, 3]);
    assert_eq!(i.to_vec::<i64>()?, vec![1, 1, 1]);
    assert_eq!(x.amax(&[0], false)?.to_vec::<f64>()?[1..], [5.0, 5.0]);
    let it = Tensor::from_vec(vec![3i32, 7, 7, 2], &[2, 2])?;
    assert_eq!(it.amax(&[1], false)?.to_vec::<i32>()?, vec![7, 7]);
    assert_eq!(it.t()?.argmax(1, false)?.to_vec::<i64>()?, vec![1, 0]);
    assert_eq!(it.argmin(None, false)?.item::<i64>()?, 3);
    assert_eq!(it.argmax(None, true)?.shape(), vec![1, 1]);
    let e = Tensor::zeros(&[0, 3], DType::F32)?;
    assert!(e.max().is_err());
    assert_eq!(
        e.max_dim(0, false).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    assert_eq!(
        x.max_dim(2, false).unwrap_err().kind(),
        ErrorKind::DimOutOfRange
    );
    assert_eq!(
        x.argmax(5, false).unwrap_err().kind(),
        ErrorKind::DimOutOfRange
    );
    Ok(())
}

#[test]
fn tie_gradients() -> R {
    let x = t64(&[1.0, 3.0, 3.0, 0.0], &[4]).requires_grad_(true)?;
    x.max()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.5, 0.5, 0.0]);
    let x = t64(&[1.0, 3.0, 3.0, 0.0], &[2, 2]).requires_grad_(true)?;
    x.max_dim(1, false)?.0.sum()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.0, 1.0, 1.0, 0.0]);
    let x = t64(&[2.0, 0.0, 3.0], &[3]).requires_grad_(true)?;
    x.prod((), false)?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.0, 6.0, 0.0]);
    Ok(())
}

#[test]
fn prod_cumsum_cumprod_logical() -> R {
    let big = t64(
        &(0..12).map(|v| v as f64 - 3.0).collect::<Vec<_>>(),
        &[3, 4],
    );
    let s = big.slice(1, Some(0), Some(4), 2)?; // [3,2] stepped
    assert_eq!(
        s.prod(&[0], false)?.to_vec::<f64>()?,
        vec![-3.0 * 1.0 * 5.0, -3.0 * 7.0]
    );
    assert_eq!(
        s.cumsum(0, None)?.to_vec::<f64>()?,
        vec![-3.0, -1.0, -2.0, 2.0, 3.0, 9.0]
    );
    assert_eq!(
        big.t()?.cumprod(1, None)?.to_vec::<f64>()?[..3],
        [-3.0, -3.0, -15.0]
    );
    let b = Tensor::from_vec(vec![true, false, true, true], &[2, 2])?;
    assert_eq!(b.all(&[1], false)?.to_vec::<bool>()?, vec![false, true]);
    assert_eq!(b.any(&[0], true)?.to_vec::<bool>()?, vec![true, true]);
    assert!(
        Tensor::zeros(&[0], DType::F32)?
            .all((), false)?
            .item::<bool>()?
    );
    assert_eq!(
        big.cumsum(-3, None).unwrap_err().kind(),
        ErrorKind::DimOutOfRange
    );
    Ok(())
}

#[test]
fn logsumexp_norm() -> R {
    let x = t64(&[1000.0, 1000.0, -1000.0, -999.0], &[2, 2]);
    let r = x.logsumexp(&[1], false)?.to_vec::<f64>()?;
    assert!((r[0] - (1000.0 + 2f64.ln())).abs() < 1e-9);
    assert!((r[1] - (-999.0 + (1.0 + (-1f64).exp()).ln())).abs() < 1e-9);
    let y = t64(&[3.0, -4.0, 0.0, 1.0], &[2, 2]);
    assert_eq!(y.norm(NormOrd::L2, (), false)?.item::<f64>()?, 26f64.sqrt());
    assert_eq!(
        y.norm(NormOrd::L1, &[1], false)?.to_vec::<f64>()?,
        vec![7.0, 1.0]
    );
    assert_eq!(
        y.t()?.norm(NormOrd::Inf, &[0], true)?.to_vec::<f64>()?,
        vec![4.0, 1.0]
    );
    assert_eq!(y.norm(NormOrd::NegInf, (), false)?.item::<f64>()?, 0.0);
    Ok(())
}

#[test]
fn gradchecks() -> R {
    let o = Default::default;
    gradcheck(|x| x[0].mean(&[1], false, None), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].t()?.mean((), false, None), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].var(&[0], 1.0, true), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].std(&[1], 0.0, false), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].prod(&[1], false), &[rg(&[3, 4])], o())?;
    gradcheck(
        |x| x[0].prod((), false),
        &[t64(&[1.5, 0.0, 2.0, -1.0], &[4]).requires_grad_(true)?],
        o(),
    )?;
    gradcheck(|x| x[0].max(), &[rg(&[3, 4])], o())?;
    gradcheck(|x| Ok(x[0].min_dim(0, true)?.0), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].amax(&[1], false), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].amin(&[0, 1], true), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].logsumexp(&[1], true), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].norm(NormOrd::L2, &[1], false), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].norm(NormOrd::L1, (), false), &[rg(&[3, 4])], o())?;
    gradcheck(
        |x| x[0].norm(NormOrd::Inf, &[0], false),
        &[rg(&[3, 4])],
        o(),
    )?;
    gradcheck(|x| x[0].cumsum(1, None), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].t()?.cumsum(0, None), &[rg(&[3, 4])], o())?;
    gradcheck(|x| x[0].cumprod(1, None), &[rg(&[3, 4])], o())?;
    gradcheck(
        |x| x[0].cumprod(0, None),
        &[t64(&[1.5, 0.0, 2.0, -1.0], &[4]).requires_grad_(true)?],
        o(),
    )?;
    Ok(())
}

#[test]
fn sum_parallel_path() -> R {
    let n = 1 << 21;
    let x = Tensor::ones(&[n], DType::F32)?;
    assert_eq!(x.sum()?.item::<f32>()?, n as f32);
    Ok(())
}

#[test]
fn cumsum_f16_accumulates_in_f32() -> R {
    let h = Tensor::from_vec(
        [2048.0f32, 1.0, 1.0, 1.0, 1.0]
            .iter()
            .map(|&v| half::f16::from_f32(v))
            .collect(),
        &[5],
    )?;
    assert_eq!(
        h.cumsum(0, None)?.to_dtype(DType::F64)?.to_vec::<f64>()?,
        vec![2048.0, 2048.0, 2050.0, 2052.0, 2052.0]
    );
    Ok(())
}

/// Norms of any order, nansum and count_nonzero (issue 21), against PyTorch's values.
#[test]
fn general_norms_nansum_count_nonzero() -> R {
    let x = t64(&[3.0, -4.0, 0.0, 1.0], &[2, 2]);
    let n = |p: f64| x.norm(NormOrd::P(p), (), false)?.item::<f64>();
    assert_eq!(n(0.0)?, 3.0);
    assert!((n(3.0)? - 92f64.powf(1.0 / 3.0)).abs() < 1e-12);
    assert_eq!(n(-1.0)?, 0.0); // a zero element: 1 / inf
    assert_eq!(
        x.norm(NormOrd::P(2.0), &[1], false)?.to_vec::<f64>()?,
        vec![5.0, 1.0]
    );
    // p < 1: the gradient is 0 at zeros (PyTorch's masking), not NaN
    let l = x.requires_grad_(true)?;
    l.norm(NormOrd::P(0.5), (), false)?.backward()?;
    let g = l.grad().unwrap().to_vec::<f64>()?;
    assert!(g.iter().all(|v| v.is_finite()) && g[2] == 0.0);

    let y = t64(&[1.0, f64::NAN, 2.0, 0.0], &[2, 2]).requires_grad_(true)?;
    let s = y.nansum(&[1], false, None)?;
    assert_eq!(s.to_vec::<f64>()?, vec![1.0, 2.0]);
    s.sum()?.backward()?;
    assert_eq!(y.grad().unwrap().to_vec::<f64>()?, vec![1.0, 0.0, 1.0, 1.0]);
    let i = Tensor::from_vec(vec![1i32, 0, 2, 0], &[2, 2])?;
    assert_eq!(i.nansum((), false, None)?.dtype(), DType::I64);
    assert_eq!(
        i.nansum(&[0], true, Some(DType::F64))?.to_vec::<f64>()?,
        vec![3.0, 0.0]
    );
    assert_eq!(i.count_nonzero(&[0])?.to_vec::<i64>()?, vec![2, 0]);
    assert_eq!(i.count_nonzero(())?.item::<i64>()?, 2);
    assert_eq!(
        i.count_nonzero(&[5]).unwrap_err().kind(),
        ErrorKind::DimOutOfRange
    );
    Ok(())
}

// ---- issue 21: complex prod / cumprod and PyTorch's prod / cumprod backward rules
// (expected values recorded from PyTorch 2.15 on the CPU)

fn c128(v: &[(f64, f64)], shape: &[usize]) -> Tensor {
    let v = v
        .iter()
        .map(|&(a, b)| tapegrad::dtype::C128::new(a, b))
        .collect();
    Tensor::from_vec(v, shape).unwrap()
}

#[test]
fn complex_prod_and_cumprod_values() -> R {
    use tapegrad::dtype::C64;
    let inf = f32::INFINITY;
    // the naive complex product from 1: 1 * (inf + 0i) = inf + nan i
    let p = Tensor::from_vec(vec![C64::new(inf, 0.0)], &[1])?.prod((), false)?;
    let p = p.item::<C64>()?;
    assert!(p.re == inf && p.im.is_nan());
    let p = Tensor::from_vec(vec![C64::new(inf, 0.0), C64::new(2.0, 1.0)], &[2])?;
    let p = p.prod((), false)?.item::<C64>()?;
    assert!(p.re.is_nan() && p.im.is_nan());
    let c = Tensor::from_vec(vec![C64::new(1.0, inf), C64::new(0.0, 1.0)], &[2])?;
    let c = c.cumprod(0, None)?.to_vec::<C64>()?;
    assert!(c[0].re.is_nan() && c[0].im == inf);
    assert!(c[1].re.is_nan() && c[1].im.is_nan());
    // f16 rounds at every step: 65504 * -65504 is already -inf
    let h = Tensor::from_vec(vec![65504.0f32, -65504.0, 1.0 / 65536.0, 0.5], &[4])?
        .to_dtype(DType::F16)?;
    assert_eq!(
        h.prod((), false)?.to_dtype(DType::F32)?.item::<f32>()?,
        f32::NEG_INFINITY
    );
    Ok(())
}

#[test]
fn complex_prod_gradient() -> R {
    use tapegrad::dtype::C128;
    let x = c128(
        &[
            (0.5, 1.0),
            (2.0, -1.0),
            (-1.5, 0.25),
            (1.0, 1.0),
            (0.0, 2.0),
            (3.0, -0.5),
        ],
        &[2, 3],
    )
    .requires_grad_(true)?;
    let p = x.prod(&[1], false)?;
    let got = p.to_vec::<C128>()?;
    assert_eq!(got, vec![C128::new(-3.375, -1.75), C128::new(-5.0, 7.0)]);
    p.backward_with(
        Some(&c128(&[(1.0, 0.5), (-0.5, 2.0)], &[2])),
        tapegrad::autograd::BackwardOptions::default(),
    )?;
    let want = [
        (-1.75, -3.375),
        (-1.6875, 0.875),
        (2.75, -0.5),
        (11.5, 5.0),
        (3.25, 8.25),
        (5.0, -3.0),
    ];
    for (g, w) in x.grad().unwrap().to_vec::<C128>()?.iter().zip(want) {
        assert!(
            (g.re - w.0).abs() < 1e-12 && (g.im - w.1).abs() < 1e-12,
            "{g} vs {w:?}"
        );
    }
    Ok(())
}

#[test]
fn prod_and_cumprod_backward_with_zeros() -> R {
    // prod(): two zeros and no graph being built -> zeros (even beside a NaN)
    let x = t64(&[0.5, 2.0, 0.0, 0.0, f64::NAN, 3.0], &[2, 3]).requires_grad_(true)?;
    x.prod((), false)?.backward_with(
        Some(&t64(&[2.0], &[])),
        tapegrad::autograd::BackwardOptions::default(),
    )?;
    assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.0; 6]);
    // prod(dim) with a zero somewhere: the exclusive-cumprod rule for every row
    let x = t64(&[0.5, 2.0, 0.0, 1.5, f64::INFINITY, 3.0], &[2, 3]).requires_grad_(true)?;
    x.prod(&[1], false)?.backward_with(
        Some(&t64(&[1.0, 1.0], &[2])),
        tapegrad::autograd::BackwardOptions::default(),
    )?;
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>()?,
        vec![0.0, 0.0, 1.0, f64::INFINITY, 4.5, f64::INFINITY]
    );
    // no zero: g * out / x (inf / inf is NaN, as PyTorch)
    let x = t64(&[0.5, 2.0, 4.0, 1.5, f64::INFINITY, 3.0], &[2, 3]).requires_grad_(true)?;
    x.prod(&[1], false)?.backward_with(
        Some(&t64(&[1.0, 1.0], &[2])),
        tapegrad::autograd::BackwardOptions::default(),
    )?;
    let g = x.grad().unwrap().to_vec::<f64>()?;
    assert_eq!(&g[..3], &[8.0, 2.0, 1.0]);
    assert!(g[3] == f64::INFINITY && g[4].is_nan() && g[5] == f64::INFINITY);
    // cumprod: the first-zero rule
    let x = t64(&[0.5, 2.0, 0.0, -1.5, 1.0, 0.0, 3.0, 0.0], &[2, 4]).requires_grad_(true)?;
    let ct = t64(&[1.0, -0.5, 2.0, 0.25, 0.5, 1.5, -1.0, 2.0], &[2, 4]);
    x.cumprod(1, None)?
        .backward_with(Some(&ct), tapegrad::autograd::BackwardOptions::default())?;
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>()?,
        vec![0.0, -0.25, 1.625, 0.0, 0.5, -1.5, 0.0, 0.0]
    );
    Ok(())
}

#[test]
fn prod_dtype_refuses_a_non_differentiable_result() -> R {
    let x = t64(&[1.5, 2.0], &[2]);
    assert_eq!(x.prod_dtype((), false, DType::I64)?.item::<i64>()?, 2);
    let x = x.requires_grad_(true)?;
    assert_eq!(
        x.prod_dtype((), false, DType::I64).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(x.prod_dtype((), false, DType::F32)?.item::<f32>()?, 3.0);
    Ok(())
}

// --- issue 29 fast paths (reduce29): long single rows split over the team, value-only
// extrema, one-pass dot, parallel fills and ramps (and last-dim sums as a reference) ---

/// The sequential first-wins extremum scan the kernels must equal bit for bit.
fn first_extremum(x: &[f32], max: bool) -> f32 {
    let mut m = x[0];
    for &v in x {
        if m.is_nan() {
            break;
        }
        if v.is_nan() || (max && v > m) || (!max && v < m) {
            m = v;
        }
    }
    m
}

#[test]
fn long_row_extrema_equal_the_sequential_scan() -> R {
    let n = (1usize << 18) + 77;
    let base: Vec<f32> = (0..n).map(|i| -1.0 - (i % 1000) as f32).collect();
    let mut cases: Vec<Vec<f32>> = vec![base.clone()];
    // ties of zeros of both signs: the first one's sign wins
    let mut z = base.clone();
    z[1000] = -0.0;
    z[200_000] = 0.0;
    cases.push(z);
    let mut z = base.clone();
    z[5] = 0.0;
    z[n - 1] = -0.0;
    cases.push(z);
    // NaNs of two payloads: the first one's bits win
    let mut q = base.clone();
    q[150_000] = f32::from_bits(0x7fc0_0001);
    q[250_000] = f32::from_bits(0x7fc0_0002);
    cases.push(q);
    // the extremum in the last part, and a unique one in the first
    let mut e = base.clone();
    e[n - 3] = 7.0;
    e[2] = -5000.0;
    cases.push(e);
    for x in cases {
        let t = Tensor::from_slice(&x, &[n])?;
        let (mx, mn) = (first_extremum(&x, true), first_extremum(&x, false));
        assert_eq!(t.max()?.item::<f32>()?.to_bits(), mx.to_bits());
        assert_eq!(t.min()?.item::<f32>()?.to_bits(), mn.to_bits());
        assert_eq!(t.amax((), false)?.item::<f32>()?.to_bits(), mx.to_bits());
        assert_eq!(t.amin(&[0], false)?.item::<f32>()?.to_bits(), mn.to_bits());
        let am = t.argmax(None, false)?.item::<i64>()? as usize;
        assert_eq!(x[am].to_bits(), mx.to_bits());
    }
    Ok(())
}

#[test]
fn value_only_extrema_of_rows_and_columns() -> R {
    let (r, c) = (300usize, 1024usize);
    let mut x: Vec<f32> = (0..r * c)
        .map(|i| ((i * 7919) % 1013) as f32 * 0.5 - 300.0)
        .collect();
    x[3 * c + 17] = f32::NAN; // column 17, row 3
    for i in 0..r {
        x[i * c + 40] = if i % 2 == 0 { -0.0 } else { 0.0 }; // column 40 and row ties
        x[i * c + 41] = -(i as f32) - 1.0;
    }
    x[250 * c + 41] = 0.0;
    let t = Tensor::from_slice(&x, &[r, c])?;
    for max in [true, false] {
        let cols = if max {
            t.amax(&[0], false)?
        } else {
            t.amin(&[0], false)?
        };
        let rows = if max {
            t.amax(&[1], false)?
        } else {
            t.amin(&[1], false)?
        };
        let got_c = cols.to_vec::<f32>()?;
        let got_r = rows.to_vec::<f32>()?;
        for j in 0..c {
            let col: Vec<f32> = (0..r).map(|i| x[i * c + j]).collect();
            assert_eq!(
                got_c[j].to_bits(),
                first_extremum(&col, max).to_bits(),
                "col {j}"
            );
        }
        for i in 0..r {
            let want = first_extremum(&x[i * c..(i + 1) * c], max);
            assert_eq!(got_r[i].to_bits(), want.to_bits(), "row {i}");
        }
    }
    Ok(())
}

#[test]
fn last_dim_sums_and_dot_of_large_tensors() -> R {
    let (m, n) = (70usize, 5003usize);
    let x: Vec<f32> = (0..m * n)
        .map(|i| ((i % 97) as f32 - 48.0) * 0.01)
        .collect();
    let t = Tensor::from_slice(&x, &[m, n])?;
    let s = t.sum_dims(&[-1], false)?.to_vec::<f32>()?;
    let mean = t.mean(&[1], true, None)?;
    assert_eq!(mean.shape(), vec![m, 1]);
    let mean = mean.to_vec::<f32>()?;
    for i in 0..m {
        let want: f64 = x[i * n..(i + 1) * n].iter().map(|&v| v as f64).sum();
        assert!(
            (s[i] as f64 - want).abs() <= 1e-3 * (1.0 + want.abs()),
            "row {i}"
        );
        assert!(
            (mean[i] as f64 - want / n as f64).abs() <= 1e-6 * (1.0 + want.abs()),
            "row {i}"
        );
    }
    // a transposed view sums through the strided walk, to the same values up to rounding
    let tt = t.t()?.contiguous()?.t()?;
    let s2 = tt.sum_dims(&[1], false)?.to_vec::<f32>()?;
    for i in 0..m {
        assert!((s2[i] - s[i]).abs() <= 1e-3 * (1.0 + s[i].abs()), "row {i}");
    }
    let a = Tensor::randn(&[(1usize << 20) + 5], DType::F32)?;
    let b = Tensor::randn(&[(1usize << 20) + 5], DType::F32)?;
    let want = a.mul(&b)?.sum()?.item::<f32>()?;
    assert_eq!(a.dot(&b)?.item::<f32>()?.to_bits(), want.to_bits());
    let a64 = a.to_dtype(DType::F64)?;
    let want = a64.mul(&a64)?.sum()?.item::<f64>()?;
    assert_eq!(a64.dot(&a64)?.item::<f64>()?.to_bits(), want.to_bits());
    Ok(())
}

#[test]
fn large_fills_and_ramps() -> R {
    let n = (1usize << 17) + 9;
    assert!(
        Tensor::zeros(&[n], DType::F32)?
            .to_vec::<f32>()?
            .iter()
            .all(|v| v.to_bits() == 0)
    );
    assert!(
        Tensor::ones(&[n], DType::I64)?
            .to_vec::<i64>()?
            .iter()
            .all(|&v| v == 1)
    );
    let f = Tensor::full(&[3, n], -0.0, DType::F64)?.to_vec::<f64>()?;
    assert!(f.iter().all(|v| v.to_bits() == (-0.0f64).to_bits()));
    let o = Tensor::full(&[n], 3.5, DType::F32)?;
    o.zero_()?;
    assert!(o.to_vec::<f32>()?.iter().all(|&v| v == 0.0));
    let e = Tensor::eye(400, DType::F32)?.to_vec::<f32>()?;
    for (k, &v) in e.iter().enumerate() {
        assert_eq!(v, if k % 401 == 0 { 1.0 } else { 0.0 });
    }
    let a = Tensor::arange_dtype(0.5, n as f64, 0.25, DType::F32)?.to_vec::<f32>()?;
    assert_eq!(a.len(), ((n as f64 - 0.5) / 0.25).ceil() as usize);
    for (i, &v) in a.iter().enumerate() {
        assert_eq!(v, (0.5 + 0.25 * i as f64) as f32);
    }
    // (f32 linspace as torch's kernel: in f32, one fused multiply-add per element)
    let l = Tensor::linspace(-1.0, 3.0, n, DType::F32)?.to_vec::<f32>()?;
    let step = 4.0f32 / (n - 1) as f32;
    for (i, &v) in l.iter().enumerate() {
        let want = if i < n / 2 {
            step.mul_add(i as f32, -1.0)
        } else {
            (-step).mul_add((n - 1 - i) as f32, 3.0)
        };
        assert_eq!(v.to_bits(), want.to_bits(), "{i}");
    }
    let l = Tensor::linspace(-1.0, 3.0, n, DType::F64)?.to_vec::<f64>()?;
    let step = 4.0f64 / (n - 1) as f64;
    for (i, &v) in l.iter().enumerate() {
        let want = if i < n / 2 {
            step.mul_add(i as f64, -1.0)
        } else {
            (-step).mul_add((n - 1 - i) as f64, 3.0)
        };
        assert_eq!(v.to_bits(), want.to_bits(), "{i}");
    }
    // torch 2.15: linspace(0.1, 7.3, 7) in f32 and f64, and one step keeps -0.0
    assert_eq!(
        Tensor::linspace(0.1, 7.3, 7, DType::F32)?.to_vec::<f32>()?,
        vec![0.1, 1.3000001, 2.5, 3.7, 4.9, 6.1000004, 7.3]
    );
    assert_eq!(
        Tensor::linspace(-0.0, 5.0, 1, DType::F32)?.to_vec::<f32>()?[0].to_bits(),
        (-0.0f32).to_bits()
    );
    assert_eq!(
        Tensor::linspace(2.0, 5.0, 1, DType::F32)?.to_vec::<f32>()?,
        vec![2.0]
    );
    assert_eq!(
        Tensor::arange_dtype(0, 5, 2, DType::I32)?.to_vec::<i32>()?,
        vec![0, 2, 4]
    );
    Ok(())
}
