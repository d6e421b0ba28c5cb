//! Indexing with PyTorch / NumPy semantics: `__getitem__` ([`Tensor::index`], [`Tensor::i`]),
//! `__setitem__` ([`Tensor::index_set`]) and `index_put_` / `index_put`. Basic indices (ints,
//! slices, `NewAxis`, `Ellipsis`) build views; tensor indices (int or bool masks) gather a copy
//! (`IndexBackward0`) or scatter in place (`IndexPutBackward0`).

mod kernel;
mod put_rows;

use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, check_inplace, record, record_inplace};
use crate::dtype::Operand;
use crate::ops::elementwise::binary::scalar_tensor;
use crate::ops::util::check_no_overlap;
use crate::{DType, Result, Tensor, bail};
use kernel::{gather, normalize, plan, scatter, select};

/// Where `index_put_` writes: whole rows (the fast path) or planned elements.
enum Target {
    Rows(put_rows::RowPlan),
    Elements(kernel::Plan),
}

/// One entry of an index expression (`x[a, b, ...]`).
#[derive(Clone)]
pub enum TensorIndex {
    /// `None`: inserts a size-1 dim.
    NewAxis,
    /// `...`: as many full slices as needed.
    Ellipsis,
    /// An integer (negative counts from the end): removes the dim.
    Int(i64),
    /// Python `True` / `False`: a new dim of size 1 / 0 (advanced indexing, a copy).
    Bool(bool),
    /// `start:stop:step` (`step > 0`).
    Slice {
        /// First index (clamped), `None` = 0.
        start: Option<i64>,
        /// End (exclusive, clamped), `None` = size.
        stop: Option<i64>,
        /// Step, must be positive.
        step: i64,
    },
    /// An int64/int32 index tensor or a bool/uint8 mask.
    Tensor(Tensor),
}

pub use TensorIndex::{Ellipsis, NewAxis};

/// Converts a Rust value (int, range, `NewAxis`, tensor) into a [`TensorIndex`].
pub trait IntoIndex {
    /// The index entry.
    fn into_index(self) -> TensorIndex;
}

/// Converts a tuple (or single value) of index entries into a list.
pub trait IntoIndices {
    /// The index entries in order.
    fn into_indices(self) -> Vec<TensorIndex>;
}

impl IntoIndex for TensorIndex {
    fn into_index(self) -> TensorIndex {
        self
    }
}
impl IntoIndex for i64 {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Int(self)
    }
}
impl IntoIndex for i32 {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Int(self as i64)
    }
}
impl IntoIndex for usize {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Int(self as i64)
    }
}
impl IntoIndex for bool {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Bool(self)
    }
}
impl IntoIndex for &Tensor {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Tensor(self.clone())
    }
}
impl IntoIndex for Tensor {
    fn into_index(self) -> TensorIndex {
        TensorIndex::Tensor(self)
    }
}
fn sl(start: Option<i64>, stop: Option<i64>) -> TensorIndex {
    TensorIndex::Slice {
        start,
        stop,
        step: 1,
    }
}
impl IntoIndex for std::ops::RangeFull {
    fn into_index(self) -> TensorIndex {
        sl(None, None)
    }
}
impl IntoIndex for std::ops::Range<i64> {
    fn into_index(self) -> TensorIndex {
        sl(Some(self.start), Some(self.end))
    }
}
impl IntoIndex for std::ops::RangeFrom<i64> {
    fn into_index(self) -> TensorIndex {
        sl(Some(self.start), None)
    }
}
impl IntoIndex for std::ops::RangeTo<i64> {
    fn into_index(self) -> TensorIndex {
        sl(None, Some(self.end))
    }
}
impl IntoIndex for std::ops::RangeInclusive<i64> {
    fn into_index(self) -> TensorIndex {
        sl(Some(*self.start()), Some(*self.end() + 1))
    }
}

impl<A: IntoIndex> IntoIndices for A {
    fn into_indices(self) -> Vec<TensorIndex> {
        vec![self.into_index()]
    }
}
macro_rules! tuple_indices {
    ($($n:ident),+) => {
        impl<$($n: IntoIndex),+> IntoIndices for ($($n,)+) {
            #[allow(non_snake_case)]
            fn into_indices(self) -> Vec<TensorIndex> {
                let ($($n,)+) = self;
                vec![$($n.into_index()),+]
            }
        }
    };
}
tuple_indices!(A);
tuple_indices!(A, B);
tuple_indices!(A, B, C);
tuple_indices!(A, B, C, D);
tuple_indices!(A, B, C, D, E);
tuple_indices!(A, B, C, D, E, F);

