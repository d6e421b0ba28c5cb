//! Criterion benches of the matmul family: square f32/f64 products, a batched product and the
//! shapes of an MLP layer (forward and both backward products).

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tapegrad::{DType, Tensor};

fn square(c: &mut Criterion) {
    let mut g = c.benchmark_group("matmul");
    for (n, dt) in [
        (64usize, DType::F32),
        (256, DType::F32),
        (512, DType::F32),
        (256, DType::F64),
    ] {
        let a = Tensor::randn(&[n, n], dt).unwrap();
        let b = Tensor::randn(&[n, n], dt).unwrap();
        g.throughput(Throughput::Elements(2 * (n * n * n) as u64));
        g.bench_with_input(BenchmarkId::new(format!("{dt:?}"), n), &n, |bch, _| {
            bch.iter(|| black_box(a.matmul(&b).unwrap()))
        });
    }
    let a = Tensor::randn(&[16, 64, 64], DType::F32).unwrap();
    g.throughput(Throughput::Elements(2 * 16 * 64 * 64 * 64));
    g.bench_function("bmm_16x64x64", |bch| {
        bch.iter(|| black_box(a.matmul(&a).unwrap()))
    });
    // an MLP layer 784 -> 512 at batch 128: forward, grad wrt input, grad wrt weight
    let x = Tensor::randn(&[128, 784], DType::F32).unwrap();
    let w = Tensor::randn(&[512, 784], DType::F32).unwrap();
    let gy = Tensor::randn(&[128, 512], DType::F32).unwrap();
    g.throughput(Throughput::Elements(2 * 128 * 784 * 512));
    g.bench_function("linear_fwd_128x784x512", |bch| {
        bch.iter(|| black_box(x.matmul(&w.t().unwrap()).unwrap()))
    });
    g.bench_function("linear_dx_128x512x784", |bch| {
        bch.iter(|| black_box(gy.matmul(&w).unwrap()))
    });
    g.bench_function("linear_dw_512x128x784", |bch| {
        bch.iter(|| black_box(gy.t().unwrap().matmul(&x).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = square
}
criterion_main!(benches);
