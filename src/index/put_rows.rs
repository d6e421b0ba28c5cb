//! The fast path of `index_put_` for its most common form: one integer index tensor on dim 0
//! of a tensor whose rows (dims 1..) are contiguous — embedding-gradient style scatter-adds.
//! Indices are validated (and wrapped) once up front, so an error leaves the tensor unchanged;
//! then whole rows are copied or accumulated with vectorised row loops, reading the values in
//! place. Large accumulations split the index list into a fixed number of chunks (chosen from
//! the sizes alone), summed into private row buffers on the rayon pool and merged in chunk
//! order: the result does not depend on the number of threads.

use crate::backend::cpu::elementwise::add_rows;
use crate::layout::{Layout, PAR_MIN_ELEMS};
use crate::storage::lock_for_write;
use crate::{DType, Element, Result, Tensor, bail, dispatch};

/// A validated row scatter: value row `j` goes to row `rows[j]` of the target.
pub(crate) struct RowPlan {
    /// Shape of the indexing result: the index tensor's shape, then the target's dims 1...
    pub(crate) shape: Vec<usize>,
    /// Target row of each value row, wrapped into `0..size(0)`.
    rows: Vec<u32>,
    /// Elements per row.
    row_len: usize,
}

/// Elements per row and stride of dim 0 when dims 1.. of `l` are row-major contiguous (size-1
/// dims ignored) with at least one element per row.
fn row_geometry(l: &Layout) -> Option<(usize, usize)> {
    let (sizes, strides) = (l.sizes(), l.strides());
    if sizes.is_empty() {
        return None;
    }
    let mut acc = 1usize;
    for (&s, &st) in sizes[1..].iter().zip(&strides[1..]).rev() {
        if s != 1 && st != acc {
            return None;
        }
        acc = acc.checked_mul(s)?;
    }
    (acc > 0).then_some((acc, strides[0]))
}

/// Plans `self_[idx] (op)= values` when `indices` is one integer index tensor on dim 0 and
/// `self_`'s rows are contiguous; `None` when the fast path does not apply. Errors are the
/// general path's (an index out of range).
pub(crate) fn plan_rows(self_: &Tensor, indices: &[Option<Tensor>]) -> Option<Result<RowPlan>> {
    let [Some(ix)] = indices else {
        return None;
    };
    if !matches!(ix.dtype(), DType::I64 | DType::I32 | DType::I16 | DType::I8)
        || ix.is_sparse()
        || self_.is_sparse()
    {
        return None;
    }
    let l = self_.layout();
    let (row_len, _) = row_geometry(&l)?;
    let size = l.sizes()[0];
    if size > u32::MAX as usize {
        return None;
    }
    let vals = match ix.to_vec::<i64>() {
        Ok(v) => v,
        Err(e) => return Some(Err(e)),
    };
    let mut rows = Vec::with_capacity(vals.len());
    let n = size as i64;
    for &x in &vals {
        if x < -n || x >= n {
            return Some(Err(crate::err!(
                IndexOutOfRange,
                "index",
                "index {} is out of bounds for dimension {} with size {}",
                x,
                0,
                size
            )));
        }
        rows.push(if x < 0 { x + n } else { x } as u32);
    }
    let mut shape = ix.shape();
    shape.extend_from_slice(&l.sizes()[1..]);
    Some(Ok(RowPlan {
        shape,
        rows,
        row_len,
    }))
}

/// Number of chunks an accumulation of `nvals` value elements into a target of `target` elements
/// is split into: at least `PAR_MIN_ELEMS * 8` value elements per chunk, and the private row
/// buffers of chunks 1.. (one target's worth each) at most an eighth of the values.
fn chunks(nvals: usize, target: usize) -> usize {
    let by_work = nvals / (PAR_MIN_ELEMS * 8);
    let by_memory = 1 + nvals / 8 / target.max(1);
    by_work.min(by_memory).clamp(1, 8)
}

