//! Data-parallel training over MPI (feature `distributed`, issue 25): this binary launches
//! itself under `mpirun` with 2 and 3 ranks (`--oversubscribe`, one thread per rank); each rank
//! runs the checks below and prints `rank R: N checks passed`. The launcher requires every
//! rank of every run to exit successfully after reporting its count.
//!
//! Checked: every collective on each of the 12 dtypes and reduction (and the refused ones:
//! `Avg` on bool, `Max`/`Min`/`Product` on complex), in-place destinations that are
//! non-contiguous views (written through to the base, version bumped once) or expanded
//! (refused, unchanged), async handles, sub-groups, the differentiable all-reduce, and DDP:
//! after K steps every rank holds identical parameters, equal to single-process training on
//! the union of the ranks' batches (f64 within 1e-10, f32 within 1e-5 relative), with several
//! buckets, `no_sync` accumulation, buffer broadcast and the unused-parameter error.
//! Run: `cargo test --release --features distributed --test distributed` (needs `mpirun`).

use num_complex::{Complex32, Complex64};
use std::process::Command;
use tapegrad::distributed::{
    DdpOptions, DistributedDataParallel, DistributedSampler, ProcessGroup, ReduceOp, all_reduce,
};
use tapegrad::nn::{BatchNorm1d, Forward, Linear, Module, Sequential, Tanh};
use tapegrad::optim::{Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, ErrorKind, Result, Tensor, autograd::no_grad};

const WORKER_ENV: &str = "TAPEGRAD_DIST_WORKER";

const ALL_DTYPES: [DType; 12] = [
    DType::Bool,
    DType::U8,
    DType::I8,
    DType::I16,
    DType::I32,
    DType::I64,
    DType::F16,
    DType::BF16,
    DType::F32,
    DType::F64,
    DType::C64,
    DType::C128,
];

const OPS: [ReduceOp; 5] = [
    ReduceOp::Sum,
    ReduceOp::Avg,
    ReduceOp::Product,
    ReduceOp::Max,
    ReduceOp::Min,
];

