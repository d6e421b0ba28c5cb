//! Fuzz-target logic shared by the cargo-fuzz targets (`fuzz/fuzz_targets/*.rs`) and the CI smoke
//! test (`grad_tests/fuzz_smoke.rs`). Each target is a plain `fn run(&[u8])` that panics when an
//! invariant breaks; it never depends on libFuzzer, so the same code replays corpora in CI.
#![allow(dead_code)]

pub mod check;
pub mod index;
pub mod input;
pub mod interp;
pub mod nn_geometry;
pub mod npy;
pub mod pt;
pub mod safetensors;
pub mod set_resize;
pub mod sparse;
pub mod views;
pub mod zip;

/// A fuzz target: its name and entry point.
pub type Target = (&'static str, fn(&[u8]));

/// Every target by name, as `(name, entry point)`.
pub const TARGETS: &[Target] = &[
    ("views", views::run),
    ("index", index::run),
    ("set_resize", set_resize::run),
    ("interp", interp::run),
    ("sparse", sparse::run),
    ("pt", pt::run),
    ("zip", zip::run),
    ("npy", npy::run),
    ("safetensors", safetensors::run),
    ("nn_geometry", nn_geometry::run),
];
