//! Core data model: views, versions, storage sharing, copies and errors.

use crate::common::R;
use tapegrad::{DType, ErrorKind, Tensor};

#[test]
fn view_shares_storage_and_version() -> R {
    let x = Tensor::arange(0, 6, 1)?;
    let v = x.view(&[2, 3])?;
    assert!(v.is_view() && v.shares_storage(&x));
    v.select(0, 1)?.fill_(7)?;
    assert_eq!(x.to_vec::<i64>()?, vec![0, 1, 2, 7, 7, 7]);
    assert_eq!((x.version(), v.version()), (1, 1));
    Ok(())
}

#[test]
fn view_incompatible_leaves_tensor_unchanged() -> R {
    let x = Tensor::zeros(&[2, 3], DType::F32)?;
    let t = x.t()?;
    let err = t.view(&[6]).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::ViewIncompatible);
    assert_eq!(
        (t.shape(), t.strides(), t.version()),
        (vec![3, 2], vec![1, 3], 0)
    );
    Ok(())
}

#[test]
fn unsafe_view_is_not_a_view() -> R {
    let x = Tensor::arange(0, 4, 1)?;
    let u = x.unsafe_view(&[2, 2])?;
    assert!(!u.is_view() && u.shares_storage(&x));
    u.add_(1)?;
    assert_eq!((x.version(), u.version()), (0, 1));
    Ok(())
}

#[test]
fn clone_of_transposed_keeps_memory_order() -> R {
    let x = Tensor::arange_dtype(0, 6, 1, DType::F32)?.view(&[2, 3])?;
    let c = x.t()?.copy()?;
    assert_eq!(c.strides(), vec![1, 3]);
    assert_eq!(c.to_vec::<f32>()?, vec![0., 3., 1., 4., 2., 5.]);
    Ok(())
}

#[test]
fn saved_tensor_modified_message() -> R {
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?.requires_grad_(true)?;
    let x = a.copy()?;
    let y = x.mul(&x)?;
    x.add_(1.0)?;
    let e = y.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
    assert!(e.message().contains("[torch.FloatTensor [3]], which is output 0 of AddBackward0, is at version 1; expected version 0 instead."), "{}", e);
    Ok(())
}

#[test]
fn copyslices_grad() -> R {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?.requires_grad_(true)?;
    let b = x.copy()?;
    b.select(0, 1)?.mul_(10.0)?;
    assert!(x.add_(1.0).unwrap_err().kind() == ErrorKind::LeafInplace);
    b.sum()?.backward()?;
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>()?,
        vec![1.0, 1.0, 10.0, 10.0]
    );
    Ok(())
}

#[test]
fn long_chain_backward_and_drop_without_recursion() -> R {
    let x = Tensor::ones(&[4], DType::F32)?.requires_grad_(true)?;
    let mut y = x.clone();
    for _ in 0..200_000 {
        y = y.mul(1.0)?;
    }
    y.sum()?.backward()?;
    assert_eq!(x.grad().unwrap().to_vec::<f32>()?, vec![1.0; 4]);
    drop(y);
    Ok(())
}

/// A long history of in-place ops on views (a CopySlices node per op, each saved output
/// holding a weak handle to its CopySlices), with and without a backward pass first, and chains
/// whose links are tensors held by the formulas or saved inputs' edges, are freed iteratively on
/// a thread with a small stack, whether the last handle is a tensor or a `grad_fn` handle.
#[test]
fn long_inplace_view_chain_drops_without_recursion() -> R {
    let run = || -> R {
        for backward in [false, true] {
            let x = Tensor::zeros(&[4], DType::F64)?.requires_grad_(true)?;
            let y = x.mul(1.0)?;
            for _ in 0..50_000 {
                let v = y.narrow(0, 1, 2)?;
                if backward {
                    v.mul_(1.0)?;
                } else {
                    // (exp_ saves its output; the next op makes that stale, so no backward)
                    v.exp_()?;
                    v.mul_(0.0)?;
                }
            }
            if backward {
                y.sum()?.backward()?;
                assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![1.0; 4]);
            }
            drop(y);
        }
        // a chain linked through a formula's own handle on its input (cumprod keeps `x`)
        let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
        let mut y = x.clone();
        for _ in 0..50_000 {
            y = y.cumprod(0, None)?;
        }
        drop(y);
        // a chain linked through saved inputs (mul saves both; each keeps its input's edge),
        // let go of through its grad_fn handle last
        let mut y = x.clone();
        for _ in 0..50_000 {
            y = y.mul(&y)?;
        }
        let head = y.grad_fn().expect("mul records");
        drop(y);
        assert_eq!(head.name(), "MulBackward0");
        drop(head);
        Ok(())
    };
    std::thread::Builder::new()
        .stack_size(256 << 10)
        .spawn(run)
        .expect("spawn")
        .join()
        .expect("no stack overflow")
}

/// `torch.full((3,), -0.0)` keeps the sign of zero (its bits are not all zero), in every float
/// and complex dtype; `+0.0` and integer zero stay zero-filled.
#[test]
fn full_keeps_negative_zero() -> R {
    for dt in [DType::F16, DType::BF16, DType::F32, DType::F64] {
        let t = Tensor::full(&[3], -0.0, dt)?;
        let v = t.to_dtype(DType::F64)?.to_vec::<f64>()?;
        assert!(
            v.iter().all(|x| *x == 0.0 && x.is_sign_negative()),
            "{dt:?}: {v:?}"
        );
        let p = Tensor::full(&[3], 0.0, dt)?
            .to_dtype(DType::F64)?
            .to_vec::<f64>()?;
        assert!(
            p.iter().all(|x| *x == 0.0 && x.is_sign_positive()),
            "{dt:?}: {p:?}"
        );
    }
    let c = Tensor::full(&[2], num_complex::Complex64::new(-0.0, 0.0), DType::C128)?;
    let cv = c.to_vec::<num_complex::Complex64>()?;
    assert!(
        cv.iter()
            .all(|z| z.re.is_sign_negative() && z.im.is_sign_positive())
    );
    let i = Tensor::full(&[2], -0.0, DType::I64)?;
    assert_eq!(i.to_vec::<i64>()?, vec![0, 0]);
    Ok(())
}
