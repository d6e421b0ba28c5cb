//! cargo-fuzz target `zip`: see `fuzz/logic/zip.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::zip::run(data));
