//! The one error type of tapegrad.
//!
//! Every fallible public operation returns [`Result<T>`]. An [`Error`] carries a matchable
//! [`ErrorKind`], the name of the op that failed and a message as informative as PyTorch's
//! (shapes, dtypes, versions). Panics are reserved for broken internal invariants.

use std::fmt;

/// What went wrong, as a matchable category (mirrors the kinds of PyTorch errors that the
/// conformance fixtures distinguish).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Shapes cannot be broadcast, sizes differ, numel mismatch, gradient shape mismatch.
    ShapeMismatch,
    /// A dimension argument is outside `[-ndim, ndim-1]`.
    DimOutOfRange,
    /// An index (int, tensor, narrow/select range, class target) is out of bounds.
    IndexOutOfRange,
    /// `view` is impossible with the tensor's strides (use `reshape`).
    ViewIncompatible,
    /// Dtypes do not fit together (in-place result cast, `set_` dtype, mixed `mm`, ...).
    DTypeMismatch,
    /// In-place on a leaf requiring grad (or a view of one) in grad mode.
    LeafInplace,
    /// A tensor saved for backward was modified in place.
    SavedTensorModified,
    /// Backward of a tensor that does not require grad.
    NoGradFn,
    /// Backward through a graph whose saved tensors were already freed.
    BackwardTwice,
    /// In-place on a view that autograd cannot rebase (multi-output, no_grad-created).
    ViewInplaceForbidden,
    /// `resize_` of a tensor that requires grad.
    ResizeRequiresGrad,
    /// The storage cannot grow.
    NotResizable,
    /// Any other invalid argument.
    InvalidArgument,
    /// Sparse indices or structure are invalid.
    SparseInvalid,
    /// The operation is not supported for these inputs (dtype, layout, device).
    Unsupported,
    /// A derivative that is not implemented (for example through `set_`).
    NotImplemented,
    /// A file could not be read or written (checkpoints).
    Io,
    /// A file's bytes are malformed: truncated, oversized or lying headers, a corrupt archive or
    /// pickle, a record that is missing (PyTorch checkpoints, NumPy files).
    Malformed,
    /// An activation checkpoint's recomputation saved different tensors than its forward
    /// (`autograd::checkpoint`).
    CheckpointMismatch,
    /// In anomaly mode, a backward node returned a gradient holding NaN or infinity
    /// (`autograd::detect_anomaly`).
    NonFiniteGradient,
}

/// A tapegrad error: a kind, the op that raised it and a human-readable message.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Error {
    kind: ErrorKind,
    op: &'static str,
    message: String,
    /// Where it was raised, when that is not the caller's own op (see [`Error::context`]).
    context: Option<Box<str>>,
}

impl Error {
    /// Creates an error of `kind` raised by `op`.
    pub fn new(kind: ErrorKind, op: &'static str, message: impl Into<String>) -> Self {
        Error {
            kind,
            op,
            message: message.into(),
            context: None,
        }
    }
    /// The matchable kind.
    pub fn kind(&self) -> ErrorKind {
        self.kind
    }
    /// The op that raised the error (for example `"view"`).
    pub fn op(&self) -> &'static str {
        self.op
    }
    /// The message without the op prefix.
    pub fn message(&self) -> &str {
        &self.message
    }
    /// Where the error was raised when the failing op ran on behalf of another call: for an
    /// error in a backward pass, the graph node and the forward op that created it (with the
    /// backtrace of that forward call when it ran under `autograd::detect_anomaly`). Shown by
    /// `Display` after the message.
    pub fn context(&self) -> Option<&str> {
        self.context.as_deref()
    }
    /// Sets [`Error::context`].
    pub(crate) fn with_context(mut self, context: String) -> Self {
        self.context = Some(context.into_boxed_str());
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.op, self.message)?;
        match &self.context {
            Some(c) => write!(f, "\n{c}"),
            None => Ok(()),
        }
    }
}

impl std::error::Error for Error {}

/// Result alias used by every fallible tapegrad operation.
pub type Result<T> = std::result::Result<T, Error>;

/// Returns early with an [`Error`] of the given kind: `bail!(ShapeMismatch, "view", "...{}", x)`.
#[macro_export]
#[doc(hidden)]
macro_rules! bail {
    ($kind:ident, $op:expr, $($fmt:tt)+) => {
        return Err($crate::Error::new($crate::ErrorKind::$kind, $op, format!($($fmt)+)))
    };
}

/// Builds an [`Error`] of the given kind without returning.
#[macro_export]
#[doc(hidden)]
macro_rules! err {
    ($kind:ident, $op:expr, $($fmt:tt)+) => {
        $crate::Error::new($crate::ErrorKind::$kind, $op, format!($($fmt)+))
    };
}
