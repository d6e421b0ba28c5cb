//! The restricted unpickler: the pickle opcodes `torch.save` emits (protocol 2, plus the few
//! protocol 4/5 forms a re-pickled file may use), and only the globals that rebuild tensors and
//! containers. Nothing is ever called by name: each accepted global is a variant of [`Global`],
//! and `REDUCE` on it runs tapegrad code for that variant. Any other global or opcode is an
//! `Unsupported` error; truncated or inconsistent bytes are `Malformed`.
//!
//! Objects live in an arena while the pickle runs, so a memoised container that is filled after
//! being memoised (`EMPTY_DICT BINPUT ... SETITEMS`, as pickle always writes them) is the same
//! object wherever it is referenced. The arena then becomes a [`Value`] tree, with a node budget
//! proportional to the pickle's length (shared references cannot blow up into an exponential
//! tree) and a depth limit (self-referencing containers are refused).

use super::Value;
use super::dtype::{storage_class_dtype, torch_dtype_name};
use crate::dtype::DType;
use crate::layout::Layout;
use crate::{Result, Storage, Tensor, bail, err};
use std::collections::HashMap;

const OP: &str = "pt::load";
/// Nesting depth of containers accepted in the result.
const MAX_DEPTH: usize = 256;

/// The globals a `torch.save` file of tensors and containers may name.
#[derive(Clone, Debug)]
enum Global {
    RebuildTensorV2,
    /// The form torch uses for dtypes without a legacy storage class (uint16, float8, ...).
    RebuildTensorV3,
    RebuildParameter,
    RebuildParameterWithState,
    OrderedDict,
    /// `torch.<Name>Storage`: the dtype of a storage record.
    StorageClass(DType),
    /// `torch.storage.UntypedStorage` (only with `_rebuild_tensor_v3`).
    UntypedStorage,
    /// A `torch.<dtype>` object (only as `_rebuild_tensor_v3`'s dtype argument).
    TorchDtype(String),
}

impl Global {
    fn resolve(module: &str, name: &str) -> Result<Global> {
        Ok(match (module, name) {
            ("torch._utils", "_rebuild_tensor_v2") => Global::RebuildTensorV2,
            ("torch._utils", "_rebuild_tensor_v3") => Global::RebuildTensorV3,
            ("torch._utils", "_rebuild_parameter") => Global::RebuildParameter,
            ("torch._utils", "_rebuild_parameter_with_state") => Global::RebuildParameterWithState,
            ("collections", "OrderedDict") => Global::OrderedDict,
            ("torch.storage", "UntypedStorage") => Global::UntypedStorage,
            ("torch", n) if storage_class_dtype(n).is_some() => {
                Global::StorageClass(storage_class_dtype(n).expect("checked"))
            }
            ("torch", n) if torch_dtype_name(n) => Global::TorchDtype(n.to_string()),
            _ => bail!(
                Unsupported,
                OP,
                "the pickle names the global {}.{}, which is not one that torch.save writes for \
                 tensors and containers (refused, never executed)",
                module,
                name
            ),
        })
    }
}

/// An object under construction.
enum Node {
    Leaf(Value),
    List(Vec<usize>),
    Tuple(Vec<usize>),
    Dict(Vec<(usize, usize)>),
    Tensor(Tensor),
    Global(Global),
    Storage(Storage, DType, usize),
}

struct Machine<'p, F> {
    pkl: &'p [u8],
    pos: usize,
    arena: Vec<Node>,
    stack: Vec<usize>,
    marks: Vec<usize>,
    memo: HashMap<u32, usize>,
    storages: HashMap<String, (Storage, DType, usize)>,
    /// Loads the storage record `key` holding `numel` elements of a dtype.
    source: F,
}

/// Marks a loaded tensor as requiring grad; a record asking it of a dtype without gradients
/// (integer, bool) is malformed: `torch.load` refuses it too.
fn require_grad(t: &Tensor) -> Result<()> {
    if !t.dtype().is_differentiable() {
        return Err(malformed(format!(
            "a {:?} tensor marked requires_grad (only floating point and complex tensors can \
             require gradients)",
            t.dtype()
        )));
    }
    t.requires_grad_(true)?;
    Ok(())
}

fn malformed(what: impl std::fmt::Display) -> crate::Error {
    err!(Malformed, OP, "corrupt pickle: {}", what)
}

