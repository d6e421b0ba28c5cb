//! Second half of the layout conformance tests: the losses on every layout and the error paths
//! (a failing op leaves every tensor's values and version unchanged). Shares the helpers of
//! `layouts.rs`.

use super::*;
use tapegrad::Reduction;
use tapegrad::autograd::no_grad;

/// A failing call: its name, the error kind it must raise and the call.
type ErrRow<'a> = (
    &'static str,
    ErrorKind,
    Box<dyn Fn() -> tapegrad::Result<Tensor> + 'a>,
);

#[test]
fn loss_functions_on_all_layouts() -> R {
    let probs: Vec<f64> = values(10, true).iter().map(|v| v / 3.0).collect();
    let tgt = Tensor::from_vec(
        values(11, true)
            .iter()
            .map(|v| (v / 3.0).min(1.0))
            .collect::<Vec<_>>(),
        &[ROWS, COLS],
    )?;
    let cls = Tensor::from_vec(vec![3i64, 0, 2], &[ROWS])?;
    let table: Vec<OpRow<'_>> = vec![
        (
            "bce",
            Box::new({
                let t = tgt.clone();
                move |x| x.binary_cross_entropy(&t, None, Reduction::Mean)
            }),
        ),
        (
            "bce_target",
            Box::new({
                let t = tgt.clone();
                move |x| t.binary_cross_entropy(x, None, Reduction::None)
            }),
        ),
        (
            "mse",
            Box::new({
                let t = tgt.clone();
                move |x| x.mse_loss(&t, Reduction::Sum)
            }),
        ),
        (
            "cross_entropy",
            Box::new({
                let c = cls.clone();
                move |x| x.cross_entropy(&c, Default::default())
            }),
        ),
        (
            "nll",
            Box::new({
                let c = cls.clone();
                move |x| x.log_softmax(1)?.nll_loss(&c, Default::default())
            }),
        ),
    ];
    for (name, f) in &table {
        check_layouts(name, &probs, &**f)?;
    }
    Ok(())
}

// ------------------------------------------------------------------ error paths

/// State of every tensor an op may touch: values (when readable) and version.
fn snapshot(ts: &[&Tensor]) -> Vec<(Vec<f64>, u64)> {
    ts.iter()
        .map(|t| {
            (
                t.to_dtype(DType::F64)
                    .and_then(|t| t.to_vec::<f64>())
                    .unwrap_or_default(),
                t.version(),
            )
        })
        .collect()
}

/// `overlap_ok`: an in-place write into an expanded (self-overlapping) tensor may instead be
/// refused for the overlap (`InvalidArgument`).
fn expect_unchanged(
    what: &str,
    kind: ErrorKind,
    overlap_ok: bool,
    r: tapegrad::Result<Tensor>,
    ts: &[&Tensor],
    before: Vec<(Vec<f64>, u64)>,
) {
    match r {
        Ok(_) => panic!("{what}: expected {kind:?}, got success"),
        Err(e) if overlap_ok && e.kind() == ErrorKind::InvalidArgument => {}
        Err(e) => assert_eq!(e.kind(), kind, "{what}: {e}"),
    }
    let after = snapshot(ts);
    for (i, (a, b)) in after.iter().zip(&before).enumerate() {
        assert_eq!(a.1, b.1, "{what}: version of tensor {i} changed");
        assert_eq!(a.0.len(), b.0.len());
        for (x, y) in a.0.iter().zip(&b.0) {
            assert!(close_rel(*x, *y, 1e-9), "{what}: tensor {i} changed");
        }
    }
}

