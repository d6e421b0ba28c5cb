//! # tapegrad
//!
//! A pure-Rust eager tensor engine with tape-based autograd that keeps PyTorch's semantics where
//! they matter most: strided views that share storage and a version counter, in-place ops that
//! bump it, autograd that checks saved tensors and rebases history when a view is written
//! (CopySlices), and `set_`/`resize_`.
//!
//! ```
//! use tapegrad::{Tensor, DType};
//! let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?.requires_grad_(true)?;
//! let b = x.copy()?;                 // PyTorch's clone()
//! b.select(0, 1)?.mul_(10.0)?;       // in-place through a view
//! b.sum()?.backward()?;
//! assert_eq!(x.grad().unwrap().to_vec::<f64>()?, vec![1.0, 1.0, 10.0, 10.0]);
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! Operators (`&a * &b + 1.0`, `a += &b`) are the op methods, panicking with their error
//! (see [`Tensor`]); a differentiable op of your own is an [`autograd::Function`] (PyTorch's
//! `autograd.Function`: `save_for_backward`, `mark_dirty`, double backward).
//!
//! ```
//! use tapegrad::autograd::{Function, FunctionCtx, FunctionGradCtx};
//! use tapegrad::{Result, Tensor};
//!
//! struct XExp; // x * exp(x), with its own backward
//! impl Function for XExp {
//!     fn forward(&mut self, ctx: &mut FunctionCtx, inputs: &[Tensor]) -> Result<Vec<Tensor>> {
//!         ctx.save_for_backward(&[&inputs[0]]);
//!         Ok(vec![inputs[0].mul(&inputs[0].exp()?)?])
//!     }
//!     fn backward(&self, ctx: &FunctionGradCtx, g: &[Tensor]) -> Result<Vec<Option<Tensor>>> {
//!         let x = &ctx.saved_tensors()[0];
//!         Ok(vec![Some(g[0].mul(&x.add(1.0)?.mul(&x.exp()?)?)?)])
//!     }
//! }
//!
//! let x = Tensor::from_vec(vec![0.0f64, 1.0], &[2])?.requires_grad_(true)?;
//! let w = Tensor::from_vec(vec![2.0f64, 3.0], &[2])?;
//! let y = XExp.apply(&[&x])?.remove(0);
//! let loss = (&y * &w + 1.0).sum()?;          // operators: the op methods, panicking on error
//! loss.backward()?;
//! let g = x.grad().unwrap().to_vec::<f64>()?;   // w * (x + 1) * exp(x)
//! assert_eq!(g[0], 2.0);
//! assert!((g[1] - 6.0 * std::f64::consts::E).abs() < 1e-12);
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! Debugging: under [`autograd::detect_anomaly`] each node remembers the backtrace of the
//! forward call that made it, and a backward pass fails on the first NaN or infinite gradient
//! (`ErrorKind::NonFiniteGradient`) naming that node; every backward error names its node and
//! forward op in [`Error::context`]. Memory: [`autograd::checkpoint`] recomputes a segment's
//! saved tensors in the backward instead of keeping them ([`max_memory_allocated`] measures it).
//!
//! ```
//! use tapegrad::{ErrorKind, Tensor, autograd};
//! let x = Tensor::from_vec(vec![0.0f64, 4.0], &[2])?.requires_grad_(true)?;
//! let _anomaly = autograd::detect_anomaly();
//! let e = x.sqrt()?.mul(0.0)?.sum()?.backward().unwrap_err();
//! assert_eq!(e.kind(), ErrorKind::NonFiniteGradient);
//! assert_eq!(e.message(), "Function 'SqrtBackward0' returned nan values in its 0th output.");
//! assert!(e.context().unwrap().contains("created by the forward op `sqrt`"));
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! ## Integers
//!
//! Sizes, dims, indices and counts accept any common integer type ([`Dim`]: `i64`, `i32`,
//! `isize`, `usize`, `u32`, `u64`), and lists of them any list form ([`IntoShape`]: `&[T]`,
//! `[T; N]`, `&[T; N]`, `Vec<T>`, `&Vec<T>`; `()` is the 0-dim shape, since an empty literal `&[]`
//! leaves Rust no element type to infer). Dims and indices may be negative where PyTorch allows
//! it (counted from the end), and `view`/`reshape`/`expand`/`unflatten` take `-1`; sizes and
//! counts may not be negative. Values that do not fit in `i64` or are negative where not allowed
//! are `InvalidArgument` errors naming the op, never wrapping casts. Shapes come back as `usize`
//! (`shape()`, `size(d)`), so they can be passed straight back:
//!
//! ```
//! use tapegrad::{DType, Tensor};
//! let x = Tensor::zeros(&[2, 3], DType::F32)?;       // literals need no suffix
//! let y = x.view(&[3, 2])?.view(&[-1i64])?;          // i64, with PyTorch's -1
//! let z = Tensor::ones(&x.shape(), DType::F32)?;     // a Vec<usize> shape back in
//! let d: usize = 1;
//! assert_eq!(z.sum_dims(&[d], false)?.shape(), vec![2]);
//! assert_eq!(y.narrow(0, -2, 2usize)?.shape(), vec![2]);
//! assert_eq!(Tensor::zeros((), DType::F32)?.dim(), 0);
//! assert!(Tensor::zeros(&[-1i64], DType::F32).is_err());
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! The nn geometry follows the same rule. Where PyTorch takes `int | tuple` (`kernel_size`,
//! `stride`, `padding`, `dilation`, `output_size` of the poolings, `fold`/`unfold`, the
//! convolution layers and `Spatial`, `LayerNorm`'s `normalized_shape`, `interpolate`'s `size`),
//! the argument is an [`IntoGeometry`]: one integer of any [`Dim`] type (`3`: every spatial dim)
//! or any [`IntoShape`] list (`[3, 2]`, `&v` for a `Vec<i64>`); `None` or `()` is an absent
//! one (a pooling's `stride`: the kernel size). Single sizes and counts (`in_features`,
//! `num_groups`, `embed_dim`, `upscale_factor`, a 1-d pooling's `kernel_size`, ...) are
//! [`Dim`]s, optional ones (`stride=None`, `divisor_override`, `padding_idx`) [`MaybeDim`]s.
//! Negative values reach the op, which refuses them as PyTorch does, with its message
//! (`kernel size should be greater than zero, ...`, `Trying to create tensor with negative
//! dimension ...` for a layer's negative size). Options structs keep concrete `i64` fields
//! (`ConvOptions.groups`, ...) and take any integer through their builder setters
//! (`ConvOptions::default().stride(2usize).groups(g)`) or `From` impls (`Spatial`); those
//! conversions are infallible, so a `u64`/`usize` above `i64::MAX` is kept as `i64::MAX`, which
//! the op refuses (or, for a stride, treats as the true value).
//!
//! ```
//! use tapegrad::nn::{Conv2d, Linear, MaxPool2d};
//! use tapegrad::{ConvOptions, DType, Tensor};
//! let x = Tensor::ones(&[1, 1, 4, 4], DType::F32)?;
//! let k: Vec<i64> = vec![2, 2];
//! let a = x.max_pool2d(2, None, 0, 1, false)?;               // one int for both dims
//! let b = x.max_pool2d(&k, &k, [0usize, 0], 1u32, false)?;   // any list, any integer type
//! assert!(a.equal(&b)?);
//! let c = Conv2d::new(1i64, 4usize, 3, ConvOptions::default().padding(1), true, DType::F32)?;
//! assert_eq!(c.weight.shape(), vec![4, 1, 3, 3]);
//! assert!(Linear::new(-1i64, 2, true, DType::F32).is_err()); // PyTorch's refusal
//! let _ = MaxPool2d::new([2u32, 2], None, 0, 1, false);
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! ## Randomness
//!
//! [`random`] is PyTorch's `torch.random`: a global generator seeded with [`manual_seed`]
//! (saved and restored with [`random::get_rng_state`] / [`random::set_rng_state`]) feeds
//! `rand`, `randn`, `randint`, dropout and the `nn::init` initialisers; [`random::Generator`]
//! objects give independent streams to the samplers and `*_with` factories (PyTorch's
//! `generator=`). The stream (ChaCha12, with the transforms written out in the crate) is stable
//! across tapegrad versions, but it is not PyTorch's: a seed gives other values than in PyTorch.
//!
//! ```
//! use tapegrad::{DType, Tensor, random::Generator};
//! tapegrad::manual_seed(7);
//! let a = Tensor::randn(&[3], DType::F64)?;
//! let state = tapegrad::random::get_rng_state();
//! let b = Tensor::rand(&[3], DType::F64)?;
//! tapegrad::random::set_rng_state(&state);
//! assert_eq!(Tensor::rand(&[3], DType::F64)?.to_vec::<f64>()?, b.to_vec::<f64>()?);
//! let g = Generator::new(7);                    // its own stream, seeded like the global one
//! let c = Tensor::randn_with(&[3], DType::F64, Some(&g))?;
//! assert_eq!(c.to_vec::<f64>()?, a.to_vec::<f64>()?);
//! # Ok::<(), tapegrad::Error>(())
//! ```
//!
//! Threads: CPU kernels use [`get_num_threads`] threads (default `RAYON_NUM_THREADS` or all
//! cores), changed at run time with [`set_num_threads`]; idle kernel workers poll for the next
//! kernel for [`get_spin_time`] before parking, which [`set_spin_time`] shortens (zero: park
//! right after each kernel) for a host application that needs its cores between kernels.
//!
//! Module map: [`dtype`] (element types, promotion), `layout` (sizes/strides/offset), `storage`
//! (shared buffers), `tensor` (the handle), `view` (view ops), `ops` (compute ops, one folder
//! per family: `elementwise`, `reduce`, `movement`, `linalg`, `nn`, `storage`; each op's method,
//! kernel call and backward in one file), [`autograd`] (graph, engine, views + in-place),
//! `backend` (raw kernels), [`nn`] (modules), [`optim`] (optimizers), [`checkpoint`]
//! (safetensors files). Where a new op, kernel, backward rule, dtype, device or test goes:
//! `src/README.md`.
//!
//! ## Devices: the backend floor
//!
//! A `Storage` holds its bytes as an enum by device (`Cpu` today). Kernels are written against
//! the `Backend` trait (`src/backend/mod.rs`, the sum of one trait per kernel family in
//! `src/backend/kernels/`): they see device buffers and `Layout`s, never a `Tensor` or
//! autograd, and are reached through one front door whose single `match` on the device picks
//! the implementation. What a device implements, one trait per kernel family: strided copy with
//! dtype conversion, fill, ordered accumulation and element reads; the in-place scalar update of a
//! region; elementwise maps with broadcasting (unary, binary, ternary; the op's formula is a
//! closure); reductions, scans and sort; gather/scatter/index and data movement; batched matmul;
//! row-wise ops (softmax-like, layer_norm) and loss picks; convolution; attention; per-channel
//! normalization; pooling; resampling; the fused optimizer step; the sparse kernels (pattern reads,
//! coalesce and slicing, row gather/scatter, sparse @ dense). A second device (CUDA through
//! `cudarc`) is a folder beside `backend/cpu/` implementing the traits, plus one variant and one
//! dispatch arm; it runs the closure-taking elementwise maps by host staging (operands copied to
//! host, the CPU kernel run, the result copied back: one provided helper per method in
//! `backend/staging.rs`) until it adds native kernels for hot ops, which the front door tries first
//! (op codes the device may decline). Op files do not change. The autograd core (`autograd/`) knows
//! no op: the built-in functions that need kernels (AccumulateGrad, CopySlices, the strided-view
//! backward, view regeneration) sit in `autograd/builtin/`, whose header also lists the performance
//! fast paths with the figures that justify them.

pub mod autograd;
mod backend;
pub mod checkpoint;
#[cfg(feature = "distributed")]
pub mod distributed;
pub mod dtype;
mod error;
mod ids;
mod index;
pub mod interop;
mod layout;
pub mod nn;
mod ops;
pub mod optim;
pub mod random;
pub mod sparse;
mod storage;
mod tensor;
mod testing;
mod threads;
mod view;

pub use dtype::{DType, Device, Element, Operand, Scalar, result_type};
pub use error::{Error, ErrorKind, Result};
pub use index::{Ellipsis, IntoIndex, IntoIndices, NewAxis, TensorIndex};
pub use layout::{Dims, IntoDims, Layout};
pub use ops::attention::SdpaOptions;
pub use ops::conv::{ConvOptions, ConvPadding, ConvTransposeOptions, Spatial};
pub use ops::elementwise::{Approximate, RoundingMode};
pub use ops::movement::{IncludeSelf, ScatterReduce};
pub use ops::nn::{BceWithLogitsOptions, CrossEntropyOptions, NllLossOptions, Reduction};
pub use ops::reduce::{NormOrd, Stability};
pub use ops::resample::{InterpolateMode, InterpolateOptions, PadMode};
pub use ops::storage::ResizeFill;
pub use random::manual_seed;
pub use sparse::LayoutKind;
pub use storage::{
    Storage, max_memory_allocated, memory_allocated, release_cached_memory, reset_peak_memory_stats,
};
pub use tensor::dims::{Dim, IntoGeometry, IntoShape, MaybeDim};
pub use tensor::{Nested, Tensor};
pub use threads::{get_num_threads, get_spin_time, set_num_threads, set_spin_time};
