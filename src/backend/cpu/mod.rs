//! The CPU backend: [`Cpu`] implements [`Backend`] over [`CpuBuffer`]s: [`Device`] here, each
//! kernel family trait in the file of its kernels (`impl CopyKernels for Cpu` in `copy.rs`,
//! `ElementwiseKernels` in `map.rs`, `ReduceKernels` in `reduce/`, `MovementKernels` in
//! `movement.rs`, `LinalgKernels` in `matmul.rs`, `NnKernels` in `rowwise.rs`, `ConvKernels` in
//! `conv/`, `AttentionKernels`, `NormKernels`, `PoolKernels`, `ResampleKernels`, `OptimKernels`
//! in the files of those names, `SparseKernels` in `sparse/`). The strided kernels
//! (`copy`, `matmul`) are `unsafe` at the boundary: callers pass base pointers of locked buffers
//! plus geometry that lies inside them. The flat ones (`elementwise`, `sum`) work on slices.
//! `map` holds the elementwise map kernels (flat fast paths, strided maps with broadcasting).
//! `team` is the persistent worker team of the parallel kernels; `threads` holds the thread
//! count both it and the crate's rayon pool (`threads::install`) obey.

mod attention;
mod conv;
pub(crate) mod copy;
pub(crate) mod elementwise;
mod extremum;
mod gather_dim;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gemm_x86;
mod group_norm;
mod index;
mod lanes;
mod layer_norm;
mod map;
pub(crate) mod math;
pub(crate) mod matmul;
mod movement;
mod norm;
mod optim;
mod pool;
mod ramp;
pub(crate) mod reduce;
mod resample;
pub(crate) mod row_sum;
mod rowwise;
mod scalar;
pub(crate) mod scan;
pub(crate) mod sort;
mod sparse;
pub(crate) mod sum;
pub(crate) mod team;
pub(crate) mod threads;
mod vec256;

/// A deterministic stream of uniform f64 in `[0, 1)` (xorshift64 from a non-zero `seed`): the
/// inputs of the kernels' unit tests.
#[cfg(test)]
pub(crate) fn test_uniform(mut seed: u64) -> impl FnMut() -> f64 {
    move || {
        seed ^= seed << 13;
        seed ^= seed >> 7;
        seed ^= seed << 17;
        (seed >> 11) as f64 / (1u64 << 53) as f64
    }
}

use super::{Backend, Device};
use crate::Result;
use crate::layout::Layout;
use crate::storage::{CpuBuffer, DeviceBuffer, Storage};
use smallvec::SmallVec;

/// The CPU device's kernels.
pub(crate) struct Cpu;

/// `l`'s strides as the signed strides of a raw operand.
fn istrides(l: &Layout) -> SmallVec<[isize; 6]> {
    l.strides().iter().map(|&s| s as isize).collect()
}

impl Device for Cpu {
    type Buffer = CpuBuffer;

    #[inline]
    fn buffer(d: &DeviceBuffer) -> &CpuBuffer {
        match d {
            DeviceBuffer::Cpu(b) => b,
        }
    }

    #[inline]
    fn buffer_mut(d: &mut DeviceBuffer) -> &mut CpuBuffer {
        match d {
            DeviceBuffer::Cpu(b) => b,
        }
    }

    #[inline]
    fn storage_for_output(nbytes: usize) -> Result<Storage> {
        // (`from_buffer` is inlined: the buffer is built in place, as the dense path always did)
        Ok(Storage::from_buffer(CpuBuffer::for_overwrite(nbytes)?))
    }

    fn storage_zeroed(nbytes: usize) -> Result<Storage> {
        Storage::zeroed(nbytes)
    }
}

impl Backend for Cpu {}
