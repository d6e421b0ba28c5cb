//! nn modules: shapes, initialisation statistics, train/eval behaviour (also through nested
//! `Sequential`), PyTorch parameter names, gradients reaching every parameter, gradchecks.
//!
//! The seeded generator is process-global and tests run on parallel threads, so no test here
//! depends on a particular seed: statistics use large samples and loose (≥ 5 sigma) bounds.

use crate::common::R;
use tapegrad::autograd::gradcheck;
use tapegrad::nn::{
    Dropout, Embedding, Forward, Gelu, LayerNorm, Linear, Module, Relu, Sequential, Sigmoid, Tanh,
    init,
};
use tapegrad::{DType, ErrorKind, Tensor};

fn stats(t: &Tensor) -> (f64, f64) {
    let v = t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap();
    let n = v.len() as f64;
    let mean = v.iter().sum::<f64>() / n;
    let var = v.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n;
    (mean, var.sqrt())
}

fn assert_near(got: f64, want: f64, rel: f64, what: &str) {
    assert!(
        (got - want).abs() <= rel * want.abs(),
        "{what}: got {got}, want {want} (±{rel} relative)"
    );
}

#[test]
fn layer_shapes_and_dtypes() -> R {
    let l = Linear::new(5, 3, true, DType::F64)?;
    assert_eq!(l.weight.shape(), vec![3, 5]);
    assert_eq!(l.bias.as_ref().unwrap().shape(), vec![3]);
    assert_eq!(
        l.forward(&Tensor::ones(&[2, 7, 5], DType::F64)?)?.shape(),
        vec![2, 7, 3]
    );
    assert!(Linear::new(5, 3, false, DType::F32)?.bias.is_none());

    let e = Embedding::new(11, 4, DType::F32)?;
    let idx = Tensor::from_vec(vec![0i64, 10, 3, 3, 7, 1], &[2, 3])?;
    let y = e.forward(&idx)?;
    assert_eq!((y.shape(), y.dtype()), (vec![2, 3, 4], DType::F32));
    // rows are the table's rows
    let w = e.weight.to_vec::<f32>()?;
    assert_eq!(y.to_vec::<f32>()?[4..8], w[40..44]);

    let ln = LayerNorm::new(&[3, 4], 1e-5, true, DType::F32)?;
    assert_eq!(ln.weight.as_ref().unwrap().to_vec::<f32>()?, vec![1.0; 12]);
    assert_eq!(ln.bias.as_ref().unwrap().to_vec::<f32>()?, vec![0.0; 12]);
    let x = Tensor::randn(&[2, 3, 4], DType::F32)?;
    let y = ln.forward(&x)?;
    assert_eq!(y.shape(), vec![2, 3, 4]);
    // each [3, 4] slab is normalised: mean 0, (biased) std 1
    for s in y.to_vec::<f32>()?.chunks(12) {
        let m = s.iter().sum::<f32>() / 12.0;
        let v = s.iter().map(|a| (a - m) * (a - m)).sum::<f32>() / 12.0;
        assert!(
            m.abs() < 1e-5 && (v - 1.0).abs() < 1e-3,
            "mean {m}, var {v}"
        );
    }
    assert!(
        LayerNorm::new(&[4], 1e-5, false, DType::F32)?
            .named_parameters()
            .is_empty()
    );

    let a = Tensor::from_vec(vec![-1.0f64, 0.0, 2.0], &[3])?;
    assert_eq!(Relu.forward(&a)?.to_vec::<f64>()?, vec![0.0, 0.0, 2.0]);
    assert_eq!(
        Tanh.forward(&a)?.to_vec::<f64>()?,
        a.tanh()?.to_vec::<f64>()?
    );
    assert_eq!(
        Sigmoid.forward(&a)?.to_vec::<f64>()?,
        a.sigmoid()?.to_vec::<f64>()?
    );
    for approximate in [tapegrad::Approximate::None, tapegrad::Approximate::Tanh] {
        assert_eq!(
            Gelu { approximate }.forward(&a)?.to_vec::<f64>()?,
            a.gelu(approximate)?.to_vec::<f64>()?
        );
    }
    Ok(())
}

