//! Resource limits: requests for absurd sizes (sizes overflowing i64, numel × itemsize overflowing
//! usize, allocations no machine can satisfy) return an error and leave every tensor unchanged —
//! they never abort the process or panic.

use tapegrad::{DType, ErrorKind, ResizeFill, Storage, Tensor};

const HUGE: usize = 1 << 50; // 8 PiB of f64: never satisfiable
const BIG_I64: i64 = 1 << 62;

fn err_kind<T: std::fmt::Debug>(r: tapegrad::Result<T>) -> ErrorKind {
    r.expect_err("expected an error").kind()
}

#[test]
fn factories_overflowing_usize() {
    for dt in [DType::F32, DType::F64, DType::I64, DType::Bool] {
        assert_eq!(
            err_kind(Tensor::zeros(&[usize::MAX, 2], dt)),
            ErrorKind::InvalidArgument
        );
        assert_eq!(
            err_kind(Tensor::empty(
                &[1usize << 32, 1usize << 32, 1usize << 32],
                dt
            )),
            ErrorKind::InvalidArgument
        );
        assert!(Tensor::ones(&[usize::MAX], dt).is_err());
        assert!(Tensor::full(&[1usize << 40, 1usize << 40], 1, dt).is_err());
    }
    // numel fits but numel * itemsize does not
    assert!(Tensor::zeros(&[(usize::MAX / 4) + 1], DType::F64).is_err());
    assert!(Tensor::rand(&[usize::MAX / 2], DType::F32).is_err());
    assert!(Tensor::randn(&[HUGE, HUGE], DType::F64).is_err());
    assert!(Tensor::randint(0, 5, &[usize::MAX]).is_err());
}

/// PyTorch's size product (`c10::safe_multiplies_u64`): a running product in u64 whose overflow
/// is sticky, so a zero size after an overflow does not help: `torch.empty(1, 1, 2**62, 0)`,
/// `(2**62, 3, 0)` and `(0, 2**62, 2**62)` work, `(2**62, 2**62, 0)` is refused (checked in 2.15).
#[test]
fn empty_shapes_with_huge_sizes() {
    let big = BIG_I64 as usize;
    // torch 2.15: `torch.empty` of these works (strides [2^62, 2^62, 1, 1] and [3, 1, 1, 1])
    for shape in [[1, 1, big, 0], [big, 3, 0, 1]] {
        let t = Tensor::empty(&shape, DType::F32).unwrap();
        assert_eq!((t.shape(), t.numel()), (shape.to_vec(), 0));
        assert_eq!(Tensor::zeros(&shape, DType::I64).unwrap().numel(), 0);
    }
    // "Storage size calculation overflowed" (the sticky product), "Stride calculation
    // overflowed" (`[0, 2^62, 2^62, 1]`: no elements, but a first stride of 2^124)
    for shape in [[big, big, 0, 1], [usize::MAX, 0, 1, 1], [0, big, big, 1]] {
        assert_eq!(
            err_kind(Tensor::empty(&shape, DType::F32)),
            ErrorKind::InvalidArgument
        );
    }
}

#[test]
fn factories_unsatisfiable() {
    // representable sizes that no allocator can provide: an error, not an abort
    let e = Tensor::zeros(&[HUGE], DType::F64).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("bytes"), "{e}");
    assert!(Tensor::empty(&[HUGE], DType::F32).is_err());
    assert!(Tensor::eye(1i64 << 40, DType::F32).is_err());
    assert!(Tensor::eye(usize::MAX, DType::F32).is_err());
    assert!(Tensor::linspace(0.0, 1.0, usize::MAX, DType::F64).is_err());
    assert!(Tensor::linspace(0.0, 1.0, HUGE, DType::F64).is_err());
    assert!(Tensor::arange(0, i64::MAX, 1).is_err());
    assert!(Tensor::arange_dtype(0.0, 1e300, 1.0, DType::F64).is_err());
    assert!(Storage::zeroed(usize::MAX).is_err());
    assert!(Storage::zeroed(HUGE * 8).is_err());
}

#[test]
fn views_with_overflowing_numel() {
    let x = Tensor::ones(&[1, 1], DType::F32).unwrap();
    // PyTorch: "numel: integer multiplication overflow"
    assert!(x.expand(&[BIG_I64, BIG_I64]).is_err());
    assert!(x.expand(&[i64::MAX, 2]).is_err());
    let e = Tensor::zeros(&[0], DType::F32).unwrap();
    assert!(e.view(&[BIG_I64, BIG_I64, 0]).is_err());
    assert!(e.reshape(&[i64::MAX, 4, 0]).is_err());
    assert!(e.view(&[BIG_I64, 0]).is_ok());
    // sizes overflowing the storage span
    assert!(x.as_strided(&[BIG_I64, 4], &[1, 1], None).is_err());
    assert!(x.as_strided(&[i64::MAX], &[i64::MAX], None).is_err());
    assert!(x.as_strided(&[2], &[1], Some(i64::MAX)).is_err());
    assert!(x.narrow(0, 0, usize::MAX).is_err());
    assert!(x.narrow(0, 1, usize::MAX).is_err());
    assert_eq!(x.shape(), vec![1, 1]);
}

