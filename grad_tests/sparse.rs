//! Sparse layouts: constructors and their validation, conversions (with gradients), dense ops
//! rejecting sparse inputs, sparse @ dense, sum/mul/add/transpose, and gradcheck on sparse
//! inputs (perturbing the stored values).

use tapegrad::autograd::{GradcheckOptions, gradcheck};
use tapegrad::{DType, ErrorKind, LayoutKind, Result, Tensor, sparse};

fn xe() -> Result<Tensor> {
    Tensor::from_vec(
        vec![1.0f64, 2., 0., 4., 0., 5., 6., 0., 7., 0., 8., 9.],
        &[3, 4],
    )
}

fn gc(f: impl Fn(&[Tensor]) -> Result<Tensor>, xs: &[Tensor]) -> Result<()> {
    gradcheck(f, xs, GradcheckOptions::default())
}

#[test]
fn layout_and_accessors() -> Result<()> {
    let d = xe()?;
    assert_eq!(d.layout_kind(), LayoutKind::Strided);
    assert!(!d.is_sparse());
    assert_eq!(d.nnz().unwrap_err().kind(), ErrorKind::InvalidArgument);
    let c = d.to_sparse()?;
    assert_eq!(c.layout_kind(), LayoutKind::SparseCoo);
    assert_eq!((c.nnz()?, c.sparse_dim()?, c.dense_dim()?), (8, 2, 0));
    assert!(c.is_coalesced()?);
    assert_eq!(
        c.indices()?.to_vec::<i64>()?,
        vec![0, 0, 0, 1, 1, 2, 2, 2, 0, 1, 3, 1, 2, 0, 2, 3]
    );
    let r = d.to_sparse_csr()?;
    assert_eq!(r.layout_kind(), LayoutKind::SparseCsr);
    assert_eq!(r.crow_indices()?.to_vec::<i64>()?, vec![0, 3, 5, 8]);
    assert_eq!(
        r.col_indices()?.to_vec::<i64>()?,
        vec![0, 1, 3, 1, 2, 0, 2, 3]
    );
    assert_eq!(
        r.values()?.to_vec::<f64>()?,
        vec![1., 2., 4., 5., 6., 7., 8., 9.]
    );
    assert_eq!(r.indices().unwrap_err().kind(), ErrorKind::InvalidArgument);
    assert_eq!(
        c.crow_indices().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(r.to_dense()?.to_vec::<f64>()?, d.to_vec::<f64>()?);
    assert_eq!(
        c.to_sparse_csr()?.to_dense()?.to_vec::<f64>()?,
        d.to_vec::<f64>()?
    );
    assert_eq!(
        r.to_sparse()?.indices()?.to_vec::<i64>()?,
        c.indices()?.to_vec::<i64>()?
    );
    Ok(())
}

#[test]
fn batched_csr_paddle_layout() -> Result<()> {
    // XB of §5.1, unequal nnz per batch
    let xb = Tensor::from_vec(
        vec![
            1.0f64, 0., 2., 0., 3., 0., 0., 0., 4., 5., 0., 0., 6., 7., 0., 0., 0., 8.,
        ],
        &[3, 2, 3],
    )?;
    let s = xb.to_sparse_csr()?;
    assert_eq!(
        s.crow_indices()?.to_vec::<i64>()?,
        vec![0, 2, 3, 0, 1, 2, 0, 2, 3]
    );
    assert_eq!(
        s.col_indices()?.to_vec::<i64>()?,
        vec![0, 2, 1, 2, 0, 0, 1, 2]
    );
    assert_eq!(s.to_dense()?.to_vec::<f64>()?, xb.to_vec::<f64>()?);
    let coo = s.to_sparse_coo(3)?;
    assert_eq!(coo.to_dense()?.to_vec::<f64>()?, xb.to_vec::<f64>()?);
    // [B, R+1] crows are accepted too
    let t = Tensor::sparse_csr(
        &s.crow_indices()?.view(&[3, 3])?,
        &s.col_indices()?,
        &s.values()?,
        &[3, 2, 3],
    )?;
    assert_eq!(t.to_dense()?.to_vec::<f64>()?, xb.to_vec::<f64>()?);
    Ok(())
}

fn kind_msg(r: Result<Tensor>, kind: ErrorKind, msg: &str) {
    let e = r.err().unwrap_or_else(|| panic!("expected error {msg:?}"));
    assert_eq!(e.kind(), kind, "{e}");
    assert!(e.message().contains(msg), "{e}");
}

#[test]
fn constructors_validate() -> Result<()> {
    let v2 = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    let ix = |v: Vec<i64>, s: &[usize]| Tensor::from_vec(v, s).unwrap();
    kind_msg(
        Tensor::sparse_coo(&ix(vec![0, 3], &[1, 2]), &v2, &[3]),
        ErrorKind::SparseInvalid,
        "out of range [0, 3)",
    );
    kind_msg(
        Tensor::sparse_coo(&ix(vec![0, -1], &[1, 2]), &v2, &[3]),
        ErrorKind::SparseInvalid,
        "out of range",
    );
    kind_msg(
        Tensor::sparse_coo(&ix(vec![0, 1], &[1, 2]), &v2, &[3, 3]),
        ErrorKind::SparseInvalid,
        "dense dims",
    );
    kind_msg(
        Tensor::sparse_coo(&ix(vec![0, 1, 2], &[1, 3]), &v2, &[3]),
        ErrorKind::SparseInvalid,
        "do not match",
    );
    kind_msg(
        Tensor::sparse_coo(&Tensor::from_vec(vec![0.0f32, 1.0], &[1, 2])?, &v2, &[3]),
        ErrorKind::SparseInvalid,
        "int32 or int64",
    );
    let i32ix = Tensor::from_vec(vec![0i32, 2], &[1, 2])?;
    assert_eq!(
        Tensor::sparse_coo(&i32ix, &v2, &[3])?.indices()?.dtype(),
        DType::I64
    );
    let csr = |cr: Vec<i64>, cl: Vec<i64>, sh: &[usize]| {
        let n = cl.len();
        Tensor::sparse_csr(
            &Tensor::from_vec(cr.clone(), &[cr.len()]).unwrap(),
            &Tensor::from_vec(cl, &[n]).unwrap(),
            &Tensor::ones(&[n], DType::F32).unwrap(),
            sh,
        )
    };
    kind_msg(
        csr(vec![1, 1, 2], vec![0, 1], &[2, 2]),
        ErrorKind::SparseInvalid,
        "must start at 0",
    );
    kind_msg(
        csr(vec![0, 2, 1], vec![0, 1], &[2, 2]),
        ErrorKind::SparseInvalid,
        "must not decrease",
    );
    kind_msg(
        csr(vec![0, 1, 1], vec![0, 1], &[2, 2]),
        ErrorKind::SparseInvalid,
        "(the nnz)",
    );
    kind_msg(
        csr(vec![0, 1, 2], vec![0, 2], &[2, 2]),
        ErrorKind::SparseInvalid,
        "out of range [0, 2)",
    );
    kind_msg(
        csr(vec![0, 1, 2], vec![0, 1], &[2, 2, 2, 2]),
        ErrorKind::SparseInvalid,
        "2-D or 3-D",
    );
    kind_msg(
        csr(vec![0, 1, 2], vec![0, 1], &[2, 2, 2]),
        ErrorKind::SparseInvalid,
        "batches*(rows+1)",
    );
    // batch-local crows: each batch restarts at 0
    kind_msg(
        csr(vec![0, 1, 1, 2], vec![0, 0], &[2, 1, 2]),
        ErrorKind::SparseInvalid,
        "batch 1 must start at 0",
    );
    assert!(csr(vec![0, 1, 0, 1], vec![0, 0], &[2, 1, 2]).is_ok());
    Ok(())
}

/// Dense ops given a sparse tensor return `Unsupported`, never garbage.
#[test]
fn dense_ops_reject_sparse() -> Result<()> {
    let s = xe()?.to_sparse()?;
    let d = xe()?;
    let checks: Vec<(&str, Result<Tensor>)> = vec![
        ("exp", s.exp()),
        ("neg", s.neg()),
        ("relu", s.relu()),
        ("view", s.view(&[12])),
        ("reshape", s.reshape(&[12])),
        ("narrow", s.narrow(0, 0, 1)),
        ("select", s.select(0, 0)),
        ("permute", s.permute(&[1, 0])),
        ("unsqueeze", s.unsqueeze(0)),
        ("expand", s.expand(&[2, 3, 4])),
        ("contiguous", s.contiguous()),
        ("sum_dims", s.sum_dims(&[0], false)),
        ("mean", s.mean(&[0], false, None)),
        ("sub scalar", s.sub(1.0)),
        ("add dense + sparse (ok, dense result)", Ok(d.add(&s)?)),
        ("div tensor", s.div(&d)),
        ("matmul dense @ sparse", d.t()?.matmul(&s)),
        ("add_", s.add_(1.0)),
        ("mul_", s.mul_(2.0)),
        ("eq", s.eq(&d)),
        ("cat", Tensor::cat(&[&s, &s], 0)),
        (
            "index_select",
            s.index_select(0, &Tensor::from_vec(vec![0i64], &[1])?),
        ),
        ("softmax", s.softmax(0)),
    ];
    for (name, r) in checks {
        match r {
            Ok(t) if name.contains("(ok") => assert!(!t.is_sparse()),
            Ok(_) => panic!("{name}: expected Unsupported"),
            Err(e) => assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}"),
        }
    }
    assert_eq!(
        s.to_vec::<f64>().unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    assert_eq!(
        s.item::<f64>().unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // nothing changed
    assert_eq!(s.to_dense()?.to_vec::<f64>()?, xe()?.to_vec::<f64>()?);
    Ok(())
}

#[test]
fn conversions_gradcheck() -> Result<()> {
    let x = xe()?.to_sparse()?.requires_grad_(true)?;
    gc(|v| v[0].to_dense(), std::slice::from_ref(&x))?;
    gc(|v| v[0].to_sparse_csr(), std::slice::from_ref(&x))?;
    gc(
        |v| v[0].to_sparse_csr()?.to_sparse_coo(2),
        std::slice::from_ref(&x),
    )?;
    let r = xe()?.to_sparse_csr()?.requires_grad_(true)?;
    gc(|v| v[0].to_dense(), std::slice::from_ref(&r))?;
    gc(|v| v[0].to_sparse(), &[r])?;
    // dense -> sparse: the gradient is masked to the pattern, so check on a dense input without
    // zeros (a zero element would enter the pattern under a finite-difference perturbation)
    let d = xe()?.add(10.0)?.requires_grad_(true)?;
    gc(|v| v[0].to_sparse(), std::slice::from_ref(&d))?;
    gc(|v| v[0].to_sparse_csr(), std::slice::from_ref(&d))?;
    gc(|v| v[0].to_sparse_coo(1), &[d])?;
    // uncoalesced input through coalesce
    let u = Tensor::sparse_coo(
        &Tensor::from_vec(vec![1i64, 0, 1, 2, 1, 2], &[1, 6])?,
        &Tensor::from_vec(vec![1.0f64, 2., 3., 4., 5., 6.], &[6])?,
        &[3],
    )?
    .requires_grad_(true)?;
    let c = u.coalesce()?;
    assert_eq!(c.indices()?.to_vec::<i64>()?, vec![0, 1, 2]);
    assert_eq!(c.values()?.to_vec::<f64>()?, vec![2., 9., 10.]);
    gc(|v| v[0].coalesce(), std::slice::from_ref(&u))?;
    gc(
        |v| v[0].to_sparse_csr(),
        &[Tensor::sparse_coo(
            &Tensor::from_vec(vec![1i64, 0, 1, 1, 0, 1], &[2, 3])?,
            &Tensor::from_vec(vec![1.0f64, 2., 3.], &[3])?,
            &[2, 2],
        )?
        .requires_grad_(true)?],
    )?;
    Ok(())
}

/// PyTorch P09/P10: `x.to_dense()[:,1:3].sum()` gives x's full pattern with explicit zeros.
#[test]
fn to_dense_backward_is_masked() -> Result<()> {
    for x in [xe()?.to_sparse()?, xe()?.to_sparse_csr()?] {
        let x = x.requires_grad_(true)?;
        x.to_dense()?.narrow(1, 1, 2)?.sum()?.backward()?;
        let g = x.grad().unwrap();
        assert_eq!(g.layout_kind(), x.layout_kind());
        assert_eq!(
            g.values()?.to_vec::<f64>()?,
            vec![0., 1., 0., 1., 1., 0., 1., 0.]
        );
    }
    // dense -> sparse: the dense gradient is masked to the pattern
    let d = xe()?.requires_grad_(true)?;
    d.to_sparse()?.to_dense()?.sum()?.backward()?;
    assert_eq!(
        d.grad().unwrap().to_vec::<f64>()?,
        vec![1., 1., 0., 1., 0., 1., 1., 0., 1., 0., 1., 1.]
    );
    Ok(())
}

#[test]
fn values_constructor_is_differentiable() -> Result<()> {
    let v = Tensor::from_vec(vec![1.0f64, 2., 3.], &[3])?.requires_grad_(true)?;
    let ix = Tensor::from_vec(vec![0i64, 2, 2, 1, 0, 1], &[2, 3])?;
    gc(
        |a| {
            Tensor::sparse_coo(&ix, &a[0], &[3, 3])?
                .to_dense()?
                .mul(&xe()?.narrow(1, 0, 3)?.contiguous()?)
        },
        std::slice::from_ref(&v),
    )?;
    let crow = Tensor::from_vec(vec![0i64, 1, 3], &[3])?;
    let col = Tensor::from_vec(vec![1i64, 0, 2], &[3])?;
    gc(|a| Tensor::sparse_csr(&crow, &col, &a[0], &[2, 3]), &[v])?;
    Ok(())
}

#[test]
fn matmul_forward_and_gradcheck() -> Result<()> {
    let b = Tensor::from_vec((0..8).map(|i| i as f64 * 0.5 - 1.0).collect(), &[4, 2])?;
    let want = xe()?.matmul(&b)?.to_vec::<f64>()?;
    for s in [xe()?.to_sparse()?, xe()?.to_sparse_csr()?] {
        assert_eq!(s.matmul(&b)?.to_vec::<f64>()?, want);
        assert_eq!(sparse::matmul(&s, &b)?.to_vec::<f64>()?, want);
        let s = s.requires_grad_(true)?;
        let bb = b.detach().requires_grad_(true)?;
        gc(|v| sparse::matmul(&v[0], &v[1]), &[s.clone(), bb])?;
    }
    // batched CSR [B, M, K] @ [B, K, N]
    let xb = Tensor::from_vec(
        vec![
            1.0f64, 0., 2., 0., 3., 0., 0., 0., 4., 5., 0., 0., 6., 7., 0., 0., 0., 8.,
        ],
        &[3, 2, 3],
    )?;
    let d = Tensor::from_vec((0..18).map(|i| (i % 5) as f64 - 2.0).collect(), &[3, 3, 2])?;
    let s = xb.to_sparse_csr()?;
    assert_eq!(
        s.matmul(&d)?.to_vec::<f64>()?,
        xb.matmul(&d)?.to_vec::<f64>()?
    );
    gc(
        |v| sparse::matmul(&v[0], &v[1]),
        &[s.requires_grad_(true)?, d.requires_grad_(true)?],
    )?;
    // errors
    let s = xe()?.to_sparse()?;
    assert_eq!(
        s.matmul(&Tensor::zeros(&[3, 2], DType::F64)?)
            .unwrap_err()
            .kind(),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        s.matmul(&Tensor::zeros(&[4, 2], DType::F32)?)
            .unwrap_err()
            .kind(),
        ErrorKind::DTypeMismatch
    );
    Ok(())
}

#[test]
fn sum_mul_add_transpose() -> Result<()> {
    let x = xe()?.to_sparse()?;
    assert_eq!(x.sum()?.item::<f64>()?, 42.0);
    let m = x.mul(2.0)?;
    assert!(m.is_sparse());
    assert_eq!(
        m.to_dense()?.to_vec::<f64>()?,
        xe()?.mul(2.0)?.to_vec::<f64>()?
    );
    let w = Tensor::from_vec((0..12).map(|i| i as f64).collect(), &[3, 4])?;
    let md = x.mul(&w)?;
    assert_eq!(md.nnz()?, 8);
    assert_eq!(
        md.to_dense()?.to_vec::<f64>()?,
        xe()?.mul(&w)?.to_vec::<f64>()?
    );
    assert_eq!(
        w.mul(&x)?.to_dense()?.to_vec::<f64>()?,
        xe()?.mul(&w)?.to_vec::<f64>()?
    );
    let y = Tensor::from_vec(
        vec![0.0f64, 1., 0., 0., 0., 0., 0., 0., 0., 0., 0., 3.],
        &[3, 4],
    )?;
    let s = x.add(&y.to_sparse()?)?;
    assert!(s.is_sparse() && s.is_coalesced()?);
    assert_eq!(
        s.to_dense()?.to_vec::<f64>()?,
        xe()?.add(&y)?.to_vec::<f64>()?
    );
    assert_eq!(
        x.sub(&y.to_sparse()?)?.to_dense()?.to_vec::<f64>()?,
        xe()?.sub(&y)?.to_vec::<f64>()?
    );
    let sc = xe()?.to_sparse_csr()?.add(&y.to_sparse_csr()?)?;
    assert_eq!(sc.layout_kind(), LayoutKind::SparseCsr);
    assert_eq!(
        sc.to_dense()?.to_vec::<f64>()?,
        xe()?.add(&y)?.to_vec::<f64>()?
    );
    let t = x.t()?;
    assert_eq!(t.shape(), vec![4, 3]);
    assert_eq!(
        t.to_dense()?.to_vec::<f64>()?,
        xe()?.t()?.contiguous()?.to_vec::<f64>()?
    );
    assert!(!t.is_coalesced()?);
    assert_eq!(
        xe()?.to_sparse_csr()?.t().unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    // gradients
    let xs = x.detach().requires_grad_(true)?;
    let wd = w.detach().requires_grad_(true)?;
    gc(|v| v[0].sum(), std::slice::from_ref(&xs))?;
    gc(|v| v[0].mul(3.0), std::slice::from_ref(&xs))?;
    gc(|v| v[0].mul(&v[1]), &[xs.clone(), wd])?;
    gc(
        |v| v[0].add(&v[1]),
        &[xs.clone(), y.to_sparse()?.requires_grad_(true)?],
    )?;
    gc(|v| v[0].add(&v[0]), std::slice::from_ref(&xs))?;
    gc(|v| v[0].transpose(0, 1), std::slice::from_ref(&xs))?;
    gc(|v| v[0].t()?.to_sparse_csr(), &[xs])?;
    Ok(())
}

/// A sparse leaf used twice accumulates a gradient with its own pattern.
#[test]
fn gradient_accumulates_on_pattern() -> Result<()> {
    let x = xe()?.to_sparse_csr()?.requires_grad_(true)?;
    let a = sparse::slice(&x, &[0], &[0], &[2])?.values()?.sum()?;
    let b = x.values()?.mul(2.0)?.sum()?;
    a.add(&b)?.backward()?;
    let g = x.grad().unwrap();
    assert_eq!(
        g.crow_indices()?.to_vec::<i64>()?,
        x.crow_indices()?.to_vec::<i64>()?
    );
    assert_eq!(
        g.values()?.to_vec::<f64>()?,
        vec![3., 3., 3., 3., 3., 2., 2., 2.]
    );
    // a second backward accumulates
    sparse::slice(&x, &[1], &[0], &[1])?
        .values()?
        .sum()?
        .backward()?;
    assert_eq!(
        x.grad().unwrap().values()?.to_vec::<f64>()?,
        vec![4., 3., 3., 3., 3., 3., 2., 2.]
    );
    Ok(())
}

#[test]
fn display_sparse() -> Result<()> {
    let s = format!("{}", xe()?.to_sparse()?);
    assert!(
        s.contains("indices=") && s.contains("layout=torch.sparse_coo"),
        "{s}"
    );
    let s = format!("{}", xe()?.to_sparse_csr()?);
    assert!(
        s.contains("crow_indices=") && s.contains("layout=torch.sparse_csr"),
        "{s}"
    );
    Ok(())
}

#[test]
fn large_outputs_do_not_see_stale_pool_bytes() -> Result<()> {
    // was: the sparse kernels' `build` took pooled output blocks (which hold a dead tensor's
    // bytes) and accumulated into them, so to_dense / scatter-style backward of tensors above
    // the pool threshold (128 KiB) returned garbage where nothing was stored
    let n = 1usize << 16; // 256 KiB of f32
    for _ in 0..3 {
        // a dead tensor of the same size class leaves non-zero bytes in the cache
        drop(Tensor::full(&[n], 7.0f32, DType::F32)?.add(1.0)?);
        let i = Tensor::from_vec(vec![3i64, 5], &[1, 2])?;
        let v = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
        let s = Tensor::sparse_coo(&i, &v, &[n])?;
        let d: Vec<f32> = s.to_dense()?.to_vec()?;
        assert_eq!(d.iter().filter(|&&e| e != 0.0).count(), 2);
        assert_eq!((d[3], d[5]), (1.0, 2.0));
        // slice backward scatters into a [nnz]-row buffer
        let big = Tensor::from_vec(vec![1.0f32; n], &[n])?.to_sparse()?;
        drop(Tensor::full(&[n], 7.0f32, DType::F32)?.add(1.0)?);
        let x = big.requires_grad_(true)?;
        let y = sparse::slice(&x, &[0], &[0], &[2])?;
        y.values()?.sum()?.backward()?;
        let g: Vec<f32> = x.grad().unwrap().values()?.to_vec()?;
        assert_eq!(g.iter().filter(|&&e| e != 0.0).count(), 2);
    }
    Ok(())
}
