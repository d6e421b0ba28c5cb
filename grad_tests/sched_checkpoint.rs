//! Learning-rate scheduler state in checkpoints: a run saved mid-schedule (model, optimizer and
//! scheduler) and resumed in fresh objects continues exactly as the uninterrupted run (lr
//! sequence and parameters bit for bit), PyTorch's StepLR / CosineAnnealingLR lr sequences are
//! reproduced across a save/load, and bad states or files are errors that change nothing.

use crate::common::R;
use std::path::PathBuf;
use tapegrad::checkpoint::StateDict;
use tapegrad::nn::{self, Forward, Linear, Module, Sequential, Tanh};
use tapegrad::optim::{
    self, Adam, AdamConfig, CosineAnnealingLr, LrScheduler, Optimizer, SchedulerKind,
    SchedulerState, Sgd, SgdConfig, StepLr,
};
use tapegrad::{DType, ErrorKind, Reduction, Tensor};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("tapegrad_sched_{name}.safetensors"))
}

fn net() -> tapegrad::Result<Sequential> {
    Ok(Sequential::new()
        .push(Linear::new(3, 6, true, DType::F64)?)
        .push(Tanh)
        .push(Linear::new(6, 2, true, DType::F64)?))
}

fn data() -> (Tensor, Tensor) {
    let x: Vec<f64> = (0..36).map(|k| ((k * 7 % 11) as f64 - 5.0) / 4.0).collect();
    let y: Vec<f64> = (0..24).map(|k| ((k * 5 % 7) as f64 - 3.0) / 3.0).collect();
    (
        Tensor::from_vec(x, &[12, 3]).unwrap(),
        Tensor::from_vec(y, &[12, 2]).unwrap(),
    )
}

fn values(m: &dyn Module) -> Vec<Vec<f64>> {
    m.parameters()
        .iter()
        .map(|p| p.to_vec::<f64>().unwrap())
        .collect()
}

/// One epoch: a full-batch step, then the scheduler; returns the lr the next epoch uses.
fn epoch(
    m: &Sequential,
    opt: &mut dyn Optimizer,
    s: &mut dyn LrScheduler,
) -> tapegrad::Result<f64> {
    let (x, y) = data();
    let loss = m.forward(&x)?.mse_loss(&y, Reduction::Mean)?;
    opt.zero_grad()?;
    loss.backward()?;
    opt.step()?;
    s.step(opt)?;
    Ok(opt.lr())
}

type MakeOpt = fn(Vec<Tensor>) -> tapegrad::Result<Box<dyn Optimizer>>;
type MakeSched = fn(&mut dyn Optimizer) -> Box<dyn LrScheduler>;

/// (name, optimizer, scheduler as configured, scheduler a fresh run builds before loading).
fn setups() -> Vec<(&'static str, MakeOpt, MakeSched, MakeSched)> {
    vec![
        (
            "sgd_momentum_steplr",
            |p| {
                let c = SgdConfig {
                    momentum: 0.9,
                    ..SgdConfig::new(0.05)
                };
                Ok(Box::new(Sgd::new(p, c)?))
            },
            |_| Box::new(StepLr::new(3, 0.5)),
            |_| Box::new(StepLr::new(1, 0.9)),
        ),
        (
            "adam_cosine",
            |p| Ok(Box::new(Adam::new(p, AdamConfig::adam(0.02))?)),
            |o| Box::new(CosineAnnealingLr::new(o, 4, 0.001)),
            |o| Box::new(CosineAnnealingLr::new(o, 9, 0.5)),
        ),
        (
            "adamw_cosine_past_t_max",
            |p| Ok(Box::new(Adam::new(p, AdamConfig::adamw(0.03))?)),
            |o| Box::new(CosineAnnealingLr::new(o, 3, 0.0)),
            |o| Box::new(CosineAnnealingLr::new(o, 3, 0.0)),
        ),
    ]
}

