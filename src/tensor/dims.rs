//! The integer convention of the public API: every size, dim, index or count argument accepts
//! any of Rust's common integer types, and every list of sizes or dims accepts any list of them.
//!
//! - [`Dim`]: one integer (`i64`, `i32`, `isize`, `usize`, `u32`, `u64`). Dims and indices may
//!   be negative where PyTorch allows it (counted from the end); sizes and counts may not.
//! - [`MaybeDim`]: an optional one, where PyTorch takes `dim=None` (`argmax`, `squeeze_`) or an
//!   omitted bound (`slice`): any [`Dim`], or `None`/`Some(i64)`.
//! - [`IntoShape`]: a list of such integers: `&[T]`, `[T; N]`, `&[T; N]`, `Vec<T>`, `&Vec<T>`
//!   (sizes for `view`/`reshape`/`from_vec`/`zeros`/..., dims for `permute`/`sum_dims`/...).
//!   `view`, `reshape`, `expand` and `unflatten` take `-1` as PyTorch does. The empty list (a
//!   0-dim shape) is `()`, since an empty literal `&[]` leaves Rust no element type to infer.
//!
//! What the methods return stays `usize` (`shape()`, `size(d)`, `dim()`), as Rust indexes with
//! it. A value that does not fit (a `usize` above `i64::MAX`) or is negative where it may not be
//! is an `InvalidArgument` error naming the op, never a wrapping cast.

use crate::{Result, bail};
use smallvec::SmallVec;

/// Integer lists as converted (no allocation up to 6 entries).
pub(crate) type Ints = SmallVec<[i64; 6]>;

mod sealed {
    pub trait Sealed {}
}

/// One integer argument (a dim, an index, a size or a count) of any common integer type; see
/// the [module rule](crate#integers). Integer literals work as they are (`x.transpose(0, 1)`).
pub trait Dim: Copy + sealed::Sealed {
    /// The value as an `i64`, or `None` if it does not fit.
    #[doc(hidden)]
    fn to_i64(self) -> Option<i64>;
}

macro_rules! dim_impls {
    ($($t:ty),*) => {$(
        impl sealed::Sealed for $t {}
        impl Dim for $t {
            fn to_i64(self) -> Option<i64> {
                i64::try_from(self).ok()
            }
        }
    )*};
}
dim_impls!(i64, i32, isize, usize, u32, u64);

/// An optional [`Dim`]: a plain integer of any [`Dim`] type (`x.argmax(1, false)`), `Some(v)`
/// with an `i64` (or an integer literal), or `None` (`x.argmax(None, false)`: PyTorch's
/// `dim=None`). Only `Option<i64>` is an option form, so a bare `None` needs no type.
pub trait MaybeDim: Copy {
    /// `None` for an absent value, else the value as an `i64` (`Some(None)` if it does not fit).
    #[doc(hidden)]
    fn to_opt_i64(self) -> Option<Option<i64>>;
}

impl<T: Dim> MaybeDim for T {
    fn to_opt_i64(self) -> Option<Option<i64>> {
        Some(self.to_i64())
    }
}

impl MaybeDim for Option<i64> {
    fn to_opt_i64(self) -> Option<Option<i64>> {
        self.map(Some)
    }
}

/// A list of sizes or dims of any [`Dim`] type: `&[T]`, `[T; N]`, `&[T; N]`, `Vec<T>`, `&Vec<T>`
/// (so `x.view(&[2, 3])`, `x.view(&[-1i64, 3])`, `x.view(y.shape())` and
/// `Tensor::zeros(&y.shape(), dtype)` all work).
pub trait IntoShape {
    /// The entries as `i64`s, or the first one that does not fit.
    #[doc(hidden)]
    fn to_i64s(&self) -> std::result::Result<Ints, u64>;
}

fn collect<T: Dim + TryInto<u64>>(s: &[T]) -> std::result::Result<Ints, u64> {
    s.iter()
        .map(|&v| v.to_i64().ok_or_else(|| v.try_into().unwrap_or(u64::MAX)))
        .collect()
}

/// The empty list (a 0-dim shape): `Tensor::zeros((), dtype)`. (An empty literal `&[]` has no
/// element type for Rust to infer; `&[] as &[i64]` works too.)
impl IntoShape for () {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        Ok(Ints::new())
    }
}
impl<T: Dim + TryInto<u64>> IntoShape for &[T] {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}
impl<T: Dim + TryInto<u64>> IntoShape for &mut [T] {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}
impl<T: Dim + TryInto<u64>, const N: usize> IntoShape for [T; N] {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}
impl<T: Dim + TryInto<u64>, const N: usize> IntoShape for &[T; N] {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(*self)
    }
}
impl<T: Dim + TryInto<u64>> IntoShape for Vec<T> {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}
impl<T: Dim + TryInto<u64>> IntoShape for &Vec<T> {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}
impl<T: Dim + TryInto<u64>, A: smallvec::Array<Item = T>> IntoShape for &SmallVec<A> {
    fn to_i64s(&self) -> std::result::Result<Ints, u64> {
        collect(self)
    }
}

