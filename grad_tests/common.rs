//! Helpers shared by the integration-test modules: the test result type, tensor builders and
//! the comparison helpers. Each comparison keeps the exact formula of the copy it replaced, so
//! every call site asserts what it asserted before (no tolerance was loosened in the merge).

use proptest::test_runner::{Config as ProptestConfig, FileFailurePersistence};
use tapegrad::{DType, Tensor};

/// What a fallible test returns.
pub type R = tapegrad::Result<()>;

/// A contiguous f64 tensor of `shape` holding `v`.
pub fn t64(v: &[f64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

/// A contiguous i64 tensor of `shape` holding `v`.
pub fn i64t(v: &[i64], shape: &[usize]) -> Tensor {
    Tensor::from_slice(v, shape).unwrap()
}

/// An f64 leaf requiring grad, holding `v`.
pub fn leaf64(v: &[f64], shape: &[usize]) -> Tensor {
    t64(v, shape).requires_grad_(true).unwrap()
}

/// A standard-normal f64 leaf requiring grad (drawn from the global generator; no test relies
/// on its values).
pub fn rg(shape: &[usize]) -> Tensor {
    Tensor::randn(shape, DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// A tensor's values as f64 (any real dtype).
pub fn f64s(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

/// `a` equals `b` (NaN equals NaN) or lies within `tol · (1 + |b|)` of it.
pub fn close_rel(a: f64, b: f64, tol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= tol * (1.0 + b.abs())
}

/// `a` equals `b` (NaN equals NaN) or lies within `atol + rtol · |b|` of it.
pub fn close_abs_rel(a: f64, b: f64, atol: f64, rtol: f64) -> bool {
    (a.is_nan() && b.is_nan()) || a == b || (a - b).abs() <= atol + rtol * b.abs()
}

/// Asserts equal lengths and `|x - y| <= tol · (1 + |y|)` elementwise; a NaN anywhere fails.
pub fn assert_close(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!((x - y).abs() <= tol * (1.0 + y.abs()), "{x} vs {y}");
    }
}

/// Asserts equal lengths and `|x - y| < tol` elementwise, NaN matching NaN only.
pub fn assert_close_abs(a: &[f64], b: &[f64], tol: f64) {
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(b) {
        assert!(
            (x - y).abs() < tol || (x.is_nan() && y.is_nan()),
            "{a:?} vs {b:?}"
        );
    }
}

/// Proptest settings with `cases` cases. Failures persist next to the test's source file
/// (`grad_tests/<module>.proptest-regressions`, checked in and replayed first), wherever the
/// crate root is.
pub fn proptest_config(cases: u32) -> ProptestConfig {
    ProptestConfig {
        failure_persistence: Some(Box::new(FileFailurePersistence::WithSource(
            "proptest-regressions",
        ))),
        ..ProptestConfig::with_cases(cases)
    }
}