#[test]
fn resumed_schedule_reproduces_the_uninterrupted_run() -> R {
    const TOTAL: usize = 14;
    for (name, make_opt, make_sched, make_fresh) in setups() {
        for k in [1, 5, 8] {
            let init = net()?;
            let init_path = tmp(&format!("{name}_{k}_init"));
            nn::save(&init_path, &init)?;
            let (a, b, c) = (net()?, net()?, net()?);
            for m in [&a, &b, &c] {
                nn::load_into(&init_path, m)?;
            }

            // a: uninterrupted
            let mut oa = make_opt(a.parameters())?;
            let mut sa = make_sched(oa.as_mut());
            let mut lr_a = Vec::new();
            let mut params_a = Vec::new();
            for _ in 0..TOTAL {
                lr_a.push(epoch(&a, oa.as_mut(), sa.as_mut())?);
                params_a.push(values(&a));
            }

            // b: k epochs, checkpoint; c: fresh objects resume from the files
            let mut ob = make_opt(b.parameters())?;
            let mut sb = make_sched(ob.as_mut());
            let mut lr_c = Vec::new();
            let mut params_c = Vec::new();
            for _ in 0..k {
                lr_c.push(epoch(&b, ob.as_mut(), sb.as_mut())?);
                params_c.push(values(&b));
            }
            let (mp, op) = (
                tmp(&format!("{name}_{k}_model")),
                tmp(&format!("{name}_{k}_opt")),
            );
            nn::save(&mp, &b)?;
            optim::save_with_scheduler(&op, ob.as_ref(), sb.as_ref())?;
            drop((ob, sb));

            nn::load_into(&mp, &c)?;
            let mut oc = make_opt(c.parameters())?;
            oc.set_lr(7.0);
            let mut sc = make_fresh(oc.as_mut());
            optim::load_with_scheduler(&op, oc.as_mut(), sc.as_mut())?;
            assert_eq!(sc.state().last_epoch, k as u64, "{name} k={k}");
            assert_eq!(
                sc.state(),
                sa_state_after(&make_opt, &make_sched, &init_path, k)?
            );
            for _ in k..TOTAL {
                lr_c.push(epoch(&c, oc.as_mut(), sc.as_mut())?);
                params_c.push(values(&c));
            }
            assert_eq!(lr_c, lr_a, "{name} k={k}: lr sequence");
            assert_eq!(params_c, params_a, "{name} k={k}: parameter trajectory");
            assert_eq!(sc.state(), sa.state(), "{name} k={k}");
        }
    }
    Ok(())
}

/// The scheduler state of a run started from `init_path` after `k` epochs.
fn sa_state_after(
    make_opt: &MakeOpt,
    make_sched: &MakeSched,
    init_path: &PathBuf,
    k: usize,
) -> tapegrad::Result<SchedulerState> {
    let m = net()?;
    nn::load_into(init_path, &m)?;
    let mut o = make_opt(m.parameters())?;
    let mut s = make_sched(o.as_mut());
    for _ in 0..k {
        epoch(&m, o.as_mut(), s.as_mut())?;
    }
    Ok(s.state())
}

/// Without the scheduler state, a resumed run restarts its schedule (what the state fixes).
#[test]
fn without_scheduler_state_the_schedule_restarts() -> R {
    let p = Tensor::zeros(&[1], DType::F64)?.requires_grad_(true)?;
    let mut o = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
    let mut s = StepLr::new(3, 0.5);
    for _ in 0..2 {
        s.step(&mut o)?;
    }
    let path = tmp("restart");
    optim::save(&path, &o)?;
    let mut o2 = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
    optim::load_into(&path, &mut o2)?;
    let mut fresh = StepLr::new(3, 0.5);
    fresh.step(&mut o2)?;
    s.step(&mut o)?;
    assert_eq!(o.lr(), 0.05, "epoch 3 decays");
    assert_eq!(o2.lr(), 0.1, "a fresh StepLr is at epoch 1");
    Ok(())
}

/// lr after each of 25 epochs, from PyTorch 2.x, with a checkpoint in the middle:
/// ```python
/// def run(make, k, n=25):
///     p = torch.nn.Parameter(torch.zeros(1, dtype=torch.float64))
///     opt = torch.optim.SGD([p], lr=0.1); s = make(opt); lrs = []
///     for e in range(n):
///         if e == k:  # checkpoint, then continue in fresh objects
///             so, ss = opt.state_dict(), s.state_dict()
///             opt = torch.optim.SGD([p], lr=0.7); s = make(opt)
///             opt.load_state_dict(so); s.load_state_dict(ss)
///         opt.step(); s.step(); lrs.append(opt.param_groups[0]["lr"])
///     return lrs
/// run(lambda o: torch.optim.lr_scheduler.StepLR(o, step_size=4, gamma=0.5), 10)
/// run(lambda o: torch.optim.lr_scheduler.CosineAnnealingLR(o, T_max=7, eta_min=0.01), 9)
/// ```
/// (the cosine sequence is the same without the checkpoint, `k = 25`).
const TORCH_STEP: [f64; 25] = [
    0.1, 0.1, 0.1, 0.05, 0.05, 0.05, 0.05, 0.025, 0.025, 0.025, 0.025, 0.0125, 0.0125, 0.0125,
    0.0125, 0.00625, 0.00625, 0.00625, 0.00625, 0.003125, 0.003125, 0.003125, 0.003125, 0.0015625,
    0.0015625,
];
const TORCH_COSINE: [f64; 25] = [
    0.09554359905560886,
    0.08305704108364301,
    0.06501344202803415,
    0.04498655797196586,
    0.026942958916356993,
    0.014456400944391143,
    0.01,
    0.01445640094439114,
    0.026942958916356986,
    0.04498655797196585,
    0.06501344202803411,
    0.083057041083643,
    0.09554359905560887,
    0.1,
    0.09554359905560889,
    0.08305704108364304,
    0.06501344202803414,
    0.04498655797196587,
    0.026942958916357007,
    0.01445640094439115,
    0.01,
    0.01445640094439114,
    0.026942958916357132,
    0.04498655797196615,
    0.06501344202803462,
];

