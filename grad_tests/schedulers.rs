//! `LambdaLr` / `LinearLr` against PyTorch (grad_tests/fixtures/optim/schedulers.json, recorded by
//! tools/record_schedulers.py, floats as exact `repr` strings): every lr, from construction on,
//! equal as f64; and a state saved mid-run and loaded into a fresh scheduler continues the same
//! trajectory.

use serde_json::Value;
use tapegrad::checkpoint::StateDict;
use tapegrad::optim::*;
use tapegrad::{DType, ErrorKind, Tensor};

/// A recorded float: Python's `repr` string, parsed exactly.
fn num(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn lambda(name: &str) -> fn(u64) -> f64 {
    match name {
        "pow_0.95" => |e| 0.95f64.powf(e as f64),
        "inverse" => |e| 1.0 / (e as f64 + 1.0),
        _ => panic!("unknown lambda {name}"),
    }
}

fn build(c: &Value, opt: &mut Sgd) -> Box<dyn LrScheduler> {
    let kw = &c["kwargs"];
    match c["class"].as_str().unwrap() {
        "LinearLR" => Box::new(
            LinearLr::new(
                opt,
                num(&kw["start_factor"]),
                num(&kw["end_factor"]),
                kw["total_iters"].as_u64().unwrap(),
            )
            .unwrap(),
        ),
        "LambdaLR" => Box::new(LambdaLr::new(
            opt,
            lambda(kw["lr_lambda"].as_str().unwrap()),
        )),
        other => panic!("unknown scheduler {other}"),
    }
}

fn sgd(lr: f64) -> Sgd {
    let p = Tensor::zeros(&[1], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    Sgd::new(vec![p], SgdConfig::new(lr)).unwrap()
}

#[test]
fn trajectories_equal_pytorch_and_resume() {
    let path = format!(
        "{}/grad_tests/fixtures/optim/schedulers.json",
        env!("CARGO_MANIFEST_DIR")
    );
    let f: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let cases = f["cases"].as_array().unwrap();
    assert_eq!(cases.len(), 5);
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let want: Vec<f64> = c["lrs"].as_array().unwrap().iter().map(num).collect();
        let lr = num(&c["lr"]);
        let mut opt = sgd(lr);
        let mut s = build(c, &mut opt);
        let mut got = vec![opt.lr()];
        let mut saved = None;
        for k in 0..want.len() - 1 {
            opt.step().unwrap();
            s.step(&mut opt).unwrap();
            got.push(opt.lr());
            if k == 4 {
                saved = Some((s.state(), opt.lr()));
            }
        }
        assert_eq!(got, want, "{name}");
        // resume from epoch 5: through the checkpoint metadata, into a fresh scheduler
        let (st, lr5) = saved.unwrap();
        let mut sd = StateDict::new();
        st.insert_into(&mut sd);
        let back = SchedulerState::from_state_dict(&sd).unwrap();
        assert_eq!(back, st, "{name}");
        let mut opt2 = sgd(lr);
        let mut s2 = build(c, &mut opt2);
        s2.load_state(&back).unwrap();
        opt2.set_lr(lr5);
        for (k, w) in want.iter().enumerate().skip(6) {
            s2.step(&mut opt2).unwrap();
            assert_eq!(opt2.lr(), *w, "{name} resumed, epoch {k}");
        }
    }
}

#[test]
fn factor_schedulers_refuse_bad_arguments_and_states() {
    let mut opt = sgd(0.1);
    for (s, e) in [(0.0, 1.0), (1.5, 1.0), (0.5, -0.1), (0.5, 1.1)] {
        let err = LinearLr::new(&mut opt, s, e, 3).err().unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    }
    assert_eq!(opt.lr(), 0.1, "a refused scheduler leaves the lr alone");
    let mut lin = LinearLr::new(&mut opt, 0.5, 1.0, 3).unwrap();
    let lam_state = LambdaLr::new(&mut sgd(0.1), |_| 1.0).state();
    assert_eq!(lam_state.kind.name(), "LambdaLR");
    let before = lin.state();
    assert_eq!(
        lin.load_state(&lam_state).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    let mut bad = before.clone();
    bad.kind = SchedulerKind::LinearLr {
        start_factor: 2.0,
        end_factor: 1.0,
        total_iters: 3,
    };
    assert!(lin.load_state(&bad).is_err());
    assert_eq!(lin.state(), before, "refused loads change nothing");
}