#[test]
fn bad_arguments_are_errors() -> R {
    assert_eq!(
        Dropout::new(1.5).err().unwrap().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        Dropout::new(-0.1).err().unwrap().kind(),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        LayerNorm::new((), 1e-5, true, DType::F32)
            .err()
            .unwrap()
            .kind(),
        ErrorKind::InvalidArgument
    );
    let e = Embedding::new(4, 2, DType::F32)?;
    let bad = e.forward(&Tensor::from_vec(vec![4i64], &[1])?).unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::IndexOutOfRange);
    let ln = LayerNorm::new(&[4], 1e-5, true, DType::F32)?;
    let bad = ln.forward(&Tensor::ones(&[2, 3], DType::F32)?).unwrap_err();
    assert_eq!(bad.kind(), ErrorKind::ShapeMismatch);
    let l = Linear::new(4, 2, true, DType::F32)?;
    assert!(l.forward(&Tensor::ones(&[2, 3], DType::F32)?).is_err());
    Ok(())
}

#[test]
fn init_statistics_match_pytorch_formulas() -> R {
    // kaiming_normal(a=0), fan_in = 512 * 3: std = sqrt(2 / 1536)
    let w = init::kaiming_normal(&[64, 512, 3], 0.0, DType::F64)?;
    let (m, s) = stats(&w);
    let want = (2.0f64 / 1536.0).sqrt();
    assert!(m.abs() < 5.0 * want / (w.numel() as f64).sqrt(), "mean {m}");
    assert_near(s, want, 0.02, "kaiming_normal std");
    // leaky slope a: gain sqrt(2 / (1 + a^2))
    let (_, s) = stats(&init::kaiming_normal(&[256, 400], 1.0, DType::F32)?);
    assert_near(s, (1.0f64 / 400.0).sqrt(), 0.02, "kaiming_normal(a=1) std");

    // xavier_normal: std = gain * sqrt(2 / (fan_in + fan_out))
    let (m, s) = stats(&init::xavier_normal(&[300, 500], 2.0, DType::F64)?);
    assert!(m.abs() < 1e-3, "mean {m}");
    assert_near(s, 2.0 * (2.0f64 / 800.0).sqrt(), 0.02, "xavier_normal std");

    // kaiming_uniform: U(-b, b), b = gain * sqrt(3 / fan_in); std = b / sqrt(3)
    let w = init::kaiming_uniform(&[200, 300], 0.0, DType::F64)?;
    let b = (2.0f64).sqrt() * (3.0f64 / 300.0).sqrt();
    let v = w.to_vec::<f64>()?;
    assert!(v.iter().all(|x| x.abs() <= b));
    assert!(
        v.iter().any(|x| x.abs() > 0.98 * b),
        "range is used up to the bound"
    );
    assert_near(stats(&w).1, b / 3f64.sqrt(), 0.02, "kaiming_uniform std");

    // xavier_uniform: b = gain * sqrt(6 / (fan_in + fan_out))
    let w = init::xavier_uniform(&[100, 500], 1.0, DType::F64)?;
    let b = (6.0f64 / 600.0).sqrt();
    assert_near(stats(&w).1, b / 3f64.sqrt(), 0.02, "xavier_uniform std");

    // nn.Linear: U(-1/sqrt(in), 1/sqrt(in)) for weight and bias
    let l = Linear::new(400, 300, true, DType::F64)?;
    let b = 1.0 / 20.0;
    assert!(l.weight.to_vec::<f64>()?.iter().all(|x| x.abs() <= b));
    assert_near(
        stats(&l.weight).1,
        b / 3f64.sqrt(),
        0.02,
        "Linear weight std",
    );
    assert!(
        l.bias
            .as_ref()
            .unwrap()
            .to_vec::<f64>()?
            .iter()
            .all(|x| x.abs() <= b)
    );

    // nn.Embedding: N(0, 1)
    let (m, s) = stats(&Embedding::new(500, 200, DType::F32)?.weight);
    assert!(m.abs() < 0.02, "mean {m}");
    assert_near(s, 1.0, 0.02, "Embedding std");

    // normal / uniform with explicit parameters
    let (m, s) = stats(&init::normal(&[100_000], 3.0, 0.5, DType::F64)?);
    assert_near(m, 3.0, 0.01, "normal mean");
    assert_near(s, 0.5, 0.02, "normal std");
    let u = init::uniform(&[100_000], 2.0, 4.0, DType::F64)?;
    assert!(u.to_vec::<f64>()?.iter().all(|x| (2.0..4.0).contains(x)));
    assert_near(stats(&u).0, 3.0, 0.01, "uniform mean");
    Ok(())
}

