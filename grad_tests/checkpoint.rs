//! safetensors checkpoints: StateDict round trips for every dtype, module save/load with
//! PyTorch's key names, optimizer state (SGD momentum, Adam/AdamW/AMSGrad moments and step),
//! resuming training from a checkpoint reproduces the uninterrupted trajectory bit for bit,
//! clear errors that leave everything unchanged, and interop with PyTorch both ways:
//!
//! * `grad_tests/fixtures/torch_mlp.safetensors` was written by PyTorch's
//!   `safetensors.torch.save_file` (`python3 tools/make_safetensors_fixture.py`) and must load here
//!   with the same values;
//! * a file written here must load in PyTorch. The ignored test `python_loads_our_file` writes one
//!   and checks it with `tools/check_safetensors.py`; run it (needs `pip install torch safetensors`)
//!   with `cargo test --release --test main -- checkpoint:: --ignored`.

use crate::common::{R, f64s};
use half::{bf16, f16};
use std::path::PathBuf;
use tapegrad::checkpoint::StateDict;
use tapegrad::dtype::C64;
use tapegrad::nn::{self, Forward, Linear, Module, Relu, Sequential, Tanh};
use tapegrad::optim::{self, Adam, AdamConfig, Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, ErrorKind, Reduction, Tensor};

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("tapegrad_ckpt_{name}.safetensors"))
}

/// Element k = float64(k * 0.37 - 1.5) (tools/make_safetensors_fixture.py's `ramp`).
fn ramp(n: usize) -> Vec<f64> {
    (0..n).map(|k| k as f64 * 0.37 - 1.5).collect()
}
fn ramp_f32(shape: &[usize]) -> Tensor {
    let n = shape.iter().product();
    Tensor::from_vec(ramp(n).into_iter().map(|v| v as f32).collect(), shape).unwrap()
}

/// Bit-exact equality of shape, dtype and values.
fn same_tensor(a: &Tensor, b: &Tensor) -> bool {
    a.shape() == b.shape()
        && a.dtype() == b.dtype()
        && match a.dtype() {
            DType::C64 => {
                let (x, y) = (a.to_vec::<C64>().unwrap(), b.to_vec::<C64>().unwrap());
                x.iter().zip(&y).all(|(p, q)| {
                    p.re.to_bits() == q.re.to_bits() && p.im.to_bits() == q.im.to_bits()
                })
            }
            _ => {
                let (x, y) = (f64s(a), f64s(b));
                x.len() == y.len() && x.iter().zip(&y).all(|(p, q)| p.to_bits() == q.to_bits())
            }
        }
}

fn same_sd(a: &StateDict, b: &StateDict) -> bool {
    let mut na = a.names();
    let mut nb = b.names();
    na.sort();
    nb.sort();
    na == nb
        && a.metadata_map() == b.metadata_map()
        && na
            .iter()
            .all(|k| same_tensor(a.get(k).unwrap(), b.get(k).unwrap()))
}

fn every_dtype() -> tapegrad::Result<StateDict> {
    let mut sd = StateDict::new();
    sd.insert("b", &Tensor::from_vec(vec![true, false, true], &[3])?)?;
    sd.insert("u8", &Tensor::from_vec(vec![0u8, 7, 255], &[3])?)?;
    sd.insert("i8", &Tensor::from_vec(vec![-128i8, 5], &[2])?)?;
    sd.insert("i16", &Tensor::from_vec(vec![-300i16, 300], &[2, 1])?)?;
    sd.insert("i32", &Tensor::from_vec(vec![i32::MIN, 1, i32::MAX], &[3])?)?;
    sd.insert("i64", &Tensor::from_vec(vec![-(1i64 << 40), 3], &[2])?)?;
    sd.insert(
        "f16",
        &Tensor::from_vec(vec![f16::from_f32(0.1), f16::MAX], &[2])?,
    )?;
    sd.insert("bf16", &Tensor::from_vec(vec![bf16::from_f32(-2.5)], &[1])?)?;
    sd.insert(
        "f32",
        &Tensor::from_vec(vec![f32::MIN_POSITIVE, -0.0, 1e30], &[3])?,
    )?;
    sd.insert("f64", &Tensor::from_vec(ramp(24), &[2, 3, 4])?)?;
    sd.insert(
        "c64",
        &Tensor::from_vec(vec![C64::new(1.0, -2.0), C64::new(0.5, 3.0)], &[2])?,
    )?;
    sd.insert("scalar", &Tensor::scalar(7.25f64))?;
    sd.insert("empty", &Tensor::zeros(&[0, 5], DType::F32)?)?;
    // a strided view is written as its logical (row-major) values
    let base = Tensor::from_vec(ramp(12), &[3, 4])?;
    sd.insert("view", &base.t()?.narrow(0, 1, 2)?)?;
    sd.set_metadata("note", "every dtype");
    Ok(sd)
}

