//! Tensor ops, one family per file. Each file holds the forward functions (shape/dtype checks,
//! then a backend kernel) and, beside them, the backward structs that save only what their
//! formula reads. In-place ops follow one protocol: `check_inplace` → overlap checks → kernel →
//! version bump → record.

pub(crate) mod binary;
pub(crate) mod copy;
pub(crate) mod geometry;
pub(crate) mod reduce;
pub(crate) mod util;
pub(crate) mod gather;
pub(crate) mod shape;
pub mod nn;
