//! Quick start: tensors, views that share storage, in-place ops with version counters, autograd.
//!
//! Run with `cargo run --release --example quickstart`.

use tapegrad::{DType, Result, Tensor};

fn main() -> Result<()> {
    // Tensors and views: a view shares storage and the version counter with its base.
    let x = Tensor::arange_dtype(0, 6, 1, DType::F32)?.view(&[2, 3])?;
    let col = x.t()?.select(0, 1)?; // column 1 of x, a strided view
    println!(
        "x = {x}\ncolumn 1 = {col}  (strides {:?}, offset {})",
        col.strides(),
        col.storage_offset()
    );

    // In-place through a view: the base sees it and the shared version moves.
    col.mul_(10.0)?;
    println!("after col *= 10: x = {x}, version {}", x.version());

    // Autograd, including an in-place op on a view of an intermediate (CopySlices).
    let w = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?.requires_grad_(true)?;
    let b = w.copy()?;
    b.select(0, 1)?.mul_(10.0)?;
    let loss = b.mul(&b)?.sum()?;
    loss.backward()?;
    println!(
        "loss = {loss}\ndloss/dw = {}",
        w.grad().expect("w is a leaf that requires grad")
    );
    Ok(())
}
