//! Index-driven data movement: `index_select`, `gather`, `scatter`/`scatter_`, `scatter_add`/
//! `scatter_add_` (`gather` and `scatter*` read the index tensor in the kernel,
//! `Backend::gather_dim` / `Backend::scatter_dim`; their backward rules are each other, on the
//! saved index), and the two internal primitives over row-major flat positions: [`take`]
//! (`out[i] = x[idx[i]]`, zero where `idx == SKIP`) and [`put_add`] (its adjoint), whose
//! backward formulas are each other, so double backward works for every op built on them.

use crate::ops::grad::{GradIf, backward, grads, input_grad};
use std::sync::Arc;

use crate::autograd::{SavedTensor, check_inplace, no_grad, record, record_inplace};
use crate::backend::{DimWalk, Put};
use crate::layout::Layout;
use crate::layout::wrap_dim;
use crate::tensor::TensorData;
use crate::{DType, Element, Result, Tensor, bail, dispatch};

/// Marks an output position of [`take`] that is zero (no source element).
pub(crate) use crate::backend::SKIP;

/// Row-major (contiguous) strides of `shape`.
pub(crate) fn cstrides(shape: &[usize]) -> Vec<usize> {
    let mut s = vec![1usize; shape.len()];
    for i in (0..shape.len().saturating_sub(1)).rev() {
        s[i] = s[i + 1] * shape[i + 1];
    }
    s
}

/// Calls `f(flat, multi_index)` for every position of `shape` in row-major order.
pub(crate) fn for_each_pos(shape: &[usize], mut f: impl FnMut(usize, &[usize])) {
    let n: usize = shape.iter().product();
    let mut pos = vec![0usize; shape.len()];
    for flat in 0..n {
        f(flat, &pos);
        for d in (0..shape.len()).rev() {
            pos[d] += 1;
            if pos[d] < shape[d] {
                break;
            }
            pos[d] = 0;
        }
    }
}

/// The values of an integer index tensor as i64, row-major: read once on the host because the
/// ops validate every index (bounds, with the offending value in the message) before writing.
pub(crate) fn read_index(idx: &Tensor) -> Result<Vec<i64>> {
    crate::backend::read_vec::<i64>(&idx.data(), idx.dtype())
}

/// Values of an integer index tensor as i64 (row-major).
pub(crate) fn index_values(idx: &Tensor, op: &'static str, allow_i32: bool) -> Result<Vec<i64>> {
    match idx.dtype() {
        DType::I64 => read_index(idx),
        DType::I32 if allow_i32 => read_index(idx),
        d => bail!(
            DTypeMismatch,
            op,
            "{}(): Expected dtype int64 for index, got {}",
            op,
            d.torch_scalar_name()
        ),
    }
}

/// A fresh contiguous tensor of `shape` for a kernel that writes every element.
pub(crate) fn output(shape: &[usize], dt: DType, op: &'static str) -> Result<Tensor> {
    crate::layout::check_numel(shape, op)?;
    Tensor::empty_strided(shape, &cstrides(shape), dt)
}

fn take_raw(x: &Tensor, idx: &[usize], shape: &[usize], strides: &[usize]) -> Result<Tensor> {
    crate::layout::check_numel(shape, "take")?;
    let out = Tensor::empty_strided(shape, strides, x.dtype())?;
    crate::backend::movement::take(&out.data(), &x.data(), idx, x.dtype(), "take")?;
    Ok(out)
}

fn put_add_raw(src: &Tensor, idx: &[usize], shape: &[usize]) -> Result<Tensor> {
    crate::layout::check_numel(shape, "take")?;
    let out = Tensor::zeros(shape, src.dtype())?;
    let p = Put {
        dst: idx,
        src: None,
        accumulate: true,
        op: "take",
    };
    crate::backend::movement::put(&out.data(), &src.data(), &p, src.dtype())?;
    Ok(out)
}

