//! Criterion benches of autograd overhead: recording and running a chain of tiny ops, in-place
//! ops through views (CopySlices), and one MLP training step.

use criterion::{Criterion, criterion_group, criterion_main};
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::{CrossEntropyOptions, DType, Tensor};

fn overhead(c: &mut Criterion) {
    let mut g = c.benchmark_group("autograd");
    let x = Tensor::randn(&[16], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    g.bench_function("chain_1000ops_16", |b| {
        b.iter(|| {
            x.set_grad(None).unwrap();
            let mut y = x.clone();
            for _ in 0..500 {
                y = y.mul(1.0001).unwrap();
                y = y.add(0.1).unwrap();
            }
            y.sum().unwrap().backward().unwrap();
        })
    });
    g.bench_function("forward_only_1000ops_16", |b| {
        b.iter(|| {
            let mut y = x.clone();
            for _ in 0..500 {
                y = y.mul(1.0001).unwrap();
                y = y.add(0.1).unwrap();
            }
            y
        })
    });
    let v = Tensor::randn(&[1000], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    g.bench_function("inplace_view_100", |b| {
        b.iter(|| {
            v.set_grad(None).unwrap();
            let y = v.copy().unwrap();
            for i in 0..100 {
                y.narrow(0, 10 * i, 10).unwrap().mul_(2.0).unwrap();
            }
            y.sum().unwrap().backward().unwrap();
        })
    });
    tapegrad::manual_seed(0);
    let model = Sequential::new()
        .push(Linear::new(784, 512, true, DType::F32).unwrap())
        .push(Relu)
        .push(Linear::new(512, 512, true, DType::F32).unwrap())
        .push(Relu)
        .push(Linear::new(512, 10, true, DType::F32).unwrap());
    let xb = Tensor::randn(&[128, 784], DType::F32).unwrap();
    let target = Tensor::randint(0, 10, &[128]).unwrap();
    let params = model.parameters();
    g.sample_size(10);
    g.bench_function("mlp_step_b128", |b| {
        b.iter(|| {
            for p in &params {
                p.set_grad(None).unwrap();
            }
            let loss = model
                .forward(&xb)
                .unwrap()
                .cross_entropy(&target, CrossEntropyOptions::default())
                .unwrap();
            loss.backward().unwrap();
            let _ng = tapegrad::autograd::no_grad();
            for p in &params {
                p.add_alpha_(p.grad().unwrap(), -0.01).unwrap();
            }
        })
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = overhead
}
criterion_main!(benches);
