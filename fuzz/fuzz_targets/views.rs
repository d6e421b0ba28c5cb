//! cargo-fuzz target `views`: see `fuzz/logic/views.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::views::run(data));
