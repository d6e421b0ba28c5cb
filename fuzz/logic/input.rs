//! A byte cursor that turns fuzzer bytes into small structured choices. Exhausted input reads as
//! zeros, so every byte string is a valid program.

/// Reads choices from raw fuzzer bytes.
pub struct Input<'a> {
    data: &'a [u8],
    pos: usize,
}

impl<'a> Input<'a> {
    pub fn new(data: &'a [u8]) -> Self {
        Input { data, pos: 0 }
    }
    pub fn is_empty(&self) -> bool {
        self.pos >= self.data.len()
    }
    pub fn u8(&mut self) -> u8 {
        let b = self.data.get(self.pos).copied().unwrap_or(0);
        self.pos += 1;
        b
    }
    pub fn bool(&mut self) -> bool {
        self.u8() & 1 == 1
    }
    /// A value in `0..n` (`n > 0`).
    pub fn below(&mut self, n: usize) -> usize {
        self.u8() as usize % n.max(1)
    }
    pub fn u64(&mut self) -> u64 {
        let mut v = 0u64;
        for _ in 0..8 {
            v = (v << 8) | self.u8() as u64;
        }
        v
    }
    /// A geometry-like integer: mostly small, sometimes negative, sometimes absurd.
    pub fn geom(&mut self) -> i64 {
        match self.u8() % 32 {
            0 => i64::MAX,
            1 => i64::MIN,
            2 => -1,
            3 => self.u64() as i64,
            4 => 1 << (self.u8() % 63),
            5 => -((self.u8() % 8) as i64) - 2,
            k => (k as i64 - 6) % 7,
        }
    }
    /// A size: mostly 0..=4, sometimes huge.
    pub fn size(&mut self) -> usize {
        match self.u8() % 24 {
            0 => usize::MAX,
            1 => 1usize << (self.u8() % 64),
            2 => self.u64() as usize,
            k => (k as usize - 3) % 5,
        }
    }
    /// A small size in `0..=max`.
    pub fn small(&mut self, max: usize) -> usize {
        self.below(max + 1)
    }
    /// A dim index, mostly in range `[-nd, nd)`, sometimes out of range.
    pub fn dim(&mut self, nd: usize) -> i64 {
        let n = nd.max(1) as i64;
        match self.u8() % 16 {
            0 => self.geom(),
            1 => n,
            2 => -n - 1,
            k => (k as i64 % (2 * n)) - n,
        }
    }
}

/// A tiny deterministic generator (xorshift64*) for the smoke test's pseudo-random inputs.
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A random byte string of length `0..max_len`.
    pub fn bytes(&mut self, max_len: usize) -> Vec<u8> {
        let n = (self.next_u64() as usize) % max_len.max(1);
        (0..n).map(|_| self.next_u64() as u8).collect()
    }
}
