//! Anomaly mode (PyTorch's `torch.autograd.set_detect_anomaly` / `detect_anomaly`): while it is
//! on, every node records where it was created (its name and a Rust backtrace of the forward
//! call), and the engine checks each gradient a node returns, failing with
//! `NonFiniteGradient` on the first NaN or infinity. Off, the only cost is one relaxed atomic
//! read per recorded node.
//!
//! Independently of the mode, every error raised while running a node (its formula, its saved
//! tensors' checks, its hooks) names that node and the forward op that created it in its
//! [`Error::context`] ([`in_node`]; the message stays PyTorch's); with anomaly mode on the
//! context also holds the forward backtrace.

use super::node::Node;
use crate::{Error, Result, Tensor};
use std::backtrace::Backtrace;
use std::sync::atomic::{AtomicBool, Ordering};

static ANOMALY: AtomicBool = AtomicBool::new(false);

/// Turns anomaly mode on or off for the whole process (PyTorch's
/// `torch.autograd.set_detect_anomaly(mode)`). Prefer [`detect_anomaly`], which restores the
/// previous mode.
pub fn set_detect_anomaly(on: bool) {
    ANOMALY.store(on, Ordering::Relaxed);
}

/// True while anomaly mode is on.
pub fn is_anomaly_enabled() -> bool {
    ANOMALY.load(Ordering::Relaxed)
}

/// Restores the previous anomaly mode when dropped.
#[must_use = "anomaly mode is restored when the guard is dropped"]
pub struct AnomalyGuard {
    prev: bool,
}

impl Drop for AnomalyGuard {
    fn drop(&mut self) {
        set_detect_anomaly(self.prev);
    }
}

/// Turns anomaly mode on until the guard drops (PyTorch's `torch.autograd.detect_anomaly()`).
/// Nodes recorded meanwhile remember their forward backtrace; a backward pass run meanwhile
/// fails on the first node returning a NaN or infinite gradient, with an error of kind
/// `NonFiniteGradient` naming it ("Function 'DivBackward0' returned nan values in its 0th
/// output") and the backtrace of the forward call that created it. The mode is
/// process-wide, like PyTorch's. It slows recording down (one backtrace per node): use it to
/// debug.
///
/// ```
/// use tapegrad::{ErrorKind, Tensor, autograd};
/// let _anomaly = autograd::detect_anomaly();
/// let x = Tensor::from_vec(vec![0.0f64, 1.0], &[2])?.requires_grad_(true)?;
/// let y = x.sqrt()?.mul(0.0)?; // d sqrt(x)/dx at 0 is inf, times 0: nan
/// let e = y.sum()?.backward().unwrap_err();
/// assert_eq!(e.kind(), ErrorKind::NonFiniteGradient);
/// assert!(e.message().starts_with("Function 'SqrtBackward0' returned nan values in its 0th output."));
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn detect_anomaly() -> AnomalyGuard {
    let prev = ANOMALY.swap(true, Ordering::Relaxed);
    AnomalyGuard { prev }
}

/// Where a node was created (recorded in anomaly mode only).
pub(crate) struct Creation {
    pub(crate) trace: Backtrace,
}

/// The creation record of a node built now: `Some` in anomaly mode only.
#[inline]
pub(crate) fn creation() -> Option<Box<Creation>> {
    if !ANOMALY.load(Ordering::Relaxed) {
        return None;
    }
    Some(Box::new(Creation {
        trace: Backtrace::force_capture(),
    }))
}

/// The forward op a node's name comes from: `MulBackward0` → `mul`,
/// `NativeLayerNormBackward0` → `native_layer_norm` (PyTorch's naming rule, reversed); a custom
/// function's `XExpBackward` → `XExp::apply`.
fn forward_op(node: &str) -> Option<String> {
    if let Some(ty) = node.strip_suffix("Backward")
        && !ty.is_empty()
    {
        return Some(format!("{ty}::apply"));
    }
    let stem = node.trim_end_matches(|c: char| c.is_ascii_digit());
    let stem = stem.strip_suffix("Backward")?;
    if stem.is_empty() {
        return None;
    }
    let mut op = String::new();
    for (i, c) in stem.chars().enumerate() {
        if c.is_ascii_uppercase() {
            if i > 0 {
                op.push('_');
            }
            op.push(c.to_ascii_lowercase());
        } else {
            op.push(c);
        }
    }
    Some(op)
}

/// `e` with the node it was raised in and the forward op that created it as its context; in
/// anomaly mode with the backtrace of that forward call. An error that already has a context
/// (raised by a nested backward pass) keeps it.
pub(crate) fn in_node(e: Error, node: &Node) -> Error {
    if e.context().is_some() {
        return e;
    }
    let op = match forward_op(node.name) {
        Some(op) => format!("node {}, created by the forward op `{}`", node.name, op),
        None => format!("node {}", node.name),
    };
    let trace = match node.creation() {
        Some(c) => format!(
            ". Traceback of the forward call that created it:\n{}",
            c.trace
        ),
        None => {
            ". Run the forward under `autograd::detect_anomaly()` to record where it was created."
                .to_string()
        }
    };
    e.with_context(format!("raised in the backward of {op}{trace}"))
}

/// In anomaly mode: fails if a gradient `node` returned holds a NaN or an infinity.
pub(crate) fn check_outputs(node: &Node, grads: &[Option<Tensor>]) -> Result<()> {
    let _g = super::no_grad();
    for (i, g) in grads.iter().enumerate() {
        let Some(g) = g else { continue };
        if g.is_sparse() || !(g.dtype().is_float() || g.dtype().is_complex()) {
            continue;
        }
        let what = if g.isnan()?.any((), false)?.item::<bool>()? {
            "nan"
        } else if g.isinf()?.any((), false)?.item::<bool>()? {
            "inf"
        } else {
            continue;
        };
        let e = crate::err!(
            NonFiniteGradient,
            "backward",
            "Function '{}' returned {} values in its {}th output.",
            node.name,
            what,
            i
        );
        return Err(in_node(e, node));
    }
    Ok(())
}
