//! set_ / resize_: storage sharing, geometry, versions, errors, autograd (fixtures set_resize.json),
//! plus a proptest against a byte-vector reference model.

use crate::common::f64s;
use proptest::prelude::*;
use tapegrad::autograd::no_grad;
use tapegrad::{DType, ErrorKind, ResizeFill, Storage, Tensor};

fn f(v: Vec<f64>, s: &[usize]) -> Tensor {
    Tensor::from_vec(v, s).unwrap()
}
#[test]
fn set_empty_and_views() {
    let x = Tensor::from_vec(vec![1.0f32, 2., 3., 4.], &[2, 2]).unwrap();
    let v = x.view(&[4]).unwrap();
    x.set_empty().unwrap();
    assert_eq!(
        (x.shape(), x.numel(), x.version(), x.is_view()),
        (vec![0], 0, 1, false)
    );
    assert_eq!(
        (v.to_vec::<f32>().unwrap(), v.version()),
        (vec![1., 2., 3., 4.], 1)
    );
    assert!(!v.shares_storage(&x));
}

#[test]
fn set_to_source_separate_versions() {
    let x = f(vec![9., 9.], &[2]);
    let y = f(vec![1., 2., 3., 4., 5., 6.], &[2, 3]);
    x.set_(&y).unwrap();
    assert!(x.is_set_to(&y) && x.shares_storage(&y) && !x.is_view());
    assert_eq!(
        (x.shape(), x.strides(), x.version(), y.version()),
        (vec![2, 3], vec![3, 1], 1, 0)
    );
    x.mul_(10.0).unwrap();
    assert_eq!((f64s(&y)[0], x.version(), y.version()), (10.0, 2, 0));
    y.add_(1.0).unwrap();
    assert_eq!((f64s(&x)[0], x.version(), y.version()), (11.0, 2, 1));
    // self-set: no change, one bump
    x.set_(&x.clone()).unwrap();
    assert_eq!((x.version(), x.shape()), (3, vec![2, 3]));
}

#[test]
fn set_to_view_and_with_offset() {
    let a = Tensor::arange(0, 12, 1)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap();
    let y = a.view(&[3, 4]).unwrap();
    let x = Tensor::zeros(&[1], DType::F32).unwrap();
    let g = y
        .slice(0, Some(1), None, 1)
        .unwrap()
        .slice(1, None, None, 2)
        .unwrap();
    x.set_(&g).unwrap();
    assert_eq!(
        (x.strides(), x.storage_offset(), x.is_view()),
        (vec![4, 2], 4, false)
    );
    x.fill_(-1.0).unwrap();
    assert_eq!((x.version(), a.version()), (2, 0));
    assert_eq!(g.to_vec::<f32>().unwrap(), vec![-1.0; 4]);

    let y = Tensor::arange(0, 10, 1)
        .unwrap()
        .to_dtype(DType::F64)
        .unwrap();
    let x = Tensor::zeros(&[1], DType::F64).unwrap();
    x.set_with(&y, 2, &[2, 3], Some(&[1, 2])).unwrap();
    assert_eq!(
        (f64s(&x), x.storage_offset()),
        (vec![2., 4., 6., 3., 5., 7.], 2)
    );
    let w = Tensor::zeros(&[1], DType::F64).unwrap();
    w.set_with(&y.slice(0, Some(5), None, 1).unwrap(), 1, &[2], Some(&[2]))
        .unwrap();
    assert_eq!((f64s(&w), w.storage_offset()), (vec![6., 8.], 6));
    w.zero_().unwrap();
    assert_eq!(f64s(&y), vec![0., 1., 2., 3., 4., 5., 0., 7., 0., 9.]);
    assert_eq!(f64s(&x), vec![2., 4., 0., 3., 5., 7.]);
    assert_eq!(x.version(), 1);
    let e = w.set_with(&y.t_or_self(), 0, &[2], None);
    assert!(e.is_ok());
}

