#!/usr/bin/env python3
"""Time PyTorch (and SciPy) on the workloads tapegrad's benchmarks compare against.

Prints one line per workload on stdout, ``name<TAB>figure<TAB>unit``, e.g.::

    matmul_f32_1024	243.117	GFLOP/s

and nothing else there (versions and thread count go to stderr).  PyTorch runs
with ``torch.set_num_threads(2)``.  Each figure is the median of ``--runs``
(default 7, at least 5) timed runs taken after warm-up; a run repeats the
workload enough times to last at least ~50 ms (``--min-run``), and the per-call
time is the run's time divided by that count.

Workloads (figure and unit):

    matmul_f32_{256,512,1024,2048}, matmul_f64_1024
                              a @ b, n x n             GFLOP/s = 2 n^3 / t
    add_f32_4M                a + b, n = 2^22          GB/s = 12 n / t
    add_out_f32_4M            torch.add(a, b, out=c)   GB/s = 12 n / t
    add_inplace_f32_4M        a.add_(1.0)              GB/s = 8 n / t
    sum_f32_16M               a.sum(), n = 2^24        GB/s = 4 n / t
    transpose_copy_4096       x.t().contiguous()       GB/s = 8 n / t, n = 4096^2
    autograd_chain_1000ops    16-element f32 leaf; 500 x (y = y * 1.0001; y = y + 0.1);
                              y.sum().backward()       us/op = total / 1000
    inplace_view_100          y = x.clone() (x: 1000 f32 leaf);
                              100 x y.narrow(0, 10 i, 10).mul_(2.0);
                              y.sum().backward()       us/op = total / 100
    mlp_step_b128             784-512-512-10 ReLU MLP, batch 128, F.cross_entropy,
                              zero_grad, backward, SGD lr 0.01 under no_grad
                                                       ms per step
    index_put_accumulate_1M   zeros(1024, 64).index_put_((idx,), vals, accumulate=True),
                              idx: 1M int64 in [0, 1024), vals: randn(1M, 64)   ms
    sdpa_causal_b8h8t256d64   F.scaled_dot_product_attention(q, k, v, is_causal=True),
                              q, k, v: randn(8, 8, 256, 64) f32   ms
    sdpa_causal_fwdbwd        the same with q requiring grad, out.sum().backward()   ms
    cnn_step_digits_b64       Conv2d(1,16,3,p=1) BN ReLU MaxPool2d(2) Conv2d(16,32,3,p=1) BN
                              ReLU MaxPool2d(2) Flatten Linear(128,10), train mode, input
                              randn(64, 1, 8, 8), F.cross_entropy, zero_grad, backward,
                              Adam(lr=1e-3) step   ms
    transformer_layer_step_b16t64d128
                              nn.TransformerEncoderLayer(128, 4, 512, dropout=0),
                              input randn(16, 64, 128), loss out.pow(2).mean(),
                              zero_grad, backward, AdamW(lr=1e-3) step   ms
    sparse_slice_csr_1M       SciPy CSR 10000 x 10000 with 1,000,000 nnz (f32),
                              m[2000:7000, 1000:6000]  ms
    sparse_slice_coo_1M       the same data as a coalesced PyTorch COO tensor,
                              x.narrow_copy(0, 2000, 5000).narrow_copy(1, 1000, 5000)   ms
    softmax_4096x1024, log_softmax_4096x1024
                              x.softmax(-1) / x.log_softmax(-1), x: randn(4096, 1024)   ms
    layer_norm_4096x1024      F.layer_norm(x, (1024,), ones(1024), zeros(1024), 1e-5)   ms
    cross_entropy_4096x1024   x: randn(4096, 1024) requiring grad, t: randint(0, 1024, (4096,));
                              x.grad = None; F.cross_entropy(x, t).backward()          ms
    copy_f32_{4M,16M}         dst.copy_(src), n = 2^22 / 2^24 f32    GB/s = 8 n / t
    matmul_f32_{64,128}       a @ b, n x n             GFLOP/s = 2 n^3 / t
    bmm_f32_b64_128           torch.bmm(a, b), a, b: [64, 128, 128]   GFLOP/s = 64 * 2 * 128^3 / t
    conv2d_3x3_c64_56         F.conv2d(x, w, padding=1), x: randn(8, 64, 56, 56),
                              w: randn(64, 64, 3, 3)   GFLOP/s = 2*8*64*56*56*64*9 / t
    conv2d_3x3_c64_56_fwdbwd  the same, x and w requiring grad;
                              F.conv2d(...).sum().backward()   ms
    exp_f32_4M, tanh_f32_4M, gelu_f32_4M
                              torch.exp / torch.tanh / F.gelu (exact) of randn(2^22)   ms
    gelu_backward_f32_4M      torch.autograd.grad(F.gelu(x), x, g, retain_graph=True),
                              x, g: randn(2^22)        ms

The sparse matrix: ``numpy.random.default_rng(0)`` draws 1,000,000 distinct
flat positions in [0, 10^8) (``choice(..., replace=False)``), row = pos // 10^4,
col = pos % 10^4, then values uniform in [0, 1) as float32.

Usage::

    python3 benches/torch_workloads.py                  # all workloads
    python3 benches/torch_workloads.py matmul_f32_1024 sum_f32_16M
    python3 benches/torch_workloads.py --list

Workloads whose library (torch, or scipy for the CSR one) is not installed are
skipped silently.
"""

