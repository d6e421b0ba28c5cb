//! Sparse slicing against the reference cases of ../shared/sparse_and_set.md §5: every Paddle
//! case S01–S52, every TensorFlow case T01–T36 and the step-1 SciPy CSR cases. Forwards are
//! compared field by field (shape, indices/crows/cols, values, order); gradients in dense form,
//! and the gradient's pattern must be exactly the input's. S01–S42 and T01–T30 are generated
//! into `sparse_slice_cases.rs` by `tools/gen_sparse_cases.py`; the rest are below.

use tapegrad::autograd::{GradcheckOptions, gradcheck};
use tapegrad::{ErrorKind, LayoutKind, Result, Tensor, sparse};

#[path = "sparse_slice_cases.rs"]
mod cases;

type Call<'a> = (&'a [i64], &'a [i64], &'a [i64]);

fn coo(shape: &[usize], ix: &[&[i64]], vals: &[f64]) -> Result<Tensor> {
    let flat: Vec<i64> = ix.iter().flat_map(|r| r.iter().copied()).collect();
    Tensor::sparse_coo(
        &Tensor::from_vec(flat, &[ix.len(), vals.len()])?,
        &Tensor::from_vec(vals.to_vec(), &[vals.len()])?,
        shape,
    )
}

fn csr(shape: &[usize], crow: &[i64], col: &[i64], vals: &[f64]) -> Result<Tensor> {
    Tensor::sparse_csr(
        &Tensor::from_slice(crow, &[crow.len()])?,
        &Tensor::from_slice(col, &[col.len()])?,
        &Tensor::from_slice(vals, &[vals.len()])?,
        shape,
    )
}

fn flat(ix: &[&[i64]]) -> Vec<i64> {
    ix.iter().flat_map(|r| r.iter().copied()).collect()
}

fn dense(t: &Tensor) -> Vec<f64> {
    t.to_dense().unwrap().to_vec::<f64>().unwrap()
}

/// Seeds d(loss)/d(out.values) = ones (what Paddle's `sp_out.backward()` does).
fn backward_ones(out: &Tensor) -> Result<()> {
    out.values()?.sum()?.backward()
}

