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

#[path = "common/mod.rs"]
#[allow(dead_code)] // the progress bar serves the single-process examples
mod common;

use common::{Digits, Progress, accuracy};
use rand::SeedableRng;
use tapegrad::distributed::{
    DdpOptions, DistributedDataParallel, DistributedSampler, ProcessGroup, ReduceOp,
};
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::optim::{Adam, AdamConfig, Optimizer};
use tapegrad::{DType, Result, Tensor};

/// The test accuracy of `model` on the images `idx`.
fn test_accuracy(model: &Sequential, d: &Digits, idx: &[usize]) -> Result<f64> {
    let _g = tapegrad::autograd::no_grad();
    let (x, y) = d.batch(idx, &[64])?;
    accuracy(&model.forward(&x)?, &y)
}

fn main() -> Result<()> {
    let epochs = common::epochs_arg(10);
    let pg = ProcessGroup::init()?;
    let (rank, world) = (pg.rank(), pg.world_size());

    // the same split on every rank
    let data = Digits::load();
    let (train, test) = data.split(&mut rand::rngs::StdRng::seed_from_u64(0));
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

    let mut progress = Progress::new(rank == 0, false);
    for epoch in 1..=epochs {
        progress.epoch_start();
        sampler.set_epoch(epoch as u64);
        let mine: Vec<usize> = sampler.indices().iter().map(|&i| train[i]).collect();
        let mut total = 0.0f64;
        for chunk in mine.chunks(per_rank) {
            let (x, y) = data.batch(chunk, &[64])?;
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
            let acc = test_accuracy(ddp.module(), &data, &test)?;
            progress.epoch_end(epoch, s[0] / s[1], acc);
        }
    }
    progress.finish();
    Ok(())
}
