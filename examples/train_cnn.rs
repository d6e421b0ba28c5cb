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

use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::io::{IsTerminal, Write};
use std::time::Instant;
use tapegrad::nn::{
    BatchNorm2d, Conv2d, Flatten, Forward, Linear, MaxPool2d, Module, Relu, Sequential,
};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{ConvOptions, DType, Result, Tensor};

struct Data {
    x: Vec<f32>,
    y: Vec<i64>,
}

fn load() -> Data {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/digits.csv");
    let text =
        std::fs::read_to_string(path).expect("examples/data/digits.csv is part of the repository");
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.is_empty()) {
        let v: Vec<f32> = line
            .split(',')
            .map(|s| s.trim().parse().expect("numeric CSV"))
            .collect();
        x.extend(v[..64].iter().map(|p| p / 16.0));
        y.push(v[64] as i64);
    }
    Data { x, y }
}

/// Images `idx` as `[n, 1, 8, 8]` and their labels as `[n]`.
fn batch(d: &Data, idx: &[usize]) -> Result<(Tensor, Tensor)> {
    let mut xs = Vec::with_capacity(idx.len() * 64);
    for &i in idx {
        xs.extend_from_slice(&d.x[i * 64..(i + 1) * 64]);
    }
    let ys: Vec<i64> = idx.iter().map(|&i| d.y[i]).collect();
    Ok((
        Tensor::from_vec(xs, &[idx.len(), 1, 8, 8])?,
        Tensor::from_vec(ys, &[idx.len()])?,
    ))
}

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
    let pool = || MaxPool2d::new(&[2], None, &[0], &[1], false);
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
fn accuracy(model: &mut Sequential, d: &Data, idx: &[usize]) -> Result<f64> {
    model.eval();
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = batch(d, idx)?;
    let logits = model.forward(&x)?.to_vec::<f32>()?;
    model.train(true);
    let y = y.to_vec::<i64>()?;
    let correct = logits
        .chunks(10)
        .zip(&y)
        .filter(|&(row, &t)| {
            let best = row
                .iter()
                .enumerate()
                .max_by(|a, b| a.1.total_cmp(b.1))
                .map(|(i, _)| i)
                .unwrap_or(0);
            best as i64 == t
        })
        .count();
    Ok(correct as f64 / idx.len() as f64)
}

#[allow(dead_code)] // grad_tests/train.rs includes this file and calls `run` directly
fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let epochs: usize = args
        .iter()
        .position(|a| a == "--epochs")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(20);
    let acc = run(epochs, true)?;
    println!("test accuracy: {acc:.3}");
    Ok(())
}

/// Trains for `epochs` epochs from a fixed seed and returns the final test accuracy.
pub fn run(epochs: usize, verbose: bool) -> Result<f64> {
    tapegrad::manual_seed(0);
    let data = load();
    let n = data.y.len();
    let mut order: Vec<usize> = (0..n).collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    order.shuffle(&mut rng);
    let split = n * 8 / 10;
    let (mut train, test) = (order[..split].to_vec(), order[split..].to_vec());

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
    let tty = verbose && std::io::stdout().is_terminal();
    let start = Instant::now();
    for epoch in 1..=epochs {
        let t0 = Instant::now();
        train.shuffle(&mut rng);
        let nb = train.len().div_ceil(64);
        let mut total = 0.0;
        for (b, chunk) in train.chunks(64).enumerate() {
            let (x, y) = batch(&data, chunk)?;
            let loss = model.forward(&x)?.cross_entropy(&y, Default::default())?;
            opt.zero_grad()?;
            loss.backward()?;
            opt.step()?;
            total += loss.item::<f32>()? as f64 * chunk.len() as f64;
            if tty {
                let done = (b + 1) * 30 / nb;
                print!(
                    "\repoch {epoch:>2} [{}{}]",
                    "#".repeat(done),
                    ".".repeat(30 - done)
                );
                std::io::stdout().flush().ok();
            }
        }
        if verbose {
            let acc = accuracy(&mut model, &data, &test)?;
            if tty {
                print!("\r");
            }
            println!(
                "epoch {epoch:>2}  loss {:.4}  test acc {:.3}  {:.0} ms",
                total / train.len() as f64,
                acc,
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    if verbose {
        println!("train time: {:.2} s", start.elapsed().as_secs_f64());
    }
    accuracy(&mut model, &data, &test)
}