/// `out[i] = x.flat[idx[i]]` (0 where `idx[i] == SKIP`), shaped `shape`; differentiable, the
/// node is named `name`.
pub(crate) fn take(
    x: &Tensor,
    idx: Arc<Vec<usize>>,
    shape: &[usize],
    name: &'static str,
) -> Result<Tensor> {
    take_recorded(x, idx.clone(), idx, shape, &cstrides(shape), name)
}

/// [`take`] into an output of `shape` with dense `strides` (`idx` still lists the picks in
/// row-major logical order): `sort`'s values keep the memory order of its input.
pub(crate) fn take_strided(
    x: &Tensor,
    idx: Arc<Vec<usize>>,
    shape: &[usize],
    strides: &[usize],
    name: &'static str,
) -> Result<Tensor> {
    take_recorded(x, idx.clone(), idx, shape, strides, name)
}

/// The picks `idx` of `x` into an output of `shape` and dense `strides`, recording a backward
/// that scatters through `grad_idx`.
fn take_recorded(
    x: &Tensor,
    idx: Arc<Vec<usize>>,
    grad_idx: Arc<Vec<usize>>,
    shape: &[usize],
    strides: &[usize],
    name: &'static str,
) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        take_raw(x, &idx, shape, strides)?
    };
    record(
        &[&out],
        &[x],
        Vec::new,
        TakeBackward {
            name,
            idx: grad_idx,
            in_shape: x.shape(),
        },
    )?;
    Ok(out)
}

/// Adjoint of [`take`]: a zero tensor of `shape` with `src[i]` added at flat `idx[i]`.
pub(crate) fn put_add(src: &Tensor, idx: Arc<Vec<usize>>, shape: &[usize]) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        put_add_raw(src, &idx, shape)?
    };
    record(
        &[&out],
        &[src],
        Vec::new,
        PutAddBackward {
            idx,
            src_shape: src.shape(),
        },
    )?;
    Ok(out)
}

struct TakeBackward {
    name: &'static str,
    /// Where each output position's gradient goes ([`SKIP`]: nowhere).
    idx: Arc<Vec<usize>>,
    in_shape: Vec<usize>,
}

backward!(TakeBackward, self.name, |self, _, g: Tensor| {
    let gi = put_add(&g, self.idx.clone(), &self.in_shape)?;
    for _ in 0..inplace_writes(self.name) {
        gi.0.version.bump();
    }
    input_grad(gi)
});

/// How many in-place writes PyTorch's backward of the op `name` makes on the fresh gradient
/// it returns (its version; measured in torch 2.15): `value_selecting_reduction_backward`
/// (`sort`, `topk`) is `zeros` then `scatter_` (2), `index_select` / `masked_select` /
/// `take` fill a zero tensor in place once (1), `embedding`'s backward is out of place (0).
fn inplace_writes(name: &str) -> usize {
    match name {
        "SortBackward0" | "TopkBackward0" => 2,
        "IndexSelectBackward0" | "MaskedSelectBackward0" | "TakeBackward0" => 1,
        _ => 0,
    }
}

struct PutAddBackward {
    idx: Arc<Vec<usize>>,
    src_shape: Vec<usize>,
}

backward!(PutAddBackward, "IndexPutBackward0", |self, _, g: Tensor| {
    input_grad(take(
        &g,
        self.idx.clone(),
        &self.src_shape,
        "TakeBackward0",
    )?)
});

struct IndexSelectBackward {
    dim: usize,
    /// The (checked, non-negative) indices along `dim`.
    rows: Vec<usize>,
    in_shape: Vec<usize>,
    out_shape: Vec<usize>,
}

