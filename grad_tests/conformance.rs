//! Conformance runner: replays the PyTorch-recorded fixtures (`grad_tests/fixtures/*.json`,
//! format described in `/work/shared/conformance/FORMAT.md`) against tapegrad.
//!
//! Usage: `cargo test --release --test conformance [-- NAME_SUBSTRING]`. The same replayer runs
//! the OpInfo-style sweep (`grad_tests/fixtures/sweep/*.json.gz`) as the `sweep` test target:
//! see [`sweep`].
//! Env: `TAPEGRAD_CONFORMANCE_DIRS` (colon-separated fixture dirs), `TAPEGRAD_CONFORMANCE_STRICT=1`
//! (skipped cases count as failures).
//!
//! Each case replays step by step. Ops tapegrad does not have (yet) reach the single fallthrough
//! arm of [`Replayer::dispatch`] and make the case SKIPPED, never passed.

use serde_json::{Map, Value};
use std::cell::RefCell;
use std::collections::HashSet;
use std::panic::{AssertUnwindSafe, catch_unwind};
use tapegrad::autograd::{GradModeGuard, set_grad_enabled};
use tapegrad::dtype::C128;
use tapegrad::{DType, Error, Operand, Scalar, Tensor};

#[path = "conformance/attention_arms.rs"]
mod attention_arms;
#[path = "conformance/conv_arms.rs"]
mod conv_arms;
#[path = "conformance/index_arms.rs"]
mod index_arms;
#[path = "conformance/norm_pool_arms.rs"]
mod norm_pool_arms;
#[path = "op_names.rs"]
mod op_names;
#[path = "conformance/ops_arms.rs"]
mod ops_arms;
#[path = "conformance/resample_arms.rs"]
mod resample_arms;
/// The sweep runner (the `sweep` test target's `main`); unused by the `conformance` target.
#[allow(dead_code)]
#[path = "conformance/sweep.rs"]
pub(crate) mod sweep;
#[path = "conformance/sweep_arms.rs"]
mod sweep_arms;

// ------------------------------------------------------------------ outcomes

/// A mismatch: which field, what was expected, what we got.
pub(crate) struct Fail {
    pub(crate) field: String,
    pub(crate) expected: String,
    pub(crate) got: String,
}

fn fail(field: impl Into<String>, expected: impl ToString, got: impl ToString) -> Fail {
    Fail {
        field: field.into(),
        expected: expected.to_string(),
        got: got.to_string(),
    }
}

/// Why a call did not produce a value.
enum CallErr {
    /// The library returned an error.
    Lib(Error),
    /// The op (or one of its argument forms) is not implemented: skip the case.
    Missing(String),
    /// tapegrad's API has no way to express this call (no such function, or the argument form
    /// cannot be passed: a tensor where the API takes a scalar, a negative size for a `usize`,
    /// ...): skip the case, but the gap is the library's, not the replayer's.
    NoApi(String),
    /// The fixture could not be converted to the Rust API (a harness-level failure).
    Bad(String),
}

impl From<Error> for CallErr {
    fn from(e: Error) -> Self {
        CallErr::Lib(e)
    }
}

type CallResult<T> = std::result::Result<T, CallErr>;

fn bad<T>(msg: impl Into<String>) -> CallResult<T> {
    Err(CallErr::Bad(msg.into()))
}

/// What an op returned.
enum Val {
    T(Tensor),
    Many(Vec<Tensor>),
    Plain(Value),
    Unit,
}

// ------------------------------------------------------------------ JSON -> Rust helpers

fn to_i64(v: &Value) -> CallResult<i64> {
    match v {
        Value::Number(n) if n.is_i64() => Ok(n.as_i64().unwrap()),
        Value::Bool(b) => Ok(*b as i64),
        _ => bad(format!("expected int, got {v}")),
    }
}

fn to_usize(v: &Value) -> CallResult<usize> {
    let i = to_i64(v)?;
    // The Rust API takes `usize` here, so PyTorch's negative-argument error is unrepresentable.
    usize::try_from(i).map_err(|_| CallErr::NoApi(format!("(negative int arg {i})")))
}

fn to_bool(v: &Value) -> CallResult<bool> {
    v.as_bool()
        .map_or_else(|| bad(format!("expected bool, got {v}")), Ok)
}

/// An int or a list of ints (sizes, dims).
fn to_i64s(v: &Value) -> CallResult<Vec<i64>> {
    match v {
        Value::Array(a) => a.iter().map(to_i64).collect(),
        _ => Ok(vec![to_i64(v)?]),
    }
}

fn to_usizes(v: &Value) -> CallResult<Vec<usize>> {
    match v {
        Value::Array(a) => a.iter().map(to_usize).collect(),
        _ => Ok(vec![to_usize(v)?]),
    }
}

fn to_f64(v: &Value) -> CallResult<f64> {
    match v {
        Value::Number(n) => Ok(n.as_f64().unwrap()),
        Value::String(s) => s
            .parse::<f64>()
            .or_else(|_| bad(format!("not a float: {s}"))),
        _ => bad(format!("expected float, got {v}")),
    }
}

/// JSON int -> Python int, JSON float / "nan" / "inf" -> Python float, bool -> bool.
fn to_scalar(v: &Value) -> CallResult<Scalar> {
    match v {
        Value::Bool(b) => Ok(Scalar::Bool(*b)),
        Value::Number(n) if n.is_i64() => Ok(Scalar::Int(n.as_i64().unwrap())),
        Value::Number(_) | Value::String(_) => Ok(Scalar::Float(to_f64(v)?)),
        Value::Object(o) if o.contains_key("re") => Ok(Scalar::Complex(to_c128(v)?)),
        _ => bad(format!("expected scalar, got {v}")),
    }
}

