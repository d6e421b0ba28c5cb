//! The `ndarray` feature (`tapegrad::interop::ndarray`): zero-copy views of every dtype and
//! strided layout, owned copies, and arrays of any layout into tensors. A test crate of its own
//! (`required-features = ["ndarray"]`) so CI builds the feature once, small.

use ndarray::{ArrayD, IxDyn, s};
use std::sync::mpsc;
use std::time::Duration;
use tapegrad::dtype::{C64, C128};
use tapegrad::interop::ndarray::{from_array, read_array, to_array};
use tapegrad::{DType, Element, ErrorKind, Storage, Tensor};

/// 0, 1, 2, ... of `T` as a `[2, 3]` tensor (bool: alternating).
fn sample<T: Element>() -> Tensor {
    let v: Vec<T> = (0..6).map(|i| T::from_i64(i % 7)).collect();
    Tensor::from_vec(v, &[2, 3]).unwrap()
}

/// Views, copies and back for one dtype, on a contiguous tensor and its transpose.
fn round_trip<T: Element>() {
    for t in [sample::<T>(), sample::<T>().t().unwrap()] {
        let want = t.to_vec::<T>().unwrap();
        let g = read_array::<T>(&t).unwrap();
        let v = g.view();
        assert_eq!(v.shape(), t.shape().as_slice());
        let strides: Vec<isize> = t.strides().iter().map(|&s| s as isize).collect();
        assert_eq!(
            v.strides(),
            strides.as_slice(),
            "{:?}: strides kept",
            T::DTYPE
        );
        assert_eq!(v.iter().copied().collect::<Vec<T>>(), want);
        let a = to_array::<T>(&t).unwrap();
        assert_eq!(a.iter().copied().collect::<Vec<T>>(), want);
        let back = from_array(&a).unwrap();
        assert_eq!(back.dtype(), T::DTYPE);
        assert_eq!((back.shape(), back.strides()), (t.shape(), t.strides()));
        assert_eq!(back.to_vec::<T>().unwrap(), want);
        assert!(!back.shares_storage(&t), "from_array copies");
    }
}

#[test]
fn every_dtype_round_trips_with_its_layout() {
    round_trip::<bool>();
    round_trip::<u8>();
    round_trip::<i8>();
    round_trip::<i16>();
    round_trip::<i32>();
    round_trip::<i64>();
    round_trip::<half::f16>();
    round_trip::<half::bf16>();
    round_trip::<f32>();
    round_trip::<f64>();
    round_trip::<C64>();
    round_trip::<C128>();
}

#[test]
fn views_read_the_tensors_storage_without_copying() {
    let x = Tensor::arange(0, 12, 1).unwrap().reshape(&[3, 4]).unwrap();
    let n = x.narrow(0, 1, 2).unwrap().narrow(1, 1, 2).unwrap(); // offset 5, strides [4, 1]
    let (gx, gn) = (
        read_array::<i64>(&x).unwrap(),
        read_array::<i64>(&n).unwrap(),
    );
    let (vx, vn) = (gx.view(), gn.view());
    // both views address the one storage: `n`'s first element is `x[1, 1]`
    assert_eq!(vn.as_ptr(), vx.slice(s![1.., 1..]).as_ptr());
    assert_eq!(vn.iter().copied().collect::<Vec<_>>(), vec![5, 6, 9, 10]);
    drop((gx, gn));
    // a write through the tensor is seen by the next view
    n.fill_(-1).unwrap();
    assert_eq!(read_array::<i64>(&x).unwrap().view()[[1, 2]], -1);
}

#[test]
fn strided_layouts_are_viewed_as_they_are() {
    let base = Tensor::arange(0, 6, 1)
        .unwrap()
        .to_dtype(DType::F32)
        .unwrap();
    let cases = [
        base.reshape(&[2, 3]).unwrap().t().unwrap(), // transposed
        base.narrow(0, 1, 4).unwrap(),               // offset 1
        base.reshape(&[2, 3]).unwrap().select(1, 2).unwrap(), // stride 3, offset 2
        base.narrow(0, 2, 1).unwrap().expand(&[4, 3]).unwrap(), // zero strides
        base.as_strided(&[3, 3], &[1, 1], Some(1)).unwrap(), // overlapping windows
        base.select(0, 4).unwrap(),                  // 0-dim at offset 4
        base.narrow(0, 6, 0).unwrap(),               // empty at the end
        base.as_strided(&[0, 5], &[1i64 << 40, 7], Some(6)).unwrap(), // empty, huge stride
    ];
    for t in cases {
        let g = read_array::<f32>(&t).unwrap();
        let v = g.view();
        assert_eq!(v.shape(), t.shape().as_slice());
        if t.numel() > 0 {
            let strides: Vec<isize> = t.strides().iter().map(|&s| s as isize).collect();
            assert_eq!(v.strides(), strides.as_slice());
        }
        assert_eq!(
            v.iter().copied().collect::<Vec<f32>>(),
            t.to_vec::<f32>().unwrap(),
            "{:?} / {:?} @ {}",
            t.shape(),
            t.strides(),
            t.storage_offset()
        );
        let owned = to_array::<f32>(&t).unwrap();
        assert_eq!(owned, v.to_owned());
    }
}

