//! `set_` (re-point a tensor at another storage / geometry) and `resize_` / `resize_as_` /
//! `resize_with`. Both keep the tensor's own version counter (bumped once), never make it a
//! view, and grow a shared storage in place (new bytes zero, or NaN / max with
//! [`ResizeFill::Nan`]).
//!
//! Derivative rules: `set_` has none (backward through it is a `NotImplemented` error);
//! `resize_` is not differentiable (it refuses tensors that require grad).

use crate::autograd::{check_inplace, is_grad_enabled, record_inplace};
use crate::dtype::Category;
use crate::layout::{Layout, contiguous_strides};
use crate::ops::grad::backward;
use crate::tensor::TensorData;
use crate::{DType, Result, Scalar, Storage, Tensor, bail, err};

/// How `resize_with` fills bytes beyond the old storage size.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ResizeFill {
    /// Zero bytes (the default of `resize_`).
    Zero,
    /// NaN for floating/complex dtypes, the maximum for integers, `true` for bool (PyTorch's
    /// deterministic fill).
    Nan,
}

fn cpp_name(d: DType) -> &'static str {
    match d {
        DType::F32 => "float",
        DType::F64 => "double",
        DType::I64 => "long int",
        DType::I32 => "int",
        DType::I16 => "short int",
        DType::I8 => "signed char",
        DType::U8 => "unsigned char",
        DType::Bool => "bool",
        DType::F16 => "c10::Half",
        DType::BF16 => "c10::BFloat16",
        _ => d.name(),
    }
}

/// `set_` has no derivative: backward through it fails.
struct SetBackward;
backward!(SetBackward, "NotImplemented", |self, _, _| {
    Err(err!(
        NotImplemented,
        "set_",
        "derivative for set_ is not implemented"
    ))
});

impl Tensor {
    fn set_impl(
        &self,
        storage: Storage,
        offset: usize,
        sizes: &[usize],
        strides: Option<&[usize]>,
        src: Option<&Tensor>,
    ) -> Result<Tensor> {
        if let Some(st) = strides
            && st.len() != sizes.len()
        {
            bail!(
                InvalidArgument,
                "set_",
                "unequal size length ({}) and stride length ({})",
                sizes.len(),
                st.len()
            );
        }
        if storage.device() != self.device() {
            bail!(
                InvalidArgument,
                "set_",
                "Attempted to set the storage of a tensor on another device"
            );
        }
        // the element count must fit in i64 even when stride 0 keeps the span small (PyTorch's
        // "numel: integer multiplication overflow"; libFuzzer set_resize finding)
        crate::layout::check_numel_i64(sizes, "set_")?;
        let strides = strides
            .map(|s| s.to_vec())
            .unwrap_or_else(|| contiguous_strides(sizes));
        let isz = self.dtype().size();
        let needed = Layout::checked_storage_span(sizes, &strides, offset)
            .and_then(|n| n.checked_mul(isz))
            .ok_or_else(|| {
                err!(
                    InvalidArgument,
                    "set_",
                    "Storage size calculation overflowed with sizes={:?}",
                    sizes
                )
            })?;
        let cur = self.layout();
        let same_geometry = cur.sizes() == sizes && cur.strides() == &strides[..];
        if needed > storage.nbytes() && (same_geometry || !storage.resizable()) {
            if same_geometry {
                bail!(
                    InvalidArgument,
                    "set_",
                    "setStorage: sizes {:?}, strides {:?}, storage offset {}, and itemsize {} requiring a storage size of {} are out of bounds for storage of size {}",
                    sizes,
                    strides,
                    offset,
                    isz,
                    needed,
                    storage.nbytes()
                );
            }
            bail!(
                NotResizable,
                "set_",
                "Trying to resize storage that is not resizable"
            );
        }
        let others: Vec<&Tensor> = src.into_iter().collect();
        let rec = check_inplace(self, &others)?;
        // reading a byte other than 0 or 1 as `bool` is undefined behaviour: a bool tensor
        // never shares its storage with a tensor of another dtype (which may write any byte),
        // nor goes over bytes other than 0 and 1 (PyTorch allows both)
        let is_bool = self.dtype() == DType::Bool;
        if !storage.try_admit_reader(is_bool) {
            bail!(
                DTypeMismatch,
                "set_",
                "a {} tensor cannot be set over this storage: {}",
                cpp_name(self.dtype()),
                if is_bool {
                    "it holds bytes other than 0 and 1 or is shared with a tensor of another dtype"
                } else {
                    "it is shared with a bool tensor, whose bytes must stay 0 or 1"
                }
            );
        }
        storage.grow_to(needed, "set_")?;
        *self.0.data.write() = TensorData {
            storage,
            layout: Layout::new(sizes.to_vec(), strides, offset),
        };
        self.0.version.bump();
        if rec.is_some() {
            record_inplace(rec, self, Vec::new, SetBackward)?;
        } else if !is_grad_enabled() {
            self.0.meta.lock().grad_accumulator = None;
        }
        Ok(self.clone())
    }

