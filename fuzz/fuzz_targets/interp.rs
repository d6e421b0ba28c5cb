//! cargo-fuzz target `interp`: see `fuzz/logic/interp.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::interp::run(data));
