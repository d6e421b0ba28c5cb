//! The built-in backward functions that need kernels: AccumulateGrad (a leaf's gradient sink),
//! CopySlices (a base's history after an in-place op on a view), the strided-view backward
//! (`AsStridedBackward0`, the multi-output view backward, their differentiable scatter) and
//! view regeneration. They call the backend's front door (`crate::backend`) and tensor methods;
//! the rest of `autograd/` (node, engine, saved tensors, metadata, grad mode, recording) imports
//! nothing from `ops` or `backend`.
//!
//! # Fast paths
//!
//! The autograd core and the elementwise floor carry the fast paths below. Each one computes the
//! values and strides of the general path it skips (tests in `grad_tests/` hold both to that);
//! each is kept for the figure beside it, measured with `cargo bench --bench workloads`
//! (`autograd_chain_1000ops`: 1000 scalar ops on a 16-element tensor and their backward;
//! `inplace_view_100`: 100 `narrow(..).mul_(2.0)` on a copy of a leaf, then backward) or with
//! callgrind on the same workloads. Where a commit changed several things at once, the figure is
//! that commit's and the fast path is one part of it. Code that implements one names it
//! ("fast path F2"). Before adding one: measure it on the workloads; one worth less than 3% on
//! every workload is not kept.
//!
//! - **F1. CopySlices takes the base gradient over** (`copy_slices::owned_base_grad`): a
//!   gradient held by nobody else, dense with the base's geometry, is written in place instead
//!   of copied into a fresh buffer, and read through exclusive borrows (no locks). 12a9a4e
//!   (with the lazy regeneration of F6: callgrind `inplace_view_100` 19002 -> 11182
//!   instructions/op, CHANGELOG), 8569bec (exclusive borrows: `inplace_view` backward 0.25 ->
//!   0.23 us/op).
//! - **F2. CopySlices applies an in-place scalar op to the region** (`Backward::scalar_grad`,
//!   `copy_slices::scalar_grad_region`, the backend's `scalar_update`): `add_`/`sub_`/`mul_`/
//!   `div_` by a real scalar on f32/f64 updates the view's region of the owned base gradient in
//!   place, with no slice tensor and no formula run. 691686c: `inplace_view` backward 0.22 ->
//!   0.14 us/op.
//! - **F3. A handed-over gradient is overwritten** (`BackwardCtx::grad_owned`, set by the
//!   engine for a node with one output gradient; `ops::arith_scalar::arith_scalar_dense_owned`,
//!   `ops::dense::unary_inplace_owned`): a scalar `mul`/`div` backward writes the gradient only
//!   the engine holds instead of allocating, through exclusive borrows. 1586cd8 and 314d653
//!   (`inplace_view` backward 0.14 -> 0.12 us/op, with smaller records); CHANGELOG callgrind
//!   `autograd_chain_1000ops` 7142 -> 4953 instructions/op (with inline edges and grads).
//! - **F4. AccumulateGrad keeps the first gradient** (`accumulate::accumulate_into`): a
//!   gradient held by nobody else, not a view, with its storage to itself becomes `.grad`
//!   without a copy (PyTorch's rule too: a copy per leaf and pass saved). No figure of its
//!   own was recorded; ef536f1 made its ownership test lock-free (`Arc::get_mut`, with the
//!   other engine savings of that commit: chain 0.53 -> 0.40 us/op).
//! - **F5. Pending view histories** (`meta::PendingView`, `view::make_strided_view`,
//!   `view::grad_fn_of`): a strided view made in grad mode keeps its formula, edge and tape place
//!   until its `grad_fn` is first read, so a view written in place at once never builds a node.
//!   2beb211 (CHANGELOG: with inline formulas and CopySlices' inner node, `inplace_view_100`
//!   1.02 -> 0.70 us/op).
//! - **F6. Lazy view regeneration** (`view::mark_stale`, `as_strided::regenerate`): after an
//!   in-place op through a view, other views of the base regenerate their history when first
//!   asked for it, not eagerly. 12a9a4e (figure with F1).
//! - **F7. One memcpy for a dense same-dtype copy** (`backend::cpu::Cpu::copy`): the common
//!   copy of CopySlices and `copy()`. 739f7fb: callgrind `inplace_view_100` 1.414 G -> 1.248 G
//!   instructions.
//! - **F8. The base's history moves into its CopySlices** (`view::InplaceRecord::finish`)
//!   instead of being cloned and dropped (two atomics per op); CopySlices is built with
//!   `Arc::new` unless its formula saved tensors (`new_cyclic` costs three atomic updates,
//!   00e9c3f). 35cd4d1: `inplace_view` 0.575 -> 0.55 us/op.
//! - **F9. Recording into a fresh output without locks** (`view::record_fresh`,
//!   `view::gradient_edge`'s one-lock look at a non-view): de238f3 (with per-thread id blocks:
//!   chain 0.40 -> 0.36 us/op), ef536f1 (one metadata lock per input: chain 0.53 -> 0.40).
//! - **F10. Inline small buffers** (`storage::CpuBuffer`, up to 64 bytes: scalars, losses,
//!   small biases need no allocation). b5e0a6d: chain 0.36 -> 0.33 us/op.
//! - **F11. Dense elementwise fast paths** (`ops::dense::{binary, binary_into, unary,
//!   unary_inplace}`, `ops::elementwise::arith_scalar`): operands dense in one shared memory order, or a
//!   0-dim/scalar operand, run one flat vectorised loop (no broadcasting, stride coalescing or
//!   per-call allocations). 71a28a5 and 0396d63 (CHANGELOG "Faster elementwise ops"; no single
//!   figure recorded: they serve every workload above and `add_*_f32_4M`); ad62d3b gathered the
//!   scalar forms into one closure table.
//! - **F12. Fused unary backwards** (`fused!` in `ops::elementwise::unary_grad`): relu, tanh,
//!   sigmoid, silu, softplus, erf and gelu compute `g * f'(s)` in one flat pass over dense
//!   f32/f64 operands when no graph of the backward is recorded, instead of a derivative tensor
//!   and a `mul` (tanh/sigmoid: 3-4 tensor ops). Serves `gelu_backward_f32_4M`: 3.7 ms (noisy,
//!   with the vectorised erf of the same commit; no separate unfused figure was measured).
//! - **F13. Fused attention forward without a graph** (`ops::attention::sdpa::fused`, the
//!   backend's `sdpa_forward`): causal or unmasked f32/f64 `scaled_dot_product_attention`
//!   without dropout, when nothing records a graph, computes per block of 64 queries only the
//!   scores the block can see, soft-maxes and multiplies them, instead of the composed
//!   matmul/masked_fill/softmax/matmul over the full score matrix. Serves
//!   `sdpa_causal_b8h8t256d64`: 88-93 -> 40-44 ms (3 alternated runs, 2 threads, machine
//!   under load at about 15 runnable tasks per core); with a graph the composed path runs.
//! - **F15. f32/f64 `dot` as `mul` + pairwise `sum`** (`Tensor::dot`) instead of a
//!   `[1, n] x [n, 1]` GEMM. Per-op sweep `dot` (2^20 f32, one thread, load ~17): 32.8 ->
//!   0.69 ms (PyTorch 0.40-0.42 ms).
//! - **F16. Large dense copies split over the kernel team** (`backend::cpu::Cpu::copy`, F7's
//!   memcpy cut into ranges from 1 MiB on): one core's copy gets about half of what two get.
//!   Workload `copy_f32_4M`, idle, old/new binaries alternated 3 times: 41-50 -> 94-100 GB/s
//!   (PyTorch 101); `copy_f32_16M` 19-25 -> 31-36 GB/s (PyTorch 35).

mod accumulate;
mod as_strided;
mod copy_slices;

pub(crate) use accumulate::{accumulate_into, grad_accumulator};
pub(crate) use as_strided::{AsStridedBackward, MultiViewBackward, regenerate};
pub(crate) use copy_slices::{CopySlices, ScalarGrad};
