//! Advanced-indexing kernels: index-tensor validation (bool masks -> nonzero), NumPy result
//! geometry (adjacent advanced dims stay in place, separated ones move to the front) and the
//! gather / scatter over element offsets (the backend's `take` / `put` kernels).

use crate::backend::Put;
use crate::layout::Layout;
use crate::layout::{broadcast_shapes, contiguous_strides, numel};
use crate::ops::movement::gather::{output, read_index};
use crate::tensor::TensorData;
use crate::{DType, Result, Tensor, bail};

/// Resolved advanced indexing of one tensor: the result shape and, per result element in
/// row-major order, the element offset (relative to storage start) it refers to.
pub(crate) struct Plan {
    pub(crate) shape: Vec<usize>,
    pub(crate) offsets: Vec<usize>,
}

/// One normalised index: its shape and values (already int64), or `None` for a full dim.
pub(crate) type Idx = Option<(Vec<usize>, Vec<i64>)>;

/// Validates `indices` against `src_shape` and converts masks to coordinate lists.
pub(crate) fn normalize(src_shape: &[usize], indices: &[Option<Tensor>]) -> Result<Vec<Idx>> {
    let mut out: Vec<Idx> = Vec::new();
    for ix in indices {
        let Some(t) = ix else {
            out.push(None);
            continue;
        };
        match t.dtype() {
            DType::I64 | DType::I32 | DType::I16 | DType::I8 => {
                out.push(Some((t.shape(), read_index(t)?)));
            }
            DType::Bool | DType::U8 => {
                let mshape = t.shape();
                let start = out.len();
                for (k, &m) in mshape.iter().enumerate() {
                    let d = start + k;
                    if d >= src_shape.len() || src_shape[d] != m {
                        bail!(
                            ShapeMismatch,
                            "index",
                            "The shape of the mask {:?} at index {} does not match the shape of the indexed tensor {:?} at index {}",
                            mshape,
                            k,
                            src_shape,
                            d
                        );
                    }
                }
                let strides = contiguous_strides(&mshape);
                let nz = crate::backend::movement::nonzero(&t.data(), t.dtype())?;
                if mshape.is_empty() {
                    // 0-dim mask: acts like x[None][[0]] / empty; handled by caller via unsqueeze
                    bail!(
                        InvalidArgument,
                        "index",
                        "0-dim boolean masks must be given as TensorIndex::Bool"
                    );
                }
                for k in 0..mshape.len() {
                    let coords = nz
                        .iter()
                        .map(|&i| ((i / strides[k]) % mshape[k]) as i64)
                        .collect();
                    out.push(Some((vec![nz.len()], coords)));
                }
            }
            other => bail!(
                DTypeMismatch,
                "index",
                "tensors used as indices must be long, int, byte or bool tensors (got {})",
                other.name()
            ),
        }
    }
    if out.len() > src_shape.len() {
        bail!(
            IndexOutOfRange,
            "index",
            "too many indices for tensor of dimension {}",
            src_shape.len()
        );
    }
    out.resize(src_shape.len(), None);
    Ok(out)
}

/// Builds the gather/scatter plan of `src` (sizes/strides/offset) indexed by `idx`.
pub(crate) fn plan(sizes: &[usize], strides: &[usize], offset: usize, idx: &[Idx]) -> Result<Plan> {
    let adv: Vec<usize> = (0..idx.len()).filter(|&d| idx[d].is_some()).collect();
    // broadcast shape of the index tensors
    let mut bshape: Vec<usize> = Vec::new();
    for &d in &adv {
        let s = &idx[d].as_ref().unwrap().0;
        bshape = broadcast_shapes(&bshape, s, "index")?;
    }
    let bn = numel(&bshape);
    let bstr = contiguous_strides(&bshape);
    // per broadcast position, the summed advanced offset
    let mut adv_off = vec![0usize; bn];
    for &d in &adv {
        let (s, v) = idx[d].as_ref().unwrap();
        let size = sizes[d] as i64;
        // strides of this index tensor broadcast into bshape
        let nd = bshape.len() - s.len();
        let own = contiguous_strides(s);
        for (b, slot) in adv_off.iter_mut().enumerate() {
            let mut lin = 0usize;
            for (k, &st) in bstr.iter().enumerate() {
                let i = (b / st) % bshape[k];
                if k >= nd && s[k - nd] != 1 {
                    lin += i * own[k - nd];
                }
            }
            let mut x = v[lin];
            if x < -size || x >= size {
                return Err(out_of_bounds(x, d, size));
            }
            if x < 0 {
                x += size;
            }
            *slot += x as usize * strides[d];
        }
    }
    // result dims: (size, stride-in-storage or None for broadcast dims with bstride)
    enum Rd {
        Src(usize, usize),
        Adv(usize, usize),
    }
    let mut rdims: Vec<Rd> = Vec::new();
    let adjacent = adv.windows(2).all(|w| w[1] == w[0] + 1);
    let push_adv = |r: &mut Vec<Rd>| {
        for (k, &s) in bshape.iter().enumerate() {
            r.push(Rd::Adv(s, bstr[k]));
        }
    };
    if adv.is_empty() {
        for d in 0..sizes.len() {
            rdims.push(Rd::Src(sizes[d], strides[d]));
        }
    } else if adjacent {
        for d in 0..adv[0] {
            rdims.push(Rd::Src(sizes[d], strides[d]));
        }
        push_adv(&mut rdims);
        for d in adv[adv.len() - 1] + 1..sizes.len() {
            rdims.push(Rd::Src(sizes[d], strides[d]));
        }
    } else {
        push_adv(&mut rdims);
        for d in 0..sizes.len() {
            if idx[d].is_none() {
                rdims.push(Rd::Src(sizes[d], strides[d]));
            }
        }
    }
    let shape: Vec<usize> = rdims
        .iter()
        .map(|r| match r {
            Rd::Src(s, _) | Rd::Adv(s, _) => *s,
        })
        .collect();
    let n = numel(&shape);
    let mut offsets = Vec::with_capacity(n);
    let mut ctr = vec![0usize; shape.len()];
    for _ in 0..n {
        let mut off = offset;
        let mut b = 0usize;
        for (k, r) in rdims.iter().enumerate() {
            match r {
                Rd::Src(_, st) => off += ctr[k] * st,
                Rd::Adv(_, bs) => b += ctr[k] * bs,
            }
        }
        if !adv.is_empty() {
            off += adv_off[b];
        }
        offsets.push(off);
        for k in (0..shape.len()).rev() {
            ctr[k] += 1;
            if ctr[k] < shape[k] {
                break;
            }
            ctr[k] = 0;
        }
    }
    Ok(Plan { shape, offsets })
}

