//! Data-parallel training of the digits MLP (64-256-10, as `train_mlp`) across the ranks of an
//! MPI job: each rank trains on its `DistributedSampler` shard of the 80% training split,
//! `DistributedDataParallel` averages the gradients, and rank 0 prints the per-epoch training
//! loss (averaged over all ranks) and the test accuracy.
//!
//! ```text
//! cargo build --release --features distributed --example train_ddp
//! mpirun -np 2 target/release/examples/train_ddp --epochs 10
//! ```
//! (as root add `--allow-run-as-root`; with more ranks than cores add `--oversubscribe`.) The
//! batch of 64 is global: each of N ranks takes 64 / N rows per step.

use rand::SeedableRng;
use rand::seq::SliceRandom;
use std::time::Instant;
use tapegrad::distributed::{
    DdpOptions, DistributedDataParallel, DistributedSampler, ProcessGroup, ReduceOp,
};
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result, Tensor};

struct Data {
    x: Vec<f32>,
    y: Vec<i64>,
}

fn load() -> Data {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/examples/data/digits.csv");
    let text =
        std::fs::read_to_string(path).expect("examples/data/digits.csv is part of the repository");
    let (mut x, mut y) = (Vec::new(), Vec::new());
    for line in text.lines().filter(|l| !l.is_empty()) {
        let v: Vec<f32> = line
            .split(',')
            .map(|s| s.trim().parse().expect("numeric CSV"))
            .collect();
        x.extend(v[..64].iter().map(|p| p / 16.0));
        y.push(v[64] as i64);
    }
    Data { x, y }
}

fn batch(d: &Data, idx: &[usize]) -> Result<(Tensor, Tensor)> {
    let mut xs = Vec::with_capacity(idx.len() * 64);
    for &i in idx {
        xs.extend_from_slice(&d.x[i * 64..(i + 1) * 64]);
    }
    let ys: Vec<i64> = idx.iter().map(|&i| d.y[i]).collect();
    Ok((
        Tensor::from_vec(xs, &[idx.len(), 64])?,
        Tensor::from_vec(ys, &[idx.len()])?,
    ))
}

fn accuracy(model: &Sequential, d: &Data, idx: &[usize]) -> Result<f64> {
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = batch(d, idx)?;
    let pred = model.forward(&x)?.argmax(Some(1), false)?.to_vec::<i64>()?;
    let y = y.to_vec::<i64>()?;
    let correct = pred.iter().zip(&y).filter(|(p, t)| p == t).count();
    Ok(correct as f64 / idx.len() as f64)
}

fn main() -> Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let epochs: u64 = args
        .iter()
        .position(|a| a == "--epochs")
        .and_then(|i| args.get(i + 1))
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let pg = ProcessGroup::init()?;
    let (rank, world) = (pg.rank(), pg.world_size());

    // the same split on every rank
    let data = load();
    let mut order: Vec<usize> = (0..data.y.len()).collect();
    order.shuffle(&mut rand::rngs::StdRng::seed_from_u64(0));
    let split = order.len() * 8 / 10;
    let (train, test) = (&order[..split], &order[split..]);
    let per_rank = (64 / world).max(1);
    if rank == 0 {
        println!(
            "digits: {} train / {} test images, 64-256-10 MLP, Adam lr 3e-3, {world} ranks x batch {per_rank}",
            train.len(),
            test.len()
        );
    }

    // each rank draws its own initial parameters; DDP starts all from rank 0's
    tapegrad::manual_seed(rank as u64);
    let model = Sequential::new()
        .push(Linear::new(64, 256, true, DType::F32)?)
        .push(Relu)
        .push(Linear::new(256, 10, true, DType::F32)?);
    let ddp = DistributedDataParallel::new(model, &pg, DdpOptions::default())?;
    let mut opt = Adam::new(ddp.module().parameters(), AdamConfig::adam(3e-3))?;
    let mut sampler = DistributedSampler::new(train.len(), world, rank, true, 0, false)?;

    let start = Instant::now();
    for epoch in 1..=epochs {
        let t0 = Instant::now();
        sampler.set_epoch(epoch);
        let mine: Vec<usize> = sampler.indices().iter().map(|&i| train[i]).collect();
        let mut total = 0.0f64;
        for chunk in mine.chunks(per_rank) {
            let (x, y) = batch(&data, chunk)?;
            let loss = ddp.forward(&x)?.cross_entropy(&y, Default::default())?;
            opt.zero_grad()?;
            loss.backward()?;
            opt.step()?;
            total += loss.item::<f32>()? as f64 * chunk.len() as f64;
        }
        // the mean training loss over every rank's samples
        let sums = Tensor::from_vec(vec![total, mine.len() as f64], &[2])?;
        pg.all_reduce_(&sums, ReduceOp::Sum)?;
        let s = sums.to_vec::<f64>()?;
        if rank == 0 {
            let acc = accuracy(ddp.module(), &data, test)?;
            println!(
                "epoch {epoch:>2}  loss {:.4}  test acc {:.3}  {:.0} ms",
                s[0] / s[1],
                acc,
                t0.elapsed().as_secs_f64() * 1e3
            );
        }
    }
    if rank == 0 {
        println!("train time: {:.2} s", start.elapsed().as_secs_f64());
    }
    Ok(())
}
