//! Reliability tests: regressions for bugs the fuzz targets found, resource limits (absurd sizes
//! are errors, never aborts) and a smoke run of every fuzz target over its corpus. Besides
//! `cargo test --release`, CI runs this crate with overflow checks and debug assertions:
//! `cargo test --profile release-checked --test reliability` (it is kept small so that step does
//! not build the whole suite a second time).

mod fuzz_regressions;
mod fuzz_smoke;
mod limits;
