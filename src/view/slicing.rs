//! Views that select part of a tensor: select, narrow, slice (with step), diagonal, and the
//! multi-output views unbind / split / split_with_sizes / chunk.

use super::{Geometry, multi_view, strided_view};
use crate::layout::{Layout, wrap_dim};
use crate::{Result, Tensor, bail};

/// `l`'s storage offset moved `k` elements along a dim of stride `stride`, if it fits in int64.
/// A non-empty view always fits (its elements lie in the storage); an empty tensor's geometry is
/// unbounded (`as_strided`/`set_` accept any strides for it), so the move can overflow there
/// (libFuzzer views/set_resize findings).
fn shifted(l: &Layout, k: usize, stride: usize) -> Option<usize> {
    k.checked_mul(stride)?
        .checked_add(l.offset())
        .filter(|&o| o <= i64::MAX as usize)
}

fn narrowed(l: &Layout, d: usize, start: usize, len: usize, step: usize) -> Option<Layout> {
    let mut sizes = crate::layout::Dims::from_slice(l.sizes());
    let mut strides = crate::layout::Dims::from_slice(l.strides());
    // (`start < size` whenever `len > 0`; an empty narrow may start at the end)
    let offset = shifted(l, start.min(sizes[d]), strides[d])?;
    sizes[d] = len;
    // saturating: with a step beyond the size the dim has at most one element, whose stride
    // never addresses memory
    strides[d] = strides[d].saturating_mul(step);
    Some(Layout::new(sizes, strides, offset))
}

fn selected(l: &Layout, d: usize, i: usize) -> Option<Layout> {
    let mut sizes = crate::layout::Dims::from_slice(l.sizes());
    let mut strides = crate::layout::Dims::from_slice(l.strides());
    let offset = shifted(l, i, strides[d])?;
    sizes.remove(d);
    strides.remove(d);
    Some(Layout::new(sizes, strides, offset))
}

fn dim_of(t: &Tensor, dim: i64, op: &'static str) -> Result<(Layout, usize)> {
    let l = t.layout();
    let d = dim_in(&l, dim, op)?;
    Ok((l, d))
}

/// [`dim_of`] for a single strided view: the layout comes with the storage it views (read
/// under one lock).
fn viewed_dim(t: &Tensor, dim: i64, op: &'static str) -> Result<(Geometry, usize)> {
    let g = Geometry::of(t);
    let d = dim_in(&g.layout, dim, op)?;
    Ok((g, d))
}

fn dim_in(l: &Layout, dim: i64, op: &'static str) -> Result<usize> {
    if l.dim() == 0 {
        bail!(
            IndexOutOfRange,
            op,
            "{}() cannot be applied to a 0-dim tensor.",
            op
        );
    }
    wrap_dim(dim, l.dim(), op)
}