/// The dense reference of a sparse slice: `dense(x)[window]` (row-major over the window).
fn dense_window(x: &Tensor, call: Call<'_>) -> Result<Vec<f64>> {
    let mut d = x.to_dense()?.detach();
    let shape = x.shape();
    let (axes, starts, ends) = call;
    for (k, &a) in axes.iter().enumerate() {
        let ax = if a < 0 { a + shape.len() as i64 } else { a } as usize;
        let n = shape[ax] as i64;
        let (s, e) = (starts[k], ends[k]);
        let (s, e) = if s >= n || e <= -n {
            (0, 0)
        } else {
            let s = if s < 0 { (s + n).max(0) } else { s };
            let e = if e < 0 { e + n } else { e.min(n) };
            if s >= e { (0, 0) } else { (s, e) }
        };
        d = d.narrow(ax as i64, s, (e - s) as usize)?;
    }
    d.contiguous()?.to_vec::<f64>()
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn coo_case(
    xs: &[usize],
    xi: &[&[i64]],
    xv: &[f64],
    call: Call<'_>,
    os: &[usize],
    oi: &[&[i64]],
    ov: &[f64],
    gi: &[&[i64]],
    gv: &[f64],
) -> Result<()> {
    let x = coo(xs, xi, xv)?.requires_grad_(true)?;
    let out = sparse::slice(&x, call.0, call.1, call.2)?;
    assert_eq!(out.layout_kind(), LayoutKind::SparseCoo);
    assert_eq!(out.shape(), os);
    assert_eq!(out.indices()?.shape(), vec![xi.len(), ov.len()]);
    assert_eq!(out.indices()?.to_vec::<i64>()?, flat(oi));
    assert_eq!(out.values()?.to_vec::<f64>()?, ov);
    assert_eq!(out.is_coalesced()?, x.is_coalesced()?);
    assert_eq!(dense(&out), dense_window(&x, call)?);
    backward_ones(&out)?;
    let g = x.grad().expect("x.grad");
    assert_eq!(g.layout_kind(), LayoutKind::SparseCoo);
    assert_eq!(g.indices()?.to_vec::<i64>()?, x.indices()?.to_vec::<i64>()?);
    assert_eq!(dense(&g), dense(&coo(xs, gi, gv)?));
    // the same slice through CSR gives the same dense result and gradient
    if (xs.len() == 2 || xs.len() == 3) && xi.len() == xs.len() {
        let xc = x.detach().to_sparse_csr()?.requires_grad_(true)?;
        let oc = sparse::slice(&xc, call.0, call.1, call.2)?;
        assert_eq!(dense(&oc), dense(&out));
        backward_ones(&oc)?;
        assert_eq!(dense(&xc.grad().unwrap()), dense(&g));
    }
    Ok(())
}

#[allow(clippy::too_many_arguments)]
pub(crate) fn csr_case(
    xs: &[usize],
    xc: &[i64],
    xl: &[i64],
    xv: &[f64],
    call: Call<'_>,
    os: &[usize],
    oc: &[i64],
    ol: &[i64],
    ov: &[f64],
    grad: (&[i64], &[i64], &[f64]),
) -> Result<()> {
    let x = csr(xs, xc, xl, xv)?.requires_grad_(true)?;
    let out = sparse::slice(&x, call.0, call.1, call.2)?;
    assert_eq!(out.layout_kind(), LayoutKind::SparseCsr);
    assert_eq!(out.shape(), os);
    assert_eq!(out.crow_indices()?.to_vec::<i64>()?, oc);
    assert_eq!(out.col_indices()?.to_vec::<i64>()?, ol);
    assert_eq!(out.values()?.to_vec::<f64>()?, ov);
    assert_eq!(dense(&out), dense_window(&x, call)?);
    backward_ones(&out)?;
    let g = x.grad().expect("x.grad");
    assert_eq!(g.layout_kind(), LayoutKind::SparseCsr);
    assert_eq!(g.crow_indices()?.to_vec::<i64>()?, xc);
    assert_eq!(g.col_indices()?.to_vec::<i64>()?, xl);
    assert_eq!(dense(&g), dense(&csr(xs, grad.0, grad.1, grad.2)?));
    // int32 indices give the same result
    let x32 = Tensor::sparse_csr(
        &Tensor::from_slice(xc, &[xc.len()])?.to_dtype(tapegrad::DType::I32)?,
        &Tensor::from_slice(xl, &[xl.len()])?.to_dtype(tapegrad::DType::I32)?,
        &Tensor::from_slice(xv, &[xv.len()])?,
        xs,
    )?;
    let o32 = sparse::slice(&x32, call.0, call.1, call.2)?;
    assert_eq!(o32.crow_indices()?.dtype(), tapegrad::DType::I32);
    assert_eq!(
        o32.crow_indices()?
            .to_dtype(tapegrad::DType::I64)?
            .to_vec::<i64>()?,
        oc
    );
    assert_eq!(
        o32.col_indices()?
            .to_dtype(tapegrad::DType::I64)?
            .to_vec::<i64>()?,
        ol
    );
    Ok(())
}

/// TF's `_SparseTensor_4x6` (value = 10·row + col; note the stored 0 at (0,0)).
pub(crate) fn tf_4x6() -> Result<Tensor> {
    let rc: [(i64, i64); 14] = [
        (0, 0),
        (0, 2),
        (0, 4),
        (0, 5),
        (1, 1),
        (1, 3),
        (1, 4),
        (2, 0),
        (2, 3),
        (2, 5),
        (3, 0),
        (3, 2),
        (3, 3),
        (3, 5),
    ];
    tf_tensor(&rc, &[4, 6])
}

/// TF's `_SparseTensor_5x7`.
pub(crate) fn tf_5x7() -> Result<Tensor> {
    let rc: [(i64, i64); 18] = [
        (0, 0),
        (0, 2),
        (0, 4),
        (0, 5),
        (1, 1),
        (1, 3),
        (1, 4),
        (1, 6),
        (2, 0),
        (2, 3),
        (2, 5),
        (3, 0),
        (3, 2),
        (3, 3),
        (3, 5),
        (4, 1),
        (4, 4),
        (4, 6),
    ];
    tf_tensor(&rc, &[5, 7])
}

/// TF's `_SparseTensor_4x6_empty`.
pub(crate) fn tf_4x6_empty() -> Result<Tensor> {
    tf_tensor(&[], &[4, 6])
}

fn tf_tensor(rc: &[(i64, i64)], shape: &[usize]) -> Result<Tensor> {
    let rows: Vec<i64> = rc.iter().map(|p| p.0).collect();
    let cols: Vec<i64> = rc.iter().map(|p| p.1).collect();
    let vals: Vec<f64> = rc.iter().map(|p| (10 * p.0 + p.1) as f64).collect();
    coo(shape, &[&rows, &cols], &vals)
}

/// A TF case: forward field by field, and `SparseSliceGrad` with backprop = out.values, which
/// is exactly `x.grad().values()` (aligned with x's stored elements). Also run through CSR.
pub(crate) fn tf_case(
    x: Result<Tensor>,
    call: Call<'_>,
    os: &[usize],
    oi: &[&[i64]],
    ov: &[f64],
    grad: &[f64],
) -> Result<()> {
    let x = x?;
    for xx in [x.clone(), x.to_sparse_csr()?] {
        let xx = xx.requires_grad_(true)?;
        let out = sparse::slice(&xx, call.0, call.1, call.2)?;
        assert_eq!(out.shape(), os);
        if out.layout_kind() == LayoutKind::SparseCoo {
            assert_eq!(out.indices()?.to_vec::<i64>()?, flat(oi));
        }
        assert_eq!(out.values()?.to_vec::<f64>()?, ov);
        assert_eq!(dense(&out), dense_window(&xx, call)?);
        let v = out.values()?;
        v.backward_with(
            Some(&v.detach()),
            tapegrad::autograd::BackwardOptions::default(),
        )?;
        assert_eq!(xx.grad().unwrap().values()?.to_vec::<f64>()?, grad);
    }
    Ok(())
}

/// Gradient of a sparse slice = ones on x's entries inside the window (dense form).
fn check_grad_is_window_mask(x: &Tensor, call: Call<'_>) -> Result<()> {
    let x = x.detach().requires_grad_(true)?;
    backward_ones(&sparse::slice(&x, call.0, call.1, call.2)?)?;
    let ones = sparse_ones_like(&x)?;
    let d = ones.to_dense()?.requires_grad_(true)?;
    sparse::slice(&d, call.0, call.1, call.2)?
        .sum()?
        .backward()?;
    let mask: Vec<f64> = d.grad().unwrap().to_vec::<f64>()?;
    let want: Vec<f64> = dense(&ones).iter().zip(&mask).map(|(a, b)| a * b).collect();
    assert_eq!(dense(&x.grad().unwrap()), want);
    Ok(())
}

/// Ones on x's pattern.
fn sparse_ones_like(x: &Tensor) -> Result<Tensor> {
    let v = x.values()?.detach().mul(0.0)?.add(1.0)?;
    match x.layout_kind() {
        LayoutKind::SparseCsr => {
            Tensor::sparse_csr(&x.crow_indices()?, &x.col_indices()?, &v, &x.shape())
        }
        _ => Tensor::sparse_coo(&x.indices()?, &v, &x.shape()),
    }
}

// ---- Paddle value-carrying and special cases (S43–S52) ----

/// S43: loss = sum(out.values²) on COO.
#[test]
fn s43_v_coo_grad_values() -> Result<()> {
    let x = coo(&[2, 3], &[&[0, 1, 1], &[1, 0, 2]], &[1.5, 2.5, 3.5])?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[1], &[1], &[3])?;
    assert_eq!(out.shape(), vec![2, 2]);
    assert_eq!(out.indices()?.to_vec::<i64>()?, vec![0, 1, 0, 1]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![1.5, 3.5]);
    let v = out.values()?;
    v.mul(&v)?.sum()?.backward()?;
    let g = x.grad().unwrap();
    assert_eq!(g.values()?.to_vec::<f64>()?, vec![3.0, 0.0, 7.0]);
    assert_eq!(
        dense(&g),
        dense(&coo(&[2, 3], &[&[0, 1], &[1, 2]], &[3.0, 7.0])?)
    );
    Ok(())
}