fn main() {
    if std::env::var_os(WORKER_ENV).is_some() {
        std::process::exit(match worker() {
            Ok(()) => 0,
            Err(e) => {
                eprintln!("worker failed: {e}");
                1
            }
        });
    }
    let exe = std::env::current_exe().expect("test binary path");
    let mut failed = 0;
    for np in [2usize, 3] {
        let out = Command::new("mpirun")
            .args(["--oversubscribe", "-np", &np.to_string()])
            .arg(&exe)
            .env(WORKER_ENV, "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("RAYON_NUM_THREADS", "1")
            .output()
            .expect("`mpirun` must be installed (apt-get install openmpi-bin libopenmpi-dev)");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let counts: Vec<usize> = stdout
            .lines()
            .filter_map(|l| {
                l.split(": ")
                    .nth(1)?
                    .strip_suffix(" checks passed")?
                    .parse()
                    .ok()
            })
            .collect();
        // (ranks outside the sub-group run fewer checks)
        let ok = out.status.success() && counts.len() == np && counts.iter().all(|&c| c > 0);
        println!(
            "test distributed with {np} ranks ... {} (checks per rank: {counts:?})",
            if ok { "ok" } else { "FAILED" },
        );
        if !ok {
            failed += 1;
            println!(
                "--- stdout\n{stdout}--- stderr\n{}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
    println!(
        "\ntest result: {}. {} passed; {} failed",
        if failed == 0 { "ok" } else { "FAILED" },
        2 - failed,
        failed
    );
    if failed > 0 {
        std::process::exit(1);
    }
}

/// Counts checks and fails with context.
struct Checks {
    rank: usize,
    n: usize,
}

impl Checks {
    fn check(&mut self, ok: bool, what: impl FnOnce() -> String) -> Result<()> {
        if !ok {
            return Err(tapegrad::Error::new(
                ErrorKind::InvalidArgument,
                "distributed test",
                format!("rank {}: {}", self.rank, what()),
            ));
        }
        self.n += 1;
        Ok(())
    }

    fn kind<T>(&mut self, r: Result<T>, kind: ErrorKind, what: &str) -> Result<()> {
        let got = r.err().map(|e| e.kind());
        self.check(got == Some(kind), || {
            format!("{what}: expected {kind:?}, got {got:?}")
        })
    }
}

fn worker() -> Result<()> {
    let pg = ProcessGroup::init()?;
    let mut c = Checks {
        rank: pg.rank(),
        n: 0,
    };
    c.check(pg.world_size() >= 2, || "run under mpirun -np N".into())?;
    collectives_per_dtype(&pg, &mut c)?;
    destinations(&pg, &mut c)?;
    async_and_groups(&pg, &mut c)?;
    differentiable(&pg, &mut c)?;
    sampler(&pg, &mut c)?;
    for dtype in [DType::F64, DType::F32] {
        for cap in [25.0, 0.0002] {
            ddp_matches_single_process(&pg, &mut c, dtype, cap)?;
        }
    }
    ddp_no_sync(&pg, &mut c)?;
    ddp_buffers(&pg, &mut c)?;
    ddp_unused(&pg, &mut c)?;
    pg.barrier()?;
    println!("rank {}: {} checks passed", pg.rank(), c.n);
    Ok(())
}

// ---- collectives ---------------------------------------------------------------------------

/// Element `i` of rank `r`'s test tensor (real part; small integers so every reduction is
/// exact). Unsigned and bool values are non-negative.
fn value(dtype: DType, r: usize, i: usize) -> f64 {
    let v = ((i * 7 + r * 3) % 5) as f64 - 2.0;
    if matches!(dtype, DType::U8 | DType::Bool) {
        (v + 2.0) % 2.0
            + if dtype == DType::U8 {
                (i % 3) as f64
            } else {
                0.0
            }
    } else {
        v
    }
}

fn imag(r: usize, i: usize) -> f64 {
    ((i * 3 + r) % 4) as f64 - 1.0
}

const N: usize = 6;

/// A `[2, 3]` tensor of `dtype` from real and imaginary parts.
fn make(dtype: DType, re: &[f64], im: &[f64]) -> Result<Tensor> {
    match dtype {
        DType::C64 => Tensor::from_vec(
            re.iter()
                .zip(im)
                .map(|(&a, &b)| Complex32::new(a as f32, b as f32))
                .collect(),
            &[2, 3],
        ),
        DType::C128 => Tensor::from_vec(
            re.iter()
                .zip(im)
                .map(|(&a, &b)| Complex64::new(a, b))
                .collect(),
            &[2, 3],
        ),
        _ => Tensor::from_vec(re.to_vec(), &[2, 3])?.to_dtype(dtype),
    }
}

fn data(dtype: DType, r: usize) -> Result<Tensor> {
    let re: Vec<f64> = (0..N).map(|i| value(dtype, r, i)).collect();
    let im: Vec<f64> = (0..N).map(|i| imag(r, i)).collect();
    make(dtype, &re, &im)
}

/// Exact comparison through c128 (every dtype converts to it exactly here).
fn same(a: &Tensor, b: &Tensor) -> Result<bool> {
    Ok(a.dtype() == b.dtype()
        && a.shape() == b.shape()
        && a.to_dtype(DType::C128)?.to_vec::<Complex64>()?
            == b.to_dtype(DType::C128)?.to_vec::<Complex64>()?)
}

/// The expected reduction of every rank's `data`, computed here without MPI.
fn expected(dtype: DType, op: ReduceOp, n: usize) -> Result<Tensor> {
    let fold = |f: &dyn Fn(usize, usize) -> f64, i: usize| -> f64 {
        let vals: Vec<f64> = (0..n).map(|r| f(r, i)).collect();
        match (op, dtype == DType::Bool) {
            (ReduceOp::Sum | ReduceOp::Max, true) => vals.iter().any(|&v| v != 0.0) as u8 as f64,
            (ReduceOp::Product | ReduceOp::Min, true) => {
                vals.iter().all(|&v| v != 0.0) as u8 as f64
            }
            (ReduceOp::Sum | ReduceOp::Avg, _) => vals.iter().sum(),
            (ReduceOp::Product, _) => vals.iter().product(),
            (ReduceOp::Max, _) => vals.iter().cloned().fold(f64::MIN, f64::max),
            (ReduceOp::Min, _) => vals.iter().cloned().fold(f64::MAX, f64::min),
        }
    };
    let re: Vec<f64> = (0..N)
        .map(|i| fold(&|r, i| value(dtype, r, i), i))
        .collect();
    let im: Vec<f64> = (0..N).map(|i| fold(&|r, i| imag(r, i), i)).collect();
    if op != ReduceOp::Avg {
        return make(dtype, &re, &im);
    }
    // the average divides the sum in the wire type: integers truncate, f16/bf16/f32 divide in
    // f32 (and round once to the dtype), f64/complex in their own precision
    let nf = n as f64;
    match dtype {
        DType::F16 | DType::BF16 | DType::F32 => {
            let v: Vec<f32> = re.iter().map(|&s| s as f32 / n as f32).collect();
            Tensor::from_vec(v, &[2, 3])?.to_dtype(dtype)
        }
        DType::F64 => make(dtype, &re.iter().map(|s| s / nf).collect::<Vec<_>>(), &im),
        DType::C64 => Tensor::from_vec(
            re.iter()
                .zip(&im)
                .map(|(&a, &b)| Complex32::new(a as f32, b as f32) / n as f32)
                .collect(),
            &[2, 3],
        ),
        DType::C128 => Tensor::from_vec(
            re.iter()
                .zip(&im)
                .map(|(&a, &b)| Complex64::new(a, b) / nf)
                .collect(),
            &[2, 3],
        ),
        _ => make(
            dtype,
            &re.iter().map(|s| (s / nf).trunc()).collect::<Vec<_>>(),
            &im,
        ),
    }
}

fn refused(dtype: DType, op: ReduceOp) -> bool {
    (dtype == DType::Bool && op == ReduceOp::Avg)
        || (dtype.is_complex() && matches!(op, ReduceOp::Max | ReduceOp::Min | ReduceOp::Product))
}

fn collectives_per_dtype(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank(), pg.world_size());
    for dtype in ALL_DTYPES {
        for op in OPS {
            let t = data(dtype, r)?;
            if refused(dtype, op) {
                let v = t.version();
                c.kind(
                    pg.all_reduce_(&t, op),
                    ErrorKind::Unsupported,
                    "refused all_reduce_",
                )?;
                c.check(t.version() == v && same(&t, &data(dtype, r)?)?, || {
                    format!("refused all_reduce_ {dtype} {op:?} changed its input")
                })?;
                let parts: Vec<Tensor> = (0..n).map(|_| t.clone()).collect();
                c.kind(
                    pg.reduce_scatter(&parts, op),
                    ErrorKind::Unsupported,
                    "refused reduce_scatter",
                )?;
                continue;
            }
            pg.all_reduce_(&t, op)?;
            let want = expected(dtype, op, n)?;
            c.check(same(&t, &want)?, || {
                format!("all_reduce_ {dtype} {op:?}: {t} vs {want}")
            })?;
            c.check(t.version() == 1, || format!("all_reduce_ {dtype} version"))?;
            // reduce_scatter: input j of rank s is data((s + j) % n), so the inputs reduced into
            // every rank's output are data(0..n) again
            let parts: Vec<Tensor> = (0..n)
                .map(|j| data(dtype, (r + j) % n))
                .collect::<Result<_>>()?;
            let got = pg.reduce_scatter(&parts, op)?;
            c.check(same(&got, &want)?, || {
                format!("reduce_scatter {dtype} {op:?}: {got} vs {want}")
            })?;
        }
        // broadcast from the last rank, all_gather of everyone's data
        let t = data(dtype, r)?;
        pg.broadcast_(&t, n - 1)?;
        c.check(same(&t, &data(dtype, n - 1)?)?, || {
            format!("broadcast_ {dtype}")
        })?;
        let all = pg.all_gather(&data(dtype, r)?)?;
        c.check(all.len() == n, || "all_gather count".into())?;
        for (s, g) in all.iter().enumerate() {
            c.check(same(g, &data(dtype, s)?)?, || {
                format!("all_gather {dtype} from {s}")
            })?;
        }
    }
    Ok(())
}

// ---- in-place destinations -----------------------------------------------------------------

fn destinations(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank() as f64, pg.world_size() as f64);
    let ranks_sum = n * (n - 1.0) / 2.0;
    let grid = |k: f64| -> Result<Tensor> {
        Tensor::arange_dtype(0, 12, 1, DType::F64)?
            .add(k)?
            .reshape(&[3, 4])
    };
    // a transposed (non-contiguous) view: the base is written through
    let base = grid(r)?;
    let v = base.t()?;
    c.check(!v.is_contiguous() && v.is_view(), || {
        "t() is a non-contiguous view".into()
    })?;
    pg.all_reduce_(&v, ReduceOp::Sum)?;
    let want = grid(0.0)?.mul(n)?.add(ranks_sum)?;
    c.check(same(&base, &want)?, || {
        format!("all_reduce_ through t(): {base}")
    })?;
    c.check(base.version() == 1 && v.version() == 1, || {
        "one version bump".into()
    })?;
    // a narrow view: only its columns change
    let base = grid(r)?;
    let v = base.narrow(1, 1, 2)?;
    pg.all_reduce_(&v, ReduceOp::Max)?;
    let mut want = grid(r)?.to_vec::<f64>()?;
    for row in 0..3 {
        for col in 1..3 {
            want[row * 4 + col] = (row * 4 + col) as f64 + n - 1.0;
        }
    }
    c.check(base.to_vec::<f64>()? == want, || {
        format!("narrow view: {base}")
    })?;
    c.check(base.version() == 1, || "narrow view version".into())?;
    // broadcast_ into a strided column of an integer base
    let base = Tensor::arange(0, 12, 1)?
        .reshape(&[3, 4])?
        .mul(pg.rank() as i64 + 1)?;
    let col = base.select(1, 2)?;
    pg.broadcast_(&col, 0)?;
    let mut want: Vec<i64> = (0..12).map(|x| x * (pg.rank() as i64 + 1)).collect();
    for row in 0..3 {
        want[row * 4 + 2] = (row * 4 + 2) as i64;
    }
    c.check(base.to_vec::<i64>()? == want, || {
        format!("broadcast_ into a column: {base}")
    })?;
    c.check(base.version() == 1, || "broadcast_ version".into())?;
    // async into a view: written at wait, not before
    let base = grid(r)?;
    let w = pg.all_reduce_async_(&base.select(0, 1)?, ReduceOp::Min)?;
    w.wait()?;
    c.check(
        base.select(0, 1)?.to_vec::<f64>()? == vec![4.0, 5.0, 6.0, 7.0],
        || "async all_reduce_ into a row".into(),
    )?;
    // expanded destinations are refused and left unchanged
    let e = Tensor::ones(&[3], DType::F32)?.expand(&[2, 3])?;
    c.kind(
        pg.all_reduce_(&e, ReduceOp::Sum),
        ErrorKind::InvalidArgument,
        "expanded all_reduce_",
    )?;
    c.kind(
        pg.broadcast_(&e, 0),
        ErrorKind::InvalidArgument,
        "expanded broadcast_",
    )?;
    c.check(
        e.version() == 0 && e.to_vec::<f32>()? == vec![1.0; 6],
        || "expanded unchanged".into(),
    )?;
    // a leaf requiring grad: refused in grad mode, allowed under no_grad
    let p = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    c.kind(
        pg.all_reduce_(&p, ReduceOp::Sum),
        ErrorKind::Unsupported,
        "requires-grad dst",
    )?;
    {
        let _g = no_grad();
        pg.all_reduce_(&p, ReduceOp::Sum)?;
    }
    c.check(p.to_vec::<f64>()? == vec![n, n], || {
        "no_grad all_reduce_ of a leaf".into()
    })?;
    // bad arguments
    c.kind(
        pg.broadcast_(&grid(0.0)?, pg.world_size()),
        ErrorKind::InvalidArgument,
        "bad src",
    )?;
    c.kind(
        pg.reduce_scatter(&[grid(0.0)?], ReduceOp::Sum),
        ErrorKind::InvalidArgument,
        "reduce_scatter count",
    )?;
    Ok(())
}

// ---- async handles, sub-groups, barrier ----------------------------------------------------

fn async_and_groups(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank(), pg.world_size());
    let ts: Vec<Tensor> = (0..4)
        .map(|k| Tensor::full(&[5], (r * 10 + k) as f64, DType::F64))
        .collect::<Result<_>>()?;
    let mut works = Vec::new();
    for t in &ts {
        works.push(pg.all_reduce_async_(t, ReduceOp::Sum)?);
    }
    let mut gather = pg.all_gather_async(&Tensor::scalar(r as i64))?;
    while !gather.is_completed() {
        std::thread::yield_now();
    }
    let gathered: Vec<i64> = gather
        .wait()?
        .iter()
        .map(|t| t.item::<i64>())
        .collect::<Result<_>>()?;
    c.check(gathered == (0..n as i64).collect::<Vec<_>>(), || {
        format!("{gathered:?}")
    })?;
    tapegrad::distributed::wait_all(works)?;
    for (k, t) in ts.iter().enumerate() {
        let want = (0..n).map(|s| (s * 10 + k) as f64).sum::<f64>();
        c.check(t.to_vec::<f64>()? == vec![want; 5], || {
            format!("async all_reduce_ {k}")
        })?;
    }
    // a sub-group of the first and last rank, in reverse order
    let members = [n - 1, 0];
    let sub = pg.new_group(&members)?;
    match members.iter().position(|&m| m == r) {
        Some(i) => {
            let sub = sub.expect("member gets a group");
            c.check(
                sub.rank() == i && sub.world_size() == 2 && sub.ranks() == members,
                || format!("{sub:?}"),
            )?;
            let t = Tensor::full(&[3], r as f64 + 1.0, DType::F32)?;
            sub.all_reduce_(&t, ReduceOp::Sum)?;
            c.check(t.to_vec::<f32>()? == vec![n as f32 + 1.0; 3], || {
                "sub-group sum".into()
            })?;
            let t = Tensor::scalar(r as i32);
            sub.broadcast_(&t, 0)?;
            c.check(t.item::<i32>()? == (n - 1) as i32, || {
                "sub-group broadcast".into()
            })?;
            sub.barrier()?;
        }
        None => c.check(sub.is_none(), || "non-member gets no group".into())?,
    }
    c.kind(
        pg.new_group(&[0, 0]),
        ErrorKind::InvalidArgument,
        "repeated rank",
    )?;
    c.kind(
        pg.new_group(&[n]),
        ErrorKind::InvalidArgument,
        "rank outside",
    )?;
    pg.barrier()?;
    c.check(ProcessGroup::init()?.world_size() == n, || {
        "init twice".into()
    })?;
    Ok(())
}

// ---- the differentiable all-reduce ----------------------------------------------------------

fn differentiable(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank() as f64, pg.world_size() as f64);
    for op in [ReduceOp::Sum, ReduceOp::Avg] {
        let x = Tensor::from_vec(vec![1.0 + r, 2.0 * r], &[2])?.requires_grad_(true)?;
        let y = all_reduce(&x, op, pg)?;
        let div = if op == ReduceOp::Avg { n } else { 1.0 };
        let s: f64 = (0..pg.world_size()).map(|q| q as f64).sum();
        let want = vec![(n + s) / div, 2.0 * s / div];
        c.check(y.to_vec::<f64>()? == want && x.version() == 0, || {
            format!("{op:?} forward")
        })?;
        // rank q's loss is (q + 1) * sum(y): the gradient of x on every rank is the reduction
        // of the (q + 1)'s
        y.mul(r + 1.0)?.sum()?.backward()?;
        let g = (0..pg.world_size()).map(|q| q as f64 + 1.0).sum::<f64>() / div;
        let got = x.grad().expect("x has a gradient").to_vec::<f64>()?;
        c.check(got.iter().all(|&v| (v - g).abs() < 1e-12), || {
            format!("{op:?} grad {got:?} vs {g}")
        })?;
    }
    let x = Tensor::ones(&[2], DType::F64)?.requires_grad_(true)?;
    c.kind(
        all_reduce(&x, ReduceOp::Max, pg),
        ErrorKind::NotImplemented,
        "max with grad",
    )?;
    Ok(())
}

