//! Data-parallel training over MPI (feature `distributed`): a [`ProcessGroup`] with collectives
//! on tensors of every dtype, the autograd-aware [`all_reduce`], [`DistributedDataParallel`]
//! and the [`DistributedSampler`] — PyTorch's `torch.distributed` with the MPI backend.
//!
//! | file | concept |
//! |---|---|
//! | `process_group.rs` | [`ProcessGroup`]: MPI start-up, rank, size, sub-groups, the communication thread, [`Work`] |
//! | `collectives.rs` | `all_reduce_`, `broadcast_`, `all_gather`, `reduce_scatter`, `barrier` (+ `_async`), [`ReduceOp`] |
//! | `wire.rs` | tensor elements as MPI buffers, which reductions apply to which dtype |
//! | `functional.rs` | [`all_reduce`]: differentiable (gradient of a sum all-reduce is an all-reduce) |
//! | `ddp.rs` | [`DistributedDataParallel`]: buckets, gradient hooks, overlap, `no_sync` |
//! | `sampler.rs` | [`DistributedSampler`]: per-rank shards of a data set per epoch |
//!
//! # Running
//!
//! Build with `--features distributed` (needs an MPI library and libclang: on Debian/Ubuntu
//! `apt-get install libopenmpi-dev openmpi-bin libclang-dev`) and start N copies of the
//! program with `mpirun -np N target/release/program`; each learns its rank from MPI. Open MPI
//! refuses to run as root unless given `--allow-run-as-root` (or `OMPI_ALLOW_RUN_AS_ROOT=1`
//! and `OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1`); with more ranks than cores add `--oversubscribe`.
//!
//! # Across machines
//!
//! Nothing in the program changes: MPI places the ranks. List the machines in a hostfile
//! (`node1 slots=8`, `node2 slots=8`, one line each), make the binary and data reachable at
//! the same path on each (shared file system or a copy), allow password-less `ssh` between
//! them and launch `mpirun --hostfile hosts -np 16 program`. Open MPI then carries the
//! collectives over TCP (or InfiniBand when present; `--mca btl_tcp_if_include eth0` picks
//! the network), and the world group spans the machines. Ranks on one machine share its
//! cores, so give each rank its share of threads (`RAYON_NUM_THREADS`).
//!
//! # Design, and where NCCL fits
//!
//! Collectives copy a tensor's elements into a host buffer, queue the MPI call on one
//! communication thread and return a [`Work`]; waiting writes the result back with `copy_`, so
//! views, versions and aliasing follow tapegrad's in-place rules with no raw pointer outside
//! `backend/` and `storage/`. DDP uses the non-blocking form from post-accumulate-grad hooks so
//! communication overlaps the rest of backward. MPI is the CPU engine; once a GPU backend exists
//! (a device folder beside `backend/cpu/`, see `src/README.md`), NCCL over `cudarc` slots in as
//! a second implementation of the same operations: a process group variant holding an NCCL
//! communicator (bootstrapped by broadcasting its unique id over this MPI world) whose jobs run
//! on a CUDA stream on device buffers instead of the host copy, with [`Work`] waiting on a CUDA
//! event. `ProcessGroup`'s methods would choose by the tensor's device; DDP, the sampler and
//! the autograd-aware all-reduce only call those methods and would not change.

mod collectives;
mod ddp;
mod functional;
mod process_group;
mod sampler;
mod wire;

pub use collectives::ReduceOp;
pub use ddp::{DdpOptions, DistributedDataParallel, NoSync};
pub use functional::all_reduce;
pub use process_group::{ProcessGroup, Work, wait_all};
pub use sampler::DistributedSampler;
