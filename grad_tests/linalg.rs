//! Linear algebra: mm/bmm/matmul/dot/outer/addmm values on contiguous, transposed and
//! stepped-slice inputs, dtypes, error paths and gradchecks.

use crate::common::{R, assert_close, f64s, rg, t64};
use tapegrad::autograd::gradcheck;
use tapegrad::{DType, ErrorKind, Tensor};

fn naive_mm(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
    let mut o = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            for p in 0..k {
                o[i * n + j] += a[i * k + p] * b[p * n + j];
            }
        }
    }
    o
}

#[test]
fn mm_matches_reference_across_layouts_and_dtypes() -> R {
    for dt in [
        DType::F32,
        DType::F64,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
    ] {
        let a = Tensor::arange(0, 12, 1)?.to_dtype(dt)?.view(&[3, 4])?;
        let b = Tensor::arange(0, 20, 1)?.to_dtype(dt)?.view(&[4, 5])?;
        let r = a.mm(&b)?;
        assert_eq!(r.dtype(), dt);
        let refv = naive_mm(&f64s(&a), &f64s(&b), 3, 4, 5);
        assert_close(
            &f64s(&r),
            &refv,
            if matches!(dt, DType::F16 | DType::BF16) {
                1e-2
            } else {
                1e-12
            },
        );
    }
    // transposed and stepped slices
    let big = Tensor::randn(&[8, 9], DType::F64)?;
    let a = big
        .slice(0, Some(0), Some(8), 2)?
        .slice(1, Some(1), Some(9), 3)?; // [4, 3]
    let b = Tensor::randn(&[5, 3], DType::F64)?.t()?; // [3, 5]
    let r = a.mm(&b)?;
    assert_close(
        &r.to_vec::<f64>()?,
        &naive_mm(&a.to_vec()?, &b.to_vec()?, 4, 3, 5),
        1e-12,
    );
    // large enough for the parallel path
    let a = Tensor::randn(&[130, 120], DType::F32)?;
    let b = Tensor::randn(&[120, 110], DType::F32)?;
    assert_close(
        &f64s(&a.mm(&b)?),
        &naive_mm(&f64s(&a), &f64s(&b), 130, 120, 110),
        1e-4,
    );
    Ok(())
}

#[test]
fn complex_mm() -> R {
    use num_complex::Complex;
    let a = Tensor::from_vec(
        vec![Complex::new(1.0f64, 1.0), Complex::new(0.0, 2.0)],
        &[1, 2],
    )?;
    let b = Tensor::from_vec(
        vec![Complex::new(3.0f64, 0.0), Complex::new(1.0, -1.0)],
        &[2, 1],
    )?;
    let r = a.mm(&b)?.to_vec::<Complex<f64>>()?;
    assert_eq!(r, vec![Complex::new(5.0, 5.0)]);
    let r = a.to_dtype(DType::C64)?.mm(&b.to_dtype(DType::C64)?)?;
    assert_eq!(r.dtype(), DType::C64);
    Ok(())
}

#[test]
fn matmul_shape_rules() -> R {
    let v = t64(&[1.0, 2.0, 3.0], &[3]);
    let d = v.matmul(&v)?;
    assert_eq!((d.shape(), d.item::<f64>()?), (vec![], 14.0));
    let m = Tensor::randn(&[3, 2], DType::F64)?;
    assert_eq!(v.matmul(&m)?.shape(), vec![2]);
    assert_eq!(m.t()?.matmul(&v)?.shape(), vec![2]);
    let a = Tensor::randn(&[2, 1, 4, 3], DType::F64)?;
    let b = Tensor::randn(&[5, 3, 2], DType::F64)?;
    let r = a.matmul(&b)?;
    assert_eq!(r.shape(), vec![2, 5, 4, 2]);
    let av = a.to_vec::<f64>()?;
    let bv = b.to_vec::<f64>()?;
    let rv = r.to_vec::<f64>()?;
    for i in 0..2 {
        for j in 0..5 {
            let refv = naive_mm(&av[i * 12..i * 12 + 12], &bv[j * 6..j * 6 + 6], 4, 3, 2);
            assert_close(&rv[(i * 5 + j) * 8..(i * 5 + j) * 8 + 8], &refv, 1e-12);
        }
    }
    assert_eq!(a.matmul(&v)?.shape(), vec![2, 1, 4]);
    assert_eq!(v.matmul(&b)?.shape(), vec![5, 2]);
    assert_eq!(a.matmul(&m)?.shape(), vec![2, 1, 4, 2]);
    Ok(())
}

