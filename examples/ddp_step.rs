//! Times one data-parallel training step of an MLP (64-1024-1024-1024-10, 2.2 M f32
//! parameters) three ways, alternated step by step so machine noise hits each alike, and prints
//! rank 0's medians:
//!
//! - `overlap`: `DistributedDataParallel` with 1 MiB buckets — each bucket's all-reduce runs on
//!   the communication thread while backward computes the earlier layers' gradients;
//! - `one bucket`: DDP with the default 25 MiB buckets — here one bucket, launched when the last
//!   gradient is ready;
//! - `serial, same buckets`: compute, then communicate — a plain backward, then the same 1 MiB
//!   buckets flattened and all-reduced (all started, then waited on);
//! - `serial, per tensor`: a plain backward, then one blocking all-reduce per gradient tensor.
//!
//! The global batch (`--batch`, default 256) is split over the ranks, so
//! `mpirun -np 2 ... ddp_step` with `RAYON_NUM_THREADS=1` and `mpirun -np 1` with
//! `RAYON_NUM_THREADS=2` compare 2 ranks x 1 thread against 1 rank x 2 threads on the same work.
//!
//! ```text
//! cargo build --release --features distributed --example ddp_step
//! RAYON_NUM_THREADS=1 mpirun -np 2 -x RAYON_NUM_THREADS target/release/examples/ddp_step
//! ```

use std::time::Instant;
use tapegrad::distributed::{DdpOptions, DistributedDataParallel, ProcessGroup, ReduceOp};
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::optim::{Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, Result, Tensor};

fn mlp() -> Result<Sequential> {
    tapegrad::manual_seed(0);
    Ok(Sequential::new()
        .push(Linear::new(64, 1024, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(1024, 1024, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(1024, 1024, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(1024, 10, true, DType::F32)?))
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let arg = |name: &str, default: usize| -> usize {
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .and_then(|s| s.parse().ok())
            .unwrap_or(default)
    };
    let (global, steps) = (arg("--batch", 256), arg("--steps", 30));
    let pg = ProcessGroup::init()?;
    let (rank, world) = (pg.rank(), pg.world_size());
    let b = global / world;
    tapegrad::manual_seed(1 + rank as u64);
    let x = Tensor::randn(&[b, 64], DType::F32)?;
    let y = Tensor::from_vec((0..b as i64).map(|i| i % 10).collect(), &[b])?;

    let small = DdpOptions {
        bucket_cap_mb: 1.0,
        ..Default::default()
    };
    let overlap = DistributedDataParallel::new(mlp()?, &pg, small)?;
    let one = DistributedDataParallel::new(mlp()?, &pg, DdpOptions::default())?;
    let serial = mlp()?;
    let per_tensor = mlp()?;
    // DDP's grouping: reverse parameter order, at most 1 MiB per bucket
    let mut buckets: Vec<Vec<Tensor>> = Vec::new();
    let mut bytes = 0;
    for p in serial.parameters().into_iter().rev() {
        let size = p.numel() * 4;
        if buckets.is_empty() || bytes + size > 1 << 20 {
            buckets.push(Vec::new());
            bytes = 0;
        }
        bytes += size;
        buckets.last_mut().expect("pushed").push(p);
    }
    let mut opts = [
        Sgd::new(overlap.module().parameters(), SgdConfig::new(0.01))?,
        Sgd::new(one.module().parameters(), SgdConfig::new(0.01))?,
        Sgd::new(serial.parameters(), SgdConfig::new(0.01))?,
        Sgd::new(per_tensor.parameters(), SgdConfig::new(0.01))?,
    ];
    let mut times = [Vec::new(), Vec::new(), Vec::new(), Vec::new()];
    for step in 0..steps + 3 {
        for (k, t) in times.iter_mut().enumerate() {
            let opt = &mut opts[k];
            pg.barrier()?;
            let t0 = Instant::now();
            opt.zero_grad()?;
            match k {
                0 => overlap
                    .forward(&x)?
                    .cross_entropy(&y, Default::default())?
                    .backward()?,
                1 => one
                    .forward(&x)?
                    .cross_entropy(&y, Default::default())?
                    .backward()?,
                2 => {
                    serial
                        .forward(&x)?
                        .cross_entropy(&y, Default::default())?
                        .backward()?;
                    let _g = tapegrad::autograd::no_grad();
                    let mut flats = Vec::new();
                    for b in &buckets {
                        let gs: Vec<Tensor> = b
                            .iter()
                            .map(|p| p.grad().expect("grad").reshape(&[-1]))
                            .collect::<Result<_>>()?;
                        let flat = Tensor::cat(&gs.iter().collect::<Vec<_>>(), 0)?;
                        flats.push((pg.all_reduce_async_(&flat, ReduceOp::Avg)?, flat, b));
                    }
                    for (work, flat, b) in flats {
                        work.wait()?;
                        let mut off = 0;
                        for p in b {
                            let g = p.grad().expect("grad");
                            let n = g.numel();
                            g.copy_(&flat.narrow(0, off as i64, n)?.reshape(&shape_of(&g))?)?;
                            off += n;
                        }
                    }
                }
                _ => {
                    per_tensor
                        .forward(&x)?
                        .cross_entropy(&y, Default::default())?
                        .backward()?;
                    let _g = tapegrad::autograd::no_grad();
                    for p in per_tensor.parameters() {
                        pg.all_reduce_(&p.grad().expect("grad"), ReduceOp::Avg)?;
                    }
                }
            }
            opt.step()?;
            if step >= 3 {
                t.push(t0.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    if rank == 0 {
        println!(
            "{world} rank(s) x {} thread(s), global batch {global} ({b} per rank), {} params, buckets {:?} / {:?}",
            rayon::current_num_threads(),
            serial.num_parameters(),
            overlap.bucket_sizes(),
            one.bucket_sizes()
        );
        for (name, t) in [
            "overlap (DDP, 1 MiB buckets)",
            "one bucket (DDP, 25 MiB)",
            "serial, same 1 MiB buckets",
            "serial, per tensor",
        ]
        .iter()
        .zip(times.iter_mut())
        {
            println!("{name:<36} median {:7.2} ms/step over {steps}", median(t));
        }
    }
    Ok(())
}

fn shape_of(t: &Tensor) -> Vec<i64> {
    t.shape().iter().map(|&d| d as i64).collect()
}
