//! Trains a 64-256-10 ReLU MLP on the handwritten-digits data set (examples/data/digits.csv:
//! 1,797 8×8 images, see examples/data/README.md for origin and licence) with Adam, a fixed seed
//! and an 80/20 split. Prints per-epoch loss, accuracy and time (with a progress bar on a
//! terminal) and ends with `test accuracy: 0.xxx`.
//!
//! `cargo run --release --example train_mlp [-- --epochs N]`

use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::io::{IsTerminal, Write};
use std::time::Instant;
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result, Tensor};

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

fn batch(d: &Data, idx: &[usize]) -> Result<(Tensor, Tensor)> {
    let mut xs = Vec::with_capacity(idx.len() * 64);
    for &i in idx {
        xs.extend_from_slice(&d.x[i * 64..(i + 1) * 64]);
    }
    let ys: Vec<i64> = idx.iter().map(|&i| d.y[i]).collect();
    Ok((
        Tensor::from_vec(xs, &[idx.len(), 64])?,
        Tensor::from_vec(ys, &[idx.len()])?,
    ))
}

fn accuracy(model: &Sequential, d: &Data, idx: &[usize]) -> Result<f64> {
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = batch(d, idx)?;
    let logits = model.forward(&x)?.to_vec::<f32>()?;
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
        .unwrap_or(30);
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
            let acc = accuracy(&model, &data, &test)?;
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
    accuracy(&model, &data, &test)
}
