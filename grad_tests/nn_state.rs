//! The module system (issue 22): derived names, containers, buffers, state dicts with PyTorch's
//! keys and `copy_` casts, strict and non-strict loading, the in-place `to(dtype)` under a live
//! optimizer, train/eval, freezing, `apply`, parameter counts and the printed tree.
//!
//! The reference is `tools/record_nn_state.py`: a PyTorch model of nested containers (a
//! `ModuleList` of the blocks of `examples/transformer_block.rs`, included below, and a
//! `ModuleDict` holding a `Sequential` in a `Sequential`) with a float64 buffer, an int64 buffer
//! and a non-persistent one. Its keys, repr and outputs are in
//! `grad_tests/fixtures/nn_state/expected.json`, its weights in `model.safetensors`.

#[path = "../examples/transformer_block.rs"]
#[allow(dead_code)]
mod transformer_block;

use crate::common::{R, f64s};
use serde_json::Value;
use tapegrad::checkpoint::StateDict;
use tapegrad::nn::{
    self, Dropout, Embedding, Forward, Linear, Module, ModuleDict, ModuleList, Relu, Sequential,
};
use tapegrad::optim::{Adam, AdamConfig, Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, ErrorKind, Tensor};
use transformer_block::{Attention, Block};

const DIR: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/grad_tests/fixtures/nn_state");
const V: usize = 11;
const D: usize = 8;
const T: usize = 5;

/// The recorder's `Model`, field for field.
#[derive(Module)]
struct Model {
    #[module(buffer)]
    pos: Tensor,
    #[module(buffer)]
    steps: Tensor,
    #[module(buffer, persistent = false)]
    cache: Tensor,
    embed: Embedding,
    layers: ModuleList<Block>,
    heads: ModuleDict<Box<dyn Forward>>,
}

impl Model {
    fn new(dtype: DType) -> tapegrad::Result<Model> {
        let mut heads: ModuleDict<Box<dyn Forward>> = ModuleDict::new();
        heads.insert("lm", Box::new(Linear::new(D, V, false, dtype)?));
        let cls = Sequential::new().push(Sequential::new().push(Linear::new(D, 2, true, dtype)?));
        heads.insert("cls", Box::new(cls));
        Ok(Model {
            pos: Tensor::zeros(&[T, D], DType::F64)?,
            steps: Tensor::zeros((), DType::I64)?,
            cache: Tensor::zeros(&[2], DType::F32)?,
            embed: Embedding::new(V, D, dtype)?,
            layers: (0..2)
                .map(|_| Block::new(D, 2, 16, dtype))
                .collect::<tapegrad::Result<_>>()?,
            heads,
        })
    }

    /// `(lm logits, cls logits)` for `tokens` under `mask`: two inputs, two outputs.
    fn forward(&self, tokens: &Tensor, mask: &Tensor) -> tapegrad::Result<(Tensor, Tensor)> {
        let w = &self.embed.weight;
        let pos = self
            .pos
            .narrow(0, 0, tokens.size(1)?)?
            .to_dtype(w.dtype())?;
        let mut h = self.embed.forward(tokens)?.add(&pos)?;
        for block in &self.layers {
            h = block.forward(&h, mask)?;
        }
        let lm = self.heads["lm"].forward(&h)?;
        let cls = self.heads["cls"].forward(&h.mean(&[1], false, None)?)?;
        Ok((lm, cls))
    }
}

fn expected() -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/expected.json")).expect("fixture");
    serde_json::from_str(&text).expect("valid JSON")
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|s| s.as_str().expect("string").to_string())
        .collect()
}

fn floats(v: &Value) -> Vec<f64> {
    v.as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_f64().expect("number"))
        .collect()
}

fn keys(named: Vec<(String, Tensor)>) -> Vec<String> {
    named.into_iter().map(|(k, _)| k).collect()
}

fn inputs(e: &Value) -> tapegrad::Result<(Tensor, Tensor)> {
    let tokens: Vec<i64> = e["tokens"]
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_i64().expect("int"))
        .collect();
    let mask: Vec<bool> = e["mask"]
        .as_array()
        .expect("array")
        .iter()
        .map(|x| x.as_bool().expect("bool"))
        .collect();
    Ok((
        Tensor::from_vec(tokens, &[2, T])?,
        Tensor::from_vec(mask, &[T, T])?,
    ))
}

