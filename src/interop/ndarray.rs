//! `ndarray` conversions (feature `ndarray`), for every tapegrad dtype (`T` is the tensor's
//! element type: `f32`, `f64`, `half::f16`, `half::bf16`, the integers, `bool`, `C64`, `C128`).
//!
//! - [`read_array`]: a zero-copy [`ArrayViewD`] of a tensor's elements, borrowed from an
//!   [`ArrayRead`] guard that keeps the tensor's storage alive and read-locked. Any strided layout
//!   is viewed as it is (offsets, zero strides of `expand`, transposes). While the guard lives,
//!   writes to that storage wait for it (from another thread) — from the guard's own thread they
//!   would block forever, so drop the guard before writing through any tensor of that storage.
//! - [`to_array`]: an owned copy (memory order kept when the tensor's elements are dense,
//!   C order otherwise).
//! - [`from_array`]: a tensor holding a copy of an array. An array whose elements are dense in
//!   memory with non-negative strides (C order, Fortran order, any permutation) keeps its
//!   strides; anything else (negative strides, broadcasts, gaps) becomes a C-ordered tensor.
//!   tapegrad owns its storages' memory, so the elements are always copied once.
//!
//! ```
//! use tapegrad::{Tensor, interop::ndarray::{from_array, read_array, to_array}};
//! let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3])?.t()?;
//! {
//!     let guard = read_array::<f32>(&t)?;  // no copy: the view reads t's storage
//!     let v = guard.view();
//!     assert_eq!((v.shape(), v.strides()), (&[3, 2][..], &[1, 3][..]));
//!     assert_eq!(v[[2, 1]], 6.0);
//! }
//! let a = to_array::<f32>(&t)?;              // an owned copy
//! let back = from_array(&a)?;                // Fortran order: strides [1, 3] kept
//! assert_eq!((back.shape(), back.strides()), (vec![3, 2], vec![1, 3]));
//! assert_eq!(back.to_vec::<f32>()?, t.to_vec::<f32>()?);
//! # Ok::<(), tapegrad::Error>(())
//! ```

use crate::storage::ReadPin;
use crate::{Element, Result, Tensor, bail};
use ::ndarray::{ArrayBase, ArrayD, ArrayViewD, Data, Dimension, IxDyn, ShapeBuilder};
use std::marker::PhantomData;

/// A tensor's storage held alive and read-locked, with the tensor's geometry at the time of
/// [`read_array`]; [`view`](Self::view) borrows the elements without copying (an empty
/// tensor's view has zero strides). Not `Send`.
pub struct ArrayRead<T: Element> {
    pin: ReadPin,
    shape: Vec<usize>,
    strides: Vec<usize>,
    offset: usize,
    _t: PhantomData<T>,
}

impl<T: Element> std::fmt::Debug for ArrayRead<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ArrayRead")
            .field("dtype", &T::DTYPE)
            .field("shape", &self.shape)
            .field("strides", &self.strides)
            .field("offset", &self.offset)
            .finish()
    }
}

/// Pins `t`'s storage and checks that its geometry can be viewed: `t` is strided, of element
/// type `T` (`DTypeMismatch` otherwise), and its layout is one `ndarray` can express
/// (`Unsupported` for an empty tensor whose sizes or strides overflow `ndarray`'s `isize`
/// arithmetic).
pub fn read_array<T: Element>(t: &Tensor) -> Result<ArrayRead<T>> {
    const OP: &str = "read_array";
    t.check_strided(OP)?;
    check_dtype::<T>(t, OP)?;
    let d = t.data(); // storage and layout from one snapshot
    let r = ArrayRead {
        pin: ReadPin::new(d.storage),
        shape: d.layout.sizes().to_vec(),
        strides: d.layout.strides().to_vec(),
        offset: d.layout.offset(),
        _t: PhantomData,
    };
    r.try_view()?;
    Ok(r)
}

impl<T: Element> ArrayRead<T> {
    /// The tensor's elements as an `ndarray` view (shape, strides and offset as the tensor's).
    pub fn view(&self) -> ArrayViewD<'_, T> {
        self.try_view()
            .expect("internal: read_array checked that the layout is viewable")
    }

    fn try_view(&self) -> Result<ArrayViewD<'_, T>> {
        const OP: &str = "read_array";
        let elems = self.pin.elements::<T>(OP)?;
        // an empty tensor may sit past its storage's end and carry any strides: its view gets
        // zero strides (it addresses no element); any other layout is in bounds (the tensor
        // invariant, checked again by `from_shape`)
        let tail = elems.get(self.offset..).unwrap_or(&[]);
        let strides = if self.shape.contains(&0) {
            vec![0; self.shape.len()]
        } else {
            self.strides.clone()
        };
        let shape = IxDyn(&self.shape).strides(IxDyn(&strides));
        ArrayViewD::from_shape(shape, tail).map_err(|e| {
            crate::err!(
                Unsupported,
                OP,
                "ndarray cannot view shape {:?} with strides {:?} at offset {}: {}",
                self.shape,
                self.strides,
                self.offset,
                e
            )
        })
    }
}

/// An owned copy of `t` (`T` must be `t`'s element type, `DTypeMismatch` otherwise): memory
/// order is kept when `t`'s elements are dense (a transposed tensor gives a Fortran-ordered
/// array), C order otherwise.
pub fn to_array<T: Element>(t: &Tensor) -> Result<ArrayD<T>> {
    Ok(read_array::<T>(t)?.view().to_owned())
}

/// A tensor holding a copy of `a`'s elements: with `a`'s strides when its elements are dense
/// in memory with non-negative strides (C, Fortran or any permuted order), C-ordered
/// otherwise (negative strides, broadcast zero strides, gaps). The result has no autograd
/// history.
pub fn from_array<T: Element, S: Data<Elem = T>, D: Dimension>(
    a: &ArrayBase<S, D>,
) -> Result<Tensor> {
    let shape = a.shape().to_vec();
    let strides = a.strides();
    if let Some(mem) = a.as_slice_memory_order()
        && strides.iter().all(|&s| s >= 0)
    {
        // dense with non-negative strides: `mem` starts at the element of index 0, and `a`'s
        // strides address exactly `mem` (an empty or one-element array is C-ordered here)
        if a.len() <= 1 {
            return Tensor::from_slice(mem, &shape);
        }
        let flat = Tensor::from_slice(mem, &[mem.len()])?;
        let strides: Vec<usize> = strides.iter().map(|&s| s as usize).collect();
        let layout = crate::Layout::new(shape.as_slice(), strides.as_slice(), 0);
        return Ok(Tensor::from_parts(flat.storage(), layout, T::DTYPE));
    }
    let v: Vec<T> = a.iter().copied().collect();
    Tensor::from_vec(v, &shape)
}

fn check_dtype<T: Element>(t: &Tensor, op: &'static str) -> Result<()> {
    if t.dtype() != T::DTYPE {
        bail!(
            DTypeMismatch,
            op,
            "a tensor of dtype {} read as {}",
            t.dtype(),
            T::DTYPE
        );
    }
    Ok(())
}
