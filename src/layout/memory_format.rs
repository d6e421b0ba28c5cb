//! PyTorch's memory-format suggestion (`suggest_memory_format`): whether a 4-dim (5-dim)
//! layout's strides are ordered like channels-last (channels-last-3d), the format the CPU
//! batch_norm, group_norm, convolution and pooling kernels give their outputs and input
//! gradients; the channels-last strides of a shape and the channels-last density check.

use super::Layout;

/// True when `l` has 4 or 5 dims and strides ordered like PyTorch's channels-last (3d)
/// (`is_channels_last_strides_2d` / `_3d`: dims C, W, (D,) H, N from the smallest stride, no
/// size-0 dim, a zero channel stride or an `N11W`-style tie with the channel stride).
pub(crate) fn suggests_channels_last(l: &Layout) -> bool {
    let order: &[usize] = match l.sizes().len() {
        4 => &[1, 3, 2, 0],
        5 => &[1, 4, 3, 2, 0],
        _ => return false,
    };
    let (sizes, strides) = (l.sizes(), l.strides());
    if strides[1] == 0 {
        return false;
    }
    let mut min = 0usize;
    for &d in order {
        if sizes[d] == 0 || strides[d] < min || (d == 0 && min == strides[1]) {
            return false;
        }
        min = strides[d];
        if sizes[d] > 1 {
            min = min.saturating_mul(sizes[d]);
        }
    }
    true
}

/// True when `l` (4 or 5 dims) is dense in channels-last (3d) order, size-1 dims skipped
/// (PyTorch's `compute_channels_last_contiguous_2d` / `_3d`): what
/// `contiguous(memory_format=channels_last)` keeps as it is.
pub(crate) fn is_channels_last_contiguous(l: &Layout) -> bool {
    let order: &[usize] = match l.sizes().len() {
        4 => &[1, 3, 2, 0],
        5 => &[1, 4, 3, 2, 0],
        _ => return false,
    };
    let (sizes, strides) = (l.sizes(), l.strides());
    let mut expected = 1usize;
    for &d in order {
        if sizes[d] != 1 {
            if strides[d] != expected {
                return false;
            }
            expected = expected.saturating_mul(sizes[d]);
        }
    }
    true
}

/// PyTorch's channels-last (3d) strides of `sizes` (4 or 5 dims: `get_channels_last_strides_2d`
/// / `_3d`, the strides of `empty(.., memory_format=channels_last)`): the channel dim
/// innermost, then the spatial dims from the last, the batch outermost; size-1 dims get the
/// same formula (no special case).
pub(crate) fn channels_last_strides(sizes: &[usize]) -> Vec<usize> {
    let n = sizes.len();
    let mut strides = vec![0usize; n];
    strides[1] = 1;
    let mut acc = sizes[1];
    for d in (2..n).rev() {
        strides[d] = acc;
        acc *= sizes[d];
    }
    strides[0] = acc;
    strides
}