/// Asserts `|x - y| <= atol + rtol |y|` elementwise.
fn assert_near(got: &[f64], want: &[f64], atol: f64, rtol: f64) {
    assert_eq!(got.len(), want.len());
    for (i, (x, y)) in got.iter().zip(want).enumerate() {
        assert!(
            (x - y).abs() <= atol + rtol * y.abs(),
            "element {i}: {x} vs PyTorch {y}"
        );
    }
}

fn versions(m: &dyn Module) -> Vec<u64> {
    m.state_dict()
        .unwrap()
        .iter()
        .map(|(_, t)| t.version())
        .collect()
}

fn values(m: &dyn Module) -> Vec<Vec<f64>> {
    m.state_dict()
        .unwrap()
        .iter()
        .map(|(_, t)| f64s(&t.to_dtype(DType::F64).unwrap()))
        .collect()
}

#[test]
fn derived_names_match_pytorch_for_nested_containers() -> R {
    let e = expected();
    let m = Model::new(DType::F32)?;
    let sd = m.state_dict()?;
    let sd_keys: Vec<String> = sd.names().iter().map(|k| k.to_string()).collect();
    assert_eq!(sd_keys, strings(&e["state_dict_keys"]));
    assert!(sd_keys.contains(&"layers.0.attn.q.weight".to_string()));
    assert_eq!(sd.metadata("format"), Some("pt"));
    assert_eq!(keys(m.named_parameters()), strings(&e["parameter_keys"]));
    assert_eq!(keys(m.named_buffers()), strings(&e["buffer_keys"]));
    let modules: Vec<String> = m.named_modules().into_iter().map(|(k, _)| k).collect();
    assert_eq!(modules, strings(&e["module_keys"]));
    assert_eq!(
        m.num_parameters() as u64,
        e["num_parameters"].as_u64().unwrap()
    );
    let children: Vec<String> = m.named_children().into_iter().map(|(k, _)| k).collect();
    assert_eq!(children, ["embed", "layers", "heads"]);
    // buffers are never parameters
    for b in m.buffers() {
        assert!(!m.parameters().iter().any(|p| p.is_same(&b)));
    }
    Ok(())
}

#[test]
fn display_prints_pytorch_repr() -> R {
    let e = expected();
    let m = Model::new(DType::F32)?;
    // the tree is PyTorch's; type names are tapegrad's (`Gelu` for `GELU`)
    let want = e["repr"].as_str().unwrap().replace("GELU(", "Gelu(");
    assert_eq!(m.to_string(), want);
    assert_eq!((&m as &dyn Module).to_string(), want);
    assert_eq!(
        Linear::new(3, 2, false, DType::F32)?.to_string(),
        "Linear(in_features=3, out_features=2, bias=False)"
    );
    Ok(())
}

#[test]
fn pytorch_safetensors_with_mixed_dtypes_gives_pytorch_outputs() -> R {
    let e = expected();
    let (tokens, mask) = inputs(&e)?;
    let file = format!("{DIR}/model.safetensors");
    let sd = StateDict::load(&file)?;
    assert_eq!(sd.get("pos").unwrap().dtype(), DType::F64);
    assert_eq!(sd.get("steps").unwrap().dtype(), DType::I64);
    assert_eq!(sd.get("embed.weight").unwrap().dtype(), DType::F32);

    // float32 parameters, float64 and int64 buffers, as saved
    let mut m = Model::new(DType::F32)?;
    m.eval();
    nn::load_into(&file, &m)?;
    assert_eq!(m.steps.item::<i64>()?, 7);
    let (lm, cls) = m.forward(&tokens, &mask)?;
    assert_eq!(lm.shape(), vec![2, T, V]);
    assert_eq!(lm.dtype(), DType::F32);
    assert_near(&f64s(&lm), &floats(&e["lm_f32"]), 1e-5, 1e-5);
    assert_near(&f64s(&cls), &floats(&e["cls_f32"]), 1e-5, 1e-5);

    // model.double() in PyTorch, m.to(F64) here
    m.to(DType::F64)?;
    let (lm, cls) = m.forward(&tokens, &mask)?;
    assert_eq!(lm.dtype(), DType::F64);
    assert_near(&f64s(&lm), &floats(&e["lm_f64"]), 1e-12, 1e-12);
    assert_near(&f64s(&cls), &floats(&e["cls_f64"]), 1e-12, 1e-12);

    // a float64 model loads the float32 file by casting (copy_), giving the same outputs
    let mut m64 = Model::new(DType::F64)?;
    m64.eval();
    let keys = m64.load_state_dict(&sd, true)?;
    assert_eq!(keys, nn::IncompatibleKeys::default());
    assert_eq!(m64.embed.weight.dtype(), DType::F64);
    let (lm, _) = m64.forward(&tokens, &mask)?;
    assert_near(&f64s(&lm), &floats(&e["lm_f64"]), 1e-12, 1e-12);
    Ok(())
}