/// A complex element `{"re": x, "im": y}` (each part like a float: `"nan"`, `"inf"` allowed).
fn to_c128(v: &Value) -> CallResult<C128> {
    match v {
        Value::Object(o) => Ok(C128::new(
            to_f64(o.get("re").unwrap_or(&Value::Null))?,
            to_f64(o.get("im").unwrap_or(&Value::Null))?,
        )),
        // A real number where a complex one is expected (e.g. a real literal value).
        _ => Ok(C128::new(to_f64(v)?, 0.0)),
    }
}

fn to_dtype(v: &Value) -> CallResult<DType> {
    v.as_str()
        .and_then(DType::from_name)
        .map_or_else(|| bad(format!("expected dtype, got {v}")), Ok)
}

fn tensor_name(v: &Value) -> Option<&str> {
    v.as_object()?.get("t")?.as_str()
}

/// Shape of nested JSON lists (a bare scalar is 0-d).
fn nested_shape(v: &Value) -> Vec<usize> {
    let mut shape = vec![];
    let mut cur = v;
    while let Value::Array(a) = cur {
        shape.push(a.len());
        match a.first() {
            Some(x) => cur = x,
            None => break,
        }
    }
    shape
}

fn flatten_values<'a>(v: &'a Value, out: &mut Vec<&'a Value>) {
    match v {
        Value::Array(a) => a.iter().for_each(|x| flatten_values(x, out)),
        _ => out.push(v),
    }
}

/// `torch.tensor(values, dtype=)`: builds from the nested literal values.
fn values_to_tensor(values: &Value, dtype: DType) -> CallResult<Tensor> {
    let shape = nested_shape(values);
    let mut flat = vec![];
    flatten_values(values, &mut flat);
    let t = if dtype == DType::Bool {
        Tensor::from_vec(
            flat.iter()
                .map(|v| to_bool(v))
                .collect::<CallResult<Vec<_>>>()?,
            &shape,
        )?
    } else if dtype.is_float() {
        Tensor::from_vec(
            flat.iter()
                .map(|v| to_f64(v))
                .collect::<CallResult<Vec<_>>>()?,
            &shape,
        )?
    } else if dtype.is_complex() {
        Tensor::from_vec(
            flat.iter()
                .map(|v| to_c128(v))
                .collect::<CallResult<Vec<_>>>()?,
            &shape,
        )?
    } else {
        Tensor::from_vec(
            flat.iter()
                .map(|v| to_i64(v))
                .collect::<CallResult<Vec<_>>>()?,
            &shape,
        )?
    };
    Ok(if t.dtype() == dtype {
        t
    } else {
        t.to_dtype(dtype)?
    })
}

// ------------------------------------------------------------------ one call

/// The arguments of one op step; records which kwargs were consumed so that an argument form
/// the dispatch table does not understand makes the case SKIPPED instead of passing silently.
struct Call<'a> {
    op: &'a str,
    args: &'a [Value],
    kwargs: &'a Map<String, Value>,
    env: &'a Env,
    used: RefCell<HashSet<&'a str>>,
}