// ---- sampler ---------------------------------------------------------------------------------

fn sampler(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank(), pg.world_size());
    for (len, drop_last) in [(10usize, false), (10, true), (1, false)] {
        let mut s = DistributedSampler::new(len, n, r, true, 7, drop_last)?;
        s.set_epoch(3);
        let mine = s.indices();
        c.check(mine.len() == s.num_samples(), || "num_samples".into())?;
        let t = Tensor::from_vec(mine.iter().map(|&i| i as i64).collect(), &[mine.len()])?;
        let mut all: Vec<i64> = pg
            .all_gather(&t)?
            .iter()
            .flat_map(|t| t.to_vec::<i64>().unwrap_or_default())
            .collect();
        all.sort();
        all.dedup();
        let cover = if drop_last { len / n * n } else { len };
        c.check(
            all.len() == cover && all.iter().all(|&i| (i as usize) < len),
            || format!("shards of {len} (drop_last {drop_last}) cover {all:?}"),
        )?;
    }
    c.kind(
        DistributedSampler::new(4, n, n, false, 0, false),
        ErrorKind::InvalidArgument,
        "rank",
    )?;
    Ok(())
}

// ---- DDP -------------------------------------------------------------------------------------

/// A small MLP with the parameters drawn from `seed`.
fn mlp(seed: u64, dtype: DType) -> Result<Sequential> {
    tapegrad::manual_seed(seed);
    Ok(Sequential::new()
        .push(Linear::new(5, 8, true, dtype)?)
        .push(Tanh)
        .push(Linear::new(8, 3, true, dtype)?))
}