import argparse
import os
import statistics
import sys
import time

try:
    import torch
    import torch.nn.functional as F
except ImportError:  # pragma: no cover - depends on the machine
    torch = None
try:
    import numpy as np
except ImportError:  # pragma: no cover
    np = None
try:
    import scipy
    import scipy.sparse
except ImportError:  # pragma: no cover
    scipy = None

THREADS = 2


def timeit(fn, runs: int, min_run: float) -> float:
    """Median seconds per call of fn() over `runs` timed runs, after warm-up."""
    fn()
    fn()
    # Calibrate how many calls one run needs to last at least `min_run` seconds.
    inner = 1
    while True:
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        dt = time.perf_counter() - t0
        if dt >= min_run:
            break
        inner = max(inner * 2, int(inner * min_run / max(dt, 1e-9) * 1.2))
    samples = []
    for _ in range(runs):
        t0 = time.perf_counter()
        for _ in range(inner):
            fn()
        samples.append((time.perf_counter() - t0) / inner)
    return statistics.median(samples)


# Each workload: setup() -> (fn, to_figure) where to_figure(seconds_per_call) -> figure.
def w_matmul(n, dtype_name):
    def setup():
        dtype = {"f32": torch.float32, "f64": torch.float64}[dtype_name]
        g = torch.Generator().manual_seed(0)
        a = torch.randn(n, n, dtype=dtype, generator=g)
        b = torch.randn(n, n, dtype=dtype, generator=g)
        return (lambda: torch.mm(a, b)), (lambda t: 2 * n**3 / t / 1e9)
    return setup


N4M = 1 << 22
N16M = 1 << 24


def w_add():
    a, b = torch.randn(N4M), torch.randn(N4M)
    return (lambda: a + b), (lambda t: 12 * N4M / t / 1e9)


def w_add_out():
    a, b, c = torch.randn(N4M), torch.randn(N4M), torch.empty(N4M)
    return (lambda: torch.add(a, b, out=c)), (lambda t: 12 * N4M / t / 1e9)


def w_add_inplace():
    a = torch.randn(N4M)
    return (lambda: a.add_(1.0)), (lambda t: 8 * N4M / t / 1e9)


def w_sum():
    a = torch.randn(N16M)
    return (lambda: a.sum()), (lambda t: 4 * N16M / t / 1e9)


def w_transpose():
    n = 4096
    x = torch.randn(n, n)
    return (lambda: x.t().contiguous()), (lambda t: 8 * n * n / t / 1e9)


def w_autograd_chain():
    x = torch.randn(16, requires_grad=True)

    def fn():
        x.grad = None
        y = x
        for _ in range(500):
            y = y * 1.0001
            y = y + 0.1
        y.sum().backward()
    return fn, (lambda t: t / 1000 * 1e6)


def w_inplace_view():
    x = torch.randn(1000, requires_grad=True)

    def fn():
        x.grad = None
        y = x.clone()
        for i in range(100):
            y.narrow(0, 10 * i, 10).mul_(2.0)
        y.sum().backward()
    return fn, (lambda t: t / 100 * 1e6)


