//! cargo-fuzz target `safetensors`: see `fuzz/logic/safetensors.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::safetensors::run(data));
