//! Criterion benches of the reduction family: full and per-dim sums, max, softmax-style
//! reductions, on contiguous and transposed inputs.

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tapegrad::{DType, Tensor};

fn reductions(c: &mut Criterion) {
    let mut g = c.benchmark_group("reduce");
    let n = 1usize << 22;
    let a = Tensor::randn(&[n], DType::F32).unwrap();
    g.throughput(Throughput::Bytes(4 * n as u64));
    g.bench_function("sum_4M", |b| b.iter(|| black_box(a.sum().unwrap())));
    g.bench_function("amax_4M", |b| {
        b.iter(|| black_box(a.amax(&[0], false).unwrap()))
    });
    let m = Tensor::randn(&[2048, 2048], DType::F32).unwrap();
    g.bench_function("sum_dim1_2048x2048", |b| {
        b.iter(|| black_box(m.sum_dims(&[1], false).unwrap()))
    });
    g.bench_function("sum_dim0_2048x2048", |b| {
        b.iter(|| black_box(m.sum_dims(&[0], false).unwrap()))
    });
    let s = Tensor::randn(&[128, 1000], DType::F32).unwrap();
    g.throughput(Throughput::Elements(128 * 1000));
    g.bench_function("log_softmax_128x1000", |b| {
        b.iter(|| black_box(s.log_softmax(1).unwrap()))
    });
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = reductions
}
criterion_main!(benches);