impl<'a> Call<'a> {
    /// Positional `i`, else kwarg `name`.
    fn opt(&self, i: usize, name: &'a str) -> Option<&'a Value> {
        if let Some(v) = self.args.get(i) {
            return Some(v);
        }
        self.used.borrow_mut().insert(name);
        self.kwargs.get(name)
    }
    fn kw(&self, name: &'a str) -> Option<&'a Value> {
        self.used.borrow_mut().insert(name);
        self.kwargs.get(name)
    }
    fn arg(&self, i: usize) -> CallResult<&'a Value> {
        self.args
            .get(i)
            .map_or_else(|| bad(format!("{}: missing arg {i}", self.op)), Ok)
    }
    fn t(&self, i: usize) -> CallResult<Tensor> {
        self.env.tensor_of(self.arg(i)?)
    }
    fn i64(&self, i: usize) -> CallResult<i64> {
        to_i64(self.arg(i)?)
    }
    fn i64_or(&self, i: usize, name: &'a str, default: i64) -> CallResult<i64> {
        self.opt(i, name)
            .filter(|v| !v.is_null())
            .map_or(Ok(default), to_i64)
    }
    fn bool_or(&self, i: usize, name: &'a str, default: bool) -> CallResult<bool> {
        self.opt(i, name).map_or(Ok(default), to_bool)
    }
    fn operand(&self, i: usize) -> CallResult<Operand> {
        let v = self.arg(i)?;
        match tensor_name(v) {
            Some(_) => Ok(Operand::Tensor(self.env.tensor_of(v)?)),
            None => Ok(Operand::Scalar(to_scalar(v)?)),
        }
    }
    fn dtype_or(&self, default: DType) -> CallResult<DType> {
        self.kw("dtype").map_or(Ok(default), to_dtype)
    }
    /// Kwargs present in the step that the dispatch arm never looked at.
    fn unused_kwargs(&self) -> Vec<&str> {
        let used = self.used.borrow();
        self.kwargs
            .keys()
            .map(|k| k.as_str())
            .filter(|k| !used.contains(k))
            .collect()
    }
}

// ------------------------------------------------------------------ name bindings

#[derive(Default)]
struct Env {
    names: Vec<String>,
    tensors: Vec<Tensor>,
}

impl Env {
    fn get(&self, name: &str) -> Option<&Tensor> {
        self.names
            .iter()
            .position(|n| n == name)
            .map(|i| &self.tensors[i])
    }
    fn tensor_of(&self, v: &Value) -> CallResult<Tensor> {
        match tensor_name(v) {
            Some(n) => self
                .get(n)
                .cloned()
                .map_or_else(|| bad(format!("unbound name {n}")), Ok),
            None => bad(format!("expected tensor arg, got {v}")),
        }
    }
    fn bind(&mut self, name: &str, t: Tensor) {
        self.names.push(name.to_string());
        self.tensors.push(t);
    }
}

// ------------------------------------------------------------------ the dispatch table

fn val(r: tapegrad::Result<Tensor>) -> CallResult<Val> {
    Ok(Val::T(r?))
}

fn many(r: tapegrad::Result<Vec<Tensor>>) -> CallResult<Val> {
    Ok(Val::Many(r?))
}

/// One arm per PyTorch op name; anything else is a missing op.
fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "tensor" => {
            let dt = to_dtype(c.kw("dtype").unwrap_or(&Value::Null))?;
            let t = values_to_tensor(c.arg(0)?, dt)?;
            let rg = c.kw("requires_grad").map_or(Ok(false), to_bool)?;
            val(if rg { t.requires_grad_(true) } else { Ok(t) })
        }
        "zeros" => val(Tensor::zeros(
            to_i64s(c.arg(0)?)?.as_slice(),
            c.dtype_or(DType::F32)?,
        )),
        "ones" => val(Tensor::ones(
            to_i64s(c.arg(0)?)?.as_slice(),
            c.dtype_or(DType::F32)?,
        )),
        "empty" => val(Tensor::empty(
            to_i64s(c.arg(0)?)?.as_slice(),
            c.dtype_or(DType::F32)?,
        )),
        "arange" => arange(c),
        "view" => val(c.t(0)?.view(&to_i64s(c.arg(1)?)?)),
        "reshape" => val(c.t(0)?.reshape(&to_i64s(c.arg(1)?)?)),
        "_unsafe_view" => val(c.t(0)?.unsafe_view(&to_i64s(c.arg(1)?)?)),
        "clone" => val(c.t(0)?.copy()),
        "contiguous" => val(c.t(0)?.contiguous()),
        "detach" => Ok(Val::T(c.t(0)?.detach())),
        "t" => val(c.t(0)?.t()),
        "t_" => val(c.t(0)?.t_()),
        "select" => val(c.t(0)?.select(c.i64(1)?, c.i64(2)?)),
        "narrow" => val(c.t(0)?.narrow(c.i64(1)?, c.i64(2)?, to_usize(c.arg(3)?)?)),
        "slice" => {
            let (start, end) = (c.opt(2, "start"), c.opt(3, "end"));
            let opt = |v: Option<&Value>| v.filter(|v| !v.is_null()).map(to_i64).transpose();
            val(c.t(0)?.slice(
                c.i64_or(1, "dim", 0)?,
                opt(start)?,
                opt(end)?,
                c.i64_or(4, "step", 1)?,
            ))
        }
        "expand" => val(c.t(0)?.expand(&to_i64s(c.arg(1)?)?)),
        "expand_as" => val(c.t(0)?.expand_as(&c.t(1)?)),
        "permute" => val(c.t(0)?.permute(&to_i64s(c.arg(1)?)?)),
        "transpose" => val(c.t(0)?.transpose(c.i64(1)?, c.i64(2)?)),
        "transpose_" => val(c.t(0)?.transpose_(c.i64(1)?, c.i64(2)?)),
        "squeeze" => match c.opt(1, "dim") {
            None => val(c.t(0)?.squeeze()),
            Some(v @ Value::Array(_)) => val(c.t(0)?.squeeze_dims(&to_i64s(v)?)),
            Some(v) => val(c.t(0)?.squeeze_dim(to_i64(v)?)),
        },
        "squeeze_" => val(c.t(0)?.squeeze_(c.opt(1, "dim").map(to_i64).transpose()?)),
        "unsqueeze" => val(c.t(0)?.unsqueeze(c.i64(1)?)),
        "unsqueeze_" => val(c.t(0)?.unsqueeze_(c.i64(1)?)),
        "flatten" => val(c
            .t(0)?
            .flatten(c.i64_or(1, "start_dim", 0)?, c.i64_or(2, "end_dim", -1)?)),
        "unflatten" => val(c.t(0)?.unflatten(c.i64(1)?, &to_i64s(c.arg(2)?)?)),
        "movedim" => val(c.t(0)?.movedim(&to_i64s(c.arg(1)?)?, &to_i64s(c.arg(2)?)?)),
        "diagonal" => {
            let (o, d1, d2) = (
                c.i64_or(1, "offset", 0)?,
                c.i64_or(2, "dim1", 0)?,
                c.i64_or(3, "dim2", 1)?,
            );
            val(c.t(0)?.diagonal(o, d1, d2))
        }
        "as_strided" => {
            let off = match c.opt(3, "storage_offset") {
                None | Some(Value::Null) => None,
                Some(v) => Some(
                    v.as_i64()
                        .map_or_else(|| bad("storage_offset must be an int"), Ok)?,
                ),
            };
            val(c
                .t(0)?
                .as_strided(&to_i64s(c.arg(1)?)?, &to_i64s(c.arg(2)?)?, off))
        }
        "unbind" => many(c.t(0)?.unbind(c.i64_or(1, "dim", 0)?)),
        "split" => {
            let dim = c.i64_or(2, "dim", 0)?;
            match c.arg(1)? {
                v @ Value::Array(_) => many(c.t(0)?.split_with_sizes(&to_usizes(v)?, dim)),
                v => many(c.t(0)?.split(to_usize(v)?, dim)),
            }
        }
        "chunk" => many(c.t(0)?.chunk(to_usize(c.arg(1)?)?, c.i64_or(2, "dim", 0)?)),
        "is_contiguous" => Ok(Val::Plain(Value::Bool(c.t(0)?.is_contiguous()))),
        "numel" => Ok(Val::Plain(Value::from(c.t(0)?.numel()))),
        // `torch.add(2, t)` / `torch.mul(2, t)`: commutative, so `t.add(2)` (same value,
        // dtype and graph); `sub`/`div` with a scalar first are `*_scalar_base`.
        "add" | "mul" if tensor_name(c.arg(0)?).is_none() && c.kwargs.is_empty() => {
            let (s, t) = (to_scalar(c.arg(0)?)?, c.t(1)?);
            val(if c.op == "add" { t.add(s) } else { t.mul(s) })
        }
        "sub" | "div" if tensor_name(c.arg(0)?).is_none() && c.kwargs.is_empty() => {
            let (s, t) = (to_scalar(c.arg(0)?)?, c.t(1)?);
            val(if c.op == "sub" {
                Tensor::sub_scalar_base(s, &t)
            } else {
                Tensor::div_scalar_base(s, &t)
            })
        }
        "add" | "sub" | "add_" | "sub_" => add_sub(c),
        "mul" => val(c.t(0)?.mul(c.operand(1)?)),
        "mul_" => val(c.t(0)?.mul_(c.operand(1)?)),
        "div_" => val(c.t(0)?.div_(c.operand(1)?)),
        "neg" => val(c.t(0)?.neg()),
        "fill_" if tensor_name(c.arg(1)?).is_some() => val(c.t(0)?.fill_tensor_(&c.t(1)?)),
        "fill_" => val(c.t(0)?.fill_(to_scalar(c.arg(1)?)?)),
        "zero_" => val(c.t(0)?.zero_()),
        "copy_" => val(c.t(0)?.copy_(&c.t(1)?)),
        "sum" => sum(c),
        "requires_grad_" => val(c.t(0)?.requires_grad_(c.bool_or(1, "requires_grad", true)?)),
        "retain_grad" => c
            .t(0)?
            .retain_grad()
            .map(|_| Val::Unit)
            .map_err(CallErr::Lib),
        "backward" => {
            let g = c.kw("gradient").map(|v| c.env.tensor_of(v)).transpose()?;
            let retain = c.kw("retain_graph").map_or(Ok(false), to_bool)?;
            c.t(0)?.backward_with(
                g.as_ref(),
                tapegrad::autograd::BackwardOptions::default().retain_graph(retain),
            )?;
            Ok(Val::Unit)
        }
        "is_grad_enabled" => Ok(Val::Plain(Value::Bool(
            tapegrad::autograd::is_grad_enabled(),
        ))),
        // "set_grad_enabled" is handled by the replayer (it owns the guard).
        op => {
            // Op families in their own files; each answers Missing(op) for ops it does not own.
            for family in [
                ops_arms::dispatch,
                index_arms::dispatch,
                sweep_arms::dispatch,
                conv_arms::dispatch,
                attention_arms::dispatch,
                norm_pool_arms::dispatch,
                resample_arms::dispatch,
            ] {
                match family(c) {
                    Err(CallErr::Missing(m)) if m == op => continue,
                    r => return r,
                }
            }
            Err(CallErr::Missing(op.to_string()))
        }
    }
}

