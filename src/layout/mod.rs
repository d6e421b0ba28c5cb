//! Layout: pure metadata of a strided tensor — sizes, strides (in elements, non-negative) and a
//! storage offset — plus shape arithmetic (dims, broadcasting, `-1` inference, PyTorch's
//! `compute_stride` for `view`) and the strided iteration that kernels use. No element lives here.

mod iter;
mod memory_format;
mod output;
mod shape;

pub(crate) use iter::{PAR_MIN_ELEMS, par_for_each_run, par_ranges};
pub use iter::{StridedOffsets, for_each_run};
pub(crate) use memory_format::{
    channels_last_strides, is_channels_last_contiguous, suggests_channels_last,
};
pub use output::{dense_strides_like, iter_output_strides};
pub use shape::{
    broadcast_shapes, compute_stride, contiguous_strides, infer_size, numel, wrap_dim,
};
pub(crate) use shape::{check_contiguous_alloc, check_numel, check_numel_i64, wrap_dims};

/// Sizes or strides of a layout: stored inline up to 4 dims (40 bytes), so cloning a layout
/// (which every op does) does not allocate and the structs holding layouts (tensors, view
/// formulas, CopySlices) stay small to move; rank 5+ spills to the heap.
pub type Dims = smallvec::SmallVec<[usize; 4]>;

/// Sizes, strides and storage offset of a strided tensor (all in elements).
#[derive(Debug, PartialEq, Eq, Hash, Default)]
pub struct Layout {
    sizes: Dims,
    strides: Dims,
    offset: usize,
}

impl Clone for Layout {
    /// Copies the dims as slices (`SmallVec`'s own `Clone` goes element by element through
    /// `Extend`; layouts are cloned on every op, so this is on the autograd hot path).
    fn clone(&self) -> Self {
        Layout {
            sizes: Dims::from_slice(&self.sizes),
            strides: Dims::from_slice(&self.strides),
            offset: self.offset,
        }
    }
}

/// Sizes or strides given to [`Layout::new`]: a `Vec<usize>`, a slice, an array or [`Dims`].
/// (Not `Into<Dims>`: `SmallVec`'s `From<&[T]>` goes element by element through `Extend`, and
/// its `From<Vec<T>>` may keep the heap buffer; these copy inline up to 6 dims.)
pub trait IntoDims {
    /// The dims, inline when they fit.
    fn into_dims(self) -> Dims;
}

impl IntoDims for Dims {
    fn into_dims(self) -> Dims {
        self
    }
}
impl IntoDims for &[usize] {
    fn into_dims(self) -> Dims {
        Dims::from_slice(self)
    }
}
impl IntoDims for Vec<usize> {
    fn into_dims(self) -> Dims {
        Dims::from_slice(&self)
    }
}
impl IntoDims for &Vec<usize> {
    fn into_dims(self) -> Dims {
        Dims::from_slice(self)
    }
}
impl<const N: usize> IntoDims for [usize; N] {
    fn into_dims(self) -> Dims {
        Dims::from_slice(&self)
    }
}
impl<const N: usize> IntoDims for &[usize; N] {
    fn into_dims(self) -> Dims {
        Dims::from_slice(self)
    }
}

