//! NumPy files: `.npy` (one array: magic, version, a Python-literal header with `descr`,
//! `fortran_order` and `shape`, then the raw elements) and `.npz` (a zip of `.npy` members,
//! stored by `np.savez` or deflated by `np.savez_compressed`).
//!
//! Dtypes: the 11 that NumPy and tapegrad share — `|b1 |u1 |i1 i2 i4 i8 f2 f4 f8 c8 c16`, in
//! either byte order (`<`, `>`, `=`). bfloat16 has no NumPy dtype and is refused on writing;
//! other descrs (uint16+, structured, object, strings, datetimes) are refused on reading
//! (`Unsupported`). A Fortran-order array loads without a copy as a tensor with column-major
//! strides; writing picks Fortran order exactly when NumPy would (the tensor is
//! Fortran-contiguous and not C-contiguous), C order otherwise.
//!
//! ```
//! use tapegrad::{Tensor, interop::npy};
//! let t = Tensor::from_vec(vec![1i32, 2, 3, 4, 5, 6], &[2, 3])?;
//! let back = npy::from_bytes(&npy::to_bytes(&t.t()?)?)?;       // written in Fortran order
//! assert_eq!((back.shape(), back.strides()), (vec![3, 2], vec![1, 3]));
//! assert_eq!(back.to_vec::<i32>()?, vec![1, 4, 2, 5, 3, 6]);
//! let npz = npy::npz_to_bytes(&[("a", &t), ("b", &back)], true)?; // deflated
//! let arrays = npy::npz_from_bytes(&npz)?;
//! assert_eq!(arrays[0].0, "a");
//! # Ok::<(), tapegrad::Error>(())
//! ```

use super::bytes::{Endian, storage_from_file, tensor_to_file};
use super::zip::{ZipReader, ZipWriter};
use crate::dtype::DType;
use crate::layout::Layout;
use crate::{Result, Tensor, bail, err};
use std::path::Path;

const LOAD: &str = "npy::load";
const SAVE: &str = "npy::save";
const MAGIC: &[u8] = b"\x93NUMPY";

/// The NumPy type character and size of each shared dtype.
const DESCRS: [(DType, &str); 11] = [
    (DType::Bool, "b1"),
    (DType::U8, "u1"),
    (DType::I8, "i1"),
    (DType::I16, "i2"),
    (DType::I32, "i4"),
    (DType::I64, "i8"),
    (DType::F16, "f2"),
    (DType::F32, "f4"),
    (DType::F64, "f8"),
    (DType::C64, "c8"),
    (DType::C128, "c16"),
];

/// A token of the header's Python literal.
#[derive(Debug, PartialEq)]
enum Tok<'a> {
    Punct(u8),
    Str(&'a str),
    Int(u64),
    Ident(&'a str),
}

fn tokens(h: &str) -> Result<Vec<Tok<'_>>> {
    let b = h.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        match c {
            b' ' | b'\t' | b'\n' | b'\r' => i += 1,
            b'{' | b'}' | b'(' | b')' | b'[' | b']' | b':' | b',' => {
                out.push(Tok::Punct(c));
                i += 1;
            }
            b'\'' | b'"' => {
                let end = b[i + 1..]
                    .iter()
                    .position(|&x| x == c)
                    .ok_or_else(|| err!(Malformed, LOAD, "npy header: unterminated string"))?;
                out.push(Tok::Str(&h[i + 1..i + 1 + end]));
                i += end + 2;
            }
            b'0'..=b'9' => {
                let end = b[i..]
                    .iter()
                    .position(|x| !x.is_ascii_digit())
                    .map_or(b.len(), |p| i + p);
                let v = h[i..end]
                    .parse()
                    .map_err(|_| err!(Malformed, LOAD, "npy header: integer too large"))?;
                out.push(Tok::Int(v));
                // Python 2 headers may write long ints as `3L`
                i = if b.get(end) == Some(&b'L') {
                    end + 1
                } else {
                    end
                };
            }
            c if c.is_ascii_alphabetic() => {
                let end = b[i..]
                    .iter()
                    .position(|x| !x.is_ascii_alphanumeric())
                    .map_or(b.len(), |p| i + p);
                out.push(Tok::Ident(&h[i..end]));
                i = end;
            }
            _ => bail!(Malformed, LOAD, "npy header: unexpected {:?}", c as char),
        }
    }
    Ok(out)
}

/// The parsed header: dtype, byte order, Fortran order, shape.
struct Header {
    dtype: DType,
    order: Endian,
    fortran: bool,
    shape: Vec<usize>,
}

