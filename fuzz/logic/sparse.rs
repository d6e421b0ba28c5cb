//! Fuzz target `sparse`: COO (any rank, hybrid) and CSR (2-D, batched 3-D) tensors built from
//! fuzzer-chosen indices, row pointers, shapes and dtypes (valid and invalid, checked and
//! unchecked constructors, or converted from a dense tensor), then a short program of
//! `coalesce`, conversions, `sparse::slice` with arbitrary `(axes, starts, ends)` and sparse @
//! dense, with gradients. Invariants: no panic; the checked constructors fail exactly on invalid
//! input; a failing call changes nothing; every result's `to_dense()` matches a reference model
//! (an independent dense array); a slice keeps exactly the entries inside the window, in input
//! order, shifted by the starts; gradients have `x`'s layout and pattern, with the reference
//! values of the chain rule.

use super::check::{MAX_READ, guarded};
use super::input::Input;
use tapegrad::{DType, LayoutKind, Tensor};

/// Dims a shape may have before the dense reference is skipped.
const MAX_DENSE: usize = MAX_READ;
/// Conversions to CSR are only run up to this many `crow_indices` entries (`batch * (rows + 1)`;
/// crow is read back whole).
const MAX_ROWS: usize = 1 << 20;

/// The stored entries of a sparse tensor, in storage order: sparse coordinates per entry and
/// the values as `[nnz, row]` (row = product of the dense dims).
#[derive(Debug, Clone, PartialEq)]
struct Entries {
    kind: LayoutKind,
    shape: Vec<usize>,
    coords: Vec<Vec<usize>>,
    vals: Vec<f64>,
    row: usize,
}

fn read_i64(t: &Tensor) -> Vec<i64> {
    t.to_dtype(DType::I64)
        .and_then(|t| t.to_vec::<i64>())
        .unwrap_or_else(|e| panic!("reading index tensor failed: {e}"))
}

/// Entries of a valid sparse tensor, read through the public accessors.
fn entries(x: &Tensor) -> Entries {
    let shape = x.shape();
    let vals: Vec<f64> = x
        .values()
        .unwrap()
        .detach()
        .to_dtype(DType::F64)
        .unwrap()
        .to_vec()
        .unwrap();
    let nnz = x.nnz().unwrap();
    let mut coords = Vec::with_capacity(nnz);
    let kind = x.layout_kind();
    match kind {
        LayoutKind::SparseCoo => {
            let ix = read_i64(&x.indices().unwrap());
            let sd = x.sparse_dim().unwrap();
            for j in 0..nnz {
                coords.push((0..sd).map(|d| ix[d * nnz + j] as usize).collect());
            }
        }
        LayoutKind::SparseCsr => {
            let cr = read_i64(&x.crow_indices().unwrap());
            let cl = read_i64(&x.col_indices().unwrap());
            let (b, r) = if shape.len() == 3 {
                (shape[0], shape[1])
            } else {
                (1, shape[0])
            };
            let mut base = 0usize;
            for bi in 0..b {
                let seg = &cr[bi * (r + 1)..(bi + 1) * (r + 1)];
                for ri in 0..r {
                    for k in seg[ri] as usize..seg[ri + 1] as usize {
                        let c = cl[base + k] as usize;
                        coords.push(if shape.len() == 3 {
                            vec![bi, ri, c]
                        } else {
                            vec![ri, c]
                        });
                    }
                }
                base += seg[r] as usize;
            }
        }
        LayoutKind::Strided => unreachable!(),
    }
    assert_eq!(coords.len(), nnz, "nnz disagrees with the stored pattern");
    let row = vals
        .len()
        .checked_div(nnz)
        .unwrap_or_else(|| numel(&x.values().unwrap().shape()[1..]).unwrap_or(0));
    assert_eq!(vals.len(), nnz * row, "values disagree with nnz");
    Entries {
        kind,
        shape,
        coords,
        vals,
        row,
    }
}

/// The dense array of a set of entries (duplicates summed), `None` if too large or if its
/// contiguous strides overflow i64 (an empty shape like `[0, 2^62, 3]`: PyTorch's allocation,
/// so `to_dense`, refuses it with "Stride calculation overflowed").
fn dense_of(e: &Entries) -> Option<Vec<f64>> {
    let numel = e.shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))?;
    if numel > MAX_DENSE {
        return None;
    }
    if !strides_fit(&e.shape) {
        return None;
    }
    let mut out = vec![0.0; numel];
    let sd = e.coords.first().map_or(0, |c| c.len());
    for (k, c) in e.coords.iter().enumerate() {
        let mut lin = 0usize;
        for (&size, &i) in e.shape[..sd].iter().zip(&c[..sd]) {
            lin = lin * size + i;
        }
        for q in 0..e.row {
            out[lin * e.row + q] += e.vals[k * e.row + q];
        }
    }
    Some(out)
}