fn add_sub(c: &Call) -> CallResult<Val> {
    let (x, o) = (c.t(0)?, c.operand(1)?);
    let alpha = c.kw("alpha").map(to_scalar).transpose()?;
    val(match (c.op, alpha) {
        ("add", None) => x.add(o),
        ("sub", None) => x.sub(o),
        ("add_", None) => x.add_(o),
        ("sub_", None) => x.sub_(o),
        ("add", Some(a)) => x.add_alpha(o, a),
        ("sub", Some(a)) => x.sub_alpha(o, a),
        ("add_", Some(a)) => x.add_alpha_(o, a),
        (_, Some(a)) => x.sub_alpha_(o, a),
        (_, None) => unreachable!(),
    })
}

fn sum(c: &Call) -> CallResult<Val> {
    let x = c.t(0)?;
    let keepdim = c.bool_or(2, "keepdim", false)?;
    if let Some(dt) = c.kw("dtype") {
        let dims = match c.opt(1, "dim") {
            None | Some(Value::Null) => vec![],
            Some(v) => to_i64s(v)?,
        };
        return val(x.sum_dims_dtype(&dims, keepdim, to_dtype(dt)?));
    }
    match c.opt(1, "dim") {
        None | Some(Value::Null) => val(x.sum()),
        Some(Value::Array(a)) if a.is_empty() => val(x.sum_dims((), keepdim)),
        Some(v) => val(x.sum_dims(&to_i64s(v)?, keepdim)),
    }
}

/// `torch.arange(end)` / `(start, end)` / `(start, end, step)`; int vs float args like torch.
fn arange(c: &Call) -> CallResult<Val> {
    let s: Vec<Scalar> = c.args.iter().map(to_scalar).collect::<CallResult<_>>()?;
    let (start, end, step) = match s.as_slice() {
        [e] => (Scalar::Int(0), *e, Scalar::Int(1)),
        [a, e] => (*a, *e, Scalar::Int(1)),
        [a, e, st] => (*a, *e, *st),
        _ => return bad("arange: bad arity"),
    };
    match c.kw("dtype") {
        Some(d) => val(Tensor::arange_dtype(start, end, step, to_dtype(d)?)),
        None => val(Tensor::arange(start, end, step)),
    }
}

// ------------------------------------------------------------------ comparing

fn dtype_name(d: DType) -> &'static str {
    d.name()
}

fn default_strides(shape: &[usize]) -> Vec<usize> {
    let mut out = vec![0; shape.len()];
    let mut acc = 1;
    for i in (0..shape.len()).rev() {
        out[i] = acc;
        acc *= shape[i].max(1);
    }
    out
}

fn json_usizes(v: &Value) -> Option<Vec<usize>> {
    v.as_array()?
        .iter()
        .map(|x| x.as_u64().map(|u| u as usize))
        .collect()
}

fn fmt_list<T: std::fmt::Debug>(v: &[T]) -> String {
    format!("{v:?}")
}

struct Tol {
    rtol: f64,
    atol: f64,
}

fn compare_values(t: &Tensor, exp: &Value, tol: &Tol) -> Result<(), Fail> {
    let mut flat = vec![];
    flatten_values(exp, &mut flat);
    let lib = |e: Error| {
        fail(
            "values",
            "readable values",
            format!("{:?}: {}", e.kind(), e),
        )
    };
    if flat.len() != t.numel() {
        return Err(fail(
            "values",
            format!("{} elements", flat.len()),
            t.numel(),
        ));
    }
    let Err(f) = compare_values_strict(t, &flat, tol, lib) else {
        return Ok(());
    };
    let relaxed = match relax_values(t.dtype()) {
        RelaxValues::Strict => Err(f),
        RelaxValues::Skip => Ok(()),
        RelaxValues::Multiset => compare_multiset(t, &flat, tol).map_err(|_| f),
    };
    if relaxed.is_ok() {
        RELAX.with(|r| r.used.set(true));
    }
    relaxed
}

