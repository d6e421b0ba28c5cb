//! A small transformer written the way a PyTorch user would: multi-head self-attention that
//! takes a mask beside its input, an MLP in a `Sequential`, LayerNorms, blocks in a
//! `ModuleList`, a float buffer for positions, all named by `#[derive(Module)]` with PyTorch's
//! `state_dict()` keys (`layers.0.attn.q.weight`). It learns to continue the sequence
//! `t, t+1, t+2, ...` (mod the vocabulary) under a causal mask, prints the module tree, the
//! loss every 25 steps and the final next-token accuracy.
//!
//! `cargo run --release --example transformer_block`

use tapegrad::nn::{
    Dropout, Embedding, Forward, Gelu, LayerNorm, Linear, Module, ModuleList, Sequential,
};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result, Tensor};

// ---- model definition ----------------------------------------------------------------------

/// Multi-head self-attention; `mask[i][j]` (bool) lets position `i` attend to `j`.
#[derive(Module)]
pub struct Attention {
    pub q: Linear,
    pub k: Linear,
    pub v: Linear,
    pub o: Linear,
    pub heads: usize,
}

impl Attention {
    pub fn new(d: usize, heads: usize, dtype: DType) -> Result<Self> {
        let lin = || Linear::new(d, d, true, dtype);
        Ok(Attention {
            q: lin()?,
            k: lin()?,
            v: lin()?,
            o: lin()?,
            heads,
        })
    }

    pub fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let (b, t, d) = (x.size(0)? as i64, x.size(1)? as i64, x.size(2)? as i64);
        let dh = d / self.heads as i64;
        let split = |y: Tensor| y.reshape(&[b, t, self.heads as i64, dh])?.transpose(1, 2);
        let (q, k, v) = (
            split(self.q.forward(x)?)?,
            split(self.k.forward(x)?)?,
            split(self.v.forward(x)?)?,
        );
        let s = q.matmul(&k.transpose(-2, -1)?)?.div((dh as f64).sqrt())?;
        let s = s.masked_fill(&mask.logical_not()?, f64::NEG_INFINITY)?;
        let y = s
            .softmax(-1)?
            .matmul(&v)?
            .transpose(1, 2)?
            .reshape(&[b, t, d])?;
        self.o.forward(&y)
    }
}

/// Pre-norm transformer block: `x + attn(ln1(x), mask)`, then `x + mlp(ln2(x))`.
#[derive(Module)]
pub struct Block {
    pub ln1: LayerNorm,
    pub attn: Attention,
    pub ln2: LayerNorm,
    pub mlp: Sequential,
}

impl Block {
    pub fn new(d: usize, heads: usize, ffn: usize, dtype: DType) -> Result<Self> {
        Ok(Block {
            ln1: LayerNorm::new(&[d], 1e-5, true, dtype)?,
            attn: Attention::new(d, heads, dtype)?,
            ln2: LayerNorm::new(&[d], 1e-5, true, dtype)?,
            mlp: Sequential::new()
                .push(Linear::new(d, ffn, true, dtype)?)
                .push(Gelu::default())
                .push(Linear::new(ffn, d, true, dtype)?)
                .push(Dropout::new(0.1)?),
        })
    }

    pub fn forward(&self, x: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let x = x.add(&self.attn.forward(&self.ln1.forward(x)?, mask)?)?;
        x.add(&self.mlp.forward(&self.ln2.forward(&x)?)?)
    }
}

/// Token embedding plus fixed random positions (a buffer), blocks and a vocabulary head.
#[derive(Module)]
pub struct TinyLm {
    #[module(buffer)]
    pub pos: Tensor,
    pub embed: Embedding,
    pub layers: ModuleList<Block>,
    pub norm: LayerNorm,
    pub head: Linear,
}

impl TinyLm {
    pub fn new(vocab: usize, d: usize, heads: usize, depth: usize, max_len: usize) -> Result<Self> {
        let dt = DType::F32;
        Ok(TinyLm {
            pos: tapegrad::nn::init::normal(&[max_len, d], 0.0, 0.1, dt)?,
            embed: Embedding::new(vocab, d, dt)?,
            layers: (0..depth)
                .map(|_| Block::new(d, heads, 4 * d, dt))
                .collect::<Result<_>>()?,
            norm: LayerNorm::new(&[d], 1e-5, true, dt)?,
            head: Linear::new(d, vocab, false, dt)?,
        })
    }

    /// Logits `[batch, t, vocab]` for int64 `tokens` `[batch, t]`.
    pub fn forward(&self, tokens: &Tensor, mask: &Tensor) -> Result<Tensor> {
        let t = tokens.size(1)?;
        let mut h = self
            .embed
            .forward(tokens)?
            .add(&self.pos.narrow(0, 0, t)?)?;
        for block in &self.layers {
            h = block.forward(&h, mask)?;
        }
        self.head.forward(&self.norm.forward(&h)?)
    }
}

// ---- training ------------------------------------------------------------------------------

const VOCAB: usize = 12;
const T: usize = 8;

/// `batch` sequences `s, s+1, ...` (mod VOCAB) with random starts: inputs and next tokens.
fn batch(batch: usize) -> Result<(Tensor, Tensor)> {
    let starts = Tensor::randint(0, VOCAB as i64, &[batch, 1])?;
    let seq = starts
        .add(&Tensor::arange(0, T as i64 + 1, 1)?)?
        .remainder(VOCAB as i64)?;
    Ok((seq.narrow(1, 0, T)?, seq.narrow(1, 1, T)?))
}

#[allow(dead_code)] // grad_tests/nn_state.rs and examples.rs include this file
fn main() -> Result<()> {
    let (_, acc) = run(150, true)?;
    println!("next-token accuracy: {acc:.3}");
    Ok(())
}

/// Trains for `steps` Adam steps from a fixed seed; returns the loss of every step and the
/// next-token accuracy on a fresh batch in eval mode.
pub fn run(steps: usize, verbose: bool) -> Result<(Vec<f64>, f64)> {
    tapegrad::manual_seed(0);
    let mut model = TinyLm::new(VOCAB, 32, 4, 2, T)?;
    if verbose {
        println!("{model}");
        println!(
            "{} parameters, {} state_dict keys",
            model.num_parameters(),
            model.state_dict()?.len()
        );
    }
    let mask = Tensor::ones(&[T, T], DType::Bool)?.tril(0)?;
    let mut opt = Adam::new(model.parameters(), AdamConfig::adam(3e-3))?;
    let mut losses = Vec::with_capacity(steps);
    for step in 1..=steps {
        let (x, y) = batch(16)?;
        let logits = model.forward(&x, &mask)?;
        let loss = logits
            .reshape(&[-1, VOCAB as i64])?
            .cross_entropy(&y.reshape(&[-1])?, Default::default())?;
        opt.zero_grad()?;
        loss.backward()?;
        opt.step()?;
        losses.push(loss.item::<f32>()? as f64);
        if verbose && step % 25 == 0 {
            println!("step {step:>3}  loss {:.4}", losses[step - 1]);
        }
    }
    model.eval();
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = batch(64)?;
    let pred = model.forward(&x, &mask)?.argmax(-1, false)?;
    let acc = pred
        .eq(&y)?
        .to_dtype(DType::F64)?
        .mean(&[0, 1], false, None)?
        .item::<f64>()?;
    Ok((losses, acc))
}