/// S44: S43 with CSR.
#[test]
fn s44_v_csr_grad_values() -> Result<()> {
    let x = csr(&[2, 3], &[0, 1, 3], &[1, 0, 2], &[1.5, 2.5, 3.5])?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[1], &[1], &[3])?;
    assert_eq!(out.crow_indices()?.to_vec::<i64>()?, vec![0, 1, 2]);
    assert_eq!(out.col_indices()?.to_vec::<i64>()?, vec![0, 1]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![1.5, 3.5]);
    let v = out.values()?;
    v.mul(&v)?.sum()?.backward()?;
    let g = x.grad().unwrap();
    assert_eq!(g.layout_kind(), LayoutKind::SparseCsr);
    assert_eq!(
        dense(&g),
        dense(&csr(&[2, 3], &[0, 1, 2], &[1, 2], &[3.0, 7.0])?)
    );
    Ok(())
}

/// S45: COO 3-D, two sliced axes, loss = sum(out.values²).
#[test]
fn s45_v_coo3d_grad_values() -> Result<()> {
    let x = coo(
        &[2, 2, 3],
        &[&[0, 0, 1, 1], &[0, 1, 0, 1], &[1, 2, 0, 1]],
        &[1., 2., 3., 4.],
    )?
    .requires_grad_(true)?;
    let out = sparse::slice(&x, &[0, 2], &[1, 0], &[2, 2])?;
    assert_eq!(out.shape(), vec![1, 2, 2]);
    assert_eq!(out.indices()?.to_vec::<i64>()?, vec![0, 0, 0, 1, 0, 1]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![3.0, 4.0]);
    let v = out.values()?;
    v.mul(&v)?.sum()?.backward()?;
    let want = coo(&[2, 2, 3], &[&[1, 1], &[0, 1], &[0, 1]], &[6.0, 8.0])?;
    assert_eq!(dense(&x.grad().unwrap()), dense(&want));
    Ok(())
}

