//! Indexing: getitem views/copies, setitem, index_put_, errors, grads (fixtures indexing.json).

use crate::common::f64s;
use tapegrad::autograd::{gradcheck, no_grad};
use tapegrad::{DType, ErrorKind, NewAxis, Tensor, TensorIndex as I};

fn ar(n: i64, shape: &[i64], dt: DType) -> Tensor {
    Tensor::arange(0, n, 1)
        .unwrap()
        .to_dtype(dt)
        .unwrap()
        .view(shape)
        .unwrap()
}
fn sl(a: Option<i64>, b: Option<i64>, s: i64) -> I {
    I::Slice {
        start: a,
        stop: b,
        step: s,
    }
}
fn it(v: Vec<i64>, s: &[usize]) -> Tensor {
    Tensor::from_vec(v, s).unwrap()
}
#[test]
fn int_and_slice_views() {
    let x = ar(12, &[3, 4], DType::F32);
    let row = x.i(1).unwrap();
    assert_eq!(
        (f64s(&row), row.strides(), row.storage_offset()),
        (vec![4., 5., 6., 7.], vec![1], 4)
    );
    assert!(row.is_view() && row.shares_storage(&x));
    let e = x.i((-1, -2)).unwrap();
    assert_eq!(
        (e.shape(), e.storage_offset(), e.item::<f32>().unwrap()),
        (vec![], 10, 10.0)
    );
    let c = x.i((.., -1)).unwrap();
    assert_eq!(
        (f64s(&c), c.strides(), c.storage_offset()),
        (vec![3., 7., 11.], vec![4], 3)
    );

    let x = ar(24, &[4, 6], DType::F64);
    let a = x.index(&[sl(None, None, 2), sl(Some(1), None, 2)]).unwrap();
    assert_eq!(
        (a.shape(), f64s(&a)),
        (vec![2, 3], vec![1., 3., 5., 13., 15., 17.])
    );
    let c = x
        .index(&[sl(Some(-2), None, 1), sl(Some(-100), Some(2), 1)])
        .unwrap();
    assert_eq!(f64s(&c), vec![12., 13., 18., 19.]);
    #[allow(clippy::reversed_empty_ranges)] // x[3:1] is empty, as in PyTorch
    let e = x.i((3..1, ..)).unwrap();
    assert_eq!(e.shape(), vec![0, 6]);
    let d = x.index(&[sl(None, None, 3)]).unwrap();
    assert_eq!(d.shape(), vec![2, 6]);
}

#[test]
fn none_ellipsis_alias() {
    let x = ar(24, &[2, 3, 4], DType::F32);
    assert_eq!(x.i(NewAxis).unwrap().shape(), vec![1, 2, 3, 4]);
    assert_eq!(
        x.index(&[I::Ellipsis, I::NewAxis]).unwrap().shape(),
        vec![2, 3, 4, 1]
    );
    assert_eq!(x.i((.., NewAxis, 1)).unwrap().shape(), vec![2, 1, 4]);
    let em = x.index(&[I::Int(0), I::Ellipsis, I::Int(2)]).unwrap();
    assert_eq!(f64s(&em), vec![2., 6., 10.]);
    let all = x.index(&[I::Ellipsis]).unwrap();
    assert!(all.is_view() && !all.is_same(&x) && all.shares_storage(&x));
    assert_eq!(
        x.index(&[I::NewAxis, I::Ellipsis, I::NewAxis])
            .unwrap()
            .shape(),
        vec![1, 2, 3, 4, 1]
    );
}

#[test]
fn bool_scalar_and_masks() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    let t = x.i(true).unwrap();
    assert_eq!(
        (t.shape(), t.is_view(), t.shares_storage(&x)),
        (vec![1, 3], false, false)
    );
    assert_eq!(x.i(false).unwrap().shape(), vec![0, 3]);
    assert_eq!(f64s(&x.i((true, 1)).unwrap()), vec![2.0]);

    let x = Tensor::from_vec(vec![1.0f32, -2., 3., -4., 5., -6.], &[2, 3]).unwrap();
    let m = Tensor::from_vec(vec![true, false, true, false, true, false], &[2, 3]).unwrap();
    assert_eq!(f64s(&x.i(&m).unwrap()), vec![1., 3., 5.]);
    let r = Tensor::from_vec(vec![false, true], &[2]).unwrap();
    let rm = x.i(&r).unwrap();
    assert_eq!((rm.shape(), f64s(&rm)), (vec![1, 3], vec![-4., 5., -6.]));
    let c = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    assert_eq!(f64s(&x.i((.., &c)).unwrap()), vec![1., 3., -4., -6.]);
    let e = x.i(&c).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(
        e.message(),
        "The shape of the mask [3] at index 0 does not match the shape of the indexed tensor [2, 3] at index 0"
    );
}

