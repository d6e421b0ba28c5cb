//! Shape arithmetic: numel, contiguous strides, dim wrapping, broadcasting, `-1` inference and
//! PyTorch's `compute_stride` (can a reshape be expressed as a view of these strides?).

use crate::{Result, bail};

/// Product of sizes (1 for a 0-dim shape).
pub fn numel(sizes: &[usize]) -> usize {
    // A zero size makes the product 0 even when the other sizes alone would overflow.
    if sizes.contains(&0) {
        0
    } else {
        sizes.iter().product()
    }
}

/// Refuses a size above `i64::MAX`: PyTorch's sizes are int64, and every i64-based API (view,
/// expand, reshape) must be able to name each size (an empty tensor could otherwise carry one).
fn check_sizes_i64(sizes: &[usize], op: &'static str) -> Result<()> {
    if let Some(&s) = sizes.iter().find(|&&s| s > i64::MAX as usize) {
        bail!(
            InvalidArgument,
            op,
            "size {} in shape {:?} does not fit in int64",
            s,
            sizes
        );
    }
    Ok(())
}

/// The product of `sizes` as PyTorch computes it (`c10::safe_multiplies_u64`): a running
/// product in u64 whose overflow at any step is sticky, so a later zero size does not undo it
/// (`[2^62, 3, 0]` is 0, `[2^62, 2^62, 0]` overflows, `[0, 2^62, 2^62]` is 0); `None` on overflow.
fn product_u64(sizes: &[usize]) -> Option<u64> {
    let (mut n, mut overflow) = (1u64, false);
    for &s in sizes {
        let (v, o) = n.overflowing_mul(s as u64);
        (n, overflow) = (v, overflow | o);
    }
    (!overflow).then_some(n)
}

/// The element count of a shape to allocate: PyTorch's product ([`product_u64`]), bounded so
/// that numel * 16 bytes fits; every size must fit in i64.
pub(crate) fn check_numel(sizes: &[usize], op: &'static str) -> Result<usize> {
    check_sizes_i64(sizes, op)?;
    match product_u64(sizes) {
        Some(n) if n <= (isize::MAX as u64) / 16 => Ok(n as usize),
        _ => bail!(
            InvalidArgument,
            op,
            "shape {:?} has too many elements to allocate",
            sizes
        ),
    }
}

/// Checks that the product of `sizes` ([`product_u64`]) fits in `i64` (PyTorch's "numel:
/// integer multiplication overflow"); views may describe more elements than can be allocated,
/// but never more than this.
pub(crate) fn check_numel_i64(sizes: &[usize], op: &'static str) -> Result<usize> {
    check_sizes_i64(sizes, op)?;
    match product_u64(sizes) {
        Some(n) if n <= i64::MAX as u64 => Ok(n as usize),
        _ => bail!(
            InvalidArgument,
            op,
            "numel: integer multiplication overflow (sizes {:?})",
            sizes
        ),
    }
}

/// The element count of a new contiguous tensor ([`check_numel`]), then PyTorch's stride
/// calculation for it ("Stride calculation overflowed"): each stride, the product of the later
/// sizes with 0 counted as 1, must fit in i64. So `[0, 2^62, 3]` is refused (first stride
/// 3·2^62) though it has no elements, while `[3, 2^62, 0]` is accepted (strides `[2^62, 1, 1]`),
/// as `torch.empty` does. For constructors and for ops that allocate a contiguous output of
/// their input's shape (`layer_norm`), before any product of partial shapes is formed.
pub(crate) fn check_contiguous_alloc(sizes: &[usize], op: &'static str) -> Result<usize> {
    let n = check_numel(sizes, op)?;
    let mut stride = 1u64;
    for &s in sizes.iter().skip(1).rev() {
        match stride.checked_mul(s.max(1) as u64) {
            Some(v) if v <= i64::MAX as u64 => stride = v,
            _ => bail!(
                InvalidArgument,
                op,
                "Stride calculation overflowed (sizes {:?})",
                sizes
            ),
        }
    }
    Ok(n)
}

/// Row-major contiguous strides (`stride[i] = prod(max(size[j], 1) for j > i)`), as PyTorch.
pub fn contiguous_strides(sizes: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; sizes.len()];
    let mut acc = 1usize;
    for i in (0..sizes.len()).rev() {
        strides[i] = acc;
        acc = acc.saturating_mul(sizes[i].max(1));
    }
    strides
}

/// Wraps a possibly negative dim into `[0, ndim)`. A 0-dim tensor accepts dims -1 and 0.
pub fn wrap_dim(dim: i64, ndim: usize, op: &'static str) -> Result<usize> {
    let n = ndim.max(1) as i64;
    if dim < -n || dim >= n {
        bail!(
            DimOutOfRange,
            op,
            "Dimension out of range (expected to be in range of [{}, {}], but got {})",
            -n,
            n - 1,
            dim
        );
    }
    Ok(if dim < 0 {
        (dim + n) as usize
    } else {
        dim as usize
    })
}

