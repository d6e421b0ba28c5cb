//! Views that reorder or insert/remove dims: permute, transpose, t, movedim, squeeze,
//! unsqueeze, flatten, and the in-place view ops `t_`, `transpose_`, `squeeze_`, `unsqueeze_`.

use super::view_with;
use crate::autograd::check_inplace;
use crate::layout::{Layout, wrap_dim, wrap_dims};
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor, bail};

struct PermuteBackward {
    name: &'static str,
    inverse: Vec<i64>,
}
backward!(PermuteBackward, self.name, |self, _, g: Tensor| {
    input_grad(g.permute(&self.inverse)?)
});

/// `squeeze`'s rule is PyTorch's `unsqueeze_to`: the removed size-1 dims come back through
/// `unsqueeze`, whose stride rule (`size[d] * stride[d]` of the next dim, 1 at the end) gives
/// them the strides PyTorch's gradient has (a `reshape` would compute fresh ones).
struct SqueezeBackward {
    name: &'static str,
    /// The input's sizes.
    sizes: Vec<usize>,
    /// The dims asked for (`None`: every dim); only those of size 1 were removed.
    dims: Option<Vec<usize>>,
}
backward!(SqueezeBackward, self.name, |self, _, g: Tensor| {
    let mut g = g;
    for (d, &s) in self.sizes.iter().enumerate() {
        if s == 1 && self.dims.as_ref().is_none_or(|ds| ds.contains(&d)) {
            g = g.unsqueeze(d as i64)?;
        }
    }
    input_grad(g)
});

/// `unsqueeze`'s rule, PyTorch's `grad.squeeze(dim)`: the inserted dim (and its stride) is
/// dropped, the other strides are the gradient's own.
struct UnsqueezeBackward {
    name: &'static str,
    dim: usize,
}
backward!(UnsqueezeBackward, self.name, |self, _, g: Tensor| {
    input_grad(g.squeeze_dims(&[self.dim as i64])?)
});

/// The backward rule of an in-place relayout (`t_`, `transpose_`, `squeeze_`, `unsqueeze_`).
enum Relayout {
    /// The inverse permutation.
    Permute(Vec<i64>),
    /// The dims asked to squeeze (`None`: all).
    Squeeze(Option<Vec<usize>>),
    /// The inserted dim.
    Unsqueeze(usize),
}

fn permuted(l: &Layout, perm: &[usize]) -> Layout {
    Layout::new(
        perm.iter()
            .map(|&p| l.sizes()[p])
            .collect::<crate::layout::Dims>(),
        perm.iter()
            .map(|&p| l.strides()[p])
            .collect::<crate::layout::Dims>(),
        l.offset(),
    )
}

fn inverse(perm: &[usize]) -> Vec<i64> {
    let mut inv = vec![0i64; perm.len()];
    for (i, &p) in perm.iter().enumerate() {
        inv[p] = i as i64;
    }
    inv
}

fn check_perm(dims: &[i64], nd: usize) -> Result<Vec<usize>> {
    if dims.len() != nd {
        bail!(
            InvalidArgument,
            "permute",
            "permute(sparse_coo): number of dimensions in the tensor input does not match the length of the desired ordering of dimensions i.e. input.dim() = {} is not equal to len(dims) = {}",
            nd,
            dims.len()
        );
    }
    wrap_dims(dims, nd, "permute").map_err(|e| {
        if e.kind() == crate::ErrorKind::InvalidArgument {
            crate::err!(
                InvalidArgument,
                "permute",
                "permute(): duplicate dims are not allowed."
            )
        } else {
            e
        }
    })
}

/// The geometry of `t` with dims squeezed (`None`: every size-1 dim).
fn squeezed(l: &Layout, dims: Option<&[usize]>) -> Layout {
    let keep: Vec<usize> = (0..l.dim())
        .filter(|&d| !(l.sizes()[d] == 1 && dims.is_none_or(|ds| ds.contains(&d))))
        .collect();
    Layout::new(
        keep.iter()
            .map(|&d| l.sizes()[d])
            .collect::<crate::layout::Dims>(),
        keep.iter()
            .map(|&d| l.strides()[d])
            .collect::<crate::layout::Dims>(),
        l.offset(),
    )
}

