//! Workload benchmark: one line per workload, `name<TAB>figure<TAB>unit`, median of >= 5 timed
//! runs after a warm-up. Positional args select workloads by name; `--flags` are ignored.
//! `benches/torch_workloads.py` times the same workloads with PyTorch (2 threads).
//!
//! To add a workload: write a `fn w_<name>() -> f64` returning the figure and add one line to
//! [`WORKLOADS`].

use std::time::Instant;
use tapegrad::nn::{Forward, Linear, Module, Relu, Sequential};
use tapegrad::{CrossEntropyOptions, DType, Tensor};

type R = tapegrad::Result<()>;

/// Median seconds of `runs` timed calls of `f` after warm-up calls.
fn median(runs: usize, mut f: impl FnMut() -> R) -> f64 {
    // warm-up: at least two calls and 100 ms (a new worker thread may share a core with the
    // caller until the scheduler balances them, which takes a few milliseconds)
    let warm = Instant::now();
    let mut calls = 0;
    while calls < 2 || warm.elapsed().as_secs_f64() < 0.1 {
        f().expect("warm-up");
        calls += 1;
    }
    let mut ts: Vec<f64> = (0..runs.max(5))
        .map(|_| {
            let t = Instant::now();
            f().expect("run");
            t.elapsed().as_secs_f64()
        })
        .collect();
    ts.sort_by(|a, b| a.total_cmp(b));
    ts[ts.len() / 2]
}

/// Median seconds per call, where one timed run repeats `f` `reps` times (for calls too short
/// to time one by one).
fn median_per_call(runs: usize, reps: usize, mut f: impl FnMut() -> R) -> f64 {
    median(runs, || {
        for _ in 0..reps {
            f()?;
        }
        Ok(())
    }) / reps as f64
}

const N4M: usize = 1 << 22;
const N16M: usize = 1 << 24;

fn matmul(n: usize, dt: DType, runs: usize) -> f64 {
    let a = Tensor::randn(&[n, n], dt).unwrap();
    let b = Tensor::randn(&[n, n], dt).unwrap();
    let reps = (256 / n).pow(3).max(1);
    let t = median_per_call(runs, reps, || a.matmul(&b).map(|_| ()));
    2.0 * (n as f64).powi(3) / t / 1e9
}

fn w_matmul_f32_256() -> f64 {
    matmul(256, DType::F32, 21)
}
fn w_matmul_f32_512() -> f64 {
    matmul(512, DType::F32, 11)
}
fn w_matmul_f32_1024() -> f64 {
    matmul(1024, DType::F32, 7)
}
fn w_matmul_f32_2048() -> f64 {
    matmul(2048, DType::F32, 5)
}
fn w_matmul_f64_1024() -> f64 {
    matmul(1024, DType::F64, 5)
}

fn w_add_f32_4m() -> f64 {
    let a = Tensor::randn(&[N4M], DType::F32).unwrap();
    let b = Tensor::randn(&[N4M], DType::F32).unwrap();
    let t = median(21, || a.add(&b).map(|_| ()));
    12.0 * N4M as f64 / t / 1e9
}

fn w_add_out_f32_4m() -> f64 {
    let a = Tensor::randn(&[N4M], DType::F32).unwrap();
    let b = Tensor::randn(&[N4M], DType::F32).unwrap();
    let out = Tensor::empty(&[N4M], DType::F32).unwrap();
    let t = median(21, || a.add_out(&b, &out).map(|_| ()));
    12.0 * N4M as f64 / t / 1e9
}

fn w_add_inplace_f32_4m() -> f64 {
    let a = Tensor::randn(&[N4M], DType::F32).unwrap();
    let t = median(21, || a.add_(1.0).map(|_| ()));
    8.0 * N4M as f64 / t / 1e9
}

fn w_sum_f32_16m() -> f64 {
    let a = Tensor::randn(&[N16M], DType::F32).unwrap();
    let t = median(11, || a.sum().map(|_| ()));
    4.0 * N16M as f64 / t / 1e9
}