backward!(
    IndexSelectBackward,
    "IndexSelectBackward0",
    |self, _, g: Tensor| {
        // the flat source position of every output position: the gradient scatters back through
        // the differentiable `put_add` (its backward is `take`, so double backward works)
        let st = cstrides(&self.in_shape);
        let mut idx = crate::storage::try_vec(self.out_shape.iter().product(), "index_select")?;
        for_each_pos(&self.out_shape, |_, pos| {
            let mut f = 0;
            for k in 0..pos.len() {
                let p = if k == self.dim {
                    self.rows[pos[k]]
                } else {
                    pos[k]
                };
                f += p * st[k];
            }
            idx.push(f);
        });
        let gi = put_add(&g, Arc::new(idx), &self.in_shape)?;
        for _ in 0..inplace_writes("IndexSelectBackward0") {
            gi.0.version.bump();
        }
        input_grad(gi)
    }
);

struct GatherBackward {
    dim: usize,
    in_shape: Vec<usize>,
}

// saved: the index; the adjoint of `gather` is `scatter_add` into zeros (and back)
backward!(GatherBackward, "GatherBackward0", |self, ctx, g: Tensor| {
    let index = &ctx.saved[0];
    let z = Tensor::zeros(&self.in_shape, g.dtype())?;
    let gi = z.scatter_add(self.dim as i64, index, &g)?;
    // PyTorch's `new_zeros(..).scatter_add_(..)`: one in-place write, version 1
    gi.0.version.bump();
    input_grad(gi)
});

/// The checks of `gather` / `scatter*` that need no index value, in PyTorch's order: an i64
/// index, the same number of dims as `self` (unless empty), and per dim (except `dim`) an
/// index size within `self`'s (and `src`'s).
pub(crate) fn check_dim_index(
    shape: &[usize],
    dim: usize,
    index: &Tensor,
    src_shape: Option<&[usize]>,
    op: &'static str,
) -> Result<()> {
    if index.dtype() != DType::I64 {
        bail!(
            DTypeMismatch,
            op,
            "{}(): Expected dtype int64 for index, got {}",
            op,
            index.dtype().torch_scalar_name()
        );
    }
    let ish = index.shape();
    let nd = shape.len().max(1);
    if ish.len().max(1) != nd && index.numel() > 0 {
        bail!(
            InvalidArgument,
            op,
            "Index tensor must have the same number of dimensions as self tensor"
        );
    }
    for d in 0..ish.len() {
        if d != dim && ish[d] > shape[d] {
            bail!(
                ShapeMismatch,
                op,
                "Size does not match at dimension {} expected index {:?} to be smaller than self {:?} apart from dimension {}",
                d,
                ish,
                shape,
                dim
            );
        }
        if let Some(ss) = src_shape
            && ish[d] > ss[d]
        {
            bail!(
                ShapeMismatch,
                op,
                "Size does not match at dimension {} expected index {:?} to be smaller than src {:?}",
                d,
                ish,
                ss
            );
        }
    }
    Ok(())
}

