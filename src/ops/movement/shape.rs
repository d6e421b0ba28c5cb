//! Shape-changing data movement that copies: `cat`, `stack`, `flip`, `roll`, `repeat`,
//! `tril`/`triu` and `one_hot`. Forward passes are block copies through the backend (`cat`,
//! `roll`, `repeat` as strided copies of regions, `flip` as a reversed copy, `tril`/`triu` as a
//! copy then a triangle zeroing); backward passes are the differentiable formulas of PyTorch's
//! `derivatives.yaml` (flip of flip, roll back, sum over repeats, tril of tril).

use crate::ops::grad::{GradIf, backward};

use crate::autograd::record;
use crate::dtype::{Operand, result_type};
use crate::layout::Layout;
use crate::layout::{check_numel, wrap_dim, wrap_dims};
use crate::ops::grad::input_grad;
use crate::ops::movement::gather::{cstrides, output, read_index};
use crate::tensor::TensorData;
use crate::{DType, Result, Tensor, bail};

/// `legacy[i]`: input `i` was a skipped 1-D empty tensor (its size in `sizes` is 0).
struct CatBackward {
    dim: usize,
    sizes: Vec<usize>,
    legacy: Vec<bool>,
    name: &'static str,
}

backward!(CatBackward, self.name, |self, ctx, g: Tensor| {
    let mut start = 0;
    let mut out = crate::autograd::Grads::with_capacity(self.sizes.len());
    for (i, &s) in self.sizes.iter().enumerate() {
        if self.legacy[i] {
            out.push(ctx.grad_if(i, || Tensor::zeros(&[0], g.dtype()))?);
            continue;
        }
        // a view of `g`, as PyTorch's `grad.narrow` (`cat`) / `grad.select` (`stack`)
        out.push(ctx.grad_if(i, || g.narrow(self.dim as i64, start as i64, s))?);
        start += s;
    }
    Ok(out)
});

/// `x`'s data viewed with `layout` (a region of its storage, no autograd).
fn region(x: &TensorData, layout: Layout) -> TensorData {
    TensorData {
        storage: x.storage.clone(),
        layout,
    }
}

/// `l` narrowed to `start..start + len` along `dim`.
fn narrowed(l: &Layout, dim: usize, start: usize, len: usize) -> Layout {
    let mut sizes = l.sizes().to_vec();
    sizes[dim] = len;
    let off = if len == 0 {
        l.offset()
    } else {
        l.offset() + start * l.strides()[dim]
    };
    Layout::new(sizes, l.strides().to_vec(), off)
}

struct FlipBackward {
    dims: Vec<i64>,
}

backward!(FlipBackward, "FlipBackward0", |self, _, g: Tensor| {
    input_grad(g.flip(&self.dims)?)
});

struct RollBackward {
    /// The shifts that undo the forward roll (normalised into `0..n`).
    shifts: Vec<i64>,
    dims: Vec<i64>,
}

backward!(RollBackward, "RollBackward0", |self, _, g: Tensor| {
    input_grad(g.roll(&self.shifts, &self.dims)?)
});

struct RepeatBackward {
    /// The input shape padded with leading 1s to the rank of the repeats.
    padded: Vec<usize>,
    repeats: Vec<usize>,
    in_shape: Vec<usize>,
}

backward!(RepeatBackward, "RepeatBackward0", |self, _, g: Tensor| {
    // PyTorch's repeat_backward: split every dim into (repeat, size) and sum the repeats
    let mut split = Vec::with_capacity(2 * self.padded.len());
    for (&r, &s) in self.repeats.iter().zip(&self.padded) {
        split.push(r as i64);
        split.push(s as i64);
    }
    let rdims: Vec<i64> = (0..self.padded.len()).map(|i| 2 * i as i64).collect();
    let gs = g.reshape(&split)?.sum_dims(&rdims, false)?;
    let sh: Vec<i64> = self.in_shape.iter().map(|&v| v as i64).collect();
    input_grad(gs.reshape(&sh)?)
});

struct TriBackward {
    diagonal: i64,
    lower: bool,
}

