//! Interop with PyTorch and NumPy files.
//!
//! - [`pt`]: `torch.save` checkpoints (`.pt`/`.pth`) read and written in pure Rust, keeping
//!   storage sharing both ways (views of one storage load as views of one tapegrad storage).
//! - [`npy`]: NumPy `.npy` arrays and `.npz` archives (stored or deflated), C and Fortran order.
//! - `ndarray` (feature `ndarray`): zero-copy views of tensors as `ndarray::ArrayViewD` and
//!   copies to and from `ndarray::ArrayD`.
//!
//! Every reader treats its bytes as untrusted: truncated, oversized or lying headers give an
//! [`ErrorKind::Malformed`](crate::ErrorKind::Malformed) error (refused content
//! `Unsupported`), never a panic, and allocations are bounded by the input's size. The shared
//! pieces: the zip container (`zip.rs`, reader and writer, used by `.pt` and `.npz`) and element
//! bytes ↔ storages (`bytes.rs`).

mod bytes;
#[cfg(feature = "ndarray")]
pub mod ndarray;
pub mod npy;
pub mod pt;
mod zip;

use crate::{Result, err};
use std::path::Path;

/// Column-major (Fortran-order) strides over `shape`, offset 0 (saturating: only a shape with a
/// zero dimension can overflow, and then no element is addressed).
fn fortran_layout(shape: &[usize]) -> crate::Layout {
    let mut strides = Vec::with_capacity(shape.len());
    let mut s: usize = 1;
    for &d in shape {
        strides.push(s);
        s = s.saturating_mul(d.max(1));
    }
    crate::Layout::new(shape, strides.as_slice(), 0)
}

/// Writes `bytes` to `path` through a temporary file in the same folder renamed into place, so
/// a failed write leaves an existing file untouched.
fn write_atomically(path: &Path, bytes: &[u8], op: &'static str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, bytes)
        .and_then(|_| std::fs::rename(&tmp, path))
        .map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            err!(Io, op, "cannot write {}: {}", path.display(), e)
        })
}

/// Entry points for the fuzz targets and the robustness tests (not part of the API).
#[doc(hidden)]
pub mod fuzzing {
    use crate::{DType, Result, Storage, err};

    /// The zip container: parse, then read every member (the outcome is dropped).
    pub fn zip(bytes: &[u8]) {
        if let Ok(z) = super::zip::ZipReader::new(bytes, "fuzz") {
            for e in z.entries() {
                let _ = z.read(e);
            }
        }
    }

    /// The restricted unpickler on raw pickle bytes; every storage it names is a zero-filled
    /// one of the requested size (refused above 4096 bytes, as a record that size would be).
    pub fn unpickle(pkl: &[u8]) -> Result<super::pt::Value> {
        super::pt::unpickle_with(pkl, |key: &str, dtype: DType, numel: usize| {
            match numel.checked_mul(dtype.size()) {
                Some(n) if n <= 4096 => Storage::zeroed(n),
                _ => Err(err!(Malformed, "fuzz", "storage {} too large", key)),
            }
        })
    }

    /// A `torch.save`-shaped archive around the pickle `pkl` and the given records (named
    /// relative to the archive folder, e.g. `data/0`).
    pub fn pt_archive(pkl: &[u8], records: &[(&str, &[u8])]) -> Result<Vec<u8>> {
        let mut z = super::zip::ZipWriter::new("fuzz");
        z.add("archive/data.pkl", pkl, false)?;
        for (name, data) in records {
            z.add(&format!("archive/{name}"), data, false)?;
        }
        z.finish()
    }
}
