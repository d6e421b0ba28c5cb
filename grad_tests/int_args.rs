//! The integer convention (`tapegrad::Dim`, `tapegrad::IntoShape`): every shape- or dim-taking
//! method gives the same result for `usize`, `i64`, `i32` and `isize` arguments, refuses
//! negative sizes and values that do not fit in int64 with `InvalidArgument` naming the op.

use crate::common::R;
use tapegrad::{DType, ErrorKind, Tensor};

fn x() -> Tensor {
    Tensor::from_vec((0..24).map(|v| v as f64).collect::<Vec<_>>(), &[2, 3, 4]).unwrap()
}

/// Values, shape and strides, to compare results of the two forms.
fn same(a: &Tensor, b: &Tensor) {
    assert_eq!(a.shape(), b.shape());
    assert_eq!(a.strides(), b.strides());
    assert_eq!(a.storage_offset(), b.storage_offset());
    assert_eq!(a.dtype(), b.dtype());
    assert_eq!(
        a.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap(),
        b.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
    );
}

fn same_all(a: &[Tensor], b: &[Tensor]) {
    assert_eq!(a.len(), b.len());
    a.iter().zip(b).for_each(|(a, b)| same(a, b));
}

#[test]
fn usize_and_i64_forms_agree() -> R {
    let x = x();
    let (u, i): (&[usize], &[i64]) = (&[4, 6], &[4, 6]);
    same(&x.view(u)?, &x.view(i)?);
    same(&x.view([4usize, 6])?, &x.view(vec![4i32, 6])?);
    same(&x.view(&[4, 6])?, &x.view(&vec![-1isize, 6])?);
    same(&x.reshape(&x.shape())?, &x.reshape(&[2i64, 3, 4])?);
    same(&x.t_like()?, &x.permute(&[2i64, 0, 1])?);
    same(&x.transpose(0usize, 2usize)?, &x.transpose(0i64, -1i64)?);
    same(
        &x.narrow(2usize, 1usize, 2usize)?,
        &x.narrow(-1i64, 1i64, 2i64)?,
    );
    same(&x.select(1usize, 2usize)?, &x.select(-2i64, -1i64)?);
    same(&x.unsqueeze(3usize)?, &x.unsqueeze(-1i32)?);
    same(&x.flatten(1usize, 2usize)?, &x.flatten(1i64, -1i64)?);
    same(
        &x.sum_dims(&[0usize, 2], false)?,
        &x.sum_dims(&[-3i64, -1], false)?,
    );
    same(
        &x.mean(vec![1usize], true, None)?,
        &x.mean([-2i32], true, None)?,
    );
    same(&x.softmax(2usize)?, &x.softmax(-1i64)?);
    same(&x.flip([0usize])?, &x.flip(&[-3i64])?);
    same(
        &x.movedim(&[0usize], &[2usize])?,
        &x.movedim(&[0i64], &[-1i64])?,
    );
    let one = Tensor::ones(&[1, 3, 1], DType::F32)?;
    same(&one.expand(&[2usize, 3, 5])?, &one.expand(&[2i64, -1, 5])?);
    same(&one.repeat(&[2usize, 1, 2])?, &one.repeat([2i64, 1, 2])?);
    same_all(&x.split(2usize, 2usize)?, &x.split(2i64, -1i64)?);
    same_all(&x.chunk(3usize, 1usize)?, &x.chunk(3i64, -2i64)?);
    same(
        &Tensor::from_vec(vec![1.0f32; 6], &[2usize, 3])?,
        &Tensor::from_vec(vec![1.0f32; 6], vec![2i64, 3])?,
    );
    same(
        &Tensor::zeros(&[2usize, 3], DType::F32)?,
        &Tensor::zeros([2i32, 3], DType::F32)?,
    );
    same(
        &Tensor::ones(vec![2usize], DType::I64)?,
        &Tensor::ones(&[2i64], DType::I64)?,
    );
    same(
        &Tensor::full(&[2usize, 2], 7, DType::I32)?,
        &Tensor::full(&vec![2i64, 2], 7, DType::I32)?,
    );
    assert_eq!(Tensor::empty(&[3i64, 0], DType::F32)?.shape(), vec![3, 0]);
    // the 0-dim shape is `()`
    same(
        &Tensor::zeros((), DType::F32)?,
        &Tensor::zeros(&[] as &[i64], DType::F32)?,
    );
    assert_eq!(x.sum_dims((), false)?.item::<f64>()?, 276.0);
    Ok(())
}