fn w_transpose_copy_4096() -> f64 {
    let n = 4096usize;
    let a = Tensor::randn(&[n, n], DType::F32).unwrap();
    let t = median(7, || a.t()?.contiguous().map(|_| ()));
    8.0 * (n * n) as f64 / t / 1e9
}

fn w_autograd_chain_1000ops() -> f64 {
    let x = Tensor::randn(&[16], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let t = median_per_call(11, 20, || {
        x.set_grad(None)?;
        let mut y = x.clone();
        for _ in 0..500 {
            y = y.mul(1.0001)?;
            y = y.add(0.1)?;
        }
        y.sum()?.backward()
    });
    t * 1e6 / 1000.0
}

fn w_inplace_view_100() -> f64 {
    let x = Tensor::randn(&[1000], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let t = median_per_call(11, 50, || {
        x.set_grad(None)?;
        let y = x.copy()?;
        for i in 0..100 {
            y.narrow(0, 10 * i, 10)?.mul_(2.0)?;
        }
        y.sum()?.backward()
    });
    t * 1e6 / 100.0
}

fn w_mlp_step_b128() -> f64 {
    tapegrad::manual_seed(0);
    let model = Sequential::new()
        .push(Linear::new(784, 512, true, DType::F32).unwrap())
        .push(Relu)
        .push(Linear::new(512, 512, true, DType::F32).unwrap())
        .push(Relu)
        .push(Linear::new(512, 10, true, DType::F32).unwrap());
    let x = Tensor::randn(&[128, 784], DType::F32).unwrap();
    let target = Tensor::randint(0, 10, &[128]).unwrap();
    let params = model.parameters();
    let lr = 0.01;
    let t = median(21, || {
        for p in &params {
            p.set_grad(None)?;
        }
        let loss = model
            .forward(&x)?
            .cross_entropy(&target, CrossEntropyOptions::default())?;
        loss.backward()?;
        let _g = tapegrad::autograd::no_grad();
        for p in &params {
            let g = p.grad().expect("every parameter gets a gradient");
            p.add_alpha_(&g, -lr)?;
        }
        Ok(())
    });
    t * 1e3
}

fn w_index_put_accumulate_1m() -> f64 {
    let idx = Tensor::randint(0, 1024, &[1 << 20]).unwrap();
    let vals = Tensor::randn(&[1 << 20, 64], DType::F32).unwrap();
    let x = Tensor::zeros(&[1024, 64], DType::F32).unwrap();
    let ix = [Some(idx)];
    let t = median(11, || x.index_put_(&ix, &vals, true).map(|_| ()));
    t * 1e3
}

// --- issue 29: row-wise ops, copy yardsticks, small matmuls ---

/// Logits `[4096, 1024]` f32 (the row-wise workloads' input).
fn rows_4096x1024() -> Tensor {
    tapegrad::manual_seed(0);
    Tensor::randn(&[4096, 1024], DType::F32).unwrap()
}

fn w_softmax_4096x1024() -> f64 {
    let x = rows_4096x1024();
    median(21, || x.softmax(-1).map(|_| ())) * 1e3
}

fn w_log_softmax_4096x1024() -> f64 {
    let x = rows_4096x1024();
    median(21, || x.log_softmax(-1).map(|_| ())) * 1e3
}

fn w_layer_norm_4096x1024() -> f64 {
    let x = rows_4096x1024();
    let w = Tensor::ones(&[1024], DType::F32).unwrap();
    let b = Tensor::zeros(&[1024], DType::F32).unwrap();
    median(21, || {
        x.layer_norm(&[1024], Some(&w), Some(&b), 1e-5).map(|_| ())
    }) * 1e3
}

fn w_cross_entropy_4096x1024() -> f64 {
    let x = rows_4096x1024().requires_grad_(true).unwrap();
    let target = Tensor::randint(0, 1024, &[4096]).unwrap();
    median(21, || {
        x.set_grad(None)?;
        x.cross_entropy(&target, CrossEntropyOptions::default())?
            .backward()
    }) * 1e3
}

/// `dst.copy_(src)` of `n` contiguous f32 into a preallocated buffer (GB/s = 8 n / t).
fn copy_f32(n: usize, runs: usize) -> f64 {
    let src = Tensor::randn(&[n], DType::F32).unwrap();
    let dst = Tensor::empty(&[n], DType::F32).unwrap();
    let t = median(runs, || dst.copy_(&src).map(|_| ()));
    8.0 * n as f64 / t / 1e9
}

fn w_copy_f32_4m() -> f64 {
    copy_f32(N4M, 21)
}
fn w_copy_f32_16m() -> f64 {
    copy_f32(N16M, 11)
}

fn w_matmul_f32_64() -> f64 {
    matmul(64, DType::F32, 21)
}
fn w_matmul_f32_128() -> f64 {
    matmul(128, DType::F32, 21)
}

/// 64 products of 128 x 128 f32 (GFLOP/s).
fn w_bmm_f32_b64_128() -> f64 {
    let a = Tensor::randn(&[64, 128, 128], DType::F32).unwrap();
    let b = Tensor::randn(&[64, 128, 128], DType::F32).unwrap();
    let t = median_per_call(21, 4, || a.bmm(&b).map(|_| ()));
    64.0 * 2.0 * 128f64.powi(3) / t / 1e9
}

fn w_conv2d_3x3_c64_56() -> f64 {
    let x = Tensor::randn(&[8, 64, 56, 56], DType::F32).unwrap();
    let w = Tensor::randn(&[64, 64, 3, 3], DType::F32).unwrap();
    let o = tapegrad::ConvOptions {
        padding: 1.into(),
        ..Default::default()
    };
    let t = median(11, || x.conv2d(&w, None, &o).map(|_| ()));
    2.0 * 8.0 * 64.0 * 56.0 * 56.0 * 64.0 * 9.0 / t / 1e9
}

fn w_conv2d_3x3_c64_56_fwdbwd() -> f64 {
    let x = Tensor::randn(&[8, 64, 56, 56], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let w = Tensor::randn(&[64, 64, 3, 3], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let o = tapegrad::ConvOptions {
        padding: 1.into(),
        ..Default::default()
    };
    let t = median(11, || {
        x.set_grad(None)?;
        w.set_grad(None)?;
        x.conv2d(&w, None, &o)?.sum()?.backward()
    });
    t * 1e3
}

// --- attention (issue 27) ---

fn sdpa_qkv(grad_q: bool) -> [Tensor; 3] {
    tapegrad::manual_seed(0);
    let r = || Tensor::randn(&[8, 8, 256, 64], DType::F32).unwrap();
    [r().requires_grad_(grad_q).unwrap(), r(), r()]
}

fn causal() -> tapegrad::SdpaOptions<'static> {
    tapegrad::SdpaOptions {
        is_causal: true,
        ..Default::default()
    }
}

fn w_sdpa_causal_b8h8t256d64() -> f64 {
    let [q, k, v] = sdpa_qkv(false);
    let t = median(11, || {
        Tensor::scaled_dot_product_attention(&q, &k, &v, causal()).map(|_| ())
    });
    t * 1e3
}

fn w_sdpa_causal_fwdbwd() -> f64 {
    let [q, k, v] = sdpa_qkv(true);
    let t = median(11, || {
        q.set_grad(None)?;
        Tensor::scaled_dot_product_attention(&q, &k, &v, causal())?
            .sum()?
            .backward()
    });
    t * 1e3
}

fn w_transformer_layer_step_b16t64d128() -> f64 {
    use tapegrad::nn::{EncoderLayerConfig, EncoderMasks, TransformerEncoderLayer};
    use tapegrad::optim::{Adam, AdamConfig, Optimizer};
    tapegrad::manual_seed(0);
    let cfg = EncoderLayerConfig {
        dim_feedforward: 512,
        dropout: 0.0,
        ..Default::default()
    };
    let layer = TransformerEncoderLayer::new(128, 4, cfg, DType::F32).unwrap();
    let x = Tensor::randn(&[16, 64, 128], DType::F32).unwrap();
    let params = layer.parameters();
    let mut opt = Adam::new(params.clone(), AdamConfig::adamw(1e-3)).unwrap();
    let t = median(21, || {
        for p in &params {
            p.set_grad(None)?;
        }
        let y = layer.forward(&x, EncoderMasks::default())?;
        y.pow(2.0)?.mean((), false, None)?.backward()?;
        opt.step()
    });
    t * 1e3
}

fn w_max_pool2d_c64_56() -> f64 {
    let x = Tensor::randn(&[8, 64, 56, 56], DType::F32).unwrap();
    let t = median(21, || x.max_pool2d(2, None, 0, 1, false).map(|_| ()));
    t * 1e3
}

fn w_batch_norm2d_train_c64_56() -> f64 {
    let x = Tensor::randn(&[8, 64, 56, 56], DType::F32).unwrap();
    let bn = tapegrad::nn::BatchNorm2d::new(64, 1e-5, Some(0.1), true, true, DType::F32).unwrap();
    let t = median(21, || bn.forward(&x).map(|_| ()));
    t * 1e3
}

// Transcendentals (issue 29): 2^22 f32 randn, fresh output, ms per call; gelu exact; the
// backward is `autograd::grad(y = gelu(x), x, g)` with the graph retained: the GeluBackward
// kernel given grad_output.
fn unary_ms(f: impl Fn(&Tensor) -> tapegrad::Result<Tensor>) -> f64 {
    let a = Tensor::randn(&[N4M], DType::F32).unwrap();
    median(21, || f(&a).map(|_| ())) * 1e3
}
fn w_exp_f32_4m() -> f64 {
    unary_ms(|a| a.exp())
}
fn w_tanh_f32_4m() -> f64 {
    unary_ms(|a| a.tanh())
}
fn w_gelu_f32_4m() -> f64 {
    unary_ms(|a| a.gelu(tapegrad::Approximate::None))
}
fn w_gelu_backward_f32_4m() -> f64 {
    let x = Tensor::randn(&[N4M], DType::F32)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let g = Tensor::randn(&[N4M], DType::F32).unwrap();
    let y = x.gelu(tapegrad::Approximate::None).unwrap();
    let (ys, xs, gs) = ([y], [x], [Some(g)]);
    median(21, || {
        tapegrad::autograd::grad(
            &ys,
            &xs,
            &gs,
            tapegrad::autograd::GradOptions::default().retain_graph(true),
        )
        .map(|_| ())
    }) * 1e3
}

// --- CNN step on digits-sized images (issue 27) ---

fn w_cnn_step_digits_b64() -> f64 {
    use tapegrad::nn::{BatchNorm2d, Conv2d, Flatten, MaxPool2d};
    use tapegrad::optim::{Adam, AdamConfig, Optimizer};
    tapegrad::manual_seed(0);
    let conv = |cin, cout| {
        let o = tapegrad::ConvOptions {
            padding: 1.into(),
            ..Default::default()
        };
        Conv2d::new(cin, cout, &[3], o, true, DType::F32).unwrap()
    };
    let bn = |c| BatchNorm2d::new(c, 1e-5, Some(0.1), true, true, DType::F32).unwrap();
    let pool = || MaxPool2d::new(2, None, 0, 1, false);
    let model = Sequential::new()
        .push(conv(1, 16))
        .push(bn(16))
        .push(Relu)
        .push(pool())
        .push(conv(16, 32))
        .push(bn(32))
        .push(Relu)
        .push(pool())
        .push(Flatten::new(1, -1))
        .push(Linear::new(128, 10, true, DType::F32).unwrap());
    let x = Tensor::randn(&[64, 1, 8, 8], DType::F32).unwrap();
    let target = Tensor::randint(0, 10, &[64]).unwrap();
    let mut opt = Adam::new(model.parameters(), AdamConfig::adam(1e-3)).unwrap();
    let t = median(51, || {
        opt.zero_grad()?;
        let loss = model
            .forward(&x)?
            .cross_entropy(&target, CrossEntropyOptions::default())?;
        loss.backward()?;
        opt.step()
    });
    t * 1e3
}

/// A workload: its name, unit and one timed run.
type Workload = (&'static str, &'static str, fn() -> f64);

/// (name, unit, workload): the registration table, in output order.
const WORKLOADS: &[Workload] = &[
    ("matmul_f32_256", "GFLOP/s", w_matmul_f32_256),
    ("matmul_f32_512", "GFLOP/s", w_matmul_f32_512),
    ("matmul_f32_1024", "GFLOP/s", w_matmul_f32_1024),
    ("matmul_f32_2048", "GFLOP/s", w_matmul_f32_2048),
    ("matmul_f64_1024", "GFLOP/s", w_matmul_f64_1024),
    ("add_f32_4M", "GB/s", w_add_f32_4m),
    ("add_out_f32_4M", "GB/s", w_add_out_f32_4m),
    ("add_inplace_f32_4M", "GB/s", w_add_inplace_f32_4m),
    ("sum_f32_16M", "GB/s", w_sum_f32_16m),
    ("transpose_copy_4096", "GB/s", w_transpose_copy_4096),
    ("autograd_chain_1000ops", "us/op", w_autograd_chain_1000ops),
    ("inplace_view_100", "us/op", w_inplace_view_100),
    ("mlp_step_b128", "ms", w_mlp_step_b128),
    ("index_put_accumulate_1M", "ms", w_index_put_accumulate_1m),
    ("conv2d_3x3_c64_56", "GFLOP/s", w_conv2d_3x3_c64_56),
    ("conv2d_3x3_c64_56_fwdbwd", "ms", w_conv2d_3x3_c64_56_fwdbwd),
    ("sdpa_causal_b8h8t256d64", "ms", w_sdpa_causal_b8h8t256d64),
    ("sdpa_causal_fwdbwd", "ms", w_sdpa_causal_fwdbwd),
    (
        "transformer_layer_step_b16t64d128",
        "ms",
        w_transformer_layer_step_b16t64d128,
    ),
    ("sparse_slice_csr_1M", "ms", || {
        sparse_workload("sparse_slice_csr_1M")
    }),
    ("sparse_slice_coo_1M", "ms", || {
        sparse_workload("sparse_slice_coo_1M")
    }),
    ("sparse_slice_csr_1M_backward", "ms", || {
        sparse_workload("sparse_slice_csr_1M_backward")
    }),
    ("sparse_slice_coo_1M_backward", "ms", || {
        sparse_workload("sparse_slice_coo_1M_backward")
    }),
    // issue 29: row-wise ops, copy yardsticks, small matmuls
    ("softmax_4096x1024", "ms", w_softmax_4096x1024),
    ("log_softmax_4096x1024", "ms", w_log_softmax_4096x1024),
    ("layer_norm_4096x1024", "ms", w_layer_norm_4096x1024),
    ("cross_entropy_4096x1024", "ms", w_cross_entropy_4096x1024),
    ("copy_f32_4M", "GB/s", w_copy_f32_4m),
    ("copy_f32_16M", "GB/s", w_copy_f32_16m),
    ("matmul_f32_64", "GFLOP/s", w_matmul_f32_64),
    ("matmul_f32_128", "GFLOP/s", w_matmul_f32_128),
    ("bmm_f32_b64_128", "GFLOP/s", w_bmm_f32_b64_128),
    ("exp_f32_4M", "ms", w_exp_f32_4m),
    ("tanh_f32_4M", "ms", w_tanh_f32_4m),
    ("gelu_f32_4M", "ms", w_gelu_f32_4m),
    ("gelu_backward_f32_4M", "ms", w_gelu_backward_f32_4m),
    ("max_pool2d_c64_56", "ms", w_max_pool2d_c64_56),
    (
        "batch_norm2d_train_c64_56",
        "ms",
        w_batch_norm2d_train_c64_56,
    ),
    ("cnn_step_digits_b64", "ms", w_cnn_step_digits_b64),
];

fn main() {
    let sel: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    for s in &sel {
        if !WORKLOADS.iter().any(|(n, _, _)| n == s) {
            eprintln!("unknown workload {s:?} (ignored)");
        }
    }
    for (name, unit, run) in WORKLOADS {
        if !sel.is_empty() && !sel.iter().any(|s| s == name) {
            continue;
        }
        println!("{name}\t{:.3}\t{unit}", run());
    }
}

/// 10000 x 10000 with 1,000,000 distinct random positions (StdRng seed 0) and f32 values in
/// [0, 1): (coalesced COO, CSR). Same sizes and distribution as benches/torch_workloads.py
/// (numpy's generator cannot be reproduced here, so the positions differ).
fn sparse_1m() -> tapegrad::Result<(Tensor, Tensor)> {
    use rand::{Rng, SeedableRng};
    const N: u64 = 10_000;
    const NNZ: usize = 1_000_000;
    let mut rng = rand::rngs::StdRng::seed_from_u64(0);
    let mut pos: Vec<u64> = Vec::with_capacity(NNZ);
    while pos.len() < NNZ {
        while pos.len() < NNZ {
            pos.push(rng.gen_range(0..N * N));
        }
        pos.sort_unstable();
        pos.dedup();
    }
    let mut ix: Vec<i64> = pos.iter().map(|p| (p / N) as i64).collect();
    ix.extend(pos.iter().map(|p| (p % N) as i64));
    let vals: Vec<f32> = (0..NNZ).map(|_| rng.r#gen::<f32>()).collect();
    let coo = Tensor::sparse_coo(
        &Tensor::from_vec(ix, &[2, NNZ])?,
        &Tensor::from_vec(vals, &[NNZ])?,
        &[N as usize, N as usize],
    )?;
    let csr = coo.to_sparse_csr()?;
    Ok((coo, csr))
}

/// `sparse_slice_{csr,coo}_1M[_backward]`: x[2000:7000, 1000:6000] (ms). The backward figure
/// times `autograd::grad` of the slice w.r.t. x with ones on the output's pattern.
fn sparse_workload(name: &str) -> f64 {
    let (coo, csr) = sparse_1m().expect("sparse data");
    let x = if name.contains("_csr_") { csr } else { coo };
    let (axes, starts, ends) = ([0i64, 1], [2000i64, 1000], [7000i64, 6000]);
    let t = if name.ends_with("_backward") {
        let x = x.requires_grad_(true).expect("leaf");
        let out = tapegrad::sparse::slice(&x, &axes, &starts, &ends).expect("slice");
        let ones = out
            .values()
            .unwrap()
            .detach()
            .mul(0.0)
            .unwrap()
            .add(1.0)
            .unwrap();
        let seed = if x.layout_kind() == tapegrad::LayoutKind::SparseCsr {
            Tensor::sparse_csr(
                &out.crow_indices().unwrap(),
                &out.col_indices().unwrap(),
                &ones,
                &out.shape(),
            )
        } else {
            Tensor::sparse_coo(&out.indices().unwrap(), &ones, &out.shape())
        }
        .expect("seed");
        median(11, || {
            tapegrad::autograd::grad(
                std::slice::from_ref(&out),
                std::slice::from_ref(&x),
                &[Some(seed.clone())],
                tapegrad::autograd::GradOptions::default().retain_graph(true),
            )
            .map(|_| ())
        })
    } else {
        median(11, || {
            tapegrad::sparse::slice(&x, &axes, &starts, &ends).map(|_| ())
        })
    };
    t * 1e3
}
