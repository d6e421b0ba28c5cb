//! Per-op speed sweep, tapegrad's side: every public op on the standard inputs of
//! `benches/op_speed.py` (which defines them, times PyTorch and prints the ratios), one line per
//! op, `name<TAB>seconds per call` (median of 5 runs of at least 20 ms each, 200 ms of CPU
//! time with `OP_SPEED_CPU_TIME`, after warm-up).
//! Positional args select ops by name; `--flags` are ignored. With `OP_SPEED_CPU_TIME=1` (and
//! one thread) the clock is this thread's CPU time instead of the wall clock: steadier ratios on a
//! loaded machine.

use std::time::Instant;
use tapegrad::{CrossEntropyOptions, DType, NllLossOptions, NormOrd, Reduction, Stability, Tensor};

type R = tapegrad::Result<()>;
const N: usize = 1024;

/// Seconds on the chosen clock: the wall clock, or this thread's CPU time (the first field of
/// `/proc/thread-self/schedstat`, in ns) when `OP_SPEED_CPU_TIME` is set.
fn now() -> f64 {
    static CPU: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    if *CPU.get_or_init(|| std::env::var_os("OP_SPEED_CPU_TIME").is_some()) {
        let s = std::fs::read_to_string("/proc/thread-self/schedstat").expect("schedstat");
        let ns: f64 = s
            .split_whitespace()
            .next()
            .and_then(|v| v.parse().ok())
            .expect("ns");
        ns * 1e-9
    } else {
        START.get_or_init(Instant::now).elapsed().as_secs_f64()
    }
}

/// Shortest timed run: 20 ms on the wall clock; 200 ms of CPU time, whose clock advances only
/// at scheduler ticks (a few ms) on this kernel.
fn min_run() -> f64 {
    if std::env::var_os("OP_SPEED_CPU_TIME").is_some() {
        0.2
    } else {
        0.02
    }
}

/// Median seconds per call of `f` over 5 runs of at least [`min_run`] each, after warm-up.
fn time(f: &dyn Fn() -> R) -> f64 {
    f().expect("warm-up");
    f().expect("warm-up");
    let mut inner = 1usize;
    loop {
        let t = now();
        for _ in 0..inner {
            f().expect("run");
        }
        let dt = now() - t;
        if dt >= min_run() {
            break;
        }
        // (the CPU-time clock advances in scheduler ticks: a run can read 0 s, which must not
        // blow `inner` up)
        inner = if dt <= 0.0 {
            inner * 2
        } else {
            (inner * 2).max((inner as f64 * min_run() / dt * 1.2) as usize)
        };
    }
    let mut ts: Vec<f64> = (0..5)
        .map(|_| {
            let t = now();
            for _ in 0..inner {
                f().expect("run");
            }
            (now() - t) / inner as f64
        })
        .collect();
    ts.sort_by(|a, b| a.total_cmp(b));
    ts[ts.len() / 2]
}

