//! Randomness (PyTorch's `torch.random`): the [`Generator`] type, the global default generator
//! with `manual_seed` / `get_rng_state` / `set_rng_state`, and the samplers (`sample.rs`)
//! `Tensor::uniform_`, `normal_`, `bernoulli_` (in place, on views too), `randperm` and
//! `multinomial`. Samplers and the `*_with` factories (`Tensor::rand_with`, ..) take an optional
//! generator (PyTorch's `generator=`); `None` draws from the default one, which also feeds
//! `rand`, `randn`, `randint`, dropout and the `nn::init` initialisers.
//!
//! The stream is stable across crate versions (ChaCha12 and transforms written out in
//! `generator.rs`), but it is not PyTorch's: a seed gives different values than in PyTorch.

mod generator;
mod sample;

pub(crate) use generator::Stream;
pub use generator::{Generator, RngState};

use std::sync::LazyLock;

static DEFAULT: LazyLock<Generator> = LazyLock::new(|| Generator::new(0));

/// The global generator (PyTorch's `torch.default_generator`), seeded with 0 until
/// [`manual_seed`] runs. It is a handle: seeding or restoring it affects every default draw.
pub fn default_generator() -> Generator {
    DEFAULT.clone()
}

/// Seeds the global generator used by `rand`, `randn`, `randint`, dropout, initialisers and the
/// samplers called without a generator (PyTorch's `torch.manual_seed`).
///
/// ```
/// # use tapegrad::{Tensor, DType};
/// tapegrad::manual_seed(3);
/// let a = Tensor::rand(&[4], DType::F64)?;
/// tapegrad::manual_seed(3);
/// assert_eq!(a.to_vec::<f64>()?, Tensor::rand(&[4], DType::F64)?.to_vec::<f64>()?);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn manual_seed(seed: u64) {
    DEFAULT.manual_seed(seed);
}

/// The seed the global generator was last seeded with (PyTorch's `torch.initial_seed`).
pub fn initial_seed() -> u64 {
    DEFAULT.initial_seed()
}

/// The global generator's state (PyTorch's `torch.get_rng_state`), for restoring it later with
/// [`set_rng_state`] — what activation checkpointing does so a recomputed dropout draws the
/// same mask.
///
/// ```
/// # use tapegrad::{Tensor, DType};
/// let s = tapegrad::random::get_rng_state();
/// let a = Tensor::randn(&[3], DType::F64)?;
/// tapegrad::random::set_rng_state(&s);
/// assert_eq!(a.to_vec::<f64>()?, Tensor::randn(&[3], DType::F64)?.to_vec::<f64>()?);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn get_rng_state() -> RngState {
    DEFAULT.get_state()
}

/// Restores the global generator to a state from [`get_rng_state`] (PyTorch's
/// `torch.set_rng_state`).
pub fn set_rng_state(state: &RngState) {
    DEFAULT.set_state(state)
}

/// Runs `f` on `g`'s stream, or the global one when `g` is `None`.
pub(crate) fn with_stream<R>(g: Option<&Generator>, f: impl FnOnce(&mut Stream) -> R) -> R {
    match g {
        Some(g) => g.with(f),
        None => DEFAULT.with(f),
    }
}