trait TOrSelf {
    fn t_or_self(&self) -> Tensor;
}
impl TOrSelf for Tensor {
    fn t_or_self(&self) -> Tensor {
        self.clone()
    }
}

#[test]
fn set_errors_leave_unchanged() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let y = f(vec![1., 2., 3.], &[3]);
    let e = x.set_(&y).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::DTypeMismatch,
            "Could not set tensor of type double to a tensor of type float"
        )
    );
    assert_eq!((x.shape(), x.version()), (vec![2], 0));
    let g = Tensor::from_vec(vec![1.0f32, 2.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let e = g
        .set_(&Tensor::from_vec(vec![5.0f32], &[1]).unwrap())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    assert_eq!((g.shape(), g.version()), (vec![2], 0));
    // rank mismatch of sizes/strides
    let e = x
        .set_storage(&x.storage(), 0, &[1], Some(&[1, 1]))
        .unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::InvalidArgument,
            "unequal size length (1) and stride length (2)"
        )
    );
    // same geometry out of bounds: error, no growth
    let s = Storage::zeroed(4).unwrap();
    let e = x.set_storage(&s, 0, &[2], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(s.nbytes(), 4);
    // non-resizable storage
    s.set_resizable(false);
    let e = x.set_storage(&s, 0, &[5], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::NotResizable);
    let e = x
        .set_with(&f(vec![1.; 4], &[2, 2]).t().unwrap(), 0, &[1], None)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        (x.shape(), x.version(), x.to_vec::<f32>().unwrap()),
        (vec![2], 0, vec![1., 2.])
    );
}

#[test]
fn set_grows_shared_storage() {
    let z = Tensor::from_vec(vec![1.0f32, 2., 3.], &[3]).unwrap();
    let x = Tensor::zeros(&[1], DType::F32).unwrap();
    x.set_with(&z, 1, &[3], Some(&[1])).unwrap();
    assert_eq!(
        (z.storage().nbytes(), x.to_vec::<f32>().unwrap()),
        (16, vec![2., 3., 0.])
    );
    x.select(0, 2).unwrap().fill_(8.0).unwrap();
    assert_eq!(
        (
            z.to_vec::<f32>().unwrap(),
            x.to_vec::<f32>().unwrap(),
            x.version()
        ),
        (vec![1., 2., 3.], vec![2., 3., 8.], 2)
    );
}

#[test]
fn set_on_view_bumps_base() {
    let b = Tensor::from_vec(vec![1.0f32, 2., 3., 4.], &[4]).unwrap();
    let v = b.slice(0, Some(1), None, 1).unwrap();
    let y = Tensor::from_vec(vec![7.0f32, 8.], &[2]).unwrap();
    v.set_(&y).unwrap();
    assert_eq!(
        (v.version(), b.version(), y.version(), v.is_view()),
        (1, 1, 0, true)
    );
    v.add_(1.0).unwrap();
    assert_eq!(
        (
            y.to_vec::<f32>().unwrap(),
            b.version(),
            b.to_vec::<f32>().unwrap()
        ),
        (vec![8., 9.], 2, vec![1., 2., 3., 4.])
    );
    // old views keep old storage
    let x = Tensor::from_vec(vec![1i64, 2, 3, 4], &[4]).unwrap();
    let g = x.slice(0, Some(1), Some(3), 1).unwrap();
    x.set_(&Tensor::from_vec(vec![10i64, 20, 30], &[3]).unwrap())
        .unwrap();
    assert!(!g.shares_storage(&x));
    assert_eq!((g.to_vec::<i64>().unwrap(), g.version()), (vec![2, 3], 1));
}