fn parse_descr(d: &str) -> Result<(DType, Endian)> {
    let (order, code) = match d.as_bytes().first() {
        Some(b'<') => (Endian::Little, &d[1..]),
        Some(b'>') => (Endian::Big, &d[1..]),
        Some(b'=') => (Endian::NATIVE, &d[1..]),
        Some(b'|') => (Endian::NATIVE, &d[1..]),
        _ => (Endian::NATIVE, d),
    };
    let code = match code {
        "?" => "b1",
        "B" => "u1",
        "b" => "i1",
        c => c,
    };
    match DESCRS.iter().find(|(_, c)| *c == code) {
        Some((dt, _)) => Ok((*dt, order)),
        None => bail!(Unsupported, LOAD, "npy dtype '{}' has no tapegrad dtype", d),
    }
}

fn parse_header(h: &str) -> Result<Header> {
    let toks = tokens(h)?;
    let bad = || {
        err!(
            Malformed,
            LOAD,
            "npy header is not a dict of descr, fortran_order, shape: {}",
            h
        )
    };
    let mut it = toks.iter().peekable();
    if it.next() != Some(&Tok::Punct(b'{')) {
        return Err(bad());
    }
    let (mut descr, mut fortran, mut shape) = (None, None, None);
    loop {
        match it.next() {
            Some(Tok::Punct(b'}')) => break,
            Some(Tok::Str(key)) => {
                if it.next() != Some(&Tok::Punct(b':')) {
                    return Err(bad());
                }
                match (*key, it.next()) {
                    ("descr", Some(Tok::Str(d))) => descr = Some(parse_descr(d)?),
                    ("descr", Some(Tok::Punct(b'['))) => {
                        bail!(Unsupported, LOAD, "structured npy dtypes are not supported")
                    }
                    ("fortran_order", Some(Tok::Ident("True"))) => fortran = Some(true),
                    ("fortran_order", Some(Tok::Ident("False"))) => fortran = Some(false),
                    ("shape", Some(Tok::Punct(b'('))) => {
                        let mut dims = Vec::new();
                        loop {
                            match it.next() {
                                Some(Tok::Punct(b')')) => break,
                                Some(Tok::Int(v)) => {
                                    dims.push(usize::try_from(*v).map_err(|_| bad())?);
                                    match it.next() {
                                        Some(Tok::Punct(b',')) => {}
                                        Some(Tok::Punct(b')')) => break,
                                        _ => return Err(bad()),
                                    }
                                }
                                _ => return Err(bad()),
                            }
                        }
                        shape = Some(dims);
                    }
                    _ => return Err(bad()),
                }
                match it.next() {
                    Some(Tok::Punct(b',')) => {}
                    Some(Tok::Punct(b'}')) => break,
                    _ => return Err(bad()),
                }
            }
            _ => return Err(bad()),
        }
    }
    match (descr, fortran, shape) {
        (Some((dtype, order)), Some(fortran), Some(shape)) => Ok(Header {
            dtype,
            order,
            fortran,
            shape,
        }),
        _ => Err(bad()),
    }
}

/// Parses `.npy` bytes into a tensor (C order: contiguous; Fortran order: column-major
/// strides over the file's element order). The element data must be exactly as long as the
/// header's shape says.
pub fn from_bytes(bytes: &[u8]) -> Result<Tensor> {
    if !bytes.starts_with(MAGIC) || bytes.len() < 10 {
        bail!(Malformed, LOAD, "not an npy file (bad magic)");
    }
    let (major, minor) = (bytes[6], bytes[7]);
    let (hlen, start): (usize, usize) = match major {
        1 => (usize::from(u16::from_le_bytes([bytes[8], bytes[9]])), 10),
        2 | 3 if bytes.len() >= 12 => (
            u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
            12,
        ),
        _ => bail!(Unsupported, LOAD, "npy format version {}.{}", major, minor),
    };
    let header = bytes
        .get(start..start.saturating_add(hlen))
        .ok_or_else(|| err!(Malformed, LOAD, "npy header of {} bytes is truncated", hlen))?;
    let header =
        std::str::from_utf8(header).map_err(|_| err!(Malformed, LOAD, "npy header is not text"))?;
    let h = parse_header(header)?;
    let data = &bytes[start + hlen..];
    let numel = h
        .shape
        .iter()
        .try_fold(1usize, |n, &d| n.checked_mul(d))
        .filter(|n| n.checked_mul(h.dtype.size()) == Some(data.len()))
        .ok_or_else(|| {
            err!(
                Malformed,
                LOAD,
                "npy shape {:?} of {} does not match its {} data bytes",
                h.shape,
                h.dtype,
                data.len()
            )
        })?;
    crate::layout::check_numel(&h.shape, LOAD)?;
    let storage = storage_from_file(data.to_vec(), h.dtype, numel, h.order, LOAD)?;
    let layout = if h.fortran {
        super::fortran_layout(&h.shape)
    } else {
        Layout::contiguous(&h.shape)
    };
    Ok(Tensor::from_parts(storage, layout, h.dtype))
}

