//! Strides of a fresh output: TensorIterator's rule for elementwise ops ([`iter_output_strides`]:
//! its fast set-ups for operands of one shape, else [`dense_strides_like`], the memory order of
//! the inputs) — the one place every elementwise op gets its output geometry from.

use super::{Layout, contiguous_strides};

/// Strides TensorIterator gives the fresh output of shape `sizes` over `operands` (inputs in
/// PyTorch's operand order; `broadcast` are their strides broadcast to `sizes`, 0 for broadcast
/// dims). When every operand has shape `sizes` (its fast set-up): contiguous strides if all are
/// contiguous (size-1 dims' strides ignored), channels-last ones if all are channels-last
/// contiguous (4 dims), the operands' own strides if they are non-overlapping and dense with
/// equal strides; otherwise the memory order of the inputs ([`dense_strides_like`]).
pub fn iter_output_strides(
    sizes: &[usize],
    operands: &[&Layout],
    broadcast: &[&[isize]],
) -> Vec<usize> {
    let same_shape = operands.iter().all(|l| l.sizes() == sizes);
    if same_shape && !operands.is_empty() {
        if operands.iter().all(|l| l.is_contiguous()) {
            return contiguous_strides(sizes);
        }
        if sizes.len() == 4 && operands.iter().all(|l| is_channels_last(l)) {
            return channels_last_strides(sizes);
        }
        let first = operands[0].strides();
        if operands
            .iter()
            .all(|l| l.is_non_overlapping_and_dense() && l.strides() == first)
        {
            return first.to_vec();
        }
    }
    dense_strides_like(sizes, broadcast)
}

/// PyTorch's channels-last contiguity of a 4-dim layout (dims C, W, H, N fastest first; size-1
/// dims' strides ignored).
fn is_channels_last(l: &Layout) -> bool {
    let mut expected = 1;
    for d in [1, 3, 2, 0] {
        let n = l.sizes()[d];
        if n != 1 {
            if l.strides()[d] != expected {
                return false;
            }
            expected *= n;
        }
    }
    true
}

/// Channels-last strides of 4 dims `[N, C, H, W]` (PyTorch's `get_channels_last_strides_2d`).
fn channels_last_strides(sizes: &[usize]) -> Vec<usize> {
    let mut st = vec![0; 4];
    st[1] = 1;
    st[3] = sizes[1].max(1);
    st[2] = st[3] * sizes[3].max(1);
    st[0] = st[2] * sizes[2].max(1);
    st
}

/// Output strides for an elementwise op over operands (given as broadcast strides, 0 for
/// broadcast dims) — TensorIterator's `reorder_dimensions` + permuted contiguous strides, so the
/// output follows the memory order of its inputs (first operand first).
pub fn dense_strides_like(sizes: &[usize], operand_strides: &[&[isize]]) -> Vec<usize> {
    let nd = sizes.len();
    if nd == 0 {
        return vec![];
    }
    // perm[0] is the fastest-moving dim.
    let mut perm: Vec<usize> = (0..nd).rev().collect();
    let should_swap = |d0: usize, d1: usize| -> i32 {
        for st in operand_strides {
            let (s0, s1) = (st[d0], st[d1]);
            if s0 == 0 || s1 == 0 {
                continue;
            }
            if s0 < s1 {
                return -1;
            }
            if s0 > s1 {
                return 1;
            }
            if sizes[d0] > sizes[d1] {
                return 1;
            }
        }
        0
    };
    for i in 1..nd {
        let mut dim1 = i;
        for dim0 in (0..i).rev() {
            let c = should_swap(perm[dim0], perm[dim1]);
            if c > 0 {
                perm.swap(dim0, dim1);
                dim1 = dim0;
            } else if c < 0 {
                break;
            }
        }
    }
    let mut strides = vec![0; nd];
    let mut acc = 1usize;
    for &d in &perm {
        strides[d] = acc;
        // saturating like `contiguous_strides`: an empty shape may hold huge sizes whose
        // product overflows (libFuzzer sparse finding)
        acc = acc.saturating_mul(sizes[d].max(1));
    }
    strides
}
