//! PyTorch's memory-format suggestion (`suggest_memory_format`): whether a 4-dim (5-dim)
//! layout's strides are ordered like channels-last (channels-last-3d), the format the CPU
//! batch_norm and group_norm kernels give their outputs and input gradients.

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
