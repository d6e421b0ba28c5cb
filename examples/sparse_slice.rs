//! Sparse slicing with gradients: COO and CSR tensors sliced like Paddle's `sparse.slice`, the
//! gradient of the input keeping the input's pattern (what an optimizer over `values` needs).
//!
//! Run: `cargo run --release --example sparse_slice`

use tapegrad::{Result, Tensor, sparse};

/// What the example computes (checked by grad_tests/examples.rs).
pub struct Demo {
    /// COO `x[1:, 1:3]`, dense form.
    pub coo_slice: Tensor,
    /// Gradient of `sum(slice.values²)` w.r.t. the COO `x`, dense form.
    pub coo_grad_dense: Tensor,
    /// Gradient of `sum(x[:, -2:].values)` w.r.t. the CSR `x`, its values (aligned with `x.values()`).
    pub csr_grad_values: Tensor,
    /// `x @ w` with `w = ones(4, 2)`.
    pub product: Tensor,
    /// Gradient of `sum(x @ w)` w.r.t. `w`.
    pub w_grad: Tensor,
}

#[allow(dead_code)] // grad_tests/examples.rs includes this file and calls `run` directly
fn main() -> Result<()> {
    run(true).map(|_| ())
}

/// Runs the demo; prints each step when `verbose`.
pub fn run(verbose: bool) -> Result<Demo> {
    let dense = Tensor::from_vec(
        vec![1.0f64, 2., 0., 4., 0., 5., 6., 0., 7., 0., 8., 9.],
        &[3, 4],
    )?;

    // COO: rows 1.., columns 1..3
    let x = dense.to_sparse()?.requires_grad_(true)?;
    let out = sparse::slice(&x, &[0, 1], &[1, 1], &[i64::MAX, 3])?;
    // loss = sum(out.values^2): d/d(values) = 2 * values
    let v = out.values()?;
    v.mul(&v)?.sum()?.backward()?;
    let g = x.grad().expect("gradient");
    if verbose {
        println!("COO x[1:, 1:3] =\n{out}\n");
        println!("x.grad (same pattern as x) =\n{g}");
        println!("dense x.grad = {}\n", g.to_dense()?);
    }

    // CSR: last two columns, negative start
    let c = dense.to_sparse_csr()?.requires_grad_(true)?;
    let cout = sparse::slice(&c, &[1], &[-2], &[4])?;
    cout.values()?.sum()?.backward()?;
    let cg = c.grad().expect("gradient").values()?;
    if verbose {
        println!("CSR x[:, -2:] =\n{cout}\n");
        println!("c.grad values (aligned with c.values) = {cg}");
    }

    // sparse @ dense with gradients w.r.t. both operands
    let w = Tensor::ones(&[4, 2], tapegrad::DType::F64)?.requires_grad_(true)?;
    let y = sparse::matmul(&x.detach().requires_grad_(true)?, &w)?;
    y.sum()?.backward()?;
    let wg = w.grad().expect("gradient");
    if verbose {
        println!("\nx @ w = {y}\nw.grad = {wg}");
    }
    Ok(Demo {
        coo_slice: out.to_dense()?,
        coo_grad_dense: g.to_dense()?,
        csr_grad_values: cg,
        product: y,
        w_grad: wg,
    })
}