#[test]
fn errors() -> R {
    let a = Tensor::ones(&[2, 3], DType::F32)?;
    let e = a.mm(&a).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert!(
        e.to_string()
            .contains("mat1 and mat2 shapes cannot be multiplied (2x3 and 2x3)")
    );
    let e = a.mm(&Tensor::ones(&[3, 2], DType::F64)?).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert!(e.to_string().contains("float != double"), "{e}");
    let e = a.matmul(&Tensor::ones(&[4], DType::F32)?).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = Tensor::ones(&[3], DType::F32)?
        .matmul(&Tensor::ones(&[4], DType::F32)?)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = Tensor::ones(&[2, 2, 3], DType::F32)?
        .matmul(&Tensor::ones(&[3, 3, 2], DType::F32)?)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = Tensor::ones(&[3], DType::F32)?
        .dot(&Tensor::ones(&[3], DType::F64)?)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    Ok(())
}

#[test]
fn addmm_outer_dot_values() -> R {
    let bias = t64(&[10.0, -10.0], &[2]);
    let a = t64(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let r = bias.addmm(&a, &a, 0.5, 2.0)?;
    assert_eq!(r.to_vec::<f64>()?, vec![19.0, 15.0, 35.0, 39.0]);
    let nan = t64(&[f64::NAN; 4], &[2, 2]);
    assert_eq!(
        nan.addmm(&a, &a, 0.0, 1.0)?.to_vec::<f64>()?,
        vec![7.0, 10.0, 15.0, 22.0]
    );
    let u = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    let v = Tensor::from_vec(vec![0.5f32, -1.0], &[2])?;
    let o = u.outer(&v)?;
    assert_eq!(
        (o.dtype(), o.to_vec::<f32>()?),
        (DType::F32, vec![0.5, -1.0, 1.0, -2.0, 1.5, -3.0])
    );
    let d = u.dot(&u)?;
    assert_eq!((d.dtype(), d.item::<i64>()?), (DType::I64, 14));
    Ok(())
}

#[test]
fn gradchecks() -> R {
    let o = Default::default;
    gradcheck(|x| x[0].mm(&x[1]), &[rg(&[3, 4]), rg(&[4, 2])], o())?;
    gradcheck(|x| x[0].t()?.mm(&x[1]), &[rg(&[4, 3]), rg(&[4, 2])], o())?;
    gradcheck(|x| x[0].bmm(&x[1]), &[rg(&[2, 3, 4]), rg(&[2, 4, 2])], o())?;
    gradcheck(|x| x[0].dot(&x[1]), &[rg(&[5]), rg(&[5])], o())?;
    gradcheck(
        |x| x[0].matmul(&x[1]),
        &[rg(&[2, 1, 3, 4]), rg(&[3, 4, 2])],
        o(),
    )?;
    gradcheck(|x| x[0].matmul(&x[1]), &[rg(&[4]), rg(&[2, 4, 3])], o())?;
    gradcheck(|x| x[0].matmul(&x[1]), &[rg(&[2, 3, 4]), rg(&[4])], o())?;
    gradcheck(
        |x| x[0].addmm(&x[1], &x[2], 0.5, 2.0),
        &[rg(&[3]), rg(&[2, 4]), rg(&[4, 3])],
        o(),
    )?;
    gradcheck(|x| x[0].outer(&x[1]), &[rg(&[3]), rg(&[2])], o())?;
    Ok(())
}

#[test]
fn mm_backward_names() -> R {
    let a = rg(&[2, 2]);
    assert_eq!(a.mm(&a)?.grad_fn().unwrap().name(), "MmBackward0");
    let b = rg(&[1, 2, 2]);
    assert_eq!(b.bmm(&b)?.grad_fn().unwrap().name(), "BmmBackward0");
    let v = rg(&[2]);
    assert_eq!(v.dot(&v)?.grad_fn().unwrap().name(), "DotBackward0");
    Ok(())
}

#[test]
fn add_out_writes_in_place() -> R {
    let a = Tensor::ones(&[2, 3], DType::F32)?;
    let b = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    let out = Tensor::zeros(&[2, 3], DType::F32)?;
    let v0 = out.version();
    a.add_out(&b, &out)?;
    assert_eq!(out.to_vec::<f32>()?, vec![2.0, 3.0, 4.0, 2.0, 3.0, 4.0]);
    assert!(out.version() > v0);
    assert!(a.add_out(&b, &Tensor::zeros(&[3], DType::F32)?).is_err());
    Ok(())
}

// ---- issue 21 (sweep): matrix @ vector as PyTorch's `mv`, MKL's complex rounding (values
// recorded from PyTorch 2.15)

#[test]
fn matmul_matrix_vector_is_mv_with_fresh_gradients() -> R {
    let a = t64(&[0.0, 2.5, -1.0, 1.0, 2.0, 3.0], &[2, 3]).requires_grad_(true)?;
    let b = t64(&[1.0, -2.0, 0.5], &[3]).requires_grad_(true)?;
    let y = a.matmul(&b)?;
    assert_eq!(y.grad_fn().unwrap().name(), "MvBackward0");
    let gs = tapegrad::autograd::grad(
        &[y],
        &[a.clone(), b.clone()],
        &[Some(t64(&[1.0, -1.0], &[2]))],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    let (ga, gb) = (gs[0].clone().unwrap(), gs[1].clone().unwrap());
    // PyTorch: `g.ger(b)` and `a.t().mv(g)`, neither a view (was a squeezed column)
    assert!(!ga.is_view() && !gb.is_view());
    assert_eq!(ga.strides(), vec![3, 1]);
    assert_eq!(ga.to_vec::<f64>()?, vec![1.0, -2.0, 0.5, -1.0, 2.0, -0.5]);
    assert_eq!(gb.to_vec::<f64>()?, vec![-1.0, 0.5, -4.0]);
    tapegrad::autograd::gradgradcheck(|v| v[0].matmul(&v[1])?.sum(), &[a, b], Default::default())?;
    Ok(())
}

#[test]
fn complex_matmul_rounds_each_product_as_mkl() -> R {
    use tapegrad::dtype::C128;
    // conj(a) row [(-0 - i), (1e30 + 1e30 i), 0] @ g column: the two 1e30 * 0.6875 products
    // cancel exactly (a fused multiply-add left 2^44 in the real part)
    let a = Tensor::from_vec(
        vec![
            C128::new(-0.0, -1.0),
            C128::new(1e30, 1e30),
            C128::new(0.0, -0.0),
        ],
        &[1, 3],
    )?;
    let g = Tensor::from_vec(
        vec![
            C128::new(0.0, -0.1875),
            C128::new(0.6875, 0.6875),
            C128::new(0.5625, -1.4375),
        ],
        &[3, 1],
    )?;
    for (x, y) in [
        (a.clone(), g.clone()),
        (a.t()?.contiguous()?.t()?, g.clone()),
    ] {
        let r = x.mm(&y)?.to_vec::<C128>()?;
        assert_eq!(r, vec![C128::new(-0.1875, 1.375e30)]);
    }
    // BLAS's `alpha = 1 + 0i` scaling: an infinite part makes both parts NaN
    let inf = Tensor::from_vec(vec![C128::new(f64::INFINITY, 0.0)], &[1, 1])?;
    let r = inf.mm(&Tensor::from_vec(vec![C128::new(2.3125, 0.0)], &[1, 1])?)?;
    let r = r.to_vec::<C128>()?;
    assert!(r[0].re.is_nan() && r[0].im.is_nan(), "{r:?}");
    Ok(())
}
