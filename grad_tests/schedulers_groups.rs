//! Every scheduler over two parameter groups against PyTorch (`group_cases` of
//! fixtures/optim/schedulers.json, recorded by tools/record_schedulers.py, floats as exact
//! `repr` strings): OneCycleLr (lrs and momenta), ReduceLrOnPlateau (on the recorded metrics),
//! SequentialLr, StepLr, CosineAnnealingLr, LinearLr, LambdaLr, every value equal as f64;
//! each run is also checkpointed halfway (optimizer and scheduler to a file, loaded into fresh
//! ones) and must continue identically; and PyTorch's error messages (`errors`).

use serde_json::Value;
use tapegrad::checkpoint::StateDict;
use tapegrad::optim::*;
use tapegrad::{DType, Result, Tensor};

fn fixture() -> Value {
    let path = format!(
        "{}/grad_tests/fixtures/optim/schedulers.json",
        env!("CARGO_MANIFEST_DIR")
    );
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn num(v: &Value) -> f64 {
    v.as_str().unwrap().parse().unwrap()
}

fn nums(v: &Value) -> Vec<f64> {
    v.as_array().unwrap().iter().map(num).collect()
}

/// One value or a list of them (PyTorch's float-or-list keywords).
fn one_or_list(v: &Value) -> Vec<f64> {
    match v {
        Value::Array(_) => nums(v),
        v => vec![num(v)],
    }
}

fn lambda(name: &str) -> fn(u64) -> f64 {
    match name {
        "pow_0.95" => |e| 0.95f64.powf(e as f64),
        "inverse" => |e| 1.0 / (e as f64 + 1.0),
        _ => panic!("unknown lambda {name}"),
    }
}

fn optimizer(c: &Value) -> Box<dyn Optimizer> {
    let mut groups = Vec::new();
    for g in c["groups"].as_array().unwrap() {
        let p = Tensor::zeros(&[1], DType::F64)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let mut pg = ParamGroup::new(vec![p]).lr(num(&g["lr"]));
        if let Some(b) = g.get("betas") {
            pg = pg.betas((num(&b[0]), num(&b[1])));
        }
        groups.push(pg);
    }
    let d = &c["defaults"];
    match c["optimizer"].as_str().unwrap() {
        "SGD" => {
            let mut cfg = SgdConfig::new(0.5);
            if let Some(m) = d.get("momentum") {
                cfg = cfg.momentum(num(m));
            }
            Box::new(Sgd::with_groups(cfg, groups).unwrap())
        }
        _ => Box::new(Adam::with_groups(AdamConfig::adam(0.5), groups).unwrap()),
    }
}

enum Sched {
    Plain(Box<dyn LrScheduler>),
    Plateau(ReduceLrOnPlateau),
}

impl Sched {
    fn as_dyn(&mut self) -> &mut dyn LrScheduler {
        match self {
            Sched::Plain(s) => s.as_mut(),
            Sched::Plateau(s) => s,
        }
    }
}

fn plain(opt: &mut dyn Optimizer, class: &str, kw: &Value) -> Box<dyn LrScheduler + Send> {
    match class {
        "StepLR" => Box::new(StepLr::new(
            kw["step_size"].as_u64().unwrap(),
            kw.get("gamma").map(num).unwrap_or(0.1),
        )),
        "CosineAnnealingLR" => Box::new(CosineAnnealingLr::new(
            opt,
            kw["T_max"].as_u64().unwrap(),
            num(&kw["eta_min"]),
        )),
        "LinearLR" => Box::new(
            LinearLr::new(
                opt,
                num(&kw["start_factor"]),
                num(&kw["end_factor"]),
                kw["total_iters"].as_u64().unwrap(),
            )
            .unwrap(),
        ),
        "LambdaLR" => match &kw["lr_lambda"] {
            Value::Array(names) => {
                let fs = names
                    .iter()
                    .map(|n| Box::new(lambda(n.as_str().unwrap())) as LrLambda)
                    .collect();
                Box::new(LambdaLr::per_group(opt, fs).unwrap())
            }
            n => Box::new(LambdaLr::new(opt, lambda(n.as_str().unwrap()))),
        },
        "OneCycleLR" => {
            let max_lrs = one_or_list(&kw["max_lr"]);
            let mut cfg = OneCycleConfig::new(max_lrs[0], 1);
            cfg.max_lrs = max_lrs;
            cfg.total_steps = kw.get("total_steps").map(|v| v.as_u64().unwrap());
            cfg.epochs = kw.get("epochs").map(|v| v.as_u64().unwrap());
            cfg.steps_per_epoch = kw.get("steps_per_epoch").map(|v| v.as_u64().unwrap());
            if let Some(v) = kw.get("pct_start") {
                cfg.pct_start = num(v);
            }
            if let Some(v) = kw.get("anneal_strategy") {
                cfg.anneal = match v.as_str().unwrap() {
                    "linear" => Anneal::Linear,
                    _ => Anneal::Cos,
                };
            }
            if let Some(v) = kw.get("div_factor") {
                cfg.div_factor = num(v);
            }
            if let Some(v) = kw.get("final_div_factor") {
                cfg.final_div_factor = num(v);
            }
            if let Some(v) = kw.get("three_phase") {
                cfg.three_phase = v.as_bool().unwrap();
            }
            if let Some(v) = kw.get("cycle_momentum") {
                cfg.cycle_momentum = v.as_bool().unwrap();
            }
            if let Some(v) = kw.get("base_momentum") {
                cfg.base_momentums = one_or_list(v);
            }
            if let Some(v) = kw.get("max_momentum") {
                cfg.max_momentums = one_or_list(v);
            }
            Box::new(OneCycleLr::new(opt, cfg).unwrap())
        }
        "SequentialLR" => {
            let subs: Vec<Box<dyn LrScheduler + Send>> = kw["schedulers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|s| plain(opt, s[0].as_str().unwrap(), &s[1]))
                .collect();
            let milestones = kw["milestones"]
                .as_array()
                .unwrap()
                .iter()
                .map(|m| m.as_u64().unwrap())
                .collect();
            Box::new(SequentialLr::new(opt, subs, milestones).unwrap())
        }
        other => panic!("unknown scheduler {other}"),
    }
}

fn build(opt: &mut dyn Optimizer, c: &Value) -> Sched {
    let kw = &c["kwargs"];
    match c["class"].as_str().unwrap() {
        "ReduceLROnPlateau" => {
            let mut cfg = PlateauConfig::new();
            if let Some(v) = kw.get("mode") {
                cfg.mode = if v == "max" {
                    PlateauMode::Max
                } else {
                    PlateauMode::Min
                };
            }
            if let Some(v) = kw.get("threshold_mode") {
                cfg.threshold_mode = if v == "abs" {
                    ThresholdMode::Abs
                } else {
                    ThresholdMode::Rel
                };
            }
            if let Some(v) = kw.get("factor") {
                cfg.factor = num(v);
            }
            if let Some(v) = kw.get("threshold") {
                cfg.threshold = num(v);
            }
            if let Some(v) = kw.get("eps") {
                cfg.eps = num(v);
            }
            if let Some(v) = kw.get("patience") {
                cfg.patience = v.as_u64().unwrap();
            }
            if let Some(v) = kw.get("cooldown") {
                cfg.cooldown = v.as_u64().unwrap();
            }
            if let Some(v) = kw.get("min_lr") {
                cfg.min_lrs = match v {
                    Value::Array(_) => nums(v),
                    v => vec![num(v)],
                };
            }
            Sched::Plateau(ReduceLrOnPlateau::new(opt, cfg).unwrap())
        }
        class => Sched::Plain(plain(opt, class, kw)),
    }
}

fn step(s: &mut Sched, opt: &mut dyn Optimizer, c: &Value, k: usize) -> Result<()> {
    match s {
        Sched::Plain(s) => s.step(opt),
        Sched::Plateau(s) => s.step(opt, num(&c["metrics"][k])),
    }
}

fn check(opt: &dyn Optimizer, c: &Value, k: usize, what: &str) {
    let name = c["name"].as_str().unwrap();
    assert_eq!(
        opt.lrs(),
        nums(&c["lrs"][k]),
        "{name} {what} lrs after {k} steps"
    );
    let moms = nums(&c["momenta"][k]);
    if c["optimizer"] == "Adam" || c["defaults"].get("momentum").is_some() {
        assert_eq!(
            opt.momentums().unwrap(),
            moms,
            "{name} {what} momenta after {k} steps"
        );
    }
}

#[test]
fn group_trajectories_equal_pytorch_and_resume() {
    let f = fixture();
    let cases = f["group_cases"].as_array().unwrap();
    assert_eq!(cases.len(), 17);
    let mut compared = 0usize;
    for c in cases {
        let name = c["name"].as_str().unwrap();
        let steps = c["steps"].as_u64().unwrap() as usize;
        let mut opt = optimizer(c);
        let mut s = build(opt.as_mut(), c);
        check(opt.as_ref(), c, 0, "uninterrupted");
        let half = steps / 2;
        let path = std::env::temp_dir().join(format!(
            "tapegrad_sched_groups_{}_{name}.safetensors",
            std::process::id()
        ));
        for k in 0..steps {
            if k == half {
                save_with_scheduler(&path, opt.as_ref(), s.as_dyn()).unwrap();
            }
            opt.step().unwrap();
            step(&mut s, opt.as_mut(), c, k).unwrap();
            check(opt.as_ref(), c, k + 1, "uninterrupted");
            compared += opt.num_groups();
        }
        if let Sched::Plain(s) = &mut s
            && let Some(e) = c["past_end_error"].as_str()
        {
            let before = (opt.lrs(), s.state());
            let err = s.step(opt.as_mut()).unwrap_err();
            assert_eq!(err.message(), e, "{name}");
            assert_eq!(
                (opt.lrs(), s.state()),
                before,
                "{name}: refused step changes nothing"
            );
        }
        // resume from the halfway checkpoint in fresh objects
        let mut opt2 = optimizer(c);
        let mut s2 = build(opt2.as_mut(), c);
        load_with_scheduler(&path, opt2.as_mut(), s2.as_dyn()).unwrap();
        check(opt2.as_ref(), c, half, "resumed");
        for k in half..steps {
            opt2.step().unwrap();
            step(&mut s2, opt2.as_mut(), c, k).unwrap();
            check(opt2.as_ref(), c, k + 1, "resumed");
        }
        // the state round-trips through the metadata encoding
        let mut sd = StateDict::new();
        let st = s2.as_dyn().state();
        st.insert_into(&mut sd);
        let back = SchedulerState::from_state_dict(&sd).unwrap();
        assert!(
            format!("{back:?}") == format!("{st:?}"),
            "{name}: {back:?} vs {st:?}"
        );
        std::fs::remove_file(&path).ok();
    }
    eprintln!("scheduler group lrs equal to PyTorch's: {compared}");
}

/// An optimizer without momentum or beta1, for OneCycleLr's refusal.
struct NoMomentum(Vec<Tensor>, Vec<f64>);

impl Optimizer for NoMomentum {
    fn step(&mut self) -> Result<()> {
        Ok(())
    }
    fn params(&self) -> &[Tensor] {
        &self.0
    }
    fn lrs(&self) -> Vec<f64> {
        self.1.clone()
    }
    fn set_lrs(&mut self, lrs: &[f64]) -> Result<()> {
        self.1 = lrs.to_vec();
        Ok(())
    }
    fn initial_lrs(&mut self) -> Vec<f64> {
        self.1.clone()
    }
    fn state_dict(&self) -> Result<StateDict> {
        Ok(StateDict::new())
    }
    fn load_state_dict(&mut self, _sd: &StateDict) -> Result<()> {
        Ok(())
    }
}

#[test]
fn scheduler_errors_match_pytorch() {
    let f = fixture();
    let e = &f["errors"];
    let msg = |k: &str| e[k].as_str().unwrap().to_string();
    let sgd = || {
        let p = Tensor::zeros(&[1], DType::F32)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        Sgd::new(vec![p], SgdConfig::new(0.1).momentum(0.9)).unwrap()
    };
    let one_cycle = |cfg: OneCycleConfig| {
        let mut o = sgd();
        let err = OneCycleLr::new(&mut o, cfg).err().unwrap();
        assert_eq!(
            o.lrs(),
            vec![0.1],
            "a refused scheduler leaves the lr alone"
        );
        err.message().to_string()
    };
    assert_eq!(
        one_cycle(OneCycleConfig::new(1.0, 0)),
        msg("onecycle_total_steps_0")
    );
    let mut c = OneCycleConfig::new(1.0, 5);
    c.total_steps = None;
    assert_eq!(one_cycle(c.clone()), msg("onecycle_no_steps"));
    c.epochs = Some(0);
    c.steps_per_epoch = Some(3);
    assert_eq!(one_cycle(c.clone()), msg("onecycle_epochs_0"));
    c.epochs = Some(2);
    c.steps_per_epoch = Some(0);
    assert_eq!(one_cycle(c), msg("onecycle_steps_per_epoch_0"));
    let mut c = OneCycleConfig::new(1.0, 5);
    c.pct_start = 1.5;
    assert_eq!(one_cycle(c), msg("onecycle_pct_start"));
    let mut c = OneCycleConfig::new(1.0, 5);
    c.base_momentums = vec![0.8, 0.7];
    assert_eq!(one_cycle(c), msg("onecycle_base_momentum"));
    // LambdaLr: one function per group, or a refusal naming the counts
    let mut o = sgd();
    let fs: Vec<LrLambda> = vec![Box::new(|e| 1.0 / (e as f64 + 1.0)), Box::new(|_| 1.0)];
    let err = LambdaLr::per_group(&mut o, fs).err().unwrap();
    assert_eq!(
        (err.kind(), err.message()),
        (
            tapegrad::ErrorKind::InvalidArgument,
            &*msg("lambda_lr_lambdas")
        )
    );
    assert_eq!(
        o.lrs(),
        vec![0.1],
        "a refused scheduler leaves the lr alone"
    );
    let p = Tensor::zeros(&[1], DType::F32).unwrap();
    let mut nm = NoMomentum(vec![p], vec![0.1]);
    let err = OneCycleLr::new(&mut nm, OneCycleConfig::new(1.0, 5))
        .err()
        .unwrap();
    assert_eq!(err.message(), msg("onecycle_no_momentum"));

    let mut cfg = PlateauConfig::new();
    cfg.factor = 1.0;
    let err = ReduceLrOnPlateau::new(&sgd(), cfg).err().unwrap();
    assert_eq!(err.message(), msg("plateau_factor"));
    let mut cfg = PlateauConfig::new();
    cfg.min_lrs = vec![0.1, 0.2];
    let err = ReduceLrOnPlateau::new(&sgd(), cfg).err().unwrap();
    assert_eq!(err.message(), msg("plateau_min_lrs"));

    let mut o = sgd();
    let subs: Vec<Box<dyn LrScheduler + Send>> =
        vec![Box::new(StepLr::new(2, 0.1)), Box::new(StepLr::new(3, 0.1))];
    let err = SequentialLr::new(&mut o, subs, vec![2, 4]).err().unwrap();
    assert_eq!(err.message(), msg("sequential_milestones"));
    let plateau = ReduceLrOnPlateau::new(&o, PlateauConfig::new()).unwrap();
    let subs: Vec<Box<dyn LrScheduler + Send>> =
        vec![Box::new(StepLr::new(2, 0.1)), Box::new(plateau)];
    let err = SequentialLr::new(&mut o, subs, vec![2]).err().unwrap();
    assert!(
        err.message()
            .contains("does not support `ReduceLrOnPlateau`"),
        "{err}"
    );
    assert_eq!(o.lrs(), vec![0.1]);
}
