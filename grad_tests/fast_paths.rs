//! The dense fast paths against independent references: flat elementwise kernels (out-of-place,
//! `out=`, in-place, aliased operands, permuted-dense layouts, sizes that split over threads),
//! the pairwise full sum, and the row kernel of `index_put_` (checked against the general
//! element path and a plain loop, on random cases with duplicates, negative indices and
//! non-contiguous self / values, plus errors that leave self unchanged).

use crate::common::R;
use rand::{Rng, SeedableRng, rngs::StdRng};
use tapegrad::{DType, ErrorKind, Tensor};

/// A tensor of `shape` with small integer values (exact in every float sum order).
fn ints(rng: &mut StdRng, shape: &[usize]) -> Tensor {
    let n: usize = shape.iter().product();
    let v: Vec<f32> = (0..n).map(|_| rng.gen_range(-8..8) as f32).collect();
    Tensor::from_vec(v, shape).unwrap()
}

/// Sizes on both sides of the parallel split (2 * 32768 elements) with ragged tails.
const SIZES: [usize; 4] = [1, 37, 1000, 70_001];

#[test]
fn binary_fast_paths_match_elementwise_definition() -> R {
    let mut rng = StdRng::seed_from_u64(1);
    for n in SIZES {
        let (a, b) = (ints(&mut rng, &[n]), ints(&mut rng, &[n]));
        let (va, vb) = (a.to_vec::<f32>()?, b.to_vec::<f32>()?);
        let expect = |f: fn(f32, f32) -> f32| -> Vec<f32> {
            va.iter().zip(&vb).map(|(&x, &y)| f(x, y)).collect()
        };
        assert_eq!(a.add(&b)?.to_vec::<f32>()?, expect(|x, y| x + y));
        assert_eq!(a.sub(&b)?.to_vec::<f32>()?, expect(|x, y| x - y));
        assert_eq!(a.mul(&b)?.to_vec::<f32>()?, expect(|x, y| x * y));
        assert_eq!(
            a.add_alpha(&b, 3.0)?.to_vec::<f32>()?,
            expect(|x, y| x + y * 3.0)
        );
        // a 0-dim operand on either side, and a scalar
        let s = Tensor::scalar(2.5f32);
        assert_eq!(a.mul(&s)?.to_vec::<f32>()?, expect(|x, _| x * 2.5));
        assert_eq!(s.sub(&a)?.to_vec::<f32>()?, expect(|x, _| 2.5 - x));
        assert_eq!(a.add(1.0)?.to_vec::<f32>()?, expect(|x, _| x + 1.0));
        // the same tensor on both sides
        assert_eq!(a.mul(&a)?.to_vec::<f32>()?, expect(|x, _| x * x));
        // promotion still goes through the fast path's callers correctly
        assert_eq!(a.add(&b.to_dtype(DType::F64)?)?.dtype(), DType::F64);
    }
    Ok(())
}

