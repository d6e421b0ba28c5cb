//! View ops: new tensors that share the input's storage and its root's version counter and
//! record the root as `base`. Nothing here copies, except `reshape`'s documented copy path.
//! Geometry is computed first (pure, on `Layout`), then `make_view` builds the tensor and the
//! op's backward is recorded: reshape-like views reshape the gradient back, permutations permute
//! it back, `expand` sums it, and every other view scatters it into the input geometry.

mod dims;
mod slicing;

use crate::autograd::view::{grad_edges, make_strided_view, make_view, record_fresh};
use crate::autograd::{AsStridedBackward, Backward, MultiViewBackward, record};
use crate::layout::{Layout, compute_stride, infer_size};
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor, bail};

/// Creates the view and records `bw` as its grad_fn.
pub(crate) fn view_with(input: &Tensor, layout: Layout, bw: impl Backward) -> Result<Tensor> {
    input.check_strided(bw.name())?;
    let mut v = make_view(input, layout, false);
    if let Some(edges) = grad_edges(&[input])? {
        record_fresh(&mut v, edges, Vec::new(), bw);
    }
    Ok(v)
}

/// The (input, output) geometries a logical view's backward scatters between. `geom` maps an
/// input layout to the view's layout. When the input is injective this is its own layout (the
/// storage scatter is exact); when elements of the input alias (an expanded input) the view is
/// replayed on a contiguous layout of the input's shape, so each input element gets exactly the
/// gradient of the view elements that name it (PyTorch's index-based view backward), not a
/// share of its storage element's total.
fn backward_geometry<V: Clone>(
    input: &Layout,
    out: &V,
    geom: impl Fn(&Layout) -> Option<V>,
    op: &'static str,
) -> Result<(Layout, V)> {
    if input.is_surely_injective() {
        Ok((input.clone(), out.clone()))
    } else {
        let c = Layout::contiguous(input.sizes());
        let v = geom(&c).ok_or_else(|| offset_overflow(op, &c))?;
        Ok((c, v))
    }
}

/// The error of a view whose storage offset or stride would overflow int64 (only an empty
/// tensor's unbounded geometry gets there).
fn offset_overflow(op: &'static str, l: &Layout) -> crate::Error {
    crate::err!(
        InvalidArgument,
        op,
        "{}: the view's storage offset or stride overflows int64 (input sizes {:?}, strides {:?}, storage offset {})",
        op,
        l.sizes(),
        l.strides(),
        l.offset()
    )
}

/// Creates the view `geom(l)` of `input`, whose layout `l` (with its storage) the caller has
/// read (and checked its arguments against); the view's backward scatters into the input's shape. `None` from `geom`
/// (an offset overflowing int64) is an error naming `op`.
pub(crate) fn strided_view(
    input: &Tensor,
    Geometry { layout: l, storage }: Geometry,
    geom: impl Fn(&Layout) -> Option<Layout>,
    (op, name): (&'static str, &'static str),
) -> Result<Tensor> {
    input.check_strided(op)?;
    let layout = geom(&l).ok_or_else(|| offset_overflow(op, &l))?;
    let (base, view) = backward_geometry(&l, &layout, geom, op)?;
    make_strided_view(
        input,
        storage,
        layout,
        AsStridedBackward { name, base, view },
    )
}

/// A tensor's layout and the storage it addresses, read together.
pub(crate) struct Geometry {
    pub(crate) layout: Layout,
    storage: crate::storage::Storage,
}

impl Geometry {
    pub(crate) fn of(t: &Tensor) -> Geometry {
        let d = t.data_ref();
        Geometry {
            layout: d.layout.clone(),
            storage: d.storage.clone(),
        }
    }
}

