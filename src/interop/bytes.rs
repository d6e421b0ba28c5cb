//! Element bytes in files ↔ storages: file data is little- or big-endian, storages hold native
//! order. Loading copies a record into a fresh storage once (swapping byte order only when the
//! file's differs from the machine's, and mapping every nonzero bool byte to 1 so an untrusted
//! file cannot plant an invalid `bool`); saving reads a storage or tensor back as file bytes.

use crate::dtype::{C64, C128, DType};
use crate::{Result, Storage, Tensor, bail};

/// Byte order of a file's element data.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Endian {
    Little,
    Big,
}

impl Endian {
    pub(crate) const NATIVE: Endian = if cfg!(target_endian = "little") {
        Endian::Little
    } else {
        Endian::Big
    };
}

/// Rewrites `bytes` (elements of `dtype` in `from` order) in place into native order.
fn to_native(bytes: &mut [u8], dtype: DType, from: Endian) {
    if dtype == DType::Bool {
        for b in bytes.iter_mut() {
            *b = u8::from(*b != 0);
        }
        return;
    }
    if from != Endian::NATIVE {
        // complex values are two reals, each swapped on its own
        let width = if dtype.is_complex() {
            dtype.size() / 2
        } else {
            dtype.size()
        };
        for c in bytes.chunks_exact_mut(width) {
            c.reverse();
        }
    }
}

/// A storage holding `numel` elements of `dtype` decoded from `bytes` (exactly their size).
pub(crate) fn storage_from_file(
    mut bytes: Vec<u8>,
    dtype: DType,
    numel: usize,
    order: Endian,
    op: &'static str,
) -> Result<Storage> {
    match numel.checked_mul(dtype.size()) {
        Some(n) if n == bytes.len() => {}
        _ => bail!(
            Malformed,
            op,
            "record of {} bytes cannot hold {} elements of {}",
            bytes.len(),
            numel,
            dtype
        ),
    }
    to_native(&mut bytes, dtype, order);
    if dtype == DType::Bool {
        // any nonzero byte is true (as PyTorch and NumPy read it); a bool tensor reads only
        // 0 and 1 (another byte read as `bool` is undefined behaviour)
        for b in &mut bytes {
            *b = (*b != 0) as u8;
        }
    }
    Storage::from_bytes(&bytes)
}

/// The elements of `t`, row-major, each as `f`'s little-endian bytes.
fn encode<T: crate::Element, const N: usize>(t: &Tensor, f: fn(T) -> [u8; N]) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    out.try_reserve_exact(t.numel().saturating_mul(N))
        .map_err(|_| crate::err!(InvalidArgument, "save", "cannot allocate the file bytes"))?;
    for v in t.to_vec::<T>()? {
        out.extend_from_slice(&f(v));
    }
    Ok(out)
}

/// A complex value's bytes: the real part, then the imaginary part, each little-endian.
fn complex_le<R: Copy, const H: usize, const N: usize>(
    re: R,
    im: R,
    f: fn(R) -> [u8; H],
) -> [u8; N] {
    let mut b = [0u8; N];
    b[..H].copy_from_slice(&f(re));
    b[H..].copy_from_slice(&f(im));
    b
}

/// The elements of `t` in row-major order as file bytes in `order` (complex parts swapped
/// separately, bools as 0/1).
pub(crate) fn tensor_to_file(t: &Tensor, order: Endian) -> Result<Vec<u8>> {
    let (mut bytes, part) = match t.dtype() {
        DType::Bool => (encode::<bool, 1>(t, |v| [u8::from(v)])?, 1),
        DType::C64 => (
            encode::<C64, 8>(t, |c| complex_le(c.re, c.im, f32::to_le_bytes))?,
            4,
        ),
        DType::C128 => (
            encode::<C128, 16>(t, |c| complex_le(c.re, c.im, f64::to_le_bytes))?,
            8,
        ),
        d => crate::match_dtype!(d, numeric, T => {
            (encode::<T, { std::mem::size_of::<T>() }>(t, T::to_le_bytes)?, std::mem::size_of::<T>())
        }),
    };
    if order == Endian::Big && part > 1 {
        bytes.chunks_exact_mut(part).for_each(<[u8]>::reverse);
    }
    Ok(bytes)
}

/// Every whole element of `storage` read as `dtype`, as file bytes in `order`.
pub(crate) fn storage_to_file(storage: &Storage, dtype: DType, order: Endian) -> Result<Vec<u8>> {
    let n = storage.nbytes() / dtype.size();
    let whole = Tensor::zeros(&[0], dtype)?;
    whole.set_storage(storage, 0, &[n], None)?;
    tensor_to_file(&whole, order)
}