#[test]
fn materialising_a_huge_view_errors() {
    // a legal view with 2^40 elements over one element of storage
    let x = Tensor::ones(&[1], DType::F64).unwrap();
    let big = x.as_strided(&[1i64 << 40], &[0], None).unwrap();
    assert_eq!(big.numel(), 1 << 40);
    assert!(big.contiguous().is_err());
    assert!(big.copy().is_err());
    assert!(big.to_vec::<f64>().is_err());
    assert!(big.add(1.0).is_err());
    assert!(big.flip(&[0]).is_err());
    assert!(big.to_dtype(DType::F32).is_err());
    let e = x.expand(&[1 << 30, 1 << 30]).unwrap();
    // a view of 2^60 elements is fine (as in PyTorch), materialising it is not
    assert_eq!(e.reshape(&[-1]).unwrap().numel(), 1 << 60);
    assert!(e.contiguous().is_err());
    assert!(e.mul(&e).is_err());
    assert!(x.repeat(&[HUGE]).is_err());
    assert!(x.repeat(&[usize::MAX, 2]).is_err());
    assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0]);
}

#[test]
fn resize_to_absurd_sizes() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
    for sizes in [
        vec![usize::MAX],
        vec![usize::MAX / 8 + 1],
        vec![1 << 40, 1 << 40],
        vec![HUGE],
        vec![1, HUGE, 1],
    ] {
        let e = x.resize_(&sizes).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::InvalidArgument),
            "{sizes:?}: {e}"
        );
        assert!(x.resize_with(&sizes, ResizeFill::Nan).is_err());
        // unchanged: values, geometry, version, storage size
        assert_eq!(x.to_vec::<f64>().unwrap(), vec![1.0, 2.0, 3.0]);
        assert_eq!((x.shape(), x.strides(), x.version()), (vec![3], vec![1], 0));
        assert_eq!(x.storage().nbytes(), 24);
    }
}

#[test]
fn set_to_absurd_geometry() {
    let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2]).unwrap();
    let s = Storage::zeroed(16).unwrap();
    assert!(x.set_storage(&s, usize::MAX, &[2], None).is_err());
    assert!(x.set_storage(&s, 0, &[usize::MAX, 2], None).is_err());
    assert!(
        x.set_storage(&s, 0, &[2, 2], Some(&[usize::MAX, 1]))
            .is_err()
    );
    assert!(x.set_storage(&s, 0, &[HUGE], None).is_err());
    let y = Tensor::zeros(&[4], DType::F32).unwrap();
    y.narrow(0, 1, 2).unwrap(); // a view with an offset
    assert!(
        x.set_with(&y.narrow(0, 1, 2).unwrap(), usize::MAX, &[1], None)
            .is_err()
    );
    assert!(x.set_with(&y, usize::MAX - 1, &[1], None).is_err());
    assert_eq!(
        (x.to_vec::<f32>().unwrap(), x.version()),
        (vec![1.0, 2.0], 0)
    );
    assert_eq!(s.nbytes(), 16);
}

#[test]
fn ops_with_absurd_arguments() {
    let x = Tensor::from_vec(vec![0i64, 1], &[2]).unwrap();
    assert!(x.one_hot(i64::MAX).is_err());
    assert!(x.one_hot(1i64 << 40).is_err());
    let f = Tensor::ones(&[2, 2], DType::F32).unwrap();
    assert!(f.unflatten(0, &[BIG_I64, BIG_I64]).is_err());
    assert!(f.split(i64::MAX, 0).is_ok());
    assert!(f.chunk(i64::MAX, 0).is_ok());
    // beyond int64 (a usize only): the integer convention's error, never a wrap
    assert_eq!(
        f.split(usize::MAX, 0).unwrap_err().kind(),
        tapegrad::ErrorKind::InvalidArgument
    );
    assert!(f.slice(0, Some(i64::MIN), Some(i64::MAX), i64::MAX).is_ok());
    assert!(f.diagonal(i64::MIN, 0, 1).is_ok());
    assert!(f.diagonal(i64::MAX, 0, 1).is_ok());
}