backward!(
    TriBackward,
    if self.lower {
        "TrilBackward0"
    } else {
        "TriuBackward0"
    },
    |self, _, g: Tensor| {
        input_grad(if self.lower {
            g.tril(self.diagonal)?
        } else {
            g.triu(self.diagonal)?
        })
    }
);

/// `x` rolled by `shifts` along the distinct dims `ds`: one block copy per combination of the
/// two pieces of each rolled dim (`out[s..n] = x[0..n-s]`, `out[0..s] = x[n-s..n]`).
fn roll_impl(x: &Tensor, shifts: &[i64], ds: &[usize]) -> Result<Tensor> {
    let shape = x.shape();
    let dt = x.dtype();
    let out = output(&shape, dt, "roll")?;
    let (od, xd) = (out.data(), x.data());
    // shifts normalised into 0..n (0 for an empty dim)
    let norm: Vec<usize> = ds
        .iter()
        .zip(shifts)
        .map(|(&d, &s)| s.rem_euclid(shape[d].max(1) as i64) as usize)
        .collect();
    if od.layout.numel() > 0 {
        for mask in 0..(1usize << ds.len()) {
            let (mut dl, mut sl) = (od.layout.clone(), xd.layout.clone());
            let mut empty = false;
            for (j, &d) in ds.iter().enumerate() {
                let (n, s) = (shape[d], norm[j]);
                let (to, from, len) = if mask >> j & 1 == 0 {
                    (s, 0, n - s)
                } else {
                    (0, n - s, s)
                };
                if len == 0 {
                    empty = true;
                    break;
                }
                dl = narrowed(&dl, d, to, len);
                sl = narrowed(&sl, d, from, len);
            }
            if !empty {
                crate::backend::copy_raw(&region(&od, dl), &region(&xd, sl), dt, dt);
            }
        }
    }
    let back = ds
        .iter()
        .zip(&norm)
        .map(|(&d, &s)| ((shape[d] - s) % shape[d].max(1)) as i64)
        .collect();
    let dims = ds.iter().map(|&d| d as i64).collect();
    record(&[&out], &[x], Vec::new, RollBackward { shifts: back, dims })?;
    Ok(out)
}

fn tri(x: &Tensor, diagonal: i64, lower: bool) -> Result<Tensor> {
    let op = if lower { "tril" } else { "triu" };
    let shape = x.shape();
    if shape.len() < 2 {
        bail!(
            InvalidArgument,
            op,
            "{}: input tensor must have at least 2 dimensions",
            op
        );
    }
    let dt = x.dtype();
    let out = output(&shape, dt, op)?;
    let od = out.data();
    crate::backend::copy_raw(&od, &x.data(), dt, dt);
    if od.layout.numel() > 0 {
        crate::backend::movement::tri_zero(&od, dt, diagonal, lower);
    }
    record(&[&out], &[x], Vec::new, TriBackward { diagonal, lower })?;
    Ok(out)
}