def w_mlp():
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Linear(784, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 512), torch.nn.ReLU(),
        torch.nn.Linear(512, 10),
    )
    x = torch.randn(128, 784)
    target = torch.randint(0, 10, (128,))
    params = list(model.parameters())
    lr = 0.01

    def fn():
        model.zero_grad(set_to_none=True)
        loss = F.cross_entropy(model(x), target)
        loss.backward()
        with torch.no_grad():
            for p in params:
                p.add_(p.grad, alpha=-lr)
    return fn, (lambda t: t * 1e3)


def w_index_put():
    g = torch.Generator().manual_seed(0)
    idx = torch.randint(0, 1024, (1 << 20,), dtype=torch.int64, generator=g)
    vals = torch.randn(1 << 20, 64, generator=g)
    x = torch.zeros(1024, 64)
    return (lambda: x.index_put_((idx,), vals, accumulate=True)), (lambda t: t * 1e3)


def w_max_pool2d():
    x = torch.randn(8, 64, 56, 56, generator=torch.Generator().manual_seed(0))
    return (lambda: torch.nn.functional.max_pool2d(x, 2)), (lambda t: t * 1e3)


def w_batch_norm2d_train():
    x = torch.randn(8, 64, 56, 56, generator=torch.Generator().manual_seed(0))
    bn = torch.nn.BatchNorm2d(64).train()
    return (lambda: bn(x)), (lambda t: t * 1e3)


SPARSE_N, SPARSE_NNZ = 10_000, 1_000_000


def sparse_data():
    rng = np.random.default_rng(0)
    pos = rng.choice(SPARSE_N * SPARSE_N, size=SPARSE_NNZ, replace=False)
    rows, cols = pos // SPARSE_N, pos % SPARSE_N
    vals = rng.random(SPARSE_NNZ, dtype=np.float32)
    return rows, cols, vals


def w_csr():
    rows, cols, vals = sparse_data()
    m = scipy.sparse.csr_matrix((vals, (rows, cols)), shape=(SPARSE_N, SPARSE_N))
    assert m.nnz == SPARSE_NNZ
    return (lambda: m[2000:7000, 1000:6000]), (lambda t: t * 1e3)


def w_coo():
    rows, cols, vals = sparse_data()
    ind = torch.from_numpy(np.stack([rows, cols]).astype(np.int64))
    x = torch.sparse_coo_tensor(ind, torch.from_numpy(vals), (SPARSE_N, SPARSE_N),
                                check_invariants=False).coalesce()
    assert x._nnz() == SPARSE_NNZ
    return (lambda: x.narrow_copy(0, 2000, 5000).narrow_copy(1, 1000, 5000)), (lambda t: t * 1e3)


# --- issue 29: row-wise ops, copy yardsticks, small matmuls ---
def rows_4096x1024():
    torch.manual_seed(0)
    return torch.randn(4096, 1024)


def w_softmax():
    x = rows_4096x1024()
    return (lambda: x.softmax(-1)), (lambda t: t * 1e3)


def w_log_softmax():
    x = rows_4096x1024()
    return (lambda: x.log_softmax(-1)), (lambda t: t * 1e3)


def w_layer_norm():
    x = rows_4096x1024()
    w, b = torch.ones(1024), torch.zeros(1024)
    return (lambda: F.layer_norm(x, (1024,), w, b, 1e-5)), (lambda t: t * 1e3)


def w_cross_entropy():
    x = rows_4096x1024().requires_grad_(True)
    target = torch.randint(0, 1024, (4096,))

    def fn():
        x.grad = None
        F.cross_entropy(x, target).backward()
    return fn, (lambda t: t * 1e3)


def w_copy(n):
    def setup():
        src, dst = torch.randn(n), torch.empty(n)
        return (lambda: dst.copy_(src)), (lambda t: 8 * n / t / 1e9)
    return setup


def w_bmm():
    g = torch.Generator().manual_seed(0)
    a = torch.randn(64, 128, 128, generator=g)
    b = torch.randn(64, 128, 128, generator=g)
    return (lambda: torch.bmm(a, b)), (lambda t: 64 * 2 * 128**3 / t / 1e9)


def w_conv2d():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 64, 56, 56, generator=g)
    w = torch.randn(64, 64, 3, 3, generator=g)
    return (lambda: F.conv2d(x, w, padding=1)), (lambda t: 2 * 8 * 64 * 56 * 56 * 64 * 9 / t / 1e9)