#[test]
fn dropout_follows_train_and_eval() -> R {
    let x = Tensor::ones(&[20_000], DType::F64)?;
    let mut d = Dropout::new(0.3)?;
    assert!(d.is_training());
    let y = d.forward(&x)?.to_vec::<f64>()?;
    let kept = y.iter().filter(|&&v| v != 0.0).count() as f64 / y.len() as f64;
    assert!((kept - 0.7).abs() < 0.02, "kept fraction {kept}");
    assert!(y.iter().all(|&v| v == 0.0 || (v - 1.0 / 0.7).abs() < 1e-12));
    d.eval();
    assert!(!d.is_training());
    assert_eq!(d.forward(&x)?.to_vec::<f64>()?, x.to_vec::<f64>()?);
    d.train(true);
    assert!(d.forward(&x)?.to_vec::<f64>()?.contains(&0.0));
    // p = 1 drops everything, p = 0 nothing
    assert_eq!(
        Dropout::new(1.0)?.forward(&x)?.to_vec::<f64>()?,
        vec![0.0; 20_000]
    );
    assert_eq!(
        Dropout::new(0.0)?.forward(&x)?.to_vec::<f64>()?,
        x.to_vec::<f64>()?
    );
    Ok(())
}

fn has_zero(t: &Tensor) -> bool {
    t.to_vec::<f64>().unwrap().contains(&0.0)
}

#[test]
fn train_and_eval_propagate_through_nested_sequential() -> R {
    let inner = Sequential::new().push(Dropout::new(0.5)?);
    let mut m = Sequential::new()
        .push(Dropout::new(0.5)?)
        .push(Sequential::new().push(inner));
    let x = Tensor::ones(&[4096], DType::F64)?;
    assert!(m.is_training());
    assert!(has_zero(&m.forward(&x)?));
    m.eval();
    assert!(!m.is_training());
    assert_eq!(m.forward(&x)?.to_vec::<f64>()?, vec![1.0; 4096]);
    m.train(true);
    // both levels drop again: kept fraction about 1/4, kept values scaled by 4
    let y = m.forward(&x)?.to_vec::<f64>()?;
    let kept = y.iter().filter(|&&v| v != 0.0).count() as f64 / y.len() as f64;
    assert!((kept - 0.25).abs() < 0.05, "kept {kept}");
    assert!(y.iter().all(|&v| v == 0.0 || v == 4.0));

    // a layer pushed into a container in eval mode is switched to eval too
    let mut c = Sequential::new();
    c.eval();
    let c = c.push(Dropout::new(0.9)?);
    assert_eq!(c.forward(&x)?.to_vec::<f64>()?, vec![1.0; 4096]);
    Ok(())
}

#[test]
fn parameter_names_follow_pytorch() -> R {
    // torch.nn.Sequential(Linear(4, 8), ReLU(), LayerNorm(8),
    //     Sequential(Linear(8, 8, bias=False), Dropout(0.1), GELU(), Linear(8, 2)), Tanh())
    // .named_parameters() gives exactly these names, in this order.
    let m = Sequential::new()
        .push(Linear::new(4, 8, true, DType::F32)?)
        .push(Relu)
        .push(LayerNorm::new(&[8], 1e-5, true, DType::F32)?)
        .push(
            Sequential::new()
                .push(Linear::new(8, 8, false, DType::F32)?)
                .push(Dropout::new(0.1)?)
                .push(Gelu::default())
                .push(Linear::new(8, 2, true, DType::F32)?),
        )
        .push(Tanh);
    let names: Vec<String> = m.named_parameters().into_iter().map(|(n, _)| n).collect();
    assert_eq!(
        names,
        [
            "0.weight",
            "0.bias",
            "2.weight",
            "2.bias",
            "3.0.weight",
            "3.3.weight",
            "3.3.bias"
        ]
    );
    let shapes: Vec<Vec<usize>> = m.parameters().iter().map(|p| p.shape()).collect();
    assert_eq!(
        shapes,
        vec![
            vec![8, 4],
            vec![8],
            vec![8],
            vec![8],
            vec![8, 8],
            vec![2, 8],
            vec![2]
        ]
    );
    assert!(
        m.parameters()
            .iter()
            .all(|p| p.requires_grad() && p.is_leaf())
    );
    assert_eq!(m.len(), 5);
    assert_eq!(
        Embedding::new(3, 2, DType::F32)?.named_parameters()[0].0,
        "weight"
    );
    Ok(())
}