fn torch_run(
    make: fn(&mut dyn Optimizer) -> Box<dyn LrScheduler>,
    k: usize,
    name: &str,
) -> tapegrad::Result<Vec<f64>> {
    let p = Tensor::zeros(&[1], DType::F64)?.requires_grad_(true)?;
    let mut opt = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
    let mut s = make(&mut opt);
    let path = tmp(name);
    let mut lrs = Vec::new();
    for e in 0..25 {
        if e == k {
            optim::save_with_scheduler(&path, &opt, s.as_ref())?;
            opt = Sgd::new(vec![p.clone()], SgdConfig::new(0.7))?;
            s = make(&mut opt);
            optim::load_with_scheduler(&path, &mut opt, s.as_mut())?;
        }
        opt.step()?;
        s.step(&mut opt)?;
        lrs.push(opt.lr());
    }
    Ok(lrs)
}

#[test]
fn pytorch_lr_sequences_survive_a_checkpoint() -> R {
    // exact: the same f64 operations in the same order as PyTorch's recursive formulas
    let step = |_: &mut dyn Optimizer| -> Box<dyn LrScheduler> { Box::new(StepLr::new(4, 0.5)) };
    let cos = |o: &mut dyn Optimizer| -> Box<dyn LrScheduler> {
        Box::new(CosineAnnealingLr::new(o, 7, 0.01))
    };
    assert_eq!(torch_run(step, 10, "torch_step")?, TORCH_STEP);
    assert_eq!(torch_run(cos, 9, "torch_cos")?, TORCH_COSINE);
    // and the same without a checkpoint
    assert_eq!(torch_run(step, 25, "torch_step_plain")?, TORCH_STEP);
    assert_eq!(torch_run(cos, 25, "torch_cos_plain")?, TORCH_COSINE);
    Ok(())
}

#[test]
fn state_layout_follows_pytorch_names() -> R {
    let p = Tensor::zeros(&[1], DType::F64)?.requires_grad_(true)?;
    let mut o = Sgd::new(vec![p], SgdConfig::new(0.1))?;
    let mut s = CosineAnnealingLr::new(&mut o, 7, 0.01);
    for _ in 0..3 {
        s.step(&mut o)?;
    }
    let path = tmp("layout");
    optim::save_with_scheduler(&path, &o, &s)?;
    let sd = StateDict::load(&path)?;
    assert_eq!(
        sd.metadata("optimizer"),
        o.state_dict()?.metadata("optimizer")
    );
    assert_eq!(sd.metadata("scheduler"), Some("CosineAnnealingLR"));
    assert_eq!(sd.metadata("scheduler.last_epoch"), Some("3"));
    assert_eq!(sd.metadata("scheduler.base_lrs"), Some("0.1"));
    assert_eq!(sd.metadata("scheduler.T_max"), Some("7"));
    assert_eq!(sd.metadata("scheduler.eta_min"), Some("0.01"));
    assert_eq!(
        SchedulerState::from_state_dict(&sd)?,
        SchedulerState {
            kind: SchedulerKind::CosineAnnealingLr {
                t_max: 7,
                eta_min: 0.01
            },
            last_epoch: 3,
            base_lrs: vec![0.1],
        }
    );
    // an ordinary optimizer checkpoint: load_into reads it and ignores the scheduler entries
    let mut o2 = Sgd::new(o.params().to_vec(), SgdConfig::new(0.5))?;
    optim::load_into(&path, &mut o2)?;
    assert_eq!(o2.lr(), o.lr());
    // StepLr: base lrs unknown before the first step, then the optimizer's initial lrs (the
    // lr when the first scheduler, here the cosine, was attached; restored by load_into)
    let mut st = StepLr::new(4, 0.5);
    assert!(st.state().base_lrs.is_empty());
    let mut sd = StateDict::new();
    st.state().insert_into(&mut sd);
    assert_eq!(sd.metadata("scheduler.base_lrs"), None);
    assert_eq!(SchedulerState::from_state_dict(&sd)?, st.state());
    st.step(&mut o2)?;
    assert_eq!(st.state().base_lrs, vec![0.1]);
    assert_eq!(o2.param_groups()[0].initial_lr(), Some(0.1));
    Ok(())
}