#[test]
fn load_state_dict_strict_reports_or_refuses_and_bumps_versions() -> R {
    let sd = StateDict::load(format!("{DIR}/model.safetensors"))?;
    let m = Model::new(DType::F32)?;
    let (v0, x0) = (versions(&m), values(&m));

    // strict with a missing and an unexpected key: an error, nothing changed
    let mut partial = StateDict::new();
    for (k, t) in sd.iter().filter(|(k, _)| *k != "heads.lm.weight") {
        partial.insert(k, t)?;
    }
    partial.insert("heads.extra.weight", &Tensor::ones(&[1], DType::F32)?)?;
    let err = m.load_state_dict(&partial, true).unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    let msg = err.to_string();
    assert!(
        msg.contains("heads.lm.weight") && msg.contains("heads.extra.weight"),
        "{msg}"
    );
    assert_eq!((versions(&m), values(&m)), (v0.clone(), x0.clone()));

    // a wrong shape is an error in both modes, checked before any copy
    let mut bad = StateDict::new();
    for (k, t) in sd.iter() {
        if k == "heads.cls.0.0.bias" {
            bad.insert(k, &Tensor::zeros(&[3], DType::F32)?)?;
        } else {
            bad.insert(k, t)?;
        }
    }
    for strict in [true, false] {
        let err = m.load_state_dict(&bad, strict).unwrap_err();
        assert_eq!(err.kind(), ErrorKind::ShapeMismatch);
        assert!(err.to_string().contains("heads.cls.0.0.bias"), "{err}");
        assert_eq!((versions(&m), values(&m)), (v0.clone(), x0.clone()));
    }

    // not strict: the rest loads, the keys are reported, each loaded tensor bumps once
    let keys = m.load_state_dict(&partial, false)?;
    assert_eq!(keys.missing_keys, ["heads.lm.weight"]);
    assert_eq!(keys.unexpected_keys, ["heads.extra.weight"]);
    let names = m.state_dict()?;
    for ((k, t), v) in names.iter().zip(&v0) {
        let bump = u64::from(k != "heads.lm.weight");
        assert_eq!(t.version(), v + bump, "{k}");
        if k != "heads.lm.weight" {
            assert_eq!(
                f64s(&t.to_dtype(DType::F64)?),
                f64s(&sd.get(k).unwrap().to_dtype(DType::F64)?)
            );
        }
    }
    // the non-persistent buffer is neither expected nor written
    assert!(names.get("cache").is_none());
    Ok(())
}

#[test]
fn to_dtype_keeps_optimizer_handles_and_training_continues() -> R {
    let e = expected();
    let (tokens, mask) = inputs(&e)?;
    let mut m = Model::new(DType::F32)?;
    m.eval();
    nn::load_into(format!("{DIR}/model.safetensors"), &m)?;
    let target = Tensor::from_vec(vec![0i64, 1], &[2])?;
    let loss = |m: &Model| -> tapegrad::Result<Tensor> {
        m.forward(&tokens, &mask)?
            .1
            .cross_entropy(&target, Default::default())
    };
    let mut opt = Sgd::new(m.parameters(), SgdConfig::new(0.05))?;
    let mut losses = Vec::new();
    for _ in 0..3 {
        let l = loss(&m)?;
        opt.zero_grad()?;
        l.backward()?;
        opt.step()?;
        losses.push(l.to_dtype(DType::F64)?.item::<f64>()?);
    }
    // gradients present when converting move too
    opt.zero_grad()?;
    let (lm, cls) = m.forward(&tokens, &mask)?;
    lm.sum()?.add(&cls.sum()?)?.backward()?;
    let handles = m.parameters();
    let versions: Vec<u64> = handles.iter().map(|p| p.version()).collect();
    m.to(DType::F64)?;
    let after = m.parameters();
    for ((p, q), v) in handles.iter().zip(&after).zip(versions) {
        assert!(p.is_same(q), "to(dtype) keeps the tensor objects");
        assert_eq!((p.dtype(), p.version()), (DType::F64, v));
        assert!(p.requires_grad() && p.is_leaf());
        assert_eq!(p.grad().unwrap().dtype(), DType::F64);
    }
    for (o, p) in opt.params().iter().zip(&after) {
        assert!(o.is_same(p));
    }
    assert_eq!(m.pos.dtype(), DType::F64);
    assert_eq!(m.cache.dtype(), DType::F64); // floating, not persistent: moved too
    assert_eq!(m.steps.dtype(), DType::I64); // integer buffer: left alone
    for _ in 0..3 {
        let l = loss(&m)?;
        assert_eq!(l.dtype(), DType::F64);
        opt.zero_grad()?;
        l.backward()?;
        opt.step()?;
        losses.push(l.item::<f64>()?);
    }
    assert!(
        losses.windows(2).all(|w| w[1] < w[0]),
        "loss keeps decreasing across to(F64): {losses:?}"
    );

    // Adam built before the move keeps the handles too and steps them in the new dtype
    let m2 = Model::new(DType::F32)?;
    let mut adam = Adam::new(m2.parameters(), AdamConfig::adam(1e-2))?;
    m2.to(DType::F64)?;
    let before = m2.heads["lm"].parameters()[0].copy()?;
    m2.forward(&tokens, &mask)?.0.sum()?.backward()?;
    adam.step()?;
    let w = &m2.heads["lm"].parameters()[0];
    assert_eq!(w.dtype(), DType::F64);
    assert_ne!(f64s(w), f64s(&before));

    // only floating and complex targets
    assert_eq!(
        m.to(DType::I64).unwrap_err().kind(),
        ErrorKind::InvalidArgument
    );
    Ok(())
}

