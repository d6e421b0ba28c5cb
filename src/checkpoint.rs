//! Checkpoints in the [safetensors](https://github.com/huggingface/safetensors) format: a
//! [`StateDict`] is an ordered map from names to tensors plus string metadata, read and written
//! with the `safetensors` crate, so files move to and from PyTorch
//! (`safetensors.torch.save_file` / `load_file`) and candle. Modules save their named
//! parameters (`tapegrad::nn::save`), optimizers their state (`tapegrad::optim::save`).

use crate::dtype::{C64, DType};
use crate::{Error, Result, Tensor, bail, err};
use indexmap::IndexMap;
use safetensors::tensor::{Dtype as StDtype, SafeTensorError, SafeTensors, View};
use std::borrow::Cow;
use std::collections::{BTreeMap, HashMap};
use std::path::Path;

/// Named tensors (in insertion order) and string metadata: the contents of one checkpoint file.
///
/// Like PyTorch's `state_dict()`, the tensors it holds are detached handles that share storage
/// with the tensors they were taken from; writing to a file copies the values out.
///
/// ```
/// # use tapegrad::{Tensor, checkpoint::StateDict};
/// let mut sd = StateDict::new();
/// sd.insert("w", &Tensor::from_vec(vec![1.0f32, 2.0], &[2])?)?;
/// sd.set_metadata("format", "pt");
/// let back = StateDict::from_bytes(&sd.to_bytes()?)?;
/// assert_eq!(back.get("w").unwrap().to_vec::<f32>()?, vec![1.0, 2.0]);
/// assert_eq!(back.metadata("format"), Some("pt"));
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Default)]
pub struct StateDict {
    tensors: IndexMap<String, Tensor>,
    metadata: BTreeMap<String, String>,
}

impl std::fmt::Debug for StateDict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut m = f.debug_map();
        for (k, t) in &self.tensors {
            m.entry(k, &format_args!("{:?} {}", t.shape(), t.dtype()));
        }
        m.finish()
    }
}

impl StateDict {
    /// An empty state dict.
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds `tensor` (detached) under `name`; a name may appear once.
    pub fn insert(&mut self, name: impl Into<String>, tensor: &Tensor) -> Result<()> {
        let name = name.into();
        if self.tensors.contains_key(&name) {
            bail!(
                InvalidArgument,
                "state_dict",
                "duplicate tensor name \"{}\"",
                name
            );
        }
        self.tensors.insert(name, tensor.detach());
        Ok(())
    }

    /// The tensor stored under `name`.
    pub fn get(&self, name: &str) -> Option<&Tensor> {
        self.tensors.get(name)
    }

    /// (name, tensor) pairs in insertion order (files come back sorted by name).
    pub fn iter(&self) -> impl Iterator<Item = (&str, &Tensor)> {
        self.tensors.iter().map(|(k, v)| (k.as_str(), v))
    }

    /// The tensor names, in order.
    pub fn names(&self) -> Vec<&str> {
        self.tensors.keys().map(String::as_str).collect()
    }

    /// Number of tensors.
    pub fn len(&self) -> usize {
        self.tensors.len()
    }

    /// True when there is no tensor.
    pub fn is_empty(&self) -> bool {
        self.tensors.is_empty()
    }

    /// Sets a metadata entry (safetensors' `__metadata__` string map).
    pub fn set_metadata(&mut self, key: impl Into<String>, value: impl Into<String>) {
        self.metadata.insert(key.into(), value.into());
    }

    /// A metadata entry.
    pub fn metadata(&self, key: &str) -> Option<&str> {
        self.metadata.get(key).map(String::as_str)
    }

    /// All metadata entries, sorted by key.
    pub fn metadata_map(&self) -> &BTreeMap<String, String> {
        &self.metadata
    }

    /// Serialises to safetensors bytes (little-endian, contiguous row-major data).
    /// `complex128` has no safetensors dtype and is refused (`Unsupported`).
    pub fn to_bytes(&self) -> Result<Vec<u8>> {
        let enc = self.encode()?;
        safetensors::serialize(enc, self.meta_arg()).map_err(|e| st_err("save", e))
    }

    /// Writes the file `path` (through a temporary file renamed into place, so a failed save
    /// leaves an existing file untouched).
    pub fn save(&self, path: impl AsRef<Path>) -> Result<()> {
        let path = path.as_ref();
        let enc = self.encode()?;
        safetensors::serialize_to_file(enc, self.meta_arg(), path).map_err(|e| match e {
            SafeTensorError::IoError(io) => {
                err!(Io, "save", "cannot write {}: {}", path.display(), io)
            }
            e => st_err("save", e),
        })
    }

    /// Parses safetensors bytes. Tensors come back in file order (sorted by name); dtypes that
    /// tapegrad lacks (fp8, u16, u32, u64, ...) are refused (`Unsupported`).
    pub fn from_bytes(bytes: &[u8]) -> Result<StateDict> {
        let st = SafeTensors::deserialize(bytes).map_err(|e| st_err("load", e))?;
        let (_, meta) = SafeTensors::read_metadata(bytes).map_err(|e| st_err("load", e))?;
        let mut entries = st.tensors();
        entries.sort_by(|a, b| a.0.cmp(&b.0));
        let mut sd = StateDict::new();
        for (name, view) in entries {
            let t = decode(&name, view.dtype(), view.shape(), view.data())?;
            sd.tensors.insert(name, t);
        }
        if let Some(m) = meta.metadata() {
            sd.metadata = m.iter().map(|(k, v)| (k.clone(), v.clone())).collect();
        }
        Ok(sd)
    }