fn numel(shape: &[usize]) -> Option<usize> {
    shape.iter().try_fold(1usize, |a, &d| a.checked_mul(d))
}

/// The constructors' element-count rule (PyTorch's product): every size fits in i64, the
/// running product in u64 never overflows (a later zero does not undo an overflow) and ends
/// within `isize::MAX / 16`.
fn numel_ok(shape: &[usize]) -> bool {
    if shape.iter().any(|&d| d > i64::MAX as usize) {
        return false;
    }
    let (mut n, mut overflow) = (1u64, false);
    for &d in shape {
        let (v, o) = n.overflowing_mul(d as u64);
        (n, overflow) = (v, overflow | o);
    }
    !overflow && n <= isize::MAX as u64 / 16
}

/// The dense constructors' rule: [`numel_ok`], and every contiguous stride (a product of the
/// later sizes, 0 counted as 1) within i64 ("Stride calculation overflowed" in PyTorch:
/// `[0, 2^62, 3]` is refused though it has no elements). Sparse constructors check only the
/// element count.
fn dense_alloc_ok(shape: &[usize]) -> bool {
    numel_ok(shape) && strides_fit(shape)
}

/// Every contiguous stride of `shape` (a product of the later sizes, 0 counted as 1) fits in i64.
fn strides_fit(shape: &[usize]) -> bool {
    shape
        .iter()
        .skip(1)
        .try_fold(1u64, |a, &d| a.checked_mul(d.max(1) as u64))
        .is_some_and(|s| s <= i64::MAX as u64)
}

/// Compares `x.to_dense()` with the reference (when small enough).
fn check_dense(x: &Tensor, want: &Option<Vec<f64>>, ctx: &str) {
    let Some(want) = want else { return };
    let d: Vec<f64> = x
        .to_dense()
        .unwrap_or_else(|e| panic!("{ctx}: to_dense failed: {e}"))
        .to_dtype(DType::F64)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(&d, want, "{ctx}: to_dense differs from the reference");
}

/// Snapshot of a sparse or dense tensor for "a failure changes nothing".
fn snap(t: &Tensor) -> String {
    if t.is_sparse() {
        format!(
            "{:?} v{} rg{} c{:?} {:?}",
            entries(t),
            t.version(),
            t.requires_grad(),
            t.is_coalesced().ok(),
            t.grad().map(|g| entries(&g))
        )
    } else {
        format!("{:?}", super::check::snap(t))
    }
}

/// Runs a call that may fail on the sparse tensors `pool`: on failure nothing changed.
fn sguard<R>(pool: &[&Tensor], ctx: &str, op: impl FnOnce() -> tapegrad::Result<R>) -> Option<R> {
    let before: Vec<String> = pool.iter().map(|t| snap(t)).collect();
    match op() {
        Ok(r) => Some(r),
        Err(e) => {
            assert!(!e.message().is_empty(), "{ctx}: error without message");
            for (i, (b, t)) in before.iter().zip(pool).enumerate() {
                assert_eq!(b, &snap(t), "{ctx}: a failing call modified tensor #{i}");
            }
            None
        }
    }
}

fn dim_size(inp: &mut Input) -> usize {
    match inp.u8() % 32 {
        0 => 1usize << (20 + inp.below(44)),
        // above and at the int64 limit of sizes
        1 if inp.bool() => usize::MAX,
        1 => i64::MAX as usize,
        k => k as usize % 5,
    }
}

fn index_value(inp: &mut Input, d: usize) -> i64 {
    match inp.u8() % 16 {
        0 => inp.geom(),
        1 => d as i64,
        2 => -1,
        _ => inp.below(d.max(1)) as i64,
    }
}

fn value(inp: &mut Input) -> f64 {
    (inp.u8() % 9) as f64 - 4.0
}

/// Index tensor of `v` with a fuzzer-chosen dtype (mostly int64).
fn index_tensor(inp: &mut Input, v: Vec<i64>, shape: &[usize]) -> Tensor {
    let t = Tensor::from_vec(v, shape).unwrap();
    match inp.u8() % 16 {
        0 => t.to_dtype(DType::I32).unwrap(),
        1 => t.to_dtype(DType::F32).unwrap(),
        2 => t.to_dtype(DType::U8).unwrap(),
        _ => t,
    }
}