/// Result of applying the basic part of an index: the view and one advanced entry per view dim.
struct Applied {
    view: Tensor,
    adv: Vec<Option<Tensor>>,
    changed: bool,
}

fn is_int_tensor(t: &Tensor) -> bool {
    matches!(t.dtype(), DType::I64 | DType::I32 | DType::I16 | DType::I8)
}

fn apply_basic(x: &Tensor, idx: &[TensorIndex]) -> Result<Applied> {
    // a 0-dim bool (or uint8) mask acts like the Python bool it holds
    let idx = idx
        .iter()
        .map(|i| match i {
            TensorIndex::Tensor(t)
                if t.dim() == 0 && matches!(t.dtype(), DType::Bool | DType::U8) =>
            {
                Ok(TensorIndex::Bool(t.item_as::<bool>()?))
            }
            other => Ok(other.clone()),
        })
        .collect::<Result<Vec<_>>>()?;
    let idx = &idx[..];
    let ndim = x.dim();
    let mut consumed = 0usize;
    let mut ellipses = 0;
    for i in idx {
        match i {
            TensorIndex::Int(_) | TensorIndex::Slice { .. } => consumed += 1,
            TensorIndex::Tensor(t) => {
                consumed += if matches!(t.dtype(), DType::Bool | DType::U8) {
                    t.dim()
                } else {
                    1
                }
            }
            TensorIndex::Ellipsis => ellipses += 1,
            _ => {}
        }
        if let TensorIndex::Slice { step, .. } = i
            && *step <= 0
        {
            bail!(InvalidArgument, "index", "step must be greater than zero");
        }
    }
    if ellipses > 1 {
        bail!(
            InvalidArgument,
            "index",
            "an index can only have a single ellipsis ('...')"
        );
    }
    if consumed > ndim {
        bail!(
            IndexOutOfRange,
            "index",
            "too many indices for tensor of dimension {}",
            ndim
        );
    }
    // validate everything first (ints in range, tensor dtypes) so no view op fails midway
    let mut od = 0usize;
    for i in idx {
        match i {
            TensorIndex::Int(v) => {
                let s = x.shape()[od] as i64;
                if *v < -s || *v >= s {
                    bail!(
                        IndexOutOfRange,
                        "index",
                        "index {} is out of bounds for dimension {} with size {}",
                        v,
                        od,
                        s
                    );
                }
                od += 1;
            }
            TensorIndex::Slice { .. } => od += 1,
            TensorIndex::Ellipsis => od += ndim - consumed,
            TensorIndex::Tensor(t) => {
                if !is_int_tensor(t) && !matches!(t.dtype(), DType::Bool | DType::U8) {
                    bail!(
                        DTypeMismatch,
                        "index",
                        "tensors used as indices must be long, int, byte or bool tensors"
                    );
                }
                od += if is_int_tensor(t) { 1 } else { t.dim() };
            }
            _ => {}
        }
    }
    let mut cur = x.clone();
    let mut d = 0usize;
    let mut adv: Vec<Option<Tensor>> = Vec::new();
    let mut changed = false;
    for i in idx {
        match i {
            TensorIndex::Int(v) => {
                cur = cur.select(d as i64, *v)?;
                changed = true;
            }
            TensorIndex::Slice { start, stop, step } => {
                let size = cur.shape()[d] as i64;
                let full = start.unwrap_or(0) == 0 && stop.is_none_or(|e| e >= size) && *step == 1;
                if !full {
                    cur = cur.slice(d as i64, *start, *stop, *step)?;
                    changed = true;
                }
                adv.push(None);
                d += 1;
            }
            TensorIndex::NewAxis => {
                cur = cur.unsqueeze(d as i64)?;
                changed = true;
                adv.push(None);
                d += 1;
            }
            TensorIndex::Ellipsis => {
                for _ in 0..ndim - consumed {
                    adv.push(None);
                    d += 1;
                }
            }
            TensorIndex::Bool(b) => {
                cur = cur.unsqueeze(d as i64)?;
                changed = true;
                let t = if *b {
                    Tensor::from_vec(vec![0i64], &[1])?
                } else {
                    Tensor::from_vec(Vec::<i64>::new(), &[0])?
                };
                adv.push(Some(t));
                d += 1;
            }
            TensorIndex::Tensor(t) => {
                if is_int_tensor(t) && t.dim() == 0 {
                    cur = cur.select(d as i64, t.item_as::<i64>()?)?;
                    changed = true;
                    continue;
                }
                let k = if is_int_tensor(t) { 1 } else { t.dim() };
                adv.push(Some(t.clone()));
                d += k;
            }
        }
    }
    // pad to one entry per view dim (masks cover several dims but have one entry)
    Ok(Applied {
        view: cur,
        adv,
        changed,
    })
}

