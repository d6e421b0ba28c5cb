//! Read access: geometry, dtype/device, version, view/storage relations and element reads.

use super::Tensor;
use crate::storage::Storage;
use crate::{DType, Device, Element, Result, bail};

impl Tensor {
    /// Sizes of every dim.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.shape(), vec![2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn shape(&self) -> Vec<usize> {
        self.0.data.read().layout.sizes().to_vec()
    }
    /// Size of one dim (negative counts from the end).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.size(-1)?, 3);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn size(&self, dim: impl crate::Dim) -> Result<usize> {
        let dim = crate::tensor::dims::dim(dim, "size")?;
        let d = self.0.data.read();
        let w = crate::layout::wrap_dim(dim, d.layout.dim(), "size")?;
        Ok(if d.layout.dim() == 0 {
            1
        } else {
            d.layout.sizes()[w]
        })
    }
    /// Strides in elements.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.strides(), vec![3, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn strides(&self) -> Vec<usize> {
        self.0.data.read().layout.strides().to_vec()
    }
    /// Offset of the first element in the storage, in elements.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[4], DType::F32)?;
    /// assert_eq!(x.narrow(0, 1, 2)?.storage_offset(), 1);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn storage_offset(&self) -> usize {
        self.0.data.read().layout.offset()
    }
    /// The full layout (sizes, strides, offset).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2], DType::F32)?.layout().numel(), 2);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn layout(&self) -> crate::Layout {
        self.0.data.read().layout.clone()
    }
    /// Element type.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[1], DType::BF16)?.dtype(), DType::BF16);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dtype(&self) -> DType {
        self.0.dtype.get()
    }
    /// Device.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, Device};
    /// assert_eq!(Tensor::zeros(&[1], DType::F32)?.device(), Device::Cpu);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn device(&self) -> Device {
        self.0.device
    }
    /// Number of elements.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.numel(), 6);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn numel(&self) -> usize {
        self.0.data.read().layout.numel()
    }
    /// Number of dims.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::zeros(&[2, 3], DType::F32)?.dim(), 2);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dim(&self) -> usize {
        self.0.data.read().layout.dim()
    }
    /// PyTorch's `is_contiguous()`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 3], DType::F32)?;
    /// assert!(x.is_contiguous() && !x.t()?.is_contiguous());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn is_contiguous(&self) -> bool {
        self.0.data.read().layout.is_contiguous()
    }
    /// The current value of the shared version counter (PyTorch `_version`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// x.fill_(1.0)?;
    /// assert_eq!(x.version(), 1);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn version(&self) -> u64 {
        self.0.version.current()
    }
    /// The storage handle (shared with every alias).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// assert_eq!(x.storage().nbytes(), 8);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn storage(&self) -> Storage {
        self.0.data.read().storage.clone()
    }
    /// True if both tensors use the same storage object.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2, 2], DType::F32)?;
    /// assert!(x.t()?.shares_storage(&x));
    /// assert!(!x.copy()?.shares_storage(&x));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn shares_storage(&self, other: &Tensor) -> bool {
        self.storage().same(&other.storage())
    }

    /// All elements in row-major logical order. `T` must be the tensor's element type: another
    /// is a `DTypeMismatch` error, never a silent conversion (cast first with
    /// [`to_dtype`](Tensor::to_dtype)).
    ///
    /// ```
    /// # use tapegrad::{DType, ErrorKind, Tensor};
    /// let x = Tensor::from_vec(vec![1.5f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(x.t()?.to_vec::<f32>()?, vec![1.5, 3.0, 2.0, 4.0]);
    /// assert_eq!(x.to_vec::<i64>().unwrap_err().kind(), ErrorKind::DTypeMismatch);
    /// assert_eq!(x.to_dtype(DType::I64)?.to_vec::<i64>()?, vec![1, 2, 3, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
        self.check_strided("to_vec")?;
        check_element::<T>(self.dtype(), "to_vec")?;
        crate::backend::read_vec(&self.data(), self.dtype())
    }

    /// The elements converted to `T` with C-style casts (crate-internal: printing, index
    /// tensors of any integer dtype, checkpoint counters).
    pub(crate) fn read_as<T: Element>(&self) -> Result<Vec<T>> {
        self.check_strided("to_vec")?;
        crate::backend::read_vec(&self.data(), self.dtype())
    }

    /// The single element of a one-element tensor, of its element type `T` (another is a
    /// `DTypeMismatch` error, as for [`to_vec`](Tensor::to_vec)).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::scalar(3i64).item::<i64>()?, 3);
    /// assert!(Tensor::scalar(3i64).item::<f64>().is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn item<T: Element>(&self) -> Result<T> {
        check_element::<T>(self.dtype(), "item")?;
        self.item_as::<T>()
    }

    /// [`item`](Tensor::item) converted to `T` with a C-style cast (crate-internal).
    pub(crate) fn item_as<T: Element>(&self) -> Result<T> {
        let n = self.numel();
        if n != 1 {
            bail!(
                InvalidArgument,
                "item",
                "a Tensor with {} elements cannot be converted to Scalar",
                n
            );
        }
        Ok(self.read_as::<T>()?[0])
    }
}

/// Refuses to read elements of `dtype` as `T` unless `T` is that dtype.
fn check_element<T: Element>(dtype: DType, op: &'static str) -> Result<()> {
    if T::DTYPE != dtype {
        bail!(
            DTypeMismatch,
            op,
            "the tensor's dtype is {:?} but {}::<{}> reads {:?} elements; cast explicitly with to_dtype(DType::{:?}) first",
            dtype,
            op,
            std::any::type_name::<T>(),
            T::DTYPE,
            T::DTYPE
        );
    }
    Ok(())
}
