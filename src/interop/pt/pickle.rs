//! The pickler: a [`Value`] tree as the protocol-2 pickle `torch.save` writes, tensors as
//! `torch._utils._rebuild_tensor_v2` over a persistent storage id, so that
//! `torch.load(weights_only=True)` reads it. Tensors that share a storage get one storage key
//! (numbered in order of first appearance) and keep their offsets and strides.

use super::Value;
use super::dtype::storage_class;
use crate::{DType, Result, Storage, Tensor, bail};

/// One storage record to write: its key, dtype and storage.
pub(crate) struct Record {
    pub(crate) key: String,
    pub(crate) dtype: DType,
    pub(crate) storage: Storage,
}

pub(crate) struct Pickler {
    out: Vec<u8>,
    pub(crate) records: Vec<Record>,
}

const OP: &str = "pt::save";

impl Pickler {
    /// Pickles `v` (PROTO 2 ... STOP); the storages it names are in `records`.
    pub(crate) fn pickle(v: &Value) -> Result<Pickler> {
        let mut p = Pickler {
            out: vec![0x80, 2],
            records: Vec::new(),
        };
        p.value(v, 0)?;
        p.out.push(b'.');
        Ok(p)
    }

    pub(crate) fn bytes(&self) -> &[u8] {
        &self.out
    }

    fn str(&mut self, s: &str) {
        self.out.push(b'X');
        self.out.extend_from_slice(&(s.len() as u32).to_le_bytes());
        self.out.extend_from_slice(s.as_bytes());
    }

    fn int(&mut self, v: i64) {
        if (0..256).contains(&v) {
            self.out.extend_from_slice(&[b'K', v as u8]);
        } else if (0..65536).contains(&v) {
            self.out.push(b'M');
            self.out.extend_from_slice(&(v as u16).to_le_bytes());
        } else if let Ok(v) = i32::try_from(v) {
            self.out.push(b'J');
            self.out.extend_from_slice(&v.to_le_bytes());
        } else {
            // LONG1: little-endian two's complement, as few bytes as keep the sign
            let b = v.to_le_bytes();
            let mut n = 8;
            while n > 1
                && ((b[n - 1] == 0 && b[n - 2] & 0x80 == 0)
                    || (b[n - 1] == 0xFF && b[n - 2] & 0x80 != 0))
            {
                n -= 1;
            }
            self.out.extend_from_slice(&[0x8a, n as u8]);
            self.out.extend_from_slice(&b[..n]);
        }
    }

    fn global(&mut self, module: &str, name: &str) {
        self.out.push(b'c');
        self.out.extend_from_slice(module.as_bytes());
        self.out.push(b'\n');
        self.out.extend_from_slice(name.as_bytes());
        self.out.push(b'\n');
    }

    fn tuple(&mut self, items: &[Value], depth: usize) -> Result<()> {
        match items.len() {
            0 => self.out.push(b')'),
            n @ 1..=3 => {
                for x in items {
                    self.value(x, depth + 1)?;
                }
                self.out.push([0x85, 0x86, 0x87][n - 1]);
            }
            _ => {
                self.out.push(b'(');
                for x in items {
                    self.value(x, depth + 1)?;
                }
                self.out.push(b't');
            }
        }
        Ok(())
    }

    fn usizes(&mut self, v: &[usize]) -> Result<()> {
        let items = v
            .iter()
            .map(|&x| {
                i64::try_from(x)
                    .map(Value::Int)
                    .map_err(|_| crate::err!(InvalidArgument, OP, "size {} exceeds i64", x))
            })
            .collect::<Result<Vec<_>>>()?;
        self.tuple(&items, 0)
    }

    fn value(&mut self, v: &Value, depth: usize) -> Result<()> {
        if depth > 256 {
            bail!(InvalidArgument, OP, "values nested deeper than 256");
        }
        match v {
            Value::None => self.out.push(b'N'),
            Value::Bool(b) => self.out.push(if *b { 0x88 } else { 0x89 }),
            Value::Int(i) => self.int(*i),
            Value::Float(f) => {
                self.out.push(b'G');
                self.out.extend_from_slice(&f.to_be_bytes());
            }
            Value::Str(s) => self.str(s),
            Value::List(items) => {
                self.out.push(b']');
                if !items.is_empty() {
                    self.out.push(b'(');
                    for x in items {
                        self.value(x, depth + 1)?;
                    }
                    self.out.push(b'e');
                }
            }
            Value::Tuple(items) => self.tuple(items, depth)?,
            Value::Dict(items) => {
                self.out.push(b'}');
                if !items.is_empty() {
                    self.out.push(b'(');
                    for (k, x) in items {
                        self.value(k, depth + 1)?;
                        self.value(x, depth + 1)?;
                    }
                    self.out.push(b'u');
                }
            }
            Value::Tensor(t) => self.tensor(t)?,
        }
        Ok(())
    }

    /// The storage key of `t`'s storage (a new record on first sight).
    fn key(&mut self, t: &Tensor) -> Result<(String, usize)> {
        let (storage, dtype) = (t.storage(), t.dtype());
        let numel = storage.nbytes() / dtype.size();
        if let Some(r) = self.records.iter().find(|r| r.storage.same(&storage)) {
            if r.dtype != dtype {
                bail!(
                    Unsupported,
                    OP,
                    "tensors of dtypes {} and {} view one storage; a torch.save file gives a \
                     storage one dtype",
                    r.dtype,
                    dtype
                );
            }
            return Ok((r.key.clone(), numel));
        }
        let key = self.records.len().to_string();
        self.records.push(Record {
            key: key.clone(),
            dtype,
            storage,
        });
        Ok((key, numel))
    }

    /// `_rebuild_tensor_v2((storage, Class, key, 'cpu', numel), offset, size, stride,
    /// requires_grad, OrderedDict())`, as torch writes it.
    fn tensor(&mut self, t: &Tensor) -> Result<()> {
        t.check_strided(OP)?;
        let (key, numel) = self.key(t)?;
        self.global("torch._utils", "_rebuild_tensor_v2");
        self.out.push(b'(');
        self.out.push(b'(');
        self.str("storage");
        self.global("torch", storage_class(t.dtype()));
        self.str(&key);
        self.str("cpu");
        self.int(numel as i64);
        self.out.push(b't');
        self.out.push(b'Q');
        self.int(t.storage_offset() as i64);
        self.usizes(&t.shape())?;
        self.usizes(&t.strides())?;
        self.out.push(if t.requires_grad() { 0x88 } else { 0x89 });
        self.global("collections", "OrderedDict");
        self.out.extend_from_slice(b")R");
        self.out.extend_from_slice(b"tR");
        Ok(())
    }
}