    /// Reads the file `path`.
    pub fn load(path: impl AsRef<Path>) -> Result<StateDict> {
        let path = path.as_ref();
        let bytes = std::fs::read(path)
            .map_err(|e| err!(Io, "load", "cannot read {}: {}", path.display(), e))?;
        Self::from_bytes(&bytes).map_err(|e| {
            Error::new(
                e.kind(),
                e.op(),
                format!("{}: {}", path.display(), e.message()),
            )
        })
    }

    /// A required metadata entry parsed as `T`, or an `InvalidArgument` error naming `op`.
    pub(crate) fn parse_meta<T: std::str::FromStr>(
        &self,
        key: &str,
        op: &'static str,
    ) -> Result<T> {
        let v = self
            .metadata(key)
            .ok_or_else(|| err!(InvalidArgument, op, "missing metadata entry \"{}\"", key))?;
        v.parse().map_err(|_| {
            err!(
                InvalidArgument,
                op,
                "metadata entry \"{}\" = \"{}\" is not a valid value",
                key,
                v
            )
        })
    }

    fn meta_arg(&self) -> Option<HashMap<String, String>> {
        if self.metadata.is_empty() {
            None
        } else {
            Some(self.metadata.clone().into_iter().collect())
        }
    }

    fn encode(&self) -> Result<Vec<(String, Encoded)>> {
        self.tensors
            .iter()
            .map(|(k, t)| Ok((k.clone(), encode(k, t)?)))
            .collect()
    }
}

fn st_err(op: &'static str, e: SafeTensorError) -> Error {
    match e {
        SafeTensorError::IoError(io) => err!(Io, op, "{}", io),
        e => err!(InvalidArgument, op, "not a valid safetensors file: {}", e),
    }
}

/// One tensor's bytes, as the safetensors serialiser wants them.
struct Encoded {
    dtype: StDtype,
    shape: Vec<usize>,
    bytes: Vec<u8>,
}

impl View for Encoded {
    fn dtype(&self) -> StDtype {
        self.dtype
    }
    fn shape(&self) -> &[usize] {
        &self.shape
    }
    fn data(&self) -> Cow<'_, [u8]> {
        Cow::Borrowed(&self.bytes)
    }
    fn data_len(&self) -> usize {
        self.bytes.len()
    }
}

fn le_bytes<T: crate::Element, const N: usize>(t: &Tensor, f: fn(T) -> [u8; N]) -> Result<Vec<u8>> {
    Ok(t.to_vec::<T>()?.into_iter().flat_map(f).collect())
}

fn encode(name: &str, t: &Tensor) -> Result<Encoded> {
    let Some(dtype) = st_dtype(t.dtype()) else {
        bail!(
            Unsupported,
            "save",
            "tensor \"{}\" has dtype {}, which safetensors cannot store",
            name,
            t.dtype()
        )
    };
    let bytes = match t.dtype() {
        DType::Bool => le_bytes::<bool, 1>(t, |v| [v as u8])?,
        DType::C64 => le_bytes::<C64, 8>(t, |c| {
            let (re, im) = (c.re.to_le_bytes(), c.im.to_le_bytes());
            [re[0], re[1], re[2], re[3], im[0], im[1], im[2], im[3]]
        })?,
        d => crate::match_dtype!(d, numeric, T => {
            le_bytes::<T, { std::mem::size_of::<T>() }>(t, T::to_le_bytes)?
        }),
    };
    Ok(Encoded {
        dtype,
        shape: t.shape(),
        bytes,
    })
}

fn from_le<T: crate::Element, const N: usize>(
    data: &[u8],
    shape: &[usize],
    f: fn([u8; N]) -> T,
) -> Result<Tensor> {
    let v: Vec<T> = data
        .chunks_exact(N)
        .map(|c| f(c.try_into().expect("chunks_exact yields N bytes")))
        .collect();
    Tensor::from_vec(v, shape)
}

/// The safetensors name of every dtype safetensors can store (the file format's table;
/// complex128 has none).
const ST_DTYPES: [(DType, StDtype); 11] = [
    (DType::Bool, StDtype::BOOL),
    (DType::U8, StDtype::U8),
    (DType::I8, StDtype::I8),
    (DType::I16, StDtype::I16),
    (DType::I32, StDtype::I32),
    (DType::I64, StDtype::I64),
    (DType::F16, StDtype::F16),
    (DType::BF16, StDtype::BF16),
    (DType::F32, StDtype::F32),
    (DType::F64, StDtype::F64),
    (DType::C64, StDtype::C64),
];

/// The dtype tapegrad uses for a safetensors dtype, if any.
pub(crate) fn dtype_from_st(d: StDtype) -> Option<DType> {
    ST_DTYPES.iter().find(|(_, s)| *s == d).map(|(t, _)| *t)
}

/// The safetensors dtype of a tapegrad dtype, if safetensors can store it.
fn st_dtype(d: DType) -> Option<StDtype> {
    ST_DTYPES.iter().find(|(t, _)| *t == d).map(|(_, s)| *s)
}

fn decode(name: &str, dtype: StDtype, shape: &[usize], data: &[u8]) -> Result<Tensor> {
    let Some(dt) = dtype_from_st(dtype) else {
        bail!(
            Unsupported,
            "load",
            "tensor \"{}\" has safetensors dtype {:?}, which tapegrad does not support",
            name,
            dtype
        );
    };
    match dt {
        DType::Bool => from_le::<bool, 1>(data, shape, |b| b[0] != 0),
        DType::C64 => from_le::<C64, 8>(data, shape, |b| {
            C64::new(
                f32::from_le_bytes([b[0], b[1], b[2], b[3]]),
                f32::from_le_bytes([b[4], b[5], b[6], b[7]]),
            )
        }),
        DType::C128 => unreachable!("safetensors has no complex128"),
        d => {
            crate::match_dtype!(d, numeric, T => from_le(data, shape, T::from_le_bytes))
        }
    }
}