/// `src` indexed by exactly one index tensor (every other dim taken whole), or `None` when
/// `idx` has more or no index tensors: that is `index_select` along the indexed dim with the
/// index's shape in its place, so it runs the backend's block-copy `index_select` instead of a
/// per-element plan (the workload: `x[rows]`, `index_tensor` of the op-speed table).
pub(crate) fn select(src: &Tensor, idx: &[Idx]) -> Result<Option<Tensor>> {
    let mut adv = idx
        .iter()
        .enumerate()
        .filter_map(|(d, i)| Some((d, i.as_ref()?)));
    let (Some((d, (ishape, vals))), None) = (adv.next(), adv.next()) else {
        return Ok(None);
    };
    let sizes = src.shape();
    let size = sizes[d] as i64;
    let mut rows = crate::storage::try_vec::<usize>(vals.len(), "index")?;
    for &x in vals {
        if x < -size || x >= size {
            return Err(out_of_bounds(x, d, size));
        }
        rows.push(if x < 0 { x + size } else { x } as usize);
    }
    let shape: Vec<usize> = [&sizes[..d], &ishape[..], &sizes[d + 1..]].concat();
    let dt = src.dtype();
    let out = output(&shape, dt, "index")?;
    let mut selected = sizes.clone();
    selected[d] = rows.len();
    let dst = TensorData {
        storage: out.data().storage.clone(),
        layout: Layout::contiguous(&selected),
    };
    crate::backend::movement::index_select(&dst, &src.data(), d, &rows, dt)?;
    Ok(Some(out))
}

/// PyTorch's error for index value `x` outside `-size..size` along dim `d`.
fn out_of_bounds(x: i64, d: usize, size: i64) -> crate::Error {
    crate::err!(
        IndexOutOfRange,
        "index",
        "index {} is out of bounds for dimension {} with size {}",
        x,
        d,
        size
    )
}

/// `src`'s whole storage as a 1-D geometry: plan offsets are its logical positions.
fn whole(d: &TensorData, dt: DType) -> TensorData {
    TensorData {
        storage: d.storage.clone(),
        layout: Layout::contiguous(&[d.storage.nbytes() / dt.size()]),
    }
}

/// Gathers `src` elements at `plan.offsets` into a fresh contiguous tensor.
pub(crate) fn gather(src: &Tensor, plan: &Plan) -> Result<Tensor> {
    let dt = src.dtype();
    let out = output(&plan.shape, dt, "index")?;
    let s = whole(&src.data(), dt);
    crate::backend::movement::take(&out.data(), &s, &plan.offsets, dt, "index")?;
    Ok(out)
}

/// Writes `values` (row-major, one per plan offset, same dtype as `dst`) into `dst`'s storage;
/// `accumulate` adds instead of overwriting (duplicates then sum; otherwise last write wins).
/// Validated before the first write: on error `dst` is unchanged.
pub(crate) fn scatter(dst: &Tensor, plan: &Plan, values: &Tensor, accumulate: bool) -> Result<()> {
    let dt = dst.dtype();
    let p = Put {
        dst: &plan.offsets,
        src: None,
        accumulate,
        op: "index_put_",
    };
    crate::backend::movement::put(&whole(&dst.data(), dt), &values.data(), &p, dt)
}
