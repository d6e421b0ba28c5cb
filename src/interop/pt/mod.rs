//! PyTorch `torch.save` files (`.pt`, `.pth`) in pure Rust, **with storage sharing kept both
//! ways**.
//!
//! A `torch.save` file is a zip archive (`<name>/data.pkl`, `<name>/byteorder`,
//! `<name>/data/<key>` per storage, `<name>/version`, ...). [`from_bytes`] reads it with a
//! restricted unpickler (`unpickle.rs`) that accepts only the opcodes and globals `torch.save`
//! writes for tensors and containers — `torch._utils._rebuild_tensor_v2`,
//! `_rebuild_parameter(_with_state)`, the storage classes `torch.<Dtype>Storage`,
//! `collections.OrderedDict` — and refuses anything else without executing it. The result is a
//! [`Value`] tree. Every tensor naming storage key `k` is `set_` to one tapegrad [`Storage`]
//! built from `data/k`, with PyTorch's offset and strides, so views of one storage in the file
//! are views of one storage after loading (a write through one is seen by the other), and each
//! has its own version counter (at 1, like PyTorch's, whose loader also uses `set_`).
//!
//! [`to_bytes`] writes the reverse (`pickle.rs`): one storage record per distinct storage,
//! tensors with their offsets and strides, readable by `torch.load(weights_only=True)`.
//! Tensors are loaded on the CPU whatever device the file records.
//!
//! Dtypes: the 12 tapegrad has (bool, uint8, int8, int16, int32, int64, float16, bfloat16,
//! float32, float64, complex64, complex128). Refused with `Unsupported`: those torch writes with
//! `_rebuild_tensor_v3` (uint16/32/64, the float8 and float4 types, complex32, bits and sub-byte
//! types) and quantized tensors; a storage record read as two dtypes (a tensor and its
//! `.view(dtype)`, which `torch.save` writes only for storages without data, and `torch.load`
//! reads as one storage when the byte counts agree), since a tapegrad storage has one dtype and
//! `set_` refuses another (the error names the record's key and both dtypes; nothing is loaded).
//! Python objects other than None, bool, int (i64), float, str, list, tuple and dict are
//! refused too (bytes, sets, arbitrary-size ints, custom classes); an `OrderedDict`'s attribute
//! state (a state dict's `_metadata`) is dropped.
//!
//! The README's example (there with `pt::save`/`pt::load` on a file):
//!
//! ```
//! use tapegrad::{Tensor, interop::pt::{self, Value}};
//! let w = Tensor::arange_dtype(0.0, 6.0, 1.0, tapegrad::DType::F32)?.reshape(&[2, 3])?;
//! let file = Value::dict([("w", Value::from(&w)), ("wt", Value::from(&w.t()?))]);
//! let path = std::env::temp_dir().join(format!("tapegrad_doc_{}.pt", std::process::id()));
//! pt::save(&file, &path)?;                       // torch.load(path, weights_only=True) reads it
//! let back = pt::load(&path)?;
//! # std::fs::remove_file(&path).ok();
//! let (w2, wt2) = (back.get("w").unwrap().tensor()?, back.get("wt").unwrap().tensor()?);
//! assert!(w2.shares_storage(wt2) && wt2.strides() == vec![1, 3]);
//! w2.select(0, 1)?.fill_(9.0)?;                     // a write through one view...
//! assert_eq!(wt2.to_vec::<f32>()?, vec![0.0, 9.0, 1.0, 9.0, 2.0, 9.0]); // ...is seen by the other
//! # Ok::<(), tapegrad::Error>(())
//! ```

mod dtype;
mod pickle;
mod unpickle;

use super::bytes::{Endian, storage_from_file, storage_to_file};
use super::zip::{ZipReader, ZipWriter};
use crate::checkpoint::StateDict;
use crate::{Result, Storage, Tensor, bail, err};
use std::path::Path;