impl<'p, F: FnMut(&str, DType, usize) -> Result<Storage>> Machine<'p, F> {
    fn take(&mut self, n: usize) -> Result<&'p [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|&e| e <= self.pkl.len())
            .ok_or_else(|| malformed(format!("truncated at byte {}", self.pos)))?;
        let s = &self.pkl[self.pos..end];
        self.pos = end;
        Ok(s)
    }
    fn byte(&mut self) -> Result<u8> {
        Ok(self.take(1)?[0])
    }
    fn u32(&mut self) -> Result<u32> {
        Ok(u32::from_le_bytes(self.take(4)?.try_into().expect("4")))
    }
    fn line(&mut self) -> Result<&'p str> {
        let rest = &self.pkl[self.pos..];
        let n = rest
            .iter()
            .position(|&b| b == b'\n')
            .ok_or_else(|| malformed("unterminated GLOBAL"))?;
        let s = std::str::from_utf8(&rest[..n]).map_err(|_| malformed("GLOBAL is not UTF-8"))?;
        self.pos += n + 1;
        Ok(s)
    }
    fn string(&mut self, n: u64) -> Result<()> {
        let n = usize::try_from(n).map_err(|_| malformed("string too long"))?;
        let s = std::str::from_utf8(self.take(n)?).map_err(|_| malformed("string not UTF-8"))?;
        self.push(Node::Leaf(Value::Str(s.to_string())));
        Ok(())
    }

    fn push(&mut self, node: Node) {
        self.arena.push(node);
        self.stack.push(self.arena.len() - 1);
    }
    fn pop(&mut self) -> Result<usize> {
        if self.marks.last().is_some_and(|&m| m >= self.stack.len()) {
            return Err(malformed("pop across a MARK"));
        }
        self.stack.pop().ok_or_else(|| malformed("stack underflow"))
    }
    fn top(&self) -> Result<usize> {
        match self.stack.last() {
            Some(&t) if self.marks.last().is_none_or(|&m| m < self.stack.len()) => Ok(t),
            _ => Err(malformed("stack underflow")),
        }
    }
    /// The items pushed since the last MARK (which is removed).
    fn pop_mark(&mut self) -> Result<Vec<usize>> {
        let m = self.marks.pop().ok_or_else(|| malformed("no MARK"))?;
        Ok(self.stack.split_off(m))
    }
    fn tuple_of(&mut self, n: usize) -> Result<()> {
        let mut items = vec![0; n];
        for slot in items.iter_mut().rev() {
            *slot = self.pop()?;
        }
        self.push(Node::Tuple(items));
        Ok(())
    }
    fn memo_get(&mut self, idx: u32) -> Result<()> {
        let id = *self
            .memo
            .get(&idx)
            .ok_or_else(|| malformed(format!("memo {} read before written", idx)))?;
        self.stack.push(id);
        Ok(())
    }
    fn memo_put(&mut self, idx: u32) -> Result<()> {
        let t = self.top()?;
        self.memo.insert(idx, t);
        Ok(())
    }
    fn int(&mut self, v: i64) {
        self.push(Node::Leaf(Value::Int(v)));
    }

    fn append(&mut self, list: usize, items: Vec<usize>) -> Result<()> {
        match &mut self.arena[list] {
            Node::List(v) => {
                v.extend(items);
                Ok(())
            }
            _ => Err(malformed("APPEND to a non-list")),
        }
    }
    fn set_items(&mut self, dict: usize, items: Vec<usize>) -> Result<()> {
        if !items.len().is_multiple_of(2) {
            return Err(malformed("SETITEMS with an odd number of items"));
        }
        let pairs: Vec<(usize, usize)> = items.chunks_exact(2).map(|c| (c[0], c[1])).collect();
        let Node::Dict(d) = &mut self.arena[dict] else {
            return Err(malformed("SETITEM on a non-dict"));
        };
        for (k, v) in pairs {
            d.push((k, v));
        }
        Ok(())
    }

    fn run(&mut self) -> Result<usize> {
        loop {
            let op = self.byte()?;
            match op {
                0x80 => {
                    let p = self.byte()?;
                    if !(2..=5).contains(&p) {
                        bail!(Unsupported, OP, "pickle protocol {} (2 to 5 are read)", p);
                    }
                }
                0x95 => {
                    self.take(8)?; // FRAME: a length hint
                }
                b'.' => {
                    let r = self.pop()?;
                    if !self.stack.is_empty() || !self.marks.is_empty() {
                        return Err(malformed("STOP with items left on the stack"));
                    }
                    return Ok(r);
                }
                b'(' => self.marks.push(self.stack.len()),
                b'}' => self.push(Node::Dict(Vec::new())),
                b']' => self.push(Node::List(Vec::new())),
                b')' => self.push(Node::Tuple(Vec::new())),
                b'N' => self.push(Node::Leaf(Value::None)),
                0x88 => self.push(Node::Leaf(Value::Bool(true))),
                0x89 => self.push(Node::Leaf(Value::Bool(false))),
                b'K' => {
                    let v = self.byte()?;
                    self.int(i64::from(v));
                }
                b'M' => {
                    let b = self.take(2)?;
                    self.int(i64::from(u16::from_le_bytes([b[0], b[1]])));
                }
                b'J' => {
                    let v = self.u32()? as i32;
                    self.int(i64::from(v));
                }
                0x8a => {
                    let n = usize::from(self.byte()?);
                    if n > 8 {
                        bail!(Unsupported, OP, "integer of {} bytes does not fit i64", n);
                    }
                    let b = self.take(n)?;
                    let mut v: i64 = 0;
                    for (i, &byte) in b.iter().enumerate() {
                        v |= i64::from(byte) << (8 * i);
                    }
                    if n > 0 && n < 8 && b[n - 1] & 0x80 != 0 {
                        v -= 1i64 << (8 * n); // sign extension
                    }
                    self.int(v);
                }
                b'G' => {
                    let v = f64::from_be_bytes(self.take(8)?.try_into().expect("8"));
                    self.push(Node::Leaf(Value::Float(v)));
                }
                b'X' => {
                    let n = self.u32()?;
                    self.string(u64::from(n))?;
                }
                0x8c => {
                    let n = self.byte()?;
                    self.string(u64::from(n))?;
                }
                0x8d => {
                    let n = u64::from_le_bytes(self.take(8)?.try_into().expect("8"));
                    self.string(n)?;
                }
                b'q' => {
                    let i = self.byte()?;
                    self.memo_put(u32::from(i))?;
                }
                b'r' => {
                    let i = self.u32()?;
                    self.memo_put(i)?;
                }
                0x94 => {
                    let i = u32::try_from(self.memo.len()).map_err(|_| malformed("memo"))?;
                    self.memo_put(i)?;
                }
                b'h' => {
                    let i = self.byte()?;
                    self.memo_get(u32::from(i))?;
                }
                b'j' => {
                    let i = self.u32()?;
                    self.memo_get(i)?;
                }
                b'c' => {
                    let module = self.line()?;
                    let name = self.line()?;
                    let g = Global::resolve(module, name)?;
                    self.push(Node::Global(g));
                }
                0x93 => {
                    let name = self.pop()?;
                    let module = self.pop()?;
                    let (Node::Leaf(Value::Str(m)), Node::Leaf(Value::Str(n))) =
                        (&self.arena[module], &self.arena[name])
                    else {
                        return Err(malformed("STACK_GLOBAL on non-strings"));
                    };
                    let g = Global::resolve(m, n)?;
                    self.push(Node::Global(g));
                }
                b't' => {
                    let items = self.pop_mark()?;
                    self.push(Node::Tuple(items));
                }
                0x85 => self.tuple_of(1)?,
                0x86 => self.tuple_of(2)?,
                0x87 => self.tuple_of(3)?,
                b'a' => {
                    let item = self.pop()?;
                    let list = self.top()?;
                    self.append(list, vec![item])?;
                }
                b'e' => {
                    let items = self.pop_mark()?;
                    let list = self.top()?;
                    self.append(list, items)?;
                }
                b's' => {
                    let v = self.pop()?;
                    let k = self.pop()?;
                    let dict = self.top()?;
                    self.set_items(dict, vec![k, v])?;
                }
                b'u' => {
                    let items = self.pop_mark()?;
                    let dict = self.top()?;
                    self.set_items(dict, items)?;
                }
                b'Q' => {
                    let pid = self.pop()?;
                    let node = self.persistent(pid)?;
                    self.push(node);
                }
                b'R' => {
                    let args = self.pop()?;
                    let f = self.pop()?;
                    let node = self.reduce(f, args)?;
                    self.push(node);
                }
                b'b' => {
                    let state = self.pop()?;
                    let obj = self.top()?;
                    self.build(obj, state)?;
                }
                op => bail!(
                    Unsupported,
                    OP,
                    "pickle opcode 0x{:02x} at byte {} is not one torch.save writes",
                    op,
                    self.pos - 1
                ),
            }
        }
    }

    fn tuple_items(&self, id: usize, what: &str) -> Result<Vec<usize>> {
        match &self.arena[id] {
            Node::Tuple(v) => Ok(v.clone()),
            _ => Err(malformed(format!("{} is not a tuple", what))),
        }
    }
    fn int_at(&self, id: usize, what: &str) -> Result<i64> {
        match &self.arena[id] {
            Node::Leaf(Value::Int(v)) => Ok(*v),
            _ => Err(malformed(format!("{} is not an integer", what))),
        }
    }
    fn usize_at(&self, id: usize, what: &str) -> Result<usize> {
        let v = self.int_at(id, what)?;
        usize::try_from(v).map_err(|_| malformed(format!("{} is negative ({})", what, v)))
    }
    fn usizes(&self, id: usize, what: &str) -> Result<Vec<usize>> {
        self.tuple_items(id, what)?
            .into_iter()
            .map(|i| self.usize_at(i, what))
            .collect()
    }
    fn bool_at(&self, id: usize, what: &str) -> Result<bool> {
        match &self.arena[id] {
            Node::Leaf(Value::Bool(b)) => Ok(*b),
            _ => Err(malformed(format!("{} is not a bool", what))),
        }
    }
    fn str_at(&self, id: usize, what: &str) -> Result<&str> {
        match &self.arena[id] {
            Node::Leaf(Value::Str(s)) => Ok(s),
            _ => Err(malformed(format!("{} is not a string", what))),
        }
    }

    /// `BINPERSID` on `('storage', <StorageClass>, key, location, numel)`: one storage per key.
    fn persistent(&mut self, pid: usize) -> Result<Node> {
        let items = self.tuple_items(pid, "persistent id")?;
        if items.len() != 5 || self.str_at(items[0], "persistent id tag")? != "storage" {
            return Err(malformed(
                "persistent id is not ('storage', type, key, location, numel)",
            ));
        }
        let dtype = match &self.arena[items[1]] {
            Node::Global(Global::StorageClass(d)) => Some(*d),
            Node::Global(Global::UntypedStorage) => None,
            _ => return Err(malformed("persistent id names no storage class")),
        };
        let key = self.str_at(items[2], "storage key")?.to_string();
        let numel = self.usize_at(items[4], "storage size")?;
        let Some(dtype) = dtype else {
            // an untyped storage only ever reaches _rebuild_tensor_v3, which refuses its dtype
            return Ok(Node::Leaf(Value::None));
        };
        if let Some((s, d, n)) = self.storages.get(&key) {
            if *d != dtype {
                // torch writes this for a storage without data (and reads one record as two
                // dtypes when the byte counts agree); tapegrad storages have one dtype
                bail!(
                    Unsupported,
                    OP,
                    "storage \"{}\" is read as {} and as {}; a tapegrad storage has one dtype",
                    key,
                    d,
                    dtype
                );
            }
            if *n != numel {
                bail!(
                    Malformed,
                    OP,
                    "storage \"{}\" is named as {} elements of {} and as {} of {}",
                    key,
                    n,
                    d,
                    numel,
                    dtype
                );
            }
            return Ok(Node::Storage(s.clone(), dtype, numel));
        }
        let s = (self.source)(&key, dtype, numel)?;
        self.storages.insert(key, (s.clone(), dtype, numel));
        Ok(Node::Storage(s, dtype, numel))
    }

    fn reduce(&mut self, f: usize, args: usize) -> Result<Node> {
        let Node::Global(g) = &self.arena[f] else {
            return Err(malformed("REDUCE on something that is not a global"));
        };
        let g = g.clone();
        let a = self.tuple_items(args, "REDUCE arguments")?;
        match g {
            Global::OrderedDict if a.is_empty() => Ok(Node::Dict(Vec::new())),
            Global::RebuildTensorV2 if a.len() == 6 || a.len() == 7 => {
                let t = self.rebuild_tensor(&a)?;
                Ok(Node::Tensor(t))
            }
            Global::RebuildTensorV3 => {
                let name = match a.get(6).map(|&i| &self.arena[i]) {
                    Some(Node::Global(Global::TorchDtype(n))) => n.clone(),
                    _ => return Err(malformed("_rebuild_tensor_v3 without a dtype")),
                };
                bail!(
                    Unsupported,
                    OP,
                    "tensor of dtype torch.{}, which tapegrad does not have",
                    name
                )
            }
            Global::RebuildParameter | Global::RebuildParameterWithState
                if (a.len() == 3 && matches!(g, Global::RebuildParameter)) || a.len() == 4 =>
            {
                let Node::Tensor(t) = &self.arena[a[0]] else {
                    return Err(malformed("_rebuild_parameter of a non-tensor"));
                };
                let t = t.clone();
                if self.bool_at(a[1], "requires_grad")? {
                    require_grad(&t)?;
                }
                Ok(Node::Tensor(t))
            }
            g => Err(malformed(format!(
                "{:?} called with {} arguments",
                g,
                a.len()
            ))),
        }
    }

    /// `_rebuild_tensor_v2(storage, offset, size, stride, requires_grad, hooks[, metadata])`:
    /// a tensor `set_` to the shared storage with PyTorch's geometry.
    fn rebuild_tensor(&self, a: &[usize]) -> Result<Tensor> {
        let Node::Storage(storage, dtype, numel) = &self.arena[a[0]] else {
            return Err(malformed("_rebuild_tensor_v2 of a non-storage"));
        };
        let offset = self.usize_at(a[1], "storage offset")?;
        let sizes = self.usizes(a[2], "size")?;
        let strides = self.usizes(a[3], "stride")?;
        let requires_grad = self.bool_at(a[4], "requires_grad")?;
        if sizes.len() != strides.len() {
            return Err(malformed(format!(
                "size {:?} and stride {:?} differ in length",
                sizes, strides
            )));
        }
        crate::layout::check_numel_i64(&sizes, OP)?;
        match Layout::checked_storage_span(&sizes, &strides, offset) {
            Some(end) if end <= *numel => {}
            _ => bail!(
                Malformed,
                OP,
                "tensor of size {:?}, stride {:?}, offset {} reaches past its storage of {} \
                 elements",
                sizes,
                strides,
                offset,
                numel
            ),
        }
        let t = Tensor::zeros(&[0], *dtype)?;
        t.set_storage(storage, offset, &sizes, Some(&strides))?;
        if requires_grad {
            require_grad(&t)?;
        }
        Ok(t)
    }

    /// `BUILD`: only the attribute dict pickle writes for an `OrderedDict` subclass state (a
    /// state dict's `_metadata`), which is dropped.
    fn build(&mut self, obj: usize, state: usize) -> Result<()> {
        match (&self.arena[obj], &self.arena[state]) {
            (Node::Dict(_), Node::Dict(_) | Node::Leaf(Value::None)) => Ok(()),
            _ => Err(malformed("BUILD on an object that is not a dict")),
        }
    }

    fn value(&self, id: usize, depth: usize, budget: &mut usize) -> Result<Value> {
        if depth > MAX_DEPTH {
            bail!(
                Malformed,
                OP,
                "containers nested deeper than {} (or a cycle)",
                MAX_DEPTH
            );
        }
        *budget = budget
            .checked_sub(1)
            .ok_or_else(|| malformed("shared references expand past the node budget"))?;
        let list = |ids: &[usize], budget: &mut usize| -> Result<Vec<Value>> {
            ids.iter()
                .map(|&i| self.value(i, depth + 1, budget))
                .collect()
        };
        Ok(match &self.arena[id] {
            Node::Leaf(v) => v.clone(),
            Node::List(v) => Value::List(list(v, budget)?),
            Node::Tuple(v) => Value::Tuple(list(v, budget)?),
            Node::Dict(v) => Value::Dict(
                v.iter()
                    .map(|&(k, x)| {
                        Ok((
                            self.value(k, depth + 1, budget)?,
                            self.value(x, depth + 1, budget)?,
                        ))
                    })
                    .collect::<Result<_>>()?,
            ),
            Node::Tensor(t) => Value::Tensor(t.clone()),
            Node::Global(g) => return Err(malformed(format!("bare global {:?} in the result", g))),
            Node::Storage(..) => return Err(malformed("bare storage in the result")),
        })
    }
}

/// Runs the pickle `pkl`, fetching storage records through `source`.
pub(crate) fn unpickle(
    pkl: &[u8],
    source: impl FnMut(&str, DType, usize) -> Result<Storage>,
) -> Result<Value> {
    let mut m = Machine {
        pkl,
        pos: 0,
        arena: Vec::new(),
        stack: Vec::new(),
        marks: Vec::new(),
        memo: HashMap::new(),
        storages: HashMap::new(),
        source,
    };
    let root = m.run()?;
    let mut budget = 4 * pkl.len() + 64;
    m.value(root, 0, &mut budget)
}
