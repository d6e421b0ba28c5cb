//! Optimizer trajectories against PyTorch recordings (grad_tests/fixtures/optim): 20 steps in
//! f64, parameters and state to 1e-6 (the gradients are recomputed here from the same loss).

use serde_json::Value;
use tapegrad::Tensor;
use tapegrad::optim::*;

fn tensor(v: &Value) -> Tensor {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    let data: Vec<f64> = v["data"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect();
    Tensor::from_vec(data, &shape).unwrap()
}

fn close(a: &Tensor, b: &Value, what: &str) {
    let (x, y) = (
        a.to_vec::<f64>().unwrap(),
        tensor(b).to_vec::<f64>().unwrap(),
    );
    assert_eq!(x.len(), y.len(), "{what}");
    for (p, q) in x.iter().zip(&y) {
        assert!(
            (p - q).abs() <= 1e-6 * (1.0 + q.abs()),
            "{what}: {x:?} vs {y:?}"
        );
    }
}

fn run(name: &str) {
    let path = format!(
        "{}/grad_tests/fixtures/optim/{name}.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let c = &f["constants"];
    let (c1, c2, c3) = (
        tensor(&c["c1"]).to_vec::<f64>().unwrap(),
        tensor(&c["c2"]).to_vec::<f64>().unwrap(),
        tensor(&c["c3"]).to_vec::<f64>().unwrap(),
    );
    let p1 = tensor(&f["initial_params"]["p1"])
        .requires_grad_(true)
        .unwrap();
    let p2 = tensor(&f["initial_params"]["p2"])
        .requires_grad_(true)
        .unwrap();
    let h = &f["optimizer"]["hparams"];
    let class = f["optimizer"]["class"].as_str().unwrap();
    let params = vec![p1.clone(), p2.clone()];
    let mut opt: Box<dyn Optimizer> = match class {
        "SGD" => Box::new(
            Sgd::new(
                params,
                SgdConfig {
                    lr: h["lr"].as_f64().unwrap(),
                    momentum: h["momentum"].as_f64().unwrap(),
                    dampening: h["dampening"].as_f64().unwrap(),
                    weight_decay: h["weight_decay"].as_f64().unwrap(),
                    nesterov: h["nesterov"].as_bool().unwrap(),
                    maximize: false,
                },
            )
            .unwrap(),
        ),
        _ => {
            let cfg = AdamConfig {
                lr: h["lr"].as_f64().unwrap(),
                betas: (
                    h["betas"][0].as_f64().unwrap(),
                    h["betas"][1].as_f64().unwrap(),
                ),
                eps: h["eps"].as_f64().unwrap(),
                weight_decay: h["weight_decay"].as_f64().unwrap(),
                amsgrad: h["amsgrad"].as_bool().unwrap(),
                decoupled: h["decoupled_weight_decay"]
                    .as_bool()
                    .unwrap_or(class == "AdamW"),
                maximize: false,
            };
            if class == "AdamW" {
                // the `AdamW` type (which forces decoupled decay)
                Box::new(
                    AdamW::new(
                        params,
                        AdamConfig {
                            decoupled: false,
                            ..cfg
                        },
                    )
                    .unwrap(),
                )
            } else {
                Box::new(Adam::new(params, cfg).unwrap())
            }
        }
    };
    let mut sched: Option<Box<dyn LrScheduler>> = match f["scheduler"]["class"].as_str() {
        Some("StepLR") => {
            let k = &f["scheduler"]["kwargs"];
            Some(Box::new(StepLr::new(
                k["step_size"].as_u64().unwrap(),
                k["gamma"].as_f64().unwrap(),
            )))
        }
        Some("CosineAnnealingLR") => {
            let k = &f["scheduler"]["kwargs"];
            Some(Box::new(CosineAnnealingLr::new(
                opt.as_mut(),
                k["T_max"].as_u64().unwrap(),
                k["eta_min"].as_f64().unwrap(),
            )))
        }
        _ => None,
    };
    for step in f["steps"].as_array().unwrap() {
        let lr = step["lr"].as_f64().unwrap();
        assert!(
            (opt.lr() - lr).abs() <= 1e-12 * (1.0 + lr),
            "{name}: lr {} vs {}",
            opt.lr(),
            lr
        );
        opt.zero_grad().unwrap();
        let v1 = p1.to_vec::<f64>().unwrap();
        let v2 = p2.to_vec::<f64>().unwrap();
        let g1: Vec<f64> = v1.iter().zip(&c1).map(|(p, c)| p.cos() * c).collect();
        let g2: Vec<f64> = v2
            .iter()
            .zip(&c2)
            .zip(&c3)
            .map(|((p, c), d)| 2.0 * (p - c) * d)
            .collect();
        p1.set_grad(Some(Tensor::from_vec(g1, &[3, 2]).unwrap()))
            .unwrap();
        p2.set_grad(Some(Tensor::from_vec(g2, &[4]).unwrap()))
            .unwrap();
        close(&p1.grad().unwrap(), &step["grads"]["p1"], "grad p1");
        let before = p1.version();
        opt.step().unwrap();
        assert_eq!(p1.version(), before + 1, "step bumps the parameter version");
        close(&p1, &step["params_after"]["p1"], name);
        close(&p2, &step["params_after"]["p2"], name);
        if let Some(s) = sched.as_mut() {
            s.step(opt.as_mut()).unwrap();
        }
    }
}

#[test]
fn sgd_plain() {
    run("sgd_plain");
}
#[test]
fn sgd_momentum_dampening_wd() {
    run("sgd_momentum_dampening_wd");
}
#[test]
fn sgd_nesterov_wd() {
    run("sgd_nesterov_wd");
}
#[test]
fn adam() {
    run("adam");
}
#[test]
fn adam_amsgrad_wd() {
    run("adam_amsgrad_wd");
}
#[test]
fn adamw() {
    run("adamw");
}
#[test]
fn adamw_amsgrad() {
    run("adamw_amsgrad");
}
#[test]
fn sgd_steplr() {
    run("sgd_steplr");
}
#[test]
fn sgd_cosine() {
    run("sgd_cosine");
}

#[test]
fn stale_activation_after_step_errors() {
    let w = Tensor::from_vec(vec![1.0f64, 2.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let y = w.mul(&w).unwrap().sum().unwrap();
    let y2 = w.mul(&w).unwrap().sum().unwrap();
    y.backward().unwrap();
    let mut opt = Sgd::new(vec![w.clone()], SgdConfig::new(0.1)).unwrap();
    opt.step().unwrap();
    let e = y2.backward().unwrap_err();
    assert_eq!(e.kind(), tapegrad::ErrorKind::SavedTensorModified);
}

#[test]
fn adamw_type_tags_and_loads_only_adamw_states() {
    let p = Tensor::from_vec(vec![1.0f64, -2.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let adam = Adam::new(vec![p.clone()], AdamConfig::adam(0.1)).unwrap();
    let mut w = AdamW::new(vec![p.clone()], AdamConfig::adamw(0.1)).unwrap();
    let e = w.load_state_dict(&adam.state_dict().unwrap()).unwrap_err();
    assert_eq!(e.kind(), tapegrad::ErrorKind::InvalidArgument);
    p.mul(&p).unwrap().sum().unwrap().backward().unwrap();
    w.step().unwrap();
    let sd = w.state_dict().unwrap();
    assert_eq!(sd.metadata("optimizer"), Some("AdamW"));
    let mut w2 = AdamW::new(vec![p.clone()], AdamConfig::adamw(0.5)).unwrap();
    w2.load_state_dict(&sd).unwrap();
    assert_eq!((w2.lr(), w2.state(0).unwrap().0), (0.1, 1));
}
