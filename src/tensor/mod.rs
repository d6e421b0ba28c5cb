//! `Tensor`: a cheap-to-clone handle (`Arc<TensorImpl>`) to storage + layout + dtype + device +
//! version counter + autograd metadata.
//!
//! Storage and layout sit behind a `RwLock` because `set_`, `resize_` and in-place view ops
//! (`t_`, `unsqueeze_`) re-point a tensor, and every handle of that tensor must see it. The
//! version counter is fixed for the life of a `TensorImpl` (views and `detach` share their root's
//! counter; `set_` never merges counters). Cloning a `Tensor` clones the handle; PyTorch's
//! `clone()` (a data copy) is [`Tensor::copy`]. The Rust operators (`+`, `+=`, ...) are in
//! `operators.rs`.

mod access;
mod create;
pub(crate) mod dims;
mod display;
mod literal;
mod operators;
mod retype;

pub(crate) mod version;

pub(crate) use create::materialize;
pub use literal::Nested;
use retype::AtomicDType;
use version::TensorVersion;
pub use version::VersionCounter;

use crate::autograd::AutogradMeta;
use crate::layout::Layout;
use crate::storage::Storage;
use crate::{DType, Device, Result};
use parking_lot::{Mutex, RwLock, RwLockReadGuard};
use std::sync::Arc;

/// A strided (or sparse) tensor: a cheap handle on storage, layout, dtype, version counter and
/// autograd state.
///
/// # `clone()` copies the handle, not the data
///
/// Coming from PyTorch: `t.clone()` in Rust is *not* `torch.clone`. It gives a second handle on
/// the same tensor (same storage, version counter, `grad`, history), like assigning `u = t` in
/// Python; writing through one handle is seen through the other. PyTorch's `clone()`, a
/// differentiable copy with its own storage, is [`Tensor::copy`]; [`Tensor::detach`] shares the
/// data without the history.
///
/// ```
/// use tapegrad::Tensor;
/// let t = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
/// let same = t.clone(); // the same tensor: `u = t` in Python
/// let data = t.copy()?; // torch.clone(t): new storage
/// t.add_(1.0)?;
/// assert_eq!(same.to_vec::<f32>()?, vec![2.0, 3.0]);
/// assert_eq!(data.to_vec::<f32>()?, vec![1.0, 2.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
///
/// # Operators
///
/// `+ - * / %` (tensors and Rust numbers on either side; `f64`/`i64` on the left), unary `-`,
/// and the compound assignments (`+=` is [`add_`](Tensor::add_)) are the op methods, panicking
/// with the method's error where the method would return one; the methods are the checked way.
/// See the `Add`, `AddAssign`, ... implementations below and `src/tensor/operators.rs`.
///
/// ```
/// use tapegrad::Tensor;
/// let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?.requires_grad_(true)?;
/// let w = Tensor::from_vec(vec![3.0f64, 4.0], &[2])?;
/// let y = (&x * &w + 1.0) / 2.0 - &x % 1.5;
/// y.sum()?.backward()?;
/// assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![0.5, 1.0]);
/// let mut z = x.detach().copy()?;
/// z += &w;       // add_: bumps z's version
/// z *= 2;
/// assert_eq!((z.to_vec::<f64>()?, z.version()), (vec![8.0, 12.0], 2));
/// assert_eq!((-(1.0 - &w)).to_vec::<f64>()?, vec![2.0, 3.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
///
/// # Reading values
///
/// [`to_vec::<T>`](Tensor::to_vec) and [`item::<T>`](Tensor::item) read elements of dtype `T`
/// and refuse any other (`DTypeMismatch`): a cast is explicit, [`to_dtype`](Tensor::to_dtype)
/// first.
#[derive(Clone)]
pub struct Tensor(pub(crate) Arc<TensorImpl>);

/// The storage and geometry of a tensor (changed only by `set_`/`resize_`/in-place view ops).
#[derive(Clone, Debug)]
pub(crate) struct TensorData {
    pub(crate) storage: Storage,
    pub(crate) layout: Layout,
}

pub(crate) struct TensorImpl {
    /// The element type: fixed except by [`Tensor::retype_`] (`Module::to`), which keeps every
    /// (dtype, storage) pair a reader can observe inside its storage (see `retype.rs`).
    pub(crate) dtype: AtomicDType,
    pub(crate) device: Device,
    pub(crate) version: TensorVersion,
    pub(crate) data: RwLock<TensorData>,
    pub(crate) meta: Mutex<AutogradMeta>,
    /// The sparse payload (`None` for strided tensors). A sparse tensor's `data` holds its shape
    /// with zero strides over a one-element dummy storage, so a dense kernel that is ever handed
    /// one reads a single zero instead of touching memory it does not own; every dense entry
    /// point rejects sparse inputs with `Unsupported` before that (see `check_strided`).
    pub(crate) sparse: Option<Box<crate::sparse::SparseParts>>,
}

