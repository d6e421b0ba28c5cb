//! Shape / data-movement / index ops: values, dtypes, errors, gradchecks.

use crate::common::{R, i64t, rg};
use tapegrad::autograd::gradcheck;
use tapegrad::{DType, ErrorKind, Tensor};

#[test]
fn cat_values_promotion_errors() -> R {
    let a = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    let b = Tensor::from_vec(vec![0.5f32, 1.5], &[1, 2])?;
    let c = Tensor::cat(&[&a, &b], 0)?;
    assert_eq!(c.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0, 0.5, 1.5]);
    let ai = i64t(&[1, 2, 3, 4], &[2, 2]);
    let c = Tensor::cat(&[&ai, &ai.t()?], -1)?;
    assert_eq!(c.dtype(), DType::I64);
    assert_eq!(c.to_vec::<i64>()?, vec![1, 2, 1, 3, 3, 4, 2, 4]);
    let m = Tensor::cat(&[&ai, &a], 0)?;
    assert_eq!(m.dtype(), DType::F32);
    let e = Tensor::cat(&[&a, &Tensor::ones(&[1, 3], DType::F32)?], 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(
        Tensor::cat(&[&a, &a], 2).unwrap_err().kind(),
        ErrorKind::DimOutOfRange
    );
    let s = Tensor::stack(&[&b, &b], 0)?;
    assert_eq!(s.shape(), vec![2, 1, 2]);
    Ok(())
}

#[test]
fn cat_stack_grad() -> R {
    let (a, b) = (rg(&[2, 3]), rg(&[3, 2]));
    gradcheck(
        |x| Tensor::cat(&[&x[0], &x[1].t()?], 0)?.mul(&Tensor::cat(&[&x[0], &x[0]], 1)?.sum()?),
        &[a.clone(), b.clone()],
        Default::default(),
    )?;
    gradcheck(
        |x| Tensor::stack(&[&x[0], &x[1].t()?], 2),
        &[a.clone(), b],
        Default::default(),
    )?;
    let y = Tensor::cat(&[&a, &a], 1)?;
    assert_eq!(y.grad_fn().unwrap().name(), "CatBackward0");
    Ok(())
}

#[test]
fn flip_roll_repeat_tri() -> R {
    let x = Tensor::arange(1, 7, 1)?.view(&[2, 3])?;
    assert_eq!(
        x.roll(&[1, -1], &[0, 1])?.to_vec::<i64>()?,
        vec![5, 6, 4, 2, 3, 1]
    );
    assert_eq!(
        x.t()?.roll(&[1], &[0])?.to_vec::<i64>()?,
        vec![3, 6, 1, 4, 2, 5]
    );
    assert_eq!(x.flip(&[0, 1])?.to_vec::<i64>()?, vec![6, 5, 4, 3, 2, 1]);
    assert_eq!(
        x.repeat(&[1, 2])?.to_vec::<i64>()?,
        vec![1, 2, 3, 1, 2, 3, 4, 5, 6, 4, 5, 6]
    );
    assert_eq!(x.triu(0)?.to_vec::<i64>()?, vec![1, 2, 3, 0, 5, 6]);
    assert_eq!(x.tril(-1)?.to_vec::<i64>()?, vec![0, 0, 0, 4, 0, 0]);
    let a = rg(&[3, 4]);
    for f in [
        |t: &Tensor| t.flip(&[0, 1]),
        |t: &Tensor| t.t()?.roll(&[2, -1], &[0, 1]),
        |t: &Tensor| t.roll(&[5], &[]),
        |t: &Tensor| t.slice(1, Some(0), Some(4), 2)?.repeat(&[2, 1, 3]),
        |t: &Tensor| t.tril(1),
        |t: &Tensor| t.t()?.triu(-1),
    ] {
        gradcheck(|x| f(&x[0]), std::slice::from_ref(&a), Default::default())?;
    }
    assert_eq!(a.flip(&[0])?.grad_fn().unwrap().name(), "FlipBackward0");
    let oh = i64t(&[0, 2, 1], &[3]).one_hot(-1)?;
    assert_eq!((oh.shape(), oh.dtype()), (vec![3, 3], DType::I64));
    assert_eq!(
        i64t(&[0, 5], &[2]).one_hot(3).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    Ok(())
}

#[test]
fn gather_index_select_scatter() -> R {
    let x = Tensor::arange(1, 10, 1)?
        .view(&[3, 3])?
        .to_dtype(DType::F32)?;
    let g = x.gather(1, &i64t(&[0, 0, 2, 1, 1, 2], &[3, 2]))?;
    assert_eq!(g.to_vec::<f32>()?, vec![1.0, 1.0, 6.0, 5.0, 8.0, 9.0]);
    let g = x.t()?.gather(1, &i64t(&[1, 0, 2], &[3, 1]))?;
    assert_eq!(g.to_vec::<f32>()?, vec![4.0, 2.0, 9.0]);
    assert_eq!(
        x.gather(1, &i64t(&[3], &[1, 1])).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    let s = x.index_select(0, &i64t(&[2, 0, 2], &[3]))?;
    assert_eq!(
        s.to_vec::<f32>()?,
        vec![7.0, 8.0, 9.0, 1.0, 2.0, 3.0, 7.0, 8.0, 9.0]
    );
    let z = Tensor::zeros(&[3, 4], DType::F32)?;
    let r = z.scatter_value(1, &i64t(&[3, 0, 1], &[3, 1]), -1.5)?;
    assert_eq!(r.to_vec::<f32>()?[3], -1.5);
    // error leaves self unchanged
    let y = Tensor::zeros(&[2, 2], DType::F32)?;
    let e = y.scatter_value_(0, &i64t(&[2], &[1, 1]), 1.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    assert_eq!((y.version(), y.to_vec::<f32>()?), (0, vec![0.0; 4]));
    y.scatter_add_(
        0,
        &i64t(&[1, 1], &[1, 2]),
        &Tensor::ones(&[1, 2], DType::F32)?,
    )?;
    assert_eq!(
        (y.version(), y.to_vec::<f32>()?),
        (1, vec![0.0, 0.0, 1.0, 1.0])
    );
    Ok(())
}

#[test]
fn gather_scatter_grads() -> R {
    let a = rg(&[3, 4]);
    let idx = i64t(&[0, 3, 3, 1, 2, 2], &[3, 2]);
    gradcheck(
        |x| x[0].gather(1, &idx),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |x| x[0].t()?.index_select(1, &i64t(&[2, 2, 0], &[3])),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    let src = rg(&[3, 3]);
    gradcheck(
        |x| x[0].scatter_add(1, &idx, &x[1]),
        &[a.clone(), src.clone()],
        Default::default(),
    )?;
    let uidx = i64t(&[0, 3, 2, 1, 0, 2], &[3, 2]);
    gradcheck(
        |x| x[0].scatter(1, &uidx, &x[1]),
        &[a.clone(), src.clone()],
        Default::default(),
    )?;
    gradcheck(
        |x| x[0].scatter_value(1, &uidx, 2.0),
        std::slice::from_ref(&a),
        Default::default(),
    )?;
    gradcheck(
        |x| {
            let c = x[0].mul(1.0)?;
            c.scatter_add_(1, &idx, &x[1])?;
            Ok(c)
        },
        &[a.clone(), src],
        Default::default(),
    )?;
    assert_eq!(
        a.gather(1, &idx)?.grad_fn().unwrap().name(),
        "GatherBackward0"
    );
    Ok(())
}