    /// `set_(src)`: alias `src`'s storage with its offset, sizes and strides (dtypes must match).
    /// `self` keeps its own version counter (bumped once) and does not become a view.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![9.0f64], &[1])?;
    /// let y = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
    /// x.set_(&y)?;
    /// assert!(x.is_set_to(&y) && x.shares_storage(&y));
    /// assert_eq!((x.version(), y.version()), (1, 0));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn set_(&self, src: &Tensor) -> Result<Tensor> {
        if src.dtype() != self.dtype() {
            bail!(
                DTypeMismatch,
                "set_",
                "Could not set tensor of type {} to a tensor of type {}",
                cpp_name(src.dtype()),
                cpp_name(self.dtype())
            );
        }
        let d = src.data();
        let l = d.layout;
        self.set_impl(
            d.storage,
            l.offset(),
            l.sizes(),
            Some(l.strides()),
            Some(src),
        )
    }

    /// `set_()`: a fresh empty resizable storage, shape `[0]`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2, 2], DType::F32)?;
    /// x.set_empty()?;
    /// assert_eq!((x.shape(), x.version()), (vec![0], 1));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn set_empty(&self) -> Result<Tensor> {
        self.set_impl(Storage::zeroed(0)?, 0, &[0], None, None)
    }

    /// `set_(storage, offset, sizes, strides)` (offset and strides in elements; `None` strides
    /// = contiguous). Grows the storage when the new geometry needs more bytes.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let y = Tensor::arange(0, 6, 1)?;
    /// let x = Tensor::zeros(&[1], DType::I64)?;
    /// x.set_storage(&y.storage(), 1, &[2], Some(&[2]))?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn set_storage(
        &self,
        storage: &Storage,
        offset: usize,
        sizes: &[usize],
        strides: Option<&[usize]>,
    ) -> Result<Tensor> {
        self.set_impl(storage.clone(), offset, sizes, strides, None)
    }

    /// `set_(src, offset, sizes, strides)`: `src` must be contiguous; `offset` adds to its own
    /// offset; bytes are reinterpreted (no dtype check).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let y = Tensor::arange(0, 10, 1)?;
    /// let x = Tensor::zeros(&[1], DType::I64)?;
    /// x.set_with(&y, 2, &[2, 3], Some(&[1, 2]))?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![2, 4, 6, 3, 5, 7]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn set_with(
        &self,
        src: &Tensor,
        offset: usize,
        sizes: &[usize],
        strides: Option<&[usize]>,
    ) -> Result<Tensor> {
        if !src.is_contiguous() {
            bail!(
                InvalidArgument,
                "set_",
                "passed in tensor to be used as storage must be contiguous"
            );
        }
        let d = src.data();
        // PyTorch adds the element offsets literally (even across dtypes)
        let off = offset.checked_add(d.layout.offset()).ok_or_else(|| {
            err!(
                InvalidArgument,
                "set_",
                "storage offset {} + {} overflows",
                offset,
                d.layout.offset()
            )
        })?;
        self.set_impl(d.storage, off, sizes, strides, Some(src))
    }

    /// PyTorch `is_set_to`: same storage, offset, sizes and strides.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// assert!(x.is_set_to(&x.detach()));
    /// assert!(!x.is_set_to(&x.view(&[1, 2])?));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_set_to(&self, other: &Tensor) -> bool {
        let (a, b) = (self.data(), other.data());
        a.storage.same(&b.storage) && a.layout == b.layout
    }

    /// `resize_(sizes)`: contiguous strides (offset kept); grows the (shared) storage with zero
    /// bytes when needed, never shrinks it. Refuses tensors that require grad. Bumps the version
    /// only when the sizes change.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3], &[3])?;
    /// x.resize_(&[2])?;
    /// x.resize_(&[4])?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 2, 3, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn resize_(&self, sizes: impl crate::IntoShape) -> Result<Tensor> {
        let sizes = crate::tensor::dims::sizes(sizes, "resize_")?;
        let sizes = &sizes[..];
        self.resize_with(sizes, ResizeFill::Zero)
    }

    /// `resize_as_(other)`: [`Tensor::resize_`] to `other`'s sizes.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// x.resize_as_(&Tensor::zeros(&[2, 3], DType::F64)?)?;
    /// assert_eq!(x.shape(), vec![2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn resize_as_(&self, other: &Tensor) -> Result<Tensor> {
        self.resize_(&other.shape())
    }

    /// [`Tensor::resize_`] choosing how new storage bytes are filled.
    ///
    /// ```
    /// # use tapegrad::{Tensor, ResizeFill};
    /// let x = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// x.resize_with(&[2], ResizeFill::Nan)?;
    /// assert!(x.to_vec::<f32>()?[1].is_nan());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn resize_with(&self, sizes: impl crate::IntoShape, fill: ResizeFill) -> Result<Tensor> {
        let sizes = crate::tensor::dims::sizes(sizes, "resize_with")?;
        let sizes = &sizes[..];
        if self.requires_grad() {
            bail!(
                ResizeRequiresGrad,
                "resize_",
                "cannot resize variables that require grad"
            );
        }
        let d = self.data();
        if d.layout.sizes() == sizes {
            return Ok(self.clone());
        }
        // int64 sizes and element count, like `set_` (an empty shape may carry huge sizes)
        crate::layout::check_numel_i64(sizes, "resize_")?;
        let isz = self.dtype().size();
        let strides = contiguous_strides(sizes);
        let needed = Layout::checked_storage_span(sizes, &strides, d.layout.offset())
            .and_then(|n| n.checked_mul(isz))
            .ok_or_else(|| {
                err!(
                    InvalidArgument,
                    "resize_",
                    "Storage size calculation overflowed with sizes={:?}",
                    sizes
                )
            })?;
        let old = d.storage.nbytes();
        if needed > old {
            d.storage.grow_to(needed, "resize_")?;
            if fill == ResizeFill::Nan {
                fill_tail(&d.storage, self.dtype(), old.div_ceil(isz), needed / isz);
            }
        }
        self.0.data.write().layout = Layout::new(sizes.to_vec(), strides, d.layout.offset());
        self.0.version.bump();
        Ok(self.clone())
    }
}

/// Fills elements `from..to` of `s` (clamped to its length) with the NaN-like value of `dt`:
/// NaN for floating dtypes, `true` for bool, the maximum for integers (PyTorch's debug fill of
/// `resize_`).
fn fill_tail(s: &Storage, dt: DType, from: usize, to: usize) {
    let v = match dt.category() {
        Category::Bool => Scalar::Bool(true),
        Category::Integral => Scalar::Int(match dt {
            DType::U8 => u8::MAX as i64,
            DType::I8 => i8::MAX as i64,
            DType::I16 => i16::MAX as i64,
            DType::I32 => i32::MAX as i64,
            _ => i64::MAX,
        }),
        _ => Scalar::Float(f64::NAN),
    };
    let to = to.min(s.nbytes() / dt.size());
    if from >= to {
        return;
    }
    let region = TensorData {
        storage: s.clone(),
        layout: Layout::new(&[to - from][..], &[1usize][..], from),
    };
    crate::backend::fill(&region, dt, v);
}