impl Tensor {
    /// Wraps storage + layout in a fresh tensor with a fresh version counter and no autograd.
    pub(crate) fn from_parts(storage: Storage, layout: Layout, dtype: DType) -> Tensor {
        Self::build(storage, layout, dtype, TensorVersion::new())
    }

    /// Wraps storage + layout in a fresh tensor counting its versions in `version` (shared with
    /// the tensors it aliases).
    pub(crate) fn from_parts_with_version(
        storage: Storage,
        layout: Layout,
        dtype: DType,
        version: VersionCounter,
    ) -> Tensor {
        Self::build(storage, layout, dtype, TensorVersion::shared(version))
    }

    fn build(storage: Storage, layout: Layout, dtype: DType, version: TensorVersion) -> Tensor {
        Self::build_with(storage, layout, dtype, version, AutogradMeta::default())
    }

    /// [`from_parts_with_version`](Self::from_parts_with_version) with its autograd fields
    /// already filled in (a view's: set before anyone can lock them).
    pub(crate) fn from_parts_with_meta(
        storage: Storage,
        layout: Layout,
        dtype: DType,
        version: VersionCounter,
        meta: AutogradMeta,
    ) -> Tensor {
        Self::build_with(storage, layout, dtype, TensorVersion::shared(version), meta)
    }

    fn build_with(
        storage: Storage,
        layout: Layout,
        dtype: DType,
        version: TensorVersion,
        meta: AutogradMeta,
    ) -> Tensor {
        storage.note_reader(dtype == DType::Bool);
        Tensor(Arc::new(TensorImpl {
            dtype: AtomicDType::new(dtype),
            device: storage.device(),
            version,
            data: RwLock::new(TensorData { storage, layout }),
            meta: Mutex::new(meta),
            sparse: None,
        }))
    }

    /// Wraps a sparse payload (shape `shape`, element type `dtype`) in a fresh tensor.
    pub(crate) fn from_sparse_parts(
        parts: crate::sparse::SparseParts,
        shape: &[usize],
        dtype: DType,
        version: VersionCounter,
    ) -> Result<Tensor> {
        let storage = Storage::zeroed(16)?;
        let layout = Layout::new(shape.to_vec(), vec![0; shape.len()], 0);
        Ok(Self::build_sparse(
            parts,
            TensorData { storage, layout },
            dtype,
            TensorVersion::shared(version),
        ))
    }

    fn build_sparse(
        parts: crate::sparse::SparseParts,
        data: TensorData,
        dtype: DType,
        version: TensorVersion,
    ) -> Tensor {
        Tensor(Arc::new(TensorImpl {
            dtype: AtomicDType::new(dtype),
            device: data.storage.device(),
            version,
            data: RwLock::new(data),
            meta: Mutex::new(AutogradMeta::default()),
            sparse: Some(Box::new(parts)),
        }))
    }

    /// The sparse payload, if this tensor is sparse.
    pub(crate) fn sparse_parts(&self) -> Option<&crate::sparse::SparseParts> {
        self.0.sparse.as_deref()
    }

    /// `Unsupported` if this tensor is sparse: the guard at the entry of every dense op.
    #[inline]
    pub(crate) fn check_strided(&self, op: &'static str) -> Result<()> {
        if let Some(p) = &self.0.sparse {
            return Err(crate::sparse::dense_op_error(op, p, &self.shape()));
        }
        Ok(())
    }

    /// A consistent snapshot of storage handle + layout.
    pub(crate) fn data(&self) -> TensorData {
        self.0.data.read().clone()
    }

    pub(crate) fn data_ref(&self) -> RwLockReadGuard<'_, TensorData> {
        self.0.data.read()
    }

    /// A tensor sharing this one's storage, layout and version counter but with no autograd
    /// metadata (PyTorch's `tensor_data()` / what `detach()` builds on).
    pub(crate) fn shallow(&self) -> Tensor {
        let d = self.data();
        if let Some(p) = &self.0.sparse {
            let version = TensorVersion::shared(self.0.version.share());
            return Self::build_sparse((**p).clone(), d, self.dtype(), version);
        }
        Self::from_parts_with_version(d.storage, d.layout, self.dtype(), self.0.version.share())
    }

    /// True if `self` and `other` are the same tensor object (not merely equal data).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::zeros(&[2], tapegrad::DType::F32)?;
    /// let b = a.clone();
    /// assert!(a.is_same(&b));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_same(&self, other: &Tensor) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

// The handle must stay shareable across threads.
const _: () = {
    const fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Tensor>();
};