/// Checks `t`'s payload against what the constructor was given.
fn expect_construction(x: &Tensor, want: &Entries, ctx: &str) {
    let got = entries(x);
    assert_eq!(got.kind, want.kind, "{ctx}: layout");
    assert_eq!(got.shape, want.shape, "{ctx}: shape");
    assert_eq!(got.coords, want.coords, "{ctx}: pattern");
    assert_eq!(got.vals, want.vals, "{ctx}: values");
}

/// Strictly increasing coordinate tuples.
fn strictly_sorted(c: &[Vec<usize>]) -> bool {
    c.windows(2).all(|w| w[0] < w[1])
}

/// A COO tensor from fuzzer data; `None` if construction failed (after checking it had to).
fn build_coo(inp: &mut Input) -> Option<Tensor> {
    let rank = inp.small(4);
    let shape: Vec<usize> = (0..rank).map(|_| dim_size(inp)).collect();
    let sd = match inp.u8() % 8 {
        0 => inp.small(4),
        _ => 1 + inp.below(rank.max(1)),
    };
    let nnz = inp.small(7);
    let sorted = inp.u8().is_multiple_of(3);
    let mut cols: Vec<Vec<i64>> = (0..nnz)
        .map(|_| {
            (0..sd)
                .map(|d| index_value(inp, shape.get(d).copied().unwrap_or(0)))
                .collect()
        })
        .collect();
    if sorted {
        cols.sort();
        cols.dedup();
    }
    let nnz = cols.len();
    let mut ix = vec![0i64; sd * nnz];
    for (j, c) in cols.iter().enumerate() {
        for d in 0..sd {
            ix[d * nnz + j] = c[d];
        }
    }
    // a transposed shape: the constructor reads the same data as `ishape[0]` sparse dims of
    // `ishape[1]` entries, which the model below follows (valid or not on its own terms)
    let transposed = inp.u8().is_multiple_of(32);
    let ishape = if transposed { [nnz, sd] } else { [sd, nnz] };
    let indices = index_tensor(inp, ix.clone(), &ishape);
    let (sd, nnz) = (ishape[0], ishape[1]);
    // what the constructor reads (an int32 cast wraps)
    let ix: Vec<i64> = indices
        .to_dtype(DType::F64)
        .unwrap()
        .to_vec::<f64>()
        .unwrap()
        .iter()
        .map(|&v| v as i64)
        .collect();
    let ix = if indices.dtype() == DType::I32 || indices.dtype() == DType::I64 {
        read_i64(&indices)
    } else {
        ix
    };
    let cols: Vec<Vec<i64>> = (0..nnz)
        .map(|j| (0..sd).map(|d| ix[d * nnz + j]).collect())
        .collect();
    let dense: Vec<usize> = shape.iter().skip(sd).copied().collect();
    let mut vshape = vec![nnz];
    vshape.extend(&dense);
    if inp.u8().is_multiple_of(32) {
        vshape[0] += 1;
    }
    let vn = numel(&vshape).filter(|&n| n <= MAX_DENSE)?;
    let vals: Vec<f64> = (0..vn).map(|_| value(inp)).collect();
    let values = match Tensor::from_vec(vals.clone(), &vshape) {
        Ok(v) => v,
        Err(e) => {
            // only shapes outside the constructors' size rule (with numel 0) are refused
            assert!(!dense_alloc_ok(&vshape), "from_vec refused {vshape:?}: {e}");
            return None;
        }
    };
    let values = if inp.u8().is_multiple_of(8) {
        values.to_dtype(DType::F32).unwrap()
    } else {
        values
    };
    let valid = matches!(indices.dtype(), DType::I64 | DType::I32)
        && vshape[0] == nnz
        && sd >= 1
        && shape.len() == sd + dense.len()
        && numel_ok(&shape)
        && cols
            .iter()
            .all(|c| (0..sd).all(|d| c[d] >= 0 && (c[d] as u64) < shape[d] as u64));
    let unchecked = valid && inp.u8().is_multiple_of(4);
    let pool = [indices.clone(), values.clone()];
    let ctx = format!(
        "sparse_coo(indices {ix:?} {ishape:?} {:?}, values {vshape:?}, shape {shape:?}, unchecked {unchecked})",
        indices.dtype()
    );
    // elements per value row; with huge dense sizes the product may overflow, but then no value
    // row exists (nnz = 0 or an empty dense dim: the values were allocated) and it is never read
    let row = dense
        .iter()
        .try_fold(1usize, |a, &d| a.checked_mul(d))
        .unwrap_or(0);
    let coords: Vec<Vec<usize>> = cols
        .iter()
        .map(|c| c.iter().map(|&v| v as usize).collect())
        .collect();
    let coalesced = strictly_sorted(&coords);
    let r = guarded(&pool, &ctx, || {
        if unchecked {
            Tensor::sparse_coo_unchecked(&indices, &values, &shape, coalesced)
        } else {
            Tensor::sparse_coo(&indices, &values, &shape)
        }
    });
    assert_eq!(r.is_some(), valid, "{ctx}: success must mean valid input");
    let x = r?;
    expect_construction(
        &x,
        &Entries {
            kind: LayoutKind::SparseCoo,
            shape: shape.clone(),
            coords,
            vals,
            row,
        },
        &ctx,
    );
    assert_eq!(x.is_coalesced().unwrap(), coalesced, "{ctx}: is_coalesced");
    Some(x)
}

