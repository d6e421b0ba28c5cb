//! Shared by the training examples (each includes it with `#[path]`, so the tests that include
//! an example file get it too): the `--epochs N` argument, the handwritten-digits data set
//! (examples/data/digits.csv: 1,797 8×8 images, see examples/data/README.md for origin and
//! licence) with its fixed 80/20 split, batches and accuracy, and the per-epoch display (a
//! progress bar on a terminal, then one line per epoch).

use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use std::io::{IsTerminal, Write};
use std::time::Instant;
use tapegrad::{Result, Tensor};

/// `--epochs N` from the command line, else `default`.
pub fn epochs_arg(default: usize) -> usize {
    let args: Vec<String> = std::env::args().collect();
    args.iter()
        .position(|a| a == "--epochs")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(default)
}

/// The digits: 64 pixels in `[0, 1]` and a label per image.
pub struct Digits {
    pub x: Vec<f32>,
    pub y: Vec<i64>,
}

impl Digits {
    /// Reads examples/data/digits.csv (pixels scaled from 0..=16 to `[0, 1]`).
    pub fn load() -> Digits {
        let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/digits.csv");
        let text = std::fs::read_to_string(path)
            .expect("examples/data/digits.csv is part of the repository");
        let (mut x, mut y) = (Vec::new(), Vec::new());
        for line in text.lines().filter(|l| !l.is_empty()) {
            let v: Vec<f32> = line
                .split(',')
                .map(|s| s.trim().parse().expect("numeric CSV"))
                .collect();
            x.extend(v[..64].iter().map(|p| p / 16.0));
            y.push(v[64] as i64);
        }
        Digits { x, y }
    }

    /// The 80/20 split of every example: the image indices shuffled by `rng`, the first 80% to
    /// train on, the rest to test.
    pub fn split(&self, rng: &mut StdRng) -> (Vec<usize>, Vec<usize>) {
        let mut order: Vec<usize> = (0..self.y.len()).collect();
        order.shuffle(rng);
        let test = order.split_off(order.len() * 8 / 10);
        (order, test)
    }

    /// Images `idx` as `[idx.len(), image..]` (`image` holds 64 elements: `[64]` for an MLP,
    /// `[1, 8, 8]` for a convolution) and their labels as `[idx.len()]`.
    pub fn batch(&self, idx: &[usize], image: &[usize]) -> Result<(Tensor, Tensor)> {
        let mut xs = Vec::with_capacity(idx.len() * 64);
        for &i in idx {
            xs.extend_from_slice(&self.x[i * 64..(i + 1) * 64]);
        }
        let ys: Vec<i64> = idx.iter().map(|&i| self.y[i]).collect();
        let mut shape = vec![idx.len()];
        shape.extend_from_slice(image);
        Ok((
            Tensor::from_vec(xs, &shape)?,
            Tensor::from_vec(ys, &[idx.len()])?,
        ))
    }
}

/// The fraction of rows of `logits` (`[n, classes]`) whose largest entry sits at the label in
/// `y` (`[n]`).
pub fn accuracy(logits: &Tensor, y: &Tensor) -> Result<f64> {
    let classes = logits.size(1)?;
    let logits = logits.to_vec::<f32>()?;
    let y = y.to_vec::<i64>()?;
    let correct = logits
        .chunks(classes)
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
    Ok(correct as f64 / y.len() as f64)
}

/// The display of a training run: a progress bar per epoch when stdout is a terminal (and the
/// run is verbose), one summary line per epoch, the total time.
pub struct Progress {
    verbose: bool,
    tty: bool,
    start: Instant,
    epoch_start: Instant,
}

impl Progress {
    /// Starts the clock; prints nothing unless `verbose`, and no bar unless `bar`.
    pub fn new(verbose: bool, bar: bool) -> Progress {
        Progress {
            verbose,
            tty: verbose && bar && std::io::stdout().is_terminal(),
            start: Instant::now(),
            epoch_start: Instant::now(),
        }
    }

    /// Starts the clock of an epoch.
    pub fn epoch_start(&mut self) {
        self.epoch_start = Instant::now();
    }

    /// The bar after batch `b` (from 0) of `nb` in `epoch`, on a terminal.
    pub fn bar(&self, epoch: usize, b: usize, nb: usize) {
        if self.tty {
            let done = (b + 1) * 30 / nb;
            print!(
                "\repoch {epoch:>2} [{}{}]",
                "#".repeat(done),
                ".".repeat(30 - done)
            );
            std::io::stdout().flush().ok();
        }
    }

    /// The summary line of `epoch` (replacing its bar): mean loss, test accuracy, time.
    pub fn epoch_end(&self, epoch: usize, loss: f64, acc: f64) {
        if self.tty {
            print!("\r");
        }
        println!(
            "epoch {epoch:>2}  loss {loss:.4}  test acc {acc:.3}  {:.0} ms",
            self.epoch_start.elapsed().as_secs_f64() * 1e3
        );
    }

    /// The total training time, when verbose.
    pub fn finish(&self) {
        if self.verbose {
            println!("train time: {:.2} s", self.start.elapsed().as_secs_f64());
        }
    }
}
