//! A custom loss with higher-order gradients: fit a small tanh MLP to noisy 1-D data with a
//! gradient penalty `lambda * mean((df/dx)^2)`. The input gradient `df/dx` comes from
//! `autograd::grad(..., create_graph = true)`, so it is itself a differentiable graph, and
//! `loss.backward()` differentiates through it (second derivatives of tanh, matmul, add).
//! The penalty makes the fitted curve smoother than training on the data term alone.
//!
//! Run with `cargo run --release --example regression [-- --steps N]`.

use tapegrad::autograd::grad;
use tapegrad::nn::{Forward, Linear, Module, Sequential, Tanh};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Reduction, Result, Tensor};

/// Training curve and the two models' data fit and roughness, for grad_tests/examples.rs.
pub struct Report {
    /// Total loss (fit + penalty) at every step of the penalised run.
    pub losses: Vec<f64>,
    /// (mean squared error, mean (df/dx)^2) of the penalised model.
    pub with_penalty: (f64, f64),
    /// The same for the model trained on the data term only.
    pub without_penalty: (f64, f64),
}

/// 64 points of `sin(2x) + 0.2 cos(23x)` on `[-2, 2]`: a smooth trend plus fast wiggles.
pub fn data() -> Result<(Tensor, Tensor)> {
    let x = Tensor::linspace(-2.0, 2.0, 64, DType::F64)?.view(&[64, 1])?;
    let y = x.mul(2.0)?.sin()?.add(&x.mul(23.0)?.cos()?.mul(0.2)?)?;
    Ok((x, y))
}

/// `(mse(f(x), y) + lambda * mean((df/dx)^2), mse, mean((df/dx)^2))`, differentiable w.r.t. the
/// model's parameters (the penalty through a double backward).
pub fn penalized_loss(
    model: &dyn Forward,
    x: &Tensor,
    y: &Tensor,
    lambda: f64,
) -> Result<(Tensor, Tensor, Tensor)> {
    let x = x.detach().requires_grad_(true)?;
    let f = model.forward(&x)?;
    // Each f_i depends on x_i only, so d(sum f)/dx is the vector of df_i/dx_i.
    let dfdx = grad(
        &[f.sum()?],
        &[x],
        &[None],
        tapegrad::autograd::GradOptions::default()
            .retain_graph(true)
            .create_graph(true),
    )?
    .remove(0)
    .expect("allow_unused = false: present");
    let fit = f.mse_loss(y, Reduction::Mean)?;
    let penalty = dfdx.mul(&dfdx)?.mean((), false, None)?;
    Ok((fit.add(&penalty.mul(lambda)?)?, fit, penalty))
}

fn train(steps: usize, lambda: f64, verbose: bool) -> Result<(Vec<f64>, f64, f64)> {
    tapegrad::manual_seed(0);
    let model = Sequential::new()
        .push(Linear::new(1, 32, true, DType::F64)?)
        .push(Tanh)
        .push(Linear::new(32, 32, true, DType::F64)?)
        .push(Tanh)
        .push(Linear::new(32, 1, true, DType::F64)?);
    let (x, y) = data()?;
    let mut opt = Adam::new(model.parameters(), AdamConfig::adam(0.01))?;
    let mut losses = Vec::with_capacity(steps);
    for step in 0..steps {
        let (loss, fit, pen) = penalized_loss(&model, &x, &y, lambda)?;
        opt.zero_grad()?;
        loss.backward()?;
        opt.step()?;
        losses.push(loss.item::<f64>()?);
        if verbose && (step % 100 == 0 || step + 1 == steps) {
            println!(
                "lambda {lambda}: step {step:>4}  loss {:.5}  mse {:.5}  mean (df/dx)^2 {:.4}",
                losses[step],
                fit.item::<f64>()?,
                pen.item::<f64>()?
            );
        }
    }
    let (_, fit, pen) = penalized_loss(&model, &x, &y, lambda)?;
    Ok((losses, fit.item()?, pen.item()?))
}

/// Trains with and without the penalty for `steps` Adam steps each.
pub fn run(steps: usize, verbose: bool) -> Result<Report> {
    let (losses, fit, pen) = train(steps, 0.01, verbose)?;
    let (_, fit0, pen0) = train(steps, 0.0, verbose)?;
    if verbose {
        println!("with penalty:    mse {fit:.5}, mean (df/dx)^2 {pen:.3}");
        println!("without penalty: mse {fit0:.5}, mean (df/dx)^2 {pen0:.3}");
    }
    Ok(Report {
        losses,
        with_penalty: (fit, pen),
        without_penalty: (fit0, pen0),
    })
}

#[allow(dead_code)] // grad_tests/examples.rs includes this file and calls `run`
fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let steps = args
        .iter()
        .position(|a| a == "--steps")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(600);
    run(steps, true).map(|_| ())
}
