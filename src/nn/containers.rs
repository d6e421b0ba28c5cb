//! Containers of modules of one type `M` (any module by default, `Box<dyn Module>`):
//! [`ModuleList`] (children `0`, `1`, ...) and [`ModuleDict`] (children named by their keys),
//! PyTorch's `nn.ModuleList` / `nn.ModuleDict`. A typed container keeps each element's own
//! `forward`, whatever its inputs: `for block in &self.blocks { h = block.forward(&h, mask)? }`.

use super::walk::add_indent;
use super::{Module, Visitor, VisitorMut};
use indexmap::IndexMap;

/// Modules in a list, keyed `0`, `1`, ... (`layers.0.attn.q.weight`), PyTorch's `ModuleList`.
///
/// ```
/// # use tapegrad::{DType, nn::{Linear, Module, ModuleList}};
/// let layers: ModuleList<Linear> = (0..2).map(|_| Linear::new(2, 2, false, DType::F32)).collect::<Result<_, _>>()?;
/// let keys: Vec<String> = layers.named_parameters().into_iter().map(|(k, _)| k).collect();
/// assert_eq!(keys, ["0.weight", "1.weight"]);
/// assert_eq!(layers.to_string(), "ModuleList(\n  (0-1): 2 x Linear(in_features=2, out_features=2, bias=False)\n)");
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct ModuleList<M: Module = Box<dyn Module>> {
    items: Vec<M>,
}

impl<M: Module> Default for ModuleList<M> {
    fn default() -> Self {
        ModuleList { items: Vec::new() }
    }
}

impl<M: Module> ModuleList<M> {
    /// An empty list.
    pub fn new() -> Self {
        Self::default()
    }
    /// Appends a module (PyTorch's `append`).
    pub fn push(&mut self, m: M) {
        self.items.push(m);
    }
    /// Module `i`.
    pub fn get(&self, i: usize) -> Option<&M> {
        self.items.get(i)
    }
    /// Module `i`, mutably.
    pub fn get_mut(&mut self, i: usize) -> Option<&mut M> {
        self.items.get_mut(i)
    }
    /// The modules, in order.
    pub fn iter(&self) -> std::slice::Iter<'_, M> {
        self.items.iter()
    }
    /// Number of modules.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<M: Module> FromIterator<M> for ModuleList<M> {
    fn from_iter<I: IntoIterator<Item = M>>(iter: I) -> Self {
        ModuleList {
            items: iter.into_iter().collect(),
        }
    }
}

impl<'s, M: Module> IntoIterator for &'s ModuleList<M> {
    type Item = &'s M;
    type IntoIter = std::slice::Iter<'s, M>;
    fn into_iter(self) -> Self::IntoIter {
        self.items.iter()
    }
}

impl<M: Module> std::ops::Index<usize> for ModuleList<M> {
    type Output = M;
    fn index(&self, i: usize) -> &M {
        &self.items[i]
    }
}

impl<M: Module> Module for ModuleList<M> {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        for (i, m) in self.items.iter().enumerate() {
            v.module(&i.to_string(), m);
        }
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        for (i, m) in self.items.iter_mut().enumerate() {
            v.module(&i.to_string(), m);
        }
    }
    /// PyTorch's `ModuleList.__repr__`: runs of identical children print once, as
    /// `(first-last): n x child`.
    fn repr(&self) -> String {
        let reprs: Vec<String> = self.items.iter().map(|m| m.repr()).collect();
        if reprs.is_empty() {
            return self.type_name() + "()";
        }
        let mut runs: Vec<(usize, usize, &String)> = Vec::new();
        for (i, r) in reprs.iter().enumerate() {
            match runs.last_mut() {
                Some((_, end, b)) if *b == r => *end = i,
                _ => runs.push((i, i, r)),
            }
        }
        let lines: Vec<String> = runs
            .into_iter()
            .map(|(s, e, b)| {
                let l = if s == e {
                    format!("({s}): {b}")
                } else {
                    format!("({s}-{e}): {} x {b}", e - s + 1)
                };
                add_indent(&l, 2)
            })
            .collect();
        format!("{}(\n  {}\n)", self.type_name(), lines.join("\n  "))
    }
}

/// Modules under string keys, in insertion order, PyTorch's `ModuleDict`.
///
/// ```
/// # use tapegrad::{DType, nn::{Linear, Module, ModuleDict}};
/// let mut heads = ModuleDict::new();
/// heads.insert("cls", Linear::new(4, 3, true, DType::F32)?);
/// heads.insert("reg", Linear::new(4, 1, false, DType::F32)?);
/// let keys: Vec<String> = heads.named_parameters().into_iter().map(|(k, _)| k).collect();
/// assert_eq!(keys, ["cls.weight", "cls.bias", "reg.weight"]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct ModuleDict<M: Module = Box<dyn Module>> {
    items: IndexMap<String, M>,
}

impl<M: Module> Default for ModuleDict<M> {
    fn default() -> Self {
        ModuleDict {
            items: IndexMap::new(),
        }
    }
}

impl<M: Module> ModuleDict<M> {
    /// An empty dict.
    pub fn new() -> Self {
        Self::default()
    }
    /// Adds (or replaces, keeping its place) the module under `key`; returns the one replaced.
    pub fn insert(&mut self, key: impl Into<String>, m: M) -> Option<M> {
        self.items.insert(key.into(), m)
    }
    /// The module under `key`.
    pub fn get(&self, key: &str) -> Option<&M> {
        self.items.get(key)
    }
    /// The module under `key`, mutably.
    pub fn get_mut(&mut self, key: &str) -> Option<&mut M> {
        self.items.get_mut(key)
    }
    /// (key, module) pairs in insertion order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &M)> {
        self.items.iter().map(|(k, m)| (k.as_str(), m))
    }
    /// The keys in insertion order.
    pub fn keys(&self) -> impl Iterator<Item = &str> {
        self.items.keys().map(String::as_str)
    }
    /// Number of modules.
    pub fn len(&self) -> usize {
        self.items.len()
    }
    /// True when empty.
    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }
}

impl<M: Module> std::ops::Index<&str> for ModuleDict<M> {
    type Output = M;
    fn index(&self, key: &str) -> &M {
        &self.items[key]
    }
}

impl<M: Module> Module for ModuleDict<M> {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        for (k, m) in &self.items {
            v.module(k, m);
        }
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        for (k, m) in self.items.iter_mut() {
            v.module(k, m);
        }
    }
}

impl<M: Module> std::fmt::Display for ModuleList<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}

impl<M: Module> std::fmt::Display for ModuleDict<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.repr())
    }
}