#[test]
fn train_eval_reach_every_nested_module() -> R {
    let mut m = Model::new(DType::F32)?;
    let dropouts = |m: &Model| -> Vec<bool> {
        m.layers
            .iter()
            .map(|b| {
                let d = b.mlp.get(3).unwrap() as &dyn Module;
                d.downcast_ref::<Dropout>().unwrap().is_training()
            })
            .collect()
    };
    assert_eq!(dropouts(&m), [true, true]);
    m.eval();
    assert_eq!(dropouts(&m), [false, false]);
    m.train(true);
    assert_eq!(dropouts(&m), [true, true]);

    // a derived struct's own flag
    #[derive(Module)]
    struct Flagged {
        #[module(training)]
        training: bool,
        drop: Dropout,
    }
    let mut f = Flagged {
        training: true,
        drop: Dropout::new(0.5)?,
    };
    f.eval();
    assert!(!f.training && !f.drop.is_training());
    Ok(())
}

#[test]
fn freeze_zero_grad_apply_and_count() -> R {
    let mut m = Model::new(DType::F64)?;
    assert_eq!(
        m.num_parameters(),
        expected()["num_parameters"].as_u64().unwrap() as usize
    );
    // freeze the embedding only
    m.embed.requires_grad_(false)?;
    assert!(!m.embed.weight.requires_grad());
    assert!(m.layers[0].attn.q.weight.requires_grad());
    m.requires_grad_(false)?;
    assert!(m.parameters().iter().all(|p| !p.requires_grad()));
    m.requires_grad_(true)?;

    // zero_grad clears every gradient
    let (tokens, mask) = inputs(&expected())?;
    let (lm, cls) = m.forward(&tokens, &mask)?;
    lm.sum()?.add(&cls.sum()?)?.backward()?;
    assert!(m.parameters().iter().all(|p| p.grad().is_some()));
    m.zero_grad()?;
    assert!(m.parameters().iter().all(|p| p.grad().is_none()));

    // apply: children first, then the module; initialise every Linear bias to 0.5
    let mut seen = Vec::new();
    m.apply(&mut |sub: &mut dyn Module| {
        seen.push(sub.type_name());
        if let Some(b) = sub.downcast_mut::<Linear>().and_then(|l| l.bias.as_ref()) {
            b.detach().fill_(0.5)?;
        }
        Ok(())
    })?;
    assert_eq!(seen.first().map(String::as_str), Some("Embedding"));
    assert_eq!(seen.last().map(String::as_str), Some("Model"));
    assert_eq!(seen.len(), m.named_modules().len());
    assert_eq!(
        f64s(m.layers[1].attn.o.bias.as_ref().unwrap()),
        vec![0.5; D]
    );
    // an error stops the walk and is returned
    let err = m
        .apply(&mut |_| {
            Err(tapegrad::Error::new(
                ErrorKind::InvalidArgument,
                "init",
                "stop",
            ))
        })
        .unwrap_err();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    Ok(())
}