/// S46: duplicates and unsorted input are kept as they are; the flag is copied.
#[test]
fn s46_u_uncoalesced() -> Result<()> {
    let x =
        coo(&[3, 3], &[&[1, 0, 1, 2], &[2, 1, 2, 0]], &[1., 2., 3., 4.])?.requires_grad_(true)?;
    assert!(!x.is_coalesced()?);
    let out = sparse::slice(&x, &[0], &[1], &[3])?;
    assert_eq!(out.shape(), vec![2, 3]);
    assert_eq!(out.indices()?.to_vec::<i64>()?, vec![0, 0, 1, 2, 2, 0]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![1.0, 3.0, 4.0]);
    assert!(!out.is_coalesced()?);
    backward_ones(&out)?;
    // Paddle: x_grad = out_grad shifted back: indices [[1,1,2],[2,2,0]], values [1,1,1]
    let paddle = coo(&[3, 3], &[&[1, 1, 2], &[2, 2, 0]], &[1., 1., 1.])?;
    assert_eq!(dense(&x.grad().unwrap()), dense(&paddle));
    assert_eq!(
        x.grad().unwrap().values()?.to_vec::<f64>()?,
        vec![1.0, 0.0, 1.0, 1.0]
    );
    Ok(())
}

/// S47: no stored elements.
#[test]
fn s47_z_nnz0() -> Result<()> {
    let x = coo(&[3, 3], &[&[], &[]], &[])?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[0], &[1], &[2])?;
    assert_eq!(out.shape(), vec![1, 3]);
    assert_eq!(out.indices()?.shape(), vec![2, 0]);
    assert_eq!(out.values()?.shape(), vec![0]);
    backward_ones(&out)?;
    assert_eq!(x.grad().unwrap().indices()?.shape(), vec![2, 0]);
    Ok(())
}

/// S48: a 0-length dim.
#[test]
fn s48_z_zero_dim() -> Result<()> {
    let x = coo(&[0, 3], &[&[], &[]], &[])?;
    let out = sparse::slice(&x, &[0, 1], &[0, 1], &[5, 2])?;
    assert_eq!(out.shape(), vec![0, 1]);
    assert_eq!(out.nnz()?, 0);
    let xc = Tensor::zeros(&[0, 3], tapegrad::DType::F64)?.to_sparse_csr()?;
    assert_eq!(
        sparse::slice(&xc, &[0, 1], &[0, 1], &[5, 2])?.shape(),
        vec![0, 1]
    );
    Ok(())
}

fn xe() -> Result<Tensor> {
    Tensor::from_vec(
        vec![1.0f64, 2., 0., 4., 0., 5., 6., 0., 7., 0., 8., 9.],
        &[3, 4],
    )?
    .to_sparse()
}

fn assert_err(r: Result<Tensor>, kind: ErrorKind, msg: &str) {
    match r {
        Ok(_) => panic!("expected an error containing {msg:?}"),
        Err(e) => {
            assert_eq!(e.kind(), kind, "{e}");
            assert!(e.message().contains(msg), "{e}");
        }
    }
}

/// S49: axis >= rank (Paddle's message).
#[test]
fn s49_err_axis() -> Result<()> {
    let x = xe()?;
    assert_err(
        sparse::slice(&x, &[2], &[0], &[1]),
        ErrorKind::InvalidArgument,
        "The axis value should be less than the rank of input, but received axes[0] = 2, rank of input is 2.",
    );
    assert_err(
        sparse::slice(&x.to_sparse_csr()?, &[2], &[0], &[1]),
        ErrorKind::InvalidArgument,
        "rank of input is 2",
    );
    assert_eq!(x.nnz()?, 8);
    Ok(())
}

/// S50: lengths of axes/starts/ends differ (Paddle's messages).
#[test]
fn s50_err_len() -> Result<()> {
    let x = xe()?;
    assert_err(
        sparse::slice(&x, &[0, 1], &[0], &[1, 2]),
        ErrorKind::InvalidArgument,
        "The length of axes (2) and length of starts (1) should be same.",
    );
    assert_err(
        sparse::slice(&x, &[0, 1], &[0, 1], &[1]),
        ErrorKind::InvalidArgument,
        "The length of axes (2) and length of ends (1) should be same.",
    );
    Ok(())
}