impl Tensor {
    /// Removes dim `dim`, keeping index `index` (negative counts from the end).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// let r = x.select(0, -1)?;
    /// assert_eq!((r.to_vec::<i64>()?, r.storage_offset()), (vec![3, 4, 5], 3));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn select(&self, dim: impl crate::Dim, index: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "select")?;
        let index = crate::tensor::dims::dim(index, "select")?;
        let (g, d) = viewed_dim(self, dim, "select")?;
        let l = &g.layout;
        let size = l.sizes()[d] as i64;
        if index < -size || index >= size {
            bail!(
                IndexOutOfRange,
                "select",
                "select(): index {} out of range for tensor of size {:?} at dimension {}",
                index,
                l.sizes(),
                dim
            );
        }
        let i = if index < 0 { index + size } else { index } as usize;
        strided_view(
            self,
            g,
            |l| selected(l, d, i),
            ("select", "SelectBackward0"),
        )
    }

    /// `length` elements of dim `dim` from `start` (negative `start` counts from the end).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?;
    /// assert_eq!(x.narrow(0, 2, 3)?.to_vec::<i64>()?, vec![2, 3, 4]);
    /// assert!(x.narrow(0, 5, 2).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn narrow(
        &self,
        dim: impl crate::Dim,
        start: impl crate::Dim,
        length: impl crate::Dim,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "narrow")?;
        let start = crate::tensor::dims::dim(start, "narrow")?;
        let length = crate::tensor::dims::size(length, "narrow", |_| {
            "narrow(): length must be non-negative.".into()
        })?;
        let (g, d) = viewed_dim(self, dim, "narrow")?;
        let l = &g.layout;
        let size = l.sizes()[d] as i64;
        if start < -size || start > size {
            bail!(
                IndexOutOfRange,
                "narrow",
                "start out of range (expected to be in range of [{}, {}], but got {})",
                -size,
                size,
                start
            );
        }
        let s = if start < 0 { start + size } else { start };
        // compare in usize: `length` may exceed i64::MAX
        if length > (size - s) as usize {
            bail!(
                IndexOutOfRange,
                "narrow",
                "start ({}) + length ({}) exceeds dimension size ({}).",
                s,
                length,
                size
            );
        }
        strided_view(
            self,
            g,
            |l| narrowed(l, d, s as usize, length, 1),
            ("narrow", "SliceBackward0"),
        )
    }

    /// Python-style `start:end:step` on dim `dim` (bounds clamp; `step > 0`); `start`/`end` are
    /// any [`MaybeDim`](crate::MaybeDim) (`None`: from the start / to the end).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 10, 1)?;
    /// let s = x.slice(0, 1, -1, 3)?;
    /// assert_eq!(x.slice(0, None, 2, 1)?.to_vec::<i64>()?, vec![0, 1]);
    /// assert_eq!((s.to_vec::<i64>()?, s.strides()), (vec![1, 4, 7], vec![3]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn slice(
        &self,
        dim: impl crate::Dim,
        start: impl crate::MaybeDim,
        end: impl crate::MaybeDim,
        step: impl crate::Dim,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "slice")?;
        let start = crate::tensor::dims::maybe_dim(start, "slice")?;
        let end = crate::tensor::dims::maybe_dim(end, "slice")?;
        let step = crate::tensor::dims::dim(step, "slice")?;
        let (g, d) = viewed_dim(self, dim, "slice")?;
        let l = &g.layout;
        if step <= 0 {
            bail!(InvalidArgument, "slice", "slice step must be positive");
        }
        let size = l.sizes()[d] as i64;
        let clamp = |v: i64| {
            let v = if v < 0 { v + size } else { v };
            v.clamp(0, size)
        };
        let s = clamp(start.unwrap_or(0));
        let e = clamp(end.unwrap_or(size)).max(s);
        // ceil((e - s) / step) without overflowing for huge steps
        let len = if e == s {
            0
        } else {
            ((e - s - 1) / step + 1) as usize
        };
        strided_view(
            self,
            g,
            |l| narrowed(l, d, s as usize, len, step as usize),
            ("slice", "SliceBackward0"),
        )
    }

    /// The diagonal of the (dim1, dim2) planes, appended as the last dim.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 9, 1)?.view(&[3, 3])?;
    /// assert_eq!(x.diagonal(1, 0, 1)?.to_vec::<i64>()?, vec![1, 5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn diagonal(
        &self,
        offset: impl crate::Dim,
        dim1: impl crate::Dim,
        dim2: impl crate::Dim,
    ) -> Result<Tensor> {
        let offset = crate::tensor::dims::dim(offset, "diagonal")?;
        let dim1 = crate::tensor::dims::dim(dim1, "diagonal")?;
        let dim2 = crate::tensor::dims::dim(dim2, "diagonal")?;
        let g = Geometry::of(self);
        let l = &g.layout;
        let a = wrap_dim(dim1, l.dim(), "diagonal")?;
        let b = wrap_dim(dim2, l.dim(), "diagonal")?;
        if a == b {
            bail!(
                InvalidArgument,
                "diagonal",
                "diagonal dimensions cannot be identical {}, {}",
                dim1,
                dim2
            );
        }
        let (sa, sb) = (l.sizes()[a] as i64, l.sizes()[b] as i64);
        let diag = if offset >= 0 {
            sa.min(sb - offset).max(0)
        } else {
            (sa + offset).min(sb).max(0)
        };
        // an empty diagonal keeps the offset; otherwise |offset| < size, so the step stays
        // inside the storage (a huge offset must not overflow: libFuzzer views finding)
        let geom = |l: &Layout| {
            let off = if diag == 0 {
                l.offset()
            } else if offset >= 0 {
                shifted(l, offset as usize, l.strides()[b])?
            } else {
                shifted(l, offset.unsigned_abs() as usize, l.strides()[a])?
            };
            let mut sizes = l.sizes().to_vec();
            let mut strides = l.strides().to_vec();
            let st = strides[a]
                .checked_add(strides[b])
                .filter(|&v| v <= i64::MAX as usize)?;
            for d in [a.max(b), a.min(b)] {
                sizes.remove(d);
                strides.remove(d);
            }
            sizes.push(diag as usize);
            strides.push(st);
            Some(Layout::new(sizes, strides, off))
        };
        strided_view(self, g, geom, ("diagonal", "DiagonalBackward0"))
    }

    /// All slices along `dim` (multi-output views: in-place on them is refused under autograd).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// let rows = x.unbind(0)?;
    /// assert_eq!(rows[1].to_vec::<i64>()?, vec![3, 4, 5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unbind(&self, dim: impl crate::Dim) -> Result<Vec<Tensor>> {
        let dim = crate::tensor::dims::dim(dim, "unbind")?;
        let (l, d) = dim_of(self, dim, "unbind")?;
        multi_view(
            self,
            l.sizes()[d],
            |l, i| selected(l, d, i),
            ("unbind", "UnbindBackward0"),
        )
    }

    /// Pieces of `split_size` along `dim` (the last may be smaller).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 5, 1)?;
    /// let parts = x.split(2, 0)?;
    /// assert_eq!(parts.iter().map(|p| p.numel()).collect::<Vec<_>>(), vec![2, 2, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn split(&self, split_size: impl crate::Dim, dim: impl crate::Dim) -> Result<Vec<Tensor>> {
        let split_size = crate::tensor::dims::size(split_size, "split", |v| {
            format!("split expects split_size be non-negative, but got split_size={v}")
        })?;
        let dim = crate::tensor::dims::dim(dim, "split")?;
        let (l, d) = dim_of(self, dim, "split")?;
        let size = l.sizes()[d];
        if split_size == 0 && size != 0 {
            bail!(
                InvalidArgument,
                "split",
                "split_size can only be 0 if dimension size is 0, but got dimension size of {}",
                size
            );
        }
        let n = if split_size == 0 {
            1
        } else {
            size.div_ceil(split_size).max(1)
        };
        let piece = |l: &Layout, i: usize| {
            let s = (i * split_size).min(size);
            narrowed(l, d, s, split_size.min(size - s), 1)
        };
        multi_view(self, n, piece, ("split", "SplitBackward0"))
    }

    /// Pieces with the given sizes along `dim` (they must sum to the dim size).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 5, 1)?;
    /// assert_eq!(x.split_with_sizes(&[1, 4], 0)?[1].numel(), 4);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn split_with_sizes(
        &self,
        sizes: impl crate::IntoShape,
        dim: impl crate::Dim,
    ) -> Result<Vec<Tensor>> {
        let sizes = crate::tensor::dims::sizes(sizes, "split_with_sizes")?;
        let sizes = &sizes[..];
        let dim = crate::tensor::dims::dim(dim, "split_with_sizes")?;
        let (l, d) = dim_of(self, dim, "split_with_sizes")?;
        let total = sizes.iter().try_fold(0usize, |t, &s| t.checked_add(s));
        if total != Some(l.sizes()[d]) {
            bail!(
                InvalidArgument,
                "split_with_sizes",
                "split_with_sizes expects split_sizes to sum exactly to {} (input tensor's size at dimension {}), but got split_sizes={:?}",
                l.sizes()[d],
                dim,
                sizes
            );
        }
        let starts: Vec<usize> = sizes
            .iter()
            .scan(0, |start, &s| {
                let here = *start;
                *start += s;
                Some(here)
            })
            .collect();
        let piece = |l: &Layout, i: usize| narrowed(l, d, starts[i], sizes[i], 1);
        multi_view(
            self,
            sizes.len(),
            piece,
            ("split_with_sizes", "SplitWithSizesBackward0"),
        )
    }

    /// `chunks` nearly equal pieces along `dim` (fewer if the size does not allow).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 5, 1)?;
    /// assert_eq!(x.chunk(3, 0)?.len(), 3);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn chunk(&self, chunks: impl crate::Dim, dim: impl crate::Dim) -> Result<Vec<Tensor>> {
        let chunks = crate::tensor::dims::size(chunks, "chunk", |v| {
            format!("chunk expects `chunks` to be greater than 0, got: {v}")
        })?;
        let dim = crate::tensor::dims::dim(dim, "chunk")?;
        if chunks == 0 {
            bail!(
                InvalidArgument,
                "chunk",
                "chunk expects `chunks` to be greater than 0, got: 0"
            );
        }
        let (l, d) = dim_of(self, dim, "chunk")?;
        let size = l.sizes()[d];
        if size == 0 {
            // PyTorch keeps the number of chunks for an empty dim: `chunks` empty pieces
            let mut sizes = crate::storage::try_vec(chunks, "chunk")?;
            sizes.resize(chunks, 0);
            return self.split_with_sizes(&sizes, dim);
        }
        self.split(size.div_ceil(chunks), dim)
    }
}
