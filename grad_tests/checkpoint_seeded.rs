//! Activation checkpointing with the process-global state it touches: dropout inside a
//! checkpoint draws the same masks when recomputed (gradients equal the plain run's, and the
//! generator continues where the plain run's does), and the peak live bytes of a deep MLP's
//! training step fall (measured with the `memory_allocated` gauge; printed with
//! `--nocapture`). Both hold `serial`: no other draw or allocation runs meanwhile.

use crate::common::R;
use tapegrad::autograd::checkpoint;
use tapegrad::{DType, Result, Tensor, manual_seed};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_dtype(DType::F64).unwrap().to_vec::<f64>().unwrap()
}

fn dropout_block(i: &[Tensor], w: &Tensor, v: &Tensor) -> Result<Vec<Tensor>> {
    let h = i[0].matmul(w)?.dropout(0.5, true)?.tanh()?;
    Ok(vec![h.matmul(v)?.dropout(0.3, true)?.mul(&i[1])?])
}

#[test]
fn dropout_masks_match_when_recomputed() -> R {
    let _serial = crate::serial();
    let run = |ck: bool| -> Result<Vec<Vec<f64>>> {
        manual_seed(11);
        let x = Tensor::randn(&[4, 6], DType::F64)?.requires_grad_(true)?;
        let s = Tensor::randn(&[4, 5], DType::F64)?;
        let w = Tensor::randn(&[6, 8], DType::F64)?.requires_grad_(true)?;
        let v = Tensor::randn(&[8, 5], DType::F64)?.requires_grad_(true)?;
        let out = if ck {
            let (w2, v2) = (w.clone(), v.clone());
            checkpoint(move |i| dropout_block(i, &w2, &v2), &[&x, &s])?
        } else {
            dropout_block(&[x.clone(), s.clone()], &w, &v)?
        };
        out[0].pow(2.0)?.sum()?.backward()?;
        // the generator after the backward: where the plain run left it
        let next = Tensor::rand(&[3], DType::F64)?;
        Ok(vec![
            vals(&out[0]),
            vals(&x.grad().unwrap()),
            vals(&w.grad().unwrap()),
            vals(&v.grad().unwrap()),
            vals(&next),
        ])
    };
    let plain = run(false)?;
    let ck = run(true)?;
    assert_eq!(ck, plain);
    // dropout did zero something (the masks matter)
    assert!(plain[2].contains(&0.0) || plain[0].contains(&0.0));
    Ok(())
}

/// Peak live bytes above the parameters during one forward + backward of a `depth`-layer tanh
/// MLP (width `width`, batch `batch`, f32), checkpointed in segments of `segment` layers (0: not
/// checkpointed), with the gradients of the first layer's weight for comparison.
fn mlp_peak(depth: usize, width: usize, batch: usize, segment: usize) -> Result<(usize, Vec<f64>)> {
    manual_seed(5);
    let ws: Vec<Tensor> = (0..depth)
        .map(|_| {
            Tensor::randn(&[width, width], DType::F32)?
                .mul(1.0 / (width as f64).sqrt())?
                .requires_grad_(true)
        })
        .collect::<Result<_>>()?;
    let x = Tensor::randn(&[batch, width], DType::F32)?;
    let layers = |h: &Tensor, ws: &[Tensor]| -> Result<Tensor> {
        let mut h = h.clone();
        for w in ws {
            h = h.matmul(w)?.tanh()?;
        }
        Ok(h)
    };
    tapegrad::release_cached_memory();
    let base = tapegrad::memory_allocated();
    tapegrad::reset_peak_memory_stats();
    let mut h = x.clone();
    if segment == 0 {
        h = layers(&h, &ws)?;
    } else {
        for seg in ws.chunks(segment) {
            let seg = seg.to_vec();
            h = checkpoint(move |i| Ok(vec![layers(&i[0], &seg)?]), &[&h])?.remove(0);
        }
    }
    h.sum()?.backward()?;
    let peak = tapegrad::max_memory_allocated() - base;
    Ok((peak, vals(&ws[0].grad().unwrap())))
}

#[test]
fn checkpointing_a_deep_mlp_lowers_peak_memory() -> R {
    let _serial = crate::serial();
    let (depth, width, batch) = (32, 128, 2048);
    let (plain, g_plain) = mlp_peak(depth, width, batch, 0)?;
    let (ck, g_ck) = mlp_peak(depth, width, batch, 4)?;
    assert_eq!(g_ck, g_plain, "checkpointing changes no gradient");
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    eprintln!(
        "checkpoint memory: {depth}-layer tanh MLP, width {width}, batch {batch}, f32: peak above the parameters {:.1} MiB plain, {:.1} MiB checkpointed every 4 layers ({:.2}x)",
        mib(plain),
        mib(ck),
        plain as f64 / ck as f64
    );
    // plain keeps one 1 MiB activation per layer (32 MiB); checkpointed, the 8 segment
    // boundaries plus one segment's 4 recomputed activations (12 MiB); both hold the weight
    // gradients (2 MiB) and the backward's temporaries
    assert!(
        ck * 3 < plain * 2,
        "checkpointed {ck} bytes vs plain {plain} bytes"
    );
    Ok(())
}
