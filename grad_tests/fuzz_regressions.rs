//! Regression tests for bugs the fuzz targets and reliability tests found (one test per bug).

use tapegrad::{DType, ErrorKind, Tensor};

#[test]
fn narrow_with_huge_length_is_an_error() {
    // was: `s + length as i64` wrapped and produced a layout outside the storage
    let x = Tensor::arange(0, 3, 1).unwrap();
    // lengths that fit int64: start + length overflows, PyTorch's range error
    assert_eq!(
        x.narrow(0, 3, i64::MAX / 2 + 7).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    assert_eq!(
        x.narrow(0, 3, i64::MAX).unwrap_err().kind(),
        ErrorKind::IndexOutOfRange
    );
    // lengths beyond int64 (only a usize can say them) are refused by the integer convention
    assert_eq!(
        x.narrow(0, 0, 1usize << 63).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

#[test]
fn slice_with_huge_step_stays_in_bounds() {
    // was: `(e - s + step - 1) / step` overflowed into a size of usize::MAX
    let x = Tensor::arange(0, 3, 1).unwrap();
    let s = x.slice(0, Some(1), None, i64::MAX).unwrap();
    assert_eq!((s.shape(), s.to_vec::<i64>().unwrap()), (vec![1], vec![1]));
    assert_eq!(
        x.slice(0, None, None, i64::MAX)
            .unwrap()
            .to_vec::<i64>()
            .unwrap(),
        vec![0]
    );
}

#[test]
fn flip_and_unflatten_of_0_dim() {
    // were: index-out-of-bounds panics
    let s = Tensor::scalar(2.0f64);
    assert_eq!(s.flip(&[0]).unwrap().item::<f64>().unwrap(), 2.0);
    assert!(s.flip(&[1]).is_err());
    let _ = s.unflatten(0, &[1]);
}

#[test]
fn unsqueeze_of_huge_stride_does_not_overflow() {
    // was: `size * stride` overflowed for empty dims with huge strides
    let x = Tensor::zeros(&[1], DType::F32).unwrap();
    let v = x
        .as_strided(&[0, 3], &[1i64 << 62, 1i64 << 62], None)
        .unwrap();
    assert_eq!(v.unsqueeze(1).unwrap().shape(), vec![0, 1, 3]);
}

#[test]
fn inplace_with_aliased_saved_operand_reports_modification() {
    // was: z.mul_(&z) saved `z` after the write and silently gave wrong gradients
    let l = Tensor::from_vec(vec![1.0f64, 2.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let z = l.mul(1.0).unwrap();
    z.mul_(&z).unwrap();
    let e = z.sum().unwrap().backward().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
}

#[test]
fn set_with_overflowing_offset_is_an_error() {
    // was: `offset + src.offset` overflowed
    let y = Tensor::zeros(&[4], DType::F32).unwrap();
    let x = Tensor::zeros(&[1], DType::F32).unwrap();
    assert!(
        x.set_with(&y.narrow(0, 1, 2).unwrap(), usize::MAX, &[1], None)
            .is_err()
    );
    assert_eq!(x.version(), 0);
}

/// libFuzzer `index` (overflow checks on): iterating a layout with a huge stride on a size-1 dim
/// stepped the offset past usize::MAX after the last element (debug builds panicked).
#[test]
fn strided_iteration_with_huge_stride_on_size_one_dim() {
    let x = Tensor::arange(0, 3, 1).unwrap();
    let v = x.as_strided(&[1, 3], &[1i64 << 62, 1], Some(0)).unwrap();
    assert_eq!(v.to_vec::<i64>().unwrap(), vec![0, 1, 2]);
    assert_eq!(
        v.contiguous().unwrap().to_vec::<i64>().unwrap(),
        vec![0, 1, 2]
    );
}

/// libFuzzer `set_resize` (overflow checks on): numel of a shape with a zero size and huge other
/// sizes overflowed while multiplying (debug builds panicked); it is 0.
#[test]
fn numel_with_a_zero_size_and_huge_sizes_is_zero() {
    let big = 1usize << 40;
    let l = tapegrad::Layout::new(vec![big, big, 0], vec![0, 0, 1], 0);
    assert_eq!(l.numel(), 0);
    // resize_ to such a shape may be accepted (numel 0) or refused, but never panics
    let x = Tensor::zeros(&[0], DType::F32).unwrap();
    match x.resize_(&[big, big, 0]) {
        Ok(_) => assert_eq!(x.numel(), 0),
        Err(_) => assert_eq!(x.shape(), vec![0]),
    }
}

/// libFuzzer `views` (overflow checks on): the out-of-bounds message of `as_strided` multiplied
/// a huge span by the item size (debug builds panicked while building the error).
#[test]
fn as_strided_huge_span_is_an_error() {
    let x = Tensor::zeros(&[3], DType::F32).unwrap();
    let e = x.as_strided(&[2], &[1i64 << 62], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!(x.shape(), vec![3]);
}

#[test]
fn sizes_above_i64_max_are_refused_and_i64_max_slices() {
    // was (1): the slice normalisation cast the dim size to i64, so a CSR of shape
    // [1, 0, usize::MAX] (numel 0) sliced on its last dim came out with the wrong size; (2) the
    // gradient of `values().sum()` of a COO [1, 0, usize::MAX] was expanded through an i64 shape
    // (usize::MAX became -1, "keep this size") and refused by the engine (libFuzzer `sparse`
    // findings). PyTorch's sizes are int64: every constructor now refuses a size above i64::MAX.
    let crow = Tensor::from_vec(vec![0i64], &[1]).unwrap();
    let col = Tensor::from_vec(Vec::<i64>::new(), &[0]).unwrap();
    let v = Tensor::from_vec(Vec::<f64>::new(), &[0]).unwrap();
    let e = Tensor::sparse_csr(&crow, &col, &v, &[1, 0, usize::MAX]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let idx = Tensor::zeros(&[3, 0], DType::I64).unwrap();
    let vals = Tensor::zeros(&[0], DType::F64).unwrap();
    let e = Tensor::sparse_coo(&idx, &vals, &[1, 0, usize::MAX]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(Tensor::zeros(&[0, 1usize << 63], DType::F32).is_err());
    // a dim of exactly i64::MAX still slices with exact bounds
    let big = i64::MAX as usize;
    let x = Tensor::sparse_csr(&crow, &col, &v, &[1, 0, big]).unwrap();
    let y = tapegrad::sparse::slice(&x, &[-1], &[2], &[4]).unwrap();
    assert_eq!(y.shape(), vec![1, 0, 2]);
    let y = tapegrad::sparse::slice(&x, &[2], &[-3], &[i64::MAX]).unwrap();
    assert_eq!(y.shape(), vec![1, 0, 3]);
}

#[test]
fn diagonal_with_huge_offset_is_empty() {
    // was: `offset * stride` overflowed before the empty-diagonal check (libFuzzer views finding)
    let x = Tensor::arange(0, 12, 1).unwrap().view(&[3, 4]).unwrap();
    for off in [i64::MAX, i64::MIN, i64::MAX / 3, -(i64::MAX / 3)] {
        let d = x.diagonal(off, 0, 1).unwrap();
        assert_eq!(d.shape(), vec![0]);
        assert_eq!(d.storage_offset(), 0);
    }
    assert_eq!(
        x.diagonal(1, 0, 1).unwrap().to_vec::<i64>().unwrap(),
        vec![1, 6, 11]
    );
}

#[test]
fn views_of_an_aliasing_input_get_index_based_gradients() {
    // was: split/narrow/diagonal/select of an input whose elements alias (expanded or
    // overlapping as_strided) scattered by storage position and divided among aliases, so
    // `v.grad` of the expanded tensor was spread evenly and the leaf got 1.9999999999999998
    // instead of 2 (views smoke input #518; reference values from PyTorch 2.x)
    let b = Tensor::arange_dtype(0.0, 21.0, 1.0, DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let v = b.as_strided(&[6, 1], &[0, 4], Some(0)).unwrap();
    let parts = v.split(2, 0).unwrap();
    parts[2].sum().unwrap().backward().unwrap();
    let g = b.grad().unwrap().to_vec::<f64>().unwrap();
    assert_eq!(g[0], 2.0);
    assert!(g[1..].iter().all(|&x| x == 0.0));

    // x = ones(1); v = x.expand(6); v.retain_grad(); v.narrow(0, 4, 2).sum().backward()
    let x = Tensor::ones(&[1], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let v = x.expand(&[6]).unwrap();
    v.retain_grad().unwrap();
    v.narrow(0, 4, 2)
        .unwrap()
        .sum()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(
        v.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![0.0, 0.0, 0.0, 0.0, 1.0, 1.0]
    );
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![2.0]);

    // x = arange(3); v = x.expand(2, 3); v.retain_grad(); v.diagonal().sum().backward()
    let x = Tensor::arange_dtype(0.0, 3.0, 1.0, DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let v = x.expand(&[2, 3]).unwrap();
    v.retain_grad().unwrap();
    v.diagonal(0, 0, 1)
        .unwrap()
        .sum()
        .unwrap()
        .backward()
        .unwrap();
    assert_eq!(
        v.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 0.0, 0.0, 0.0, 1.0, 0.0]
    );
    assert_eq!(
        x.grad().unwrap().to_vec::<f64>().unwrap(),
        vec![1.0, 1.0, 0.0]
    );
}

#[test]
fn inplace_on_a_view_of_a_view_leaf_is_refused() {
    // was: a leaf made from a view (`r.view(..).requires_grad_()`) has a base without history
    // that does not require grad; in-place ops on views of it were allowed, rebased the history
    // onto that base and left the leaf without a gradient (views smoke input #547). PyTorch
    // refuses: "a view of a leaf Variable that requires grad is being used in an in-place
    // operation."
    let r = Tensor::arange_dtype(0.0, 20.0, 1.0, DType::F64).unwrap();
    let b = r.view(&[2, 10]).unwrap().requires_grad_(true).unwrap();
    assert!(b.is_leaf());
    let d = b.t().unwrap().diagonal(6, 0, 1).unwrap();
    let e = d.t_().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    let e = b.select(0, 0).unwrap().mul_(2.0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::LeafInplace);
    assert_eq!(b.version(), 0);
    b.t().unwrap().sum().unwrap().backward().unwrap();
    assert_eq!(b.grad().unwrap().to_vec::<f64>().unwrap(), vec![1.0; 20]);
    // the base itself (no grad) may still be written under grad mode
    r.mul_(2.0).unwrap();
    assert_eq!(b.version(), 1);
}

#[test]
fn view_of_empty_tensor_with_huge_sizes() {
    // was: `compute_stride` multiplied the old sizes without the zero shortcut and the new
    // contiguous strides without saturation, overflowing for empty shapes with huge sizes
    // (libFuzzer views and set_resize findings, under overflow checks)
    let big = i64::MAX;
    let x = Tensor::zeros(&[0], DType::F32).unwrap();
    let v = x.view(&[0, big, 4]).unwrap();
    assert_eq!(v.shape(), vec![0, big as usize, 4]);
    assert_eq!(v.numel(), 0);
    let w = v.view(&[4, 0, big]).unwrap();
    assert_eq!(w.shape(), vec![4, 0, big as usize]);
    assert_eq!(w.strides()[2], 1);
    let u = w.unflatten(2, &[big, 1]).unwrap();
    assert_eq!(u.shape(), vec![4, 0, big as usize, 1]);
    assert_eq!(u.to_vec::<f32>().unwrap(), Vec::<f32>::new());
}

#[test]
fn movedim_of_a_0_dim_tensor() {
    // was: an index out of bounds panic building the permutation (libFuzzer views finding)
    let x = Tensor::scalar(2.0f64).requires_grad_(true).unwrap();
    let y = x.movedim(&[0], &[-1]).unwrap();
    assert_eq!(y.shape(), Vec::<usize>::new());
    assert!(y.is_view());
    y.mul(3.0).unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![3.0]);
    assert!(x.movedim(&[1], &[0]).is_err());
}

#[test]
fn set_with_stride_0_and_overflowing_numel_is_an_error() {
    // was: stride 0 kept the storage span at one element, so sizes whose product overflows were
    // accepted and `numel` overflowed later (libFuzzer set_resize finding)
    let s = tapegrad::Storage::zeroed(8).unwrap();
    let x = Tensor::zeros(&[0], DType::F64).unwrap();
    let e = x
        .set_storage(&s, 0, &[1 << 40, 1 << 40], Some(&[0, 0]))
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!((x.shape(), x.version()), (vec![0], 0));
    // within i64 it is a valid (overlapping) geometry
    x.set_storage(&s, 0, &[1 << 20, 1 << 20], Some(&[0, 0]))
        .unwrap();
    assert_eq!(x.numel(), 1 << 40);
}

#[test]
fn dense_check_of_an_empty_layout_with_huge_sizes() {
    // was: `is_non_overlapping_and_dense` multiplied the sizes unchecked (libFuzzer sparse
    // finding, through `to_dtype` of an empty tensor with huge sizes)
    let big = i64::MAX;
    let x = Tensor::zeros(&[0], DType::F64)
        .unwrap()
        .view(&[0, big, big])
        .unwrap();
    let y = x.to_dtype(DType::F32).unwrap();
    assert_eq!((y.shape(), y.numel()), (x.shape(), 0));
}

#[test]
fn unbind_of_an_empty_tensor_with_a_huge_dim_is_an_error() {
    // was: unbind/split of an empty tensor with a dim of 2^40 aborted the process allocating the
    // outputs' layouts (libFuzzer views finding); now it is an error and nothing changes
    let x = Tensor::zeros(&[0], DType::F32)
        .unwrap()
        .view(&[1usize << 40, 0])
        .unwrap();
    assert_eq!(x.unbind(0).unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        x.split(1, 0).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        x.chunk(1usize << 40, 0).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(x.version(), 0);
    // small counts still work
    assert_eq!(x.unbind(1).unwrap().len(), 0);
    assert_eq!(
        Tensor::zeros(&[3, 0], DType::F32)
            .unwrap()
            .unbind(0)
            .unwrap()
            .len(),
        3
    );
}

/// An empty tensor may carry any strides (`as_strided` on an empty shape); moving its storage
/// offset along a huge stride used to overflow (panics under overflow checks, a wrapped offset
/// otherwise): libFuzzer views (`diagonal`) and set_resize (`narrow`) findings on `0a4d7b2`.
#[test]
fn views_of_an_empty_tensor_whose_offset_would_overflow_are_errors() {
    let base = Tensor::zeros(&[4], DType::F32).unwrap();
    let big = i64::MAX / 2 + 1; // 2^62
    let x = base
        .as_strided(&[0, 4, 4], &[1, big, big], Some(0))
        .unwrap();
    let v0 = base.version();
    let overflow = |r: tapegrad::Result<Tensor>| {
        let e = r.unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
        assert!(e.to_string().contains("overflows int64"), "{e}");
    };
    overflow(x.narrow(1, 3, 1));
    overflow(x.slice(2, Some(2), None, 1));
    overflow(x.select(1, 2));
    overflow(x.diagonal(2, 1, 2));
    overflow(x.diagonal(-3, 1, 2));
    // the diagonal's stride (2^62 + 2^62) no longer fits in int64 either
    overflow(x.diagonal(0, 1, 2));
    overflow(x.unbind(1).map(|mut v| v.remove(0)));
    overflow(x.split(1, 2).map(|mut v| v.remove(0)));
    overflow(x.split_with_sizes(&[3, 1], 1).map(|mut v| v.remove(0)));
    assert_eq!(
        (x.shape(), x.strides(), x.storage_offset()),
        (vec![0, 4, 4], vec![1, 1 << 62, 1 << 62], 0)
    );
    assert_eq!(base.version(), v0);
    // offsets that fit still work and match PyTorch's arithmetic
    let n = x.narrow(1, 1, 2).unwrap();
    assert_eq!((n.shape(), n.storage_offset()), (vec![0, 2, 4], 1 << 62));
    assert_eq!(x.select(2, 1).unwrap().storage_offset(), 1 << 62);
}

/// `split_with_sizes` summed the sizes unchecked: sizes whose sum wraps to the dim size were
/// accepted.
#[test]
fn split_with_sizes_whose_sum_overflows_is_an_error() {
    let x = Tensor::zeros(&[3], DType::F32).unwrap();
    let e = x.split_with_sizes(&[usize::MAX, 4], 0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

/// The general elementwise path computed the output strides of an empty broadcast shape with
/// huge sizes unchecked (libFuzzer sparse finding on `0a4d7b2`, `mul` in the sparse @ dense
/// reference): now saturating like `contiguous_strides`.
#[test]
fn elementwise_on_an_empty_shape_with_huge_sizes() {
    let big = 1i64 << 40;
    let a = Tensor::zeros(&[0], DType::F64)
        .unwrap()
        .view(&[0, big, big])
        .unwrap();
    let b = Tensor::zeros(&[1], DType::F64)
        .unwrap()
        .expand(&[1, 1, big])
        .unwrap();
    for r in [a.mul(&b), b.mul(&a), a.add(b.transpose(1, 2).unwrap())] {
        let r = r.unwrap();
        assert_eq!((r.shape(), r.numel()), (a.shape(), 0));
    }
}

/// The backward of a view of an empty base that reports overlap (a stride 0 on an empty shape)
/// sized its alias counts with `hi - lo` where the span was 0 (libFuzzer interp/views finding):
/// the gradient of an empty base is now an empty tensor straight away.
#[test]
fn view_backward_into_an_empty_overlapping_base() {
    let x = Tensor::zeros(&[4], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let e = x
        .narrow(0, 3, 0)
        .unwrap()
        .as_strided(&[0, 3], &[1, 0], Some(3))
        .unwrap();
    let v = e.narrow(1, 1, 2).unwrap();
    v.sum().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0; 4]);
}

/// `to_sparse_coo` of an empty dense tensor with huge sizes multiplied the sizes unchecked
/// (libFuzzer sparse finding); so did the values gradient of an empty hybrid COO. What would
/// allocate a dense block whose contiguous strides overflow is refused, as in PyTorch 2.15
/// (checked: "Stride calculation overflowed" for `to_sparse(1)`, whose values are
/// `[0, 2^40, 2^40]`, and for every `to_dense` here; `to_sparse(2)` and `(3)` work).
#[test]
fn to_sparse_of_an_empty_tensor_with_huge_sizes() {
    let big = 1i64 << 40;
    let x = Tensor::zeros(&[0], DType::F32)
        .unwrap()
        .view(&[0, big, big])
        .unwrap();
    assert_eq!(
        x.to_sparse_coo(1).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    for sd in [2, 3] {
        let s = x.to_sparse_coo(sd).unwrap();
        assert_eq!((s.nnz().unwrap(), s.shape()), (0, x.shape()));
        let e = s.to_dense().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.message().contains("Stride calculation overflowed"), "{e}");
    }
}

/// `layer_norm` of an empty input whose contiguous strides overflow formed the product of its
/// normalized sizes unchecked (libFuzzer nn_geometry finding on `d2da3aa`, a `zeros` of shape
/// `[0, 2^40, 2^40]`). Constructors now refuse such shapes as `torch.empty` does ("Stride
/// calculation overflowed": no elements, but a first stride of 2^80), and `layer_norm` refuses
/// them in a view (`expand`), as PyTorch's allocation of its output does; `[3, 2^62, 0]`
/// (strides `[2^62, 1, 1]`) stays legal.
#[test]
fn empty_shapes_whose_contiguous_strides_overflow() {
    let big = 1usize << 40;
    for shape in [vec![0, big, big], vec![0, 1 << 62, 3]] {
        for r in [
            Tensor::zeros(&shape, DType::F32),
            Tensor::empty(&shape, DType::F64),
            Tensor::ones(&shape, DType::I64),
            Tensor::rand(&shape, DType::F32),
            Tensor::randn(&shape, DType::F32),
            Tensor::randint(0, 3, &shape),
            Tensor::from_vec(Vec::<f32>::new(), &shape),
        ] {
            let e = r.unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidArgument);
            assert!(e.message().contains("Stride calculation overflowed"), "{e}");
        }
    }
    let ok = Tensor::zeros(&[3usize, 1 << 62, 0], DType::F32).unwrap();
    assert_eq!(ok.strides(), vec![1 << 62, 1, 1]);
    let x = Tensor::zeros(&[0, 1, 1], DType::F32)
        .unwrap()
        .expand(&[0, big as i64, big as i64])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let e = x.layer_norm(&[big, big], None, None, 1e-5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // a mismatched normalized shape is still reported first, as in PyTorch
    let e = x.layer_norm(&[big, 3], None, None, 1e-5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
}

/// CSR slicing compared int32 columns with the window's bounds converted to int32: a column dim
/// above 2^31 wrapped the end and nothing was kept (libFuzzer sparse finding on `9df7f57`).
#[test]
fn csr_slice_with_int32_columns_and_a_huge_column_dim() {
    let c = 1usize << 54;
    for sorted in [true, false] {
        let cols: Vec<i32> = if sorted {
            vec![1, 97, 156, 5]
        } else {
            vec![156, 97, 1, 5]
        };
        let x = Tensor::sparse_csr(
            &Tensor::from_vec(vec![0i32, 3, 4], &[3]).unwrap(),
            &Tensor::from_vec(cols, &[4]).unwrap(),
            &Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[4]).unwrap(),
            &[2, c],
        )
        .unwrap();
        let y = tapegrad::sparse::slice(&x, &[-1], &[4], &[i64::MAX]).unwrap();
        assert_eq!(y.shape(), vec![2, c - 4]);
        let want_cols: Vec<i32> = if sorted {
            vec![93, 152, 1]
        } else {
            vec![152, 93, 1]
        };
        assert_eq!(y.col_indices().unwrap().to_vec::<i32>().unwrap(), want_cols);
        assert_eq!(
            y.crow_indices().unwrap().to_vec::<i32>().unwrap(),
            vec![0, 2, 3]
        );
        let want_vals = if sorted {
            vec![2.0, 3.0, 4.0]
        } else {
            vec![1.0, 2.0, 4.0]
        };
        assert_eq!(y.values().unwrap().to_vec::<f64>().unwrap(), want_vals);
    }
}

/// `flatten` multiplied the merged sizes unchecked: an empty tensor with huge sizes overflowed
/// (libFuzzer views finding on `e81cddc`). A zero among the merged sizes gives 0; a product above
/// int64 is an error, as PyTorch's int64 sizes require.
#[test]
fn flatten_of_an_empty_tensor_with_huge_sizes() {
    let big = 1i64 << 40;
    let x = Tensor::zeros(&[0], DType::F32)
        .unwrap()
        .view(&[0, big, big])
        .unwrap();
    let e = x.flatten(1, 2).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    assert_eq!(x.flatten(0, 2).unwrap().shape(), vec![0]);
    assert_eq!(x.flatten(0, 1).unwrap().shape(), vec![0, 1 << 40]);
    assert_eq!(x.version(), 0);
}

/// The gradient of a slice of a hybrid COO along a dense dim embeds the values' gradient at the
/// window's start; with no entries (a sparse dim of size 0) and a window at 2^61 of a 2^62 dense dim, the copy
/// into the empty window computed its byte offset (2^61 * 8) unchecked (libFuzzer sparse finding
/// on `3e27e03`). An empty copy now returns before any offset arithmetic.
#[test]
fn slice_gradient_of_an_empty_hybrid_coo_with_a_huge_dense_window() {
    let big = 1usize << 62;
    let idx = Tensor::zeros(&[1, 0], DType::I64).unwrap();
    let vals = Tensor::zeros(&[0, big], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x = Tensor::sparse_coo(&idx, &vals, &[0, big]).unwrap();
    let s = 1i64 << 61;
    let y = tapegrad::sparse::slice(&x, &[1], &[s], &[s + 1]).unwrap();
    assert_eq!(y.shape(), vec![0, 1]);
    let loss = y.values().unwrap().sum().unwrap();
    let g = tapegrad::autograd::grad(
        &[loss],
        std::slice::from_ref(&vals),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )
    .unwrap();
    assert_eq!(g[0].clone().unwrap().shape(), vec![0, big]);
}

/// Slicing a dense dim of an empty hybrid COO whose values have huge dense sizes narrowed the
/// empty values tensor, whose storage offset overflowed (an error for a slice that keeps
/// nothing; libFuzzer sparse finding on `7f2622e`). The window of empty values is built directly.
#[test]
fn slice_of_an_empty_hybrid_coo_with_huge_dense_dims() {
    let big = 1usize << 56;
    let idx = Tensor::zeros(&[2, 0], DType::I64).unwrap();
    // (a view: `zeros` of this shape is refused, its contiguous strides overflow as in
    // PyTorch; `torch.zeros(0).view(0, 2**20, 2**56)` works)
    let vals = Tensor::zeros(&[0], DType::F64)
        .unwrap()
        .view(&[0, 1 << 20, big as i64])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x = Tensor::sparse_coo(&idx, &vals, &[3, 0, 1 << 20, big]).unwrap();
    let y = tapegrad::sparse::slice(&x, &[2], &[-4], &[-2]).unwrap();
    assert_eq!(y.shape(), vec![3, 0, 2, big]);
    assert_eq!(y.values().unwrap().shape(), vec![0, 2, big]);
    // the gradient of `vals` is a dense block of its shape, which no allocation may make (its
    // contiguous strides overflow): an error from the backward, not a panic
    let loss = y.values().unwrap().sum().unwrap();
    let e = tapegrad::autograd::grad(
        &[loss],
        std::slice::from_ref(&vals),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )
    .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("Stride calculation overflowed"), "{e}");
}

/// `to_sparse_csr` of an empty batched shape allocated `crow_indices` (`batches * (rows + 1)`
/// entries, multiplied unchecked) with `vec!`, which aborts when the allocation fails (issue 26).
/// The length is now checked and the allocation fallible: an error, never an abort. (A shape
/// whose product overflows is refused earlier, by the numel check.)
#[test]
fn csr_whose_crow_cannot_be_allocated_is_an_error() {
    let (b, r) = (1usize << 30, 1usize << 28); // 2^58 crow entries: 2 EiB
    let dense = Tensor::zeros(&[b, r, 0], DType::F32).unwrap();
    assert_eq!(
        dense.to_sparse_csr().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let vals = Tensor::zeros(&[0], DType::F32).unwrap();
    let idx = Tensor::zeros(&[3, 0], DType::I64).unwrap();
    let coo = Tensor::sparse_coo(&idx, &vals, &[b, r, 0]).unwrap();
    assert_eq!(
        coo.to_sparse_csr().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let big = 1usize << 40;
    let crow = Tensor::zeros(&[1], DType::I64).unwrap();
    let col = Tensor::zeros(&[0], DType::I64).unwrap();
    assert_eq!(
        Tensor::sparse_csr(&crow, &col, &vals, &[big, big, 0])
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
}

/// `to_dense` of a batched CSR walked every batch's rows even after the last entry (an empty CSR
/// of 2^28 batches took 0.3 s; issue 26); it now stops at the last entry. Values stay exact for an
/// empty CSR and for one whose entries all sit in the first batch.
#[test]
fn to_dense_of_a_batched_csr_stops_after_the_last_entry() {
    let (b, r, c) = (1usize << 16, 2usize, 3usize);
    let crow = Tensor::zeros(&[b * (r + 1)], DType::I64).unwrap();
    let empty = Tensor::sparse_csr(
        &crow,
        &Tensor::zeros(&[0], DType::I64).unwrap(),
        &Tensor::zeros(&[0], DType::F32).unwrap(),
        &[b, r, c],
    )
    .unwrap();
    let d = empty.to_dense().unwrap();
    assert_eq!(d.shape(), vec![b, r, c]);
    assert!(d.to_vec::<f32>().unwrap().iter().all(|&v| v == 0.0));

    let mut cr = vec![0i64; b * (r + 1)];
    cr[1] = 1; // batch 0: row 0 holds one entry, row 1 one more
    cr[2] = 2;
    let s = Tensor::sparse_csr(
        &Tensor::from_vec(cr, &[b * (r + 1)]).unwrap(),
        &Tensor::from_vec(vec![2i64, 0], &[2]).unwrap(),
        &Tensor::from_vec(vec![5.0f32, 7.0], &[2]).unwrap(),
        &[b, r, c],
    )
    .unwrap();
    let d = s.to_dense().unwrap().to_vec::<f32>().unwrap();
    assert_eq!(&d[..6], &[0.0, 0.0, 5.0, 7.0, 0.0, 0.0]);
    assert!(d[6..].iter().all(|&v| v == 0.0));
    // the round trip through the dense form rebuilds the same crow
    let back = s.to_dense().unwrap().to_sparse_csr().unwrap();
    assert_eq!(
        back.crow_indices().unwrap().to_vec::<i64>().unwrap(),
        s.crow_indices().unwrap().to_vec::<i64>().unwrap()
    );
}

/// The backward of a max pool (2-D, 1-D, adaptive) of an empty batch reshaped the gradient to
/// `[0, -1]`, an ambiguous shape, and failed (nn_geometry smoke finding; PyTorch returns a zero
/// gradient of the input's shape).
#[test]
fn max_pool_backward_of_an_empty_batch() {
    let x = Tensor::zeros(&[0, 1, 2, 8], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let outs = [
        x.adaptive_max_pool2d(&[1, 3]).unwrap(),
        x.max_pool2d(&[2], None, &[0], &[1], false).unwrap(),
    ];
    for y in outs {
        let g = tapegrad::autograd::grad(
            &[y.sum().unwrap()],
            std::slice::from_ref(&x),
            &[None],
            tapegrad::autograd::GradOptions::default(),
        )
        .unwrap();
        assert_eq!(g[0].clone().unwrap().shape(), vec![0, 1, 2, 8]);
    }
}

/// A convolution with a zero-size kernel computed `k - 1` in usize (overflow panic with overflow
/// checks, garbage geometry without); huge dilations/paddings overflowed the effective kernel and
/// padded sizes (nn_geometry libFuzzer finding). PyTorch refuses kernel size 0; absurd geometry
/// is `InvalidArgument`.
#[test]
fn conv_with_an_empty_kernel_or_absurd_geometry_is_an_error() {
    use tapegrad::{ConvOptions, ConvPadding, ConvTransposeOptions};
    let x = Tensor::zeros(&[1, 1, 3], DType::F32).unwrap();
    let w0 = Tensor::zeros(&[1, 1, 0], DType::F32).unwrap();
    for padding in [ConvPadding::Same, ConvPadding::Valid, 2.into()] {
        let o = ConvOptions {
            padding,
            ..Default::default()
        };
        assert_eq!(
            x.conv1d(&w0, None, &o).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    let t = ConvTransposeOptions::default();
    assert_eq!(
        x.conv_transpose1d(&w0, None, &t).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let w = Tensor::zeros(&[1, 1, 2], DType::F32).unwrap();
    for o in [
        ConvOptions {
            dilation: (1i64 << 62).into(),
            ..Default::default()
        },
        ConvOptions {
            padding: (1i64 << 62).into(),
            ..Default::default()
        },
        ConvOptions {
            padding: ConvPadding::Same,
            dilation: i64::MAX.into(),
            ..Default::default()
        },
    ] {
        assert_eq!(
            x.conv1d(&w, None, &o).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
}

/// im2col formed the pointer of a kernel tap's first input element even when the tap reads no
/// element of the row (`x.offset(base)` with `base` 2^60 elements past the input: undefined
/// behaviour, caught by `ptr::offset`'s precondition under debug assertions), and computed the
/// tap's valid range in `isize` (`-off + stride - 1` overflowed for an empty input with huge
/// padding and stride). Offsets are now formed only for elements inside the input, the range in
/// i128, and the front door asserts the kernel's invariants (nn_geometry libFuzzer findings).
#[test]
fn conv_taps_that_read_nothing_form_no_pointer() {
    use tapegrad::{ConvOptions, ConvTransposeOptions};
    let x = Tensor::ones(&[1, 1, 3], DType::F64).unwrap();
    let w = Tensor::ones(&[1, 1, 2], DType::F64).unwrap();
    let b = Tensor::from_vec(vec![2.5f64], &[1]).unwrap();
    // tap 1 reads positions 2^60 + o (beyond the input), tap 0 reads o - 2^60 (before it)
    let o = ConvOptions {
        padding: (1i64 << 60).into(),
        dilation: (1i64 << 61).into(),
        ..Default::default()
    };
    let y = x.conv1d(&w, Some(&b), &o).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 3]);
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![2.5; 3]);
    // the same geometry in 2-d (the inner dim's copy path, stride 1)
    let x2 = Tensor::ones(&[1, 1, 1, 3], DType::F64).unwrap();
    let w2 = Tensor::ones(&[1, 1, 1, 2], DType::F64).unwrap();
    let o2 = ConvOptions {
        padding: tapegrad::ConvPadding::Explicit(vec![0, 1i64 << 60].into()),
        dilation: vec![1, 1i64 << 61].into(),
        ..Default::default()
    };
    let y2 = x2.conv2d(&w2, None, &o2).unwrap();
    assert_eq!(y2.to_vec::<f64>().unwrap(), vec![0.0; 3]);
    // and its gradients (col2im of the same taps)
    let xg = x.requires_grad_(true).unwrap();
    let g = tapegrad::autograd::grad(
        &[xg.conv1d(&w, None, &o).unwrap().sum().unwrap()],
        std::slice::from_ref(&xg),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )
    .unwrap();
    assert_eq!(g[0].clone().unwrap().to_vec::<f64>().unwrap(), vec![0.0; 3]);
    // an empty spatial input with a non-empty batch and channels is PyTorch's error (it reached
    // the kernel with the overflowing range)
    let e = Tensor::ones(&[1, 1, 0], DType::F64).unwrap();
    let o = ConvOptions {
        padding: (1i64 << 61).into(),
        stride: i64::MAX.into(),
        ..Default::default()
    };
    let w1 = Tensor::ones(&[1, 1, 1], DType::F64).unwrap();
    let err = e.conv1d(&w1, Some(&b), &o).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(
        err.to_string()
            .contains("Only zero batch or zero channel inputs are supported, but got input shape: [1, 1, 1, 0]"),
        "{err}"
    );
    assert_eq!(
        e.conv_transpose1d(&w1, None, &ConvTransposeOptions::default())
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
}

/// A convolution whose input has no channels ran the kernel, whose plane size `1 * 2^40 *
/// 2^40` overflowed; a transposed convolution's output size `(in - 1) * stride + dilation *
/// (k - 1) + output_padding + 1` was computed in i64 and overflowed for an output padding
/// below a huge dilation. Empty operands now skip the kernel (output zero plus bias); the
/// transposed size is computed in i128 and refused above int64.
#[test]
fn conv_of_an_empty_operand_or_overflowing_transposed_size() {
    use tapegrad::{ConvOptions, ConvTransposeOptions};
    let x = Tensor::zeros(&[1, 0, 1 << 20, 1 << 20], DType::F64).unwrap();
    let w = Tensor::zeros(&[2, 0, 1, 1], DType::F64).unwrap();
    let b = Tensor::from_vec(vec![2.5f64, -1.0], &[2]).unwrap();
    let o = ConvOptions {
        stride: (1i64 << 20).into(),
        ..Default::default()
    };
    // torch 2.15: an input without channels gives an output without channels (its Empty
    // backend), not the bias
    let y = x.conv2d(&w, Some(&b), &o).unwrap();
    assert_eq!(y.shape(), vec![1, 0, 1, 1]);
    assert_eq!(y.numel(), 0);
    let x = Tensor::ones(&[1, 1, 2], DType::F64).unwrap();
    let w = Tensor::ones(&[1, 1, 1], DType::F64).unwrap();
    let t = ConvTransposeOptions {
        stride: (1i64 << 61).into(),
        dilation: i64::MAX.into(),
        output_padding: (i64::MAX - 1).into(),
        ..Default::default()
    };
    assert_eq!(
        x.conv_transpose1d(&w, None, &t).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
}

/// `enable_gqa` read the heads of the value as `dim() - 3` for a 2-d value (a usize
/// underflow: panic with overflow checks, out-of-bounds index without), and skipped the
/// grouping for a 2-d query or key. PyTorch reads `size(-3)` of query, key and value and
/// raises `IndexError` (nn_geometry libFuzzer finding, 6 inputs).
#[test]
fn sdpa_grouped_heads_of_a_2d_operand_are_dim_errors() {
    use tapegrad::SdpaOptions;
    let t = |s: &[usize]| Tensor::zeros(s, DType::F32).unwrap();
    let opts = SdpaOptions {
        enable_gqa: true,
        ..Default::default()
    };
    for (q, k, v) in [
        (t(&[2, 3, 4]), t(&[1, 3, 4]), t(&[3, 4])),
        (t(&[2, 3, 4]), t(&[3, 4]), t(&[2, 3, 4])),
        (t(&[3, 4]), t(&[2, 3, 4]), t(&[2, 3, 4])),
        (t(&[3, 4]), t(&[3, 4]), t(&[3, 4])),
        (t(&[2, 2, 3, 4]), t(&[1, 3, 4]), t(&[3, 4])),
    ] {
        let e = Tensor::scaled_dot_product_attention(&q, &k, &v, opts).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DimOutOfRange, "{e}");
    }
    let y =
        Tensor::scaled_dot_product_attention(&t(&[4, 3, 4]), &t(&[2, 3, 4]), &t(&[1, 3, 4]), opts)
            .unwrap();
    assert_eq!(y.shape(), vec![4, 3, 4]);
    // a causal mask for an empty batch is not built ([2^20, 2^20] booleans)
    let e = t(&[0, 1 << 20, 4]);
    let causal = SdpaOptions {
        is_causal: true,
        ..Default::default()
    };
    let y = Tensor::scaled_dot_product_attention(&e, &e, &e, causal).unwrap();
    assert_eq!(y.shape(), vec![0, 1 << 20, 4]);
}

/// Pooling arithmetic was i64 (`2 * pad`, `dilation * (k - 1)` overflowed for kernels near
/// `usize::MAX`) and usize (`(o + 1) * size` of adaptive windows); an empty batch with huge
/// planes built a window per output position. Now i128 / u128, and no windows without a
/// plane (nn_geometry libFuzzer finding, 2 inputs).
#[test]
fn pooling_with_huge_kernels_and_empty_batches_with_huge_planes() {
    let x = Tensor::from_vec((0..16).map(|v| v as f64).collect(), &[1, 1, 4, 4]).unwrap();
    // (since session 16 such geometry is refused before any arithmetic: PyTorch's 2-D pools
    // narrow kernel, stride, padding and dilation to int32)
    let (k, p) = (usize::MAX, usize::MAX / 2);
    for e in [
        x.max_pool2d(&[k], None, &[p], &[1], false).unwrap_err(),
        x.avg_pool2d(&[k], None, &[p], false, false, None)
            .unwrap_err(),
        x.avg_pool2d(&[k], None, &[p], true, true, None)
            .unwrap_err(),
    ] {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    let (k, p) = (i32::MAX as usize, i32::MAX as usize / 2);
    let y = x.max_pool2d(&[k], None, &[p], &[1], false).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 1, 1]);
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![15.0]);
    let y = x.avg_pool2d(&[k], None, &[p], false, false, None).unwrap();
    assert_eq!(y.to_vec::<f64>().unwrap(), vec![7.5]);
    let y = x.avg_pool2d(&[k], None, &[p], true, true, None).unwrap();
    assert_eq!(y.shape(), vec![1, 1, 1, 1]);
    let e = Tensor::zeros(&[0, 1, 1usize << 40, 1usize << 20], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    for y in [
        e.max_pool2d(&[2], None, &[0], &[1], false).unwrap(),
        e.avg_pool2d(&[2], None, &[0], false, true, None).unwrap(),
        e.adaptive_avg_pool2d(&[1 << 20]).unwrap(),
        e.adaptive_max_pool2d(&[1 << 20]).unwrap(),
    ] {
        let g = tapegrad::autograd::grad(
            &[y.sum().unwrap()],
            std::slice::from_ref(&e),
            &[None],
            tapegrad::autograd::GradOptions::default(),
        )
        .unwrap();
        assert_eq!(g[0].clone().unwrap().shape(), e.shape());
    }
}

/// group_norm multiplied `N * num_groups` and the group's size of an empty input with huge
/// dims unchecked (nn_geometry libFuzzer finding); it now has PyTorch's checks (channels and
/// `HxW` above 0) and an empty batch of any sizes normalizes to itself. batch_norm and
/// instance_norm multiplied the sizes of such inputs unchecked too.
#[test]
fn norms_of_empty_inputs_with_huge_sizes() {
    let t = |s: &[usize]| Tensor::zeros(s, DType::F64).unwrap();
    let y = t(&[0, 1 << 30, 1 << 30, 2])
        .group_norm(1 << 20, None, None, 1e-5)
        .unwrap();
    assert_eq!(y.shape(), vec![0, 1 << 30, 1 << 30, 2]);
    for (s, g, msg) in [
        (
            &[2usize, 0][..],
            3,
            "Expected number of channels to be greater than 0, got 0",
        ),
        (
            &[1 << 20, 1 << 20, 0][..],
            1 << 20,
            "Expected HxW to be greater than 0, got 0",
        ),
        (
            &[2, 4, 0][..],
            4,
            "Expected HxW to be greater than 0, got 0",
        ),
    ] {
        let e = t(s).group_norm(g, None, None, 1e-5).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(msg), "{e}");
    }
    let y = t(&[1 << 40, 0, 1 << 40])
        .batch_norm(None, None, None, None, true, 0.1, 1e-5)
        .unwrap();
    assert_eq!(y.shape(), vec![1 << 40, 0, 1 << 40]);
    let y = t(&[1 << 40, 0, 1 << 30, 1 << 30])
        .instance_norm(None, None, None, None, true, 0.1, 1e-5)
        .unwrap();
    assert_eq!(y.shape(), vec![1 << 40, 0, 1 << 30, 1 << 30]);
    assert_eq!(
        t(&[1 << 20, 1 << 20, 0])
            .instance_norm(None, None, None, None, true, 0.1, 1e-5)
            .unwrap_err()
            .kind(),
        ErrorKind::InvalidArgument
    );
}

/// group_norm took a weight or bias of any shape holding `C` elements (batch_norm's rule), and
/// its backward then returned a `[C]` gradient for a `[C, 1]` bias (the fuzz target
/// `nn_geometry`: "NativeGroupNormBackward0 returned an invalid gradient at index 1 - got [3]
/// but expected shape compatible with [3, 1]"). torch 2.15 refuses such parameters up front
/// (`check_group_norm_inputs`, messages below); nothing is recorded or changed.
#[test]
fn group_norm_parameters_must_be_vectors() {
    let x = Tensor::zeros(&[3, 3, 3], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let col = Tensor::zeros(&[3, 1], DType::F64).unwrap();
    let vec3 = Tensor::ones(&[3], DType::F64).unwrap();
    for (w, b, what) in [
        (None, Some(&col), "bias"),
        (Some(&col), None, "weight"),
        (Some(&vec3), Some(&col), "bias"),
    ] {
        let e = x.group_norm(3, w, b, 1e-5).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::ShapeMismatch, "{e}");
        let want = format!(
            "Expected {what} to be a vector of size equal to the number of channels in input, but got {what} of shape [3, 1] and input of shape [3, 3, 3]"
        );
        assert!(e.to_string().contains(&want), "{e}");
    }
    assert!(x.grad().is_none());
    // vectors of C elements still work, with gradients of their shapes
    let b = Tensor::zeros(&[3], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = x.group_norm(3, None, Some(&b), 1e-5).unwrap();
    y.sum().unwrap().backward().unwrap();
    assert_eq!(b.grad().unwrap().shape(), vec![3]);
}

/// Adaptive pools built one window per output row and column before looking at the output:
/// an output size of `(2^62, 0)` (empty) tried to collect 2^62 windows, a `Vec` capacity
/// overflow panic (the fuzz target `nn_geometry`). An empty output builds no window; a huge
/// non-empty one is a refusal, not an abort.
#[test]
fn adaptive_pools_of_huge_empty_outputs() {
    let x = Tensor::ones(&[1, 1, 2, 2], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let big = 1i64 << 40;
    for os in [[big, 0], [0, big]] {
        let a = x.adaptive_avg_pool2d(os).unwrap();
        let (m, i) = x.adaptive_max_pool2d_with_indices(os).unwrap();
        let want: Vec<usize> = vec![1, 1, os[0] as usize, os[1] as usize];
        assert_eq!(
            (a.shape(), m.shape(), i.shape()),
            (want.clone(), want.clone(), want)
        );
        a.sum()
            .unwrap()
            .add(&m.sum().unwrap())
            .unwrap()
            .backward()
            .unwrap();
    }
    assert_eq!(x.grad().unwrap().to_vec::<f32>().unwrap(), vec![0.0; 4]);
    // the fuzzed size: an empty output, as torch 2.15 gives it (`torch.empty(1, 1, 2**62, 0)`
    // and `torch.empty(1, 1, 0, 2**62)` both allocate nothing, checked)
    let huge = 1i64 << 62;
    for os in [[huge, 0], [0, huge]] {
        let want: Vec<usize> = vec![1, 1, os[0] as usize, os[1] as usize];
        assert_eq!(x.adaptive_avg_pool2d(os).unwrap().shape(), want);
        assert_eq!(x.adaptive_max_pool2d(os).unwrap().shape(), want);
    }
    // a huge output that is not empty: refused (it cannot be allocated)
    let e = x.adaptive_avg_pool2d([1i64 << 40, 1i64 << 30]).unwrap_err();
    assert!(!e.message().is_empty());
    assert!(x.adaptive_max_pool2d([1i64 << 40, 1i64 << 30]).is_err());
}

/// Printing an empty tensor walked its sizes: `{:?}` of a `[2^20, 2^20, 0]` tensor (in a
/// failed assertion of the test above) built 2^20 nested brackets per row until the process
/// was killed. An empty tensor of several dims prints as PyTorch's `tensor([], size=(..))`.
#[test]
fn display_of_an_empty_tensor_with_huge_sizes() {
    let t = |s: &[usize], dt| Tensor::zeros(s, dt).unwrap();
    assert_eq!(
        t(&[1 << 20, 1 << 20, 0], DType::F32).to_string(),
        "tensor([], size=(1048576, 1048576, 0))"
    );
    // torch 2.15's reprs
    assert_eq!(t(&[0], DType::F32).to_string(), "tensor([])");
    assert_eq!(
        t(&[0], DType::F64).to_string(),
        "tensor([], dtype=torch.float64)"
    );
    assert_eq!(
        t(&[2, 0], DType::F64).to_string(),
        "tensor([], size=(2, 0), dtype=torch.float64)"
    );
    assert_eq!(
        t(&[0, 3], DType::I32).to_string(),
        "tensor([], size=(0, 3), dtype=torch.int32)"
    );
    let g = t(&[2, 0], DType::F32).requires_grad_(true).unwrap();
    assert_eq!(g.to_string(), "tensor([], size=(2, 0), requires_grad=True)");
}

/// The bool kernels read a bool tensor's bytes as `bool`, for which a byte other than 0 or 1 is
/// undefined behaviour; `set_` (a raw storage, or reinterpreting another dtype's tensor) and the
/// `.npy`/`.pt` readers could put such bytes under a bool tensor, and a tensor of another dtype
/// sharing the storage could write them later. Now a bool tensor is never set over a storage
/// holding other bytes or shared with another dtype (nor another dtype over a bool tensor's
/// storage), and the readers store any nonzero byte as 1 (true, as PyTorch and NumPy read it).
#[test]
fn bool_tensors_never_read_bytes_other_than_0_and_1() {
    use tapegrad::Storage;
    let b = || Tensor::zeros(&[1], DType::Bool).unwrap();
    // a raw storage with other bytes: refused, nothing changed
    let raw = Storage::from_bytes(&[0, 2, 1, 255]).unwrap();
    let t = b();
    let e = t.set_storage(&raw, 0, &[4], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch, "{e}");
    assert_eq!((t.shape(), t.version()), (vec![1], 0));
    // reinterpreting a uint8 tensor (even of 0s and 1s: it may write any byte later)
    let u = Tensor::from_vec(vec![0u8, 1, 1, 0], &[4]).unwrap();
    let e = t.set_with(&u, 0, &[4], None).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    assert_eq!(
        t.set_storage(&u.storage(), 0, &[4], None)
            .unwrap_err()
            .kind(),
        ErrorKind::DTypeMismatch
    );
    // and the other way: a uint8 tensor over a bool tensor's storage
    let bt = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    let v = Tensor::zeros(&[1], DType::U8).unwrap();
    assert_eq!(
        v.set_with(&bt, 0, &[3], None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    // a raw storage of 0s and 1s is fine; it then refuses other dtypes
    let ok = Storage::from_bytes(&[1, 0, 1, 1]).unwrap();
    t.set_storage(&ok, 0, &[4], None).unwrap();
    assert_eq!(
        v.set_storage(&ok, 0, &[4], None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        t.logical_not().unwrap().to_vec::<bool>().unwrap(),
        vec![false, true, false, false]
    );
    assert_eq!(t.sum().unwrap().item::<i64>().unwrap(), 3);
    // a `.npy` of booleans holding bytes 2 and 255: true, stored as 1
    let header = "{'descr': '|b1', 'fortran_order': False, 'shape': (4,), }";
    let mut h = header.to_string();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(' ');
    }
    h.push('\n');
    let mut file = b"\x93NUMPY\x01\x00".to_vec();
    file.extend((h.len() as u16).to_le_bytes());
    file.extend(h.as_bytes());
    file.extend([0u8, 2, 255, 1]);
    let n = tapegrad::interop::npy::from_bytes(&file).unwrap();
    assert_eq!(n.dtype(), DType::Bool);
    assert_eq!(n.to_vec::<bool>().unwrap(), vec![false, true, true, true]);
    assert_eq!(
        n.logical_not().unwrap().to_vec::<bool>().unwrap(),
        vec![true, false, false, false]
    );
    assert_eq!(n.sum().unwrap().item::<i64>().unwrap(), 3);
    assert!(n.any((), false).unwrap().item::<bool>().unwrap());
    assert!(!n.all((), false).unwrap().item::<bool>().unwrap());
    assert_eq!(
        n.eq(Tensor::ones(&[4], DType::Bool).unwrap())
            .unwrap()
            .to_vec::<bool>()
            .unwrap(),
        vec![false, true, true, true]
    );
}

/// A `.pt` pickle whose int64 tensor is marked `requires_grad=True` (libFuzzer `pt` finding of
/// session 16): the reader called `requires_grad_` and returned its error kind, outside the
/// reader's contract. torch.load refuses such a file too; it is now `Malformed`, naming the dtype.
#[test]
fn pt_record_of_an_integer_tensor_requiring_grad_is_malformed() {
    let file = include_bytes!("../fuzz/corpus/pt/int_tensor_requires_grad");
    let e = tapegrad::interop::fuzzing::unpickle(file).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed, "{e}");
    assert!(e.to_string().contains("requires_grad"), "{e}");
    assert!(e.to_string().contains("I64"), "{e}");
}

/// `mean` (and `var`) multiplied the reduced sizes of an empty input as integers: reducing dims
/// 0 and 2 of an expanded `[2^40, 0, 2^40]` overflowed (libFuzzer nn_geometry finding on
/// `6a0138d`, in a batch-norm backward). The count is the f64 divisor now. torch 2.15 gives
/// shape `[0]` for both and a `[1, 0, 1]` gradient (checked).
#[test]
fn mean_of_an_empty_expand_with_huge_reduced_dims() {
    let big = 1i64 << 40;
    let x = Tensor::zeros(&[1, 0, 1], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = x.expand(&[big, 0, big]).unwrap();
    let m = y.mean(&[0, 2], false, None).unwrap();
    assert_eq!(m.shape(), vec![0]);
    m.sum().unwrap().backward().unwrap();
    assert_eq!(x.grad().unwrap().shape(), vec![1, 0, 1]);
    assert_eq!(y.var(&[0, 2], 1.0, false).unwrap().shape(), vec![0]);
}

/// libFuzzer nn_geometry (campaign of session 21): `layer_norm` over an empty normalized shape
/// of an input whose outer sizes are huge multiplied the row count into its statistics'
/// byte size with overflow. PyTorch refuses those statistics ("Storage size calculation
/// overflowed" for `[2^62, 0]`, out of memory for `[2^40, 2^20, 0]`); tapegrad refuses them
/// before any size product, and the input is unchanged.
#[test]
fn layer_norm_of_an_empty_input_with_huge_outer_sizes() {
    for sh in [vec![1usize << 62, 0], vec![1 << 40, 1 << 20, 0]] {
        let x = Tensor::zeros(&sh, DType::F32)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let v = x.version();
        let e = x.layer_norm(&[0], None, None, 1e-5).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{sh:?}: {e}");
        assert!(e.to_string().contains("layer_norm"), "{e}");
        assert_eq!((x.shape(), x.version()), (sh.clone(), v));
    }
    // a small empty-rowed input still normalizes: shape kept, no statistics to speak of
    let x = Tensor::zeros(&[3, 0], DType::F32).unwrap();
    assert_eq!(
        x.layer_norm(&[0], None, None, 1e-5).unwrap().shape(),
        vec![3, 0]
    );
}
