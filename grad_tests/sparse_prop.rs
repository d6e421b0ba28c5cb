//! Property test of sparse slicing: for random COO (any rank, hybrid, unsorted, duplicates)
//! and CSR (2-D/3-D, unsorted columns, duplicates) tensors and random (axes, starts, ends),
//! `slice(x).to_dense()` equals the dense slice of `x.to_dense()`, and the gradient of x has x's
//! pattern with values equal to the dense gradient read at x's positions.

use proptest::prelude::*;
use tapegrad::{LayoutKind, Result, Tensor, sparse};

#[derive(Clone, Debug)]
struct Case {
    shape: Vec<usize>,
    sparse_dim: usize,
    /// entries: (sparse coordinates, values of the dense block)
    entries: Vec<(Vec<usize>, Vec<f64>)>,
    csr: bool,
    axes: Vec<i64>,
    starts: Vec<i64>,
    ends: Vec<i64>,
}

fn bound() -> impl Strategy<Value = i64> {
    prop_oneof![8 => -7i64..8, 1 => Just(i64::MAX), 1 => Just(i64::MIN / 2)]
}

fn case() -> impl Strategy<Value = Case> {
    (1usize..=4, any::<bool>())
        .prop_flat_map(|(rank, csr)| {
            let rank = if csr { 2 + rank % 2 } else { rank };
            (
                prop::collection::vec(0usize..6, rank),
                Just(csr),
                0usize..rank,
            )
        })
        .prop_flat_map(|(shape, csr, dense_dims)| {
            let sd = if csr {
                shape.len()
            } else {
                shape.len() - dense_dims.min(shape.len() - 1)
            };
            let block: usize = shape[sd..].iter().product();
            let coords: Vec<BoxedStrategy<usize>> = shape[..sd]
                .iter()
                .map(|&d| {
                    if d == 0 {
                        Just(0usize).boxed()
                    } else {
                        (0..d).boxed()
                    }
                })
                .collect();
            let any_empty = shape[..sd].contains(&0);
            let n_max = if any_empty { 0 } else { 12 };
            let entries = prop::collection::vec(
                (
                    coords,
                    prop::collection::vec((-4i32..5).prop_map(f64::from), block),
                ),
                0..=n_max,
            );
            let rank = shape.len();
            let axes = prop::sample::subsequence((0..rank).collect::<Vec<_>>(), 0..=rank)
                .prop_flat_map(move |ax| {
                    let n = ax.len();
                    (
                        Just(ax),
                        prop::collection::vec(any::<bool>(), n),
                        prop::collection::vec(bound(), n),
                        prop::collection::vec(bound(), n),
                    )
                });
            (Just(shape), Just(sd), entries, Just(csr), axes)
        })
        .prop_map(
            |(shape, sparse_dim, entries, csr, (ax, neg, starts, ends))| {
                let rank = shape.len() as i64;
                let axes = ax
                    .iter()
                    .zip(&neg)
                    .map(|(&a, &n)| if n { a as i64 - rank } else { a as i64 })
                    .collect();
                Case {
                    shape,
                    sparse_dim,
                    entries,
                    csr,
                    axes,
                    starts,
                    ends,
                }
            },
        )
}

