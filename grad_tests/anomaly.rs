//! Anomaly mode (`autograd::detect_anomaly`, `set_detect_anomaly`): the node returning a NaN or
//! infinite gradient is reported with a matchable kind and PyTorch's message, with the forward
//! backtrace; every backward error names its node and forward op (with the trace in anomaly
//! mode); off, NaN gradients pass as in PyTorch. The mode is process-wide, so these tests run
//! in `seeded` holding `serial` (no other test's backward sees it on).

use crate::common::{R, leaf64};
use tapegrad::ErrorKind;
use tapegrad::autograd::{detect_anomaly, is_anomaly_enabled, set_detect_anomaly};

#[test]
fn a_nan_gradient_names_its_node_and_forward_trace() -> R {
    let _serial = crate::serial();
    let e = {
        let _anomaly = detect_anomaly();
        assert!(is_anomaly_enabled());
        let x = leaf64(&[0.0, 4.0], &[2]);
        // d sqrt(x)/dx at 0 is inf; times the zero gradient of `* 0`: nan
        let y = x.sqrt()?.mul(0.0)?;
        let e = y.sum()?.backward().unwrap_err();
        assert!(x.grad().is_none());
        e
    };
    assert!(!is_anomaly_enabled(), "the guard restores the mode");
    assert_eq!(e.kind(), ErrorKind::NonFiniteGradient);
    assert_eq!(
        e.message(),
        "Function 'SqrtBackward0' returned nan values in its 0th output."
    );
    let ctx = e.context().unwrap();
    assert!(
        ctx.starts_with("raised in the backward of node SqrtBackward0, created by the forward op `sqrt`. Traceback of the forward call that created it:\n"),
        "{ctx}"
    );
    assert!(e.to_string().contains(ctx));
    // off: the same graph gives a nan gradient, no error (PyTorch's default)
    let x = leaf64(&[0.0, 4.0], &[2]);
    x.sqrt()?.mul(0.0)?.sum()?.backward()?;
    let g = x.grad().unwrap().to_vec::<f64>()?;
    assert!(g[0].is_nan() && g[1] == 0.0);
    Ok(())
}

#[test]
fn an_infinite_gradient_is_reported_and_the_global_switch_works() -> R {
    let _serial = crate::serial();
    set_detect_anomaly(true);
    let x = leaf64(&[0.0, 1.0], &[2]);
    let e = x.log()?.sum()?.backward().unwrap_err();
    set_detect_anomaly(false);
    assert_eq!(e.kind(), ErrorKind::NonFiniteGradient);
    assert_eq!(
        e.message(),
        "Function 'LogBackward0' returned inf values in its 0th output."
    );
    // nodes recorded before the switch have no trace; the check still runs
    let x = leaf64(&[0.0, 1.0], &[2]);
    let y = x.log()?.sum()?;
    let e = {
        let _a = detect_anomaly();
        y.backward().unwrap_err()
    };
    assert_eq!(e.kind(), ErrorKind::NonFiniteGradient);
    assert!(e.context().unwrap().ends_with(
        "Run the forward under `autograd::detect_anomaly()` to record where it was created."
    ));
    Ok(())
}

#[test]
fn backward_errors_name_the_forward_op_with_the_trace_in_anomaly_mode() -> R {
    let _serial = crate::serial();
    let fail = || -> tapegrad::Error {
        let x = leaf64(&[1.0, 2.0], &[2]);
        let a = x.mul(2.0).unwrap();
        let y = a.sin().unwrap();
        a.add_(1.0).unwrap();
        y.sum().unwrap().backward().unwrap_err()
    };
    let off = fail();
    assert_eq!(off.kind(), ErrorKind::SavedTensorModified);
    assert_eq!(
        off.context().unwrap(),
        "raised in the backward of node SinBackward0, created by the forward op `sin`. Run the forward under `autograd::detect_anomaly()` to record where it was created."
    );
    let on = {
        let _a = detect_anomaly();
        fail()
    };
    assert_eq!(on.message(), off.message(), "the message stays PyTorch's");
    assert!(on.context().unwrap().starts_with(
        "raised in the backward of node SinBackward0, created by the forward op `sin`. Traceback of the forward call that created it:\n"
    ));
    Ok(())
}