/// One dim or index (negative allowed: the op wraps it).
pub(crate) fn dim(d: impl Dim, op: &'static str) -> Result<i64> {
    match d.to_i64() {
        Some(v) => Ok(v),
        None => bail!(InvalidArgument, op, "{}: value out of range for int64", op),
    }
}

/// An optional dim or index (negative allowed), `None` when absent.
pub(crate) fn maybe_dim(d: impl MaybeDim, op: &'static str) -> Result<Option<i64>> {
    match d.to_opt_i64() {
        None => Ok(None),
        Some(Some(v)) => Ok(Some(v)),
        Some(None) => bail!(InvalidArgument, op, "{}: value out of range for int64", op),
    }
}

/// One size or count, which must be non-negative; `negative` words the error for a negative
/// value (PyTorch's message for the op).
pub(crate) fn size(
    d: impl Dim,
    op: &'static str,
    negative: impl FnOnce(i64) -> String,
) -> Result<usize> {
    let v = dim(d, op)?;
    if v < 0 {
        return Err(crate::Error::new(
            crate::ErrorKind::InvalidArgument,
            op,
            negative(v),
        ));
    }
    Ok(v as usize)
}

/// A list of dims or sizes as given (negative entries kept, for the op to check).
pub(crate) fn ints(s: impl IntoShape, op: &'static str) -> Result<Ints> {
    match s.to_i64s() {
        Ok(v) => Ok(v),
        Err(big) => bail!(
            InvalidArgument,
            op,
            "{}: size {} does not fit in int64",
            op,
            big
        ),
    }
}

/// A list of sizes of a tensor to create: every entry non-negative (PyTorch's "Trying to create
/// tensor with negative dimension").
pub(crate) fn sizes(s: impl IntoShape, op: &'static str) -> Result<Vec<usize>> {
    let v = ints(s, op)?;
    if let Some(&d) = v.iter().find(|&&d| d < 0) {
        if op == "zeros" {
            bail!(
                InvalidArgument,
                op,
                "zeros: Dimension size must be non-negative."
            );
        }
        bail!(
            InvalidArgument,
            op,
            "Trying to create tensor with negative dimension {}: {:?}",
            d,
            &v[..]
        );
    }
    Ok(v.iter().map(|&d| d as usize).collect())
}

/// PyTorch's `int | tuple` geometry arguments of the nn ops and layers (`kernel_size`,
/// `stride`, `padding`, `dilation`, `output_size`): one integer of any [`Dim`] type (`3`,
/// `3usize`: the same value for every spatial dim) or any [`IntoShape`] list (`[3, 3]`,
/// `&[3i64, 2]`, `vec![3u32]`, `&Vec<i64>`). `()` is the empty list and `None` (an
/// `Option<i64>`) is absent: the op's default where it has one (a pooling's `stride`: the
/// kernel size); `Some(v)` is `v`. Negative values reach the op, which refuses them with
/// PyTorch's message for its family.
pub trait IntoGeometry {
    /// Every entry as an `i64`, or the value that does not fit.
    #[doc(hidden)]
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]>;
}

/// The entries of a list of [`Dim`]s, each as an `i64` or the value that does not fit.
fn entries<T: Dim + TryInto<u64>>(s: &[T]) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
    s.iter()
        .map(|&v| v.to_i64().ok_or_else(|| v.try_into().unwrap_or(u64::MAX)))
        .collect()
}

macro_rules! geometry_impls {
    ($($t:ty),*) => {$(
        impl IntoGeometry for $t {
            fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
                entries(std::slice::from_ref(self))
            }
        }
    )*};
}
geometry_impls!(i64, i32, isize, usize, u32, u64);

impl IntoGeometry for Option<i64> {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        self.iter().map(|&v| Ok(v)).collect()
    }
}
impl IntoGeometry for () {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        SmallVec::new()
    }
}
impl<T: Dim + TryInto<u64>> IntoGeometry for &[T] {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        entries(self)
    }
}
impl<T: Dim + TryInto<u64>> IntoGeometry for Vec<T> {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        entries(self)
    }
}
impl<T: Dim + TryInto<u64>> IntoGeometry for &Vec<T> {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        entries(self)
    }
}
impl<T: Dim + TryInto<u64>, const N: usize> IntoGeometry for [T; N] {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        entries(self)
    }
}
impl<T: Dim + TryInto<u64>, const N: usize> IntoGeometry for &[T; N] {
    fn geometry_entries(&self) -> SmallVec<[std::result::Result<i64, u64>; 6]> {
        entries(*self)
    }
}

/// A geometry argument with every entry that does not fit in `i64` kept as `i64::MAX`: the
/// infallible conversion of the options structs' `From` impls and setters.
pub(crate) fn geometry_saturated(g: &impl IntoGeometry) -> Vec<i64> {
    g.geometry_entries()
        .into_iter()
        .map(|v| v.unwrap_or(i64::MAX))
        .collect()
}

/// A geometry argument as given (negative entries kept, for the op to check with its own
/// message).
pub(crate) fn geometry(g: impl IntoGeometry, op: &'static str) -> Result<Ints> {
    match g.geometry_entries().into_iter().collect() {
        Ok(v) => Ok(v),
        Err(big) => bail!(
            InvalidArgument,
            op,
            "{}: value {} does not fit in int64",
            op,
            big
        ),
    }
}