fn build(c: &Case) -> Result<Tensor> {
    let nnz = c.entries.len();
    let mut vals: Vec<f64> = Vec::new();
    if c.csr {
        // group by (batch, row) keeping the drawn column order (unsorted, duplicates)
        let mut e = c.entries.clone();
        let r = c.shape[c.shape.len() - 2];
        let key = |v: &Vec<usize>| if v.len() == 3 { v[0] * r + v[1] } else { v[0] };
        e.sort_by_key(|(v, _)| key(v));
        let (b, rows) = if c.shape.len() == 3 {
            (c.shape[0], r)
        } else {
            (1, r)
        };
        let mut crow = vec![0i64; b * (rows + 1)];
        let mut col = Vec::new();
        for (v, x) in &e {
            let (bi, ri) = if v.len() == 3 {
                (v[0], v[1])
            } else {
                (0, v[0])
            };
            for k in ri + 1..=rows {
                crow[bi * (rows + 1) + k] += 1;
            }
            col.push(v[v.len() - 1] as i64);
            vals.extend(x);
        }
        return Tensor::sparse_csr(
            &Tensor::from_vec(crow, &[b * (rows + 1)])?,
            &Tensor::from_vec(col, &[nnz])?,
            &Tensor::from_vec(vals, &[nnz])?,
            &c.shape,
        );
    }
    let mut ix = vec![0i64; c.sparse_dim * nnz];
    for (j, (v, x)) in c.entries.iter().enumerate() {
        for d in 0..c.sparse_dim {
            ix[d * nnz + j] = v[d] as i64;
        }
        vals.extend(x);
    }
    let mut vshape = vec![nnz];
    vshape.extend(&c.shape[c.sparse_dim..]);
    Tensor::sparse_coo(
        &Tensor::from_vec(ix, &[c.sparse_dim, nnz])?,
        &Tensor::from_vec(vals, &vshape)?,
        &c.shape,
    )
}

/// Linear positions over the sparse dims of x's entries, in storage order.
fn positions(x: &Tensor) -> Result<Vec<usize>> {
    let shape = x.shape();
    if x.layout_kind() == LayoutKind::SparseCsr {
        let (crow, col) = (
            x.crow_indices()?.to_vec::<i64>()?,
            x.col_indices()?.to_vec::<i64>()?,
        );
        let (b, r, c) = if shape.len() == 3 {
            (shape[0], shape[1], shape[2])
        } else {
            (1, shape[0], shape[1])
        };
        let mut out = Vec::new();
        let mut base = 0usize;
        for bi in 0..b {
            let seg = &crow[bi * (r + 1)..(bi + 1) * (r + 1)];
            for ri in 0..r {
                for k in seg[ri] as usize..seg[ri + 1] as usize {
                    out.push((bi * r + ri) * c + col[base + k] as usize);
                }
            }
            base += seg[r] as usize;
        }
        return Ok(out);
    }
    let ix = x.indices()?;
    let (sd, nnz) = (ix.shape()[0], ix.shape()[1]);
    let ix = ix.to_vec::<i64>()?;
    Ok((0..nnz)
        .map(|j| (0..sd).fold(0usize, |p, d| p * shape[d] + ix[d * nnz + j] as usize))
        .collect())
}

fn check(c: &Case) -> Result<()> {
    let x = build(c)?.requires_grad_(true)?;
    let out = sparse::slice(&x, &c.axes, &c.starts, &c.ends)?;
    assert_eq!(out.layout_kind(), x.layout_kind());
    let xd = x.detach().to_dense()?.requires_grad_(true)?;
    let want = sparse::slice(&xd, &c.axes, &c.starts, &c.ends)?;
    assert_eq!(out.shape(), want.shape());
    assert_eq!(
        out.to_dense()?.to_vec::<f64>()?,
        want.contiguous()?.to_vec::<f64>()?
    );
    // gradient of sum(out.to_dense() * w) against the dense computation
    let n = want.numel();
    let w = Tensor::from_vec(
        (0..n).map(|i| (i % 7) as f64 - 2.5).collect(),
        &want.shape(),
    )?;
    out.to_dense()?.mul(&w)?.sum()?.backward()?;
    want.mul(&w)?.sum()?.backward()?;
    let g = x.grad().expect("x.grad");
    assert_eq!(g.layout_kind(), x.layout_kind());
    assert_eq!(positions(&g)?, positions(&x)?);
    let gd = xd.grad().unwrap().to_vec::<f64>()?;
    let block: usize = c.shape[c.sparse_dim..].iter().product();
    let expect: Vec<f64> = positions(&x)?
        .iter()
        .flat_map(|&p| gd[p * block..(p + 1) * block].to_vec())
        .collect();
    assert_eq!(g.values()?.to_vec::<f64>()?, expect);
    Ok(())
}

proptest! {
    #![proptest_config(crate::common::proptest_config(512))]
    #[test]
    fn slice_matches_dense(c in case()) {
        check(&c).unwrap();
    }
}
