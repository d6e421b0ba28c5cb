//! Trains a small convolutional network on the handwritten-digits data set
//! (examples/data/digits.csv: 1,797 8×8 images, see examples/data/README.md for origin and
//! licence) with Adam, a fixed seed and the same 80/20 split as `train_mlp`:
//!
//! `Conv2d(1, 16, 3, padding=1) BatchNorm2d ReLU MaxPool2d(2) Conv2d(16, 32, 3, padding=1)
//! BatchNorm2d ReLU MaxPool2d(2) Flatten Linear(128, 10)`.
//!
//! Batch norm trains on batch statistics and updates its running mean and variance in place;
//! evaluation switches the model to `eval()`, so the test images are normalized with the running
//! statistics. Prints per-epoch loss, accuracy and time (with a progress bar on a terminal) and
//! ends with `test accuracy: 0.xxx`.
//!
//! `cargo run --release --example train_cnn [-- --epochs N]`

#[path = "common/mod.rs"]
mod common;

use common::{Digits, Progress, accuracy};
use rand::SeedableRng;
use rand::seq::SliceRandom;
use tapegrad::nn::{
    BatchNorm2d, Conv2d, Flatten, Forward, Linear, MaxPool2d, Module, Relu, Sequential,
};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{ConvOptions, DType, Result};

/// An image batch's shape after the batch dim.
const IMAGE: [usize; 3] = [1, 8, 8];

/// The network of the module header (PyTorch's defaults for every layer).
pub fn model() -> Result<Sequential> {
    let conv = |cin, cout| {
        let o = ConvOptions {
            padding: 1.into(),
            ..Default::default()
        };
        Conv2d::new(cin, cout, &[3], o, true, DType::F32)
    };
    let bn = |c| BatchNorm2d::new(c, 1e-5, Some(0.1), true, true, DType::F32);
    let pool = || MaxPool2d::new(2, None, 0, 1, false);
    Ok(Sequential::new()
        .push(conv(1, 16)?)
        .push(bn(16)?)
        .push(Relu)
        .push(pool())
        .push(conv(16, 32)?)
        .push(bn(32)?)
        .push(Relu)
        .push(pool())
        .push(Flatten::new(1, -1))
        .push(Linear::new(128, 10, true, DType::F32)?))
}

/// Accuracy on `idx` in eval mode (running statistics), leaving the model in training mode.
fn test_accuracy(model: &mut Sequential, d: &Digits, idx: &[usize]) -> Result<f64> {
    model.eval();
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = d.batch(idx, &IMAGE)?;
    let logits = model.forward(&x)?;
    model.train(true);
    accuracy(&logits, &y)
}

#[allow(dead_code)] // grad_tests/train.rs includes this file and calls `run` directly
fn main() -> Result<()> {
    let acc = run(common::epochs_arg(20), true)?;
    println!("test accuracy: {acc:.3}");
    Ok(())
}

/// Trains for `epochs` epochs from a fixed seed and returns the final test accuracy.
pub fn run(epochs: usize, verbose: bool) -> Result<f64> {
    tapegrad::manual_seed(0);
    let data = Digits::load();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let (mut train, test) = data.split(&mut rng);

    let mut model = model()?;
    if verbose {
        println!(
            "digits: {} train / {} test images, Adam lr 3e-3, batch 64, {} parameters",
            train.len(),
            test.len(),
            model.num_parameters()
        );
        println!("{model}");
    }
    let mut opt = Adam::new(model.parameters(), AdamConfig::adam(3e-3))?;
    let mut progress = Progress::new(verbose, true);
    for epoch in 1..=epochs {
        progress.epoch_start();
        train.shuffle(&mut rng);
        let nb = train.len().div_ceil(64);
        let mut total = 0.0;
        for (b, chunk) in train.chunks(64).enumerate() {
            let (x, y) = data.batch(chunk, &IMAGE)?;
            let loss = model.forward(&x)?.cross_entropy(&y, Default::default())?;
            opt.zero_grad()?;
            loss.backward()?;
            opt.step()?;
            total += loss.item::<f32>()? as f64 * chunk.len() as f64;
            progress.bar(epoch, b, nb);
        }
        if verbose {
            let acc = test_accuracy(&mut model, &data, &test)?;
            progress.epoch_end(epoch, total / train.len() as f64, acc);
        }
    }
    progress.finish();
    test_accuracy(&mut model, &data, &test)
}