#[test]
fn int_tensor_and_numpy_placement() {
    let x = ar(12, &[4, 3], DType::F32);
    let i = it(vec![2, 0, -1, 2], &[4]);
    let rows = x.i(&i).unwrap();
    assert_eq!(
        f64s(&rows),
        vec![6., 7., 8., 0., 1., 2., 9., 10., 11., 6., 7., 8.]
    );
    assert!(!rows.is_view() && !rows.shares_storage(&x));
    let j = it(vec![0, 1, 3, 3], &[2, 2]);
    assert_eq!(x.i(&j).unwrap().shape(), vec![2, 2, 3]);
    let k = Tensor::from_vec(vec![1i32, 0], &[2]).unwrap();
    assert_eq!(
        f64s(&x.i((.., &k)).unwrap()),
        vec![1., 0., 4., 3., 7., 6., 10., 9.]
    );
    assert_eq!(f64s(&x.i((&i, 1)).unwrap()), vec![7., 1., 10., 7.]);

    let x = ar(24, &[2, 3, 4], DType::F64);
    let i = it(vec![1, 0], &[2]);
    let j = it(vec![3, 1], &[2]);
    let adj = x.i((.., &i)).unwrap();
    assert_eq!(adj.shape(), vec![2, 2, 4]);
    assert_eq!(f64s(&adj)[..4], [4., 5., 6., 7.]);
    let sep = x.i((&i, .., &j)).unwrap();
    assert_eq!(
        (sep.shape(), f64s(&sep)),
        (vec![2, 3], vec![15., 19., 23., 1., 5., 9.])
    );
    assert_eq!(f64s(&x.i((.., &i, &j)).unwrap()), vec![7., 1., 19., 13.]);
    assert_eq!(x.i((&i, 1..3)).unwrap().shape(), vec![2, 2, 4]);
    assert_eq!(
        x.index(&[I::Ellipsis, I::Tensor(j.clone())])
            .unwrap()
            .shape(),
        vec![2, 3, 2]
    );

    let x = ar(12, &[3, 4], DType::F64);
    let r = it(vec![0, 2], &[2, 1]);
    let c = it(vec![1, 3, 0], &[3]);
    assert_eq!(f64s(&x.i((&r, &c)).unwrap()), vec![1., 3., 0., 9., 11., 8.]);
}

#[test]
fn index_errors() {
    let x = ar(6, &[2, 3], DType::F32);
    let chk = |r: tapegrad::Result<Tensor>, k: ErrorKind, m: &str| {
        let e = r.err().unwrap();
        assert_eq!(e.kind(), k);
        assert_eq!(e.message(), m);
    };
    chk(
        x.i(2),
        ErrorKind::IndexOutOfRange,
        "index 2 is out of bounds for dimension 0 with size 2",
    );
    chk(
        x.i((0, -4)),
        ErrorKind::IndexOutOfRange,
        "index -4 is out of bounds for dimension 1 with size 3",
    );
    chk(
        x.i((0, 1, 0)),
        ErrorKind::IndexOutOfRange,
        "too many indices for tensor of dimension 2",
    );
    chk(
        x.i(it(vec![0, 5], &[2])),
        ErrorKind::IndexOutOfRange,
        "index 5 is out of bounds for dimension 0 with size 2",
    );
    let f = Tensor::from_vec(vec![0.0f32, 1.0], &[2]).unwrap();
    assert_eq!(x.i(&f).unwrap_err().kind(), ErrorKind::DTypeMismatch);
    assert!(x.index(&[sl(None, None, 0)]).is_err());
    assert!(x.index(&[sl(None, None, -1)]).is_err());
    assert!(x.index(&[I::Ellipsis, I::Ellipsis]).is_err());
    assert_eq!(x.version(), 0);
}