trait TLike {
    fn t_like(&self) -> tapegrad::Result<Tensor>;
}
impl TLike for Tensor {
    fn t_like(&self) -> tapegrad::Result<Tensor> {
        self.permute(&[2usize, 0, 1])
    }
}

/// Each call failed with `InvalidArgument`, naming its op, with the message given.
fn refused(cases: Vec<(tapegrad::Result<Tensor>, &str, &str)>) {
    for (r, op, msg) in cases {
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind(), e.op(), e.message()),
            (ErrorKind::InvalidArgument, op, msg)
        );
    }
}

#[test]
fn negative_sizes_are_refused_with_the_ops_message() {
    let x = x();
    let cases: Vec<(tapegrad::Result<Tensor>, &str, &str)> = vec![
        (
            Tensor::zeros(&[-1i64, 2], DType::F32),
            "zeros",
            "zeros: Dimension size must be non-negative.",
        ),
        (
            Tensor::full(&[2i64, -3], 1.0, DType::F32),
            "full",
            "Trying to create tensor with negative dimension -3: [2, -3]",
        ),
        (
            Tensor::from_vec(vec![1.0f32], &[-1i32]),
            "from_vec",
            "Trying to create tensor with negative dimension -1: [-1]",
        ),
        (
            x.narrow(0, 0, -1),
            "narrow",
            "narrow(): length must be non-negative.",
        ),
    ];
    refused(cases);
    let e = x.split(-1, 0).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::InvalidArgument,
            "split expects split_size be non-negative, but got split_size=-1"
        )
    );
    let e = x.chunk(-1, 0).unwrap_err();
    assert_eq!(
        e.message(),
        "chunk expects `chunks` to be greater than 0, got: -1"
    );
    // nothing changed: x is still whole
    assert_eq!(x.shape(), vec![2, 3, 4]);
}

#[test]
fn values_beyond_int64_are_refused_not_truncated() {
    let x = x();
    let big = i64::MAX as usize + 1;
    let e = x.transpose(big, 0).unwrap_err();
    assert_eq!(
        (e.kind(), e.op(), e.message()),
        (
            ErrorKind::InvalidArgument,
            "transpose",
            "transpose: value out of range for int64"
        )
    );
    let e = x.view(&[big, 0]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        e.message(),
        "view: size 9223372036854775808 does not fit in int64"
    );
    let e = Tensor::zeros(vec![u64::MAX], DType::F32).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "zeros"));
    let e = x.narrow(0usize, 0usize, usize::MAX).unwrap_err();
    assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, "narrow"));
}