/// A CSR tensor from fuzzer data; `None` if construction failed (after checking it had to).
fn build_csr(inp: &mut Input) -> Option<Tensor> {
    let rank = match inp.u8() % 16 {
        0 => inp.small(4),
        k => 2 + (k as usize & 1),
    };
    let shape: Vec<usize> = (0..rank).map(|_| dim_size(inp)).collect();
    let (b, r, c) = match rank {
        2 => (1, shape[0], shape[1]),
        3 => (shape[0], shape[1], shape[2]),
        _ => (1, 2, 2),
    };
    if b.checked_mul(r.checked_add(1)?)? > 64 {
        return None;
    }
    let sorted = inp.bool();
    let mut crow: Vec<i64> = Vec::new();
    let mut col: Vec<i64> = Vec::new();
    #[allow(clippy::same_item_push)] // each batch's crow_indices start at 0
    for _ in 0..b {
        crow.push(0);
        let mut n = 0i64;
        for _ in 0..r {
            let k = inp.small(3);
            let mut row: Vec<i64> = (0..k).map(|_| index_value(inp, c)).collect();
            if sorted {
                row.sort();
                row.dedup();
            }
            n += row.len() as i64;
            col.extend(row);
            crow.push(n);
        }
    }
    // corruptions
    match inp.u8() % 16 {
        0 if !crow.is_empty() => {
            let i = inp.below(crow.len());
            crow[i] = inp.geom();
        }
        1 => {
            col.push(0);
        }
        2 => {
            crow.pop();
        }
        _ => {}
    }
    let nnz = col.len();
    let crow_t = index_tensor(inp, crow.clone(), &[crow.len()]);
    // (a reshape needs int64 sizes: b may be 0 with r + 1 above i64::MAX)
    let crow_t = if rank == 3
        && crow.len() == b * (r + 1)
        && r < i64::MAX as usize
        && inp.u8().is_multiple_of(4)
    {
        crow_t.reshape(&[b as i64, (r + 1) as i64]).unwrap()
    } else {
        crow_t
    };
    let col_t = Tensor::from_vec(col.clone(), &[nnz]).unwrap();
    let col_t = if crow_t.dtype() == DType::I32 && !inp.u8().is_multiple_of(8) {
        col_t.to_dtype(DType::I32).unwrap()
    } else {
        col_t
    };
    let vn = if inp.u8().is_multiple_of(32) {
        nnz + 1
    } else {
        nnz
    };
    let vals: Vec<f64> = (0..vn).map(|_| value(inp)).collect();
    let values = Tensor::from_vec(vals.clone(), &[vn]).unwrap();
    // validity by the CSR rules, independently of the library, on what the constructor reads
    let dtype_ok =
        matches!(crow_t.dtype(), DType::I64 | DType::I32) && crow_t.dtype() == col_t.dtype();
    let as_read = |t: &Tensor| -> Vec<i64> {
        t.to_dtype(DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
            .iter()
            .map(|&v| v as i64)
            .collect()
    };
    let crow = if dtype_ok {
        read_i64(&crow_t)
    } else {
        as_read(&crow_t)
    };
    let col = if dtype_ok {
        read_i64(&col_t)
    } else {
        as_read(&col_t)
    };
    let mut valid = dtype_ok
        && (rank == 2 || rank == 3)
        && numel_ok(&shape)
        && crow.len() == b * (r + 1)
        && vn == nnz;
    let mut coords = Vec::new();
    if valid {
        let mut base = 0usize;
        for bi in 0..b {
            let seg = &crow[bi * (r + 1)..(bi + 1) * (r + 1)];
            if seg[0] != 0 || seg.windows(2).any(|w| w[1] < w[0]) {
                valid = false;
                break;
            }
            let n = seg[r] as usize;
            if base + n > nnz {
                valid = false;
                break;
            }
            for ri in 0..r {
                for k in seg[ri] as usize..seg[ri + 1] as usize {
                    let cv = col[base + k];
                    if cv < 0 || cv as u64 >= c as u64 {
                        valid = false;
                    }
                    let cv = cv as usize;
                    coords.push(if rank == 3 {
                        vec![bi, ri, cv]
                    } else {
                        vec![ri, cv]
                    });
                }
            }
            base += n;
        }
        valid &= base == nnz;
    }
    let unchecked = valid && inp.u8().is_multiple_of(4);
    let pool = [crow_t.clone(), col_t.clone(), values.clone()];
    let ctx = format!(
        "sparse_csr(crow {crow:?} {:?}, col {col:?}, values {vn}, shape {shape:?}, unchecked {unchecked})",
        crow_t.dtype()
    );
    let r = guarded(&pool, &ctx, || {
        if unchecked {
            Tensor::sparse_csr_unchecked(&crow_t, &col_t, &values, &shape)
        } else {
            Tensor::sparse_csr(&crow_t, &col_t, &values, &shape)
        }
    });
    assert_eq!(r.is_some(), valid, "{ctx}: success must mean valid input");
    let x = r?;
    expect_construction(
        &x,
        &Entries {
            kind: LayoutKind::SparseCsr,
            shape: shape.clone(),
            coords,
            vals,
            row: 1,
        },
        &ctx,
    );
    assert_eq!(
        x.crow_indices().unwrap().dtype(),
        crow_t.dtype(),
        "{ctx}: index dtype"
    );
    Some(x)
}

/// A sparse tensor converted from a small dense one.
fn build_from_dense(inp: &mut Input) -> Option<Tensor> {
    let rank = inp.small(3);
    let shape: Vec<usize> = (0..rank).map(|_| inp.small(4)).collect();
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n)
        .map(|_| if inp.bool() { 0.0 } else { value(inp) })
        .collect();
    let d = Tensor::from_vec(v.clone(), &shape).unwrap();
    let ctx = format!("dense {shape:?} -> sparse");
    let x = match inp.below(3) {
        0 => guarded(std::slice::from_ref(&d), &ctx, || d.to_sparse()),
        1 => {
            let k = inp.small(3);
            guarded(std::slice::from_ref(&d), &ctx, || d.to_sparse_coo(k))
        }
        _ => guarded(std::slice::from_ref(&d), &ctx, || d.to_sparse_csr()),
    }?;
    check_dense(&x, &Some(v), &ctx);
    Some(x)
}