/// Reads the `.npy` file `path`.
pub fn load(path: impl AsRef<Path>) -> Result<Tensor> {
    from_bytes(&read(path.as_ref())?)
}

fn read(path: &Path) -> Result<Vec<u8>> {
    std::fs::read(path).map_err(|e| err!(Io, LOAD, "cannot read {}: {}", path.display(), e))
}

/// True when `t` is Fortran-contiguous (column-major dense, size-1 dims ignored).
fn is_fortran_contiguous(t: &Tensor) -> bool {
    let mut expected = 1;
    for (&d, &s) in t.shape().iter().zip(&t.strides()) {
        if d != 1 && s != expected {
            return false;
        }
        expected *= d;
    }
    true
}

/// The `.npy` bytes of `t` (format 1.0, little-endian, header padded to 64 bytes). Order as
/// NumPy's `np.save` picks it: Fortran when `t` is Fortran- but not C-contiguous.
pub fn to_bytes(t: &Tensor) -> Result<Vec<u8>> {
    t.check_strided(SAVE)?;
    let Some((_, code)) = DESCRS.iter().find(|(d, _)| *d == t.dtype()) else {
        bail!(Unsupported, SAVE, "dtype {} has no NumPy dtype", t.dtype());
    };
    let fortran = !t.is_contiguous() && is_fortran_contiguous(t);
    let shape = t.shape();
    let dims: Vec<String> = shape.iter().map(usize::to_string).collect();
    let shape_s = match dims.len() {
        1 => format!("({},)", dims[0]),
        _ => format!("({})", dims.join(", ")),
    };
    let bo = if t.dtype().size() == 1 { '|' } else { '<' };
    let mut header = format!(
        "{{'descr': '{bo}{code}', 'fortran_order': {}, 'shape': {shape_s}, }}",
        if fortran { "True" } else { "False" }
    );
    let total = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - total % 64) % 64));
    header.push('\n');
    let hlen = u16::try_from(header.len())
        .map_err(|_| err!(Unsupported, SAVE, "npy header of {} bytes", header.len()))?;
    let mut out = Vec::with_capacity(10 + header.len() + t.numel() * t.dtype().size());
    out.extend_from_slice(MAGIC);
    out.extend_from_slice(&[1, 0]);
    out.extend_from_slice(&hlen.to_le_bytes());
    out.extend_from_slice(header.as_bytes());
    let data = if fortran {
        let rev: Vec<i64> = (0..shape.len() as i64).rev().collect();
        tensor_to_file(&t.permute(&rev)?, Endian::Little)?
    } else {
        tensor_to_file(t, Endian::Little)?
    };
    out.extend_from_slice(&data);
    Ok(out)
}

/// Writes `t` to the `.npy` file `path`.
pub fn save(t: &Tensor, path: impl AsRef<Path>) -> Result<()> {
    super::write_atomically(path.as_ref(), &to_bytes(t)?, SAVE)
}

/// The arrays of `.npz` bytes, in archive order, named without the `.npy` suffix (as
/// `np.load(...).files` lists them). Members not ending in `.npy` are skipped.
pub fn npz_from_bytes(bytes: &[u8]) -> Result<Vec<(String, Tensor)>> {
    let zip = ZipReader::new(bytes, LOAD)?;
    zip.entries()
        .iter()
        .filter_map(|e| e.name.strip_suffix(".npy").map(|n| (n.to_string(), e)))
        .map(|(name, e)| Ok((name, from_bytes(&zip.read(e)?)?)))
        .collect()
}

/// Reads the `.npz` file `path`.
pub fn load_npz(path: impl AsRef<Path>) -> Result<Vec<(String, Tensor)>> {
    npz_from_bytes(&read(path.as_ref())?)
}

/// The `.npz` bytes of named arrays: deflated (`np.savez_compressed`) when `compress`, stored
/// (`np.savez`) otherwise.
pub fn npz_to_bytes(arrays: &[(&str, &Tensor)], compress: bool) -> Result<Vec<u8>> {
    let mut zip = ZipWriter::new(SAVE);
    for (name, t) in arrays {
        zip.add(&format!("{name}.npy"), &to_bytes(t)?, compress)?;
    }
    zip.finish()
}

/// Writes named arrays to the `.npz` file `path` (see [`npz_to_bytes`]).
pub fn save_npz(arrays: &[(&str, &Tensor)], path: impl AsRef<Path>, compress: bool) -> Result<()> {
    super::write_atomically(path.as_ref(), &npz_to_bytes(arrays, compress)?, SAVE)
}
