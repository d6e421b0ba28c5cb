//! `clip_grad_norm_` / `clip_grad_value_` against PyTorch (grad_tests/fixtures/optim/clip_grad.json,
//! recorded by tools/record_clip_grad.py): total norms and clipped gradients for norm orders 2, 1,
//! inf, 3.5 and 0.5, no clipping, f32, a non-finite norm scaled anyway and refused. f64 values to
//! 1e-12 relative (the norms sum in another order), f32 to 4 ulps (PyTorch accumulates its f32
//! norm in f32, tapegrad in f64); NaN and infinities exactly.

use serde_json::Value;
use tapegrad::nn::{ClipGradNorm, clip_grad_norm_, clip_grad_value_};
use tapegrad::{DType, ErrorKind, Tensor};

/// A recorded float: Python's `repr` string ("inf" and "nan" included), parsed exactly.
fn num(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn same(ours: f64, want: f64, dt: DType, what: &str) {
    let tol = if dt == DType::F32 {
        4.0 * f32::EPSILON as f64
    } else {
        1e-12
    };
    let ok = if want.is_nan() {
        ours.is_nan()
    } else if want.is_infinite() {
        ours == want
    } else {
        (ours - want).abs() <= tol * want.abs().max(f64::MIN_POSITIVE)
    };
    assert!(ok, "{what}: {ours} vs PyTorch {want}");
}

#[test]
fn clipping_matches_pytorch() {
    let path = format!(
        "{}/grad_tests/fixtures/optim/clip_grad.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = f["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 10);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let dt = if c["dtype"] == "float32" {
            DType::F32
        } else {
            DType::F64
        };
        let params: Vec<Tensor> = c["shapes"]
            .as_array()
            .unwrap()
            .iter()
            .zip(c["before"].as_array().unwrap())
            .map(|(s, g)| {
                let shape: Vec<usize> = s
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|d| d.as_u64().unwrap() as usize)
                    .collect();
                let p = Tensor::zeros(&shape, dt)
                    .unwrap()
                    .requires_grad_(true)
                    .unwrap();
                let data: Vec<f64> = g.as_array().unwrap().iter().map(num).collect();
                let grad = Tensor::from_vec(data, &shape)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap();
                p.set_grad(Some(grad)).unwrap();
                p
            })
            .collect();
        let versions: Vec<u64> = params.iter().map(|p| p.grad().unwrap().version()).collect();
        let kw = &c["kwargs"];
        if c["kind"] == "value" {
            clip_grad_value_(&params, num(&kw["clip_value"])).unwrap();
        } else {
            let opts = ClipGradNorm {
                norm_type: kw.get("norm_type").map_or(2.0, num),
                error_if_nonfinite: kw.get("error_if_nonfinite").is_some_and(|b| b == true),
            };
            let r = clip_grad_norm_(&params, num(&kw["max_norm"]), opts);
            if c["error"] == true {
                assert_eq!(r.unwrap_err().kind(), ErrorKind::InvalidArgument, "{name}");
                for (p, v) in params.iter().zip(&versions) {
                    assert_eq!(
                        p.grad().unwrap().version(),
                        *v,
                        "{name}: refused, unchanged"
                    );
                }
            } else {
                let total = r.unwrap();
                assert_eq!((total.dtype(), total.dim()), (dt, 0), "{name}");
                let t = total.to_dtype(DType::F64).unwrap().item::<f64>().unwrap();
                same(t, num(&c["total_norm"]), dt, &format!("{name} total norm"));
                for (p, v) in params.iter().zip(&versions) {
                    assert!(
                        p.grad().unwrap().version() > *v,
                        "{name}: every grad is scaled"
                    );
                }
            }
        }
        for (i, (p, want)) in params
            .iter()
            .zip(c["after"].as_array().unwrap())
            .enumerate()
        {
            let ours = p
                .grad()
                .unwrap()
                .to_dtype(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap();
            let want: Vec<f64> = want.as_array().unwrap().iter().map(num).collect();
            assert_eq!(ours.len(), want.len());
            for (k, (a, b)) in ours.iter().zip(&want).enumerate() {
                same(*a, *b, dt, &format!("{name} grad {i}[{k}]"));
            }
        }
    }
}

#[test]
fn no_gradients_give_a_zero_norm() {
    let p = Tensor::zeros(&[3], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let t = clip_grad_norm_(std::slice::from_ref(&p), 1.0, ClipGradNorm::default()).unwrap();
    assert_eq!((t.dtype(), t.item::<f32>().unwrap()), (DType::F32, 0.0));
    assert!(p.grad().is_none());
    clip_grad_value_(std::slice::from_ref(&p), 1.0).unwrap();
    assert!(p.grad().is_none());
}