fn any_adv(a: &[Option<Tensor>]) -> bool {
    a.iter().any(|x| x.is_some())
}

/// Advanced index without autograd.
fn index_raw(src: &Tensor, indices: &[Option<Tensor>]) -> Result<Tensor> {
    let l = src.layout();
    let idx = normalize(l.sizes(), indices)?;
    if let Some(out) = select(src, &idx)? {
        return Ok(out);
    }
    let p = plan(l.sizes(), l.strides(), l.offset(), &idx)?;
    gather(src, &p)
}

impl Tensor {
    /// `x[idx]`: basic indices give a view (sharing storage and version), any tensor index a
    /// copy (NumPy rules: index tensors broadcast; adjacent advanced dims stay in place,
    /// separated ones move to the front).
    ///
    /// ```
    /// # use tapegrad::{Tensor, TensorIndex};
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// let r = x.index(&[TensorIndex::Int(1)])?;
    /// assert_eq!(r.to_vec::<i64>()?, vec![3, 4, 5]);
    /// assert!(r.is_view());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index(&self, idx: &[TensorIndex]) -> Result<Tensor> {
        self.check_strided("index")?;
        let a = apply_basic(self, idx)?;
        if any_adv(&a.adv) {
            return a.view.index_tensors(&a.adv);
        }
        if !a.changed {
            return self.alias();
        }
        Ok(a.view)
    }

    /// Ergonomic [`Tensor::index`]: `x.i((1, 2..4, NewAxis))`, `x.i(..)`, `x.i(&idx_tensor)`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, NewAxis};
    /// let x = Tensor::arange(0, 12, 1)?.view(&[3, 4])?;
    /// assert_eq!(x.i((1, 1..3))?.to_vec::<i64>()?, vec![5, 6]);
    /// assert_eq!(x.i((.., NewAxis, -1))?.shape(), vec![3, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn i(&self, idx: impl IntoIndices) -> Result<Tensor> {
        self.index(&idx.into_indices())
    }

    /// `aten::index`: gathers with one optional index tensor per leading dim (a copy,
    /// `IndexBackward0`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 4, 1)?;
    /// let i = Tensor::from_vec(vec![3i64, 0, 3], &[3])?;
    /// assert_eq!(x.index_tensors(&[Some(i)])?.to_vec::<i64>()?, vec![3, 0, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index_tensors(&self, indices: &[Option<Tensor>]) -> Result<Tensor> {
        let out = index_raw(self, indices)?;
        if self.dtype().is_differentiable() {
            record(
                &[&out],
                &[self],
                Vec::new,
                IndexBackward {
                    shape: self.shape(),
                    dtype: self.dtype(),
                    indices: detached(indices),
                },
            )?;
        }
        Ok(out)
    }

    /// In-place `index_put_`: writes `values` (broadcast to the indexing result, same dtype)
    /// at `indices`; `accumulate` adds (duplicates sum), otherwise the last write wins.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[5], DType::F64)?;
    /// let i = Tensor::from_vec(vec![0i64, 0, 1], &[3])?;
    /// x.index_put_(&[Some(i)], &Tensor::from_vec(vec![1.0, 2.0, 3.0], &[3])?, true)?;
    /// assert_eq!(x.to_vec::<f64>()?, vec![3.0, 3.0, 0.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index_put_(
        &self,
        indices: &[Option<Tensor>],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<Tensor> {
        self.index_put_impl(indices, values, accumulate, true)
    }

    /// [`Tensor::index_put_`]; `bump` is false for the fresh copy of the out-of-place
    /// [`Tensor::index_put`], whose result starts at version 0 like PyTorch's.
    fn index_put_impl(
        &self,
        indices: &[Option<Tensor>],
        values: &Tensor,
        accumulate: bool,
        bump: bool,
    ) -> Result<Tensor> {
        if values.dtype() != self.dtype() {
            bail!(
                DTypeMismatch,
                "index_put_",
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                self.dtype().torch_scalar_name(),
                values.dtype().torch_scalar_name()
            );
        }
        // one index tensor on dim 0 of a tensor with contiguous rows: the row fast path
        let target = match put_rows::plan_rows(self, indices) {
            Some(rows) => Target::Rows(rows?),
            None => {
                let l = self.layout();
                let idx = normalize(l.sizes(), indices)?;
                Target::Elements(plan(l.sizes(), l.strides(), l.offset(), &idx)?)
            }
        };
        let shape = match &target {
            Target::Rows(r) => &r.shape,
            Target::Elements(p) => &p.shape,
        };
        let vshape = values.shape();
        let b = crate::layout::broadcast_shapes(shape, &vshape, "index_put_");
        if b.as_deref().ok() != Some(&shape[..]) {
            bail!(
                ShapeMismatch,
                "index_put_",
                "shape mismatch: value tensor of shape {:?} cannot be broadcast to indexing result of shape {:?}",
                vshape,
                shape
            );
        }
        check_no_overlap(self, values, "index_put_")?;
        for t in indices.iter().flatten() {
            check_no_overlap(self, t, "index_put_")?;
        }
        let rec = check_inplace(self, &[values])?;
        // read the values (broadcast, row-major) before writing: safe even if they alias self
        let vals = {
            let _g = crate::autograd::no_grad();
            let shp: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
            values.detach().expand(&shp)?.contiguous()?
        };
        match &target {
            Target::Rows(r) => {
                // the row kernel reads the values in place: values sharing self's storage (only
                // possible when the overlap check could not decide) are copied first
                let vals = if vals.shares_storage(self) {
                    let _g = crate::autograd::no_grad();
                    vals.copy()?
                } else {
                    vals
                };
                put_rows::scatter_rows(self, r, &vals, accumulate)?;
            }
            Target::Elements(p) => scatter(self, p, &vals, accumulate)?,
        }
        if bump {
            self.0.version.bump();
        }
        record_inplace(
            rec,
            self,
            Vec::new,
            IndexPutBackward {
                indices: detached(indices),
                accumulate,
            },
        )?;
        Ok(self.clone())
    }

    /// Out-of-place [`Tensor::index_put_`] on a copy of `self`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[3], DType::F32)?;
    /// let i = Tensor::from_vec(vec![2i64], &[1])?;
    /// let y = x.index_put(&[Some(i)], &Tensor::scalar(5.0f32), false)?;
    /// assert_eq!((x.to_vec::<f32>()?, y.to_vec::<f32>()?), (vec![0.0; 3], vec![0.0, 0.0, 5.0]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index_put(
        &self,
        indices: &[Option<Tensor>],
        values: &Tensor,
        accumulate: bool,
    ) -> Result<Tensor> {
        if values.dtype() != self.dtype() {
            bail!(
                DTypeMismatch,
                "index_put",
                "Index put requires the source and destination dtypes match, got {} for the destination and {} for the source.",
                self.dtype().torch_scalar_name(),
                values.dtype().torch_scalar_name()
            );
        }
        // validate on self first so a failing call leaves no half-built graph
        match put_rows::plan_rows(self, indices) {
            Some(rows) => drop(rows?),
            None => {
                let l = self.layout();
                plan(
                    l.sizes(),
                    l.strides(),
                    l.offset(),
                    &normalize(l.sizes(), indices)?,
                )?;
            }
        }
        self.copy()?
            .index_put_impl(indices, values, accumulate, false)
    }

    /// `x[idx] = value` (scalar or tensor, cast to `x`'s dtype for basic indices, broadcast to
    /// the selection). Exactly one version bump. Basic indices write through a view (`copy_` /
    /// `fill_`), tensor indices use `index_put_`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, TensorIndex};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// x.index_set(&[TensorIndex::Int(1)], 5.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 0.0, 0.0, 5.0, 5.0, 5.0]);
    /// assert_eq!(x.version(), 1);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn index_set(&self, idx: &[TensorIndex], value: impl Into<Operand>) -> Result<()> {
        let value = value.into();
        let a = apply_basic(self, idx)?;
        let dst = if a.changed {
            a.view.clone()
        } else {
            self.clone()
        };
        if any_adv(&a.adv) {
            let v = match &value {
                Operand::Scalar(s) => scalar_tensor(*s, self.dtype()),
                Operand::Tensor(t) => strip_leading_ones(t)?,
            };
            dst.index_put_(&a.adv, &v, false)?;
            return Ok(());
        }
        match value {
            Operand::Scalar(s) => {
                dst.fill_(s)?;
            }
            Operand::Tensor(t) => {
                if t.shape() == dst.shape() {
                    // copy_ itself rejects a partially overlapping source, like PyTorch
                    dst.copy_(&t)?;
                    return Ok(());
                }
                if t.dim() == 0 {
                    // PyTorch fills from a 0-dim value: it is read before anything is written
                    let v = if t.shares_storage(&dst) { t.copy()? } else { t };
                    dst.copy_(&v)?;
                    return Ok(());
                }
                let v = strip_leading_ones(&t)?;
                if v.numel() > 0 && v.shape().len() > dst.dim() {
                    bail!(
                        ShapeMismatch,
                        "index_set",
                        "expand: the number of sizes provided ({}) must be greater or equal to the number of dimensions in the tensor ({})",
                        dst.dim(),
                        v.dim()
                    );
                }
                let b = crate::layout::broadcast_shapes(&dst.shape(), &v.shape(), "index_set")?;
                if b != dst.shape() {
                    bail!(
                        ShapeMismatch,
                        "index_set",
                        "The expanded size of the tensor does not match: target sizes {:?}, tensor sizes {:?}",
                        dst.shape(),
                        v.shape()
                    );
                }
                dst.copy_(&v)?;
            }
        }
        Ok(())
    }

    /// Ergonomic [`Tensor::index_set`]: `x.i_set((0, ..), 1.0)`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 2], DType::I64)?;
    /// x.i_set((.., 0), 7)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![7, 0, 7, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn i_set(&self, idx: impl IntoIndices, value: impl Into<Operand>) -> Result<()> {
        self.index_set(&idx.into_indices(), value)
    }
}