#[test]
fn setitem_scalar_and_tensor() {
    let x = Tensor::zeros(&[3, 4], DType::F32).unwrap();
    let r = x.select(0, 2).unwrap();
    x.i_set(1, 5.0).unwrap();
    assert_eq!((x.version(), r.version()), (1, 1));
    x.index_set(&[sl(None, None, 1), sl(None, None, 2)], -1.0)
        .unwrap();
    assert_eq!((f64s(&r), x.version()), (vec![-1., 0., -1., 0.], 2));
    x.i_set((2, -1), 7.0).unwrap();
    assert_eq!(f64s(&r), vec![-1., 0., -1., 7.]);
    x.index_set(&[I::Ellipsis], 0.5).unwrap();
    assert_eq!((f64s(&r), x.version()), (vec![0.5; 4], 4));

    let x = Tensor::zeros(&[3, 3], DType::F64).unwrap();
    x.i_set(1.., Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3]).unwrap())
        .unwrap();
    x.i_set(
        (.., 0..1),
        Tensor::from_vec(vec![10.0, 20.0, 30.0], &[3, 1]).unwrap(),
    )
    .unwrap();
    let m = x.gt_mask(2.5);
    x.i_set(&m, Tensor::scalar(-1.0f64)).unwrap();
    assert_eq!(f64s(&x), vec![-1., 0., 0., -1., 2., -1., -1., 2., -1.]);
    assert_eq!(x.version(), 3);
}

trait Gt {
    fn gt_mask(&self, v: f64) -> Tensor;
}
impl Gt for Tensor {
    fn gt_mask(&self, v: f64) -> Tensor {
        let b: Vec<bool> = f64s(self).iter().map(|&a| a > v).collect();
        Tensor::from_vec(b, &self.shape()).unwrap()
    }
}

#[test]
fn setitem_advanced_and_errors() {
    let x = Tensor::zeros(&[4, 2], DType::F32).unwrap();
    let i = it(vec![3, 0], &[2]);
    x.i_set(
        &i,
        Tensor::from_vec(vec![1.0f32, 2., 3., 4.], &[2, 2]).unwrap(),
    )
    .unwrap();
    x.i_set((&i, 1), 9.0).unwrap();
    assert_eq!(f64s(&x), vec![3., 9., 0., 0., 0., 0., 1., 9.]);
    let v64 = Tensor::from_vec(vec![1.0f64, 2., 3., 4.], &[2, 2]).unwrap();
    let e = x.i_set(&i, &v64).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(
        e.message(),
        "Index put requires the source and destination dtypes match, got Float for the destination and Double for the source."
    );
    assert_eq!(x.version(), 2);
    x.i_set(0..2, &v64).unwrap();
    assert_eq!(
        (f64s(&x), x.version()),
        (vec![1., 2., 3., 4., 0., 0., 1., 9.], 3)
    );

    let n = Tensor::zeros(&[3], DType::I64).unwrap();
    n.i_set(it(vec![0, 2], &[2]), 1.9).unwrap();
    n.i_set(1..3, Tensor::from_vec(vec![2.9f32, -2.9], &[2]).unwrap())
        .unwrap();
    assert_eq!(n.to_vec::<i64>().unwrap(), vec![1, 2, -2]);

    let x = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    let e = x
        .i_set(0, Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = x
        .i_set(
            it(vec![0, 1], &[2]),
            Tensor::ones(&[3, 3], DType::F32).unwrap(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(
        e.message(),
        "shape mismatch: value tensor of shape [3, 3] cannot be broadcast to indexing result of shape [2, 3]"
    );
    // (False,): an index_put_ on zero rows: nothing written, but one version bump like PyTorch's
    // `x[(False,)] = v` (only Python's bare `x[False] = v` shortcut skips the bump)
    x.i_set(false, 1.0).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![0.0; 6], 1));
    x.i_set((false, 1), Tensor::ones(&[1], DType::F32).unwrap())
        .unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![0.0; 6], 2));
    let e = x
        .i_set(false, Tensor::ones(&[2], DType::F32).unwrap())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    // (True,): every element
    x.i_set(true, 2.0).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![2.0; 6], 3));
}