/// S51: axis < -rank. Paddle silently slices axis 0; tapegrad rejects it (issue 8).
#[test]
fn s51_q_axis_below_rank_is_rejected() -> Result<()> {
    let x = xe()?;
    assert_err(
        sparse::slice(&x, &[-5], &[0], &[1]),
        ErrorKind::InvalidArgument,
        "axes[0] = -5",
    );
    // -rank itself is fine
    assert_eq!(
        sparse::slice(&x, &[-2], &[0], &[1])?
            .values()?
            .to_vec::<f64>()?,
        vec![1., 2., 4.]
    );
    Ok(())
}

/// S52: duplicate axes. Paddle corrupts indices; tapegrad rejects them (also after wrapping).
#[test]
fn s52_q_dup_axes_is_rejected() -> Result<()> {
    let x = xe()?;
    assert_err(
        sparse::slice(&x, &[1, 1], &[1, 2], &[3, 4]),
        ErrorKind::InvalidArgument,
        "more than once",
    );
    assert_err(
        sparse::slice(&x, &[1, -1], &[1, 2], &[3, 4]),
        ErrorKind::InvalidArgument,
        "more than once",
    );
    assert_err(
        sparse::slice(&x.to_sparse_csr()?, &[0, -2], &[0, 0], &[1, 1]),
        ErrorKind::InvalidArgument,
        "more than once",
    );
    Ok(())
}

// ---- TensorFlow T31–T36 ----

/// T31 `testGradientsExplicit`: start [1,3], size [3,1].
#[test]
fn t31_gradients_explicit() -> Result<()> {
    tf_case(
        tf_4x6(),
        (&[0, 1], &[1, 3], &[4, 4]),
        &[3, 1],
        &[&[0, 1, 2], &[0, 0, 0]],
        &[13., 23., 33.],
        &[0., 0., 0., 0., 0., 13., 0., 0., 23., 0., 0., 0., 33., 0.],
    )
}

/// T32 `testGradients`: numeric vs analytic Jacobian of the slice w.r.t. the input values.
#[test]
fn t32_gradients_gradcheck() -> Result<()> {
    for (start, size) in [([0i64, 0], [4i64, 2]), ([0, 2], [5, 2]), ([0, 4], [5, 3])] {
        let ends = [start[0] + size[0], start[1] + size[1]];
        for x in [tf_4x6()?, tf_4x6()?.to_sparse_csr()?] {
            let x = x.requires_grad_(true)?;
            gradcheck(
                |v| sparse::slice(&v[0], &[0, 1], &start, &ends),
                &[x],
                GradcheckOptions::default(),
            )?;
        }
    }
    Ok(())
}

/// T33 `testNegativeSize`: TF errors on size -100. tapegrad's API takes ends (Paddle's), so the
/// TF call maps to ends = start + size = -90, which normalises to an empty dim (no error).
#[test]
fn t33_negative_size_maps_to_empty() -> Result<()> {
    let x = coo(&[1, 1], &[&[0], &[0]], &[0.0])?;
    let out = sparse::slice(&x, &[0, 1], &[10, 10], &[10 - 100, 10 + 100])?;
    assert_eq!(out.shape(), vec![0, 0]);
    assert_eq!(out.nnz()?, 0);
    Ok(())
}

/// T34 `testLargeSize`: start [2**62, -1], size [2**62, 2**62] must not overflow. With ends =
/// start + size saturated to i64::MAX: dim 0 is empty, dim 1 wraps -1 to 0 (TF treats -1
/// literally and reports [0, 2]).
#[test]
fn t34_large_size_no_overflow() -> Result<()> {
    let x = coo(&[1, 1], &[&[0], &[0]], &[0.0])?;
    let (s0, s1) = (1i64 << 62, -1i64);
    let ends = [s0.saturating_add(1 << 62), s1.saturating_add(1 << 62)];
    let out = sparse::slice(&x, &[0, 1], &[s0, s1], &ends)?;
    assert_eq!(out.shape(), vec![0, 1]);
    assert_eq!(out.nnz()?, 0);
    let out = sparse::slice(&x.to_sparse_csr()?, &[0, 1], &[s0, s1], &ends)?;
    assert_eq!(out.shape(), vec![0, 1]);
    Ok(())
}

/// T35 `testInvalidSparseInput`: indices/values count mismatch.
#[test]
fn t35_invalid_sparse_input() -> Result<()> {
    // TF indices [[0,0,0]] = one element of rank 3 -> [sparse_dim = 3, nnz = 1]
    let r = Tensor::sparse_coo(
        &Tensor::from_vec(vec![0i64, 0, 0], &[3, 1])?,
        &Tensor::from_vec(vec![0.0f64, 1., 2.], &[3])?,
        &[3, 3],
    );
    assert_err(
        r,
        ErrorKind::SparseInvalid,
        "Number of elements in indices (1) and values (3) do not match",
    );
    Ok(())
}

