//! The normalization and pooling layers against PyTorch 2.15 as a model: a `Sequential` of
//! BatchNorm2d, ReLU, MaxPool2d, GroupNorm, AvgPool2d, AdaptiveAvgPool2d, Flatten, Linear,
//! BatchNorm1d (momentum None) and Linear, recorded by `tools/record_cnn_state.py`
//! (`grad_tests/fixtures/cnn_state/`): its PyTorch state_dict (running statistics and batch
//! counters after two training passes) loads from safetensors under PyTorch's keys and gives
//! PyTorch's eval outputs; three SGD training steps give PyTorch's losses, running statistics
//! and batch counters.

use crate::common::{R, f64s};
use serde_json::Value;
use tapegrad::nn::{
    self, AdaptiveAvgPool2d, AvgPool2d, BatchNorm1d, BatchNorm2d, Flatten, Forward, GroupNorm,
    Linear, MaxPool2d, Module, Relu, Sequential,
};
use tapegrad::optim::{Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, Tensor};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grad_tests/fixtures/cnn_state");

fn model() -> tapegrad::Result<Sequential> {
    let f = DType::F64;
    Ok(Sequential::new()
        .push(BatchNorm2d::new(3, 1e-5, Some(0.1), true, true, f)?)
        .push(Relu)
        .push(MaxPool2d::new(&[2], None, &[0], &[1], false))
        .push(GroupNorm::new(1, 3, 1e-5, true, f)?)
        .push(AvgPool2d::new(3, 1, 1, false, false, None))
        .push(AdaptiveAvgPool2d::new(&[2, 2]))
        .push(Flatten::new(1, -1))
        .push(Linear::new(12, 6, true, f)?)
        .push(BatchNorm1d::new(6, 1e-5, None, true, true, f)?)
        .push(Linear::new(6, 4, true, f)?))
}

fn expected() -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn assert_near(got: &[f64], want: &[f64], tol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (g, w)) in got.iter().zip(want).enumerate() {
        assert!((g - w).abs() <= tol * (1.0 + w.abs()), "[{i}] {g} vs {w}");
    }
}

#[test]
fn pytorch_state_dict_loads_and_training_matches_running_stats() -> R {
    let e = expected();
    let mut m = model()?;
    let keys: Vec<String> = m
        .state_dict()?
        .names()
        .iter()
        .map(|k| k.to_string())
        .collect();
    let want: Vec<String> = e["state_dict_keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, want);
    assert_eq!(m.to_string(), e["repr"].as_str().unwrap());
    nn::load_into(format!("{DIR}/model.safetensors"), &m)?;

    let x = Tensor::from_vec(floats(&e["x"]), &[4, 3, 8, 8])?;
    m.eval();
    let y = {
        let _g = tapegrad::autograd::no_grad();
        m.forward(&x)?
    };
    assert_near(&f64s(&y), &floats(&e["y_eval"]), 1e-12);

    m.train(true);
    let mut opt = Sgd::new(m.parameters(), SgdConfig::new(0.1))?;
    let mut losses = Vec::new();
    for step in 0..3 {
        opt.zero_grad()?;
        let loss = m
            .forward(&x.mul((1 + step) as f64)?)?
            .pow(2.0)?
            .mean((), false, None)?;
        loss.backward()?;
        opt.step()?;
        losses.push(loss.item::<f64>()?);
    }
    assert_near(&losses, &floats(&e["losses"]), 1e-12);
    for (name, t) in m.named_buffers() {
        assert_near(&f64s(&t), &floats(&e["buffers"][name.as_str()]), 1e-12);
    }
    let w: Vec<f64> = f64s(
        &m.named_parameters()
            .into_iter()
            .find(|(k, _)| k == "7.weight")
            .unwrap()
            .1,
    );
    assert_near(&w, &floats(&e["weight_after"]), 1e-12);
    Ok(())
}
