//! In-place ops through views, the version counter, and the error autograd raises when a tensor
//! saved for backward was modified in place — then two ways to fix it.
//!
//! Run with `cargo run --release --example views_and_versions`.

use tapegrad::{DType, ErrorKind, Result, Tensor};

/// What the walkthrough observed, returned for grad_tests/examples.rs.
pub struct Outcome {
    /// The base after writing row 1 and column 2 through two views.
    pub base: Vec<f32>,
    /// (base, row view, column view) versions: one shared counter.
    pub versions: (u64, u64, u64),
    /// The kind of the error from backward after the saved tensor was modified.
    pub error_kind: ErrorKind,
    /// Its message (PyTorch's wording).
    pub error_message: String,
    /// Gradient with fix 1 (modify a copy).
    pub grad_copy_fix: Vec<f64>,
    /// Gradient with fix 2 (out-of-place op).
    pub grad_out_of_place_fix: Vec<f64>,
}

/// Runs the walkthrough; prints each step when `verbose`.
pub fn run(verbose: bool) -> Result<Outcome> {
    // 1. Views alias their base: writes through any of them are seen by all, and every write
    //    bumps the one version counter they share.
    let base = Tensor::zeros(&[3, 4], DType::F32)?;
    let row = base.select(0, 1)?;
    let col = base.narrow(1, 2, 1)?;
    row.fill_(1.0)?;
    col.add_(5.0)?;
    let versions = (base.version(), row.version(), col.version());
    if verbose {
        println!("base after row.fill_(1), col.add_(5):\n{base}");
        println!("versions (base, row, col) = {versions:?}");
    }

    // 2. exp saves its output for backward (d exp(x) = exp(x) dx). Scaling part of that output
    //    in place through a view changes what backward would read, so backward refuses.
    let x = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4])?.requires_grad_(true)?;
    let y = x.exp()?;
    y.narrow(0, 0, 2)?.mul_(2.0)?; // allowed here, and recorded (CopySlices)...
    let err = y
        .sum()?
        .backward()
        .expect_err("the saved output was modified");
    if verbose {
        println!("backward after modifying exp's output in place:\n  {err}");
    }

    // 3a. Fix: modify a copy, leaving the saved tensor alone.
    let x1 = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4])?.requires_grad_(true)?;
    let y1 = x1.exp()?.copy()?;
    y1.narrow(0, 0, 2)?.mul_(2.0)?;
    y1.sum()?.backward()?;
    let grad_copy_fix = x1.grad().expect("leaf").to_vec::<f64>()?;

    // 3b. Fix: express the scaling out of place.
    let x2 = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4])?.requires_grad_(true)?;
    let scale = Tensor::from_vec(vec![2.0f64, 2.0, 1.0, 1.0], &[4])?;
    x2.exp()?.mul(&scale)?.sum()?.backward()?;
    let grad_out_of_place_fix = x2.grad().expect("leaf").to_vec::<f64>()?;
    if verbose {
        println!("fixed (copy):         dy/dx = {grad_copy_fix:?}");
        println!("fixed (out of place): dy/dx = {grad_out_of_place_fix:?}");
    }
    Ok(Outcome {
        base: base.to_vec()?,
        versions,
        error_kind: err.kind(),
        error_message: err.to_string(),
        grad_copy_fix,
        grad_out_of_place_fix,
    })
}

#[allow(dead_code)] // grad_tests/examples.rs includes this file and calls `run`
fn main() -> Result<()> {
    run(true).map(|_| ())
}