/// Rank `r`'s batch of step `s`: 4 rows of inputs and targets.
fn batch(s: usize, r: usize, dtype: DType) -> Result<(Tensor, Tensor)> {
    let x: Vec<f64> = (0..20)
        .map(|i| (((i * 13 + s * 7 + r * 29) % 17) as f64 - 8.0) / 8.0)
        .collect();
    let y: Vec<f64> = (0..12)
        .map(|i| (((i * 5 + s * 3 + r * 11) % 7) as f64 - 3.0) / 3.0)
        .collect();
    Ok((
        Tensor::from_vec(x, &[4, 5])?.to_dtype(dtype)?,
        Tensor::from_vec(y, &[4, 3])?.to_dtype(dtype)?,
    ))
}

fn union(s: usize, n: usize, dtype: DType) -> Result<(Tensor, Tensor)> {
    let parts: Vec<(Tensor, Tensor)> = (0..n).map(|r| batch(s, r, dtype)).collect::<Result<_>>()?;
    let xs: Vec<&Tensor> = parts.iter().map(|p| &p.0).collect();
    let ys: Vec<&Tensor> = parts.iter().map(|p| &p.1).collect();
    Ok((Tensor::cat(&xs, 0)?, Tensor::cat(&ys, 0)?))
}

fn mse(out: &Tensor, y: &Tensor) -> Result<Tensor> {
    out.mse_loss(y, tapegrad::Reduction::Mean)
}

