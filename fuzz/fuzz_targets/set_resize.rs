//! cargo-fuzz target `set_resize`: see `fuzz/logic/set_resize.rs`.
#![no_main]

#[path = "../logic/mod.rs"]
mod logic;

libfuzzer_sys::fuzz_target!(|data: &[u8]| logic::set_resize::run(data));