impl Tensor {
    /// Concatenates along `dim`; dtypes promote like PyTorch (`result_type` of the inputs) and
    /// legacy empty 1-D tensors of shape `[0]` are skipped.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[1, 2])?;
    /// let b = Tensor::from_vec(vec![0.5f32, 1.5], &[1, 2])?;
    /// let c = Tensor::cat(&[&a, &b], 0)?;
    /// assert_eq!((c.shape(), c.to_vec::<f32>()?), (vec![2, 2], vec![1.0, 2.0, 0.5, 1.5]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn cat(tensors: &[&Tensor], dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "cat")?;
        cat_impl(tensors, dim, "cat", "CatBackward0")
    }

    /// Stacks equally shaped tensors along a new dimension `dim`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// let s = Tensor::stack(&[&a, &a], 1)?;
    /// assert_eq!((s.shape(), s.to_vec::<f32>()?), (vec![2, 2], vec![1.0, 1.0, 2.0, 2.0]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn stack(tensors: &[&Tensor], dim: impl crate::Dim) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "stack")?;
        if tensors.is_empty() {
            bail!(
                InvalidArgument,
                "stack",
                "stack expects a non-empty TensorList"
            );
        }
        let s0 = tensors[0].shape();
        for (i, t) in tensors.iter().enumerate() {
            if t.shape() != s0 {
                bail!(
                    ShapeMismatch,
                    "stack",
                    "stack expects each tensor to be equal size, but got {:?} at entry 0 and {:?} at entry {}",
                    s0,
                    t.shape(),
                    i
                );
            }
        }
        let d = wrap_dim(dim, s0.len() + 1, "stack")?;
        let us: Vec<Tensor> = tensors
            .iter()
            .map(|t| t.unsqueeze(d as i64))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = us.iter().collect();
        cat_impl(&refs, d as i64, "stack", "StackBackward0")
    }

    /// Reverses the order of elements along `dims`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 4, 1)?.view(&[2, 2])?;
    /// assert_eq!(x.flip(&[1])?.to_vec::<i64>()?, vec![1, 0, 3, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn flip(&self, dims: impl crate::IntoShape) -> Result<Tensor> {
        let dims = crate::tensor::dims::ints(dims, "flip")?;
        let dims = &dims[..];
        let shape = self.shape();
        let ds = wrap_dims(dims, shape.len(), "flip")?;
        // a 0-dim tensor accepts dim 0 / -1 but has nothing to flip
        let ds: Vec<usize> = ds.into_iter().filter(|&d| d < shape.len()).collect();
        let dt = self.dtype();
        // PyTorch's `empty_like(self, preserve_format)`: the input's memory order
        crate::layout::check_numel(&shape, "flip")?;
        let out = Tensor::empty_strided(&shape, &self.layout().preserved_strides(), dt)?;
        if ds.is_empty() {
            crate::backend::copy_raw(&out.data(), &self.data(), dt, dt);
        } else {
            crate::backend::movement::copy_flipped(&out.data(), &self.data(), &ds, dt);
        }
        let dims = ds.iter().map(|&d| d as i64).collect();
        record(&[&out], &[self], Vec::new, FlipBackward { dims })?;
        Ok(out)
    }

    /// Rolls elements along `dims` by `shifts` (with no dims: over the flattened tensor).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(1, 7, 1)?.view(&[2, 3])?;
    /// assert_eq!(x.roll(&[1], ())?.to_vec::<i64>()?, vec![6, 1, 2, 3, 4, 5]);
    /// assert_eq!(x.roll(&[-4], &[1])?.to_vec::<i64>()?, vec![2, 3, 1, 5, 6, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn roll(
        &self,
        shifts: impl crate::IntoShape,
        dims: impl crate::IntoShape,
    ) -> Result<Tensor> {
        let shifts = crate::tensor::dims::ints(shifts, "roll")?;
        let shifts = &shifts[..];
        let dims = crate::tensor::dims::ints(dims, "roll")?;
        let dims = &dims[..];
        let shape = self.shape();
        if dims.is_empty() {
            if shifts.len() != 1 {
                bail!(
                    InvalidArgument,
                    "roll",
                    "shifts and dimensions must align. shifts: {}, dims: 0",
                    shifts.len()
                );
            }
            let flat = self.reshape(&[-1])?;
            let r = roll_impl(&flat, &[shifts[0]], &[0])?;
            let s: Vec<i64> = shape.iter().map(|&v| v as i64).collect();
            return r.unsafe_view(&s);
        }
        if shifts.len() != dims.len() {
            bail!(
                InvalidArgument,
                "roll",
                "shifts and dimensions must align. shifts: {}, dims:{}",
                shifts.len(),
                dims.len()
            );
        }
        let ds = wrap_dims(dims, shape.len(), "roll")?;
        if shape.is_empty() {
            // a 0-dim tensor accepts dim 0 / -1 but has nothing to roll
            return roll_impl(self, &[], &[]);
        }
        roll_impl(self, shifts, &ds)
    }

    /// Tiles the tensor `sizes[i]` times along each dim (`sizes` may add leading dims).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// let r = x.repeat(&[2, 2])?;
    /// assert_eq!((r.shape(), r.to_vec::<i64>()?), (vec![2, 4], vec![1, 2, 1, 2, 1, 2, 1, 2]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn repeat(&self, sizes: impl crate::IntoShape) -> Result<Tensor> {
        let sizes = crate::tensor::dims::sizes(sizes, "repeat")?;
        let sizes = &sizes[..];
        let shape = self.shape();
        if sizes.len() < shape.len() {
            bail!(
                ShapeMismatch,
                "repeat",
                "Number of dimensions of repeat dims can not be smaller than number of dimensions of tensor"
            );
        }
        let lead = sizes.len() - shape.len();
        let mut padded = vec![1usize; lead];
        padded.extend(&shape);
        let osh: Vec<usize> = padded
            .iter()
            .zip(sizes)
            .map(|(a, b)| a.checked_mul(*b).unwrap_or(usize::MAX))
            .collect();
        check_numel(&osh, "repeat")?;
        let dt = self.dtype();
        let out = output(&osh, dt, "take")?;
        let od = out.data();
        if od.layout.numel() > 0 {
            // the output viewed as [r0, s0, r1, s1, ...], the input broadcast over every r_i
            let (ost, xd) = (cstrides(&osh), self.data());
            let lead_st = vec![0usize; lead];
            let xst: Vec<usize> = lead_st.iter().chain(xd.layout.strides()).copied().collect();
            let (mut sz, mut dst, mut sst) = (vec![], vec![], vec![]);
            for i in 0..osh.len() {
                sz.extend([sizes[i], padded[i]]);
                dst.extend([padded[i] * ost[i], ost[i]]);
                sst.extend([0, xst[i]]);
            }
            let d = region(&od, Layout::new(sz.clone(), dst, 0));
            let s = region(&xd, Layout::new(sz, sst, xd.layout.offset()));
            crate::backend::copy_raw(&d, &s, dt, dt);
        }
        record(
            &[&out],
            &[self],
            Vec::new,
            RepeatBackward {
                padded,
                repeats: sizes.to_vec(),
                in_shape: shape,
            },
        )?;
        Ok(out)
    }

    /// Lower triangle of the last two dims (entries with `col - row <= diagonal`), rest zero.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 2], DType::F32)?;
    /// assert_eq!(x.tril(0)?.to_vec::<f32>()?, vec![1.0, 0.0, 1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn tril(&self, diagonal: impl crate::Dim) -> Result<Tensor> {
        tri(self, crate::tensor::dims::dim(diagonal, "tril")?, true)
    }

    /// Upper triangle of the last two dims (entries with `col - row >= diagonal`), rest zero.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 2], DType::F32)?;
    /// assert_eq!(x.triu(1)?.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn triu(&self, diagonal: impl crate::Dim) -> Result<Tensor> {
        tri(self, crate::tensor::dims::dim(diagonal, "triu")?, false)
    }

    /// One-hot encoding of an i64 tensor: a new last dim of `num_classes` (-1: max + 1), i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let y = Tensor::from_vec(vec![0i64, 2], &[2])?;
    /// assert_eq!(y.one_hot(-1)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn one_hot(&self, num_classes: impl crate::Dim) -> Result<Tensor> {
        let op = "one_hot";
        let num_classes = crate::tensor::dims::dim(num_classes, op)?;
        if self.dtype() != DType::I64 {
            bail!(
                DTypeMismatch,
                op,
                "one_hot is only applicable to index tensor of type LongTensor."
            );
        }
        let v = read_index(self)?;
        if v.iter().any(|&x| x < 0) {
            bail!(IndexOutOfRange, op, "Class values must be non-negative.");
        }
        let c = if num_classes == -1 {
            if v.is_empty() {
                bail!(
                    InvalidArgument,
                    op,
                    "Can not infer total number of classes from empty tensor."
                );
            }
            v.iter().copied().max().unwrap_or(0) + 1
        } else {
            num_classes
        };
        if c < 0 || v.iter().any(|&x| x >= c) {
            bail!(
                IndexOutOfRange,
                op,
                "Class values must be smaller than num_classes."
            );
        }
        let c = c as usize;
        let n = check_numel(&[v.len(), c], op)?;
        let mut out = crate::storage::try_vec(n, op)?;
        out.resize(n, 0i64);
        for (i, &x) in v.iter().enumerate() {
            out[i * c + x as usize] = 1;
        }
        let mut sh = self.shape();
        sh.push(c);
        let t = Tensor::from_vec(out, &sh)?;
        // PyTorch builds the result with two in-place writes (zero fill, then scatter_), which
        // its version counter shows; keep the same observable state. An empty input returns
        // early there (`at::empty`): version 0.
        if !v.is_empty() {
            t.0.version.bump();
            t.0.version.bump();
        }
        Ok(t)
    }
}