/// Writes (or, with `accumulate`, adds) the value rows into `dst` at the planned rows. `vals` is
/// contiguous, of `dst`'s dtype, with `plan.shape`, and does not share `dst`'s storage.
pub(crate) fn scatter_rows(
    dst: &Tensor,
    plan: &RowPlan,
    vals: &Tensor,
    accumulate: bool,
) -> Result<()> {
    let (d, v) = (dst.data(), vals.data());
    let r = plan.row_len;
    let nvals = plan.rows.len() * r;
    let (_, row_stride) =
        row_geometry(&d.layout).expect("internal: the row plan was made for this layout");
    if !v.layout.is_contiguous()
        || vals.dtype() != dst.dtype()
        || v.layout.numel() != nvals
        || v.storage.same(&d.storage)
    {
        bail!(
            InvalidArgument,
            "index_put_",
            "internal: row scatter needs {} contiguous values of dtype {} in another storage",
            nvals,
            dst.dtype().name()
        );
    }
    if nvals == 0 {
        return Ok(());
    }
    let size = d.layout.sizes()[0];
    let dst_len = (size - 1) * row_stride + r;
    let mut locks = lock_for_write(&d.storage, &[&v.storage]);
    let esz = dst.dtype().size();
    // (lengths from the guards: `Storage::nbytes` would wait for the write lock held here)
    if (d.layout.offset() + dst_len) * esz > locks.out_len()
        || (v.layout.offset() + nvals) * esz > locks.in_len(&v.storage)
    {
        bail!(
            InvalidArgument,
            "index_put_",
            "tensor geometry lies outside its storage"
        );
    }
    let po = locks.out_ptr();
    let pv = locks.in_ptr(&v.storage);
    dispatch!(dst.dtype(), T => {
        // SAFETY: both ranges lie inside their locked storages (checked above) and do not overlap
        // (different storages); buffers are aligned for every Element, which is plain old data.
        let (out, values) = unsafe {
            (
                std::slice::from_raw_parts_mut((po as *mut T).add(d.layout.offset()), dst_len),
                std::slice::from_raw_parts((pv as *const T).add(v.layout.offset()), nvals),
            )
        };
        if accumulate {
            accumulate_rows::<T>(out, row_stride, r, size, values, &plan.rows)?;
        } else {
            for (&k, row) in plan.rows.iter().zip(values.chunks_exact(r)) {
                let lo = k as usize * row_stride;
                out[lo..lo + r].copy_from_slice(row);
            }
        }
    });
    Ok(())
}

/// `out[rows[j]] += values[j]` for every row `j` in order (row `k` of `out` starts at
/// `k * row_stride`, `size` rows of `r` elements), in [`chunks`] parallel chunks.
fn accumulate_rows<T: Element>(
    out: &mut [T],
    row_stride: usize,
    r: usize,
    size: usize,
    values: &[T],
    rows: &[u32],
) -> Result<()> {
    let k = chunks(values.len(), size * r);
    if k == 1 {
        add_rows(out, row_stride, values, rows);
        return Ok(());
    }
    let per = rows.len().div_ceil(k);
    // private buffers of chunks 1..; -0.0 is the additive identity (x + -0.0 == x for every x)
    let zero = T::from_f64(-0.0);
    let mut partial: Vec<Vec<T>> = Vec::with_capacity(k - 1);
    for _ in 1..k {
        let mut p = crate::storage::try_vec::<T>(size * r, "index_put_")?;
        p.resize(size * r, zero);
        partial.push(p);
    }
    let work = &|c: usize, buf: &mut [T], stride: usize| {
        let (lo, hi) = (c * per, ((c + 1) * per).min(rows.len()));
        if lo < hi {
            add_rows(buf, stride, &values[lo * r..hi * r], &rows[lo..hi]);
        }
    };
    if rayon::current_thread_index().is_some() {
        // on a pool thread (the caller holds storage locks): no nested parallelism
        work(0, out, row_stride);
        for (c, p) in partial.iter_mut().enumerate() {
            work(c + 1, p, r);
        }
    } else {
        rayon::scope(|sc| {
            for (c, p) in partial.iter_mut().enumerate() {
                sc.spawn(move |_| work(c + 1, p, r));
            }
            work(0, out, row_stride);
        });
    }
    // merge in chunk order (a fixed order: the result does not depend on the thread count)
    for p in &partial {
        for (row, src) in p.chunks_exact(r).enumerate() {
            let lo = row * row_stride;
            for (o, &x) in out[lo..lo + r].iter_mut().zip(src) {
                *o = o.add(x);
            }
        }
    }
    Ok(())
}