def w_conv2d_fwdbwd():
    g = torch.Generator().manual_seed(0)
    x = torch.randn(8, 64, 56, 56, generator=g, requires_grad=True)
    w = torch.randn(64, 64, 3, 3, generator=g, requires_grad=True)

    def fn():
        x.grad = None
        w.grad = None
        F.conv2d(x, w, padding=1).sum().backward()
    return fn, (lambda t: t * 1e3)


def w_sdpa(backward):
    def setup():
        torch.manual_seed(0)
        q, k, v = (torch.randn(8, 8, 256, 64) for _ in range(3))
        q.requires_grad_(backward)

        def fn():
            if backward:
                q.grad = None
                F.scaled_dot_product_attention(q, k, v, is_causal=True).sum().backward()
            else:
                F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return fn, (lambda t: t * 1e3)
    return setup


def w_transformer_step():
    torch.manual_seed(0)
    layer = torch.nn.TransformerEncoderLayer(128, 4, 512, dropout=0.0)
    x = torch.randn(16, 64, 128)
    opt = torch.optim.AdamW(layer.parameters(), lr=1e-3)

    def fn():
        opt.zero_grad(set_to_none=True)
        layer(x).pow(2).mean().backward()
        opt.step()
    return fn, (lambda t: t * 1e3)


