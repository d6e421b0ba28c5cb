//! The OpInfo-style sweep of every op against PyTorch (issue 21): the conformance replayer over
//! `grad_tests/fixtures/sweep/*.json.gz`, as a ratchet against the checked-in
//! `grad_tests/fixtures/sweep/divergences.txt`. See `grad_tests/conformance/sweep.rs`.

#[allow(dead_code)]
#[path = "conformance.rs"]
mod conformance;

fn main() {
    conformance::sweep::main();
}
