//! The packed f32/f64 matrix-multiply kernel (issue 4) against a naive reference: every size
//! 1..=70 along one dimension, primes and cache-block boundaries, k = 0, m or n = 1, transposed,
//! strided and broadcast (zero-stride) operands, the multithreaded split along m and along n,
//! bmm/matmul batches, non-finite values, and the PyTorch gradient layouts of `mm` backward
//! for column-major inputs (as in `linear`).

use crate::common::R;
use tapegrad::autograd::{GradcheckOptions, gradcheck};
use tapegrad::nn::{Forward, Linear};
use tapegrad::{DType, Tensor};

/// Small integers, so every product sum is exact in f32 and f64 alike.
fn val(i: usize, salt: usize) -> f64 {
    ((i * 7 + salt * 3 + 1) % 13) as f64 - 6.0
}

#[derive(Clone, Copy, Debug)]
enum Form {
    Contiguous,
    Transposed,
    Strided,
    Broadcast,
}
const FORMS: [Form; 4] = [
    Form::Contiguous,
    Form::Transposed,
    Form::Strided,
    Form::Broadcast,
];

/// A `[r, c]` operand of dtype `dt` laid out as `form`.
fn operand(r: usize, c: usize, form: Form, dt: DType, salt: usize) -> Tensor {
    let t = match form {
        Form::Contiguous => {
            Tensor::from_vec((0..r * c).map(|i| val(i, salt)).collect(), &[r, c]).unwrap()
        }
        Form::Transposed => Tensor::from_vec((0..r * c).map(|i| val(i, salt)).collect(), &[c, r])
            .unwrap()
            .t()
            .unwrap(),
        Form::Strided => {
            // rows 2c+3 apart, columns 2 apart, offset 5
            let (rs, cs, off) = (2 * c + 3, 2, 5);
            let len = off + r.saturating_sub(1) * rs + c.saturating_sub(1) * cs + 1;
            let base = Tensor::from_vec((0..len).map(|i| val(i, salt)).collect(), &[len]).unwrap();
            base.as_strided(
                &[r as i64, c as i64],
                &[rs as i64, cs as i64],
                Some(off as i64),
            )
            .unwrap()
        }
        Form::Broadcast => Tensor::from_vec((0..c).map(|i| val(i, salt)).collect(), &[1, c])
            .unwrap()
            .expand(&[r as i64, c as i64])
            .unwrap(),
    };
    t.to_dtype(dt).unwrap()
}

