//! Trains a 64-256-10 ReLU MLP on the handwritten-digits data set (examples/data/digits.csv:
//! 1,797 8×8 images, see examples/data/README.md for origin and licence) with Adam, a fixed seed
//! and an 80/20 split. Prints per-epoch loss, accuracy and time (with a progress bar on a
//! terminal) and ends with `test accuracy: 0.xxx`.
//!
//! `cargo run --release --example train_mlp [-- --epochs N]`

#[path = "common/mod.rs"]
mod common;

use common::{Digits, Progress, accuracy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result};

/// The test accuracy of `model` on the images `idx`.
fn test_accuracy(model: &Sequential, d: &Digits, idx: &[usize]) -> Result<f64> {
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = d.batch(idx, &[64])?;
    accuracy(&model.forward(&x)?, &y)
}

#[allow(dead_code)] // grad_tests/train.rs includes this file and calls `run` directly
fn main() -> Result<()> {
    let acc = run(common::epochs_arg(30), true)?;
    println!("test accuracy: {acc:.3}");
    Ok(())
}

/// Trains for `epochs` epochs from a fixed seed and returns the final test accuracy.
pub fn run(epochs: usize, verbose: bool) -> Result<f64> {
    tapegrad::manual_seed(0);
    let data = Digits::load();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let (mut train, test) = data.split(&mut rng);
    if verbose {
        println!(
            "digits: {} train / {} test images, 64-256-10 MLP, Adam lr 3e-3, batch 64",
            train.len(),
            test.len()
        );
    }

    let model = Sequential::new()
        .push(Linear::new(64, 256, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(256, 10, true, DType::F32)?);
    let mut opt = Adam::new(model.parameters(), AdamConfig::adam(3e-3))?;
    let mut progress = Progress::new(verbose, true);
    for epoch in 1..=epochs {
        progress.epoch_start();
        train.shuffle(&mut rng);
        let nb = train.len().div_ceil(64);
        let mut total = 0.0;
        for (b, chunk) in train.chunks(64).enumerate() {
            let (x, y) = data.batch(chunk, &[64])?;
            let loss = model.forward(&x)?.cross_entropy(&y, Default::default())?;
            opt.zero_grad()?;
            loss.backward()?;
            opt.step()?;
            total += loss.item::<f32>()? as f64 * chunk.len() as f64;
            progress.bar(epoch, b, nb);
        }
        if verbose {
            let acc = test_accuracy(&model, &data, &test)?;
            progress.epoch_end(epoch, total / train.len() as f64, acc);
        }
    }
    progress.finish();
    test_accuracy(&model, &data, &test)
}