/// `n` views `piece(input's layout, i)` of one input sharing one multi-output node
/// (unbind/split/chunk). The outputs are reserved fallibly: an empty input may have a dim of
/// 2^40 (libFuzzer views finding: an allocation abort before).
pub(crate) fn multi_view(
    input: &Tensor,
    n: usize,
    piece: impl Fn(&Layout, usize) -> Option<Layout>,
    (op, name): (&'static str, &'static str),
) -> Result<Vec<Tensor>> {
    input.check_strided(op)?;
    let too_many = || crate::err!(InvalidArgument, op, "{}: cannot allocate {} outputs", op, n);
    let mut layouts = Vec::new();
    layouts.try_reserve_exact(n).map_err(|_| too_many())?;
    let mut outs = Vec::new();
    outs.try_reserve_exact(n).map_err(|_| too_many())?;
    let l = input.layout();
    let geom = |l: &Layout| (0..n).map(|i| piece(l, i)).collect::<Option<Vec<_>>>();
    for i in 0..n {
        layouts.push(piece(&l, i).ok_or_else(|| offset_overflow(op, &l))?);
    }
    outs.extend(layouts.iter().map(|l| make_view(input, l.clone(), true)));
    let (base, views) = backward_geometry(&l, &layouts, geom, op)?;
    let refs: Vec<&Tensor> = outs.iter().collect();
    record(
        &refs,
        &[input],
        Vec::new,
        MultiViewBackward { name, base, views },
    )?;
    Ok(outs)
}

/// Reshape-like views: the gradient is reshaped back to the input shape.
pub(crate) struct ReshapeBackward {
    pub(crate) name: &'static str,
    pub(crate) shape: Vec<usize>,
}
backward!(ReshapeBackward, self.name, |self, _, g: Tensor| {
    let shape: Vec<i64> = self.shape.iter().map(|&s| s as i64).collect();
    input_grad(g.reshape(&shape)?)
});

struct ExpandBackward {
    shape: Vec<usize>,
}
backward!(ExpandBackward, "ExpandBackward0", |self, _, g: Tensor| {
    input_grad(g.sum_to_size(&self.shape)?)
});

fn view_error(op: &'static str) -> crate::Error {
    crate::err!(
        ViewIncompatible,
        op,
        "view size is not compatible with input tensor's size and stride (at least one dimension spans across two contiguous subspaces). Use .reshape(...) instead."
    )
}