#[test]
fn set_autograd() {
    let w = f(vec![1., 2., 3.], &[3]).requires_grad_(true).unwrap();
    let z = Tensor::zeros(&[3], DType::F64).unwrap();
    z.set_(&w).unwrap();
    assert!(z.requires_grad());
    assert_eq!(z.grad_fn().unwrap().name(), "NotImplemented");
    let e = z.sum().unwrap().backward().unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::NotImplemented,
            "derivative for set_ is not implemented"
        )
    );
    // no_grad: allowed on leaves, the next accumulation uses the new shape
    let p = f(vec![1., 2., 3.], &[3]).requires_grad_(true).unwrap();
    p.mul(2.0).unwrap().sum().unwrap().backward().unwrap();
    {
        let _g = no_grad();
        p.set_(&f(vec![1.; 5], &[5])).unwrap();
    }
    p.set_grad(None).unwrap();
    p.mul(2.0).unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(f64s(&p.grad().unwrap()), vec![2.0; 5]);
}

#[test]
fn resize_semantics() {
    let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2]).unwrap();
    x.resize_(&[2, 2]).unwrap();
    assert_eq!(x.version(), 0);
    x.resize_(&[4]).unwrap();
    assert_eq!(x.version(), 1);
    // non-contiguous same shape keeps strides
    let t = Tensor::arange(0, 6, 1)
        .unwrap()
        .view(&[2, 3])
        .unwrap()
        .t()
        .unwrap();
    t.resize_(&[3, 2]).unwrap();
    assert_eq!((t.strides(), t.version()), (vec![1, 3], 0));
    t.resize_(&[2, 3]).unwrap();
    assert_eq!(
        (t.strides(), t.version(), t.is_view()),
        (vec![3, 1], 1, true)
    );
    // shrink keeps storage; regrow within capacity restores data; grow past zero-fills
    let x = Tensor::from_vec(vec![1.0f32, 2., 3., 4., 5., 6.], &[6]).unwrap();
    let old = x.view(&[2, 3]).unwrap();
    x.resize_(&[2]).unwrap();
    assert_eq!(x.storage().nbytes(), 24);
    x.resize_(&[6]).unwrap();
    assert_eq!(x.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4., 5., 6.]);
    x.resize_(&[2, 4]).unwrap();
    assert_eq!(
        (
            x.to_vec::<f32>().unwrap()[6..].to_vec(),
            x.version(),
            old.version()
        ),
        (vec![0., 0.], 3, 3)
    );
    assert_eq!(old.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4., 5., 6.]);
    // view with offset grows the shared storage
    let b = Tensor::from_vec(vec![1.0f32, 2., 3., 4.], &[4]).unwrap();
    let v = b.slice(0, Some(2), None, 1).unwrap();
    v.resize_(&[4]).unwrap();
    assert_eq!(
        (v.storage_offset(), b.storage().nbytes(), b.version()),
        (2, 24, 1)
    );
    assert_eq!(b.to_vec::<f32>().unwrap(), vec![1., 2., 3., 4.]);
    // zero and back
    let x = Tensor::from_vec(vec![5i64, 6, 7], &[3]).unwrap();
    x.resize_(&[0]).unwrap();
    x.resize_(&[0, 3]).unwrap();
    x.resize_(&[3]).unwrap();
    assert_eq!(
        (x.to_vec::<i64>().unwrap(), x.version()),
        (vec![5, 6, 7], 3)
    );
    // resize_as_
    let y = Tensor::zeros(&[2, 2], DType::I64).unwrap();
    x.resize_as_(&y).unwrap();
    assert_eq!(
        (x.shape(), x.to_vec::<i64>().unwrap()),
        (vec![2, 2], vec![5, 6, 7, 0])
    );
    // Nan fill
    let h = Tensor::from_vec(vec![1.0f64], &[1]).unwrap();
    h.resize_with(&[3], ResizeFill::Nan).unwrap();
    assert!(f64s(&h)[1].is_nan() && f64s(&h)[0] == 1.0);
    let n = Tensor::from_vec(vec![1i32], &[1]).unwrap();
    n.resize_with(&[2], ResizeFill::Nan).unwrap();
    assert_eq!(n.to_vec::<i32>().unwrap(), vec![1, i32::MAX]);
}

