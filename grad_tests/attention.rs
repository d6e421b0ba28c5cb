//! einsum, baddbmm and scaled_dot_product_attention against the ops they are defined by, their
//! error kinds, and the fully-masked-row rule (PyTorch-recorded values are in the sweep).

use crate::common::{R, f64s};
use tapegrad::{DType, ErrorKind, SdpaOptions, Tensor};

fn close(a: &Tensor, b: &Tensor) {
    assert_eq!(a.shape(), b.shape());
    for (x, y) in f64s(a).iter().zip(f64s(b)) {
        assert!((x - y).abs() <= 1e-12 * (1.0 + y.abs()), "{x} vs {y}");
    }
}

fn r(shape: &[usize]) -> Tensor {
    Tensor::randn(shape, DType::F64).unwrap()
}

#[test]
fn einsum_matches_its_definition() -> R {
    let (a, b, c) = (r(&[2, 3]), r(&[3, 4]), r(&[4, 2]));
    close(&Tensor::einsum("ij,jk->ik", &[&a, &b])?, &a.mm(&b)?);
    close(&Tensor::einsum("ij,jk", &[&a, &b])?, &a.mm(&b)?);
    close(&Tensor::einsum("ij,jk->ki", &[&a, &b])?, &a.mm(&b)?.t()?);
    close(
        &Tensor::einsum("ij,jk,kl->il", &[&a, &b, &c])?,
        &a.mm(&b)?.mm(&c)?,
    );
    close(&Tensor::einsum("ij->", &[&a])?, &a.sum()?);
    close(&Tensor::einsum("ij->j", &[&a])?, &a.sum_dims(&[0], false)?);
    close(&Tensor::einsum("ji", &[&a])?, &a.t()?);
    // implicit output: subscripts seen once in ASCII order (upper case first)
    close(&Tensor::einsum("bA,AC", &[&a, &b])?, &a.mm(&b)?.t()?);
    let sq = r(&[3, 3]);
    close(&Tensor::einsum("ii->i", &[&sq])?, &sq.diagonal(0, 0, 1)?);
    close(
        &Tensor::einsum("ii", &[&sq])?,
        &sq.diagonal(0, 0, 1)?.sum()?,
    );
    // ellipsis with broadcasting of batch dims
    let (x, y) = (r(&[2, 1, 3, 4]), r(&[5, 4, 2]));
    close(
        &Tensor::einsum("...ij,...jk->...ik", &[&x, &y])?,
        &x.matmul(&y)?,
    );
    let (w, v) = (r(&[3, 2]), r(&[3]));
    close(
        &Tensor::einsum("i...,i->...", &[&w, &v])?,
        &w.mul(&v.unsqueeze(1)?)?.sum_dims(&[0], false)?,
    );
    let (p, q) = (r(&[3]), r(&[2]));
    close(&Tensor::einsum("i,j->ij", &[&p, &q])?, &p.outer(&q)?);
    let z = Tensor::from_vec(vec![3.0f64], ())?;
    close(&Tensor::einsum("", &[&z])?, &z);
    Ok(())
}

#[test]
fn einsum_errors() -> R {
    let a = r(&[2, 3]);
    let b = r(&[4, 4]);
    let kind = |eq: &str, ops: &[&Tensor]| Tensor::einsum(eq, ops).unwrap_err().kind();
    for (eq, ops) in [
        ("ij,jk->ii", vec![&a, &a]),
        ("ij,jk", vec![&a]),
        ("ij", vec![&a, &a]),
        ("ij->k", vec![&a]),
        ("ijk", vec![&a]),
        ("i..j", vec![&a]),
        ("i...j...", vec![&a]),
        ("1i", vec![&a]),
        ("ij->i->j", vec![&a]),
        ("...i,...i", vec![&r(&[2, 3]), &r(&[4, 3])]),
    ] {
        assert_eq!(kind(eq, &ops), ErrorKind::InvalidArgument, "{eq}");
    }
    assert_eq!(kind("ij,jk", &[&a, &b]), ErrorKind::ShapeMismatch);
    assert_eq!(kind("ii", &[&a]), ErrorKind::ShapeMismatch);
    let e = Tensor::einsum("ij,jk", &[&a, &b]).unwrap_err().to_string();
    assert!(
        e.contains("einsum") && e.contains("subscript j has size 4"),
        "{e}"
    );
    let f = Tensor::ones(&[3, 2], DType::F32)?;
    assert_eq!(kind("ij,jk", &[&a, &f]), ErrorKind::DTypeMismatch);
    Ok(())
}