// ------------------------------------------------------------------ unspecified samples

/// What a sample's `unspecified` reason leaves open (tools/sweep/README.md): the replayer still
/// checks everything else (dtype, shape, layout, versions, errors, autograd metadata).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Unspecified {
    /// Fully specified.
    No,
    /// Unstable sort / topk among ties: which index is returned. The indices (of `sort`, `topk`,
    /// `argsort`) are not value-checked; gradients (`grad` steps and `autograd.grad` results:
    /// they land on the returned indices) are compared as multisets; everything else (the
    /// sorted values) strictly.
    Ties,
    /// Duplicate indices in `scatter`/`index_put`: which write wins; no values are checked.
    Writes,
    /// Float -> integer casts of nan/inf/out-of-range values (undefined behaviour in C++):
    /// integer tensors are not value-checked.
    IntCast,
}

impl Unspecified {
    pub(crate) fn of_reason(reason: &str) -> Unspecified {
        if reason.contains("sort") || reason.contains("topk") {
            Unspecified::Ties
        } else if reason.contains("scatter") || reason.contains("index_put") {
            Unspecified::Writes
        } else if reason.contains("cast") {
            Unspecified::IntCast
        } else {
            // an unknown reason: check nothing less (the case may then fail)
            Unspecified::No
        }
    }
}

pub(crate) struct RelaxState {
    pub(crate) mode: std::cell::Cell<Unspecified>,
    /// Set when a values comparison passed only thanks to the relaxation.
    pub(crate) used: std::cell::Cell<bool>,
    /// Set while a `grad` step (or a gradient `autograd.grad` returns) is being compared.
    in_grad: std::cell::Cell<bool>,
    /// Set while the indices output of sort/topk/argsort is being compared.
    indices: std::cell::Cell<bool>,
}

thread_local! {
    pub(crate) static RELAX: RelaxState = const {
        RelaxState {
            mode: std::cell::Cell::new(Unspecified::No),
            used: std::cell::Cell::new(false),
            in_grad: std::cell::Cell::new(false),
            indices: std::cell::Cell::new(false),
        }
    };
}

enum RelaxValues {
    Strict,
    Skip,
    Multiset,
}

fn relax_values(dt: DType) -> RelaxValues {
    let (mode, in_grad, indices) = RELAX.with(|r| (r.mode.get(), r.in_grad.get(), r.indices.get()));
    let integer = !(dt.is_float() || dt.is_complex() || dt == DType::Bool);
    match mode {
        Unspecified::No => RelaxValues::Strict,
        Unspecified::Ties if in_grad => RelaxValues::Multiset,
        Unspecified::Ties if indices => RelaxValues::Skip,
        Unspecified::IntCast if integer => RelaxValues::Skip,
        Unspecified::Ties | Unspecified::IntCast => RelaxValues::Strict,
        Unspecified::Writes => RelaxValues::Skip,
    }
}

/// Element `i` of the expected values against the element read back, for float dtypes.
fn float_matches(e: &Value, g: f64, tol: &Tol) -> bool {
    match e {
        Value::String(s) if s == "nan" => g.is_nan(),
        Value::String(s) => s.parse::<f64>().is_ok_and(|x| x == g),
        Value::Number(n) => {
            let x = n.as_f64().unwrap();
            g.is_finite() && (g - x).abs() <= tol.atol + tol.rtol * x.abs()
        }
        _ => false,
    }
}

/// The values as a multiset (the unspecified-order comparison of `unspecified` samples): both
/// sides sorted by a total order, then compared element by element.
fn compare_multiset(t: &Tensor, flat: &[&Value], tol: &Tol) -> Result<(), Fail> {
    if t.dtype() == DType::Bool || t.dtype().is_complex() {
        return Err(fail("values", "a multiset", "not comparable"));
    }
    let mut got = t
        .detach()
        .to_dtype(DType::F64)
        .and_then(|t| t.to_vec::<f64>())
        .map_err(|e| fail("values", "readable", e))?;
    let mut exp: Vec<f64> = flat.iter().map(|v| to_f64(v).unwrap_or(f64::NAN)).collect();
    got.sort_by(f64::total_cmp);
    exp.sort_by(f64::total_cmp);
    for (i, (g, e)) in got.iter().zip(&exp).enumerate() {
        let ok =
            (e.is_nan() && g.is_nan()) || g == e || (g - e).abs() <= tol.atol + tol.rtol * e.abs();
        if !ok {
            return Err(fail(format!("values(multiset)[{i}]"), e, g));
        }
    }
    Ok(())
}

fn compare_values_strict(
    t: &Tensor,
    flat: &[&Value],
    tol: &Tol,
    lib: impl Fn(Error) -> Fail,
) -> Result<(), Fail> {
    let dt = t.dtype();
    if dt.is_complex() {
        let got = t
            .detach()
            .to_dtype(DType::C128)
            .and_then(|t| t.to_vec::<C128>())
            .map_err(lib)?;
        for (i, (g, e)) in got.iter().zip(flat).enumerate() {
            let ok = match e {
                Value::Object(o) => {
                    float_matches(o.get("re").unwrap_or(&Value::Null), g.re, tol)
                        && float_matches(o.get("im").unwrap_or(&Value::Null), g.im, tol)
                }
                // a real expected value for a complex result: imaginary part 0
                e => float_matches(e, g.re, tol) && g.im == 0.0,
            };
            if !ok {
                return Err(fail(
                    format!("values[{i}]"),
                    e,
                    format!("{}{:+}i", g.re, g.im),
                ));
            }
        }
    } else if dt == DType::Bool {
        let got = t.to_vec::<bool>().map_err(lib)?;
        for (i, (g, e)) in got.iter().zip(flat).enumerate() {
            if e.as_bool() != Some(*g) {
                return Err(fail(format!("values[{i}]"), e, g));
            }
        }
    } else if dt.is_float() {
        let got = t
            .detach()
            .to_dtype(DType::F64)
            .and_then(|t| t.to_vec::<f64>())
            .map_err(lib)?;
        for (i, (g, e)) in got.iter().zip(flat).enumerate() {
            if !float_matches(e, *g, tol) {
                return Err(fail(format!("values[{i}]"), e, g));
            }
        }
    } else {
        let got = t
            .detach()
            .to_dtype(DType::I64)
            .and_then(|t| t.to_vec::<i64>())
            .map_err(lib)?;
        for (i, (g, e)) in got.iter().zip(flat).enumerate() {
            if e.as_i64() != Some(*g) {
                return Err(fail(format!("values[{i}]"), e, g));
            }
        }
    }
    Ok(())
}