/// Paddle's slice normalisation, written independently of the library: `None` for the calls
/// that must fail.
fn model_ranges(
    shape: &[usize],
    axes: &[i64],
    starts: &[i64],
    ends: &[i64],
) -> Option<Vec<(usize, usize)>> {
    if axes.len() != starts.len() || axes.len() != ends.len() {
        return None;
    }
    let rank = shape.len() as i128;
    let mut out: Vec<(usize, usize)> = shape.iter().map(|&d| (0, d)).collect();
    let mut seen = vec![false; shape.len()];
    for i in 0..axes.len() {
        let a = axes[i] as i128;
        if a >= rank || a < -rank {
            return None;
        }
        let ax = if a < 0 { a + rank } else { a } as usize;
        if seen[ax] {
            return None;
        }
        seen[ax] = true;
        let d = shape[ax] as i128;
        let (mut s, mut e) = (starts[i] as i128, ends[i] as i128);
        if d == 0 || s >= d || e <= -d {
            out[ax] = (0, 0);
            continue;
        }
        if s < 0 {
            s = (s + d).max(0);
        }
        if e < 0 {
            e += d;
        }
        e = e.min(d);
        out[ax] = if s >= e {
            (0, 0)
        } else {
            (s as usize, e as usize)
        };
    }
    Some(out)
}

/// Row-major offsets of the dense window `(start, end)` per dim of a `dshape` row.
fn window_offsets(dshape: &[usize], win: &[(usize, usize)]) -> Vec<usize> {
    // an empty window has no offsets; the other windows' sizes alone may not fit in memory
    if win.iter().any(|&(s, e)| s == e) {
        return Vec::new();
    }
    let mut offs = vec![0usize];
    for (d, &(s, e)) in win.iter().enumerate() {
        let mut next = Vec::with_capacity(offs.len() * (e - s));
        for &o in &offs {
            for i in s..e {
                next.push(o * dshape[d] + i);
            }
        }
        offs = next;
    }
    offs
}