#[test]
fn setitem_aliasing_source() {
    // PyTorch semantics: a value that partially overlaps the destination is an error (clone it
    // first), leaving everything unchanged; a full overlap (the same elements in the same order)
    // is a no-op copy; a 0-dim value is read before the fill.
    let x = Tensor::from_vec(vec![1.0f64, 2., 3., 4.], &[4]).unwrap();
    let overlap_msg = "unsupported operation: some elements of the input tensor and the written-to tensor refer to a single memory location. Please copy() the tensor (a `clone()` of a `Tensor` is the same tensor) before performing the operation.";
    for r in [
        x.i_set(1.., x.i(..3).unwrap()),
        x.i_set(..3, x.i(1..).unwrap()),
        x.i_set(it(vec![3, 2, 1, 0], &[4]), &x),
        x.i_set(it(vec![3, 2, 1, 0], &[4]), x.i(..).unwrap()),
        x.i_set(it(vec![1, 2, 3], &[3]), x.i(..3).unwrap()),
        x.index_put_(&[Some(it(vec![3, 2, 1, 0], &[4]))], &x, false)
            .map(|_| ()),
        x.index_put_(&[Some(it(vec![0], &[1]))], &x.i(1..2).unwrap(), true)
            .map(|_| ()),
    ] {
        let e = r.unwrap_err();
        assert_eq!(
            (e.kind(), e.message()),
            (ErrorKind::InvalidArgument, overlap_msg)
        );
    }
    assert_eq!((f64s(&x), x.version()), (vec![1., 2., 3., 4.], 0));
    let w = Tensor::from_vec(vec![1.0f64, 2., 3., 4.], &[2, 2]).unwrap();
    let e = w.index_set(&[I::Ellipsis], w.t().unwrap()).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!((f64s(&w), w.version()), (vec![1., 2., 3., 4.], 0));
    // full overlap: allowed, values unchanged, one bump
    w.index_set(&[I::Ellipsis], &w).unwrap();
    assert_eq!((f64s(&w), w.version()), (vec![1., 2., 3., 4.], 1));
    // a 0-dim value inside the destination fills with its old value
    x.i_set(.., x.i(0).unwrap()).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![1.0; 4], 1));
    // advanced: index_put_ checks the 0-dim value against the whole (dense) destination
    let e = w.i_set(it(vec![1], &[1]), w.i((0, 1)).unwrap());
    assert_eq!(e.unwrap_err().kind(), ErrorKind::InvalidArgument);
    // ... unless the destination view is not dense (column 0 of w), as in PyTorch
    w.i_set((&it(vec![1], &[1]), 0), w.i((0, 1)).unwrap())
        .unwrap();
    assert_eq!((f64s(&w), w.version()), (vec![1., 2., 2., 4.], 2));
    // the usual fix: a copy such as flip (or clone) does not alias
    let x = Tensor::from_vec(vec![1.0f64, 2., 3., 4.], &[4]).unwrap();
    x.i_set(.., x.flip(&[0]).unwrap()).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![4., 3., 2., 1.], 1));
    x.i_set(it(vec![0, 1], &[2]), x.flip(&[0]).unwrap().i(..2).unwrap())
        .unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![1., 2., 2., 1.], 2));
    // the same tensor always overlaps itself, even when strided
    let b = Tensor::from_vec(vec![1.0f64, 2., 3., 4., 5., 6.], &[6]).unwrap();
    let e = b.slice(0, None, None, 2).unwrap();
    let perm = it(vec![2, 1, 0], &[3]);
    assert_eq!(
        e.i_set(&perm, &e).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // two distinct non-dense aliases are "too hard" for the overlap check and pass, as in
    // PyTorch; tapegrad reads the values before writing (PyTorch's result here depends on its
    // kernel's write order: [1, 2, 3, 4, 1, 6])
    e.i_set(&perm, b.slice(0, None, None, 2).unwrap()).unwrap();
    assert_eq!(f64s(&b), vec![5., 2., 3., 4., 1., 6.]);
}

#[test]
fn zero_dim_tensor_indices() {
    let x = ar(12, &[3, 4], DType::F32);
    // a 0-dim int tensor selects (a view), a 0-dim bool tensor acts like the Python bool
    let a = x.i(Tensor::scalar(1i64)).unwrap();
    assert_eq!(
        (a.shape(), a.is_view(), a.storage_offset()),
        (vec![4], true, 4)
    );
    let b = x.i((.., &Tensor::scalar(-1i64))).unwrap();
    assert_eq!(f64s(&b.to_dtype(DType::F64).unwrap()), vec![3., 7., 11.]);
    let c = x.i(Tensor::scalar(true)).unwrap();
    assert_eq!((c.shape(), c.is_view()), (vec![1, 3, 4], false));
    let d = x.i(Tensor::scalar(false)).unwrap();
    assert_eq!(d.shape(), vec![0, 3, 4]);
    let e = x.i((0, &Tensor::scalar(true))).unwrap();
    assert_eq!(e.shape(), vec![1, 4]);
    let y = Tensor::zeros(&[3], DType::F32).unwrap();
    y.i_set(Tensor::scalar(false), 2.0).unwrap();
    assert_eq!((y.to_vec::<f32>().unwrap(), y.version()), (vec![0.0; 3], 1));
    y.i_set(Tensor::scalar(true), 2.0).unwrap();
    assert_eq!((y.to_vec::<f32>().unwrap(), y.version()), (vec![2.0; 3], 2));
}