#[test]
fn state_dict_round_trips_every_dtype_through_bytes_and_files() -> R {
    let sd = every_dtype()?;
    let back = StateDict::from_bytes(&sd.to_bytes()?)?;
    assert!(same_sd(&sd, &back), "{sd:?}\n{back:?}");
    assert_eq!(
        back.get("view").unwrap().to_vec::<f64>()?,
        vec![
            ramp(12)[1],
            ramp(12)[5],
            ramp(12)[9],
            ramp(12)[2],
            ramp(12)[6],
            ramp(12)[10]
        ]
    );
    let path = tmp("every_dtype");
    sd.save(&path)?;
    let loaded = StateDict::load(&path)?;
    assert!(same_sd(&sd, &loaded));
    assert_eq!(loaded.metadata("note"), Some("every dtype"));
    // files list tensors sorted by name
    let mut sorted = sd.names();
    sorted.sort();
    assert_eq!(loaded.names(), sorted);
    // loaded tensors are independent of the file's buffer and of each other
    assert!(loaded.get("f64").unwrap().is_contiguous());
    Ok(())
}

#[test]
fn state_dict_errors() -> R {
    let mut sd = StateDict::new();
    sd.insert("x", &Tensor::ones(&[1], DType::F32)?)?;
    let e = sd
        .insert("x", &Tensor::ones(&[1], DType::F32)?)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("duplicate"), "{e}");
    sd.insert("z", &Tensor::ones(&[1], DType::C128)?)?;
    let e = sd.to_bytes().unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("\"z\""), "{e}");
    // a failed save leaves an existing file as it was
    let path = tmp("failed_save");
    every_dtype()?.save(&path)?;
    let before = std::fs::read(&path).unwrap();
    assert_eq!(sd.save(&path).unwrap_err().kind(), ErrorKind::Unsupported);
    assert_eq!(std::fs::read(&path).unwrap(), before);

    let missing = tmp("does_not_exist");
    let e = StateDict::load(&missing).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Io);
    assert!(e.to_string().contains("does_not_exist"), "{e}");
    let e = StateDict::from_bytes(b"definitely not a safetensors file").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let mut truncated = every_dtype()?.to_bytes()?;
    truncated.truncate(truncated.len() - 3);
    assert_eq!(
        StateDict::from_bytes(&truncated).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    // a dtype tapegrad lacks (u32) is refused by name
    let data = [1u8, 0, 0, 0, 2, 0, 0, 0];
    let view =
        safetensors::tensor::TensorView::new(safetensors::Dtype::U32, vec![2], &data).unwrap();
    let bytes = safetensors::serialize([("counts", view)], None).unwrap();
    let e = StateDict::from_bytes(&bytes).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.to_string().contains("counts"), "{e}");
    Ok(())
}

fn mlp(dtype: DType) -> tapegrad::Result<Sequential> {
    Ok(Sequential::new()
        .push(Linear::new(3, 4, true, dtype)?)
        .push(Relu)
        .push(Linear::new(4, 2, true, dtype)?))
}

fn values(m: &dyn Module) -> Vec<Vec<f64>> {
    m.parameters()
        .iter()
        .map(|p| p.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap())
        .collect()
}

