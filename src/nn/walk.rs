//! The recursive walks behind [`Module`]'s provided methods: a module's own members (one
//! [`Visitor`] pass), the pre-order module list with dotted keys, named parameters and
//! buffers, and the PyTorch-style `repr`.

use super::module::{Module, Visitor};
use crate::Tensor;

/// One module's own members, in registration order.
pub(crate) struct Own<'a> {
    pub(crate) params: Vec<(String, &'a Tensor)>,
    pub(crate) buffers: Vec<(String, &'a Tensor, bool)>,
    pub(crate) children: Vec<(String, &'a dyn Module)>,
}

impl<'a> Visitor<'a> for Own<'a> {
    fn parameter(&mut self, name: &str, t: &'a Tensor) {
        self.params.push((name.to_string(), t));
    }
    fn buffer(&mut self, name: &str, t: &'a Tensor, persistent: bool) {
        self.buffers.push((name.to_string(), t, persistent));
    }
    fn module(&mut self, name: &str, m: &'a dyn Module) {
        self.children.push((name.to_string(), m));
    }
}

/// The members `m` registers itself (not its descendants').
pub(crate) fn own(m: &dyn Module) -> Own<'_> {
    let mut o = Own {
        params: Vec::new(),
        buffers: Vec::new(),
        children: Vec::new(),
    };
    m.visit(&mut o);
    o
}

/// `prefix.name`, or `name` at the root.
pub(crate) fn join(prefix: &str, name: &str) -> String {
    if prefix.is_empty() {
        name.to_string()
    } else {
        format!("{prefix}.{name}")
    }
}

/// `m` under `prefix`, then every descendant, pre-order (PyTorch's `named_modules`).
pub(crate) fn modules<'a>(
    m: &'a dyn Module,
    prefix: String,
    out: &mut Vec<(String, &'a dyn Module)>,
) {
    let children = own(m).children;
    out.push((prefix.clone(), m));
    for (n, c) in children {
        modules(c, join(&prefix, &n), out);
    }
}

/// Which tensors [`named_tensors`] lists.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    Parameters,
    Buffers,
}

/// Parameters or buffers of every module with dotted keys, each tensor object once.
pub(crate) fn named_tensors(m: &dyn Module, kind: Kind) -> Vec<(String, Tensor)> {
    let mut mods = Vec::new();
    modules(m, String::new(), &mut mods);
    let mut out: Vec<(String, Tensor)> = Vec::new();
    for (prefix, m) in mods {
        let o = own(m);
        let ts: Vec<(String, &Tensor)> = match kind {
            Kind::Parameters => o.params,
            Kind::Buffers => o.buffers.into_iter().map(|(n, t, _)| (n, t)).collect(),
        };
        for (n, t) in ts {
            if !out.iter().any(|(_, s)| s.is_same(t)) {
                out.push((join(&prefix, &n), t.clone()));
            }
        }
    }
    out
}

/// The last path segment of a type name, without generic arguments.
pub(crate) fn short_type_name(full: &str) -> String {
    let base = full.split('<').next().unwrap_or(full);
    base.rsplit("::").next().unwrap_or(base).to_string()
}

/// PyTorch's `_addindent`: every line after the first indented by `n` spaces.
pub(crate) fn add_indent(s: &str, n: usize) -> String {
    let pad = " ".repeat(n);
    let mut lines = s.split('\n');
    let mut out = lines.next().unwrap_or("").to_string();
    for l in lines {
        out.push('\n');
        out.push_str(&pad);
        out.push_str(l);
    }
    out
}

/// PyTorch's `Module.__repr__`.
pub(crate) fn repr(m: &dyn Module) -> String {
    let extra = m.extra_repr();
    let extra_lines: Vec<String> = if extra.is_empty() {
        Vec::new()
    } else {
        extra.split('\n').map(str::to_string).collect()
    };
    let child_lines: Vec<String> = own(m)
        .children
        .into_iter()
        .map(|(n, c)| format!("({n}): {}", add_indent(&c.repr(), 2)))
        .collect();
    let mut s = m.type_name() + "(";
    if extra_lines.len() == 1 && child_lines.is_empty() {
        s += &extra_lines[0];
    } else if !extra_lines.is_empty() || !child_lines.is_empty() {
        let lines: Vec<String> = extra_lines.into_iter().chain(child_lines).collect();
        s += "\n  ";
        s += &lines.join("\n  ");
        s += "\n";
    }
    s + ")"
}

/// A float as Python's `repr` prints it (`1e-05`, `0.1`, `2.0`), for `extra_repr` texts.
pub(crate) fn py_float(x: f64) -> String {
    if x == 0.0 || (1e-4..1e16).contains(&x.abs()) {
        let s = format!("{x:?}");
        return if s.contains('.') || s.contains('e') || !x.is_finite() {
            s
        } else {
            s + ".0"
        };
    }
    let s = format!("{x:e}");
    match s.split_once('e') {
        Some((m, e)) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => ('-', d),
                None => ('+', e),
            };
            format!("{m}e{sign}{digits:0>2}")
        }
        None => s,
    }
}

/// Python's `True`/`False`.
pub(crate) fn py_bool(b: bool) -> &'static str {
    if b { "True" } else { "False" }
}