#[test]
fn index_put_semantics() {
    let x = Tensor::zeros(&[5], DType::F64).unwrap();
    let i = it(vec![0, 2, 0, 4, 0], &[5]);
    x.index_put_(
        &[Some(i)],
        &Tensor::from_vec(vec![1.0, 2., 3., 4., 5.], &[5]).unwrap(),
        true,
    )
    .unwrap();
    let j = it(vec![1, 3], &[2]);
    x.index_put_(
        &[Some(j.clone())],
        &Tensor::from_vec(vec![-1.0, -3.0], &[2]).unwrap(),
        false,
    )
    .unwrap();
    x.index_put_(&[Some(j)], &Tensor::scalar(0.5f64), true)
        .unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![9., -0.5, 2., -2.5, 4.], 3));
    // last write wins without accumulate
    let y = Tensor::zeros(&[2], DType::F64).unwrap();
    y.index_put_(
        &[Some(it(vec![0, 0], &[2]))],
        &Tensor::from_vec(vec![1.0, 2.0], &[2]).unwrap(),
        false,
    )
    .unwrap();
    assert_eq!(f64s(&y), vec![2.0, 0.0]);

    let x = Tensor::zeros(&[3, 3], DType::F32).unwrap();
    let r = it(vec![0, 1, 2], &[3]);
    let c = it(vec![2, 1, 0], &[3]);
    x.index_put_(
        &[Some(r), Some(c)],
        &Tensor::from_vec(vec![1.0f32, 2., 3.], &[3]).unwrap(),
        false,
    )
    .unwrap();
    let xt = x.t().unwrap();
    xt.index_put_(
        &[Some(it(vec![0], &[1]))],
        &Tensor::from_vec(vec![7.0f32, 8., 9.], &[3]).unwrap(),
        true,
    )
    .unwrap();
    assert_eq!(f64s(&x), vec![7., 0., 1., 8., 2., 0., 12., 0., 0.]);
    assert_eq!((x.version(), xt.version()), (2, 2));

    let x = Tensor::zeros(&[3], DType::F32).unwrap();
    let e = x
        .index_put_(
            &[Some(it(vec![1], &[1]))],
            &Tensor::from_vec(vec![1.0f64], &[1]).unwrap(),
            false,
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    let e = x
        .index_put_(
            &[Some(it(vec![3], &[1]))],
            &Tensor::from_vec(vec![1.0f32], &[1]).unwrap(),
            false,
        )
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::IndexOutOfRange,
            "index 3 is out of bounds for dimension 0 with size 3"
        )
    );
    assert_eq!((f64s(&x), x.version()), (vec![0.0; 3], 0));
}

fn leaf(v: Vec<f64>, s: &[usize]) -> Tensor {
    Tensor::from_vec(v, s)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

#[test]
fn getitem_grads_fixture() {
    let x = leaf(vec![1., 2., 3., 4., 5., 6.], &[2, 3]);
    let i = it(vec![1, 1, 0], &[3]);
    let a = x.index(&[sl(None, None, 1), sl(None, None, 2)]).unwrap();
    let b = x.i((.., &i)).unwrap();
    assert_eq!(b.grad_fn().unwrap().name(), "IndexBackward0");
    let c = x.i((1, -1)).unwrap();
    let l = a
        .mul(&a)
        .unwrap()
        .sum()
        .unwrap()
        .add(b.mul(10.0).unwrap().sum().unwrap())
        .unwrap()
        .add(c.mul(100.0).unwrap())
        .unwrap();
    l.backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![12., 20., 6., 18., 20., 112.]);

    let x = Tensor::from_vec(vec![1.0f32, 2., -3., 4.], &[2, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let m = Tensor::from_vec(vec![true, false, true, true], &[2, 2]).unwrap();
    let y = x.i(&m).unwrap();
    y.mul(Tensor::from_vec(vec![1.0f32, 2., 3.], &[3]).unwrap())
        .unwrap()
        .sum()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(
        x.grad().unwrap().to_vec::<f32>().unwrap(),
        vec![1., 0., 2., 3.]
    );
}

#[test]
fn setitem_grads_and_leaf_errors() {
    let x = leaf(vec![1., 2., 3., 4., 5., 6.], &[3, 2]);
    let v = leaf(vec![10., 20.], &[2]);
    let b = x.copy().unwrap();
    b.i_set(1, &v).unwrap();
    assert_eq!(b.version(), 1);
    b.mul(&b).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![2., 4., 0., 0., 10., 12.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![20., 40.]);

    let x = leaf(vec![1., 2.], &[2]);
    let e = x.i_set(0, 5.0).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::LeafInplace,
            "a view of a leaf Variable that requires grad is being used in an in-place operation."
        )
    );
    let e = x.i_set(it(vec![0], &[1]), 5.0).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::LeafInplace,
            "a leaf Variable that requires grad is being used in an in-place operation."
        )
    );
    assert_eq!((f64s(&x), x.version()), (vec![1., 2.], 0));
    {
        let _g = no_grad();
        x.i_set(it(vec![0], &[1]), 5.0).unwrap();
    }
    assert_eq!(f64s(&x), vec![5., 2.]);
}