fn strip_leading_ones(t: &Tensor) -> Result<Tensor> {
    let s = t.shape();
    let k = s.iter().take_while(|&&x| x == 1).count();
    if k == 0 {
        return Ok(t.clone());
    }
    let rest: Vec<i64> = s[k..].iter().map(|&x| x as i64).collect();
    t.view(&rest)
}

fn detached(indices: &[Option<Tensor>]) -> Vec<Option<Tensor>> {
    indices
        .iter()
        .map(|o| o.as_ref().map(|t| t.detach()))
        .collect()
}

/// `index`: grad = zeros(self).index_put(indices, grad, accumulate = true).
struct IndexBackward {
    shape: Vec<usize>,
    dtype: DType,
    indices: Vec<Option<Tensor>>,
}
impl Backward for IndexBackward {
    fn name(&self) -> &'static str {
        "IndexBackward0"
    }
    fn apply(
        &self,
        _: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let z = Tensor::zeros(&self.shape, self.dtype)?;
        let g = if g.dtype() != self.dtype {
            g.to_dtype(self.dtype)?
        } else {
            g
        };
        let gi = z.index_put(&self.indices, &g, true)?;
        // PyTorch accumulates into its zero tensor in place (`_index_put_impl_`): version 1
        gi.0.version.bump();
        Ok(smallvec::smallvec![Some(gi)])
    }
}

/// `index_put_`: self grad = grad with written positions zeroed (unless accumulate), values
/// grad = grad[indices] (every duplicate position gets grad).
struct IndexPutBackward {
    indices: Vec<Option<Tensor>>,
    accumulate: bool,
}
impl Backward for IndexPutBackward {
    fn name(&self) -> &'static str {
        "IndexPutBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let gs = if !ctx.needs(0) {
            None
        } else if self.accumulate {
            Some(g.clone())
        } else {
            let z = Tensor::zeros((), g.dtype())?;
            Some(g.index_put(&self.indices, &z, false)?)
        };
        let gv = if ctx.needs(1) {
            Some(g.index_tensors(&self.indices)?)
        } else {
            None
        };
        Ok(smallvec::smallvec![gs, gv])
    }
}