/// The optional dims (`MaybeDim`: a plain integer, `Some(i64)` or `None`) and the remaining
/// integer arguments of the non-nn API: every integer form gives the same result.
#[test]
fn optional_dims_and_the_remaining_int_args() -> R {
    let x = x();
    // argmax / argmin: a plain dim of any type, Some(i64), or None (flattened)
    same(&x.argmax(2usize, false)?, &x.argmax(Some(-1), false)?);
    same(&x.argmax(-1i32, true)?, &x.argmax(2u64, true)?);
    assert_eq!(x.argmax(None, false)?.item::<i64>()?, 23);
    same(&x.argmin(1isize, false)?, &x.argmin(Some(-2), false)?);
    assert_eq!(x.argmin(None, true)?.shape(), vec![1, 1, 1]);
    // squeeze_ with a dim of any type or None
    let a = Tensor::zeros(&[1, 3, 1], DType::F32)?;
    a.squeeze_(-1i32)?;
    assert_eq!(a.shape(), vec![1, 3]);
    a.squeeze_(0usize)?;
    assert_eq!(a.shape(), vec![3]);
    let b = Tensor::zeros(&[1, 3, 1], DType::F32)?;
    b.squeeze_(None)?;
    assert_eq!(b.shape(), vec![3]);
    // slice: start/end plain, Some or None; step any integer type
    same(
        &x.slice(2, 1usize, None, 2usize)?,
        &x.slice(-1i64, Some(1), Some(4), 2i32)?,
    );
    same(&x.slice(1, None, -1i32, 1)?, &x.slice(1, 0, 2, 1)?);
    // as_strided: sizes and strides in any list form, the offset plain, Some or None
    let f = x.flatten(0, -1)?;
    same(
        &f.as_strided([2usize, 2], vec![1i64, 2], 1usize)?,
        &f.as_strided(&[2i32, 2], &[1i32, 2], Some(1))?,
    );
    same(&f.as_strided([3], [2], None)?, &f.as_strided([3], [2], 0)?);
    // tril / triu / one_hot / linspace / eye / randperm / multinomial
    let m = Tensor::ones(&[3, 3], DType::F32)?;
    same(&m.tril(-1i32)?, &m.tril(-1i64)?);
    same(&m.triu(1usize)?, &m.triu(1i64)?);
    let y = Tensor::from_vec(vec![0i64, 2], &[2])?;
    same(&y.one_hot(3usize)?, &y.one_hot(-1i64)?);
    same(
        &Tensor::linspace(0.0, 1.0, 5usize, DType::F64)?,
        &Tensor::linspace(0.0, 1.0, 5i64, DType::F64)?,
    );
    same(
        &Tensor::eye(3usize, DType::I64)?,
        &Tensor::eye(3i32, DType::I64)?,
    );
    assert_eq!(Tensor::randperm(4u32, None)?.shape(), vec![4]);
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    assert_eq!(w.multinomial(2i64, false, None)?.shape(), vec![2]);
    // sparse: constructor shapes and slice bounds in any list form, sparse_dim any type
    let i = Tensor::from_vec(vec![0i64, 1, 2, 0], &[2, 2])?;
    let v = Tensor::from_vec(vec![3.0f32, 4.0], &[2])?;
    let s = Tensor::sparse_coo(&i, &v, [2i64, 3])?;
    same(
        &s.to_dense()?,
        &Tensor::sparse_coo(&i, &v, vec![2usize, 3])?.to_dense()?,
    );
    same(
        &s.sparse_slice([1usize], [1u32], [3i64])?.to_dense()?,
        &s.sparse_slice(&[-1i64], &[1i64], &[3i64])?.to_dense()?,
    );
    let crow = Tensor::from_vec(vec![0i64, 1, 2], &[3])?;
    let col = Tensor::from_vec(vec![1i64, 0], &[2])?;
    same(
        &Tensor::sparse_csr(&crow, &col, &v, [2i32, 2])?.to_dense()?,
        &Tensor::sparse_csr(&crow, &col, &v, &[2usize, 2])?.to_dense()?,
    );
    let d = Tensor::from_vec(vec![0.0f32, 0.0, 1.0, 2.0], &[2, 2])?;
    same(
        &d.to_sparse_coo(1usize)?.values()?,
        &d.to_sparse_coo(1i64)?.values()?,
    );
    Ok(())
}

/// Negative counts and offsets of those ops are refused with PyTorch's messages (checked in
/// torch 2.15); values beyond int64 are refused, not truncated.
#[test]
fn remaining_int_args_refuse_bad_values() {
    let x = x();
    let cases: Vec<(tapegrad::Result<Tensor>, &str, &str)> = vec![
        (
            Tensor::linspace(0.0, 1.0, -1, DType::F32),
            "linspace",
            "number of steps must be non-negative",
        ),
        (
            Tensor::eye(-1, DType::F32),
            "eye",
            "n must be greater or equal to 0, got -1",
        ),
        (
            Tensor::randperm(-1, None),
            "randperm",
            "Trying to create tensor with negative dimension -1: [-1]",
        ),
        (
            Tensor::ones(&[3], DType::F32)
                .unwrap()
                .multinomial(-1, true, None),
            "multinomial",
            "cannot sample n_sample <= 0 samples",
        ),
        (
            x.flatten(0, -1).unwrap().as_strided([2], [1], -1),
            "as_strided",
            "Tensor: invalid storage offset -1",
        ),
    ];
    refused(cases);
    let big = i64::MAX as usize + 1;
    for (r, op) in [
        (x.argmax(big, false), "argmax"),
        (x.slice(0, big, None, 1), "slice"),
        (x.slice(0, None, None, big), "slice"),
        (x.tril(big), "tril"),
        (Tensor::eye(big, DType::F32), "eye"),
    ] {
        let e = r.unwrap_err();
        assert_eq!((e.kind(), e.op()), (ErrorKind::InvalidArgument, op));
    }
    let e = Tensor::from_vec(vec![1.0f32, 0.0], &[2])
        .unwrap()
        .to_sparse_coo(-1)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // nothing changed
    assert_eq!((x.shape(), x.version()), (vec![2, 3, 4], 0));
}