/// Slice with fuzzer-chosen attributes, checked entry by entry, then its backward.
fn do_slice(inp: &mut Input, x: &Tensor) -> Option<Tensor> {
    let shape = x.shape();
    let k = inp.small(4);
    let mut axes: Vec<i64> = (0..k).map(|_| inp.dim(shape.len())).collect();
    let mut starts: Vec<i64> = (0..k).map(|_| inp.geom()).collect();
    let ends: Vec<i64> = (0..k).map(|_| inp.geom()).collect();
    match inp.u8() % 16 {
        0 => {
            axes.pop();
        }
        1 => {
            starts.push(0);
        }
        _ => {}
    }
    let want = model_ranges(&shape, &axes, &starts, &ends);
    let xe = entries(x);
    let ctx = format!(
        "slice({:?} {shape:?}, axes {axes:?}, starts {starts:?}, ends {ends:?})",
        xe.kind
    );
    let r = sguard(&[x], &ctx, || {
        tapegrad::sparse::slice(x, &axes, &starts, &ends)
    });
    assert_eq!(
        r.is_some(),
        want.is_some(),
        "{ctx}: the model disagrees on failure"
    );
    let y = r?;
    let ranges = want.unwrap();
    let out_shape: Vec<usize> = ranges.iter().map(|&(s, e)| e - s).collect();
    assert_eq!(y.shape(), out_shape, "{ctx}: shape");
    assert_eq!(y.layout_kind(), xe.kind, "{ctx}: layout");
    // expected entries: the input's entries inside the window, in order, shifted
    let sd = xe
        .coords
        .first()
        .map_or(x.sparse_dim().unwrap(), |c| c.len());
    let dshape = &shape[sd..];
    // without entries no offset is read, and huge dense dims (nnz = 0) would not fit in memory
    let offs = if xe.coords.is_empty() {
        Vec::new()
    } else {
        window_offsets(dshape, &ranges[sd..])
    };
    let mut kept = Vec::new();
    let mut want_e = Entries {
        kind: xe.kind,
        shape: out_shape.clone(),
        coords: Vec::new(),
        vals: Vec::new(),
        row: offs.len(),
    };
    for (k, c) in xe.coords.iter().enumerate() {
        if (0..sd).all(|d| c[d] >= ranges[d].0 && c[d] < ranges[d].1) {
            kept.push(k);
            want_e
                .coords
                .push((0..sd).map(|d| c[d] - ranges[d].0).collect());
            want_e
                .vals
                .extend(offs.iter().map(|&o| xe.vals[k * xe.row + o]));
        }
    }
    let ye = entries(&y);
    assert_eq!(ye.coords, want_e.coords, "{ctx}: kept entries");
    assert_eq!(ye.vals, want_e.vals, "{ctx}: kept values");
    if xe.kind == LayoutKind::SparseCoo {
        let xc = x.is_coalesced().unwrap();
        assert_eq!(y.is_coalesced().unwrap(), xc, "{ctx}: coalesced flag");
        if xc {
            assert!(strictly_sorted(&ye.coords), "{ctx}: coalesced but unsorted");
        }
    }
    // the dense slice of to_dense()
    let narrowable = shape.iter().all(|&d| d <= i64::MAX as usize);
    if let (Some(xd), Some(_), true) = (
        dense_of(&xe),
        numel(&out_shape).filter(|&n| n <= MAX_DENSE),
        narrowable,
    ) {
        let mut d = Some(Tensor::from_vec(xd, &shape).unwrap());
        for (ax, &(s, e)) in ranges.iter().enumerate() {
            // an empty tensor's contiguous strides may be huge (sizes [1, 0, 2^63-1]): narrowing
            // it can overflow the storage offset, which narrow refuses (nothing to compare then)
            d = d.and_then(|t| match t.narrow(ax as i64, s as i64, e - s) {
                Ok(v) => Some(v),
                Err(err) => {
                    assert_eq!(t.numel(), 0, "{ctx}: dense reference narrow: {err}");
                    None
                }
            });
        }
        if let Some(d) = d {
            check_dense(&y, &Some(d.to_vec().unwrap()), &ctx);
        }
    }
    // backward: weights on the output's values; x's gradient has x's pattern
    if x.requires_grad() {
        let yv = y.values().unwrap();
        let n = yv.numel();
        let w = Tensor::from_vec((0..n).map(|i| 1.0 + i as f64).collect(), &yv.shape()).unwrap();
        let loss = yv.mul(&w).unwrap().sum().unwrap();
        let g = tapegrad::autograd::grad(
            &[loss],
            std::slice::from_ref(x),
            &[None],
            tapegrad::autograd::GradOptions::default(),
        )
        .unwrap_or_else(|e| panic!("{ctx}: backward failed: {e}"));
        let g = g[0].clone().unwrap_or_else(|| panic!("{ctx}: no gradient"));
        let ge = entries(&g);
        assert_eq!(ge.kind, xe.kind, "{ctx}: gradient layout");
        assert_eq!(ge.shape, xe.shape, "{ctx}: gradient shape");
        assert_eq!(ge.coords, xe.coords, "{ctx}: gradient pattern");
        let mut want_g = vec![0.0; xe.vals.len()];
        for (j, &k) in kept.iter().enumerate() {
            for (q, &o) in offs.iter().enumerate() {
                want_g[k * xe.row + o] = 1.0 + (j * offs.len() + q) as f64;
            }
        }
        assert_eq!(ge.vals, want_g, "{ctx}: gradient values");
    }
    Some(y)
}

