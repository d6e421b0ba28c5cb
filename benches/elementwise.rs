//! Criterion benches of the elementwise family: binary arithmetic (out of place, `out=`, in
//! place, broadcast, strided), unary math and dtype conversion, small and large.

use criterion::{BenchmarkId, Criterion, Throughput, criterion_group, criterion_main};
use std::hint::black_box;
use tapegrad::{DType, Tensor};

fn binary(c: &mut Criterion) {
    let mut g = c.benchmark_group("binary");
    for n in [16usize, 4096, 1 << 22] {
        let a = Tensor::randn(&[n], DType::F32).unwrap();
        let b = Tensor::randn(&[n], DType::F32).unwrap();
        let out = Tensor::empty(&[n], DType::F32).unwrap();
        g.throughput(Throughput::Bytes(12 * n as u64));
        g.bench_with_input(BenchmarkId::new("add", n), &n, |bch, _| {
            bch.iter(|| black_box(a.add(&b).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("add_out", n), &n, |bch, _| {
            bch.iter(|| black_box(a.add_out(&b, &out).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("mul_scalar", n), &n, |bch, _| {
            bch.iter(|| black_box(a.mul(1.5).unwrap()))
        });
        g.bench_with_input(BenchmarkId::new("add_inplace", n), &n, |bch, _| {
            bch.iter(|| black_box(a.add_(1.0).unwrap()))
        });
    }
    let m = Tensor::randn(&[1024, 1024], DType::F32).unwrap();
    let row = Tensor::randn(&[1024], DType::F32).unwrap();
    g.throughput(Throughput::Bytes(8 * (1 << 20)));
    g.bench_function("add_broadcast_row_1024x1024", |bch| {
        bch.iter(|| black_box(m.add(&row).unwrap()))
    });
    g.bench_function("add_transposed_1024x1024", |bch| {
        let mt = m.t().unwrap();
        bch.iter(|| black_box(m.add(&mt).unwrap()))
    });
    g.finish();
}

fn unary(c: &mut Criterion) {
    let mut g = c.benchmark_group("unary");
    let n = 1usize << 20;
    let a = Tensor::randn(&[n], DType::F32).unwrap();
    g.throughput(Throughput::Elements(n as u64));
    g.bench_function("exp_1M", |bch| bch.iter(|| black_box(a.exp().unwrap())));
    g.bench_function("relu_1M", |bch| bch.iter(|| black_box(a.relu().unwrap())));
    g.bench_function("to_f64_1M", |bch| {
        bch.iter(|| black_box(a.to_dtype(DType::F64).unwrap()))
    });
    g.finish();
}

fn copy(c: &mut Criterion) {
    let mut g = c.benchmark_group("copy");
    for n in [256usize, 4096] {
        let a = Tensor::randn(&[n, n], DType::F32).unwrap();
        g.throughput(Throughput::Bytes(8 * (n * n) as u64));
        g.bench_with_input(BenchmarkId::new("transpose_contiguous", n), &n, |bch, _| {
            bch.iter(|| black_box(a.t().unwrap().contiguous().unwrap()))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20);
    targets = binary, unary, copy
}
criterion_main!(benches);