/// A value of a `torch.save` file: the Python objects a checkpoint of tensors holds.
#[derive(Clone, Debug)]
pub enum Value {
    /// `None`.
    None,
    /// `True` / `False`.
    Bool(bool),
    /// An `int` (files with ints beyond i64 are refused).
    Int(i64),
    /// A `float`.
    Float(f64),
    /// A `str`.
    Str(String),
    /// A `list`.
    List(Vec<Value>),
    /// A `tuple`.
    Tuple(Vec<Value>),
    /// A `dict` or `OrderedDict`, in file order.
    Dict(Vec<(Value, Value)>),
    /// A tensor (or `nn.Parameter`, which loads as a tensor requiring grad).
    Tensor(Tensor),
}

impl From<&Tensor> for Value {
    fn from(t: &Tensor) -> Value {
        Value::Tensor(t.clone())
    }
}

impl From<Tensor> for Value {
    fn from(t: Tensor) -> Value {
        Value::Tensor(t)
    }
}

impl Value {
    /// A dict with string keys, in the given order.
    pub fn dict<K: Into<String>>(items: impl IntoIterator<Item = (K, Value)>) -> Value {
        Value::Dict(
            items
                .into_iter()
                .map(|(k, v)| (Value::Str(k.into()), v))
                .collect(),
        )
    }

    /// The entry under the string key `key` of a dict (`None` for other values or keys).
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Dict(items) => items
                .iter()
                .find(|(k, _)| matches!(k, Value::Str(s) if s == key))
                .map(|(_, v)| v),
            _ => None,
        }
    }

    /// The tensor this value is, or an `InvalidArgument` error.
    pub fn tensor(&self) -> Result<&Tensor> {
        match self {
            Value::Tensor(t) => Ok(t),
            v => bail!(
                InvalidArgument,
                "pt::Value::tensor",
                "{} is not a tensor",
                v.kind()
            ),
        }
    }

    fn kind(&self) -> &'static str {
        match self {
            Value::None => "None",
            Value::Bool(_) => "a bool",
            Value::Int(_) => "an int",
            Value::Float(_) => "a float",
            Value::Str(_) => "a str",
            Value::List(_) => "a list",
            Value::Tuple(_) => "a tuple",
            Value::Dict(_) => "a dict",
            Value::Tensor(_) => "a tensor",
        }
    }
}

const LOAD: &str = "pt::load";

/// Parses the bytes of a `torch.save` file (see the module docs). Truncated or inconsistent
/// bytes give `Malformed`, refused content `Unsupported`; allocations are bounded by the
/// file's size (a deflated record by its declared size, at most 1032 times its bytes).
pub fn from_bytes(bytes: &[u8]) -> Result<Value> {
    if !bytes.starts_with(b"PK\x03\x04") {
        if bytes.first() == Some(&0x80) {
            bail!(
                Unsupported,
                LOAD,
                "legacy (pre-1.6, non-zip) torch.save format; re-save with a newer torch"
            );
        }
        bail!(Malformed, LOAD, "not a torch.save file (no zip header)");
    }
    let zip = ZipReader::new(bytes, LOAD)?;
    let pkl_entry = zip
        .entries()
        .iter()
        .find(|e| e.name.ends_with("data.pkl") && e.name.matches('/').count() <= 1)
        .ok_or_else(|| err!(Malformed, LOAD, "archive has no data.pkl record"))?;
    let prefix = pkl_entry.name[..pkl_entry.name.len() - "data.pkl".len()].to_string();
    let pkl = zip.read(pkl_entry)?;
    let order = match zip.find(&format!("{prefix}byteorder")) {
        None => Endian::Little,
        Some(e) => match zip.read(e)?.as_slice() {
            b"little" => Endian::Little,
            b"big" => Endian::Big,
            other => bail!(
                Malformed,
                LOAD,
                "byteorder record is {:?}",
                String::from_utf8_lossy(other)
            ),
        },
    };
    unpickle::unpickle(&pkl, |key, dtype, numel| -> Result<Storage> {
        let data = zip.read_named(&format!("{prefix}data/{key}"))?;
        storage_from_file(data, dtype, numel, order, LOAD)
    })
}