/// Compares `t` with a tensor EXPECT. `own` are the names that denote `t` itself, `candidates`
/// the names (in binding order) that may be reported as `storage_of`.
fn compare(
    t: &Tensor,
    e: &Value,
    tol: &Tol,
    env: &Env,
    own: &[&str],
    candidates: &[String],
) -> Result<(), Fail> {
    let e = e
        .as_object()
        .ok_or_else(|| fail("expect", "an object", e))?;
    let s = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("?").to_string();
    if dtype_name(t.dtype()) != s("dtype") {
        return Err(fail("dtype", s("dtype"), dtype_name(t.dtype())));
    }
    let shape = t.shape();
    if let Some(es) = e.get("shape")
        && json_usizes(es).as_deref() != Some(shape.as_slice())
    {
        return Err(fail("shape", es, fmt_list(&shape)));
    }
    if let Some(v) = e.get("values") {
        compare_values(t, v, tol)?;
    }
    if let Some(v) = e.get("requires_grad")
        && v.as_bool() != Some(t.requires_grad())
    {
        return Err(fail("requires_grad", v, t.requires_grad()));
    }
    let leaf = t.try_is_leaf();
    let leaf_str = match &leaf {
        Ok(b) => b.to_string(),
        Err(err) => format!("error {:?}", err.kind()),
    };
    if let Some(v) = e.get("is_leaf") {
        if leaf.as_ref().ok() != v.as_bool().as_ref() {
            return Err(fail("is_leaf", v, leaf_str));
        }
    } else {
        let want = e
            .get("grad_fn_error")
            .and_then(|v| v.as_str())
            .unwrap_or("<absent>");
        if leaf
            .as_ref()
            .err()
            .map(|er| format!("{:?}", er.kind()))
            .as_deref()
            != Some(want)
        {
            return Err(fail("grad_fn_error", want, leaf_str));
        }
    }
    if let Some(v) = e.get("version")
        && v.as_u64() != Some(t.version())
    {
        return Err(fail("version", v, t.version()));
    }
    if let Some(v) = e.get("is_view")
        && v.as_bool() != Some(t.is_view())
    {
        return Err(fail("is_view", v, t.is_view()));
    }
    if let Some(v) = e.get("storage_of") {
        let so = candidates
            .iter()
            .filter(|n| !own.contains(&n.as_str()))
            .find(|n| env.get(n).is_some_and(|o| o.shares_storage(t)));
        let got = so.map_or(Value::Null, |n| Value::from(n.as_str()));
        if &got != v {
            return Err(fail("storage_of", v, got));
        }
        let (strides, off) = (t.strides(), t.storage_offset());
        match (e.get("stride"), e.get("offset")) {
            (Some(es), eo) => {
                if json_usizes(es).as_deref() != Some(strides.as_slice()) {
                    return Err(fail("stride", es, fmt_list(&strides)));
                }
                if eo.and_then(|o| o.as_u64()) != Some(off as u64) {
                    return Err(fail("offset", eo.unwrap_or(&Value::Null), off));
                }
            }
            (None, _) => {
                if off != 0 || strides != default_strides(&shape) {
                    let got = format!("{}+{}", fmt_list(&strides), off);
                    return Err(fail("stride", "default layout (unrecorded)", got));
                }
            }
        }
    }
    Ok(())
}

// ------------------------------------------------------------------ replaying one case

pub(crate) enum CaseResult {
    Pass,
    Fail(usize, String, Fail),
    /// The replayer has no arm (or argument form) for a call: a replayer gap.
    Skip(String),
    /// tapegrad's API cannot express a call (no such function or argument form): a library gap.
    NoApi(String),
}

struct Replayer<'a> {
    case: &'a Value,
    env: Env,
    tol: Tol,
    grad_guard: Option<GradModeGuard>,
    last_fail: Option<Fail>,
}

thread_local! {
    /// The step being replayed (index and label), for reporting panics.
    static CURRENT: RefCell<(usize, String)> = const { RefCell::new((0, String::new())) };
}

fn step_label(st: &Value) -> String {
    if let Some(op) = st.get("op").and_then(|v| v.as_str()) {
        op.to_string()
    } else if let Some(n) = st.get("check").and_then(|v| v.as_str()) {
        format!("check({n})")
    } else if let Some(n) = st.get("grad").and_then(|v| v.as_str()) {
        format!("grad({n})")
    } else {
        "?".into()
    }
}

