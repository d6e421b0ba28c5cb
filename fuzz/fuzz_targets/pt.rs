//! cargo-fuzz target `pt`: see `fuzz/logic/pt.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::pt::run(data));