#[test]
fn gradients_reach_every_parameter() -> R {
    let emb = Embedding::new(10, 6, DType::F64)?;
    let body = Sequential::new()
        .push(LayerNorm::new(&[6], 1e-5, true, DType::F64)?)
        .push(Linear::new(6, 5, true, DType::F64)?)
        .push(Gelu::default())
        .push(Dropout::new(0.2)?)
        .push(Linear::new(5, 4, true, DType::F64)?)
        .push(Sigmoid)
        .push(Linear::new(4, 3, true, DType::F64)?)
        .push(Tanh);
    let idx = Tensor::from_vec(vec![1i64, 4, 9, 4, 0, 2], &[2, 3])?;
    let y = body.forward(&emb.forward(&idx)?)?;
    assert_eq!(y.shape(), vec![2, 3, 3]);
    y.mul(&y)?.sum()?.backward()?;
    let mut all = emb.named_parameters();
    all.extend(body.named_parameters());
    for (n, p) in &all {
        let g = p.grad().unwrap_or_else(|| panic!("{n} has no grad"));
        assert_eq!(g.shape(), p.shape(), "{n}");
        assert!(
            g.to_vec::<f64>()?.iter().any(|&v| v != 0.0),
            "{n}: zero grad"
        );
    }
    // embedding rows that were not looked up get no gradient
    let ge = emb.weight.grad().unwrap().to_vec::<f64>()?;
    for row in [3usize, 5, 6, 7, 8] {
        assert!(
            ge[row * 6..row * 6 + 6].iter().all(|&v| v == 0.0),
            "row {row}"
        );
    }
    Ok(())
}

#[test]
fn module_gradchecks() -> R {
    let ln = LayerNorm::new(&[2, 3], 1e-5, true, DType::F64)?;
    let x = Tensor::randn(&[4, 2, 3], DType::F64)?.requires_grad_(true)?;
    let w = Tensor::randn(&[2, 3], DType::F64)?.requires_grad_(true)?;
    let b = Tensor::randn(&[2, 3], DType::F64)?.requires_grad_(true)?;
    gradcheck(
        |v| {
            let m = LayerNorm {
                weight: Some(v[1].clone()),
                bias: Some(v[2].clone()),
                ..LayerNorm::new(&[2, 3], ln.eps, false, DType::F64)?
            };
            m.forward(&v[0])
        },
        &[x.clone(), w, b],
        Default::default(),
    )?;

    let table = Tensor::randn(&[5, 3], DType::F64)?.requires_grad_(true)?;
    let idx = Tensor::from_vec(vec![4i64, 0, 4, 2], &[2, 2])?;
    gradcheck(
        |v| {
            Embedding {
                weight: v[0].clone(),
                padding_idx: None,
            }
            .forward(&idx)
        },
        &[table],
        Default::default(),
    )?;

    let lw = Tensor::randn(&[3, 3], DType::F64)?.requires_grad_(true)?;
    let lb = Tensor::randn(&[3], DType::F64)?.requires_grad_(true)?;
    let net = |v: &[Tensor]| {
        Sequential::new()
            .push(Linear {
                weight: v[1].clone(),
                bias: Some(v[2].clone()),
            })
            .push(Tanh)
            .push(Gelu {
                approximate: tapegrad::Approximate::Tanh,
            })
            .push(Sigmoid)
            .forward(&v[0])
    };
    gradcheck(net, &[x, lw, lb], Default::default())?;
    Ok(())
}