impl<'a> Replayer<'a> {
    fn new(case: &'a Value) -> Self {
        let tol = case.get("tol");
        let f = |k| {
            tol.and_then(|t| t.get(k))
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0)
        };
        Replayer {
            case,
            env: Env::default(),
            tol: Tol {
                rtol: f("rtol"),
                atol: f("atol"),
            },
            grad_guard: None,
            last_fail: None,
        }
    }

    fn run(&mut self) -> CaseResult {
        let empty = vec![];
        let steps = self
            .case
            .get("steps")
            .and_then(|s| s.as_array())
            .unwrap_or(&empty);
        for (i, st) in steps.iter().enumerate() {
            CURRENT.with(|c| *c.borrow_mut() = (i, step_label(st)));
            match self.step(st) {
                Ok(()) => {}
                Err(CallErr::Missing(op)) => return CaseResult::Skip(op),
                Err(CallErr::NoApi(m)) => return CaseResult::NoApi(m),
                Err(CallErr::Bad(msg)) => {
                    return CaseResult::Fail(
                        i,
                        step_label(st),
                        fail("harness", "convertible step", msg),
                    );
                }
                Err(CallErr::Lib(_)) => {
                    unreachable!("library errors are turned into Fails in step()")
                }
            }
            if let Some(f) = self.last_fail.take() {
                return CaseResult::Fail(i, step_label(st), f);
            }
        }
        CaseResult::Pass
    }
}

// `last_fail` is kept outside of the CallErr channel so that step() can use `?` on conversions.
impl Replayer<'_> {
    fn step(&mut self, st: &Value) -> CallResult<()> {
        let r = self.step_inner(st);
        match r {
            Ok(Ok(())) => Ok(()),
            Ok(Err(f)) => {
                self.last_fail = Some(f);
                Ok(())
            }
            Err(e) => Err(e),
        }
    }

    fn step_inner(&mut self, st: &Value) -> CallResult<Result<(), Fail>> {
        let empty_map = Map::new();
        if let Some(n) = st.get("check").and_then(|v| v.as_str()) {
            let t = self.env.tensor_of(&serde_json::json!({ "t": n }))?;
            return Ok(compare(
                &t,
                &st["expect"],
                &self.tol,
                &self.env,
                &[n],
                &self.env.names,
            ));
        }
        if let Some(n) = st.get("grad").and_then(|v| v.as_str()) {
            let t = self.env.tensor_of(&serde_json::json!({ "t": n }))?;
            RELAX.with(|r| r.in_grad.set(true));
            let r = match (t.grad(), &st["expect"]) {
                (None, Value::Null) => Ok(()),
                (Some(g), Value::Null) => Err(fail("grad", "None", format!("{:?}", g.shape()))),
                (None, _) => Err(fail("grad", "a tensor", "None")),
                (Some(g), e) => compare(&g, e, &self.tol, &self.env, &[], &[]),
            };
            RELAX.with(|r| r.in_grad.set(false));
            return Ok(r);
        }
        let op = st
            .get("op")
            .and_then(|v| v.as_str())
            .map_or_else(|| bad("step without op"), Ok)?;
        let args = st
            .get("args")
            .and_then(|v| v.as_array())
            .map(|a| a.as_slice())
            .unwrap_or(&[]);
        let kwargs = st
            .get("kwargs")
            .and_then(|v| v.as_object())
            .unwrap_or(&empty_map);
        let result = if op == "set_grad_enabled" {
            let on = to_bool(args.first().unwrap_or(&Value::Null))?;
            self.grad_guard = None;
            self.grad_guard = Some(set_grad_enabled(on));
            Ok(Val::Unit)
        } else {
            let call = Call {
                op,
                args,
                kwargs,
                env: &self.env,
                used: RefCell::new(HashSet::new()),
            };
            let r = dispatch(&call).map_err(|e| match e {
                CallErr::Missing(m) if m.starts_with('(') => CallErr::Missing(format!("{op}{m}")),
                CallErr::NoApi(m) if m.starts_with('(') => CallErr::NoApi(format!("{op}{m}")),
                e => e,
            });
            let unused = call.unused_kwargs();
            if !unused.is_empty() && !matches!(r, Err(CallErr::Missing(_) | CallErr::NoApi(_))) {
                return Err(CallErr::Missing(format!("{op}({}=)", unused.join("=,"))));
            }
            r
        };
        if let Some(kind) = st.get("error").and_then(|v| v.as_str()) {
            return match result {
                Err(CallErr::Lib(e)) if format!("{:?}", e.kind()) == kind => Ok(Ok(())),
                Err(CallErr::Lib(e)) => {
                    Ok(Err(fail("error", kind, format!("{:?} ({e})", e.kind()))))
                }
                Err(other) => Err(other),
                Ok(_) => Ok(Err(fail("error", kind, "success"))),
            };
        }
        let res = match result {
            Ok(v) => v,
            Err(CallErr::Lib(e)) => {
                return Ok(Err(fail(
                    "error",
                    "success",
                    format!("{:?} ({e})", e.kind()),
                )));
            }
            Err(other) => return Err(other),
        };
        Ok(self.bind_and_check(st, res))
    }

    fn bind_and_check(&mut self, st: &Value, res: Val) -> Result<(), Fail> {
        let before = self.env.names.clone();
        let expect = st.get("expect");
        match (st.get("out"), res) {
            (Some(Value::Array(outs)), Val::Many(ts)) => {
                if outs.len() != ts.len() {
                    return Err(fail("outputs", outs.len(), ts.len()));
                }
                for (n, t) in outs.iter().zip(ts) {
                    self.env.bind(n.as_str().unwrap_or("?"), t);
                }
                let exps = expect
                    .and_then(|e| e.as_array())
                    .cloned()
                    .unwrap_or_default();
                let mut cands = before;
                let op = st.get("op").and_then(|v| v.as_str()).unwrap_or("");
                for (i, (n, e)) in outs.iter().zip(&exps).enumerate() {
                    let n = n.as_str().unwrap_or("?");
                    let t = self.env.get(n).unwrap().clone();
                    // `(values, indices)` of sort/topk: the indices among ties are unspecified
                    let indices = i == 1 && matches!(op, "sort" | "topk");
                    // the gradients `autograd.grad` returns: compared like a `grad` step's
                    let in_grad = op == "autograd.grad";
                    RELAX.with(|r| {
                        r.indices.set(indices);
                        r.in_grad.set(in_grad);
                    });
                    let r = compare(&t, e, &self.tol, &self.env, &[n], &cands);
                    RELAX.with(|r| {
                        r.indices.set(false);
                        r.in_grad.set(false);
                    });
                    r?;
                    cands.push(n.to_string());
                }
                Ok(())
            }
            (Some(Value::Array(_)), _) => Err(fail("result", "several tensors", "something else")),
            // An empty tuple (`unbind`/`chunk` of a size-0 dim) is recorded as `{"value": []}`.
            (None, Val::Many(ts))
                if expect.and_then(|e| e.get("value")) == Some(&Value::Array(vec![])) =>
            {
                if ts.is_empty() {
                    Ok(())
                } else {
                    Err(fail("outputs", 0, ts.len()))
                }
            }
            (_, Val::Plain(v)) => match expect.and_then(|e| e.get("value")) {
                Some(ev) if ev == &v => Ok(()),
                Some(ev) => Err(fail("value", ev, v)),
                None => Err(fail("result", "a tensor", v)),
            },
            (Some(Value::String(n)), Val::T(t)) => {
                self.env.bind(n, t.clone());
                let indices = st.get("op").and_then(|v| v.as_str()) == Some("argsort");
                RELAX.with(|r| r.indices.set(indices));
                let r = match expect {
                    Some(e) => compare(&t, e, &self.tol, &self.env, &[n.as_str()], &before),
                    None => Ok(()),
                };
                RELAX.with(|r| r.indices.set(false));
                r
            }
            (None, Val::T(t)) => {
                let Some(e) = expect else { return Ok(()) };
                if let Some(ev) = e.get("value") {
                    return Err(fail("value", ev, "a tensor"));
                }
                let self_name = st["args"].get(0).and_then(tensor_name);
                let own = match self_name.filter(|n| self.env.get(n).is_some_and(|s| s.is_same(&t)))
                {
                    Some(n) => n.to_string(),
                    None => match before
                        .iter()
                        .find(|n| self.env.get(n).is_some_and(|s| s.is_same(&t)))
                    {
                        Some(n) => n.clone(),
                        None => {
                            return Err(fail(
                                "result",
                                "the same object as args[0]",
                                "a new tensor",
                            ));
                        }
                    },
                };
                compare(&t, e, &self.tol, &self.env, &[own.as_str()], &before)
            }
            (_, Val::Unit) => match expect {
                None => Ok(()),
                Some(e) => Err(fail("result", e, "nothing")),
            },
            (_, Val::Many(_)) => Err(fail("result", "one tensor", "several")),
            (Some(o), _) => Err(fail("out", "a name", o)),
        }
    }
}

