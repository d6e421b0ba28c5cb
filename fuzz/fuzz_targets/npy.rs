//! cargo-fuzz target `npy`: see `fuzz/logic/npy.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::npy::run(data));