/// T36: unordered input keeps its order; gradient of a weighted sum; TF's literal negative
/// start differs from Paddle's wrap (tapegrad follows Paddle).
#[test]
fn t36_order_weighted_grad_and_negative_start() -> Result<()> {
    let x =
        coo(&[3, 2], &[&[2, 0, 1, 0], &[0, 1, 1, 0]], &[1., 2., 3., 4.])?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[0, 1], &[0, 0], &[2, 2])?;
    assert_eq!(out.indices()?.to_vec::<i64>()?, vec![0, 1, 0, 1, 1, 0]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![2., 3., 4.]);
    let v = out.values()?;
    v.backward_with(
        Some(&v.detach()),
        tapegrad::autograd::BackwardOptions::default(),
    )?;
    assert_eq!(
        x.grad().unwrap().values()?.to_vec::<f64>()?,
        vec![0., 2., 3., 4.]
    );

    let x = tf_4x6()?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[0, 1], &[1, 3], &[4, 4])?;
    out.values()?
        .mul(&Tensor::from_vec(vec![1.0f64, 2., 3.], &[3])?)?
        .sum()?
        .backward()?;
    assert_eq!(
        x.grad().unwrap().values()?.to_vec::<f64>()?,
        vec![0., 0., 0., 0., 0., 1., 0., 0., 2., 0., 0., 0., 3., 0.]
    );

    // start [-1, 0], size [2, 6]: Paddle wraps -1 to 3 and ends = 1 -> empty rows
    let out = sparse::slice(&tf_4x6()?, &[0, 1], &[-1, 0], &[1, 6])?;
    assert_eq!(out.shape(), vec![0, 6]);
    Ok(())
}

// ---- SciPy CSR slicing, step-1 cases (§5.3) ----

fn scipy_a() -> Result<Tensor> {
    csr(
        &[3, 4],
        &[0, 3, 5, 8],
        &[0, 1, 3, 1, 2, 0, 2, 3],
        &[1., 2., 4., 5., 6., 7., 8., 9.],
    )
}

fn scipy_case(
    x: &Tensor,
    call: Call<'_>,
    shape: &[usize],
    indptr: &[i64],
    indices: &[i64],
    data: &[f64],
) -> Result<()> {
    let out = sparse::slice(x, call.0, call.1, call.2)?;
    assert_eq!(out.shape(), shape);
    assert_eq!(out.crow_indices()?.to_vec::<i64>()?, indptr);
    assert_eq!(out.col_indices()?.to_vec::<i64>()?, indices);
    assert_eq!(out.values()?.to_vec::<f64>()?, data);
    check_grad_is_window_mask(x, call)
}

/// C01–C06: `A[1:3,1:3]`, `A[:, -3:-1]`, `A[2:100, :]`, `A[5:9, :]`, `A[2:1, :]`, `A[-100:2, :]`.
#[test]
fn c01_c06_scipy_slices() -> Result<()> {
    let a = scipy_a()?;
    scipy_case(
        &a,
        (&[0, 1], &[1, 1], &[3, 3]),
        &[2, 2],
        &[0, 2, 3],
        &[0, 1, 1],
        &[5., 6., 8.],
    )?;
    scipy_case(
        &a,
        (&[1], &[-3], &[-1]),
        &[3, 2],
        &[0, 1, 3, 4],
        &[0, 0, 1, 1],
        &[2., 5., 6., 8.],
    )?;
    scipy_case(
        &a,
        (&[0], &[2], &[100]),
        &[1, 4],
        &[0, 3],
        &[0, 2, 3],
        &[7., 8., 9.],
    )?;
    scipy_case(&a, (&[0], &[5], &[9]), &[0, 4], &[0], &[], &[])?;
    scipy_case(&a, (&[0], &[2], &[1]), &[0, 4], &[0], &[], &[])?;
    scipy_case(
        &a,
        (&[0], &[-100], &[2]),
        &[2, 4],
        &[0, 3, 5],
        &[0, 1, 3, 1, 2],
        &[1., 2., 4., 5., 6.],
    )
}

/// C15, C16 (`test_get_slices`): `F[1:2,1:2]`, `F[:,1:]`.
#[test]
fn c15_c16_scipy_get_slices() -> Result<()> {
    let f = csr(&[4, 3], &[0, 2, 3, 3, 4], &[0, 2, 0, 2], &[1., 1., 4., 1.])?;
    scipy_case(&f, (&[0, 1], &[1, 1], &[2, 2]), &[1, 1], &[0, 0], &[], &[])?;
    scipy_case(
        &f,
        (&[1], &[1], &[i64::MAX]),
        &[4, 2],
        &[0, 1, 1, 1, 2],
        &[1, 1],
        &[1., 1.],
    )
}

