//! cargo-fuzz target `nn_geometry`: see `fuzz/logic/nn_geometry.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::nn_geometry::run(data));
