//! A tiny character-level transformer language model on Shakespeare's *Macbeth*
//! (examples/data/macbeth.txt, public domain; origin and licence in examples/data/README.md):
//! token and learned position embeddings, a stack of `TransformerEncoderLayer`s (pre-norm,
//! `batch_first`) under a causal mask, a final layer norm and a vocabulary head, trained with
//! AdamW on random 64-character windows of the first 90% of the text. Prints the train and
//! validation loss (nats per character) every epoch, the unigram entropy of the text as the
//! baseline to beat, `val loss: x.xxx` and a short sample generated from a prompt.
//!
//! `cargo run --release --example train_charlm [-- --epochs N]`

#[path = "common/mod.rs"]
#[allow(dead_code)] // the digits and the progress bar serve the other examples
mod common;

use rand::{Rng, SeedableRng};
use std::collections::BTreeSet;
use std::time::Instant;
use tapegrad::nn::{
    Embedding, EncoderLayerConfig, EncoderMasks, Forward, LayerNorm, Linear, Module, ModuleList,
    TransformerEncoderLayer,
};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result, Tensor};

/// Context length (characters).
const T: usize = 64;
/// Sequences per step.
const BATCH: usize = 32;
/// Optimizer steps per epoch.
const STEPS: usize = 50;

/// Embeddings, encoder layers under a causal mask, a final norm and the vocabulary head.
#[derive(Module)]
pub struct CharLm {
    pub tok: Embedding,
    pub pos: Embedding,
    pub layers: ModuleList<TransformerEncoderLayer>,
    pub norm: LayerNorm,
    pub head: Linear,
}

impl CharLm {
    pub fn new(vocab: usize, d: usize, heads: usize, depth: usize) -> Result<Self> {
        let dt = DType::F32;
        let cfg = EncoderLayerConfig {
            dropout: 0.0,
            batch_first: true,
            norm_first: true,
            ..Default::default()
        }
        .dim_feedforward(4 * d);
        let tok = Embedding::new(vocab, d, dt)?;
        let pos = Embedding::new(T, d, dt)?;
        // small embeddings (as GPT-style models do) so the residual stream starts near unit scale
        {
            let _g = tapegrad::autograd::no_grad();
            tok.weight.mul_(0.1)?;
            pos.weight.mul_(0.1)?;
        }
        Ok(CharLm {
            tok,
            pos,
            layers: (0..depth)
                .map(|_| TransformerEncoderLayer::new(d, heads, cfg, dt))
                .collect::<Result<_>>()?,
            norm: LayerNorm::new(&[d], 1e-5, true, dt)?,
            head: Linear::new(d, vocab, true, dt)?,
        })
    }

    /// Logits `[batch, t, vocab]` for int64 `tokens` `[batch, t]` (`t <= T`).
    pub fn forward(&self, tokens: &Tensor) -> Result<Tensor> {
        let t = tokens.size(1)?;
        let positions = Tensor::arange(0, t as i64, 1)?;
        let mut h = self
            .tok
            .forward(tokens)?
            .add(&self.pos.forward(&positions)?)?;
        // true = masked out: position i sees 0..=i
        let mask = Tensor::ones(&[t, t], DType::Bool)?.triu(1)?;
        let masks = EncoderMasks {
            src_mask: Some(&mask),
            is_causal: true,
            ..Default::default()
        };
        for layer in &self.layers {
            h = layer.forward(&h, masks)?;
        }
        self.head.forward(&self.norm.forward(&h)?)
    }
}

/// The text as character ids over its sorted alphabet.
struct Corpus {
    chars: Vec<char>,
    ids: Vec<i64>,
}

fn load() -> Corpus {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/macbeth.txt");
    let text =
        std::fs::read_to_string(path).expect("examples/data/macbeth.txt is part of the repository");
    let chars: Vec<char> = text.chars().collect::<BTreeSet<_>>().into_iter().collect();
    let ids = text
        .chars()
        .map(|c| chars.binary_search(&c).expect("in the alphabet") as i64)
        .collect();
    Corpus { chars, ids }
}

/// Entropy (nats per character) of the character frequencies of `ids`.
fn unigram_entropy(ids: &[i64], vocab: usize) -> f64 {
    let mut counts = vec![0usize; vocab];
    for &i in ids {
        counts[i as usize] += 1;
    }
    let n = ids.len() as f64;
    counts
        .iter()
        .filter(|&&c| c > 0)
        .map(|&c| {
            let p = c as f64 / n;
            -p * p.ln()
        })
        .sum()
}

/// Inputs and next characters `[starts.len(), T]` for windows starting at `starts` of `ids`.
fn windows(ids: &[i64], starts: &[usize]) -> Result<(Tensor, Tensor)> {
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for &s in starts {
        x.extend_from_slice(&ids[s..s + T]);
        y.extend_from_slice(&ids[s + 1..s + T + 1]);
    }
    let shape = [starts.len(), T];
    Ok((Tensor::from_vec(x, &shape)?, Tensor::from_vec(y, &shape)?))
}