// ------------------------------------------------------------------ driver

fn fixture_files() -> Vec<std::path::PathBuf> {
    let dirs = std::env::var("TAPEGRAD_CONFORMANCE_DIRS")
        .map(|s| {
            s.split(':')
                .filter(|d| !d.is_empty())
                .map(String::from)
                .collect::<Vec<_>>()
        })
        .unwrap_or_else(|_| {
            vec![concat!(env!("CARGO_MANIFEST_DIR"), "/grad_tests/fixtures").to_string()]
        });
    let mut files = vec![];
    for d in dirs {
        let rd =
            std::fs::read_dir(&d).unwrap_or_else(|e| panic!("cannot read fixture dir {d}: {e}"));
        files.extend(
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json")),
        );
    }
    files.sort();
    files
}

pub(crate) fn panic_message(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "non-string panic".into())
}

pub(crate) fn run_case(case: &Value) -> CaseResult {
    let mode = case
        .get("unspecified")
        .and_then(|v| v.as_str())
        .map_or(Unspecified::No, Unspecified::of_reason);
    RELAX.with(|r| {
        r.mode.set(mode);
        r.used.set(false);
        r.in_grad.set(false);
        r.indices.set(false);
    });
    let _grad_on = set_grad_enabled(true);
    let r = catch_unwind(AssertUnwindSafe(|| {
        let mut rp = Replayer::new(case);
        let r = rp.run();
        drop(rp.grad_guard.take());
        r
    }));
    r.unwrap_or_else(|p| {
        let (i, op) = CURRENT.with(|c| c.borrow().clone());
        CaseResult::Fail(i, op, fail("panic", "no panic", panic_message(&*p)))
    })
}

#[allow(dead_code)]
fn main() {
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let strict = std::env::var("TAPEGRAD_CONFORMANCE_STRICT").is_ok_and(|v| v == "1");
    std::panic::set_hook(Box::new(|_| {}));
    let (mut tp, mut tf, mut ts) = (0, 0, 0);
    for path in fixture_files() {
        let text = std::fs::read_to_string(&path).expect("read fixture");
        let data: Value = serde_json::from_str(&text).expect("parse fixture");
        assert_eq!(data["format"], 1, "{}: unsupported format", path.display());
        let module = data["module"].as_str().unwrap_or("?").to_string();
        let (mut p, mut f, mut s) = (0, 0, 0);
        for case in data["cases"].as_array().into_iter().flatten() {
            let name = case["name"].as_str().unwrap_or("?");
            if !filter.is_empty() && !filter.iter().any(|x| name.contains(x.as_str())) {
                continue;
            }
            match run_case(case) {
                CaseResult::Pass => p += 1,
                CaseResult::Fail(i, op, fl) => {
                    f += 1;
                    println!(
                        "FAIL {name} step {i} {op}: {}: expected {} got {}",
                        fl.field, fl.expected, fl.got
                    );
                }
                CaseResult::Skip(ops) => {
                    s += 1;
                    println!("SKIP {name}: missing {ops}");
                }
                CaseResult::NoApi(what) => {
                    s += 1;
                    println!("SKIP {name}: no tapegrad API for {what}");
                }
            }
        }
        println!("conformance {module}: {p} passed, {f} failed, {s} skipped");
        (tp, tf, ts) = (tp + p, tf + f, ts + s);
    }
    println!("conformance: {tp} passed, {tf} failed, {ts} skipped");
    if tf > 0 || (strict && ts > 0) {
        std::process::exit(1);
    }
}