impl Tensor {
    /// A view with a new shape (one `-1` is inferred); fails with `ViewIncompatible` when the
    /// strides cannot express it.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?;
    /// let v = x.view(&[2, -1])?;
    /// assert_eq!((v.shape(), v.strides()), (vec![2, 3], vec![3, 1]));
    /// assert!(v.t()?.view(&[6]).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn view(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::ints(shape, "view")?;
        let shape = &shape[..];
        let l = self.layout();
        let new = infer_size(shape, l.numel(), "view")?;
        let strides =
            compute_stride(l.sizes(), l.strides(), &new).ok_or_else(|| view_error("view"))?;
        let layout = Layout::new(new, strides, l.offset());
        view_with(
            self,
            layout,
            ReshapeBackward {
                name: "ViewBackward0",
                shape: l.sizes().to_vec(),
            },
        )
    }

    /// A view when the strides allow it, else a contiguous copy (which is not a view).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// assert!(x.reshape(&[3, 2])?.shares_storage(&x));
    /// assert!(!x.t()?.reshape(&[6])?.shares_storage(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn reshape(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::ints(shape, "reshape")?;
        let shape = &shape[..];
        let l = self.layout();
        let new = infer_size(shape, l.numel(), "reshape")?;
        if let Some(strides) = compute_stride(l.sizes(), l.strides(), &new) {
            let layout = Layout::new(new, strides, l.offset());
            return view_with(
                self,
                layout,
                ReshapeBackward {
                    name: "ViewBackward0",
                    shape: l.sizes().to_vec(),
                },
            );
        }
        let c = self.copy_contiguous_for_reshape()?;
        let shape: Vec<i64> = new.iter().map(|&s| s as i64).collect();
        c.unsafe_view(&shape)
    }

    fn copy_contiguous_for_reshape(&self) -> Result<Tensor> {
        let out = crate::tensor::materialize(
            self,
            self.dtype(),
            &crate::layout::contiguous_strides(&self.shape()),
        )?;
        record(
            &[&out],
            &[self],
            Vec::new,
            crate::ops::movement::copy::PassBackward {
                name: "CloneBackward0",
            },
        )?;
        Ok(out)
    }

    /// PyTorch's `_unsafe_view`: aliases the storage with a new shape but is NOT a view (own
    /// version counter, `is_view() == false`). The input must be viewable with that shape.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 4, 1)?;
    /// let u = x.unsafe_view(&[2, 2])?;
    /// assert!(u.shares_storage(&x) && !u.is_view());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unsafe_view(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::ints(shape, "unsafe_view")?;
        let shape = &shape[..];
        let d = self.data();
        let new = infer_size(shape, d.layout.numel(), "_unsafe_view")?;
        let strides = compute_stride(d.layout.sizes(), d.layout.strides(), &new)
            .ok_or_else(|| view_error("_unsafe_view"))?;
        let out = Tensor::from_parts(
            d.storage,
            Layout::new(new, strides, d.layout.offset()),
            self.dtype(),
        );
        record(
            &[&out],
            &[self],
            Vec::new,
            ReshapeBackward {
                name: "UnsafeViewBackward0",
                shape: d.layout.sizes().to_vec(),
            },
        )?;
        Ok(out)
    }

    /// A view with explicit sizes, strides and (optionally: a [`MaybeDim`](crate::MaybeDim))
    /// storage offset, bounds-checked against the storage.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?;
    /// let v = x.as_strided(&[2, 2], &[1, 2], 1)?;
    /// assert_eq!(v.to_vec::<i64>()?, vec![1, 3, 2, 4]);
    /// assert!(x.as_strided(&[7], &[1], None).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    /// Negative sizes, strides or offsets are rejected with `InvalidArgument`, as in PyTorch.
    pub fn as_strided(
        &self,
        sizes: impl crate::IntoShape,
        strides: impl crate::IntoShape,
        storage_offset: impl crate::MaybeDim,
    ) -> Result<Tensor> {
        let op = "as_strided";
        let sizes = crate::tensor::dims::ints(sizes, op)?;
        let strides = crate::tensor::dims::ints(strides, op)?;
        let storage_offset = crate::tensor::dims::maybe_dim(storage_offset, op)?;
        let (sizes, strides) = (&sizes[..], &strides[..]);
        if strides.iter().any(|&s| s < 0) {
            bail!(
                InvalidArgument,
                "as_strided",
                "as_strided: Negative strides are not supported at the moment, got strides: {:?}",
                strides
            );
        }
        if let Some(&s) = sizes.iter().find(|&&s| s < 0) {
            bail!(
                InvalidArgument,
                "as_strided",
                "Trying to create tensor with negative dimension {}: {:?}",
                s,
                sizes
            );
        }
        if let Some(o) = storage_offset.filter(|&o| o < 0) {
            bail!(
                InvalidArgument,
                "as_strided",
                "Tensor: invalid storage offset {}",
                o
            );
        }
        let sizes: Vec<usize> = sizes.iter().map(|&s| s as usize).collect();
        let strides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
        let (sizes, strides) = (&sizes[..], &strides[..]);
        let storage_offset = storage_offset.map(|o| o as usize);
        let d = self.data();
        if sizes.len() != strides.len() {
            bail!(
                InvalidArgument,
                "as_strided",
                "mismatch in length of strides and shape ({} vs {})",
                strides.len(),
                sizes.len()
            );
        }
        crate::layout::check_numel_i64(sizes, "as_strided")?;
        let offset = storage_offset.unwrap_or(d.layout.offset());
        let span = Layout::checked_storage_span(sizes, strides, offset)
            .ok_or_else(|| crate::err!(InvalidArgument, "as_strided", "geometry overflows"))?;
        let avail = d.storage.nbytes() / self.dtype().size();
        if span > avail {
            bail!(
                InvalidArgument,
                "as_strided",
                "setStorage: sizes {:?}, strides {:?}, storage offset {}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                sizes,
                strides,
                offset,
                self.dtype().size(),
                span.saturating_mul(self.dtype().size()),
                d.storage.nbytes()
            );
        }
        // storage semantics: the backward scatters by storage position (dividing among aliases
        // of an overlapping input, like PyTorch's as_strided_backward)
        let (base, view) = (
            self.layout(),
            Layout::new(sizes.to_vec(), strides.to_vec(), offset),
        );
        view_with(
            self,
            view.clone(),
            AsStridedBackward {
                name: "AsStridedBackward0",
                base,
                view,
            },
        )
    }

    /// Broadcasts to `shape` with stride 0 on new or size-1 dims (`-1` keeps a size).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 3, 1)?;
    /// let e = x.expand(&[2, 3])?;
    /// assert_eq!(e.strides(), vec![0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn expand(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::ints(shape, "expand")?;
        let shape = &shape[..];
        let l = self.layout();
        let nd = shape.len();
        if nd < l.dim() {
            bail!(
                ShapeMismatch,
                "expand",
                "the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                nd,
                l.dim()
            );
        }
        let mut sizes = vec![0; nd];
        let mut strides = vec![0; nd];
        for i in (0..nd).rev() {
            let off = nd - i;
            let target = shape[i];
            if off <= l.dim() {
                let j = l.dim() - off;
                let (s, st) = (l.sizes()[j], l.strides()[j]);
                if target == -1 || target as usize == s {
                    sizes[i] = s;
                    strides[i] = st;
                } else if s == 1 && target >= 0 {
                    sizes[i] = target as usize;
                    strides[i] = 0;
                } else {
                    bail!(
                        ShapeMismatch,
                        "expand",
                        "The expanded size of the tensor ({}) must match the existing size ({}) at non-singleton dimension {}.  Target sizes: {:?}.  Tensor sizes: {:?}",
                        target,
                        s,
                        i,
                        shape,
                        l.sizes()
                    );
                }
            } else {
                if target < 0 {
                    bail!(
                        InvalidArgument,
                        "expand",
                        "The expanded size of the tensor ({}) isn't allowed in a leading, non-existing dimension {}",
                        target,
                        i
                    );
                }
                sizes[i] = target as usize;
                strides[i] = 0;
            }
        }
        crate::layout::check_numel_i64(&sizes, "expand")?;
        let layout = Layout::new(sizes, strides, l.offset());
        view_with(
            self,
            layout,
            ExpandBackward {
                shape: l.sizes().to_vec(),
            },
        )
    }

    /// `expand` to `other`'s shape.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[1, 3], DType::F32)?;
    /// assert_eq!(x.expand_as(&Tensor::zeros(&[4, 3], DType::F32)?)?.shape(), vec![4, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn expand_as(&self, other: &Tensor) -> Result<Tensor> {
        let s: Vec<i64> = other.shape().iter().map(|&v| v as i64).collect();
        self.expand(&s)
    }

    /// `expand` to a `usize` shape (NumPy's `broadcast_to`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::ones(&[3], DType::F32)?.broadcast_to(&[2, 3])?.shape(), vec![2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn broadcast_to(&self, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "broadcast_to")?;
        let shape = &shape[..];
        let s: Vec<i64> = shape.iter().map(|&v| v as i64).collect();
        self.expand(&s)
    }

    /// A view of the whole tensor (PyTorch `alias`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// assert!(x.alias()?.is_view());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn alias(&self) -> Result<Tensor> {
        view_with(
            self,
            self.layout(),
            crate::ops::movement::copy::PassBackward {
                name: "AliasBackward0",
            },
        )
    }

    /// Splits dim `dim` into `sizes` (one `-1` allowed).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?;
    /// assert_eq!(x.unflatten(0, &[2, -1])?.shape(), vec![2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unflatten(&self, dim: impl crate::Dim, sizes: impl crate::IntoShape) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "unflatten")?;
        let sizes = crate::tensor::dims::ints(sizes, "unflatten")?;
        let sizes = &sizes[..];
        let shape = self.shape();
        let d = crate::layout::wrap_dim(dim, shape.len(), "unflatten")?;
        if sizes.is_empty() {
            bail!(
                InvalidArgument,
                "unflatten",
                "unflatten: sizes must be non-empty"
            );
        }
        let inner = infer_size(sizes, shape.get(d).copied().unwrap_or(1), "unflatten").map_err(|e| {
            if e.message().starts_with("only one dimension can be inferred")
                || e.message().starts_with("invalid shape dimension")
            {
                // two -1s or a negative size: PyTorch's "unflatten got an unexpected error"
                return e;
            }
            crate::err!(
                ShapeMismatch,
                "unflatten",
                "unflatten: Provided sizes {:?} don't multiply up to the size of dim {} ({}) in the input tensor ({})",
                sizes,
                dim,
                shape.get(d).copied().unwrap_or(1),
                e.message()
            )
        })?;
        // a 0-dim tensor accepts dim 0 but has no dim to split
        let (d0, d1) = (d.min(shape.len()), (d + 1).min(shape.len()));
        let mut new: Vec<i64> = shape[..d0].iter().map(|&s| s as i64).collect();
        new.extend(inner.iter().map(|&s| s as i64));
        new.extend(shape[d1..].iter().map(|&s| s as i64));
        self.view(&new)
    }
}