fn scipy_b() -> Result<Tensor> {
    Tensor::arange_dtype(0, 50, 1, tapegrad::DType::F64)?
        .view(&[5, 10])?
        .to_sparse_csr()
}

/// C17 (`test_get_slices`, `A[2:5,0:3]`) and C18 (`test_slicing_3`, `A[15:20]`, `A[3:2]`).
#[test]
fn c17_c18_scipy_arange() -> Result<()> {
    let b = scipy_b()?;
    assert_eq!(b.nnz()?, 49);
    scipy_case(
        &b,
        (&[0, 1], &[2, 0], &[5, 3]),
        &[3, 3],
        &[0, 3, 6, 9],
        &[0, 1, 2, 0, 1, 2, 0, 1, 2],
        &[20., 21., 22., 30., 31., 32., 40., 41., 42.],
    )?;
    scipy_case(&b, (&[0], &[15], &[20]), &[0, 10], &[0], &[], &[])?;
    scipy_case(&b, (&[0], &[3], &[2]), &[0, 10], &[0], &[], &[])
}

/// SciPy keeps duplicates: `csr((1,3), data [1,2,3], indices [2,0,2])[:, 1:3]`.
#[test]
fn scipy_duplicates_kept() -> Result<()> {
    let b = Tensor::sparse_csr(
        &Tensor::from_vec(vec![0i64, 3], &[2])?,
        &Tensor::from_vec(vec![2i64, 0, 2], &[3])?,
        &Tensor::from_vec(vec![1.0f64, 2., 3.], &[3])?,
        &[1, 3],
    )?;
    let out = sparse::slice(&b, &[1], &[1], &[3])?;
    assert_eq!(out.col_indices()?.to_vec::<i64>()?, vec![1, 1]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![1.0, 3.0]);
    Ok(())
}

// ---- beyond the reference tables ----

/// Hybrid COO: slicing a dense dim narrows `values` (Paddle gets this wrong); the gradient
/// keeps x's pattern and is zero outside the window.
#[test]
fn hybrid_coo_dense_dim() -> Result<()> {
    let d = Tensor::from_vec(
        vec![0.0f64, 0., 0., 1., 2., 3., 0., 0., 0., 4., 5., 6.],
        &[4, 3],
    )?;
    let x = d.to_sparse_coo(1)?.requires_grad_(true)?;
    assert_eq!(x.values()?.shape(), vec![2, 3]);
    let out = sparse::slice(&x, &[0, 1], &[1, 1], &[4, 3])?;
    assert_eq!(out.shape(), vec![3, 2]);
    assert_eq!(out.indices()?.to_vec::<i64>()?, vec![0, 2]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![2., 3., 5., 6.]);
    assert_eq!(dense(&out), dense_window(&x, (&[0, 1], &[1, 1], &[4, 3]))?);
    backward_ones(&out)?;
    let g = x.grad().unwrap();
    assert_eq!(g.indices()?.to_vec::<i64>()?, x.indices()?.to_vec::<i64>()?);
    assert_eq!(g.values()?.to_vec::<f64>()?, vec![0., 1., 1., 0., 1., 1.]);
    gradcheck(
        |v| sparse::slice(&v[0], &[1], &[1], &[3]),
        &[x.detach().requires_grad_(true)?],
        GradcheckOptions::default(),
    )
}

/// Coalesced COO sliced on axis 0 (binary-search path) matches the scan path.
#[test]
fn coalesced_axis0_fast_path_matches_scan() -> Result<()> {
    let d = Tensor::from_vec(
        (0..60)
            .map(|i| if i % 3 == 0 { 0.0 } else { i as f64 })
            .collect(),
        &[6, 10],
    )?;
    let fast = d.to_sparse()?;
    assert!(fast.is_coalesced()?);
    let ix = fast.indices()?;
    let slow = Tensor::sparse_coo_unchecked(&ix, &fast.values()?, &[6, 10], false)?;
    for (s, e) in [(0, 6), (1, 4), (2, 3), (5, 9), (-2, -1)] {
        let a = sparse::slice(&fast, &[0, 1], &[s, 2], &[e, 7])?;
        let b = sparse::slice(&slow, &[0, 1], &[s, 2], &[e, 7])?;
        assert_eq!(a.indices()?.to_vec::<i64>()?, b.indices()?.to_vec::<i64>()?);
        assert_eq!(a.values()?.to_vec::<f64>()?, b.values()?.to_vec::<f64>()?);
        assert!(a.is_coalesced()? && !b.is_coalesced()?);
    }
    Ok(())
}

