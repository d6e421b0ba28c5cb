//! [`DistributedSampler`]: each rank's share of a data set's indices per epoch, PyTorch's
//! `DistributedSampler`.

use crate::random::Generator;
use crate::{Result, bail};

/// Shards the indices `0..len` of a data set across `num_replicas` ranks, PyTorch's
/// `DistributedSampler(dataset, num_replicas, rank, shuffle, seed, drop_last)`.
///
/// Each epoch the indices are shuffled (when `shuffle`) with a generator seeded by
/// `seed + epoch` — the same permutation on every rank, a different one each epoch (call
/// [`set_epoch`](DistributedSampler::set_epoch) before each epoch, as in PyTorch). The list is
/// then padded by repeating its start to a multiple of `num_replicas` (or, with `drop_last`,
/// its tail is dropped) and rank `r` takes every `num_replicas`-th index from position `r`, so
/// every rank gets [`num_samples`](DistributedSampler::num_samples) indices and together they
/// cover the data set. The permutation comes from tapegrad's stable generator
/// ([`Generator`], the stream `Tensor::randperm` draws from), not PyTorch's, so the shards differ from PyTorch's for the same seed.
///
/// ```
/// # #[cfg(feature = "distributed")] {
/// use tapegrad::distributed::DistributedSampler;
/// let s0 = DistributedSampler::new(10, 3, 0, false, 0, false)?;
/// let s2 = DistributedSampler::new(10, 3, 2, false, 0, false)?;
/// assert_eq!(s0.indices(), vec![0, 3, 6, 9]);
/// assert_eq!(s2.indices(), vec![2, 5, 8, 1]); // padded with the list's start
/// # }
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Debug)]
pub struct DistributedSampler {
    len: usize,
    num_replicas: usize,
    rank: usize,
    shuffle: bool,
    seed: u64,
    drop_last: bool,
    epoch: u64,
}

impl DistributedSampler {
    /// A sampler for a data set of `len` items, for rank `rank` of `num_replicas` (usually the
    /// world group's [`rank`](super::ProcessGroup::rank) and
    /// [`world_size`](super::ProcessGroup::world_size)). Errors (`InvalidArgument`): no
    /// replicas, or `rank >= num_replicas`.
    pub fn new(
        len: usize,
        num_replicas: usize,
        rank: usize,
        shuffle: bool,
        seed: u64,
        drop_last: bool,
    ) -> Result<DistributedSampler> {
        if num_replicas == 0 || rank >= num_replicas {
            bail!(
                InvalidArgument,
                "DistributedSampler",
                "invalid rank {}, rank should be in the interval [0, {}]",
                rank,
                num_replicas as i64 - 1
            );
        }
        Ok(DistributedSampler {
            len,
            num_replicas,
            rank,
            shuffle,
            seed,
            drop_last,
            epoch: 0,
        })
    }

    /// Sets the epoch that seeds the next shuffle (PyTorch's `set_epoch`).
    pub fn set_epoch(&mut self, epoch: u64) {
        self.epoch = epoch;
    }

    /// Number of indices each rank gets per epoch (PyTorch's `num_samples`).
    pub fn num_samples(&self) -> usize {
        let (n, r) = (self.len, self.num_replicas);
        if self.drop_last && n % r != 0 {
            n.saturating_sub(r).div_ceil(r)
        } else {
            n.div_ceil(r)
        }
    }

    /// This rank's indices for the current epoch.
    pub fn indices(&self) -> Vec<usize> {
        let mut all: Vec<usize> = (0..self.len).collect();
        if self.shuffle {
            // Fisher–Yates on the stream `Tensor::randperm` uses
            Generator::new(self.seed.wrapping_add(self.epoch)).with(|r| {
                for i in (1..all.len()).rev() {
                    let j = r.int_in(0, i as i64 + 1) as usize;
                    all.swap(i, j);
                }
            });
        }
        let total = self.num_samples() * self.num_replicas;
        if all.len() < total && !all.is_empty() {
            let pad: Vec<usize> = all
                .iter()
                .copied()
                .cycle()
                .take(total - all.len())
                .collect();
            all.extend(pad);
        }
        all.truncate(total);
        all.into_iter()
            .skip(self.rank)
            .step_by(self.num_replicas)
            .collect()
    }
}