/// Parameters flattened to f64.
fn flat(m: &dyn Module) -> Result<Vec<f64>> {
    let mut v = Vec::new();
    for p in m.parameters() {
        v.extend(p.to_dtype(DType::F64)?.to_vec::<f64>()?);
    }
    Ok(v)
}

/// Every rank holds exactly rank 0's values.
fn identical_everywhere(pg: &ProcessGroup, v: &[f64]) -> Result<bool> {
    let all = pg.all_gather(&Tensor::from_vec(v.to_vec(), &[v.len()])?)?;
    let first = all[0].to_vec::<f64>()?;
    Ok(all.iter().all(|t| {
        t.to_vec::<f64>()
            .map(|x| {
                x.iter()
                    .zip(&first)
                    .all(|(a, b)| a.to_bits() == b.to_bits())
            })
            .unwrap_or(false)
    }))
}

fn close(a: &[f64], b: &[f64], dtype: DType) -> bool {
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            if dtype == DType::F64 {
                (x - y).abs() <= 1e-10
            } else {
                (x - y).abs() <= 1e-5 * y.abs().max(1.0)
            }
        })
}

const K: usize = 5;

fn ddp_matches_single_process(
    pg: &ProcessGroup,
    c: &mut Checks,
    dtype: DType,
    bucket_cap_mb: f64,
) -> Result<()> {
    let (r, n) = (pg.rank(), pg.world_size());
    // each rank starts from different parameters: DDP broadcasts rank 0's
    let opts = DdpOptions {
        bucket_cap_mb,
        ..Default::default()
    };
    let ddp = DistributedDataParallel::new(mlp(100 + r as u64, dtype)?, pg, opts)?;
    let buckets = ddp.bucket_sizes();
    c.check(
        if bucket_cap_mb < 1.0 {
            buckets.len() >= 2
        } else {
            buckets == vec![4]
        },
        || format!("buckets {buckets:?} for {bucket_cap_mb} MB"),
    )?;
    let reference = mlp(100, dtype)?;
    c.check(flat(ddp.module())? == flat(&reference)?, || {
        "rank 0's parameters broadcast".into()
    })?;
    let cfg = SgdConfig {
        momentum: 0.9,
        ..SgdConfig::new(0.1)
    };
    let mut opt = Sgd::new(ddp.module().parameters(), cfg)?;
    let mut ref_opt = Sgd::new(reference.parameters(), cfg)?;
    for s in 0..K {
        let (x, y) = batch(s, r, dtype)?;
        opt.zero_grad()?;
        mse(&ddp.forward(&x)?, &y)?.backward()?;
        opt.step()?;
        let (x, y) = union(s, n, dtype)?;
        ref_opt.zero_grad()?;
        mse(&reference.forward(&x)?, &y)?.backward()?;
        ref_opt.step()?;
    }
    let (got, want) = (flat(ddp.module())?, flat(&reference)?);
    c.check(identical_everywhere(pg, &got)?, || {
        format!("{dtype} params differ across ranks")
    })?;
    let worst = got
        .iter()
        .zip(&want)
        .map(|(a, b)| (a - b).abs())
        .fold(0.0, f64::max);
    c.check(close(&got, &want, dtype), || {
        format!("{dtype} DDP vs single process (cap {bucket_cap_mb}): max diff {worst:e}")
    })?;
    Ok(())
}