#[test]
fn derive_skips_options_tuples_and_tied_weights() -> R {
    // a skipped field, an absent optional child, a setting, a tuple struct
    #[derive(Module)]
    struct Pair(Linear, Option<Linear>);
    #[derive(Module)]
    struct Net {
        #[module(skip)]
        _scratch: Vec<Tensor>,
        width: usize,
        pair: Pair,
        act: Relu,
        #[module(buffer)]
        scale: Option<Tensor>,
    }
    let net = Net {
        _scratch: vec![Tensor::ones(&[1], DType::F32)?],
        width: 3,
        pair: Pair(Linear::new(3, 3, true, DType::F32)?, None),
        act: Relu,
        scale: None,
    };
    assert_eq!(net.width, 3);
    assert_eq!(
        keys(net.named_parameters()),
        ["pair.0.weight", "pair.0.bias"]
    );
    assert!(net.named_buffers().is_empty());
    let modules: Vec<String> = net.named_modules().into_iter().map(|(k, _)| k).collect();
    assert_eq!(modules, ["", "pair", "pair.0", "act"]);

    // a generic struct
    #[derive(Module)]
    struct Wrap<M: Module> {
        inner: M,
    }
    let w = Wrap {
        inner: Linear::new(2, 1, true, DType::F32)?,
    };
    assert_eq!(keys(w.named_parameters()), ["inner.weight", "inner.bias"]);
    assert_eq!(
        w.to_string(),
        "Wrap(\n  (inner): Linear(in_features=2, out_features=1, bias=True)\n)"
    );

    // tied weights: one parameter, two state-dict keys (as PyTorch)
    #[derive(Module)]
    struct Tied {
        a: Linear,
        b: Linear,
    }
    let a = Linear::new(2, 2, false, DType::F32)?;
    let b = Linear {
        weight: a.weight.clone(),
        bias: None,
    };
    let tied = Tied { a, b };
    assert_eq!(keys(tied.named_parameters()), ["a.weight"]);
    assert_eq!(tied.num_parameters(), 4);
    assert_eq!(tied.state_dict()?.names(), ["a.weight", "b.weight"]);
    Ok(())
}

#[test]
fn containers_nest_with_pytorch_keys() -> R {
    let mut blocks: ModuleList<Box<dyn Module>> = ModuleList::new();
    blocks.push(Box::new(Attention::new(4, 2, DType::F32)?));
    blocks.push(Box::new(Sequential::new().push(
        Sequential::new().push(Linear::new(4, 4, false, DType::F32)?),
    )));
    let mut dict: ModuleDict = ModuleDict::new();
    dict.insert("blocks", Box::new(blocks));
    let k = keys(dict.named_parameters());
    assert_eq!(k[0], "blocks.0.q.weight");
    assert_eq!(k.last().unwrap(), "blocks.1.0.0.weight");
    assert_eq!(k.len(), 9);
    assert_eq!(dict.len(), 1);
    assert!(dict.get("blocks").is_some());
    Ok(())
}

#[test]
fn to_dtype_preserves_strides_and_leaves_earlier_views_alone() -> R {
    // PyTorch: a transposed weight keeps strides (1, 2) through l.double(); a view or a
    // state-dict entry taken before keeps the old storage and dtype; the version is kept
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?
        .t()?
        .detach()
        .requires_grad_(true)?;
    let l = Linear {
        weight: w,
        bias: None,
    };
    let row = l.weight.detach().select(0, 0)?;
    let sd = l.state_dict()?;
    let version = l.weight.version();
    l.to(DType::F64)?;
    assert_eq!(l.weight.strides(), vec![1, 2]);
    assert_eq!(l.weight.dtype(), DType::F64);
    assert_eq!(f64s(&l.weight), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    assert_eq!(l.weight.version(), version);
    assert!(l.weight.is_leaf() && l.weight.requires_grad());
    assert_eq!(row.dtype(), DType::F32);
    assert_eq!(sd.get("weight").unwrap().dtype(), DType::F32);
    // the old storage no longer backs the weight: writing it leaves the weight alone
    row.detach().fill_(9.0)?;
    assert_eq!(f64s(&l.weight), vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]);
    // and back: f64 -> f16 -> f32 round trip of exactly representable values
    l.to(DType::F16)?;
    l.to(DType::F32)?;
    assert_eq!(
        l.weight.to_vec::<f32>()?,
        vec![1.0, 3.0, 5.0, 2.0, 4.0, 6.0]
    );
    let y = l.forward(&Tensor::ones(&[1, 3], DType::F32)?)?;
    y.sum()?.backward()?;
    assert_eq!(l.weight.grad().unwrap().dtype(), DType::F32);
    Ok(())
}