#[test]
fn resize_errors() {
    let x = Tensor::from_vec(vec![1.0f32, 2.], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let e = x.resize_(&[4]).unwrap_err();
    assert_eq!(
        (e.kind(), e.message()),
        (
            ErrorKind::ResizeRequiresGrad,
            "cannot resize variables that require grad"
        )
    );
    assert_eq!(
        x.resize_(&[2]).unwrap_err().kind(),
        ErrorKind::ResizeRequiresGrad
    );
    let y = x.mul(2.0).unwrap();
    assert!(y.resize_(&[1]).is_err());
    {
        let _g = no_grad();
        assert!(x.resize_(&[1]).is_err());
    }
    assert_eq!((x.shape(), x.version()), (vec![2], 0));
    let s = Storage::zeroed(8).unwrap();
    s.set_resizable(false);
    let t = Tensor::zeros(&[1], DType::F32).unwrap();
    t.set_storage(&s, 0, &[2], None).unwrap();
    assert_eq!(t.resize_(&[3]).unwrap_err().kind(), ErrorKind::NotResizable);
    assert_eq!((t.shape(), t.version()), (vec![2], 1));
}

#[derive(Debug, Clone)]
enum Op {
    Resize(usize),
    SetOther(usize, usize, usize, usize), // which other, offset, size, stride
    Write(usize, i32),                    // element index (mod numel), value
    ViewWrite(usize, i32),
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0usize..12).prop_map(Op::Resize),
        (0usize..2, 0usize..6, 0usize..5, 1usize..3)
            .prop_map(|(a, b, c, d)| Op::SetOther(a, b, c, d)),
        (0usize..100, -50i32..50).prop_map(|(a, b)| Op::Write(a, b)),
        (0usize..100, -50i32..50).prop_map(|(a, b)| Op::ViewWrite(a, b)),
    ]
}

proptest! {
    #![proptest_config(crate::common::proptest_config(64))]
    #[test]
    fn set_resize_model(ops in proptest::collection::vec(op(), 1..20)) {
        // reference model: storages as Vec<i32>, x = (storage id, offset, sizes, strides)
        let others = [Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap(), Tensor::from_vec(vec![10i32, 20], &[2]).unwrap()];
        let x = Tensor::from_vec(vec![7i32, 8], &[2]).unwrap();
        let mut model: Vec<Vec<i32>> = vec![vec![1, 2, 3], vec![10, 20], vec![7, 8]];
        let (mut sid, mut off, mut size, mut stride) = (2usize, 0usize, 2usize, 1usize);
        let mut version = 0u64;
        for o in ops {
            match o {
                Op::Resize(n) => {
                    x.resize_(&[n]).unwrap();
                    if n != size { version += 1; stride = 1; size = n; }
                    let need = if n == 0 { 0 } else { off + n };
                    if model[sid].len() < need { model[sid].resize(need, 0); }
                }
                Op::SetOther(w, o2, n, st) => {
                    let need = if n == 0 { 0 } else { o2 + (n - 1) * st + 1 };
                    let r = x.set_with(&others[w], o2, &[n], Some(&[st]));
                    if (n, st) == (size, stride) && need > model[w].len() {
                        // same geometry: bounds-checked, never grows
                        prop_assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidArgument);
                        continue;
                    }
                    r.unwrap();
                    version += 1;
                    sid = w; off = o2; size = n; stride = st;
                    if model[sid].len() < need { model[sid].resize(need, 0); }
                }
                Op::Write(i, v) => {
                    if size == 0 { continue; }
                    let i = i % size;
                    x.select(0, i as i64).unwrap().fill_(v).unwrap();
                    version += 1;
                    model[sid][off + i * stride] = v;
                }
                Op::ViewWrite(i, v) => {
                    if size == 0 { continue; }
                    let i = i % size;
                    let w = x.slice(0, Some(i as i64), None, 1).unwrap();
                    w.i_set(0, v).unwrap();
                    version += 1;
                    model[sid][off + i * stride] = v;
                }
            }
            let want: Vec<i32> = (0..size).map(|k| model[sid][off + k * stride]).collect();
            prop_assert_eq!(x.to_vec::<i32>().unwrap(), want);
            prop_assert_eq!(x.version(), version);
            for (k, t) in others.iter().enumerate() {
                prop_assert_eq!(t.to_vec::<i32>().unwrap(), model[k][..t.numel()].to_vec());
                prop_assert!(t.storage().nbytes() >= model[k].len() * 4);
            }
        }
    }
}