fn loss_of(model: &CharLm, x: &Tensor, y: &Tensor, vocab: usize) -> Result<Tensor> {
    model
        .forward(x)?
        .reshape(&[-1, vocab as i64])?
        .cross_entropy(&y.reshape(&[-1])?, Default::default())
}

/// Mean loss over the non-overlapping windows of `ids`, without gradients.
fn eval_loss(model: &CharLm, ids: &[i64], vocab: usize) -> Result<f64> {
    let _g = tapegrad::autograd::no_grad();
    let starts: Vec<usize> = (0..(ids.len() - 1) / T).map(|i| i * T).collect();
    let mut total = 0.0;
    for chunk in starts.chunks(64) {
        let (x, y) = windows(ids, chunk)?;
        total += loss_of(model, &x, &y, vocab)?.item::<f32>()? as f64 * chunk.len() as f64;
    }
    Ok(total / starts.len() as f64)
}

/// `n` characters sampled (temperature 0.8) after `prompt`.
fn sample(
    model: &CharLm,
    c: &Corpus,
    prompt: &str,
    n: usize,
    rng: &mut impl Rng,
) -> Result<String> {
    let _g = tapegrad::autograd::no_grad();
    let mut ids: Vec<i64> = prompt
        .chars()
        .filter_map(|ch| c.chars.binary_search(&ch).ok().map(|i| i as i64))
        .collect();
    let start = ids.len();
    for _ in 0..n {
        let ctx = &ids[ids.len().saturating_sub(T)..];
        let x = Tensor::from_vec(ctx.to_vec(), &[1, ctx.len()])?;
        let logits = model.forward(&x)?.select(1, ctx.len() as i64 - 1)?;
        let p = logits
            .div(0.8)?
            .softmax(-1)?
            .reshape(&[-1])?
            .to_vec::<f32>()?;
        let mut u: f32 = rng.r#gen();
        let mut next = p.len() - 1;
        for (i, &pi) in p.iter().enumerate() {
            if u < pi {
                next = i;
                break;
            }
            u -= pi;
        }
        ids.push(next as i64);
    }
    Ok(ids[start..].iter().map(|&i| c.chars[i as usize]).collect())
}

/// What a run returns.
pub struct Report {
    /// Mean training loss of every epoch (nats per character).
    pub train: Vec<f64>,
    /// Validation loss after every epoch.
    pub val: Vec<f64>,
    /// Unigram entropy of the text (nats per character).
    pub unigram: f64,
    /// Characters generated after the prompt.
    pub sample: String,
}

#[allow(dead_code)] // grad_tests/train.rs includes this file and calls `run` directly
fn main() -> Result<()> {
    let r = run(common::epochs_arg(12), true)?;
    println!("val loss: {:.3}", r.val.last().copied().unwrap_or(f64::NAN));
    println!("sample: {}", r.sample);
    Ok(())
}

/// Trains for `epochs` epochs of `STEPS` steps from a fixed seed.
pub fn run(epochs: usize, verbose: bool) -> Result<Report> {
    tapegrad::manual_seed(0);
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let corpus = load();
    let vocab = corpus.chars.len();
    let split = corpus.ids.len() * 9 / 10;
    let (train, val) = (&corpus.ids[..split], &corpus.ids[split..]);
    let unigram = unigram_entropy(&corpus.ids, vocab);
    let mut model = CharLm::new(vocab, 64, 4, 2)?;
    if verbose {
        println!(
            "macbeth.txt: {} characters ({} train / {} val), {} distinct; unigram entropy {:.3} nats/char",
            corpus.ids.len(),
            train.len(),
            val.len(),
            vocab,
            unigram
        );
        println!(
            "{} parameters; context {T}, batch {BATCH}, {STEPS} AdamW steps per epoch",
            model.num_parameters()
        );
    }
    let mut opt = Adam::new(model.parameters(), AdamConfig::adamw(3e-3))?;
    let (mut train_losses, mut val_losses) = (Vec::new(), Vec::new());
    for epoch in 1..=epochs {
        let t0 = Instant::now();
        let mut total = 0.0;
        for _ in 0..STEPS {
            let starts: Vec<usize> = (0..BATCH)
                .map(|_| rng.gen_range(0..train.len() - T - 1))
                .collect();
            let (x, y) = windows(train, &starts)?;
            let loss = loss_of(&model, &x, &y, vocab)?;
            opt.zero_grad()?;
            loss.backward()?;
            opt.step()?;
            total += loss.item::<f32>()? as f64;
        }
        model.eval();
        let v = eval_loss(&model, val, vocab)?;
        model.train(true);
        train_losses.push(total / STEPS as f64);
        val_losses.push(v);
        if verbose {
            println!(
                "epoch {epoch:>2}  train loss {:.3}  val loss {:.3}  {:.0} ms",
                total / STEPS as f64,
                v,
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    model.eval();
    let sample = sample(&model, &corpus, "MACBETH.\n", 200, &mut rng)?;
    Ok(Report {
        train: train_losses,
        val: val_losses,
        unigram,
        sample,
    })
}