/// Wraps a list of dims and rejects repeats ("dim X appears multiple times in the list of dims").
pub(crate) fn wrap_dims(dims: &[i64], ndim: usize, op: &'static str) -> Result<Vec<usize>> {
    let mut out = Vec::with_capacity(dims.len());
    for &d in dims {
        let w = wrap_dim(d, ndim, op)?;
        if out.contains(&w) {
            bail!(
                InvalidArgument,
                op,
                "dim {} appears multiple times in the list of dims",
                w
            );
        }
        out.push(w);
    }
    Ok(out)
}

/// Broadcasts two shapes (NumPy rules).
pub fn broadcast_shapes(a: &[usize], b: &[usize], op: &'static str) -> Result<Vec<usize>> {
    let n = a.len().max(b.len());
    let mut out = vec![0; n];
    for i in 0..n {
        let da = if i + a.len() >= n {
            a[i + a.len() - n]
        } else {
            1
        };
        let db = if i + b.len() >= n {
            b[i + b.len() - n]
        } else {
            1
        };
        out[i] = if da == db || db == 1 {
            da
        } else if da == 1 {
            db
        } else {
            bail!(
                ShapeMismatch,
                op,
                "The size of tensor a ({}) must match the size of tensor b ({}) at non-singleton dimension {}",
                da,
                db,
                i
            );
        };
    }
    Ok(out)
}

/// Resolves one `-1` in `shape` against `numel` (PyTorch's `infer_size`).
pub fn infer_size(shape: &[i64], numel: usize, op: &'static str) -> Result<Vec<usize>> {
    let mut infer = None;
    let mut prod: usize = 1;
    for (i, &s) in shape.iter().enumerate() {
        if s == -1 {
            if infer.is_some() {
                bail!(InvalidArgument, op, "only one dimension can be inferred");
            }
            infer = Some(i);
        } else if s < 0 {
            bail!(InvalidArgument, op, "invalid shape dimension {}", s);
        } else {
            prod = match prod.checked_mul(s as usize) {
                Some(p) if p <= i64::MAX as usize => p,
                _ => bail!(
                    InvalidArgument,
                    op,
                    "numel: integer multiplication overflow (shape {:?})",
                    shape
                ),
            };
        }
    }
    let mut out: Vec<usize> = shape.iter().map(|&s| s.max(0) as usize).collect();
    let ok = match infer {
        Some(i) => {
            if prod > 0 && numel.is_multiple_of(prod) {
                out[i] = numel / prod;
                true
            } else {
                // PyTorch: with a zero in the other sizes the -1 is ambiguous
                if prod == 0 {
                    bail!(
                        InvalidArgument,
                        op,
                        "cannot reshape tensor of 0 elements into shape {:?} because the unspecified dimension size -1 can be any value and is ambiguous",
                        shape
                    );
                }
                false
            }
        }
        None => prod == numel,
    };
    if !ok {
        bail!(
            ShapeMismatch,
            op,
            "shape '{:?}' is invalid for input of size {}",
            shape,
            numel
        );
    }
    Ok(out)
}

/// PyTorch's `computeStride`: strides that let `new_sizes` view memory laid out as
/// (`old_sizes`, `old_strides`), or `None` if a copy is needed. Works chunk by chunk: each run of
/// old dims that is contiguous in memory may be split/merged freely.
pub fn compute_stride(
    old_sizes: &[usize],
    old_strides: &[usize],
    new_sizes: &[usize],
) -> Option<Vec<usize>> {
    if old_sizes.is_empty() {
        return Some(vec![1; new_sizes.len()]);
    }
    // zero-aware: [0, huge, huge] has 0 elements although huge * huge overflows
    let numel = numel(old_sizes);
    if numel == 0 && old_sizes == new_sizes {
        return Some(old_strides.to_vec());
    }
    let mut new_strides = vec![0usize; new_sizes.len()];
    if numel == 0 {
        for view_d in (0..new_sizes.len()).rev() {
            if view_d == new_sizes.len() - 1 {
                new_strides[view_d] = 1;
            } else {
                // saturating like `contiguous_strides`: strides of an empty tensor address
                // nothing, but huge sizes must not overflow (libFuzzer views/set_resize finding)
                new_strides[view_d] = new_sizes[view_d + 1]
                    .max(1)
                    .saturating_mul(new_strides[view_d + 1]);
            }
        }
        return Some(new_strides);
    }
    let mut view_d = new_sizes.len() as isize - 1;
    let mut chunk_base_stride = *old_strides.last().unwrap();
    let mut tensor_numel: usize = 1;
    let mut view_numel: usize = 1;
    for tensor_d in (0..old_sizes.len()).rev() {
        tensor_numel *= old_sizes[tensor_d];
        let end_of_chunk = tensor_d == 0
            || (old_sizes[tensor_d - 1] != 1
                && Some(old_strides[tensor_d - 1]) != tensor_numel.checked_mul(chunk_base_stride));
        if end_of_chunk {
            while view_d >= 0 && (view_numel < tensor_numel || new_sizes[view_d as usize] == 1) {
                new_strides[view_d as usize] = view_numel * chunk_base_stride;
                view_numel *= new_sizes[view_d as usize];
                view_d -= 1;
            }
            if view_numel != tensor_numel {
                return None;
            }
            if tensor_d > 0 {
                chunk_base_stride = old_strides[tensor_d - 1];
                tensor_numel = 1;
                view_numel = 1;
            }
        }
    }
    if view_d != -1 {
        return None;
    }
    Some(new_strides)
}