/// Rows R01–R36 of ../shared/sparse_and_set.md §5.5 that apply to PyTorch semantics (set_).
/// Paddle behaviours deliberately rejected: byte offsets (R05/R06: tapegrad's offsets are in
/// elements, PyTorch's convention, so a misaligned offset is unrepresentable); no dtype check /
/// byte reinterpretation (R16: DTypeMismatch instead); the source's own offset ignored (R17: it is
/// inherited, as PyTorch does); an empty source reusing self's old storage (R14: self moves to the
/// source's storage, grown with zero bytes); `x` staying grad-free after set_ to a
/// grad-requiring source (R15: PyTorch gives a non-leaf with a NotImplemented grad_fn). R11, R12
/// and R30 (non-tensor source, negative sizes, a bare int shape) cannot be expressed in the
/// Rust API.
#[test]
fn paddle_table_rows_set() {
    let src2 = || f(vec![11., 22., 33., 44., 55., 66.], &[6]);
    // R01 / R18: set_() -> shape [0], one bump
    let x = f(vec![1., 2., 3., 4., 5.], &[5]);
    x.set_empty().unwrap();
    assert_eq!((x.shape(), x.strides(), x.version()), (vec![0], vec![1], 1));
    // R02 / R19 / R20 / R21: set_(src) aliases src's storage and geometry
    let src = f(vec![11., 22., 33.], &[1, 3]);
    let x = f(vec![1., 2.], &[2]);
    x.set_(&src).unwrap();
    assert_eq!(
        (x.shape(), x.strides(), f64s(&x)),
        (vec![1, 3], vec![3, 1], vec![11., 22., 33.])
    );
    assert!(x.shares_storage(&src));
    let a = f(vec![1., 2., 3., 4., 5., 6., 7., 8.], &[1, 2, 2, 2]);
    a.set_(&f(vec![5., 6., 7., 8.], &[1, 2, 2])).unwrap();
    assert_eq!((a.shape(), f64s(&a)), (vec![1, 2, 2], vec![5., 6., 7., 8.]));
    // R03: explicit sizes, default (contiguous) strides
    let x = f(vec![0.], &[1]);
    x.set_with(&src, 0, &[2, 1], None).unwrap();
    assert_eq!((x.strides(), f64s(&x)), (vec![1, 1], vec![11., 22.]));
    // R04: strides
    x.set_with(&src2(), 0, &[3], Some(&[2])).unwrap();
    assert_eq!(f64s(&x), vec![11., 33., 55.]);
    // R05: the offset counts elements
    x.set_with(&src2(), 1, &[5], None).unwrap();
    assert_eq!(
        (f64s(&x), x.storage_offset()),
        (vec![22., 33., 44., 55., 66.], 1)
    );
    // R07: column-major geometry
    x.set_with(&src2(), 0, &[2, 2], Some(&[1, 2])).unwrap();
    assert_eq!(f64s(&x), vec![11., 33., 22., 44.]);
    // R08: aliasing with separate version counters
    let s = f(vec![7., 8., 9.], &[3]);
    let x = f(vec![1., 2.], &[2]);
    x.set_(&s).unwrap();
    s.i_set(0, 100.0).unwrap();
    assert_eq!(
        (f64s(&x), s.version(), x.version()),
        (vec![100., 8., 9.], 1, 1)
    );
    // R09: one bump per call
    let x = f(vec![1., 2., 3.], &[3]);
    x.set_(&src2()).unwrap();
    x.set_empty().unwrap();
    assert_eq!(x.version(), 2);
    // R13: set_ onto its own storage with a new geometry
    let x = f(vec![1., 2., 3., 4.], &[4]);
    x.set_with(&x.clone(), 0, &[2, 2], None).unwrap();
    assert_eq!(
        (x.shape(), f64s(&x), x.version()),
        (vec![2, 2], vec![1., 2., 3., 4.], 1)
    );
    // R14 (PyTorch, not Paddle): an empty source's storage grows; the new bytes read as zero
    let x = f(vec![1., 2., 3.], &[3]);
    let e = Tensor::empty(&[0], DType::F64).unwrap();
    x.set_with(&e, 0, &[2], Some(&[1])).unwrap();
    assert!(x.shares_storage(&e));
    assert_eq!((f64s(&x), e.storage().nbytes()), (vec![0., 0.], 16));
    // R15 (PyTorch): a grad-requiring source makes x a non-leaf whose backward fails
    let s = f(vec![1., 2.], &[2]).requires_grad_(true).unwrap();
    let x = Tensor::zeros(&[2], DType::F64).unwrap();
    x.set_(&s).unwrap();
    assert!(x.requires_grad() && !x.is_leaf());
    // R16: dtype mismatch is an error
    let i = Tensor::from_vec(vec![1i64, 2, 3], &[3]).unwrap();
    let e = i.set_(&f(vec![1.5, 2.5], &[2])).unwrap_err();
    assert_eq!(
        e.message(),
        "Could not set tensor of type double to a tensor of type long int"
    );
    // R17 (PyTorch): the source view's offset is inherited
    let base = f(vec![10., 20., 30., 40., 50.], &[5]);
    let w = f(vec![0.], &[1]);
    w.set_(&base.i(2..).unwrap()).unwrap();
    assert_eq!((f64s(&w), w.storage_offset()), (vec![30., 40., 50.], 2));
    // R10: a leaf requiring grad
    let g = f(vec![1., 2.], &[2]).requires_grad_(true).unwrap();
    assert_eq!(g.set_(&src).unwrap_err().kind(), ErrorKind::LeafInplace);
}