#[test]
fn errors_leave_every_tensor_unchanged() -> R {
    for (lname, x, leaf) in layouts(&values(12, false), false)? {
        let i64s = Tensor::from_vec(vec![1i64, 2, 3, 4], &[4])?;
        let bad_idx = Tensor::from_vec(vec![0i64, 1, 2, 0, 1, 1, 2, 3, 0, 0, 9, 0], &[3, 4])?;
        let src = Tensor::ones(&[3, 4], DType::F64)?;
        let ts = [&x, &leaf, &i64s, &src];
        let cases: Vec<ErrRow<'_>> = vec![
            (
                "add_ broadcast",
                ErrorKind::ShapeMismatch,
                Box::new(|| x.add_(&Tensor::ones(&[2, 4], DType::F64)?)),
            ),
            (
                "mul_ int by float",
                ErrorKind::DTypeMismatch,
                Box::new(|| i64s.mul_(0.5)),
            ),
            (
                "clamp_ int by float",
                ErrorKind::DTypeMismatch,
                Box::new(|| i64s.clamp_(Some(Scalar::from(0.5)), None)),
            ),
            (
                "masked_fill_ int mask",
                ErrorKind::DTypeMismatch,
                Box::new(|| x.masked_fill_(&Tensor::zeros(&[3, 4], DType::I64)?, 1.0)),
            ),
            // the last index is out of range: nothing may be written before the check
            (
                "scatter_ bad index",
                ErrorKind::IndexOutOfRange,
                Box::new(|| x.scatter_(1, &bad_idx, &src)),
            ),
            (
                "scatter_add_ bad index",
                ErrorKind::IndexOutOfRange,
                Box::new(|| x.scatter_add_(1, &bad_idx, &src)),
            ),
            (
                "scatter_reduce_ bad index",
                ErrorKind::IndexOutOfRange,
                Box::new(|| {
                    x.scatter_reduce_(1, &bad_idx, &src, ScatterReduce::Sum, IncludeSelf::Yes)
                }),
            ),
            (
                "scatter_reduce_ dtype",
                ErrorKind::DTypeMismatch,
                Box::new(|| {
                    x.scatter_reduce_(
                        1,
                        &bad_idx,
                        &src.to_dtype(DType::F32)?,
                        ScatterReduce::Sum,
                        IncludeSelf::Yes,
                    )
                }),
            ),
            (
                "copy_ shape",
                ErrorKind::ShapeMismatch,
                Box::new(|| x.copy_(&Tensor::ones(&[5], DType::F64)?)),
            ),
            (
                "div floor int by zero",
                ErrorKind::InvalidArgument,
                Box::new(|| i64s.div_rounding(0, RoundingMode::Floor)),
            ),
            (
                "remainder_ by zero",
                ErrorKind::InvalidArgument,
                Box::new(|| i64s.remainder_(0)),
            ),
            (
                "sum dim",
                ErrorKind::DimOutOfRange,
                Box::new(|| x.sum_dims(&[2], false)),
            ),
            (
                "softmax dim",
                ErrorKind::DimOutOfRange,
                Box::new(|| x.softmax(-3)),
            ),
            (
                "sort dim",
                ErrorKind::DimOutOfRange,
                Box::new(|| Ok(x.sort(2, false, Stability::Any)?.0)),
            ),
            (
                "topk k",
                ErrorKind::IndexOutOfRange,
                Box::new(|| Ok(x.topk(5, 1, true, true)?.0)),
            ),
            (
                "masked_select mask dtype",
                ErrorKind::DTypeMismatch,
                Box::new(|| x.masked_select(&i64s)),
            ),
            (
                "masked_select mask shape",
                ErrorKind::ShapeMismatch,
                Box::new(|| x.masked_select(&Tensor::ones(&[3], DType::Bool)?)),
            ),
            (
                "bce out of range",
                ErrorKind::InvalidArgument,
                Box::new(|| x.binary_cross_entropy(&src, None, Reduction::Mean)),
            ),
            (
                "bce shape",
                ErrorKind::ShapeMismatch,
                Box::new(|| x.binary_cross_entropy(&i64s, None, Reduction::Mean)),
            ),
            (
                "matmul inner",
                ErrorKind::ShapeMismatch,
                Box::new(|| x.matmul(&x)),
            ),
            (
                "linear dtype",
                ErrorKind::DTypeMismatch,
                Box::new(|| Tensor::linear(&x, &src.to_dtype(DType::F32)?, None)),
            ),
            (
                "gather index",
                ErrorKind::IndexOutOfRange,
                Box::new(|| x.gather(1, &bad_idx)),
            ),
            (
                "cat sizes",
                ErrorKind::ShapeMismatch,
                Box::new(|| Tensor::cat(&[&x, &Tensor::ones(&[2, 5], DType::F64)?], 0)),
            ),
        ];
        for (name, kind, op) in cases {
            let before = snapshot(&ts);
            let r = {
                let _g = no_grad();
                op()
            };
            let overlap_ok = lname == "expanded" && name.contains("_ ");
            expect_unchanged(
                &format!("{name} on {lname}"),
                kind,
                overlap_ok,
                r,
                &ts,
                before,
            );
        }
    }
    Ok(())
}