/// Sparse @ dense against the reference, with both gradients.
fn do_matmul(inp: &mut Input, x: &Tensor) {
    let shape = x.shape();
    let xe = entries(x);
    let n = inp.small(3);
    let kdim = *shape.last().unwrap_or(&0);
    let mut bshape: Vec<usize> = shape.clone();
    if let Some(l) = bshape.last_mut() {
        *l = n;
    }
    if bshape.len() >= 2 {
        let m = bshape.len();
        bshape[m - 2] = kdim;
    }
    if inp.u8().is_multiple_of(16) && !bshape.is_empty() {
        bshape[0] += 1;
    }
    let Some(bn) = numel(&bshape).filter(|&v| v <= MAX_DENSE) else {
        return;
    };
    // the dense result must be allocatable (a huge one is an allocation error, not a bug)
    let rows = numel(&shape[..shape.len().saturating_sub(1)]);
    if rows
        .and_then(|r| r.checked_mul(n))
        .is_none_or(|v| v > MAX_DENSE)
    {
        return;
    }
    let bv: Vec<f64> = (0..bn).map(|_| value(inp)).collect();
    let b = match Tensor::from_vec(bv.clone(), &bshape) {
        Ok(b) => b,
        Err(e) => {
            // only shapes outside the constructors' size rule (with numel 0) are refused; such a
            // shape has no dense reference
            assert!(!dense_alloc_ok(&bshape), "from_vec refused {bshape:?}: {e}");
            return;
        }
    };
    let b = if inp.u8().is_multiple_of(16) {
        b.to_dtype(DType::F32).unwrap()
    } else {
        b.requires_grad_(true).unwrap()
    };
    let ok = x.dtype() == b.dtype()
        && match xe.kind {
            LayoutKind::SparseCoo => {
                shape.len() == 2 && x.sparse_dim().unwrap() == 2 && bshape.len() == 2
            }
            _ => {
                (shape.len() == 2 && bshape.len() == 2)
                    || (shape.len() == 3 && bshape.len() == 3 && bshape[0] == shape[0])
            }
        }
        && bshape.len() >= 2
        && bshape[bshape.len() - 2] == kdim;
    let ctx = format!(
        "matmul({:?} {shape:?} @ {bshape:?} {:?})",
        xe.kind,
        b.dtype()
    );
    let before = snap(&b);
    let r = sguard(&[x], &ctx, || tapegrad::sparse::matmul(x, &b));
    if r.is_none() {
        assert_eq!(
            before,
            snap(&b),
            "{ctx}: failing call modified the dense operand"
        );
    }
    assert_eq!(r.is_some(), ok, "{ctx}: the model disagrees on failure");
    let Some(out) = r else { return };
    let (bb, m) = if shape.len() == 3 {
        (shape[0], shape[1])
    } else {
        (1, shape[0])
    };
    let Some(on) = numel(&[bb, m, n]).filter(|&v| v <= MAX_DENSE) else {
        return;
    };
    // reference: out[b, i, :] += v * B[b, k, :]
    let mut want = vec![0.0; on];
    let split = |c: &Vec<usize>| {
        if c.len() == 3 {
            (c[0], c[1], c[2])
        } else {
            (0, c[0], c[1])
        }
    };
    for (e, c) in xe.coords.iter().enumerate() {
        let (bi, i, k) = split(c);
        for j in 0..n {
            want[(bi * m + i) * n + j] += xe.vals[e] * bv[(bi * kdim + k) * n + j];
        }
    }
    // (an f32 product when both operands are f32: `to_vec` reads only the tensor's own dtype)
    let got: Vec<f64> = out.to_dtype(DType::F64).unwrap().to_vec().unwrap();
    assert_eq!(got, want, "{ctx}: values");
    if !(x.requires_grad() || b.requires_grad()) {
        return;
    }
    let w: Vec<f64> = (0..on).map(|i| (i % 5) as f64 - 2.0).collect();
    let wt = match Tensor::from_vec(w.clone(), &out.shape()) {
        Ok(wt) => wt,
        Err(e) => {
            // an empty product whose dense strides overflow: no weight tensor can be built
            assert!(
                !dense_alloc_ok(&out.shape()),
                "from_vec refused {:?}: {e}",
                out.shape()
            );
            return;
        }
    };
    let loss = out.mul(&wt).unwrap().sum().unwrap();
    let mut inputs = vec![b.clone()];
    if x.requires_grad() {
        inputs.push(x.clone());
    }
    let g = tapegrad::autograd::grad(
        &[loss],
        &inputs,
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )
    .unwrap_or_else(|e| panic!("{ctx}: backward failed: {e}"));
    // dB[b, k, :] += v * W[b, i, :]
    let mut want_b = vec![0.0; bn];
    let mut want_v = vec![0.0; xe.coords.len()];
    for (e, c) in xe.coords.iter().enumerate() {
        let (bi, i, k) = split(c);
        for j in 0..n {
            want_b[(bi * kdim + k) * n + j] += xe.vals[e] * w[(bi * m + i) * n + j];
            want_v[e] += w[(bi * m + i) * n + j] * bv[(bi * kdim + k) * n + j];
        }
    }
    let gb: Vec<f64> = g[0]
        .clone()
        .expect("dense gradient")
        .to_dtype(DType::F64)
        .unwrap()
        .to_vec()
        .unwrap();
    assert_eq!(gb, want_b, "{ctx}: dense gradient");
    if x.requires_grad() {
        let ge = entries(g[1].as_ref().expect("sparse gradient"));
        assert_eq!(ge.kind, xe.kind, "{ctx}: gradient layout");
        assert_eq!(ge.coords, xe.coords, "{ctx}: gradient pattern");
        assert_eq!(ge.vals, want_v, "{ctx}: gradient values");
    }
}