impl Layout {
    /// A layout from parts (`Vec<usize>`, `&[usize]` or [`Dims`]). Panics (internal invariant)
    /// if the ranks differ.
    pub fn new(sizes: impl IntoDims, strides: impl IntoDims, offset: usize) -> Layout {
        let (sizes, strides) = (sizes.into_dims(), strides.into_dims());
        assert_eq!(
            sizes.len(),
            strides.len(),
            "internal: sizes and strides rank differ"
        );
        Layout {
            sizes,
            strides,
            offset,
        }
    }
    /// The row-major contiguous layout of `sizes` at offset 0.
    pub fn contiguous(sizes: &[usize]) -> Layout {
        Layout {
            strides: contiguous_strides(sizes).into(),
            sizes: sizes.into(),
            offset: 0,
        }
    }
    /// Sizes.
    pub fn sizes(&self) -> &[usize] {
        &self.sizes
    }
    /// Strides in elements.
    pub fn strides(&self) -> &[usize] {
        &self.strides
    }
    /// Storage offset in elements.
    pub fn offset(&self) -> usize {
        self.offset
    }
    /// Number of dims.
    pub fn dim(&self) -> usize {
        self.sizes.len()
    }
    /// Number of elements.
    pub fn numel(&self) -> usize {
        numel(&self.sizes)
    }
    /// One past the largest storage element index this layout touches (0 when empty).
    pub fn storage_span(&self) -> usize {
        if self.sizes.contains(&0) {
            return 0;
        }
        self.offset
            + self
                .sizes
                .iter()
                .zip(&self.strides)
                .map(|(s, st)| (s - 1) * st)
                .sum::<usize>()
            + 1
    }
    /// Like [`storage_span`](Self::storage_span) but with overflow checking (user geometry).
    pub fn checked_storage_span(
        sizes: &[usize],
        strides: &[usize],
        offset: usize,
    ) -> Option<usize> {
        if sizes.contains(&0) {
            return Some(0);
        }
        let mut end = offset;
        for (s, st) in sizes.iter().zip(strides) {
            end = end.checked_add((s - 1).checked_mul(*st)?)?;
        }
        end.checked_add(1)
    }
    /// PyTorch's `is_contiguous`: row-major dense, ignoring strides of size-1 dims.
    pub fn is_contiguous(&self) -> bool {
        if self.numel() == 0 {
            return true;
        }
        let mut expected = 1;
        for (s, st) in self.sizes.iter().zip(&self.strides).rev() {
            if *s != 1 {
                if *st != expected {
                    return false;
                }
                expected *= s;
            }
        }
        true
    }
    /// True if the elements occupy a dense block without overlap in some order.
    pub fn is_non_overlapping_and_dense(&self) -> bool {
        if self.dim() == 1 {
            return self.sizes[0] < 2 || self.strides[0] == 1;
        }
        let mut perm: Vec<usize> = (0..self.dim()).collect();
        perm.sort_by_key(|&d| {
            if self.sizes[d] < 2 {
                usize::MAX
            } else {
                self.strides[d]
            }
        });
        let mut require = 1;
        for &d in &perm {
            let s = self.sizes[d];
            if s < 2 {
                continue;
            }
            if self.strides[d] != require {
                return false;
            }
            // saturating: an empty layout may carry huge sizes (libFuzzer sparse finding)
            require = require.saturating_mul(s);
        }
        true
    }
    /// True when no two index tuples address one storage element (a sufficient test: with
    /// the dims of size > 1 sorted by stride, each stride exceeds the furthest offset the smaller
    /// dims reach). Empty layouts are injective.
    pub(crate) fn is_surely_injective(&self) -> bool {
        if self.sizes().contains(&0) {
            return true;
        }
        let mut dims: smallvec::SmallVec<[(usize, usize); 6]> = self
            .sizes()
            .iter()
            .zip(self.strides())
            .filter(|(s, _)| **s > 1)
            .map(|(&s, &st)| (st, s))
            .collect();
        dims.sort_unstable();
        let mut reach = 0usize;
        for (st, s) in dims {
            if st <= reach {
                return false;
            }
            match (s - 1).checked_mul(st).and_then(|v| v.checked_add(reach)) {
                Some(r) => reach = r,
                None => return false,
            }
        }
        true
    }
    /// True if two or more index tuples map to one storage element (a stride-0 dim of size > 1,
    /// or any other internal overlap). Conservative: may say true for exotic non-overlapping
    /// geometries only when they are not dense (PyTorch's `has_internal_overlap` returns TOO_HARD
    /// there and does not error; we mirror that by checking only the definite cases).
    pub fn has_internal_overlap(&self) -> bool {
        self.sizes
            .iter()
            .zip(&self.strides)
            .any(|(&s, &st)| s > 1 && st == 0)
    }
    /// Iterates the storage offsets of every element in row-major logical order.
    pub fn offsets(&self) -> StridedOffsets<'_> {
        StridedOffsets::new(&self.sizes, &self.strides, self.offset)
    }
    /// Strides a fresh output of the same shape gets to keep this layout's memory order
    /// (PyTorch's preserve_format for `clone`/`empty_like`): the same strides when this layout is
    /// non-overlapping and dense, else the order inferred from the strides.
    pub fn preserved_strides(&self) -> Vec<usize> {
        if self.is_non_overlapping_and_dense() {
            return self.strides.to_vec();
        }
        let st: Vec<isize> = self.strides.iter().map(|&s| s as isize).collect();
        dense_strides_like(&self.sizes, &[&st])
    }
}