type Op = (&'static str, Box<dyn Fn() -> R>);

/// An input shared by the op closures for the whole run.
fn leak<T: 'static>(t: T) -> &'static T {
    Box::leak(Box::new(t))
}

/// `name => expression` pairs into boxed closures that drop their result.
macro_rules! ops {
    ($($name:literal => $e:expr),* $(,)?) => {
        vec![$(($name, Box::new(move || { let _ = $e?; Ok(()) }) as Box<dyn Fn() -> R>)),*]
    };
}

fn main() {
    let sel: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    for (name, f) in table().expect("inputs") {
        if !sel.is_empty() && !sel.iter().any(|s| s == name) {
            continue;
        }
        println!("{name}\t{:.6e}", time(&*f));
    }
}

#[allow(clippy::too_many_lines)]
fn table() -> tapegrad::Result<Vec<Op>> {
    tapegrad::manual_seed(0);
    let f32 = DType::F32;
    let x = leak(Tensor::randn(&[N, N], f32)?);
    let y = leak(Tensor::randn(&[N, N], f32)?);
    let pos = leak(x.abs()?.add(0.5)?);
    let unit = leak(Tensor::rand(&[N, N], f32)?.mul(1.8)?.sub(0.9)?);
    let prob = leak(Tensor::rand(&[N, N], f32)?.mul(0.98)?.add(0.01)?);
    let mask = leak(x.gt(0.0)?);
    let bmask = leak(y.gt(0.0)?);
    let idx_rows = leak(Tensor::randint(0, N as i64, &[N])?);
    let idx_full = leak(Tensor::randint(0, N as i64, &[N, N])?);
    let target = leak(Tensor::randint(0, N as i64, &[N])?);
    let w = leak(Tensor::ones(&[N], f32)?);
    let b = leak(Tensor::zeros(&[N], f32)?);
    let small = leak(Tensor::randn(&[256, 256], f32)?);
    let small2 = leak(Tensor::randn(&[256, 256], f32)?);
    let bat = leak(Tensor::randn(&[16, 64, 64], f32)?);
    let lin_w = leak(Tensor::randn(&[512, 1024], f32)?);
    let lin_x = leak(Tensor::randn(&[128, 1024], f32)?);
    let vec1 = leak(Tensor::randn(&[N * N], f32)?);
    let vec2 = leak(Tensor::randn(&[N * N], f32)?);
    let half_a = leak(Tensor::randn(&[N / 2, N], f32)?);
    let half_b = leak(Tensor::randn(&[N / 2, N], f32)?);
    let emb = leak(Tensor::randn(&[N, 256], f32)?);
    let emb_idx = leak(Tensor::randint(0, N as i64, &[4096])?);
    let out = leak(Tensor::empty(&[N, N], f32)?);
    let t = leak(x.t()?);
    let xd = leak(x.to_dtype(DType::F64)?);
    let yt = leak(y.t()?);
    let (v1n, v2n) = (leak(vec1.narrow(0, 0, N)?), leak(vec2.narrow(0, 0, N)?));
    let xi: &'static [Option<Tensor>] = Box::leak(Box::new([Some(idx_rows.clone())]));
    let mut v: Vec<Op> = Vec::new();
    {
        v.extend(ops! {
            "abs" => x.abs(), "neg" => x.neg(), "sign" => x.sign(), "relu" => x.relu(),
            "exp" => x.exp(), "exp2" => x.exp2(), "log" => pos.log(), "log2" => pos.log2(),
            "log10" => pos.log10(), "log1p" => pos.log1p(), "expm1" => x.expm1(),
            "sqrt" => pos.sqrt(), "rsqrt" => pos.rsqrt(), "reciprocal" => pos.reciprocal(),
            "sin" => x.sin(), "cos" => x.cos(), "tan" => unit.tan(), "asin" => unit.asin(),
            "acos" => unit.acos(), "atan" => x.atan(), "sinh" => x.sinh(), "cosh" => x.cosh(),
            "tanh" => x.tanh(), "sigmoid" => x.sigmoid(), "floor" => x.floor(),
            "ceil" => x.ceil(), "round" => x.round(), "trunc" => x.trunc(), "frac" => x.frac(),
            "square" => x.square(), "erf" => x.erf(), "erf_f64" => xd.erf(), "isnan" => x.isnan(),
            "isinf" => x.isinf(), "isfinite" => x.isfinite(),
            "logical_not" => mask.logical_not(), "nonzero" => mask.nonzero(),
            "silu" => x.silu(), "gelu" => x.gelu(tapegrad::Approximate::None), "gelu_tanh" => x.gelu(tapegrad::Approximate::Tanh),
            "softplus" => x.softplus(1.0, 20.0), "elu" => x.elu(1.0),
            "leaky_relu" => x.leaky_relu(0.01), "nan_to_num" => x.nan_to_num(0.0, None, None),
            "clone" => x.copy(), "to_f64" => x.to_dtype(DType::F64),
        });
    }
    {
        v.extend(ops! {
            "add" => x.add(y), "sub" => x.sub(y), "mul" => x.mul(y), "div" => x.div(y),
            "floor_divide" => x.floor_divide(pos), "remainder" => x.remainder(pos),
            "fmod" => x.fmod(pos), "pow" => pos.pow(y), "pow_2" => x.pow(2.0),
            "eq" => x.eq(y), "ne" => x.ne(y), "lt" => x.lt(y), "le" => x.le(y),
            "gt" => x.gt(y), "ge" => x.ge(y), "maximum" => x.maximum(y),
            "minimum" => x.minimum(y), "fmax" => x.fmax(y), "fmin" => x.fmin(y),
            "atan2" => x.atan2(y), "hypot" => x.hypot(y),
            "logical_and" => mask.logical_and(bmask), "logical_or" => mask.logical_or(bmask),
            "logical_xor" => mask.logical_xor(bmask), "add_scalar" => x.add(1.0),
            "mul_scalar" => x.mul(2.0), "add_" => out.add_(1.0), "lerp" => x.lerp(y, 0.3),
            "addcmul" => x.addcmul(y, pos, 0.5), "addcdiv" => x.addcdiv(y, pos, 0.5),
            "clamp" => x.clamp(Some((-0.5).into()), Some(0.5.into())),
            "where" => Tensor::where_(mask, x, y), "masked_fill" => x.masked_fill(mask, 0.0),
        });
    }
    {
        v.extend(ops! {
            "exp_T" => t.exp(), "add_T" => t.add(yt), "mul_T" => t.mul(yt),
            "relu_T" => t.relu(), "contiguous_T" => t.contiguous(),
        });
    }
    {
        v.extend(ops! {
            "sum" => x.sum_dims(&[-1], false), "sum_all" => x.sum(),
            "mean" => x.mean(&[-1], false, None), "prod" => x.prod(&[-1], false),
            "var" => x.var(&[-1], 1.0, false), "std" => x.std(&[-1], 1.0, false),
            "amax" => x.amax(&[-1], false), "amax_0" => x.amax(&[0], false),
            "amin" => x.amin(&[-1], false), "max_dim" => x.max_dim(-1, false),
            "min_dim" => x.min_dim(-1, false), "max_all" => x.max(),
            "argmax" => x.argmax(-1, false), "argmin" => x.argmin(-1, false),
            "all" => mask.all(&[-1], false), "any" => mask.any(&[-1], false),
            "logsumexp" => x.logsumexp(&[-1], false), "norm" => x.norm(NormOrd::L2, &[-1], false),
            "cumsum" => x.cumsum(-1, None), "cumprod" => x.cumprod(-1, None),
            "nansum" => x.nansum(&[-1], false, None), "count_nonzero" => x.count_nonzero(&[-1]),
            "sum_0" => x.sum_dims(&[0], false),
        });
    }
    {
        v.extend(ops! {
            "softmax" => x.softmax(-1), "log_softmax" => x.log_softmax(-1),
            "softmax_0" => x.softmax(0),
            "layer_norm" => x.layer_norm(&[N], Some(w), Some(b), 1e-5),
            "cross_entropy" => x.cross_entropy(target, CrossEntropyOptions::default()),
            "nll_loss" => x.nll_loss(target, NllLossOptions::default()),
            "mse_loss" => x.mse_loss(y, Reduction::Mean), "l1_loss" => x.l1_loss(y, Reduction::Mean),
            "binary_cross_entropy" => prob.binary_cross_entropy(prob, None, Reduction::Mean),
            "bce_with_logits" => x.binary_cross_entropy_with_logits(prob, Default::default()),
            "dropout_eval" => x.dropout(0.5, false),
            "embedding" => Tensor::embedding(emb_idx, emb),
        });
    }
    {
        v.extend(ops! {
            "sort" => x.sort(-1, false, Stability::Any), "argsort" => x.argsort(-1, false, Stability::Any),
            "topk" => x.topk(10, -1, true, true),
            "gather" => x.gather(1, idx_full), "index_select" => x.index_select(0, idx_rows),
            "scatter" => x.scatter(1, idx_full, y), "scatter_add" => x.scatter_add(1, idx_full, y),
            "masked_select" => x.masked_select(mask), "index_tensor" => x.index_tensors(xi),
            "index_put_" => out.index_put_(xi, y, true),
        });
    }
    {
        v.extend(ops! {
            "mm_256" => small.mm(small2), "matmul_256" => small.matmul(small2),
            "bmm_16x64" => bat.bmm(bat), "dot" => vec1.dot(vec2), "outer" => v1n.outer(v2n),
            "addmm_256" => small.addmm(small, small2, 1.0, 1.0),
            "linear" => Tensor::linear(lin_x, lin_w, None),
            "cat" => Tensor::cat(&[half_a, half_b], 0),
            "stack" => Tensor::stack(&[half_a, half_b], 0),
            "flip" => x.flip(&[0]), "roll" => x.roll(&[1], &[1]), "repeat" => half_a.repeat(&[2, 1]),
            "tril" => x.tril(0), "triu" => x.triu(0), "reshape_T" => t.reshape(&[-1]),
            "narrow" => x.narrow(0, 10, 100), "transpose" => x.transpose(0, 1),
        });
    }
    {
        v.extend(ops! {
            "zeros" => Tensor::zeros(&[N, N], f32), "ones" => Tensor::ones(&[N, N], f32),
            "full" => Tensor::full(&[N, N], 2.0, f32),
            "arange" => Tensor::arange_dtype(0, (N * N) as i64, 1, f32),
            "linspace" => Tensor::linspace(0.0, 1.0, N * N, f32), "eye" => Tensor::eye(N, f32),
            "zeros_like" => x.zeros_like(), "fill_" => out.fill_(1.0), "zero_" => out.zero_(),
            "copy_" => out.copy_(x),
        });
    }
    Ok(v)
}