#[test]
fn index_put_grads_fixture() {
    let x = leaf(vec![0., 1., 2., 3.], &[4]);
    let v = leaf(vec![0.5, 1.0, 3.0], &[3]);
    let i = it(vec![3, 1, 3], &[3]);
    let y = x.index_put(&[Some(i.clone())], &v, true).unwrap();
    assert_eq!(f64s(&y), vec![0., 2., 2., 6.5]);
    y.mul(&y).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![0., 4., 4., 13.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![13., 4., 13.]);
    // non-accumulate: duplicate positions all get grad; self grad zeroed at written positions
    let x = leaf(vec![0., 1., 2., 3.], &[4]);
    let v = leaf(vec![5., 6.], &[2]);
    let y = x
        .index_put(&[Some(it(vec![0, 0], &[2]))], &v, false)
        .unwrap();
    y.sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![0., 1., 1., 1.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![1., 1.]);
}

#[test]
fn gradchecks() {
    let i = it(vec![2, 0, 2, 1], &[4]);
    let j = it(vec![1, 1, 0, 2], &[4]);
    let x = Tensor::randn(&[3, 3], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let (i2, j2) = (i.clone(), j.clone());
    gradcheck(
        move |xs| xs[0].i((&i2, &j2)),
        std::slice::from_ref(&x),
        Default::default(),
    )
    .unwrap();
    let i2 = i.clone();
    gradcheck(
        move |xs| xs[0].t()?.i((.., &i2)),
        std::slice::from_ref(&x),
        Default::default(),
    )
    .unwrap();
    let i2 = it(vec![1, 0], &[2]);
    gradcheck(
        move |xs| {
            xs[0]
                .i((0..3, ..))
                .and_then(|s| s.slice(1, None, None, 2))
                .and_then(|s| s.i(&i2))
        },
        std::slice::from_ref(&x),
        Default::default(),
    )
    .unwrap();
    let e = Tensor::randn(&[3], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let i2 = i.clone();
    gradcheck(
        move |xs| xs[0].expand(&[4, 3])?.i((&i2, ..)),
        std::slice::from_ref(&e),
        Default::default(),
    )
    .unwrap();
    let v = Tensor::randn(&[4], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    for acc in [true, false] {
        let (i2, j2) = (i.clone(), j.clone());
        gradcheck(
            move |xs| xs[0].index_put(&[Some(i2.clone()), Some(j2.clone())], &xs[1], acc),
            &[x.clone(), v.clone()],
            Default::default(),
        )
        .unwrap();
    }
    let m = Tensor::from_vec(
        vec![true, false, true, true, false, false, true, true, true],
        &[3, 3],
    )
    .unwrap();
    gradcheck(
        move |xs| xs[0].i(&m),
        std::slice::from_ref(&x),
        Default::default(),
    )
    .unwrap();
}

#[test]
fn setitem_through_views_copyslices() {
    // basic setitem into a view of a non-leaf: the base's version is bumped (shared counter), its
    // grad_fn becomes CopySlices, and grads flow to the base (zero where overwritten) and value
    let x = leaf(vec![1., 2., 3., 4., 5., 6.], &[2, 3]);
    let v = leaf(vec![10., 20.], &[2]);
    let b = x.mul(1.0).unwrap();
    let col = b.i((.., 1..)).unwrap();
    col.i_set((.., 0), &v).unwrap();
    assert_eq!((b.version(), col.version()), (1, 1));
    assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(f64s(&b), vec![1., 10., 3., 4., 20., 6.]);
    b.mul(&b).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![2., 0., 6., 8., 0., 12.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![20., 40.]);

    // advanced setitem through a transposed view: index_put_ wrapped in CopySlices
    let x = leaf(vec![1., 2., 3., 4., 5., 6.], &[2, 3]);
    let v = leaf(vec![10., 20.], &[2]);
    let b = x.mul(2.0).unwrap();
    let bt = b.t().unwrap();
    bt.i_set(it(vec![2], &[1]), &v).unwrap();
    assert_eq!(
        (f64s(&b), b.version(), b.grad_fn().unwrap().name()),
        (vec![2., 4., 10., 8., 10., 20.], 1, "CopySlices")
    );
    b.mul(&x).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![4., 8., 10., 16., 20., 20.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![3., 6.]);

    // a sibling view taken before the write sees it and shares the bumped version
    let base = Tensor::zeros(&[3, 4], DType::F32).unwrap();
    let w = base.select(1, 0).unwrap();
    let s = base.i((1.., sl(None, None, 2))).unwrap();
    s.i_set(0, 1.0).unwrap();
    s.i_set((.., &it(vec![1], &[1])), 2.0).unwrap();
    assert_eq!((base.version(), w.version(), s.version()), (2, 2, 2));
    assert_eq!(w.to_vec::<f32>().unwrap(), vec![0., 1., 0.]);
    assert_eq!(
        base.to_vec::<f32>().unwrap(),
        vec![0., 0., 0., 0., 1., 0., 2., 0., 0., 0., 2., 0.]
    );
}

#[test]
fn setitem_value_requiring_grad_into_plain_tensor() {
    // writing a grad-requiring value makes the plain destination require grad (non-leaf)
    let x = Tensor::zeros(&[4], DType::F64).unwrap();
    let v = leaf(vec![1., 2.], &[2]);
    x.i_set(1..3, &v).unwrap();
    assert!(x.requires_grad() && !x.is_leaf());
    let w = leaf(vec![3.], &[1]);
    // broadcast value, duplicate index (last write wins): every duplicate still gets grad
    x.i_set(it(vec![0, 3, 0], &[3]), &w).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![3., 1., 2., 3.], 2));
    x.mul(&x).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&v.grad().unwrap()), vec![2., 4.]);
    assert_eq!(f64s(&w.grad().unwrap()), vec![18.]);
}

