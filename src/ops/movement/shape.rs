//! Shape-changing data movement that copies: `cat`, `stack`, `flip`, `roll`, `repeat`,
//! `tril`/`triu` and `one_hot`. Everything except `cat` is an index map run through the
//! differentiable [`take`](crate::ops::movement::gather::take) primitive.

use crate::ops::grad::{GradIf, backward};
use std::sync::Arc;

use crate::autograd::{no_grad, record};
use crate::dtype::{Operand, result_type};
use crate::layout::{check_numel, wrap_dim, wrap_dims};
use crate::ops::movement::gather::{SKIP, cstrides, for_each_pos, take};
use crate::{DType, Result, Tensor, bail, dispatch};

struct CatBackward {
    dim: usize,
    sizes: Vec<usize>,
    name: &'static str,
}

backward!(CatBackward, self.name, |self, ctx, g: Tensor| {
    let mut start = 0;
    let mut out = crate::autograd::Grads::with_capacity(self.sizes.len());
    for (i, &s) in self.sizes.iter().enumerate() {
        out.push(ctx.grad_if(i, || g.narrow(self.dim as i64, start as i64, s)?.copy())?);
        start += s;
    }
    Ok(out)
});

/// Index map of a permutation-like op: for each output position (shape = input shape), the
/// input flat position given by `f(pos) -> source multi-index`.
fn index_map(
    shape: &[usize],
    op: &'static str,
    mut f: impl FnMut(&[usize], &mut [usize]) -> bool,
) -> Result<Vec<usize>> {
    let st = cstrides(shape);
    let mut src = vec![0usize; shape.len()];
    let mut idx = crate::storage::try_vec(check_numel(shape, op)?, op)?;
    for_each_pos(shape, |_, pos| {
        src.copy_from_slice(pos);
        if f(pos, &mut src) {
            idx.push(src.iter().zip(&st).map(|(a, b)| a * b).sum());
        } else {
            idx.push(SKIP);
        }
    });
    Ok(idx)
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
    let n = shape.len();
    let idx = index_map(&shape, op, |pos, _| {
        let (r, c) = (pos[n - 2] as i64, pos[n - 1] as i64);
        if lower {
            c - r <= diagonal
        } else {
            c - r >= diagonal
        }
    })?;
    take(
        x,
        Arc::new(idx),
        &shape,
        if lower {
            "TrilBackward0"
        } else {
            "TriuBackward0"
        },
    )
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
    pub fn cat(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
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
    pub fn stack(tensors: &[&Tensor], dim: i64) -> Result<Tensor> {
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
    pub fn flip(&self, dims: &[i64]) -> Result<Tensor> {
        let shape = self.shape();
        let ds = wrap_dims(dims, shape.len(), "flip")?;
        // a 0-dim tensor accepts dim 0 / -1 but has nothing to flip
        let ds: Vec<usize> = ds.into_iter().filter(|&d| d < shape.len()).collect();
        let idx = index_map(&shape, "flip", |pos, src| {
            for &d in &ds {
                src[d] = shape[d] - 1 - pos[d];
            }
            true
        })?;
        take(self, Arc::new(idx), &shape, "FlipBackward0")
    }

    /// Rolls elements along `dims` by `shifts` (with no dims: over the flattened tensor).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(1, 7, 1)?.view(&[2, 3])?;
    /// assert_eq!(x.roll(&[1], &[])?.to_vec::<i64>()?, vec![6, 1, 2, 3, 4, 5]);
    /// assert_eq!(x.roll(&[-4], &[1])?.to_vec::<i64>()?, vec![2, 3, 1, 5, 6, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn roll(&self, shifts: &[i64], dims: &[i64]) -> Result<Tensor> {
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
            let n = self.numel();
            let flat = self.reshape(&[-1])?;
            let idx: Vec<usize> = (0..n)
                .map(|i| ((i as i64 - shifts[0]).rem_euclid(n.max(1) as i64)) as usize)
                .collect();
            let r = take(&flat, Arc::new(idx), &[n], "RollBackward0")?;
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
        let idx = index_map(&shape, "roll", |pos, src| {
            for (k, &d) in ds.iter().enumerate() {
                let n = shape[d] as i64;
                src[d] = ((src[d] as i64 - shifts[k]).rem_euclid(n.max(1))) as usize;
                let _ = pos;
            }
            true
        })?;
        take(self, Arc::new(idx), &shape, "RollBackward0")
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
    pub fn repeat(&self, sizes: &[usize]) -> Result<Tensor> {
        let shape = self.shape();
        if sizes.len() < shape.len() {
            bail!(
                InvalidArgument,
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
        let st = cstrides(&padded);
        let mut idx = crate::storage::try_vec(check_numel(&osh, "repeat")?, "repeat")?;
        for_each_pos(&osh, |_, pos| {
            idx.push(
                pos.iter()
                    .zip(&padded)
                    .zip(&st)
                    .map(|((p, s), t)| (p % s) * t)
                    .sum(),
            );
        });
        take(self, Arc::new(idx), &osh, "RepeatBackward0")
    }

    /// Lower triangle of the last two dims (entries with `col - row <= diagonal`), rest zero.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 2], DType::F32)?;
    /// assert_eq!(x.tril(0)?.to_vec::<f32>()?, vec![1.0, 0.0, 1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn tril(&self, diagonal: i64) -> Result<Tensor> {
        tri(self, diagonal, true)
    }

    /// Upper triangle of the last two dims (entries with `col - row >= diagonal`), rest zero.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 2], DType::F32)?;
    /// assert_eq!(x.triu(1)?.to_vec::<f32>()?, vec![0.0, 1.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn triu(&self, diagonal: i64) -> Result<Tensor> {
        tri(self, diagonal, false)
    }

    /// One-hot encoding of an i64 tensor: a new last dim of `num_classes` (-1: max + 1), i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let y = Tensor::from_vec(vec![0i64, 2], &[2])?;
    /// assert_eq!(y.one_hot(-1)?.to_vec::<i64>()?, vec![1, 0, 0, 0, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn one_hot(&self, num_classes: i64) -> Result<Tensor> {
        let op = "one_hot";
        if self.dtype() != DType::I64 {
            bail!(
                DTypeMismatch,
                op,
                "one_hot is only applicable to index tensor of type LongTensor."
            );
        }
        let v = self.to_vec::<i64>()?;
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
        // its version counter shows; keep the same observable state.
        t.0.version.bump();
        t.0.version.bump();
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
            "torch.cat(): expected a non-empty list of Tensors"
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
    let out = {
        let _g = no_grad();
        dispatch!(dt, T => {
            let outer: usize = osh[..d].iter().product();
            let inner: usize = osh[d + 1..].iter().product();
            let mut buf: Vec<T> = crate::storage::try_vec(check_numel(&osh, "cat")?, "cat")?;
            let vals: Vec<(Vec<T>, usize)> = live
                .iter()
                .map(|&(i, _)| Ok((conv[i].to_vec::<T>()?, conv[i].shape()[d] * inner)))
                .collect::<Result<_>>()?;
            for o in 0..outer {
                for (v, chunk) in &vals {
                    buf.extend_from_slice(&v[o * chunk..(o + 1) * chunk]);
                }
            }
            Tensor::from_vec(buf, &osh)?
        })
    };
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
    // skipped legacy tensors get a zero-size grad slice of the right rank? keep them None
    let inputs: Vec<&Tensor> = conv.iter().collect();
    let skipped: Vec<bool> = conv
        .iter()
        .map(|t| t.dim() == 1 && t.numel() == 0)
        .collect();
    if skipped.iter().any(|&s| s) {
        // record only the live inputs
        let live_inputs: Vec<&Tensor> = inputs
            .iter()
            .zip(&skipped)
            .filter(|(_, s)| !**s)
            .map(|(t, _)| *t)
            .collect();
        let live_sizes = sizes
            .iter()
            .zip(&skipped)
            .filter(|(_, s)| !**s)
            .map(|(v, _)| *v)
            .collect();
        record(
            &[&out],
            &live_inputs,
            Vec::new,
            CatBackward {
                dim: d,
                sizes: live_sizes,
                name,
            },
        )?;
    } else {
        record(
            &[&out],
            &inputs,
            Vec::new,
            CatBackward {
                dim: d,
                sizes,
                name,
            },
        )?;
    }
    Ok(out)
}