#[test]
fn scheduler_load_errors_change_nothing() -> R {
    let p = Tensor::from_vec(vec![1.0f64, -2.0], &[2])?.requires_grad_(true)?;
    let mut o = Sgd::new(vec![p.clone()], SgdConfig::new(0.1))?;
    let mut step = StepLr::new(4, 0.5);
    let mut cos = CosineAnnealingLr::new(&mut o, 7, 0.01);
    for _ in 0..3 {
        step.step(&mut o)?;
        cos.step(&mut o)?;
    }
    let (step0, cos0, lr0) = (step.state(), cos.state(), o.lr());
    let check_unchanged = |step: &StepLr, cos: &CosineAnnealingLr, o: &Sgd| {
        assert_eq!(step.state(), step0);
        assert_eq!(cos.state(), cos0);
        assert_eq!(o.lr(), lr0);
    };

    // a state of another kind
    let e = step.load_state(&cos0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.message()
            .contains("CosineAnnealingLR state into a StepLR"),
        "{e}"
    );
    let e = cos.load_state(&step0).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // invalid hyper-parameters or epochs
    let bad = [
        SchedulerState {
            kind: SchedulerKind::StepLr {
                step_size: 0,
                gamma: 0.5,
            },
            ..step0.clone()
        },
        SchedulerState {
            last_epoch: u64::MAX,
            ..step0.clone()
        },
    ];
    for b in &bad {
        assert_eq!(
            step.load_state(b).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    let bad = [
        SchedulerState {
            base_lrs: vec![],
            ..cos0.clone()
        },
        SchedulerState {
            base_lrs: vec![f64::NAN],
            ..cos0.clone()
        },
        SchedulerState {
            kind: SchedulerKind::CosineAnnealingLr {
                t_max: 0,
                eta_min: 0.0,
            },
            ..cos0.clone()
        },
    ];
    for b in &bad {
        assert_eq!(
            cos.load_state(b).unwrap_err().kind(),
            ErrorKind::InvalidArgument
        );
    }
    check_unchanged(&step, &cos, &o);

    // files: without scheduler state, with another kind, with a bad entry, with an optimizer
    // state that does not fit (the scheduler state was fine: it is rolled back)
    let plain = tmp("err_plain");
    optim::save(&plain, &Sgd::new(vec![p.clone()], SgdConfig::new(0.3))?)?;
    let e = optim::load_with_scheduler(&plain, &mut o, &mut step).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(
        e.message().contains("no learning-rate scheduler state"),
        "{e}"
    );

    let mut o_other = Sgd::new(vec![p.clone()], SgdConfig::new(0.3))?;
    let mut cos_other = CosineAnnealingLr::new(&mut o_other, 2, 0.0);
    cos_other.step(&mut o_other)?;
    let other_kind = tmp("err_kind");
    optim::save_with_scheduler(&other_kind, &o_other, &cos_other)?;
    let e = optim::load_with_scheduler(&other_kind, &mut o, &mut step).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);

    let mut sd = o_other.state_dict()?;
    cos_other.state().insert_into(&mut sd);
    sd.set_metadata("scheduler.last_epoch", "-1");
    let bad_entry = tmp("err_entry");
    sd.save(&bad_entry)?;
    let e = optim::load_with_scheduler(&bad_entry, &mut o, &mut cos).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.message().contains("scheduler.last_epoch"), "{e}");

    let q = Tensor::zeros(&[2], DType::F64)?.requires_grad_(true)?;
    let q2 = Tensor::zeros(&[3], DType::F64)?.requires_grad_(true)?;
    let mut adam = Adam::new(vec![q, q2], AdamConfig::adam(0.3))?;
    let mut cos_adam = CosineAnnealingLr::new(&mut adam, 5, 0.0);
    cos_adam.step(&mut adam)?;
    let wrong_opt = tmp("err_opt");
    optim::save_with_scheduler(&wrong_opt, &adam, &cos_adam)?;
    let e = optim::load_with_scheduler(&wrong_opt, &mut o, &mut cos).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    check_unchanged(&step, &cos, &o);

    let e = optim::load_with_scheduler(tmp("does_not_exist"), &mut o, &mut cos).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    check_unchanged(&step, &cos, &o);
    Ok(())
}