/// Rows R22–R36 of §5.5 (resize_), PyTorch semantics. Rejected Paddle behaviours: growing into
/// unallocated memory (reads out of bounds; tapegrad reallocates and zero-fills), R32 (Paddle's
/// `fill_zero` after a shrink zeroes the kept capacity; tapegrad keeps the storage's bytes, as
/// PyTorch does, and only fills bytes that are new), R34 (Paddle divides by zero), R35 (Paddle's
/// leaf error; tapegrad raises ResizeRequiresGrad for any tensor requiring grad).
#[test]
fn paddle_table_rows_resize() {
    // R22 / R25: shrink to [2, 1]
    let x = f(vec![1., 2., 3.], &[3]);
    x.resize_(&[2, 1]).unwrap();
    assert_eq!(
        (f64s(&x), x.strides(), x.version()),
        (vec![1., 2.], vec![1, 1], 1)
    );
    // R23 / R24: growth keeps the prefix, new elements are zero (f64, i32, bool)
    let x = f(vec![1., 2., 3.], &[3]);
    x.resize_(&[2, 3]).unwrap();
    assert_eq!(f64s(&x), vec![1., 2., 3., 0., 0., 0.]);
    let n = Tensor::from_vec(vec![1i32, 2, 3], &[3]).unwrap();
    n.resize_(&[5]).unwrap();
    assert_eq!(n.to_vec::<i32>().unwrap(), vec![1, 2, 3, 0, 0]);
    let b = Tensor::from_vec(vec![true, false], &[2]).unwrap();
    b.resize_(&[3]).unwrap();
    assert_eq!(b.to_vec::<bool>().unwrap(), vec![true, false, false]);
    // R26 / R27 / R28 / R29: reinterpretation of the same storage
    let x = f(vec![1., 2., 3., 4., 5., 6.], &[2, 3]);
    x.resize_(&[2, 2]).unwrap();
    assert_eq!(f64s(&x), vec![1., 2., 3., 4.]);
    x.resize_(&[6]).unwrap();
    assert_eq!(f64s(&x), vec![1., 2., 3., 4., 5., 6.]);
    let a = Tensor::arange(0, 24, 1).unwrap().view(&[2, 3, 4]).unwrap();
    a.resize_(&[2, 4, 3]).unwrap();
    assert_eq!(
        (a.strides(), a.to_vec::<i64>().unwrap()),
        (vec![12, 3, 1], (0..24).collect())
    );
    let x = f(vec![1., 2., 3., 4.], &[2, 2]);
    x.resize_(&[1, 4]).unwrap();
    assert_eq!(f64s(&x), vec![1., 2., 3., 4.]);
    // R31 / R32 / R36: shrink then grow within capacity restores the data; one bump per change
    let x = f(vec![1., 2., 3., 4.], &[4]);
    x.resize_(&[2]).unwrap();
    assert_eq!(x.version(), 1);
    x.resize_with(&[4], ResizeFill::Zero).unwrap();
    assert_eq!((f64s(&x), x.version()), (vec![1., 2., 3., 4.], 2));
    // R33 / R34: zero elements, and growth from an empty storage
    let x = f(vec![1., 2., 3.], &[3]);
    x.resize_(&[0]).unwrap();
    assert_eq!((x.shape(), x.strides()), (vec![0], vec![1]));
    let z = Tensor::zeros(&[0], DType::F32).unwrap();
    z.resize_(&[3]).unwrap();
    assert_eq!(
        (z.to_vec::<f32>().unwrap(), z.storage().nbytes()),
        (vec![0.; 3], 12)
    );
    // R35: requires grad
    let g = f(vec![1., 2.], &[2]).requires_grad_(true).unwrap();
    assert_eq!(
        g.resize_(&[1]).unwrap_err().kind(),
        ErrorKind::ResizeRequiresGrad
    );
}

