//! `Generator`: a seeded, shareable random stream (PyTorch's `torch.Generator`), its saved state
//! (`RngState`), and the fixed transforms from raw 64-bit words to floats, integers and normals.
//!
//! The stream is ChaCha with 12 rounds (`rand_chacha::ChaCha12Rng`, whose output the crate
//! documents as value-stable), keyed from a `u64` seed by the PCG32 expansion written out below,
//! so a seed gives the same numbers whatever `rand` version is in the build. The transforms are
//! also written out here rather than borrowed from `rand`'s distributions (which may change
//! between `rand` releases). They are the same ones `rand` 0.8's `StdRng` used, so results seeded
//! before this module existed are unchanged. Values are NOT PyTorch's stream: the same seed gives
//! different numbers than `torch.manual_seed`.

use parking_lot::Mutex;
use rand_chacha::ChaCha12Rng;
use rand_chacha::rand_core::{RngCore, SeedableRng};
use std::sync::Arc;

use crate::{Result, bail};

/// A random-number generator handle (PyTorch's `torch.Generator`). Cloning it copies the handle:
/// clones draw from the same stream, as passing one `torch.Generator` object around does. Pass
/// one per call (`normal_(.., Some(&g))`) to keep a stream apart from the global one
/// ([`default_generator`](crate::random::default_generator)).
///
/// ```
/// # use tapegrad::{Tensor, DType};
/// use tapegrad::random::Generator;
/// let g = Generator::new(7);
/// let s = g.get_state();
/// let a = Tensor::zeros(&[3], DType::F32)?.uniform_(0.0, 1.0, Some(&g))?;
/// g.set_state(&s);
/// let b = Tensor::zeros(&[3], DType::F32)?.uniform_(0.0, 1.0, Some(&g))?;
/// assert_eq!(a.to_vec::<f32>()?, b.to_vec::<f32>()?);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone)]
pub struct Generator(Arc<Mutex<Stream>>);

impl std::fmt::Debug for Generator {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Generator(initial_seed={})", self.initial_seed())
    }
}

/// A generator's whole state (PyTorch's `get_rng_state()` byte tensor): restoring it replays
/// the same numbers. `to_bytes`/`from_bytes` give a fixed 64-byte form for checkpoints.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RngState {
    initial_seed: u64,
    key: [u8; 32],
    stream: u64,
    word_pos: u128,
}

impl RngState {
    /// Size of the byte form.
    pub const NBYTES: usize = 64;

    /// The state as 64 little-endian bytes: initial seed, ChaCha key, stream id, word position.
    pub fn to_bytes(&self) -> Vec<u8> {
        let mut b = Vec::with_capacity(Self::NBYTES);
        b.extend_from_slice(&self.initial_seed.to_le_bytes());
        b.extend_from_slice(&self.key);
        b.extend_from_slice(&self.stream.to_le_bytes());
        b.extend_from_slice(&self.word_pos.to_le_bytes());
        b
    }

    /// Reads the form `to_bytes` writes; refuses any other length.
    pub fn from_bytes(b: &[u8]) -> Result<RngState> {
        if b.len() != Self::NBYTES {
            bail!(
                InvalidArgument,
                "set_rng_state",
                "RNG state must be {} bytes, but got {}",
                Self::NBYTES,
                b.len()
            );
        }
        let u64_at = |i: usize| u64::from_le_bytes(b[i..i + 8].try_into().expect("8 bytes"));
        Ok(RngState {
            initial_seed: u64_at(0),
            key: b[8..40].try_into().expect("32 bytes"),
            stream: u64_at(40),
            word_pos: u128::from_le_bytes(b[48..64].try_into().expect("16 bytes")),
        })
    }
}

impl Generator {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Generator {
        Generator(Arc::new(Mutex::new(Stream::seeded(seed))))
    }

    /// Re-seeds this generator (every handle of it); returns it.
    pub fn manual_seed(&self, seed: u64) -> &Generator {
        *self.0.lock() = Stream::seeded(seed);
        self
    }

    /// The seed last given to `new`/`manual_seed`.
    pub fn initial_seed(&self) -> u64 {
        self.0.lock().seed
    }

    /// The generator's current state (PyTorch's `Generator.get_state`).
    pub fn get_state(&self) -> RngState {
        let s = self.0.lock();
        RngState {
            initial_seed: s.seed,
            key: s.rng.get_seed(),
            stream: s.rng.get_stream(),
            word_pos: s.rng.get_word_pos(),
        }
    }

    /// Restores a state from `get_state` (PyTorch's `Generator.set_state`): the following draws
    /// repeat the ones made after that `get_state`.
    pub fn set_state(&self, state: &RngState) {
        let mut rng = ChaCha12Rng::from_seed(state.key);
        rng.set_stream(state.stream);
        rng.set_word_pos(state.word_pos);
        *self.0.lock() = Stream {
            rng,
            seed: state.initial_seed,
        };
    }

    /// Runs `f` with exclusive access to the stream (one lock for a whole tensor's draws).
    pub(crate) fn with<R>(&self, f: impl FnOnce(&mut Stream) -> R) -> R {
        f(&mut self.0.lock())
    }
}

/// The raw stream and the documented transforms every sampler uses.
pub(crate) struct Stream {
    rng: ChaCha12Rng,
    seed: u64,
}

impl Stream {
    fn seeded(seed: u64) -> Stream {
        Stream {
            rng: ChaCha12Rng::from_seed(expand_seed(seed)),
            seed,
        }
    }

    /// The next raw 64-bit word.
    pub(crate) fn next_u64(&mut self) -> u64 {
        self.rng.next_u64()
    }

    /// Uniform in `[0, 1)`: the top 53 bits of a word times 2^-53.
    pub(crate) fn uniform(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// Standard normal by Box–Muller's cosine branch: `sqrt(-2 ln(1 - u1)) cos(2π u2)` from two
    /// uniforms (one normal per pair).
    pub(crate) fn normal(&mut self) -> f64 {
        let u1 = 1.0 - self.uniform();
        let u2 = self.uniform();
        (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
    }

    /// An integer uniform in `[low, high)` (`low < high`): Lemire's widening multiply of a word by
    /// the range, rejecting the low half above the zone `(range << lz(range)) - 1`.
    pub(crate) fn int_in(&mut self, low: i64, high: i64) -> i64 {
        let range = (high.wrapping_sub(low)) as u64;
        let zone = (range << range.leading_zeros()).wrapping_sub(1);
        loop {
            let m = (self.next_u64() as u128) * (range as u128);
            let (hi, lo) = ((m >> 64) as u64, m as u64);
            if lo <= zone {
                return low.wrapping_add(hi as i64);
            }
        }
    }
}

/// The 32-byte ChaCha key of a `u64` seed: eight outputs of PCG32 (multiplier
/// 6364136223846793005, increment 11634580027462260723, state advanced before each output, XSH-RR
/// output), little-endian.
fn expand_seed(mut state: u64) -> [u8; 32] {
    let mut key = [0u8; 32];
    for chunk in key.chunks_exact_mut(4) {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(11634580027462260723);
        let xorshifted = (((state >> 18) ^ state) >> 27) as u32;
        let x = xorshifted.rotate_right((state >> 59) as u32);
        chunk.copy_from_slice(&x.to_le_bytes());
    }
    key
}
