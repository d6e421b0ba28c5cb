//! cargo-fuzz target `sparse`: see `fuzz/logic/sparse.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::sparse::run(data));