#[test]
fn inplace_and_out_fast_paths_handle_aliasing_and_versions() -> R {
    let mut rng = StdRng::seed_from_u64(2);
    for n in SIZES {
        let (a, b) = (ints(&mut rng, &[n]), ints(&mut rng, &[n]));
        let (va, vb) = (a.to_vec::<f32>()?, b.to_vec::<f32>()?);
        // x.add_(&x), x.mul_(&y), x.sub_(scalar), x.div_(0-dim)
        let x = a.copy()?;
        x.add_(&x)?;
        let want: Vec<f32> = va.iter().map(|&v| v + v).collect();
        assert_eq!((x.to_vec::<f32>()?, x.version()), (want.clone(), 1));
        x.mul_(&b)?;
        let want: Vec<f32> = want.iter().zip(&vb).map(|(&v, &y)| v * y).collect();
        assert_eq!((x.to_vec::<f32>()?, x.version()), (want.clone(), 2));
        x.sub_(1.5)?.div_(Tensor::scalar(2.0f32))?;
        let want: Vec<f32> = want.iter().map(|&v| (v - 1.5) / 2.0).collect();
        assert_eq!((x.to_vec::<f32>()?, x.version()), (want, 4));
        // add_out into a fresh tensor, into an input, and with every operand the same tensor
        let out = Tensor::zeros(&[n], DType::F32)?;
        a.add_out(&b, &out)?;
        let sum: Vec<f32> = va.iter().zip(&vb).map(|(&x, &y)| x + y).collect();
        assert_eq!((out.to_vec::<f32>()?, out.version()), (sum.clone(), 1));
        let (a2, b2) = (a.copy()?, b.copy()?);
        a2.add_out(&b2, &b2)?;
        assert_eq!(b2.to_vec::<f32>()?, sum);
        a2.add_out(&a2, &a2)?;
        let dbl: Vec<f32> = va.iter().map(|&v| v + v).collect();
        assert_eq!(a2.to_vec::<f32>()?, dbl);
        // out= with a different (castable) dtype and with a 0-dim input
        let o64 = Tensor::zeros(&[n], DType::F64)?;
        a.add_out(&Tensor::scalar(1.0f32), &o64)?;
        let inc: Vec<f64> = va.iter().map(|&v| v as f64 + 1.0).collect();
        assert_eq!(o64.to_vec::<f64>()?, inc);
    }
    Ok(())
}

#[test]
fn permuted_dense_operands_keep_their_layout() -> R {
    let mut rng = StdRng::seed_from_u64(3);
    for (r, c) in [(3, 5), (300, 257)] {
        let a = ints(&mut rng, &[c, r]).t()?;
        let b = ints(&mut rng, &[c, r]).t()?;
        let (ac, bc) = (a.contiguous()?, b.contiguous()?);
        let s = a.add(&b)?;
        assert_eq!(s.strides(), a.strides());
        assert_eq!(s.to_vec::<f32>()?, ac.add(&bc)?.to_vec::<f32>()?);
        let e = a.exp()?;
        assert_eq!(e.strides(), a.strides());
        assert_eq!(e.to_vec::<f32>()?, ac.exp()?.to_vec::<f32>()?);
        let m = a.mul(Tensor::scalar(3.0f32))?;
        assert_eq!(m.strides(), a.strides());
        assert_eq!(m.to_vec::<f32>()?, ac.mul(3.0)?.to_vec::<f32>()?);
        // a permuted view with a size-1 dim keeps the general path's strides
        let u = a.unsqueeze(1)?;
        let g = u.add(&u)?;
        assert_eq!(g.to_vec::<f32>()?, ac.add(&ac)?.to_vec::<f32>()?);
        assert_eq!(g.shape(), vec![r, 1, c]);
        // different layouts: general path, same values
        let mixed = a.add(&bc)?;
        assert_eq!(mixed.to_vec::<f32>()?, ac.add(&bc)?.to_vec::<f32>()?);
        // in place on the transposed view
        let y = ac.copy()?.t()?.contiguous()?.t()?;
        y.add_(&b)?;
        assert_eq!(y.to_vec::<f32>()?, ac.add(&bc)?.to_vec::<f32>()?);
    }
    Ok(())
}