/// The unpickler with a caller-provided storage source (the fuzz entry point).
pub(crate) fn unpickle_with(
    pkl: &[u8],
    source: impl FnMut(&str, crate::DType, usize) -> Result<Storage>,
) -> Result<Value> {
    unpickle::unpickle(pkl, source)
}

/// Reads the file `path` (see [`from_bytes`]).
pub fn load(path: impl AsRef<Path>) -> Result<Value> {
    let path = path.as_ref();
    let bytes =
        std::fs::read(path).map_err(|e| err!(Io, LOAD, "cannot read {}: {}", path.display(), e))?;
    from_bytes(&bytes)
}

/// Serialises `value` as a `torch.save` file (archive folder `archive/`, little-endian,
/// storages stored uncompressed at 64-byte alignment, one record per distinct storage).
pub fn to_bytes(value: &Value) -> Result<Vec<u8>> {
    let p = pickle::Pickler::pickle(value)?;
    let mut zip = ZipWriter::new("pt::save");
    zip.add("archive/data.pkl", p.bytes(), false)?;
    zip.add("archive/.format_version", b"1", false)?;
    zip.add("archive/.storage_alignment", b"64", false)?;
    zip.add("archive/byteorder", b"little", false)?;
    for r in &p.records {
        let data = storage_to_file(&r.storage, r.dtype, Endian::Little)?;
        zip.add(&format!("archive/data/{}", r.key), &data, false)?;
    }
    zip.add("archive/version", b"3\n", false)?;
    zip.finish()
}

/// Writes `value` to `path` (through a temporary file renamed into place).
pub fn save(value: &Value, path: impl AsRef<Path>) -> Result<()> {
    super::write_atomically(path.as_ref(), &to_bytes(value)?, "pt::save")
}

impl StateDict {
    /// A state dict from a `torch.save` file holding a dict of tensors (`model.state_dict()`):
    /// keys in file order, tensors sharing storages as in the file. Non-tensor entries or a
    /// file that is not a dict are an `InvalidArgument` error.
    pub fn from_pt_bytes(bytes: &[u8]) -> Result<StateDict> {
        match from_bytes(bytes)? {
            Value::Dict(items) => {
                let mut sd = StateDict::new();
                for (k, v) in items {
                    let (Value::Str(k), Value::Tensor(t)) = (k, &v) else {
                        bail!(
                            InvalidArgument,
                            LOAD,
                            "the file's dict has {} under a key, not a tensor under a str",
                            v.kind()
                        );
                    };
                    sd.insert(k, t)?;
                }
                Ok(sd)
            }
            v => bail!(
                InvalidArgument,
                LOAD,
                "the file holds {}, not a dict",
                v.kind()
            ),
        }
    }

    /// Reads a `torch.save` state dict file (see [`from_pt_bytes`](Self::from_pt_bytes)).
    pub fn load_pt(path: impl AsRef<Path>) -> Result<StateDict> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| err!(Io, LOAD, "cannot read {}: {}", path.display(), e))?;
        Self::from_pt_bytes(&bytes)
    }

    /// The state dict as `torch.save` file bytes (a dict of tensors; shared storages stay
    /// shared). Metadata has no place in such a file and is not written.
    pub fn to_pt_bytes(&self) -> Result<Vec<u8>> {
        to_bytes(&Value::dict(
            self.iter().map(|(k, t)| (k.to_string(), Value::from(t))),
        ))
    }

    /// Writes the state dict as a `torch.save` file.
    pub fn save_pt(&self, path: impl AsRef<Path>) -> Result<()> {
        super::write_atomically(path.as_ref(), &self.to_pt_bytes()?, "pt::save")
    }
}
