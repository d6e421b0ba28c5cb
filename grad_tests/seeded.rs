//! Tests that depend on the process-global seeded generator (`tapegrad::manual_seed`, like
//! PyTorch's default generator): the digits MLP of `examples/train_mlp.rs` must train to the same
//! accuracy twice under one seed, the regression example compares two trainings from the same
//! seed, and gradcheck of `dropout` re-seeds before every evaluation so each draws the same mask.
//! A draw from another test between a seed and its use would change the result, so these tests
//! live in their own process (no test of the main crate can draw in between) and each holds
//! [`serial`] while it runs (none of them can draw in between either). The other process-wide
//! switches live here for the same reason: anomaly mode (`anomaly`) and the live-bytes gauge
//! behind the checkpoint memory figure (`checkpoint_seeded`).

#[allow(dead_code)] // this crate uses a subset of the shared helpers
mod common;

mod anomaly;
mod checkpoint_seeded;
mod custom_fns;
mod examples;
mod gradcheck_all;
mod op_names;
mod seeded_rng;
mod train;

use std::sync::{Mutex, MutexGuard};

/// Serialises this crate's tests: hold the guard for the whole test.
fn serial() -> MutexGuard<'static, ()> {
    static LOCK: Mutex<()> = Mutex::new(());
    // a failed test poisons the lock; the others still run, one at a time
    LOCK.lock().unwrap_or_else(|e| e.into_inner())
}
