//! Pooling of integer inputs against PyTorch 2.15 (`grad_tests/fixtures/pool_ints/cases.json`,
//! recorded by `tools/record_pool_ints.py`): `max_pool2d` and the `_with_indices` forms take
//! every integer dtype but bool, `avg_pool1d`/`avg_pool2d` take i64 (a truncating division,
//! `count_include_pad`, negative `divisor_override`); plain `max_pool1d`, the adaptive pools
//! and `max_unpool2d` refuse integers with PyTorch's `"<op>" not implemented for '<T>'`.

use crate::common::R;
use serde_json::Value;
use tapegrad::{DType, ErrorKind, Tensor};

fn dtype(name: &str) -> DType {
    match name {
        "u8" => DType::U8,
        "i8" => DType::I8,
        "i16" => DType::I16,
        "i32" => DType::I32,
        "i64" => DType::I64,
        "bool" => DType::Bool,
        _ => panic!("dtype {name}"),
    }
}

fn usizes(v: &Value) -> Vec<usize> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect()
}

fn int(v: &Value) -> i64 {
    v.as_i64().unwrap()
}

/// Runs the case's op on `x` (values and, for the `_with_indices` forms, indices).
fn run(c: &Value, x: &Tensor) -> tapegrad::Result<(Tensor, Option<Tensor>)> {
    let b = |k: &str| c[k].as_bool().unwrap();
    Ok(match c["op"].as_str().unwrap() {
        "max_pool2d_with_indices" => {
            let args = (
                &usizes(&c["kernel_size"]),
                &usizes(&c["stride"]),
                &usizes(&c["padding"]),
                &usizes(&c["dilation"]),
            );
            let (y, i) =
                x.max_pool2d_with_indices(args.0, args.1, args.2, args.3, b("ceil_mode"))?;
            // the form without indices agrees
            let plain = x.max_pool2d(args.0, args.1, args.2, args.3, b("ceil_mode"))?;
            assert_eq!(
                plain.to_dtype(DType::I64)?.to_vec::<i64>()?,
                y.to_dtype(DType::I64)?.to_vec::<i64>()?
            );
            (y, Some(i))
        }
        "max_pool1d_with_indices" => {
            let (y, i) = x.max_pool1d_with_indices(
                int(&c["kernel_size"]),
                Some(int(&c["stride"])),
                int(&c["padding"]),
                int(&c["dilation"]),
                b("ceil_mode"),
            )?;
            (y, Some(i))
        }
        "max_pool1d" => (
            x.max_pool1d(
                int(&c["kernel_size"]),
                Some(int(&c["stride"])),
                int(&c["padding"]),
                int(&c["dilation"]),
                b("ceil_mode"),
            )?,
            None,
        ),
        "avg_pool2d" => (
            x.avg_pool2d(
                &usizes(&c["kernel_size"]),
                &usizes(&c["stride"]),
                &usizes(&c["padding"]),
                b("ceil_mode"),
                b("count_include_pad"),
                c["divisor_override"].as_i64(),
            )?,
            None,
        ),
        "avg_pool1d" => (
            x.avg_pool1d(
                int(&c["kernel_size"]),
                Some(int(&c["stride"])),
                int(&c["padding"]),
                b("ceil_mode"),
                b("count_include_pad"),
            )?,
            None,
        ),
        "adaptive_avg_pool2d" => (x.adaptive_avg_pool2d(&usizes(&c["output_size"]))?, None),
        "adaptive_avg_pool1d" => (x.adaptive_avg_pool1d(int(&c["output_size"]))?, None),
        "adaptive_max_pool2d" => (x.adaptive_max_pool2d(&usizes(&c["output_size"]))?, None),
        op => panic!("op {op}"),
    })
}

#[test]
fn integer_pooling_matches_torch() -> R {
    let path = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/grad_tests/fixtures/pool_ints/cases.json"
    );
    let text = std::fs::read_to_string(path).expect("grad_tests/fixtures/pool_ints/cases.json");
    let fx: Value = serde_json::from_str(&text).expect("pool_ints/cases.json is JSON");
    let cases = fx["cases"].as_array().unwrap();
    let (mut ran, mut refused) = (0, 0);
    for c in cases {
        let dt = dtype(c["dtype"].as_str().unwrap());
        let vals: Vec<i64> = c["input"]
            .as_array()
            .unwrap()
            .iter()
            .map(|v| v.as_i64().unwrap())
            .collect();
        let x = Tensor::from_vec(vals, &usizes(&c["shape"]))?.to_dtype(dt)?;
        let what = format!("{} {}", c["op"], c["dtype"]);
        match c.get("not_implemented") {
            Some(msg) => {
                let e = run(c, &x).expect_err(&what);
                assert_eq!(e.kind(), ErrorKind::DTypeMismatch, "{what}");
                // PyTorch's meaning: the op does not take this dtype (same scalar name)
                let torch = msg.as_str().unwrap();
                let name = format!("'{}'", torch.split('\'').nth(1).unwrap());
                assert!(e.to_string().contains(&name), "{what}: {e} vs {torch}");
                assert!(e.to_string().contains("not implemented for"), "{what}: {e}");
                refused += 1;
            }
            None => {
                let (y, i) = run(c, &x).expect(&what);
                assert_eq!(y.dtype(), dt, "{what}");
                assert_eq!(y.shape(), usizes(&c["out_shape"]), "{what}");
                let want: Vec<i64> = c["out"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|v| v.as_i64().unwrap())
                    .collect();
                assert_eq!(y.to_dtype(DType::I64)?.to_vec::<i64>()?, want, "{what}");
                if let Some(i) = i {
                    let want: Vec<i64> = c["indices"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|v| v.as_i64().unwrap())
                        .collect();
                    assert_eq!(i.to_vec::<i64>()?, want, "{what} indices");
                }
                ran += 1;
            }
        }
    }
    assert_eq!((ran, refused), (23, 67));
    Ok(())
}

#[test]
fn max_unpool2d_refuses_integers() -> R {
    let idx = Tensor::zeros(&[1, 1, 1, 1], DType::I64)?;
    for dt in [
        DType::U8,
        DType::I8,
        DType::I16,
        DType::I32,
        DType::I64,
        DType::Bool,
    ] {
        let x = Tensor::zeros(&[1, 1, 1, 1], dt)?;
        let e = x.max_unpool2d(&idx, &[2], None, &[0], None).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::DTypeMismatch, "{dt:?}");
        assert!(e.to_string().contains("not implemented for"), "{e}");
    }
    Ok(())
}