#[test]
fn bad_set_geometry_leaves_every_tensor_unchanged() {
    let src = f(vec![1., 2., 3., 4.], &[4]);
    let src_view = src.i(1..).unwrap();
    let x = f(vec![7., 8., 9.], &[3]);
    let xv = x.i(..2).unwrap();
    let state = |t: &Tensor| {
        (
            f64s(t),
            t.shape(),
            t.strides(),
            t.storage_offset(),
            t.version(),
            t.storage().nbytes(),
        )
    };
    let before: Vec<_> = [&src, &src_view, &x, &xv]
        .iter()
        .map(|t| state(t))
        .collect();
    let fixed = Storage::zeroed(16).unwrap();
    fixed.set_resizable(false);
    let checks = [
        // rank mismatch of sizes and strides
        (
            x.set_with(&src, 0, &[2], Some(&[1, 1])),
            ErrorKind::InvalidArgument,
        ),
        // non-contiguous source tensor
        (
            x.set_with(&f(vec![1.; 4], &[2, 2]).t().unwrap(), 0, &[2], None),
            ErrorKind::InvalidArgument,
        ),
        // unchanged geometry reaching past the end: bounds error, no growth
        (
            x.set_with(&src, 2, &[3], Some(&[1])),
            ErrorKind::InvalidArgument,
        ),
        // a storage that cannot grow
        (
            x.set_storage(&fixed, 1, &[2, 2], None),
            ErrorKind::NotResizable,
        ),
        // dtype mismatch
        (
            x.set_(&Tensor::zeros(&[2], DType::F32).unwrap()),
            ErrorKind::DTypeMismatch,
        ),
        // an absurd geometry overflows the size computation instead of allocating
        (
            x.set_with(&src, 0, &[usize::MAX / 2, 4], None),
            ErrorKind::InvalidArgument,
        ),
    ];
    for (r, k) in checks {
        assert_eq!(r.unwrap_err().kind(), k);
        let now: Vec<_> = [&src, &src_view, &x, &xv]
            .iter()
            .map(|t| state(t))
            .collect();
        assert_eq!(now, before);
        assert_eq!(fixed.nbytes(), 16);
    }
    assert!(!x.shares_storage(&src) && xv.shares_storage(&x));
    // the same failures on resize_ also change nothing
    let t = Tensor::zeros(&[1], DType::F32).unwrap();
    t.set_storage(&fixed, 0, &[4], None).unwrap();
    assert_eq!(t.resize_(&[5]).unwrap_err().kind(), ErrorKind::NotResizable);
    assert_eq!((t.shape(), t.version(), fixed.nbytes()), (vec![4], 1, 16));
    let e = t.resize_(&[usize::MAX / 2, 4]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!((t.shape(), t.version()), (vec![4], 1));
}

#[test]
fn resize_growth_never_exposes_uninitialised_memory() {
    // every dtype: grown storage reads as zero (or the requested fill) and the prefix is kept;
    // all tensors sharing the storage see the new buffer
    for dt in [
        DType::F64,
        DType::F32,
        DType::F16,
        DType::BF16,
        DType::I64,
        DType::I32,
        DType::I16,
        DType::I8,
        DType::U8,
        DType::Bool,
    ] {
        let x = Tensor::ones(&[3], dt).unwrap();
        let alias = x.view(&[3]).unwrap();
        x.resize_(&[2, 5]).unwrap();
        assert!(alias.shares_storage(&x), "{dt:?}");
        let v = x.to_dtype(DType::F64).unwrap();
        assert_eq!(
            f64s(&v),
            vec![1., 1., 1., 0., 0., 0., 0., 0., 0., 0.],
            "{dt:?}"
        );
        assert!(x.storage().nbytes() >= 10 * dt.size());
    }
    // growth from an offset view, after a shrink, and with the NaN / max fill
    let b = f(vec![1., 2., 3., 4.], &[4]);
    let v = b.i(3..).unwrap();
    v.resize_(&[3]).unwrap();
    assert_eq!(
        (f64s(&v), f64s(&b)),
        (vec![4., 0., 0.], vec![1., 2., 3., 4.])
    );
    let x = f(vec![1., 2.], &[2]);
    x.resize_(&[1]).unwrap();
    x.resize_with(&[4], ResizeFill::Nan).unwrap();
    let got = f64s(&x);
    assert_eq!(&got[..2], &[1., 2.]);
    assert!(got[2].is_nan() && got[3].is_nan());
    let u = Tensor::from_vec(vec![1u8], &[1]).unwrap();
    u.resize_with(&[2], ResizeFill::Nan).unwrap();
    assert_eq!(u.to_vec::<u8>().unwrap(), vec![1, 255]);
}

#[test]
fn empty_geometry_past_its_storage_reads_nothing() -> tapegrad::Result<()> {
    // PyTorch 2.15 accepts a zero-element geometry at any offset (`x.set_(s, 10, (0,))` on a
    // 3-element storage reads `[]`): host reads return nothing, whether the empty layout is
    // contiguous or not, instead of slicing the buffer past its end
    let y = Tensor::arange(0, 3, 1)?;
    let x = Tensor::zeros(&[1], DType::I64)?;
    x.set_storage(&y.storage(), 10, &[0], None)?;
    assert_eq!((x.storage_offset(), x.shape()), (10, vec![0]));
    assert_eq!(x.to_vec::<i64>()?, Vec::<i64>::new());
    x.set_storage(&y.storage(), 10, &[2, 0], Some(&[1, 1]))?;
    assert_eq!(x.to_vec::<i64>()?, Vec::<i64>::new());
    assert_eq!(x.to_dtype(DType::F32)?.to_vec::<f32>()?, Vec::<f32>::new());
    Ok(())
}
