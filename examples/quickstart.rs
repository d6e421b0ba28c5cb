//! Quick start: tensors, views that share storage, in-place ops with version counters, autograd.
//!
//! Run with `cargo run --release --example quickstart`.

use tapegrad::{DType, Result, Tensor};

/// What the quick start shows, returned for grad_tests/examples.rs.
pub struct Quickstart {
    /// `x` after `column *= 10` through a strided view.
    pub x: Vec<f32>,
    /// (strides, storage offset) of the column view.
    pub column_geometry: (Vec<usize>, usize),
    /// The version counter `x` shares with its views.
    pub version: u64,
    /// `d loss / d w`.
    pub grad: Vec<f64>,
}

/// Runs the walkthrough; prints each step when `verbose`.
pub fn run(verbose: bool) -> Result<Quickstart> {
    // Views share storage and the version counter with their base.
    let x = Tensor::arange_dtype(0, 6, 1, DType::F32)?.view(&[2, 3])?;
    let col = x.t()?.select(0, 1)?; // column 1 of x: a strided view, no copy
    let column_geometry = (col.strides(), col.storage_offset());
    col.mul_(10.0)?; // in place through the view: the base sees it, the version moves
    if verbose {
        println!(
            "column 1 of x: strides {:?}, offset {}",
            column_geometry.0, column_geometry.1
        );
        println!("after col *= 10: x = {x}, version {}", x.version());
    }

    // Autograd through an in-place op on a view of an intermediate (PyTorch's CopySlices).
    let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?.requires_grad_(true)?;
    let b = w.copy()?; // clone
    b.select(0, 1)?.mul_(10.0)?; // b = [[1, 2], [30, 40]]
    let loss = b.mul(&b)?.sum()?;
    loss.backward()?; // d loss/d w = 2 b * [[1, 1], [10, 10]]
    let grad = w.grad().expect("w is a leaf that requires grad");
    if verbose {
        println!("loss = {loss}\ndloss/dw = {grad}");
    }
    Ok(Quickstart {
        x: x.to_vec()?,
        column_geometry,
        version: x.version(),
        grad: grad.to_vec()?,
    })
}

#[allow(dead_code)] // grad_tests/examples.rs includes this file and calls `run`
fn main() -> Result<()> {
    run(true).map(|_| ())
}