fn cat_impl(tensors: &[&Tensor], dim: i64, op: &'static str, name: &'static str) -> Result<Tensor> {
    for t in tensors {
        t.check_strided(op)?;
    }
    if tensors.is_empty() {
        bail!(
            InvalidArgument,
            op,
            "cat(): expected a non-empty list of Tensors"
        );
    }
    let ops: Vec<Operand> = tensors
        .iter()
        .map(|t| Operand::Tensor((*t).clone()))
        .collect();
    let refs: Vec<&Operand> = ops.iter().collect();
    let dt = result_type(&refs);
    // legacy: 1-D empty tensors are skipped
    let live: Vec<(usize, &Tensor)> = tensors
        .iter()
        .enumerate()
        .filter(|(_, t)| !(t.dim() == 1 && t.numel() == 0))
        .map(|(i, t)| (i, *t))
        .collect();
    let Some(&(i0, first)) = live.first() else {
        return Tensor::zeros(&[0], dt);
    };
    let s0 = first.shape();
    if s0.is_empty() {
        bail!(
            InvalidArgument,
            op,
            "zero-dimensional tensor (at position {}) cannot be concatenated",
            i0
        );
    }
    let d = wrap_dim(dim, s0.len(), op)?;
    let mut total = 0;
    for &(i, t) in &live {
        let s = t.shape();
        if s.len() != s0.len() {
            bail!(
                ShapeMismatch,
                op,
                "Tensors must have same number of dimensions: got {} and {}",
                s0.len(),
                s.len()
            );
        }
        for k in 0..s.len() {
            if k != d && s[k] != s0[k] {
                bail!(
                    ShapeMismatch,
                    op,
                    "Sizes of tensors must match except in dimension {}. Expected size {} but got size {} for tensor number {} in the list.",
                    d,
                    s0[k],
                    s[k],
                    i
                );
            }
        }
        total += s[d];
    }
    let mut osh = s0.clone();
    osh[d] = total;
    let conv: Vec<Tensor> = tensors
        .iter()
        .map(|t| {
            if t.dtype() == dt {
                Ok((*t).clone())
            } else {
                t.to_dtype(dt)
            }
        })
        .collect::<Result<_>>()?;
    let out = output(&osh, dt, "cat")?;
    let od = out.data();
    let mut start = 0;
    for &(i, _) in &live {
        let cd = conv[i].data();
        let len = cd.layout.sizes()[d];
        if len > 0 {
            let dl = narrowed(&od.layout, d, start, len);
            crate::backend::copy_raw(&region(&od, dl), &cd, dt, dt);
        }
        start += len;
    }
    let sizes: Vec<usize> = conv
        .iter()
        .map(|t| {
            if t.dim() == 1 && t.numel() == 0 {
                0
            } else {
                t.shape()[d]
            }
        })
        .collect();
    // skipped legacy tensors (1-D empty) get PyTorch's `zeros({0})` gradient
    let inputs: Vec<&Tensor> = conv.iter().collect();
    let legacy: Vec<bool> = conv
        .iter()
        .map(|t| t.dim() == 1 && t.numel() == 0)
        .collect();
    record(
        &[&out],
        &inputs,
        Vec::new,
        CatBackward {
            dim: d,
            sizes,
            legacy,
            name,
        },
    )?;
    Ok(out)
}
