//! The main integration-test crate: one module per family, sharing the helpers of [`common`].
//!
//! Run one family with a filter on its module path, e.g.
//! `cargo test --release --test main -- sparse_slice::`. The other test targets are separate
//! processes for a reason: `conformance` is a harness of its own (`harness = false`), `memcheck`
//! re-runs its own binary under valgrind, `no_leaks` counts every allocation of its process,
//! `seeded` holds the tests that depend on the process-global seeded generator, and
//! `reliability` is the small crate CI also builds with overflow checks (`release-checked`).

mod common;

mod activation_checkpoint;
mod attention;
mod autograd_rules;
mod backward_links;
mod checkpoint;
mod clip_grad;
mod cnn_state;
mod conv;
mod conv_pool_formats;
mod custom_fns;
mod custom_function;
mod data_model;
mod double_backward;
mod fast_paths;
mod hook_handles;
mod indexing;
mod int_args;
mod interop;
mod kernels;
mod layouts;
mod linalg;
mod matmul_kernel;
mod nn;
mod nn_formats;
mod nn_int_args;
mod nn_modules;
mod nn_state;
mod norm;
mod operators;
mod optim;
mod optim_bitexact;
mod optim_groups;
mod pool;
mod pool_ints;
mod random;
mod reduce;
mod resample;
mod sched_checkpoint;
mod schedulers;
mod schedulers_groups;
mod set_resize;
mod shape_ops;
mod sparse;
mod sparse_prop;
mod sparse_slice;
mod threads;
mod transformer;
mod unary;
mod views_prop;
