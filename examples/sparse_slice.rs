//! Sparse slicing with gradients: COO and CSR tensors sliced like Paddle's `sparse.slice`, the
//! gradient of the input keeping the input's pattern (what an optimizer over `values` needs).
//!
//! Run: `cargo run --release --example sparse_slice`

use tapegrad::{Result, Tensor, sparse};

fn main() -> Result<()> {
    let dense = Tensor::from_vec(
        vec![1.0f64, 2., 0., 4., 0., 5., 6., 0., 7., 0., 8., 9.],
        &[3, 4],
    )?;

    // COO: rows 1.., columns 1..3
    let x = dense.to_sparse()?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[0, 1], &[1, 1], &[i64::MAX, 3])?;
    println!("COO x[1:, 1:3] =\n{out}\n");
    // loss = sum(out.values^2): d/d(values) = 2 * values
    let v = out.values()?;
    v.mul(&v)?.sum()?.backward()?;
    let g = x.grad().expect("gradient");
    println!("x.grad (same pattern as x) =\n{g}");
    println!("dense x.grad = {}\n", g.to_dense()?);

    // CSR: last two columns, negative start
    let c = dense.to_sparse_csr()?.requires_grad_(true)?;
    let out = sparse::slice(&c, &[1], &[-2], &[4])?;
    println!("CSR x[:, -2:] =\n{out}\n");
    out.values()?.sum()?.backward()?;
    println!(
        "c.grad values (aligned with c.values) = {}",
        c.grad().expect("gradient").values()?
    );

    // sparse @ dense with gradients w.r.t. both operands
    let w = Tensor::ones(&[4, 2], tapegrad::DType::F64)?.requires_grad_(true)?;
    let y = sparse::matmul(&x.detach().requires_grad_(true)?, &w)?;
    y.sum()?.backward()?;
    println!("\nx @ w = {y}\nw.grad = {}", w.grad().expect("gradient"));
    Ok(())
}
