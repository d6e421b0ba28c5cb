#!/usr/bin/env python3
"""Per-op speed sweep: every public op on a standard input, PyTorch against tapegrad.

The standard input is contiguous f32 ``[1024, 1024]`` (2^20 elements, ``randn``; ops with a
domain get ``|x| + 0.5`` or values in (-1, 1)); reductions and row-wise ops run over the last
dim; ops suffixed ``_T`` take the transposed view ``x.t()`` (the strided variant of an
elementwise op). The same definitions, by name, are in ``benches/op_speed.rs``, which times
tapegrad and prints ``name<TAB>seconds``.

This script times PyTorch (2 threads, ``--threads``) in-process, runs the Rust side (``--rust BIN``, else
``cargo bench --bench op_speed`` in the repository), and prints one line per op sorted worst
first: ``op  tapegrad_ms  torch_ms  speed`` with ``speed = torch time / tapegrad time`` (below
1.0: tapegrad is slower).

    python3 benches/op_speed.py                      # build and run both sides
    python3 benches/op_speed.py --rust target/release/deps/op_speed-<hash>
    python3 benches/op_speed.py --torch-only         # PyTorch's timings only
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

import torch
import torch.nn.functional as F

THREADS = 2
N = 1024


CLOCK = time.perf_counter


def timeit(fn, runs, min_run):
    """Median seconds per call of fn() over `runs` runs of at least `min_run` seconds each."""
    fn()
    fn()
    inner = 1
    while True:
        t0 = CLOCK()
        for _ in range(inner):
            fn()
        dt = CLOCK() - t0
        if dt >= min_run:
            break
        inner = max(inner * 2, int(inner * min_run / max(dt, 1e-9) * 1.2))
    samples = []
    for _ in range(runs):
        t0 = CLOCK()
        for _ in range(inner):
            fn()
        samples.append((CLOCK() - t0) / inner)
    return statistics.median(samples)


def ops():
    """name -> zero-argument callable, on the standard inputs."""
    g = torch.Generator().manual_seed(0)
    x = torch.randn(N, N, generator=g)
    y = torch.randn(N, N, generator=g)
    pos = x.abs() + 0.5
    unit = torch.rand(N, N, generator=g) * 1.8 - 0.9
    prob = torch.rand(N, N, generator=g) * 0.98 + 0.01
    mask = x > 0
    bmask = y > 0
    idx_rows = torch.randint(0, N, (N,), generator=g)
    idx_full = torch.randint(0, N, (N, N), generator=g)
    target = torch.randint(0, N, (N,), generator=g)
    w = torch.ones(N)
    b = torch.zeros(N)
    small = torch.randn(256, 256, generator=g)
    small2 = torch.randn(256, 256, generator=g)
    bat = torch.randn(16, 64, 64, generator=g)
    lin_w = torch.randn(512, 1024, generator=g)
    lin_x = torch.randn(128, 1024, generator=g)
    vec = torch.randn(N * N, generator=g)
    vec2 = torch.randn(N * N, generator=g)
    half_a = torch.randn(N // 2, N, generator=g)
    half_b = torch.randn(N // 2, N, generator=g)
    emb = torch.randn(N, 256, generator=g)
    emb_idx = torch.randint(0, N, (4096,), generator=g)
    out = torch.empty(N, N)
    t = x.t()
    xd = x.double()
    yt = y.t()
    d = {
        # unary
        "abs": lambda: x.abs(), "neg": lambda: x.neg(), "sign": lambda: x.sign(),
        "relu": lambda: x.relu(), "exp": lambda: x.exp(), "exp2": lambda: x.exp2(),
        "log": lambda: pos.log(), "log2": lambda: pos.log2(), "log10": lambda: pos.log10(),
        "log1p": lambda: pos.log1p(), "expm1": lambda: x.expm1(), "sqrt": lambda: pos.sqrt(),
        "rsqrt": lambda: pos.rsqrt(), "reciprocal": lambda: pos.reciprocal(),
        "sin": lambda: x.sin(), "cos": lambda: x.cos(), "tan": lambda: unit.tan(),
        "asin": lambda: unit.asin(), "acos": lambda: unit.acos(), "atan": lambda: x.atan(),
        "sinh": lambda: x.sinh(), "cosh": lambda: x.cosh(), "tanh": lambda: x.tanh(),
        "sigmoid": lambda: x.sigmoid(), "floor": lambda: x.floor(), "ceil": lambda: x.ceil(),
        "round": lambda: x.round(), "trunc": lambda: x.trunc(), "frac": lambda: x.frac(),
        "square": lambda: x.square(), "erf": lambda: x.erf(),
        "erf_f64": lambda: xd.erf(),
        "isnan": lambda: x.isnan(), "isinf": lambda: x.isinf(), "isfinite": lambda: x.isfinite(),
        "logical_not": lambda: mask.logical_not(), "nonzero": lambda: mask.nonzero(),
        "silu": lambda: F.silu(x), "gelu": lambda: F.gelu(x),
        "gelu_tanh": lambda: F.gelu(x, approximate="tanh"), "softplus": lambda: F.softplus(x),
        "elu": lambda: F.elu(x), "leaky_relu": lambda: F.leaky_relu(x, 0.01),
        "nan_to_num": lambda: x.nan_to_num(), "clone": lambda: x.clone(),
        "to_f64": lambda: x.to(torch.float64),
        # binary
        "add": lambda: x + y, "sub": lambda: x - y, "mul": lambda: x * y, "div": lambda: x / y,
        "floor_divide": lambda: x.floor_divide(pos), "remainder": lambda: x.remainder(pos),
        "fmod": lambda: x.fmod(pos), "pow": lambda: pos.pow(y), "pow_2": lambda: x.pow(2.0),
        "eq": lambda: x == y, "ne": lambda: x != y, "lt": lambda: x < y, "le": lambda: x <= y,
        "gt": lambda: x > y, "ge": lambda: x >= y, "maximum": lambda: x.maximum(y),
        "minimum": lambda: x.minimum(y), "fmax": lambda: x.fmax(y), "fmin": lambda: x.fmin(y),
        "atan2": lambda: x.atan2(y), "hypot": lambda: x.hypot(y),
        "logical_and": lambda: mask.logical_and(bmask), "logical_or": lambda: mask.logical_or(bmask),
        "logical_xor": lambda: mask.logical_xor(bmask), "add_scalar": lambda: x + 1.0,
        "mul_scalar": lambda: x * 2.0, "add_": lambda: out.add_(1.0), "lerp": lambda: x.lerp(y, 0.3),
        "addcmul": lambda: x.addcmul(y, pos, value=0.5), "addcdiv": lambda: x.addcdiv(y, pos, value=0.5),
        "clamp": lambda: x.clamp(-0.5, 0.5), "where": lambda: torch.where(mask, x, y),
        "masked_fill": lambda: x.masked_fill(mask, 0.0),
        # transposed inputs
        "exp_T": lambda: t.exp(), "add_T": lambda: t + yt, "mul_T": lambda: t * yt,
        "relu_T": lambda: t.relu(), "contiguous_T": lambda: t.contiguous(),
        # reductions over the last dim (and full)
        "sum": lambda: x.sum(-1), "sum_all": lambda: x.sum(), "mean": lambda: x.mean(-1),
        "prod": lambda: x.prod(-1), "var": lambda: x.var(-1), "std": lambda: x.std(-1),
        "amax": lambda: x.amax(-1), "amax_0": lambda: x.amax(0), "amin": lambda: x.amin(-1),
        "max_dim": lambda: x.max(-1), "min_dim": lambda: x.min(-1), "max_all": lambda: x.max(),
        "argmax": lambda: x.argmax(-1), "argmin": lambda: x.argmin(-1),
        "all": lambda: mask.all(-1), "any": lambda: mask.any(-1),
        "logsumexp": lambda: x.logsumexp(-1), "norm": lambda: x.norm(dim=-1),
        "cumsum": lambda: x.cumsum(-1), "cumprod": lambda: x.cumprod(-1),
        "nansum": lambda: x.nansum(-1), "count_nonzero": lambda: x.count_nonzero(-1),
        "sum_0": lambda: x.sum(0),
        # row-wise nn
        "softmax": lambda: x.softmax(-1), "log_softmax": lambda: x.log_softmax(-1),
        "softmax_0": lambda: x.softmax(0),
        "layer_norm": lambda: F.layer_norm(x, (N,), w, b),
        "cross_entropy": lambda: F.cross_entropy(x, target),
        "nll_loss": lambda: F.nll_loss(x, target),
        "mse_loss": lambda: F.mse_loss(x, y), "l1_loss": lambda: F.l1_loss(x, y),
        "binary_cross_entropy": lambda: F.binary_cross_entropy(prob, prob),
        "bce_with_logits": lambda: F.binary_cross_entropy_with_logits(x, prob),
        "dropout_eval": lambda: F.dropout(x, 0.5, training=False),
        "embedding": lambda: F.embedding(emb_idx, emb),
        # sort / select
        "sort": lambda: x.sort(-1), "argsort": lambda: x.argsort(-1), "topk": lambda: x.topk(10, -1),
        # indexing
        "gather": lambda: x.gather(1, idx_full), "index_select": lambda: x.index_select(0, idx_rows),
        "scatter": lambda: x.scatter(1, idx_full, y), "scatter_add": lambda: x.scatter_add(1, idx_full, y),
        "masked_select": lambda: x.masked_select(mask), "index_tensor": lambda: x[idx_rows],
        "index_put_": lambda: out.index_put_((idx_rows,), y, accumulate=True),
        # linalg
        "mm_256": lambda: small.mm(small2), "matmul_256": lambda: small.matmul(small2),
        "bmm_16x64": lambda: bat.bmm(bat), "dot": lambda: vec.dot(vec2),
        "outer": lambda: vec[:N].outer(vec2[:N]), "addmm_256": lambda: small.addmm(small, small2),
        "linear": lambda: F.linear(lin_x, lin_w),
        # shape / movement (copying)
        "cat": lambda: torch.cat([half_a, half_b], 0), "stack": lambda: torch.stack([half_a, half_b], 0),
        "flip": lambda: x.flip(0), "roll": lambda: x.roll(1, 1), "repeat": lambda: half_a.repeat(2, 1),
        "tril": lambda: x.tril(), "triu": lambda: x.triu(), "reshape_T": lambda: t.reshape(-1),
        "narrow": lambda: x.narrow(0, 10, 100), "transpose": lambda: x.transpose(0, 1),
        # creation / fill / copy
        "zeros": lambda: torch.zeros(N, N), "ones": lambda: torch.ones(N, N),
        "full": lambda: torch.full((N, N), 2.0), "arange": lambda: torch.arange(N * N, dtype=torch.float32),
        "linspace": lambda: torch.linspace(0, 1, N * N), "eye": lambda: torch.eye(N),
        "zeros_like": lambda: torch.zeros_like(x), "fill_": lambda: out.fill_(1.0),
        "zero_": lambda: out.zero_(), "copy_": lambda: out.copy_(x),
    }
    return d


def torch_times(names, runs, min_run, threads):
    torch.set_num_threads(threads)
    table = ops()
    return {n: timeit(table[n], runs, min_run) for n in names}


def rust_times(binary, names, threads):
    if binary:
        cmd = [binary]
    else:
        repo = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
        cmd = ["cargo", "bench", "--manifest-path", os.path.join(repo, "Cargo.toml"), "--bench",
               "op_speed", "--"]
    env = dict(os.environ, RAYON_NUM_THREADS=str(threads))
    if CLOCK is time.thread_time:
        env["OP_SPEED_CPU_TIME"] = "1"
    res = subprocess.run(cmd + list(names), capture_output=True, text=True, check=True, env=env)
    out = {}
    for line in res.stdout.splitlines():
        parts = line.split("\t")
        if len(parts) == 2:
            out[parts[0]] = float(parts[1])
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="ops to time (default: all)")
    ap.add_argument("--rust", help="the built op_speed bench binary (default: cargo bench)")
    ap.add_argument("--runs", type=int, default=5)
    ap.add_argument("--min-run", type=float, default=0.02)
    ap.add_argument("--torch-only", action="store_true")
    ap.add_argument("--threads", type=int, default=THREADS,
                    help="threads of both sides (torch.set_num_threads, RAYON_NUM_THREADS; "
                         "default 2; 1 gives steadier ratios on a loaded machine)")
    ap.add_argument("--cpu-time", action="store_true",
                    help="time this thread's CPU time on both sides instead of the wall clock "
                         "(implies --threads 1): steady ratios on a loaded machine")
    ap.add_argument("--list", action="store_true")
    args = ap.parse_args()
    if args.cpu_time:
        global CLOCK
        CLOCK = time.thread_time
        args.threads = 1
    all_names = list(ops())
    if args.list:
        print("\n".join(all_names))
        return 0
    names = args.names or all_names
    print("# torch %s, %d threads; load average %.2f %.2f %.2f" % (
        (torch.__version__, args.threads) + os.getloadavg()), file=sys.stderr)
    tt = torch_times(names, args.runs, args.min_run, args.threads)
    if args.torch_only:
        for n in names:
            print(f"{n}\t{tt[n]:.6g}")
        return 0
    rt = rust_times(args.rust, names, args.threads)
    rows = []
    for n in names:
        if n not in rt:
            print(f"# {n}: no tapegrad timing", file=sys.stderr)
            continue
        rows.append((tt[n] / rt[n], n, rt[n], tt[n]))
    rows.sort()
    print(f"{'op':<22}{'tapegrad ms':>12}{'torch ms':>12}{'speed':>9}")
    for speed, n, r, t in rows:
        print(f"{n:<22}{r * 1e3:>12.4f}{t * 1e3:>12.4f}{speed:>8.2f}x")
    slow = sum(1 for r in rows if r[0] < 0.8)
    print(f"# {len(rows)} ops, {slow} under 0.8x, {sum(1 for r in rows if r[0] < 0.1)} under 0.1x",
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