fn ddp_no_sync(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let (r, n) = (pg.rank(), pg.world_size());
    let dtype = DType::F64;
    let opts = DdpOptions {
        bucket_cap_mb: 0.0002,
        ..Default::default()
    };
    let ddp = DistributedDataParallel::new(mlp(200 + r as u64, dtype)?, pg, opts)?;
    let reference = mlp(200, dtype)?;
    let mut opt = Sgd::new(ddp.module().parameters(), SgdConfig::new(0.05))?;
    let mut ref_opt = Sgd::new(reference.parameters(), SgdConfig::new(0.05))?;
    for step in 0..2 {
        opt.zero_grad()?;
        ref_opt.zero_grad()?;
        for micro in 0..3 {
            let s = step * 3 + micro;
            let (x, y) = batch(s, r, dtype)?;
            if micro < 2 {
                let _ns = ddp.no_sync();
                mse(&ddp.forward(&x)?, &y)?.backward()?;
                // local gradients only: they differ across ranks
                let g = ddp.module().parameters()[0]
                    .grad()
                    .expect("grad")
                    .to_vec::<f64>()?;
                c.check(!identical_everywhere(pg, &g)?, || {
                    "no_sync must not reduce".into()
                })?;
            } else {
                mse(&ddp.forward(&x)?, &y)?.backward()?;
            }
            let (x, y) = union(s, n, dtype)?;
            mse(&reference.forward(&x)?, &y)?.backward()?;
        }
        opt.step()?;
        ref_opt.step()?;
    }
    let (got, want) = (flat(ddp.module())?, flat(&reference)?);
    c.check(identical_everywhere(pg, &got)?, || {
        "no_sync params differ across ranks".into()
    })?;
    c.check(close(&got, &want, dtype), || {
        "no_sync accumulation vs single process".into()
    })?;
    Ok(())
}