fn values(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

fn naive(m: usize, n: usize, k: usize, a: &[f64], b: &[f64]) -> Vec<f64> {
    let mut c = vec![0.0; m * n];
    for i in 0..m {
        for j in 0..n {
            c[i * n + j] = (0..k).map(|p| a[i * k + p] * b[p * n + j]).sum();
        }
    }
    c
}

/// Checks `a.mm(b)` (shape, contiguity and every value) against the naive product.
fn check_mm(m: usize, n: usize, k: usize, fa: Form, fb: Form, dt: DType) {
    let a = operand(m, k, fa, dt, 1);
    let b = operand(k, n, fb, dt, 2);
    let want = naive(m, n, k, &values(&a), &values(&b));
    let c = a.mm(&b).unwrap();
    assert_eq!(c.shape(), vec![m, n]);
    assert_eq!(c.dtype(), dt);
    assert!(c.is_contiguous());
    assert_eq!(
        values(&c),
        want,
        "{m}x{k} @ {k}x{n}, {fa:?} @ {fb:?}, {dt:?}"
    );
}

#[test]
fn every_small_m_against_reference() {
    let mut form = 0;
    for m in 1..=70 {
        for &n in &[1usize, 2, 7, 8, 15, 16, 17, 33, 70] {
            for &k in &[1usize, 3, 16, 31, 70] {
                // rotate through the layout pairs so each size meets several of them
                let (fa, fb) = (FORMS[form % 4], FORMS[(form / 4) % 4]);
                form += 1;
                check_mm(m, n, k, fa, fb, DType::F32);
                check_mm(m, n, k, fb, fa, DType::F64);
            }
        }
    }
}

#[test]
fn every_small_n_and_k_against_reference() {
    for x in 1..=70 {
        for dt in [DType::F32, DType::F64] {
            check_mm(5, x, 9, Form::Contiguous, Form::Contiguous, dt);
            check_mm(7, 13, x, Form::Transposed, Form::Contiguous, dt);
            check_mm(x, x, x, Form::Contiguous, Form::Transposed, dt);
        }
    }
}

#[test]
fn primes_and_block_boundaries_in_every_layout() {
    let shapes = [
        (97, 101, 257),
        (131, 127, 255),
        (145, 17, 513),
        (6, 4081, 3),
        (1, 4100, 2),
        (73, 1, 520),
        (300, 5, 300),
        (13, 29, 256),
    ];
    for &(m, n, k) in &shapes {
        for fa in FORMS {
            for fb in FORMS {
                check_mm(m, n, k, fa, fb, DType::F32);
                check_mm(m, n, k, fa, fb, DType::F64);
            }
        }
    }
}

#[test]
fn multithreaded_split_along_m_and_along_n() {
    for &(m, n, k) in &[
        (211, 67, 97),
        (67, 211, 97),
        (256, 256, 256),
        (130, 10, 512),
    ] {
        for (fa, fb) in [
            (Form::Contiguous, Form::Contiguous),
            (Form::Transposed, Form::Transposed),
            (Form::Strided, Form::Transposed),
        ] {
            check_mm(m, n, k, fa, fb, DType::F32);
            check_mm(m, n, k, fa, fb, DType::F64);
        }
    }
}

#[test]
fn k_zero_gives_zeros_even_in_recycled_memory() -> R {
    for dt in [DType::F32, DType::F64] {
        // free a large block full of non-zeros so the output may reuse it
        drop(Tensor::full(&[300, 400], 7.0, dt)?);
        let a = Tensor::zeros(&[300, 0], dt)?;
        let b = Tensor::zeros(&[0, 400], dt)?;
        let c = a.mm(&b)?;
        assert_eq!(c.shape(), vec![300, 400]);
        assert!(values(&c).iter().all(|&v| v == 0.0));
        let e = Tensor::zeros(&[0, 5], dt)?.mm(&Tensor::zeros(&[5, 3], dt)?)?;
        assert_eq!(e.shape(), vec![0, 3]);
    }
    Ok(())
}

#[test]
fn vectors_and_unit_dimensions() -> R {
    for dt in [DType::F32, DType::F64] {
        check_mm(1, 1, 1, Form::Contiguous, Form::Contiguous, dt);
        check_mm(1, 300, 200, Form::Contiguous, Form::Transposed, dt);
        check_mm(300, 1, 200, Form::Transposed, Form::Contiguous, dt);
        check_mm(300, 200, 1, Form::Strided, Form::Strided, dt);
        // matrix-vector and vector-matrix through matmul
        let a = operand(37, 90, Form::Transposed, dt, 1);
        let v = operand(90, 1, Form::Contiguous, dt, 2).view(&[90])?;
        let want = naive(37, 1, 90, &values(&a), &values(&v));
        assert_eq!(values(&a.matmul(&v)?), want);
        let w = operand(1, 37, Form::Contiguous, dt, 3).view(&[37])?;
        let want = naive(1, 90, 37, &values(&w), &values(&a));
        assert_eq!(values(&w.matmul(&a)?), want);
    }
    Ok(())
}

#[test]
fn bmm_and_broadcast_batches_match_reference() -> R {
    let (bs, m, n, k) = (3, 23, 41, 67);
    for dt in [DType::F32, DType::F64] {
        // batch stored innermost: every matrix is strided
        let a = Tensor::from_vec((0..bs * m * k).map(|i| val(i, 1)).collect(), &[m, k, bs])?
            .permute(&[2, 0, 1])?
            .to_dtype(dt)?;
        let b = operand(k, n * bs, Form::Contiguous, dt, 2)
            .view(&[k as i64, bs as i64, n as i64])?
            .permute(&[1, 0, 2])?;
        let c = a.bmm(&b)?;
        assert_eq!(c.shape(), vec![bs, m, n]);
        for i in 0..bs {
            let (ai, bi) = (a.select(0, i as i64)?, b.select(0, i as i64)?);
            let want = naive(m, n, k, &values(&ai), &values(&bi));
            assert_eq!(values(&c.select(0, i as i64)?), want, "batch {i}");
        }
        // [2,1,m,k] @ [3,k,n] -> [2,3,m,n]
        let a4 = operand(2 * m, k, Form::Contiguous, dt, 4).view(&[2, 1, m as i64, k as i64])?;
        let b3 = operand(3 * k, n, Form::Transposed, dt, 5)
            .t()?
            .contiguous()?
            .t()?
            .as_strided(&[3, k as i64, n as i64], &[k as i64, 1, 3 * k as i64], None)?;
        let c = a4.matmul(&b3)?;
        assert_eq!(c.shape(), vec![2, 3, m, n]);
        for i in 0..2 {
            for j in 0..3 {
                let ai = a4.select(0, i)?.select(0, 0)?;
                let bj = b3.select(0, j)?;
                let want = naive(m, n, k, &values(&ai), &values(&bj));
                assert_eq!(values(&c.select(0, i)?.select(0, j)?), want);
            }
        }
    }
    Ok(())
}

#[test]
fn non_finite_values_stay_in_their_rows_and_columns() -> R {
    for dt in [DType::F32, DType::F64] {
        let (m, n, k) = (13, 35, 300);
        let mut av: Vec<f64> = (0..m * k).map(|i| val(i, 1)).collect();
        let mut bv: Vec<f64> = (0..k * n).map(|i| val(i, 2)).collect();
        av[4 * k + 17] = f64::NAN;
        av[9 * k + 280] = f64::INFINITY;
        bv[100 * n + 33] = f64::NEG_INFINITY;
        let want = naive(m, n, k, &av, &bv);
        let a = Tensor::from_vec(av, &[m, k])?.to_dtype(dt)?;
        let b = Tensor::from_vec(bv, &[k, n])?.to_dtype(dt)?;
        let got = values(&a.mm(&b)?);
        for (i, (g, w)) in got.iter().zip(&want).enumerate() {
            assert!(
                g == w || (g.is_nan() && w.is_nan()),
                "element {i}: {g} vs {w}"
            );
        }
        // rows without a non-finite A entry are finite outside B's non-finite column
        for (i, v) in got[..4 * n].iter().enumerate() {
            assert!(i % n == 33 || v.is_finite(), "element {i}: {v}");
        }
    }
    Ok(())
}

#[test]
fn linear_weight_grad_is_contiguous_like_pytorch() -> R {
    tapegrad::manual_seed(3);
    let lin = Linear::new(70, 33, true, DType::F32)?;
    let x = operand(20, 70, Form::Contiguous, DType::F32, 1);
    lin.forward(&x)?.sum()?.backward()?;
    let g = lin.weight.grad().expect("weight grad");
    assert_eq!(g.shape(), vec![33, 70]);
    assert_eq!(g.strides(), vec![70, 1]);
    assert!(!g.is_view(), "PyTorch's weight.grad is not a view");
    // every row of d(sum)/dW is the column sums of x
    let xs = values(&x);
    let colsum: Vec<f64> = (0..70)
        .map(|j| (0..20).map(|i| xs[i * 70 + j]).sum())
        .collect();
    let gv = values(&g);
    for r in 0..33 {
        assert_eq!(&gv[r * 70..(r + 1) * 70], &colsum[..]);
    }
    Ok(())
}

#[test]
fn column_major_mm_inputs_get_column_major_grads() -> R {
    // mat1 = a.t() and mat2 = b.t() are column-major: their grads are too, so the leaves' grads
    // are contiguous (PyTorch: mm_mat1_backward / mm_mat2_backward)
    let a = operand(9, 4, Form::Contiguous, DType::F64, 1).requires_grad_(true)?;
    let b = operand(6, 9, Form::Contiguous, DType::F64, 2).requires_grad_(true)?;
    let g = operand(4, 6, Form::Contiguous, DType::F64, 3);
    a.t()?
        .mm(&b.t()?)?
        .backward_with(Some(&g), tapegrad::autograd::BackwardOptions::default())?;
    let (ga, gb) = (a.grad().unwrap(), b.grad().unwrap());
    assert_eq!(ga.strides(), vec![4, 1]);
    assert_eq!(gb.strides(), vec![9, 1]);
    // values: d/d(a^T) = g @ b, d/d(b^T) = a^T^T @ g = a @ g
    let want_at = naive(4, 9, 6, &values(&g), &values(&b));
    assert_eq!(values(&ga.t()?), want_at);
    let want_bt = naive(9, 6, 4, &values(&a), &values(&g));
    assert_eq!(values(&gb.t()?), want_bt);
    // row-major inputs keep row-major grads
    let c = operand(4, 9, Form::Contiguous, DType::F64, 4).requires_grad_(true)?;
    let d = operand(9, 6, Form::Contiguous, DType::F64, 5).requires_grad_(true)?;
    c.mm(&d)?
        .backward_with(Some(&g), tapegrad::autograd::BackwardOptions::default())?;
    assert_eq!(c.grad().unwrap().strides(), vec![9, 1]);
    assert_eq!(d.grad().unwrap().strides(), vec![6, 1]);
    Ok(())
}

#[test]
fn gradcheck_mm_with_column_major_inputs() -> R {
    let a = Tensor::randn(&[5, 4], DType::F64)?.requires_grad_(true)?;
    let b = Tensor::randn(&[3, 5], DType::F64)?.requires_grad_(true)?;
    gradcheck(
        |t| t[0].t()?.mm(&t[1].t()?),
        &[a.clone(), b.clone()],
        GradcheckOptions::default(),
    )?;
    gradcheck(
        |t| Tensor::linear(&t[0].t()?, &t[1], None),
        &[a, b],
        GradcheckOptions::default(),
    )
}

#[test]
fn bmm_split_over_the_team_by_matrices_matches_each_product() -> R {
    // 16 products of 64^3 (split over the team by matrices) and 3 of them (each product
    // parallel on its own): every matrix bit for bit equal to its own `mm`
    for dt in [DType::F32, DType::F64] {
        for bs in [16usize, 3] {
            let a = Tensor::randn(&[bs, 64, 64], dt)?;
            // a strided batch: the batch dim innermost in memory
            let b = Tensor::randn(&[64, 64, bs], dt)?.permute(&[2, 0, 1])?;
            let c = a.bmm(&b)?;
            for i in 0..bs as i64 {
                let want = a.select(0, i)?.mm(&b.select(0, i)?)?;
                let (got, want) = (c.select(0, i)?, want);
                assert_eq!(
                    got.to_dtype(DType::F64)?.to_vec::<f64>()?,
                    want.to_dtype(DType::F64)?.to_vec::<f64>()?,
                    "{dt:?} batch {bs} matrix {i}"
                );
            }
        }
    }
    Ok(())
}
