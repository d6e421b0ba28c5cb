//! Shape / data-movement / index ops: values, dtypes, errors, gradchecks.

use crate::common::{R, i64t, rg};
use tapegrad::autograd::gradcheck;
use tapegrad::{DType, ErrorKind, IncludeSelf, ScatterReduce, Tensor};

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
        |t: &Tensor| t.roll(&[5], ()),
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
    // negative index values do not wrap here (PyTorch's errors; indexing with `index` wraps them)
    let e = x.index_select(0, &i64t(&[0, -1], &[2])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    assert!(e.to_string().contains("index out of range in self"), "{e}");
    let (neg, ones) = (
        i64t(&[0, -1, 2], &[3, 1]),
        Tensor::ones(&[3, 1], DType::F32)?,
    );
    for e in [
        x.gather(1, &neg).unwrap_err(),
        x.scatter(1, &neg, &ones).unwrap_err(),
        x.scatter_add(1, &neg, &ones).unwrap_err(),
        x.scatter_reduce(1, &neg, &ones, ScatterReduce::Amax, IncludeSelf::Yes)
            .unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
        let want = "index -1 is out of bounds for dimension 1 with size 3";
        assert!(e.to_string().contains(want), "{e}");
    }
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
    // a `src` larger than the index is PyTorch's backward error (derivatives.yaml:
    // `src: grad.gather(dim, index)` has the index's shape), for the in-place form too
    let big = rg(&[3, 3]);
    for inplace in [false, true] {
        let y = if inplace {
            let c = a.mul(1.0)?;
            c.scatter_add_(1, &idx, &big)?;
            c
        } else {
            a.scatter_add(1, &idx, &big)?
        };
        let e = y.sum()?.backward().unwrap_err();
        assert_eq!(e.kind(), tapegrad::ErrorKind::ShapeMismatch);
        assert!(
            e.to_string().contains(
                "ScatterAddBackward0 returned an invalid gradient at index 1 - got [3, 2] but \
                 expected shape compatible with [3, 3]"
            ),
            "{e}"
        );
    }
    let src = rg(&[3, 2]);
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

#[test]
fn gather_scatter_large_walks_match_a_serial_reference() -> R {
    // large enough for the kernels' parallel walk (split along the other dim), with repeated
    // indices, a transposed self and a strided index
    let (r, c) = (300usize, 257usize);
    let xv: Vec<f64> = (0..r * c).map(|k| (k % 97) as f64 - 40.0).collect();
    let x = Tensor::from_vec(xv.clone(), &[c, r])?.t()?;
    let mut s: u64 = 7;
    let mut rnd = |n: usize| {
        s = s
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        ((s >> 33) % n as u64) as i64
    };
    // (the index stored transposed is read through strides; stored contiguous, gather along
    // the last dim takes the unit-stride row loop)
    for (dim, dense_index) in [(0usize, false), (1, false), (0, true), (1, true)] {
        let size = if dim == 0 { r } else { c } as i64;
        let iv: Vec<i64> = (0..r * c).map(|_| rnd(size as usize)).collect();
        let stored = |v: Vec<i64>| -> tapegrad::Result<Tensor> {
            let t = Tensor::from_vec(v, &[c, r])?.t()?;
            if dense_index { t.contiguous() } else { Ok(t) }
        };
        let idx = stored(iv.clone())?;
        let at = |i: usize, j: usize| iv[j * r + i];
        let xat = |i: usize, j: usize| xv[j * r + i];
        let g = x.gather(dim as i64, &idx)?.to_vec::<f64>()?;
        let src = x.mul(0.5)?.add(1.0)?;
        let sum = x.scatter_add(dim as i64, &idx, &src)?.to_vec::<f64>()?;
        let set = x.scatter(dim as i64, &idx, &src)?.to_vec::<f64>()?;
        let (mut want_sum, mut want_set) = (vec![0.0; r * c], vec![0.0; r * c]);
        for i in 0..r {
            for j in 0..c {
                want_sum[i * c + j] = xat(i, j);
                want_set[i * c + j] = xat(i, j);
            }
        }
        for i in 0..r {
            for j in 0..c {
                let k = at(i, j) as usize;
                let (src_v, picked) = if dim == 0 {
                    (xat(i, j) * 0.5 + 1.0, xat(k, j))
                } else {
                    (xat(i, j) * 0.5 + 1.0, xat(i, k))
                };
                assert_eq!(g[i * c + j], picked, "gather dim {dim} at ({i}, {j})");
                let t = if dim == 0 { k * c + j } else { i * c + k };
                want_sum[t] += src_v;
                want_set[t] = src_v;
            }
        }
        assert_eq!(sum, want_sum, "scatter_add dim {dim}");
        assert_eq!(set, want_set, "scatter dim {dim}");
        // the first out-of-range index in row-major order is the one reported; negative
        // values are out of range (PyTorch's gather and scatter do not wrap them)
        let mut bad = iv.clone();
        bad[5 * r + 200] = size; // position (200, 5)
        bad[9 * r + 100] = -1; // position (100, 9): earlier in row-major order
        let bad = stored(bad)?;
        let scatter_add = |b: &Tensor| x.scatter_add(dim as i64, b, &src);
        let scatter = |b: &Tensor| x.scatter(dim as i64, b, &src);
        for f in [
            &|b: &Tensor| x.gather(dim as i64, b),
            &scatter_add,
            &scatter,
        ] as [&dyn Fn(&Tensor) -> tapegrad::Result<Tensor>; 3]
        {
            let e = f(&bad).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
            let want = format!("index -1 is out of bounds for dimension {dim} with size {size}");
            assert!(e.to_string().contains(&want), "{e}");
        }
    }
    Ok(())
}

#[test]
fn gather_saves_its_index() -> R {
    let a = rg(&[2, 3]);
    let idx = i64t(&[0, 2, 1, 1], &[2, 2]);
    let out = a.gather(1, &idx)?;
    // the gradient follows the saved index; changing it in place is caught at backward
    idx.fill_(0.0)?;
    let e = out.sum()?.backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
    Ok(())
}