#[test]
fn module_save_and_load_into() -> R {
    let a = mlp(DType::F32)?;
    let b = mlp(DType::F32)?;
    assert_ne!(values(&a), values(&b));
    let path = tmp("module");
    nn::save(&path, &a)?;
    let sd = StateDict::load(&path)?;
    assert_eq!(sd.names(), ["0.bias", "0.weight", "2.bias", "2.weight"]);
    assert_eq!(sd.metadata("format"), Some("pt"));
    let v0: Vec<u64> = b.parameters().iter().map(|p| p.version()).collect();
    nn::load_into(&path, &b)?;
    assert_eq!(values(&a), values(&b));
    // loading is an in-place copy under no_grad: versions move, leaves stay leaves
    for (p, v) in b.parameters().iter().zip(v0) {
        assert_eq!(p.version(), v + 1);
        assert!(p.is_leaf() && p.requires_grad() && p.grad_fn().is_none());
    }
    // the state dict shares storage with the parameters (PyTorch's state_dict); loading it back
    // into the same module is a no-op on values
    let live = a.state_dict()?;
    assert!(
        live.get("0.weight")
            .unwrap()
            .shares_storage(&a.parameters()[0])
    );
    a.load_state_dict(&live, true)?;
    assert_eq!(values(&a), values(&b));
    Ok(())
}