#[test]
fn baddbmm_matches_its_definition_and_ignores_self_when_beta_is_zero() -> R {
    let (x, b1, b2) = (r(&[2, 1, 3]), r(&[2, 2, 4]), r(&[2, 4, 3]));
    let want = x.mul(0.5)?.add(&b1.bmm(&b2)?.mul(2.0)?)?;
    close(&x.baddbmm(&b1, &b2, 0.5, 2.0)?, &want);
    let nan = Tensor::full(&[2, 2, 3], f64::NAN, DType::F64)?.requires_grad_(true)?;
    let y = nan.baddbmm(&b1, &b2, 0.0, 1.0)?;
    close(&y, &b1.bmm(&b2)?);
    y.sum()?.backward()?;
    assert_eq!(f64s(&nan.grad().unwrap()), vec![0.0; 12]);
    assert_eq!(y.grad_fn().unwrap().name(), "BaddbmmBackward0");
    let e = x.baddbmm(&b1, &r(&[2, 3, 3]), 1.0, 1.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = r(&[3, 1, 3]).baddbmm(&b1, &b2, 1.0, 1.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    Ok(())
}

fn reference(q: &Tensor, k: &Tensor, v: &Tensor, bias: Option<&Tensor>, scale: f64) -> Tensor {
    let s = q
        .matmul(&k.transpose(-2, -1).unwrap())
        .unwrap()
        .mul(scale)
        .unwrap();
    let s = match bias {
        Some(b) => s.add(b).unwrap(),
        None => s,
    };
    s.softmax(-1).unwrap().matmul(v).unwrap()
}

#[test]
fn sdpa_matches_softmax_attention() -> R {
    let (q, k, v) = (r(&[2, 3, 5, 4]), r(&[2, 3, 6, 4]), r(&[2, 3, 6, 2]));
    let y = Tensor::scaled_dot_product_attention(&q, &k, &v, SdpaOptions::default())?;
    close(&y, &reference(&q, &k, &v, None, 0.5));
    let fm = r(&[5, 6]);
    let o = SdpaOptions {
        attn_mask: Some(&fm),
        scale: Some(0.3),
        ..Default::default()
    };
    close(
        &Tensor::scaled_dot_product_attention(&q, &k, &v, o)?,
        &reference(&q, &k, &v, Some(&fm), 0.3),
    );
    // causal = bool mask tril (top-left)
    let tri = Tensor::ones(&[5, 6], DType::Bool)?.tril(0)?;
    let c = SdpaOptions {
        is_causal: true,
        ..Default::default()
    };
    let m = SdpaOptions {
        attn_mask: Some(&tri),
        ..Default::default()
    };
    close(
        &Tensor::scaled_dot_product_attention(&q, &k, &v, c)?,
        &Tensor::scaled_dot_product_attention(&q, &k, &v, m)?,
    );
    let bias =
        Tensor::zeros(&[5, 6], DType::F64)?.masked_fill(&tri.logical_not()?, f64::NEG_INFINITY)?;
    close(
        &Tensor::scaled_dot_product_attention(&q, &k, &v, c)?,
        &reference(&q, &k, &v, Some(&bias), 0.5),
    );
    Ok(())
}

#[test]
fn sdpa_fully_masked_row_is_zero_with_zero_grad() -> R {
    let q = r(&[3, 2]).requires_grad_(true)?;
    let (k, v) = (r(&[4, 2]), r(&[4, 2]));
    let mut mv = vec![true; 12];
    for x in &mut mv[4..8] {
        *x = false;
    }
    let m = Tensor::from_vec(mv, &[3, 4])?;
    let o = SdpaOptions {
        attn_mask: Some(&m),
        ..Default::default()
    };
    let y = Tensor::scaled_dot_product_attention(&q, &k, &v, o)?;
    assert_eq!(f64s(&y)[2..4], [0.0, 0.0]);
    assert!(f64s(&y).iter().all(|x| x.is_finite()));
    y.sum()?.backward()?;
    let g = f64s(&q.grad().unwrap());
    assert_eq!(g[2..4], [0.0, 0.0]);
    assert!(g.iter().all(|x| x.is_finite()));
    Ok(())
}

#[test]
fn sdpa_errors() -> R {
    let (q, k, v) = (r(&[2, 3, 4]), r(&[2, 5, 4]), r(&[2, 5, 4]));
    let m = Tensor::ones(&[3, 5], DType::Bool)?;
    let both = SdpaOptions {
        attn_mask: Some(&m),
        is_causal: true,
        ..Default::default()
    };
    let kind = |q: &Tensor, k: &Tensor, v: &Tensor, o| {
        Tensor::scaled_dot_product_attention(q, k, v, o)
            .unwrap_err()
            .kind()
    };
    assert_eq!(kind(&q, &k, &v, both), ErrorKind::InvalidArgument);
    assert_eq!(
        kind(&q, &r(&[2, 5, 3]), &v, SdpaOptions::default()),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(&q, &k, &r(&[2, 4, 4]), SdpaOptions::default()),
        ErrorKind::ShapeMismatch
    );
    let f = Tensor::ones(&[2, 5, 4], DType::F32)?;
    assert_eq!(
        kind(&q, &f, &v, SdpaOptions::default()),
        ErrorKind::DTypeMismatch
    );
    let im = Tensor::ones(&[3, 5], DType::I64)?;
    let o = SdpaOptions {
        attn_mask: Some(&im),
        ..Default::default()
    };
    assert_eq!(kind(&q, &k, &v, o), ErrorKind::DTypeMismatch);
    Ok(())
}

#[test]
fn sdpa_fused_forward_matches_the_recorded_path() -> R {
    // without a graph, causal/unmasked f32/f64 attention runs the backend's fused forward
    // (blocks of 64 queries: 130 queries make three, the last ones past the 100 keys)
    let (q, k, v) = (r(&[2, 2, 130, 8]), r(&[2, 2, 100, 8]), r(&[2, 2, 100, 5]));
    let qt = r(&[2, 2, 8, 130]).transpose(-2, -1)?;
    for causal in [true, false] {
        for scale in [None, Some(0.3)] {
            let o = SdpaOptions {
                is_causal: causal,
                scale,
                ..Default::default()
            };
            for q in [&q, &qt] {
                let fused = Tensor::scaled_dot_product_attention(q, &k, &v, o)?;
                let qg = q.detach().requires_grad_(true)?;
                let composed = Tensor::scaled_dot_product_attention(&qg, &k, &v, o)?;
                assert!(composed.grad_fn().is_some() && fused.grad_fn().is_none());
                close(&fused, &composed);
                let f32s = |t: &Tensor| t.to_dtype(DType::F32).unwrap();
                let y32 = Tensor::scaled_dot_product_attention(&f32s(q), &f32s(&k), &f32s(&v), o)?;
                assert_eq!(y32.dtype(), DType::F32);
                for (x, y) in f64s(&y32).iter().zip(f64s(&composed)) {
                    assert!((x - y).abs() <= 1e-5 * (1.0 + y.abs()), "{x} vs {y}");
                }
            }
        }
    }
    Ok(())
}