#[test]
fn index_put_broadcast_value_grads() {
    // accumulate with duplicates and a broadcast value: the value grad is summed to its shape
    let x = leaf(vec![1., 2., 3., 4.], &[4]);
    let v = leaf(vec![0.5], &[1]);
    let b = x.mul(1.0).unwrap();
    b.index_put_(&[Some(it(vec![1, 3, 1], &[3]))], &v, true)
        .unwrap();
    assert_eq!(b.grad_fn().unwrap().name(), "IndexPutBackward0");
    assert_eq!(f64s(&b), vec![1., 3., 3., 4.5]);
    b.mul(&b).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&x.grad().unwrap()), vec![2., 6., 6., 9.]);
    assert_eq!(f64s(&v.grad().unwrap()), vec![21.]);
}

#[test]
fn setitem_and_index_put_gradchecks() {
    let x = Tensor::randn(&[3, 4], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let row = Tensor::randn(&[4], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let one = Tensor::randn(&[1], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    // basic setitem (CopySlices) into a clone, w.r.t. base and value
    gradcheck(
        |xs| {
            let b = xs[0].copy()?;
            b.i_set(1, &xs[1])?;
            b.mul(&xs[0])
        },
        &[x.clone(), row.clone()],
        Default::default(),
    )
    .unwrap();
    // stepped slice through a view, broadcast [1] value
    gradcheck(
        |xs| {
            let b = xs[0].mul(1.5)?;
            b.t()?.index_set(&[sl(Some(1), None, 2)], &xs[1])?;
            Ok(b)
        },
        &[x.clone(), one.clone()],
        Default::default(),
    )
    .unwrap();
    // advanced setitem, w.r.t. base and value. (With duplicate indices and no accumulate the
    // last write wins while every duplicate gets grad, as in PyTorch: not a derivative that
    // finite differences can confirm, so duplicates are gradchecked with accumulate only.)
    let dup = it(vec![2, 0, 2], &[3]);
    let perm = it(vec![2, 0, 1], &[3]);
    let vals = Tensor::randn(&[3, 4], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let d2 = perm.clone();
    gradcheck(
        move |xs| {
            let b = xs[0].copy()?;
            b.i_set(&d2, &xs[1])?;
            Ok(b)
        },
        &[x.clone(), vals.clone()],
        Default::default(),
    )
    .unwrap();
    // in-place index_put_ accumulate with duplicates and a broadcast value
    for (acc, idx) in [(true, &dup), (false, &perm)] {
        let d2 = idx.clone();
        gradcheck(
            move |xs| {
                let b = xs[0].mul(1.0)?;
                b.index_put_(&[Some(d2.clone())], &xs[1], acc)?;
                b.mul(&b)
            },
            &[x.clone(), row.clone()],
            Default::default(),
        )
        .unwrap();
    }
    // bool-mask setitem
    let m = Tensor::from_vec(
        vec![
            true, false, false, true, false, true, true, false, false, false, true, true,
        ],
        &[3, 4],
    )
    .unwrap();
    gradcheck(
        move |xs| {
            let b = xs[0].copy()?;
            b.i_set(&m, &xs[1])?;
            b.sum_dims(&[1], false)
        },
        &[x.clone(), one.clone()],
        Default::default(),
    )
    .unwrap();
}

#[test]
fn setitem_errors_leave_everything_unchanged() {
    let x = ar(6, &[2, 3], DType::F32);
    let snapshot = |t: &Tensor| (t.to_vec::<f32>().unwrap(), t.version(), t.shape());
    let before = snapshot(&x);
    let v3 = Tensor::ones(&[3], DType::F32).unwrap();
    let m_bad = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    let errs = [
        (x.i_set(2, 1.0), ErrorKind::IndexOutOfRange),
        (x.i_set((0, 1, 0), 1.0), ErrorKind::IndexOutOfRange),
        (
            x.i_set(it(vec![0, 2], &[2]), 1.0),
            ErrorKind::IndexOutOfRange,
        ),
        (x.i_set(&m_bad, 1.0), ErrorKind::ShapeMismatch),
        (
            x.i_set(Tensor::from_vec(vec![0.0f32], &[1]).unwrap(), 1.0),
            ErrorKind::DTypeMismatch,
        ),
        (
            x.i_set(0, Tensor::ones(&[2], DType::F32).unwrap()),
            ErrorKind::ShapeMismatch,
        ),
        (
            x.i_set(0, Tensor::ones(&[2, 3], DType::F32).unwrap()),
            ErrorKind::ShapeMismatch,
        ),
        (
            x.i_set(it(vec![1], &[1]), Tensor::ones(&[3], DType::F64).unwrap()),
            ErrorKind::DTypeMismatch,
        ),
        (
            x.index_set(&[sl(None, None, -1)], &v3),
            ErrorKind::InvalidArgument,
        ),
        (
            x.index_set(&[I::Ellipsis, I::Ellipsis], 1.0),
            ErrorKind::InvalidArgument,
        ),
    ];
    for (r, k) in errs {
        assert_eq!(r.unwrap_err().kind(), k);
        assert_eq!(snapshot(&x), before);
    }
    // a failed setitem on a leaf requiring grad leaves no grad_fn behind
    let l = leaf(vec![1., 2.], &[2]);
    assert_eq!(l.i_set(0, 3.0).unwrap_err().kind(), ErrorKind::LeafInplace);
    assert!(l.is_leaf() && l.grad_fn().is_none() && l.version() == 0);
}

#[test]
fn one_index_tensor_on_a_strided_source() {
    // x[:, idx] with a 2-D index (negatives) on a permuted source: out[a, p, q, b] =
    // x[a, idx[p, q], b], each element checked against the source's own reads
    let base = ar(24, &[2, 3, 4], DType::F32);
    let x = base.permute(&[2, 1, 0]).unwrap(); // [4, 3, 2], not contiguous
    let idx = it(vec![-1, 0, 2, 1, 0, -3], &[3, 2]);
    let out = x.i((.., &idx)).unwrap();
    assert_eq!(out.shape(), vec![4, 3, 2, 2]);
    assert!(out.is_contiguous() && !out.is_view());
    let (xv, ov, iv) = (
        f64s(&x.contiguous().unwrap()),
        f64s(&out),
        [2, 0, 2, 1, 0, 0],
    );
    for a in 0..4 {
        for (pq, &r) in iv.iter().enumerate() {
            for b in 0..2 {
                assert_eq!(ov[(a * 6 + pq) * 2 + b], xv[(a * 3 + r) * 2 + b]);
            }
        }
    }
    // a 0-dim index removes the dim; an empty one keeps it with size 0
    let zero = x
        .index_tensors(&[None, Some(Tensor::scalar(-2i64))])
        .unwrap();
    assert_eq!((zero.shape(), zero.is_view()), (vec![4, 2], false));
    assert_eq!(f64s(&zero), f64s(&x.i((.., 1)).unwrap()));
    let none = it(vec![], &[0]);
    assert_eq!(x.i((.., &none)).unwrap().shape(), vec![4, 0, 2]);
    let e = x.i((.., &it(vec![3], &[1]))).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
}