#[test]
fn module_load_errors_change_nothing() -> R {
    let src = mlp(DType::F32)?;
    let path = tmp("module_src");
    nn::save(&path, &src)?;
    let sd = StateDict::load(&path)?;
    let dst = mlp(DType::F32)?;
    let before = values(&dst);
    let versions: Vec<u64> = dst.parameters().iter().map(|p| p.version()).collect();
    let unchanged = |dst: &Sequential| {
        assert_eq!(values(dst), before);
        let v: Vec<u64> = dst.parameters().iter().map(|p| p.version()).collect();
        assert_eq!(v, versions);
    };

    // missing and unexpected keys
    let mut partial = StateDict::new();
    for (k, t) in sd.iter().filter(|(k, _)| *k != "2.bias") {
        partial.insert(k, t)?;
    }
    let e = dst.load_state_dict(&partial, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("2.bias"), "{e}");
    unchanged(&dst);
    let mut extra = sd.clone();
    extra.insert("3.weight", &Tensor::ones(&[1], DType::F32)?)?;
    let e = dst.load_state_dict(&extra, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("3.weight"), "{e}");
    unchanged(&dst);

    // shape (or dtype) of the last parameter wrong: the first three are not touched either
    let mut wrong_shape = StateDict::new();
    let mut wrong_dtype = StateDict::new();
    for (k, t) in sd.iter() {
        if k == "2.weight" {
            wrong_shape.insert(k, &Tensor::ones(&[4, 2], DType::F32)?)?;
            wrong_dtype.insert(k, &t.to_dtype(DType::F64)?)?;
        } else {
            wrong_shape.insert(k, t)?;
            wrong_dtype.insert(k, t)?;
        }
    }
    let e = dst.load_state_dict(&wrong_shape, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert!(
        e.to_string().contains("2.weight") && e.to_string().contains("[4, 2]"),
        "{e}"
    );
    unchanged(&dst);
    // a dtype mismatch is not an error: values are cast as copy_ casts (PyTorch); with a
    // wrong shape after it nothing is copied
    let mut cast_then_bad_shape = wrong_dtype.clone();
    cast_then_bad_shape.insert("3.weight", &Tensor::ones(&[1], DType::F32)?)?;
    let e = dst.load_state_dict(&cast_then_bad_shape, true).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    unchanged(&dst);

    // a different architecture, a missing file, a corrupt file
    let other = Sequential::new()
        .push(Linear::new(3, 5, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(5, 2, true, DType::F32)?);
    assert_eq!(
        nn::load_into(&path, &other).unwrap_err().kind(),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        nn::load_into(tmp("no_such_file"), &dst).unwrap_err().kind(),
        ErrorKind::Io
    );
    let corrupt = tmp("corrupt");
    std::fs::write(&corrupt, b"\x08\0\0\0\0\0\0\0{broken}").unwrap();
    assert_eq!(
        nn::load_into(&corrupt, &dst).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    unchanged(&dst);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Optimizer state and resuming

/// A small tanh regression problem with fixed data.
struct Problem {
    x: Tensor,
    y: Tensor,
}

fn problem() -> Problem {
    let x: Vec<f64> = (0..48).map(|k| ((k * 7 % 11) as f64 - 5.0) / 4.0).collect();
    let y: Vec<f64> = (0..32).map(|k| ((k * 5 % 7) as f64 - 3.0) / 3.0).collect();
    Problem {
        x: Tensor::from_vec(x, &[16, 3]).unwrap(),
        y: Tensor::from_vec(y, &[16, 2]).unwrap(),
    }
}

fn net() -> tapegrad::Result<Sequential> {
    Ok(Sequential::new()
        .push(Linear::new(3, 8, true, DType::F64)?)
        .push(Tanh)
        .push(Linear::new(8, 2, true, DType::F64)?))
}

fn train_steps(m: &Sequential, opt: &mut dyn Optimizer, pb: &Problem, n: usize) -> R {
    for _ in 0..n {
        let loss = m.forward(&pb.x)?.mse_loss(&pb.y, Reduction::Mean)?;
        opt.zero_grad()?;
        loss.backward()?;
        opt.step()?;
    }
    Ok(())
}

type MakeOpt = fn(Vec<Tensor>) -> tapegrad::Result<Box<dyn Optimizer>>;

fn optimizers() -> Vec<(&'static str, MakeOpt)> {
    vec![
        ("sgd_momentum", |p| {
            let c = SgdConfig {
                momentum: 0.9,
                dampening: 0.1,
                weight_decay: 1e-3,
                ..SgdConfig::new(0.05)
            };
            Ok(Box::new(Sgd::new(p, c)?))
        }),
        ("sgd_nesterov", |p| {
            let c = SgdConfig {
                momentum: 0.8,
                nesterov: true,
                ..SgdConfig::new(0.05)
            };
            Ok(Box::new(Sgd::new(p, c)?))
        }),
        ("sgd_plain", |p| {
            Ok(Box::new(Sgd::new(p, SgdConfig::new(0.1))?))
        }),
        ("adam", |p| {
            Ok(Box::new(Adam::new(p, AdamConfig::adam(0.01))?))
        }),
        ("adamw_amsgrad", |p| {
            let c = AdamConfig {
                amsgrad: true,
                ..AdamConfig::adamw(0.02)
            };
            Ok(Box::new(Adam::new(p, c)?))
        }),
        ("adam_l2_amsgrad", |p| {
            let c = AdamConfig {
                amsgrad: true,
                weight_decay: 0.1,
                betas: (0.8, 0.99),
                eps: 1e-6,
                ..AdamConfig::adam(0.03)
            };
            Ok(Box::new(Adam::new(p, c)?))
        }),
    ]
}

#[test]
fn resumed_training_reproduces_the_uninterrupted_trajectory() -> R {
    let pb = problem();
    for (name, make) in optimizers() {
        // three copies of one initialisation, through a checkpoint file
        let init = net()?;
        let init_path = tmp(&format!("{name}_init"));
        nn::save(&init_path, &init)?;
        let (a, b, c) = (net()?, net()?, net()?);
        for m in [&a, &b, &c] {
            nn::load_into(&init_path, m)?;
        }

        // a: 12 uninterrupted steps
        let mut oa = make(a.parameters())?;
        train_steps(&a, oa.as_mut(), &pb, 12)?;

        // b: 5 steps, checkpoint model and optimizer, then c resumes from the files
        let mut ob = make(b.parameters())?;
        train_steps(&b, ob.as_mut(), &pb, 5)?;
        let (mp, op) = (tmp(&format!("{name}_model")), tmp(&format!("{name}_opt")));
        nn::save(&mp, &b)?;
        optim::save(&op, ob.as_ref())?;
        nn::load_into(&mp, &c)?;
        let mut oc = make(c.parameters())?;
        oc.set_lr(123.0); // restored from the checkpoint
        optim::load_into(&op, oc.as_mut())?;
        assert_eq!(oc.lr(), ob.lr(), "{name}");
        assert!(same_sd(&oc.state_dict()?, &ob.state_dict()?), "{name}");
        train_steps(&c, oc.as_mut(), &pb, 7)?;

        for ((pa, pc), (n, _)) in a
            .parameters()
            .iter()
            .zip(c.parameters())
            .zip(a.named_parameters())
        {
            assert!(same_tensor(pa, &pc), "{name}: {n} differs after resuming");
        }
        // and training did move the parameters
        assert_ne!(values(&a), values(&init), "{name}");
        // the restored state is a private copy: c's steps did not touch b's optimizer state
        let sb = StateDict::from_bytes(&ob.state_dict()?.to_bytes()?)?;
        assert!(same_sd(&sb, &StateDict::load(&op)?), "{name}");
    }
    Ok(())
}

#[test]
fn optimizer_state_dict_layout_matches_pytorch_names() -> R {
    let pb = problem();
    let m = net()?;
    let params = m.parameters();
    let cfg = AdamConfig {
        amsgrad: true,
        ..AdamConfig::adam(0.01)
    };
    let mut opt = Adam::new(params.clone(), cfg)?;
    assert!(
        opt.state_dict()?.is_empty(),
        "no state before the first step"
    );
    train_steps(&m, &mut opt, &pb, 3)?;
    let sd = opt.state_dict()?;
    assert_eq!(sd.len(), 4 * 4);
    for i in 0..4 {
        let step = sd.get(&format!("state.{i}.step")).unwrap();
        assert_eq!((step.shape(), step.dtype()), (vec![], DType::F32));
        assert_eq!(step.item::<f32>()?, 3.0);
        let (_, m1, v1, vmax) = opt.state(i).unwrap();
        assert!(same_tensor(
            sd.get(&format!("state.{i}.exp_avg")).unwrap(),
            m1
        ));
        assert!(same_tensor(
            sd.get(&format!("state.{i}.exp_avg_sq")).unwrap(),
            v1
        ));
        assert!(same_tensor(
            sd.get(&format!("state.{i}.max_exp_avg_sq")).unwrap(),
            vmax.unwrap()
        ));
    }
    assert_eq!(sd.metadata("optimizer"), Some("Adam"));
    assert_eq!(sd.metadata("param_groups.0.lr"), Some("0.01"));
    assert_eq!(sd.metadata("param_groups.0.amsgrad"), Some("true"));
    assert_eq!(sd.metadata("num_params"), Some("4"));

    let mut sgd = Sgd::new(
        params,
        SgdConfig {
            momentum: 0.5,
            ..SgdConfig::new(0.1)
        },
    )?;
    train_steps(&m, &mut sgd, &pb, 1)?;
    let sd = sgd.state_dict()?;
    assert_eq!(
        sd.names(),
        [
            "state.0.momentum_buffer",
            "state.1.momentum_buffer",
            "state.2.momentum_buffer",
            "state.3.momentum_buffer"
        ]
    );
    assert!(same_tensor(
        sd.get("state.2.momentum_buffer").unwrap(),
        sgd.momentum_buffer(2).unwrap()
    ));
    assert_eq!(sd.metadata("optimizer"), Some("SGD"));
    Ok(())
}

#[test]
fn optimizer_load_errors_change_nothing() -> R {
    let pb = problem();
    let m = net()?;
    let amsgrad = AdamConfig {
        amsgrad: true,
        ..AdamConfig::adam(0.01)
    };
    let mut adam = Adam::new(m.parameters(), amsgrad)?;
    train_steps(&m, &mut adam, &pb, 2)?;
    let good = StateDict::from_bytes(&adam.state_dict()?.to_bytes()?)?;
    let mut sgd = Sgd::new(
        m.parameters(),
        SgdConfig {
            momentum: 0.9,
            ..SgdConfig::new(0.1)
        },
    )?;
    train_steps(&m, &mut sgd, &pb, 2)?;
    let sgd_sd = StateDict::from_bytes(&sgd.state_dict()?.to_bytes()?)?;

    let mut target = Adam::new(m.parameters(), AdamConfig::adam(0.5))?;
    train_steps(&m, &mut target, &pb, 1)?;
    let before = StateDict::from_bytes(&target.state_dict()?.to_bytes()?)?;
    let check = |target: &Adam| {
        let now = StateDict::from_bytes(&target.state_dict().unwrap().to_bytes().unwrap()).unwrap();
        assert!(same_sd(&now, &before));
        assert_eq!(target.lr(), 0.5);
    };

    let edit = |f: &dyn Fn(&str, &Tensor) -> Option<Tensor>, extra: Option<(&str, Tensor)>| {
        let mut sd = StateDict::new();
        for (k, v) in good.metadata_map() {
            sd.set_metadata(k.clone(), v.clone());
        }
        for (k, t) in good.iter() {
            if let Some(t) = f(k, t) {
                sd.insert(k, &t).unwrap();
            }
        }
        if let Some((k, t)) = extra {
            sd.insert(k, &t).unwrap();
        }
        sd
    };

    // wrong optimizer kind
    let e = target.load_state_dict(&sgd_sd).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("SGD"), "{e}");
    check(&target);
    // wrong parameter count
    let mut fewer = Adam::new(m.parameters()[..2].to_vec(), AdamConfig::adam(0.5))?;
    let e = fewer.load_state_dict(&good).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    // wrong shape (last parameter), wrong dtype
    let bad = edit(
        &|k, t| {
            Some(if k == "state.3.exp_avg" {
                Tensor::zeros(&[3], DType::F64).unwrap()
            } else {
                t.clone()
            })
        },
        None,
    );
    assert_eq!(
        target.load_state_dict(&bad).unwrap_err().kind(),
        ErrorKind::ShapeMismatch
    );
    check(&target);
    let bad = edit(
        &|k, t| {
            Some(if k == "state.3.exp_avg_sq" {
                t.to_dtype(DType::F32).unwrap()
            } else {
                t.clone()
            })
        },
        None,
    );
    assert_eq!(
        target.load_state_dict(&bad).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    check(&target);
    // incomplete state, unknown key, out-of-range parameter index, bad step
    let bad = edit(
        &|k, t| (k != "state.1.max_exp_avg_sq").then(|| t.clone()),
        None,
    );
    let e = target.load_state_dict(&bad).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("parameter 1"), "{e}");
    check(&target);
    for key in ["state.0.momentum", "state.9.exp_avg", "param_groups.0.lr"] {
        let bad = edit(
            &|_, t| Some(t.clone()),
            Some((key, Tensor::zeros(&[1], DType::F64)?)),
        );
        let e = target.load_state_dict(&bad).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(e.to_string().contains(key), "{e}");
        check(&target);
    }
    let bad = edit(
        &|k, t| {
            Some(if k == "state.2.step" {
                Tensor::scalar(1.5f32)
            } else {
                t.clone()
            })
        },
        None,
    );
    assert_eq!(
        target.load_state_dict(&bad).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    check(&target);
    // bad hyper-parameters in the metadata
    let mut bad = good.clone();
    bad.set_metadata("param_groups.0.beta1", "1.5");
    assert_eq!(
        target.load_state_dict(&bad).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    bad.set_metadata("param_groups.0.beta1", "zero point nine");
    let e = target.load_state_dict(&bad).unwrap_err();
    assert!(e.to_string().contains("beta1"), "{e}");
    check(&target);

    // the good one loads, including AMSGrad mode from the metadata
    target.load_state_dict(&good)?;
    assert_eq!(target.lr(), 0.01);
    assert!(target.state(0).unwrap().3.is_some());
    assert_eq!(target.state(0).unwrap().0, 2);
    // an Sgd with momentum restores its buffers; one without momentum state loads too
    let mut s2 = Sgd::new(m.parameters(), SgdConfig::new(0.7))?;
    s2.load_state_dict(&sgd_sd)?;
    assert!(same_tensor(
        s2.momentum_buffer(1).unwrap(),
        sgd.momentum_buffer(1).unwrap()
    ));
    assert_eq!(s2.lr(), 0.1);
    Ok(())
}

// ---------------------------------------------------------------------------------------------
// Interop with PyTorch

const FIXTURE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/grad_tests/fixtures/torch_mlp.safetensors"
);

#[test]
fn file_written_by_pytorch_loads_with_the_same_values() -> R {
    let sd = StateDict::load(FIXTURE)?;
    assert_eq!(sd.metadata("format"), Some("pt"));
    let r = |n: usize| ramp(n);
    let f32s = |t: &Tensor| t.to_vec::<f32>().unwrap();
    let as_f32 = |v: Vec<f64>| v.into_iter().map(|x| x as f32).collect::<Vec<_>>();
    for (k, shape) in [
        ("0.weight", vec![4, 3]),
        ("0.bias", vec![4]),
        ("2.weight", vec![2, 4]),
        ("2.bias", vec![2]),
    ] {
        let t = sd.get(k).unwrap();
        assert_eq!((t.shape(), t.dtype()), (shape.clone(), DType::F32), "{k}");
        assert_eq!(f32s(t), as_f32(r(shape.iter().product())), "{k}");
    }
    let t = sd.get("dtype.f64").unwrap();
    assert_eq!((t.shape(), t.to_vec::<f64>()?), (vec![2, 3], r(6)));
    // PyTorch converts float64 -> float16/bfloat16 through float32
    let t = sd.get("dtype.f16").unwrap();
    assert_eq!(t.dtype(), DType::F16);
    let want: Vec<f16> = r(5).iter().map(|&x| f16::from_f32(x as f32)).collect();
    assert_eq!(t.to_vec::<f16>()?, want);
    let t = sd.get("dtype.bf16").unwrap();
    let want: Vec<bf16> = r(5).iter().map(|&x| bf16::from_f32(x as f32)).collect();
    assert_eq!(t.to_vec::<bf16>()?, want);
    assert_eq!(
        sd.get("dtype.i64").unwrap().to_vec::<i64>()?,
        vec![-3, 0, 1 << 40]
    );
    let t = sd.get("dtype.i32").unwrap();
    assert_eq!((t.shape(), t.to_vec::<i32>()?), (vec![1, 2], vec![-7, 8]));
    assert_eq!(sd.get("dtype.u8").unwrap().to_vec::<u8>()?, vec![0, 255]);
    assert_eq!(
        sd.get("dtype.bool").unwrap().to_vec::<bool>()?,
        vec![true, false, true]
    );
    assert_eq!(
        sd.get("dtype.c64").unwrap().to_vec::<C64>()?,
        vec![C64::new(1.0, 2.0), C64::new(0.0, -0.5)]
    );
    let t = sd.get("dtype.scalar").unwrap();
    assert_eq!((t.shape(), t.item::<f32>()?), (vec![], 2.5));
    assert_eq!(sd.get("dtype.empty").unwrap().shape(), vec![0, 3]);

    // the model part loads into the same architecture; the extra tensors are reported
    let m = mlp(DType::F32)?;
    let e = nn::load_into(FIXTURE, &m).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("dtype.f64"), "{e}");
    let mut model_sd = StateDict::new();
    for (k, t) in sd.iter().filter(|(k, _)| !k.starts_with("dtype.")) {
        model_sd.insert(k, t)?;
    }
    m.load_state_dict(&model_sd, true)?;
    // PyTorch: model(torch.ones(1, 3)) with these weights
    let y = m
        .forward(&Tensor::ones(&[1, 3], DType::F32)?)?
        .to_vec::<f32>()?;
    let h: Vec<f32> = (0..4)
        .map(|o| {
            let w = as_f32(r(12));
            let b = as_f32(r(4));
            (w[o * 3] + w[o * 3 + 1] + w[o * 3 + 2] + b[o]).max(0.0)
        })
        .collect();
    let (w2, b2) = (as_f32(r(8)), as_f32(r(2)));
    for o in 0..2 {
        let want: f32 = (0..4).map(|i| w2[o * 4 + i] * h[i]).sum::<f32>() + b2[o];
        assert!((y[o] - want).abs() < 1e-5, "{y:?}");
    }
    Ok(())
}

/// Writes the file that `tools/check_safetensors.py` expects.
fn write_for_python(path: &std::path::Path) -> R {
    let m = mlp(DType::F32)?;
    let mut sd = StateDict::new();
    for (k, p) in m.named_parameters() {
        sd.insert(k, &ramp_f32(&p.shape()))?;
    }
    m.load_state_dict(&sd, true)?;
    let mut sd = m.state_dict()?;
    sd.insert("extra.f64", &Tensor::from_vec(ramp(6), &[2, 3])?)?;
    sd.insert(
        "extra.i64",
        &Tensor::from_vec(vec![-3i64, 0, 1 << 40], &[3])?,
    )?;
    sd.insert("extra.bool", &Tensor::from_vec(vec![true, false], &[2])?)?;
    sd.save(path)
}

#[test]
fn file_for_python_round_trips_here() -> R {
    let path = tmp("for_python_local");
    write_for_python(&path)?;
    let sd = StateDict::load(&path)?;
    assert_eq!(sd.len(), 7);
    assert_eq!(
        sd.get("0.weight").unwrap().to_vec::<f32>()?,
        ramp_f32(&[4, 3]).to_vec::<f32>()?
    );
    Ok(())
}

/// Needs python3 with torch and safetensors:
/// `cargo test --release --test main -- checkpoint:: --ignored`.
#[test]
#[ignore = "needs python3 with torch and safetensors"]
fn python_loads_our_file() -> R {
    let path = tmp("for_python");
    write_for_python(&path)?;
    let script = concat!(env!("CARGO_MANIFEST_DIR"), "/tools/check_safetensors.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&path)
        .output()
        .expect("python3 runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with("ok: 7 tensors match"), "{text}");
    Ok(())
}