/// Flat targets in `self` (shape `shape`) of every `index` position, plus the flat `src`
/// position (src strides `sst`) for each: validates shapes and bounds like PyTorch.
pub(crate) fn scatter_pairs(
    shape: &[usize],
    dim: usize,
    index: &Tensor,
    src_shape: Option<&[usize]>,
    op: &'static str,
) -> Result<Vec<(usize, usize)>> {
    check_dim_index(shape, dim, index, src_shape, op)?;
    let iv = read_index(index)?;
    let ish = index.shape();
    if ish.is_empty() && shape.is_empty() {
        let i = iv[0];
        if i != 0 && i != -1 {
            bail!(
                IndexOutOfRange,
                op,
                "index {} is out of bounds for dimension 0 with size 1",
                i
            );
        }
        return Ok(vec![(0, 0)]);
    }
    let st = cstrides(shape);
    let sst = src_shape.map(cstrides).unwrap_or_default();
    let mut pairs = crate::storage::try_vec(iv.len(), op)?;
    let mut err = None;
    let size = shape.get(dim).copied().unwrap_or(1) as i64;
    // row-major walk of the index positions with running offsets: `tb` (target, without `dim`)
    // and `sb` (source); a 0-dim index has no dims, so both stay 0
    let nd_i = ish.len();
    let tdim = if nd_i == 0 {
        0
    } else {
        st.get(dim).copied().unwrap_or(0)
    };
    let mut pos = vec![0usize; nd_i];
    let (mut tb, mut sb) = (0usize, 0usize);
    for &i in &iv {
        // PyTorch's scatter kernels reject negative index values (they do not wrap)
        if i < 0 || i >= size {
            err = Some(i);
            break;
        }
        let i = i as usize;
        pairs.push((tb + i * tdim, sb));
        for k in (0..nd_i).rev() {
            pos[k] += 1;
            let tk = if k == dim {
                0
            } else {
                st.get(k).copied().unwrap_or(0)
            };
            let sk = sst.get(k).copied().unwrap_or(0);
            if pos[k] < ish[k] {
                tb += tk;
                sb += sk;
                break;
            }
            tb -= (ish[k] - 1) * tk;
            sb -= (ish[k] - 1) * sk;
            pos[k] = 0;
        }
    }
    if let Some(i) = err {
        bail!(
            IndexOutOfRange,
            op,
            "index {} is out of bounds for dimension {} with size {}",
            i,
            dim,
            shape[dim]
        );
    }
    Ok(pairs)
}

/// What `scatter` writes: a tensor or a scalar value.
pub(crate) enum ScatterSrc<'a> {
    Tensor(&'a Tensor),
    Value(f64),
}

struct ScatterBackward {
    name: &'static str,
    dim: usize,
    /// `scatter_add` (self's gradient passes unchanged).
    add: bool,
    has_src: bool,
}

// saved: the index
backward!(ScatterBackward, self.name, |self, ctx, g: Tensor| {
    let index = &ctx.saved[0];
    let d = self.dim as i64;
    let gs = ctx.grad_if(0, || {
        if self.add {
            Ok(g.clone())
        } else {
            g.scatter_value(d, index, 0.0)
        }
    })?;
    if !self.has_src {
        return grads([gs]);
    }
    // index-shaped, like PyTorch's `grad.gather(dim, index)`: when `src` is larger than the
    // index the engine's shape check refuses it, as PyTorch's does
    let gsrc = ctx.grad_if(1, || g.gather(d, index))?;
    grads([gs, gsrc])
});

/// Shared implementation of scatter / scatter_add (in place when `inplace`).
fn scatter_impl(
    x: &Tensor,
    dim: i64,
    index: &Tensor,
    src: ScatterSrc<'_>,
    add: bool,
    inplace: bool,
) -> Result<Tensor> {
    let op: &'static str = match (add, inplace) {
        (false, false) => "scatter",
        (false, true) => "scatter_",
        (true, false) => "scatter_add",
        (true, true) => "scatter_add_",
    };
    let shape = x.shape();
    let d = wrap_dim(dim, shape.len(), op)?;
    let src_t = match &src {
        ScatterSrc::Tensor(t) => {
            if t.dtype() != x.dtype() {
                bail!(
                    DTypeMismatch,
                    op,
                    "{}(): Expected self.dtype to be equal to src.dtype",
                    op
                );
            }
            Some((*t).clone())
        }
        ScatterSrc::Value(_) => None,
    };
    let ssh = src_t.as_ref().map(|t| t.shape());
    check_dim_index(&shape, d, index, ssh.as_deref(), op)?;
    let rec = if inplace {
        crate::ops::util::check_no_internal_overlap(&x.data_ref(), op)?;
        let others: Vec<&Tensor> = src_t.iter().collect();
        check_inplace(x, &others)?
    } else {
        None
    };
    let id = index.data();
    let walk = DimWalk {
        index: &id.layout,
        dim: d,
        size: shape.get(d).copied().unwrap_or(1),
        op,
    };
    let result = {
        let _g = no_grad();
        let dt = x.dtype();
        let r = output(&shape, dt, op)?;
        crate::backend::copy_raw(&r.data(), &x.data(), dt, dt);
        let sd = match &src {
            ScatterSrc::Tensor(t) => t.data(),
            ScatterSrc::Value(val) => {
                // one element converted like the kernel's `T::from_f64`, read with stride 0
                let v = dispatch!(dt, T => Tensor::from_vec(vec![T::from_f64(*val)], &[1])?);
                let ish = index.shape();
                TensorData {
                    storage: v.data().storage,
                    layout: Layout::new(&ish[..], &vec![0usize; ish.len()][..], 0),
                }
            }
        };
        crate::backend::movement::scatter_dim(&r.data(), &sd, &id, &walk, dt, add)?;
        r
    };
    let bw = ScatterBackward {
        name: if add {
            "ScatterAddBackward0"
        } else if src_t.is_some() {
            "ScatterBackward0"
        } else {
            "ScatterBackward1"
        },
        dim: d,
        add,
        has_src: src_t.is_some(),
    };
    let mut inputs: Vec<&Tensor> = vec![x];
    if let Some(t) = &src_t {
        inputs.push(t);
    }
    let saved = || vec![SavedTensor::input(index)];
    if inplace {
        crate::backend::copy_raw(&x.data(), &result.data(), x.dtype(), x.dtype());
        x.0.version.bump();
        record_inplace(rec, x, saved, bw)?;
        Ok(x.clone())
    } else {
        record(&[&result], &inputs, saved, bw)?;
        Ok(result)
    }
}