#[test]
fn embedding_with_padding_idx() -> R {
    let e = Embedding::with_padding_idx(6, 4, 2, DType::F32)?;
    assert_eq!(e.padding_idx, Some(2));
    assert_eq!(e.weight.shape(), vec![6, 4]);
    assert!(e.weight.requires_grad() && e.weight.is_leaf());
    let w = e.weight.to_vec::<f32>()?;
    assert!(w[8..12].iter().all(|&v| v == 0.0), "padding row is zero");
    assert!(
        w.iter()
            .enumerate()
            .all(|(i, &v)| (8..12).contains(&i) || v != 0.0)
    );
    // negative padding_idx counts from the end, like PyTorch
    assert_eq!(
        Embedding::with_padding_idx(6, 4, -1, DType::F64)?.padding_idx,
        Some(5)
    );
    assert_eq!(
        Embedding::with_padding_idx(6, 4, -6, DType::F64)?.padding_idx,
        Some(0)
    );
    // PyTorch: AssertionError "Padding_idx must be within num_embeddings"
    for p in [6, -7, 100] {
        let err = Embedding::with_padding_idx(6, 4, p, DType::F64)
            .err()
            .unwrap();
        assert_eq!(err.kind(), ErrorKind::InvalidArgument);
        assert!(
            err.message()
                .contains("Padding_idx must be within num_embeddings")
        );
    }
    // PyTorch: Embedding(0, 3, padding_idx=0) fails filling row 0 (IndexError)
    let err = Embedding::with_padding_idx(0, 3, 0, DType::F64)
        .err()
        .unwrap();
    assert_eq!(err.kind(), ErrorKind::IndexOutOfRange);

    // training keeps the padding row at zero: it never gets a gradient
    let e = Embedding::with_padding_idx(5, 3, 0, DType::F64)?;
    let idx = Tensor::from_vec(vec![0i64, 3, 0, 1, 0, 0], &[2, 3])?;
    let mut opt = tapegrad::optim::Sgd::new(e.parameters(), tapegrad::optim::SgdConfig::new(0.01))?;
    for _ in 0..3 {
        use tapegrad::optim::Optimizer;
        opt.zero_grad()?;
        let y = e.forward(&idx)?;
        assert_eq!(y.shape(), vec![2, 3, 3]);
        y.mul(&y)?.add(&y)?.sum()?.backward()?;
        let g = e.weight.grad().unwrap().to_vec::<f64>()?;
        assert_eq!(&g[0..3], &[0.0; 3]);
        assert!(
            g[3..6].iter().all(|&v| v != 0.0) && g[9..12].iter().all(|&v| v != 0.0),
            "{g:?}"
        );
        assert_eq!(&g[6..9], &[0.0; 3], "row 2 is not looked up");
        opt.step()?;
    }
    assert_eq!(e.weight.to_vec::<f64>()?[0..3], [0.0; 3]);
    Ok(())
}

#[test]
fn embedding_from_pretrained() -> R {
    let table = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[3, 2])?;
    let frozen = Embedding::from_pretrained(&table, true, None)?;
    assert!(!frozen.weight.requires_grad());
    assert!(
        frozen.weight.shares_storage(&table),
        "like Parameter(embeddings)"
    );
    assert_eq!(frozen.padding_idx, None);
    let idx = Tensor::from_vec(vec![2i64, 0], &[2])?;
    assert_eq!(
        frozen.forward(&idx)?.to_vec::<f64>()?,
        vec![5.0, 6.0, 1.0, 2.0]
    );
    // trainable with a padding row: the row keeps its values (PyTorch does not zero it here)
    // but gets no gradient
    let e = Embedding::from_pretrained(&table, false, Some(-1))?;
    assert_eq!(e.padding_idx, Some(2));
    assert!(e.weight.requires_grad() && e.weight.is_leaf());
    let y = e.forward(&idx)?;
    assert_eq!(y.to_vec::<f64>()?, vec![5.0, 6.0, 1.0, 2.0]);
    y.sum()?.backward()?;
    assert_eq!(
        e.weight.grad().unwrap().to_vec::<f64>()?,
        vec![1.0, 1.0, 0.0, 0.0, 0.0, 0.0]
    );
    assert!(table.grad().is_none());
    // PyTorch: "Embeddings parameter is expected to be 2-dimensional"; padding checked too
    let err = Embedding::from_pretrained(&table.view(&[6])?, true, None)
        .err()
        .unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert!(err.message().contains("2-dimensional"));
    let err = Embedding::from_pretrained(&table, true, Some(3))
        .err()
        .unwrap();
    assert_eq!(err.kind(), ErrorKind::InvalidArgument);
    assert_eq!(table.version(), 0);
    Ok(())
}