/// Entry point: builds one sparse tensor, then runs a short program on it.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let x = match inp.below(3) {
        0 => build_coo(&mut inp),
        1 => build_csr(&mut inp),
        _ => build_from_dense(&mut inp),
    };
    let Some(mut x) = x else { return };
    if x.dtype() == DType::F64 && inp.bool() {
        x = x.requires_grad_(true).unwrap();
    }
    let mut want = dense_of(&entries(&x));
    check_dense(&x, &want, "construction");
    for step in 0..inp.small(4) {
        let ctx = format!("step {step} on {:?} {:?}", x.layout_kind(), x.shape());
        let next = match inp.below(6) {
            0 => {
                let c = sguard(&[&x], &ctx, || x.coalesce()).expect("coalesce of COO/CSR");
                if c.layout_kind() == LayoutKind::SparseCoo {
                    assert!(c.is_coalesced().unwrap(), "{ctx}: coalesce");
                    assert!(
                        strictly_sorted(&entries(&c).coords),
                        "{ctx}: coalesce order"
                    );
                }
                Some(c)
            }
            1 => {
                // CSR's crow has `batch * (rows + 1)` entries: a legal 2^28-row matrix (or an
                // empty one with 2^28 batches) means a 2 GB tensor
                let sh = x.shape();
                let crow_len = match sh.len() {
                    2 => sh[0].checked_add(1),
                    3 => sh[1].checked_add(1).and_then(|r| r.checked_mul(sh[0])),
                    _ => Some(0), // refused by rank
                };
                if crow_len.is_none_or(|n| n > MAX_ROWS) {
                    None
                } else {
                    sguard(&[&x], &ctx, || x.to_sparse_csr())
                }
            }
            2 => {
                let k = inp.small(4);
                let huge = numel(&x.shape()).is_none_or(|n| n > MAX_DENSE);
                if huge && k != x.sparse_dim().unwrap() {
                    None // would go through a huge dense tensor
                } else {
                    sguard(&[&x], &ctx, || x.to_sparse_coo(k))
                }
            }
            3 => {
                do_matmul(&mut inp, &x);
                None
            }
            _ => {
                let y = do_slice(&mut inp, &x);
                want = None; // the slice checked itself; continue on its result
                y
            }
        };
        if let Some(n) = next {
            if want.is_none() {
                want = dense_of(&entries(&n));
            }
            check_dense(&n, &want, &ctx);
            x = n;
        }
    }
}