def w_cnn_step():
    torch.manual_seed(0)
    nn = torch.nn
    model = nn.Sequential(
        nn.Conv2d(1, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(16, 32, 3, padding=1), nn.BatchNorm2d(32), nn.ReLU(), nn.MaxPool2d(2),
        nn.Flatten(), nn.Linear(128, 10),
    ).train()
    x = torch.randn(64, 1, 8, 8)
    target = torch.randint(0, 10, (64,))
    opt = torch.optim.Adam(model.parameters(), lr=1e-3)

    def fn():
        opt.zero_grad(set_to_none=True)
        F.cross_entropy(model(x), target).backward()
        opt.step()
    return fn, (lambda t: t * 1e3)

# Transcendentals (issue 29): 2^22 f32 randn, ms per call; gelu exact; the backward is
# autograd.grad(y = gelu(x), x, g, retain_graph=True): the GeluBackward kernel given grad_output.
def w_unary(name):
    def setup():
        a = torch.randn(1 << 22)
        f = {"exp": torch.exp, "tanh": torch.tanh, "gelu": F.gelu}[name]
        return (lambda: f(a)), (lambda t: t * 1e3)
    return setup


def w_gelu_backward():
    x = torch.randn(1 << 22, requires_grad=True)
    g = torch.randn(1 << 22)
    y = F.gelu(x)
    return (lambda: torch.autograd.grad(y, x, g, retain_graph=True)), (lambda t: t * 1e3)


# name -> (setup, unit, libraries needed)
WORKLOADS = {
    "matmul_f32_256": (w_matmul(256, "f32"), "GFLOP/s", ("torch",)),
    "matmul_f32_512": (w_matmul(512, "f32"), "GFLOP/s", ("torch",)),
    "matmul_f32_1024": (w_matmul(1024, "f32"), "GFLOP/s", ("torch",)),
    "matmul_f32_2048": (w_matmul(2048, "f32"), "GFLOP/s", ("torch",)),
    "matmul_f64_1024": (w_matmul(1024, "f64"), "GFLOP/s", ("torch",)),
    "add_f32_4M": (w_add, "GB/s", ("torch",)),
    "add_out_f32_4M": (w_add_out, "GB/s", ("torch",)),
    "add_inplace_f32_4M": (w_add_inplace, "GB/s", ("torch",)),
    "sum_f32_16M": (w_sum, "GB/s", ("torch",)),
    "transpose_copy_4096": (w_transpose, "GB/s", ("torch",)),
    "autograd_chain_1000ops": (w_autograd_chain, "us/op", ("torch",)),
    "inplace_view_100": (w_inplace_view, "us/op", ("torch",)),
    "mlp_step_b128": (w_mlp, "ms", ("torch",)),
    "index_put_accumulate_1M": (w_index_put, "ms", ("torch",)),
    "sdpa_causal_b8h8t256d64": (w_sdpa(False), "ms", ("torch",)),
    "sdpa_causal_fwdbwd": (w_sdpa(True), "ms", ("torch",)),
    "transformer_layer_step_b16t64d128": (w_transformer_step, "ms", ("torch",)),
    "sparse_slice_csr_1M": (w_csr, "ms", ("numpy", "scipy")),
    "sparse_slice_coo_1M": (w_coo, "ms", ("numpy", "torch")),
    # issue 29: row-wise ops, copy yardsticks, small matmuls
    "softmax_4096x1024": (w_softmax, "ms", ("torch",)),
    "log_softmax_4096x1024": (w_log_softmax, "ms", ("torch",)),
    "layer_norm_4096x1024": (w_layer_norm, "ms", ("torch",)),
    "cross_entropy_4096x1024": (w_cross_entropy, "ms", ("torch",)),
    "copy_f32_4M": (w_copy(N4M), "GB/s", ("torch",)),
    "copy_f32_16M": (w_copy(N16M), "GB/s", ("torch",)),
    "matmul_f32_64": (w_matmul(64, "f32"), "GFLOP/s", ("torch",)),
    "matmul_f32_128": (w_matmul(128, "f32"), "GFLOP/s", ("torch",)),
    "bmm_f32_b64_128": (w_bmm, "GFLOP/s", ("torch",)),
    "conv2d_3x3_c64_56": (w_conv2d, "GFLOP/s", ("torch",)),
    "conv2d_3x3_c64_56_fwdbwd": (w_conv2d_fwdbwd, "ms", ("torch",)),
    "exp_f32_4M": (w_unary("exp"), "ms", ("torch",)),
    "tanh_f32_4M": (w_unary("tanh"), "ms", ("torch",)),
    "gelu_f32_4M": (w_unary("gelu"), "ms", ("torch",)),
    "gelu_backward_f32_4M": (w_gelu_backward, "ms", ("torch",)),
    "max_pool2d_c64_56": (w_max_pool2d, "ms", ("torch",)),
    "batch_norm2d_train_c64_56": (w_batch_norm2d_train, "ms", ("torch",)),
    "cnn_step_digits_b64": (w_cnn_step, "ms", ("torch",)),
}

AVAILABLE = {"torch": torch is not None, "numpy": np is not None, "scipy": scipy is not None}


def cpu_model() -> str:
    """The CPU's model name from /proc/cpuinfo (Linux), or 'unknown'."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "unknown"


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("names", nargs="*", help="workloads to run (default: all)")
    ap.add_argument("--runs", type=int, default=7, help="timed runs per workload (>= 5; default 7)")
    ap.add_argument("--min-run", type=float, default=0.05,
                    help="minimum seconds per timed run (default 0.05)")
    ap.add_argument("--list", action="store_true", help="list workload names and exit")
    args = ap.parse_args()
    if args.list:
        print("\n".join(WORKLOADS))
        return 0
    unknown = [n for n in args.names if n not in WORKLOADS]
    if unknown:
        print(f"unknown workload(s): {', '.join(unknown)}; see --list", file=sys.stderr)
        return 2
    runs = max(args.runs, 5)
    names = args.names or list(WORKLOADS)

    if torch is not None:
        torch.set_num_threads(THREADS)
        print(f"# torch {torch.__version__}, {torch.get_num_threads()} threads, "
              f"mkl={torch.backends.mkl.is_available()}", file=sys.stderr)
    if scipy is not None:
        print(f"# scipy {scipy.__version__}, numpy {np.__version__}", file=sys.stderr)
    print(f"# cpu: {cpu_model()}, {os.cpu_count()} logical cpus", file=sys.stderr)
    # Other processes on the machine skew the figures badly (2 OpenMP threads on 2 cores
    # spin-wait on each other): the load average is printed to judge a run.
    print("# load average %.2f %.2f %.2f at start" % os.getloadavg(), file=sys.stderr)

    for name in names:
        setup, unit, libs = WORKLOADS[name]
        if not all(AVAILABLE[lib] for lib in libs):
            continue
        fn, to_figure = setup()
        secs = timeit(fn, runs, args.min_run)
        print(f"{name}\t{to_figure(secs):.3f}\t{unit}", flush=True)
    print("# load average %.2f %.2f %.2f at end" % os.getloadavg(), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