fn unsqueezed(l: &Layout, d: usize) -> Layout {
    let mut sizes = l.sizes().to_vec();
    let mut strides = l.strides().to_vec();
    let st = if d < l.dim() {
        // saturating: a size-1 or empty dim may carry any stride (as_strided), and the new dim
        // has size 1, so its stride never addresses memory
        sizes[d].saturating_mul(strides[d])
    } else {
        1
    };
    sizes.insert(d, 1);
    strides.insert(d, st);
    Layout::new(sizes, strides, l.offset())
}

impl Tensor {
    /// Reorders dims (`dims` is a permutation, negatives allowed).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3, 4], DType::F32)?;
    /// let p = x.permute(&[2, 0, 1])?;
    /// assert_eq!((p.shape(), p.strides()), (vec![4, 2, 3], vec![1, 12, 4]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn permute(&self, dims: impl crate::IntoShape) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "permute")?;
        let dims = &dims[..];
        let l = self.layout();
        let perm = check_perm(dims, l.dim())?;
        view_with(
            self,
            permuted(&l, &perm),
            PermuteBackward {
                name: "PermuteBackward0",
                inverse: inverse(&perm),
            },
        )
    }

    /// Swaps two dims.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// assert_eq!(x.transpose(0, 1)?.strides(), vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn transpose(&self, dim0: impl crate::Dim, dim1: impl crate::Dim) -> Result<Tensor> {
        let dim0 = crate::tensor::dims::dim(dim0, "transpose")?;
        let dim1 = crate::tensor::dims::dim(dim1, "transpose")?;
        if self.is_sparse() {
            return crate::sparse::transpose(self, dim0, dim1);
        }
        let l = self.layout();
        let perm = transpose_perm(l.dim(), dim0, dim1, "transpose")?;
        view_with(
            self,
            permuted(&l, &perm),
            PermuteBackward {
                name: "TransposeBackward0",
                inverse: inverse(&perm),
            },
        )
    }

    /// Transpose of a tensor with at most 2 dims.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.t()?.shape(), vec![3, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn t(&self) -> Result<Tensor> {
        if self.is_sparse() && self.dim() == 2 {
            return crate::sparse::transpose(self, 0, 1);
        }
        let l = self.layout();
        let perm = t_perm(l.dim())?;
        view_with(
            self,
            permuted(&l, &perm),
            PermuteBackward {
                name: "TBackward0",
                inverse: inverse(&perm),
            },
        )
    }

    /// Moves dims `source` to positions `destination`, keeping the others in order.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3, 4], DType::F32)?;
    /// assert_eq!(x.movedim(&[0], &[2])?.shape(), vec![3, 4, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn movedim(
        &self,
        source: impl crate::IntoShape,
        destination: impl crate::IntoShape,
    ) -> Result<Tensor> {
        let source = crate::tensor::dims::ints(source, "movedim")?;
        let source = &source[..];
        let destination = crate::tensor::dims::ints(destination, "movedim")?;
        let destination = &destination[..];
        let nd = self.dim();
        if source.len() != destination.len() {
            bail!(
                InvalidArgument,
                "movedim",
                "movedim: Invalid source or destination dims: source ({:?} dims) should contain the same number of dims as destination ({:?} dims)",
                source,
                destination
            );
        }
        let src = wrap_dims(source, nd, "movedim")?;
        let dst = wrap_dims(destination, nd, "movedim")?;
        if nd == 0 {
            // a 0-dim tensor accepts dim 0 / -1 and has nothing to move (libFuzzer views finding)
            return self.permute(());
        }
        let mut perm = vec![usize::MAX; nd];
        for (s, d) in src.iter().zip(&dst) {
            perm[*d] = *s;
        }
        let mut rest = (0..nd).filter(|i| !src.contains(i));
        for p in perm.iter_mut() {
            if *p == usize::MAX {
                *p = rest.next().expect("internal: movedim permutation");
            }
        }
        let l = self.layout();
        view_with(
            self,
            permuted(&l, &perm),
            PermuteBackward {
                name: "PermuteBackward0",
                inverse: inverse(&perm),
            },
        )
    }

    /// Removes every size-1 dim.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[1, 3, 1], DType::F32)?.squeeze()?.shape(), vec![3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn squeeze(&self) -> Result<Tensor> {
        let l = self.layout();
        view_with(
            self,
            squeezed(&l, None),
            SqueezeBackward {
                name: "SqueezeBackward0",
                sizes: l.sizes().to_vec(),
                dims: None,
            },
        )
    }

    /// Removes `dim` if its size is 1 (otherwise returns an unchanged view).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[1, 3], DType::F32)?.squeeze_dim(0)?.shape(), vec![3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn squeeze_dim(&self, dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "squeeze_dim")?;
        self.squeeze_dims(&[dim])
    }

    /// Removes the listed dims that have size 1.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[1, 3, 1], DType::F32)?.squeeze_dims(&[0, 1])?.shape(), vec![3, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn squeeze_dims(&self, dims: impl crate::IntoShape) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "squeeze_dims")?;
        let dims = &dims[..];
        let l = self.layout();
        let ds = wrap_dims(dims, l.dim(), "squeeze")?;
        view_with(
            self,
            squeezed(&l, Some(&ds)),
            SqueezeBackward {
                name: "SqueezeBackward1",
                sizes: l.sizes().to_vec(),
                dims: Some(ds.clone()),
            },
        )
    }

    /// Inserts a size-1 dim at `dim` (range `[-ndim-1, ndim]`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// let u = x.unsqueeze(1)?;
    /// assert_eq!((u.shape(), u.strides()), (vec![2, 1, 3], vec![3, 3, 1]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unsqueeze(&self, dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "unsqueeze")?;
        let l = self.layout();
        let d = wrap_dim(dim, l.dim() + 1, "unsqueeze")?;
        view_with(
            self,
            unsqueezed(&l, d),
            UnsqueezeBackward {
                name: "UnsqueezeBackward0",
                dim: d,
            },
        )
    }

    /// Merges dims `start_dim..=end_dim` (a view when possible, like `reshape`). A 0-dim input
    /// becomes 1-D; a tensor already of the requested form is returned as is.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3, 4], DType::F32)?.flatten(1, -1)?.shape(), vec![2, 12]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn flatten(&self, start_dim: impl crate::Dim, end_dim: impl crate::Dim) -> Result<Tensor> {
        let start_dim = crate::tensor::dims::dim(start_dim, "flatten")?;
        let end_dim = crate::tensor::dims::dim(end_dim, "flatten")?;
        let shape = self.shape();
        if shape.is_empty() {
            return self.reshape(&[1]);
        }
        let s = wrap_dim(start_dim, shape.len(), "flatten")?;
        let e = wrap_dim(end_dim, shape.len(), "flatten")?;
        if s > e {
            bail!(
                InvalidArgument,
                "flatten",
                "flatten() has invalid args: start_dim cannot come after end_dim"
            );
        }
        if s == e {
            return Ok(self.clone());
        }
        // zero-aware and checked: an empty tensor may hold huge sizes whose product does not
        // fit in int64 (libFuzzer views finding); PyTorch refuses that size too
        let merged = if shape[s..=e].contains(&0) {
            0
        } else {
            crate::layout::check_numel_i64(&shape[s..=e], "flatten")?
        };
        let mut new: Vec<i64> = shape[..s].iter().map(|&v| v as i64).collect();
        new.push(merged as i64);
        new.extend(shape[e + 1..].iter().map(|&v| v as i64));
        self.reshape(&new)
    }

    /// In-place `t()`: changes this tensor's geometry; bumps the version.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// x.t_()?;
    /// assert_eq!((x.shape(), x.version()), (vec![3, 2], 1));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn t_(&self) -> Result<Tensor> {
        let perm = t_perm(self.dim())?;
        self.relayout_(
            |l| Ok(permuted(l, &perm)),
            "TBackward0",
            Relayout::Permute(inverse(&perm)),
        )
    }

    /// In-place `transpose`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// x.transpose_(0, 1)?;
    /// assert_eq!(x.strides(), vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn transpose_(&self, dim0: impl crate::Dim, dim1: impl crate::Dim) -> Result<Tensor> {
        let dim0 = crate::tensor::dims::dim(dim0, "transpose_")?;
        let dim1 = crate::tensor::dims::dim(dim1, "transpose_")?;
        let perm = transpose_perm(self.dim(), dim0, dim1, "transpose_")?;
        self.relayout_(
            |l| Ok(permuted(l, &perm)),
            "TransposeBackward0",
            Relayout::Permute(inverse(&perm)),
        )
    }

    /// In-place `unsqueeze`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[3], DType::F32)?;
    /// x.unsqueeze_(0)?;
    /// assert_eq!(x.shape(), vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unsqueeze_(&self, dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "unsqueeze_")?;
        let d = wrap_dim(dim, self.dim() + 1, "unsqueeze_")?;
        self.relayout_(
            |l| Ok(unsqueezed(l, d)),
            "UnsqueezeBackward1",
            Relayout::Unsqueeze(d),
        )
    }

    /// In-place `squeeze` (all size-1 dims with `None`, or only `dim`: any
    /// [`MaybeDim`](crate::MaybeDim)).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[1, 3], DType::F32)?;
    /// x.squeeze_(None)?;
    /// assert_eq!(x.shape(), vec![3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn squeeze_(&self, dim: impl crate::MaybeDim) -> Result<Tensor> {
        let ds = match crate::tensor::dims::maybe_dim(dim, "squeeze_")? {
            Some(d) => Some(vec![wrap_dim(d, self.dim(), "squeeze_")?]),
            None => None,
        };
        self.relayout_(
            |l| Ok(squeezed(l, ds.as_deref())),
            "SqueezeBackward0",
            Relayout::Squeeze(ds.clone()),
        )
    }

    fn relayout_(
        &self,
        f: impl FnOnce(&Layout) -> Result<Layout>,
        name: &'static str,
        rule: Relayout,
    ) -> Result<Tensor> {
        let rec = check_inplace(self, &[])?
            .map(|r| r.for_view_op(self))
            .transpose()?;
        let old = self.layout();
        let new = f(&old)?;
        self.0.data.write().layout = new;
        self.0.version.bump();
        if let Some(rec) = rec {
            match rule {
                Relayout::Permute(inverse) => {
                    rec.finish_view_op(self, PermuteBackward { name, inverse })?
                }
                Relayout::Squeeze(dims) => rec.finish_view_op(
                    self,
                    SqueezeBackward {
                        name,
                        sizes: old.sizes().to_vec(),
                        dims,
                    },
                )?,
                Relayout::Unsqueeze(dim) => {
                    rec.finish_view_op(self, UnsqueezeBackward { name, dim })?
                }
            }
        }
        Ok(self.clone())
    }
}

fn t_perm(nd: usize) -> Result<Vec<usize>> {
    match nd {
        0 => Ok(vec![]),
        1 => Ok(vec![0]),
        2 => Ok(vec![1, 0]),
        n => bail!(
            InvalidArgument,
            "t",
            "t() expects a tensor with <= 2 dimensions, but self is {}D",
            n
        ),
    }
}

fn transpose_perm(nd: usize, d0: i64, d1: i64, op: &'static str) -> Result<Vec<usize>> {
    let a = wrap_dim(d0, nd, op)?;
    let b = wrap_dim(d1, nd, op)?;
    let mut perm: Vec<usize> = (0..nd).collect();
    if nd > 0 {
        perm.swap(a, b);
    }
    Ok(perm)
}