#[test]
fn full_sum_is_pairwise_accurate_for_every_float_dtype() -> R {
    let mut rng = StdRng::seed_from_u64(4);
    for n in [1usize, 31, 2048, 2049, 100_000, 1_500_001] {
        let v: Vec<f64> = (0..n).map(|_| rng.r#gen::<f64>() * 2.0 - 0.5).collect();
        let exact: f64 = v.iter().sum();
        let x64 = Tensor::from_vec(v.clone(), &[n])?;
        let x32 = x64.to_dtype(DType::F32)?;
        let exact32: f64 = x32.to_vec::<f32>()?.iter().map(|&x| x as f64).sum();
        let s64 = x64.sum()?.item::<f64>()?;
        assert!(
            (s64 - exact).abs() <= 1e-12 * n as f64,
            "{n}: {s64} vs {exact}"
        );
        let s32 = x32.sum()?;
        assert_eq!(s32.dtype(), DType::F32);
        let s32 = s32.item::<f32>()? as f64;
        // pairwise: error ~ eps * log n, far below the naive eps * n
        assert!(
            (s32 - exact32).abs() <= 5e-6 * exact32.abs().max(1.0),
            "{n}: {s32} vs {exact32}"
        );
        for dt in [DType::F16, DType::BF16] {
            let h = x32.to_dtype(dt)?;
            let exact_h: f64 = h.to_dtype(DType::F64)?.to_vec::<f64>()?.iter().sum();
            let s = h.sum()?;
            assert_eq!(s.dtype(), dt);
            let want = Tensor::scalar(exact_h as f32)
                .to_dtype(dt)?
                .to_dtype(DType::F64)?;
            let got = s.to_dtype(DType::F64)?.item::<f64>()?;
            // accumulated in f32, rounded once: within one unit of the last place of the result
            let w = want.item::<f64>()?;
            let tol = (w.abs() * 1e-2).max(1e-2);
            // (sums beyond f16's range are inf on both sides)
            assert!(
                got == w || (got - w).abs() <= tol,
                "{dt:?} {n}: {got} vs {w}"
            );
        }
    }
    // a permuted dense tensor, keepdim, and a sum of -0.0 (PyTorch returns +0.0)
    let m = ints(&mut rng, &[300, 500]);
    let want = m.contiguous()?.to_vec::<f32>()?.iter().sum::<f32>();
    assert_eq!(m.t()?.sum()?.item::<f32>()?, want);
    let k = m.sum_dims(&[0, 1], true)?;
    assert_eq!((k.shape(), k.item::<f32>()?), (vec![1, 1], want));
    let z = Tensor::from_vec(vec![-0.0f32; 5000], &[5000])?;
    let z = z.sum()?.item::<f32>()?;
    assert!(z == 0.0 && z.is_sign_positive());
    Ok(())
}

/// `index_put_` by a plain loop over row-major data: (rows, row length) target.
fn reference_put(
    base: &[f32],
    rows: usize,
    r: usize,
    idx: &[i64],
    vals: &[f32],
    acc: bool,
) -> Vec<f32> {
    let mut out = base.to_vec();
    for (j, &i) in idx.iter().enumerate() {
        let k = if i < 0 { i + rows as i64 } else { i } as usize;
        for c in 0..r {
            let v = vals[j * r + c];
            out[k * r + c] = if acc { out[k * r + c] + v } else { v };
        }
    }
    out
}

#[test]
fn index_put_row_path_matches_general_path_and_reference() -> R {
    let mut rng = StdRng::seed_from_u64(5);
    for case in 0..60 {
        let rows = rng.gen_range(1..40usize);
        let tail: Vec<usize> = match case % 3 {
            0 => vec![rng.gen_range(1..9)],
            1 => vec![2, rng.gen_range(1..4)],
            _ => vec![],
        };
        let r: usize = tail.iter().product();
        // big cases exercise the chunked parallel accumulation
        let nidx = if case % 10 == 9 {
            rng.gen_range(20_000..40_000)
        } else {
            rng.gen_range(0..50)
        };
        let idx: Vec<i64> = (0..nidx)
            .map(|_| rng.gen_range(-(rows as i64)..rows as i64))
            .collect();
        let acc = case % 2 == 0;
        let mut shape = vec![rows];
        shape.extend(&tail);
        // self: contiguous, or the rows of a wider tensor (non-contiguous, contiguous rows)
        let wide = case % 4 >= 2 && !tail.is_empty();
        let mut ws = shape.clone();
        if wide {
            *ws.last_mut().unwrap() += 3;
        }
        let parent = ints(&mut rng, &ws);
        let view = |p: &Tensor| -> tapegrad::Result<Tensor> {
            if wide {
                p.narrow(-1, 1, *tail.last().unwrap())
            } else {
                Ok(p.clone())
            }
        };
        let base = view(&parent)?;
        assert_eq!(base.is_contiguous(), !wide);
        let mut vshape = vec![nidx];
        vshape.extend(&tail);
        // values: contiguous, or a transposed copy (non-contiguous)
        let vals = if case % 5 == 1 && tail.len() == 1 {
            ints(&mut rng, &[tail[0], nidx]).t()?
        } else {
            ints(&mut rng, &vshape)
        };
        let it = Tensor::from_vec(idx.clone(), &[nidx])?;
        let before = base.contiguous()?.to_vec::<f32>()?;
        let want = reference_put(&before, rows, r, &idx, &vals.contiguous()?.to_vec()?, acc);
        // fast path: one index tensor (on a copy of the parent, through the same view)
        let xp = parent.copy()?;
        let x = view(&xp)?;
        x.index_put_(&[Some(it.clone())], &vals, acc)?;
        assert_eq!(x.to_vec::<f32>()?, want, "case {case}");
        assert_eq!(x.version(), 1);
        if wide {
            // the columns outside the view are untouched
            let (pa, pb) = (parent.to_vec::<f32>()?, xp.to_vec::<f32>()?);
            let wl = *ws.last().unwrap();
            for (k, (u, v)) in pa.iter().zip(&pb).enumerate() {
                let col = k % wl;
                if col == 0 || col > *tail.last().unwrap() {
                    assert_eq!(u, v, "case {case}: column {col} changed");
                }
            }
        }
        // general path: the same indexing spelled with a trailing full slice
        if !tail.is_empty() {
            let yp = parent.copy()?;
            let y = view(&yp)?;
            y.index_put_(&[Some(it.clone()), None], &vals, acc)?;
            assert_eq!(y.to_vec::<f32>()?, want, "case {case} (general)");
            assert_eq!(yp.to_vec::<f32>()?, xp.to_vec::<f32>()?);
        }
        // an index tensor of int32 and of two dims gives the same result
        if nidx % 2 == 0 && nidx > 0 {
            let z = base.contiguous()?.copy()?;
            let i2 = it.to_dtype(DType::I32)?.reshape(&[2, nidx as i64 / 2])?;
            let mut s2 = vec![2, nidx / 2];
            s2.extend(&tail);
            let s2: Vec<i64> = s2.iter().map(|&s| s as i64).collect();
            z.index_put_(&[Some(i2)], &vals.contiguous()?.reshape(&s2)?, acc)?;
            assert_eq!(z.to_vec::<f32>()?, want, "case {case} (int32 2-d)");
        }
    }
    Ok(())
}

#[test]
fn index_put_row_path_writes_through_views_and_keeps_negative_zero() -> R {
    // a narrow view of a wider tensor: only the viewed columns change
    let w = Tensor::zeros(&[4, 6], DType::F32)?;
    let v = w.narrow(1, 2, 3)?;
    let i = Tensor::from_vec(vec![3i64, -1, 0], &[3])?;
    v.index_put_(&[Some(i)], &Tensor::ones(&[3, 3], DType::F32)?, true)?;
    let got = w.to_vec::<f32>()?;
    for row in 0..4 {
        for col in 0..6 {
            let want = match (row, (2..5).contains(&col)) {
                (3, true) => 2.0,
                (0, true) => 1.0,
                _ => 0.0,
            };
            assert_eq!(got[row * 6 + col], want, "({row}, {col})");
        }
    }
    // large accumulation (chunked): untouched rows keep -0.0 bit for bit
    let x = Tensor::from_vec(vec![-0.0f32; 6400], &[100, 64])?;
    let n = 40_000usize;
    let idx: Vec<i64> = (0..n as i64).map(|k| (k * 7) % 50).collect();
    let it = Tensor::from_vec(idx, &[n])?;
    x.index_put_(&[Some(it)], &Tensor::ones(&[n, 64], DType::F32)?, true)?;
    let got = x.to_vec::<f32>()?;
    assert!(got[..50 * 64].iter().all(|&v| v == 800.0));
    assert!(
        got[50 * 64..]
            .iter()
            .all(|&v| v.to_bits() == (-0.0f32).to_bits())
    );
    Ok(())
}

#[test]
fn index_put_row_path_errors_leave_self_unchanged() -> R {
    let mut rng = StdRng::seed_from_u64(6);
    let x = ints(&mut rng, &[10, 4]);
    let before = x.to_vec::<f32>()?;
    let vals = ints(&mut rng, &[3, 4]);
    for bad in [vec![1i64, 10, 2], vec![0, 1, -11]] {
        let i = Tensor::from_vec(bad.clone(), &[3])?;
        let e = x.index_put_(&[Some(i)], &vals, true).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
        let bad_ix = bad.iter().find(|&&v| !(-10..10).contains(&v)).unwrap();
        assert!(
            e.to_string()
                .contains(&format!("index {bad_ix} is out of bounds"))
        );
        assert_eq!((x.to_vec::<f32>()?, x.version()), (before.clone(), 0));
        // the out-of-place form validates first too
        let i = Tensor::from_vec(bad, &[3])?;
        assert!(x.index_put(&[Some(i)], &vals, false).is_err());
    }
    // values of the wrong shape
    let i = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    let e = x
        .index_put_(&[Some(i.clone())], &ints(&mut rng, &[3, 5]), false)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    // values overlapping self
    let e = x
        .index_put_(&[Some(i)], &x.narrow(0, 0, 3)?, true)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert_eq!((x.to_vec::<f32>()?, x.version()), (before, 0));
    // broadcast values (one row for every index) use the same path
    let y = Tensor::zeros(&[3, 2], DType::F32)?;
    let i = Tensor::from_vec(vec![2i64, 2, 0], &[3])?;
    y.index_put_(
        &[Some(i)],
        &Tensor::from_vec(vec![1.0f32, 2.0], &[2])?,
        true,
    )?;
    assert_eq!(y.to_vec::<f32>()?, vec![1.0, 2.0, 0.0, 0.0, 2.0, 4.0]);
    Ok(())
}

/// The transposing copy (`contiguous` of a transposed or permuted view) against a plain index
/// loop, for the sizes around its 16x16 micro-tiles and 8x8 register blocks (full tiles, ragged
/// edges, planes below one tile), 4-byte dtypes (the register path) and others, a batch dim,
/// and bit patterns a float copy must keep (NaN payloads, -0.0).
#[test]
fn transposing_copy_matches_index_loop() -> R {
    let mut rng = StdRng::seed_from_u64(9);
    for (r, c) in [
        (16, 16),
        (37, 45),
        (64, 48),
        (8, 200),
        (129, 17),
        (300, 257),
    ] {
        let bits: Vec<u32> = (0..r * c)
            .map(|k| match k % 97 {
                0 => 0x7fc0_0001, // a NaN with a payload
                1 => 0x8000_0000, // -0.0
                _ => rng.r#gen::<u32>(),
            })
            .collect();
        let want = |v: &[u32]| -> Vec<u32> {
            (0..c)
                .flat_map(|j| (0..r).map(move |i| v[i * c + j]))
                .collect()
        };
        let f = Tensor::from_vec(bits.iter().map(|&b| f32::from_bits(b)).collect(), &[r, c])?;
        let got: Vec<u32> = f
            .t()?
            .contiguous()?
            .to_vec::<f32>()?
            .iter()
            .map(|x| x.to_bits())
            .collect();
        assert_eq!(got, want(&bits), "f32 {r}x{c}");
        let i = Tensor::from_vec(bits.iter().map(|&b| b as i32).collect(), &[r, c])?;
        let got: Vec<u32> = i
            .t()?
            .contiguous()?
            .to_vec::<i32>()?
            .iter()
            .map(|&x| x as u32)
            .collect();
        assert_eq!(got, want(&bits), "i32 {r}x{c}");
        let d = f.to_dtype(DType::F64)?;
        let got: Vec<f64> = d.t()?.contiguous()?.to_vec::<f64>()?;
        let dv = d.to_vec::<f64>()?;
        let dw: Vec<f64> = (0..c)
            .flat_map(|j| (0..r).map(move |i| (i, j)))
            .map(|(i, j)| dv[i * c + j])
            .collect();
        assert!(
            got.iter().zip(&dw).all(|(a, b)| a.to_bits() == b.to_bits()),
            "f64 {r}x{c}"
        );
    }
    // a batch of planes: [b, r, c] permuted to [b, c, r]
    let (b, r, c) = (3, 33, 40);
    let v: Vec<f32> = (0..b * r * c).map(|k| k as f32).collect();
    let x = Tensor::from_vec(v.clone(), &[b, r, c])?;
    let got = x.permute(&[0, 2, 1])?.contiguous()?.to_vec::<f32>()?;
    let want: Vec<f32> = (0..b)
        .flat_map(|p| (0..c).flat_map(move |j| (0..r).map(move |i| (p, i, j))))
        .map(|(p, i, j)| v[(p * r + i) * c + j])
        .collect();
    assert_eq!(got, want);
    Ok(())
}

#[test]
fn outer_sums_add_rows_in_order_on_column_strips() -> R {
    // sums over leading dims whose last dim is kept (the column-strip path, split over the team
    // from 2^16 elements): every column adds its rows in order, as a plain loop does
    let mut rng = StdRng::seed_from_u64(11);
    for (rows, cols) in [(3usize, 5usize), (300, 517), (1024, 1024)] {
        let v: Vec<f64> = (0..rows * (cols + 9))
            .map(|_| rng.gen_range(-1.0..1.0))
            .collect();
        // a view of `cols` columns from column 4 of a wider tensor: strided rows, an offset
        let x = Tensor::from_vec(v.clone(), &[rows, cols + 9])?.narrow(1, 4, cols)?;
        let mut want = vec![0.0f64; cols];
        for r in 0..rows {
            for (c, w) in want.iter_mut().enumerate() {
                *w += v[r * (cols + 9) + 4 + c];
            }
        }
        assert_eq!(
            x.sum_dims(&[0], false)?.to_vec::<f64>()?,
            want,
            "{rows}x{cols}"
        );
        let x32 = x.to_dtype(DType::F32)?;
        let v32 = x32.to_vec::<f32>()?;
        let mut want32 = vec![0.0f32; cols];
        for r in 0..rows {
            for (c, w) in want32.iter_mut().enumerate() {
                *w += v32[r * cols + c];
            }
        }
        assert_eq!(x32.sum_dims(&[0], true)?.to_vec::<f32>()?, want32);
    }
    // two reduced dims before the kept one, and a kept dim before them
    let x = Tensor::from_vec(
        (0..2 * 40 * 30 * 600)
            .map(|i| (i % 13) as f64 * 0.1)
            .collect(),
        &[2, 40, 30, 600],
    )?;
    let got = x.sum_dims(&[1, 2], false)?.to_vec::<f64>()?;
    let xv = x.to_vec::<f64>()?;
    for a in 0..2 {
        for c in 0..600 {
            let mut w = 0.0;
            for r in 0..40 * 30 {
                w += xv[(a * 1200 + r) * 600 + c];
            }
            assert_eq!(got[a * 600 + c], w);
        }
    }
    Ok(())
}