impl Tensor {
    /// Selects entries along `dim` at the positions of the 1-D `index` (i64 or i32).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[3, 2])?;
    /// let i = Tensor::from_vec(vec![2i64, 0], &[2])?;
    /// assert_eq!(x.index_select(0, &i)?.to_vec::<i64>()?, vec![4, 5, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index_select(&self, dim: impl crate::Dim, index: &Tensor) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "index_select")?;
        let op = "index_select";
        self.check_strided(op)?;
        index.check_strided(op)?;
        let shape = self.shape();
        let d = wrap_dim(dim, shape.len(), op)?;
        if index.dim() > 1 {
            bail!(
                InvalidArgument,
                op,
                "index_select(): Index is supposed to be a vector"
            );
        }
        let iv = index_values(index, op, true)?;
        let size = if shape.is_empty() { 1 } else { shape[d] } as i64;
        // negative values do not wrap: PyTorch's `index_select` rejects them
        for &i in &iv {
            if i < 0 || i >= size {
                bail!(
                    IndexOutOfRange,
                    op,
                    "index out of range in self: index {} for size {}",
                    i,
                    size
                );
            }
        }
        if shape.is_empty() {
            let idx = vec![0usize; iv.len()];
            let osh = if index.dim() == 0 {
                vec![]
            } else {
                vec![iv.len()]
            };
            return take(self, Arc::new(idx), &osh, "IndexSelectBackward0");
        }
        let mut osh = shape.clone();
        osh[d] = iv.len();
        let rows: Vec<usize> = iv.iter().map(|&i| i as usize).collect();
        let out = output(&osh, self.dtype(), "take")?;
        crate::backend::movement::index_select(&out.data(), &self.data(), d, &rows, self.dtype())?;
        record(
            &[&out],
            &[self],
            Vec::new,
            IndexSelectBackward {
                dim: d,
                rows,
                in_shape: shape,
                out_shape: osh,
            },
        )?;
        Ok(out)
    }

    /// `out[i][j] = self[i][index[i][j]]` for `dim = 1` (and analogously), index i64 with the
    /// same number of dims as `self`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// let i = Tensor::from_vec(vec![1i64, 0], &[2, 1])?;
    /// assert_eq!(x.gather(1, &i)?.to_vec::<f32>()?, vec![2.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn gather(&self, dim: impl crate::Dim, index: &Tensor) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "gather")?;
        let op = "gather";
        self.check_strided(op)?;
        index.check_strided(op)?;
        let shape = self.shape();
        let d = wrap_dim(dim, shape.len(), op)?;
        check_dim_index(&shape, d, index, None, op)?;
        let id = index.data();
        let walk = DimWalk {
            index: &id.layout,
            dim: d,
            size: shape.get(d).copied().unwrap_or(1),
            op,
        };
        let dt = self.dtype();
        let out = output(&index.shape(), dt, op)?;
        crate::backend::movement::gather_dim(&out.data(), &self.data(), &id, &walk, dt)?;
        record(
            &[&out],
            &[self],
            || vec![SavedTensor::input(index)],
            GatherBackward {
                dim: d,
                in_shape: shape,
            },
        )?;
        Ok(out)
    }

    /// Out-of-place scatter: a copy of `self` with `src` values written at `index` along `dim`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[2, 2], DType::F32)?;
    /// let i = Tensor::from_vec(vec![1i64, 0], &[1, 2])?;
    /// let s = Tensor::from_vec(vec![5.0f32, 6.0], &[1, 2])?;
    /// assert_eq!(z.scatter(0, &i, &s)?.to_vec::<f32>()?, vec![0.0, 6.0, 5.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter(&self, dim: impl crate::Dim, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter")?;
        scatter_impl(self, dim, index, ScatterSrc::Tensor(src), false, false)
    }

    /// Out-of-place scatter of a scalar `value`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[1, 3], DType::F32)?;
    /// let i = Tensor::from_vec(vec![2i64], &[1, 1])?;
    /// assert_eq!(z.scatter_value(1, &i, -1.5)?.to_vec::<f32>()?, vec![0.0, 0.0, -1.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_value(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        value: f64,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_value")?;
        scatter_impl(self, dim, index, ScatterSrc::Value(value), false, false)
    }

    /// In-place [`scatter`](Self::scatter).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[3], DType::I64)?;
    /// let i = Tensor::from_vec(vec![1i64], &[1])?;
    /// z.scatter_(0, &i, &Tensor::from_vec(vec![7i64], &[1])?)?;
    /// assert_eq!((z.to_vec::<i64>()?, z.version()), (vec![0, 7, 0], 1));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_(&self, dim: impl crate::Dim, index: &Tensor, src: &Tensor) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_")?;
        scatter_impl(self, dim, index, ScatterSrc::Tensor(src), false, true)
    }

    /// In-place scatter of a scalar value.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[3], DType::F32)?;
    /// z.scatter_value_(0, &Tensor::from_vec(vec![0i64], &[1])?, 2.0)?;
    /// assert_eq!(z.to_vec::<f32>()?, vec![2.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_value_(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        value: f64,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_value_")?;
        scatter_impl(self, dim, index, ScatterSrc::Value(value), false, true)
    }

    /// Out-of-place scatter-add: a copy of `self` with `src` values added at `index` along `dim`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[2], DType::F32)?;
    /// let i = Tensor::from_vec(vec![1i64, 1, 0], &[3])?;
    /// let s = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?;
    /// assert_eq!(z.scatter_add(0, &i, &s)?.to_vec::<f32>()?, vec![3.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_add(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_add")?;
        scatter_impl(self, dim, index, ScatterSrc::Tensor(src), true, false)
    }

    /// In-place [`scatter_add`](Self::scatter_add).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::ones(&[2], DType::F32)?;
    /// z.scatter_add_(0, &Tensor::from_vec(vec![0i64, 0], &[2])?, &Tensor::ones(&[2], DType::F32)?)?;
    /// assert_eq!(z.to_vec::<f32>()?, vec![3.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn scatter_add_(
        &self,
        dim: impl crate::Dim,
        index: &Tensor,
        src: &Tensor,
    ) -> Result<Tensor> {
        let dim = crate::tensor::dims::dim(dim, "scatter_add_")?;
        scatter_impl(self, dim, index, ScatterSrc::Tensor(src), true, true)
    }
}