#[test]
fn the_guard_keeps_the_storage_alive() {
    let t = Tensor::from_vec(vec![1.5f64, 2.5], &[2]).unwrap();
    let g = read_array::<f64>(&t).unwrap();
    drop(t);
    tapegrad::release_cached_memory();
    assert_eq!(g.view().iter().copied().collect::<Vec<_>>(), vec![1.5, 2.5]);
}

#[test]
fn a_writer_on_another_thread_waits_for_the_guard() {
    let t = Tensor::zeros(&[4], DType::I32).unwrap();
    let g = read_array::<i32>(&t).unwrap();
    let (started, wait_started) = mpsc::channel();
    let writer = {
        let t = t.clone();
        std::thread::spawn(move || {
            started.send(()).unwrap();
            t.fill_(7).unwrap();
        })
    };
    wait_started.recv().unwrap();
    std::thread::sleep(Duration::from_millis(100));
    assert!(g.view().iter().all(|&v| v == 0), "the view never changes");
    drop(g);
    writer.join().unwrap();
    assert_eq!(t.to_vec::<i32>().unwrap(), vec![7; 4]);
}

#[test]
fn errors_name_the_problem() {
    let t = Tensor::zeros(&[2], DType::F32).unwrap();
    assert_eq!(
        read_array::<f64>(&t).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        to_array::<i64>(&t).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    let sp = Tensor::eye(3, DType::F32).unwrap().to_sparse().unwrap();
    assert_eq!(
        read_array::<f32>(&sp).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    // a bool tensor never goes over bytes other than 0/1 (so none is borrowed as `bool`)
    let b = Tensor::zeros(&[1], DType::Bool).unwrap();
    assert_eq!(
        b.set_storage(&Storage::from_bytes(&[2]).unwrap(), 0, &[1], None)
            .unwrap_err()
            .kind(),
        ErrorKind::DTypeMismatch
    );
    let r = read_array::<bool>(&b).unwrap();
    assert_eq!(r.view().iter().copied().collect::<Vec<_>>(), vec![false]);
}

#[test]
fn arrays_of_every_layout_become_tensors() {
    let a = ArrayD::from_shape_vec(IxDyn(&[2, 3, 4]), (0..24).map(|i| i as f64).collect()).unwrap();
    let want = |v: &ndarray::ArrayViewD<'_, f64>| v.iter().copied().collect::<Vec<_>>();
    // dense layouts keep their strides
    let p = a.view().permuted_axes(IxDyn(&[2, 0, 1]));
    for (v, strides) in [
        (a.view(), vec![12, 4, 1]),
        (a.t(), vec![1, 4, 12]),
        (p.view(), vec![1, 12, 4]),
    ] {
        let t = from_array(&v).unwrap();
        assert_eq!(t.strides(), strides);
        assert_eq!(t.to_vec::<f64>().unwrap(), want(&v));
        assert!(!t.is_view());
    }
    // negative strides, steps and broadcasts are copied in logical order, C-ordered
    let rev = a.slice(s![.., ..;-1, ..]);
    let step = a.slice(s![.., .., ..;2]);
    let row = ndarray::arr1(&[1.0f64, 2.0, 3.0]);
    let bc = row.broadcast((2, 3)).unwrap();
    for v in [rev.into_dyn(), step.into_dyn(), bc.into_dyn()] {
        let t = from_array(&v).unwrap();
        assert_eq!(t.shape(), v.shape());
        assert!(t.is_contiguous());
        assert_eq!(t.to_vec::<f64>().unwrap(), want(&v));
    }
    // empty and 0-d arrays
    let e = ArrayD::<i16>::zeros(IxDyn(&[3, 0, 2]));
    assert_eq!(from_array(&e).unwrap().shape(), vec![3, 0, 2]);
    let z = ndarray::arr0(C128::new(1.0, -2.0));
    let t = from_array(&z).unwrap();
    assert_eq!((t.shape(), t.dtype()), (vec![], DType::C128));
    assert_eq!(t.to_vec::<C128>().unwrap(), vec![C128::new(1.0, -2.0)]);
}