fn ddp_buffers(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let r = pg.rank();
    let model = Sequential::new()
        .push(Linear::new(5, 4, true, DType::F64)?)
        .push(BatchNorm1d::new(
            4,
            1e-5,
            Some(0.1),
            true,
            true,
            DType::F64,
        )?);
    let ddp = DistributedDataParallel::new(model, pg, DdpOptions::default())?;
    let stats = |m: &Sequential| -> Result<Vec<f64>> {
        let mut v = Vec::new();
        for b in m.buffers() {
            v.extend(b.to_dtype(DType::F64)?.to_vec::<f64>()?);
        }
        Ok(v)
    };
    c.check(identical_everywhere(pg, &stats(ddp.module())?)?, || {
        "buffers at start".into()
    })?;
    let (x, _) = batch(0, r, DType::F64)?;
    ddp.forward(&x)?.sum()?.backward()?;
    // each rank updated its running statistics with its own batch
    c.check(!identical_everywhere(pg, &stats(ddp.module())?)?, || {
        "local batch stats".into()
    })?;
    // the next forward starts from rank 0's buffers
    let seen = ddp.forward_with(|m| stats(m))?;
    c.check(identical_everywhere(pg, &seen)?, || {
        "buffers broadcast before forward".into()
    })?;
    // without broadcast_buffers they stay local
    let model = Sequential::new().push(BatchNorm1d::new(
        5,
        1e-5,
        Some(0.1),
        false,
        true,
        DType::F64,
    )?);
    let opts = DdpOptions {
        broadcast_buffers: false,
        ..Default::default()
    };
    let ddp = DistributedDataParallel::new(model, pg, opts)?;
    ddp.forward(&x)?;
    let seen = ddp.forward_with(|m| stats(m))?;
    c.check(!identical_everywhere(pg, &seen)?, || {
        "broadcast_buffers = false".into()
    })?;
    Ok(())
}

#[derive(Module)]
struct TwoHeads {
    a: Linear,
    b: Linear,
}

fn ddp_unused(pg: &ProcessGroup, c: &mut Checks) -> Result<()> {
    let model = TwoHeads {
        a: Linear::new(5, 3, true, DType::F64)?,
        b: Linear::new(5, 2, true, DType::F64)?,
    };
    let ddp = DistributedDataParallel::new(model, pg, DdpOptions::default())?;
    let (x, _) = batch(0, pg.rank(), DType::F64)?;
    // only head `a` takes part in the loss
    ddp.forward_with(|m| m.a.forward(&x))?.sum()?.backward()?;
    let err = ddp.forward_with(|m| m.a.forward(&x)).err();
    c.check(
        err.as_ref().is_some_and(|e| {
            e.kind() == ErrorKind::InvalidArgument && e.to_string().contains("b.weight")
        }),
        || format!("unused parameter error: {err:?}"),
    )?;
    Ok(())
}