/// Unsorted CSR columns take the filtering path and keep their in-row order.
#[test]
fn csr_unsorted_columns() -> Result<()> {
    let x = csr(&[2, 4], &[0, 3, 4], &[3, 0, 2, 1], &[1., 2., 3., 4.])?;
    let out = sparse::slice(&x, &[1], &[1], &[4])?;
    assert_eq!(out.crow_indices()?.to_vec::<i64>()?, vec![0, 2, 3]);
    assert_eq!(out.col_indices()?.to_vec::<i64>()?, vec![2, 1, 0]);
    assert_eq!(out.values()?.to_vec::<f64>()?, vec![1., 3., 4.]);
    Ok(())
}

/// A strided input is narrowed (a view), with the same normalisation.
#[test]
fn strided_input_is_narrowed() -> Result<()> {
    let d = Tensor::arange_dtype(0, 12, 1, tapegrad::DType::F64)?.view(&[3, 4])?;
    let s = sparse::slice(&d, &[-1, 0], &[1, -100], &[3, i64::MAX])?;
    assert_eq!(s.shape(), vec![3, 2]);
    assert!(s.shares_storage(&d));
    assert_eq!(
        s.contiguous()?.to_vec::<f64>()?,
        vec![1., 2., 5., 6., 9., 10.]
    );
    Ok(())
}

/// Inputs above the parallel threshold (two-pass chunked COO filter, CSR runs) give exactly the
/// naive filter's entries in input order, and the backward puts the output gradient back at
/// the kept entries (zeros elsewhere), for coalesced, uncoalesced and CSR inputs.
#[test]
fn large_inputs_match_naive_filter() -> Result<()> {
    let (n, nnz) = (700usize, 300_000usize);
    // a deterministic pseudo-random set of distinct positions, sorted (coalesced)
    let mut pos: Vec<u64> = (0..nnz as u64)
        .map(|k| k.wrapping_mul(2_654_435_761) % (n * n) as u64)
        .collect();
    pos.sort_unstable();
    pos.dedup();
    let nnz = pos.len();
    let rows: Vec<i64> = pos.iter().map(|p| (p / n as u64) as i64).collect();
    let cols: Vec<i64> = pos.iter().map(|p| (p % n as u64) as i64).collect();
    let vals: Vec<f64> = (0..nnz).map(|k| (k % 97) as f64 + 1.0).collect();
    let mut ix = rows.clone();
    ix.extend(&cols);
    let ix = Tensor::from_vec(ix, &[2, nnz])?;
    let v = Tensor::from_vec(vals.clone(), &[nnz])?;
    let coal = Tensor::sparse_coo(&ix, &v, &[n, n])?;
    let unco = Tensor::sparse_coo_unchecked(&ix, &v, &[n, n], false)?;
    let csr_x = coal.to_sparse_csr()?;
    assert!(coal.is_coalesced()?);
    for (axes, starts, ends) in [
        (vec![0i64, 1], vec![100i64, 50], vec![600i64, 420]),
        (vec![1], vec![-300], vec![i64::MAX]),
        (vec![0], vec![10], vec![690]),
    ] {
        let mut r = [(0usize, n), (0, n)];
        for (k, &a) in axes.iter().enumerate() {
            let (s, e) = (starts[k], ends[k]);
            let s = if s < 0 { s + n as i64 } else { s } as usize;
            let e = e.min(n as i64) as usize;
            r[a as usize] = (s, e);
        }
        let kept: Vec<usize> = (0..nnz)
            .filter(|&k| {
                let (i, j) = (rows[k] as usize, cols[k] as usize);
                i >= r[0].0 && i < r[0].1 && j >= r[1].0 && j < r[1].1
            })
            .collect();
        let want_ix: Vec<i64> = kept
            .iter()
            .map(|&k| rows[k] - r[0].0 as i64)
            .chain(kept.iter().map(|&k| cols[k] - r[1].0 as i64))
            .collect();
        let want_v: Vec<f64> = kept.iter().map(|&k| vals[k]).collect();
        for x in [&coal, &unco, &csr_x] {
            let x = x.detach().requires_grad_(true)?;
            let out = sparse::slice(&x, &axes, &starts, &ends)?;
            let got_ix = out.to_sparse_coo(2)?.indices()?.to_vec::<i64>()?;
            assert_eq!(got_ix, want_ix, "{:?} {axes:?}", x.layout_kind());
            assert_eq!(out.values()?.to_vec::<f64>()?, want_v);
            // weights 1..=m on the output's values
            let m = want_v.len();
            let w = Tensor::from_vec((1..=m).map(|i| i as f64).collect(), &[m])?;
            out.values()?.mul(&w)?.sum()?.backward()?;
            let g = x.grad().unwrap();
            let mut want_g = vec![0.0; nnz];
            for (j, &k) in kept.iter().enumerate() {
                want_g[k] = (j + 1) as f64;
            }
            assert_eq!(g.values()?.to_vec::<f64>()?, want_g);
        }
    }
    Ok(())
}
