#!/usr/bin/env python3
"""Record bit-exact float32 (and float64) SGD steps of PyTorch for tapegrad.

For each configuration: two parameters (p1 [259], p2 [7]; 259 = 16*16 + 3 leaves a vector
tail) drawn from a seeded normal, and for each of 5 steps a recorded gradient (seeded
normal, set as ``p.grad`` directly, so both sides step on identical gradients). The optimizer
is PyTorch's default on CPU (``foreach=None`` resolves to the single-tensor implementation
there; the foreach CPU path runs the same per-tensor ops). The JSON stores every float as its
IEEE bit pattern (u32 for float32, u64 for float64 as a decimal string), the initial
parameters, each step's gradients and the parameters and momentum buffers after each step.

Usage (from the repository root)::

    python3 tools/record_optim_f32.py   # writes grad_tests/fixtures/optim/bitexact_sgd.json
"""

import json
import os

import numpy as np
import torch

N_STEPS = 5
SHAPES = {"p1": [259], "p2": [7]}
CONFIGS = [
    ("sgd_plain", dict(lr=0.1)),
    ("sgd_momentum_dampening_wd", dict(lr=0.05, momentum=0.9, dampening=0.1, weight_decay=0.01)),
    ("sgd_nesterov_wd", dict(lr=0.03, momentum=0.8, nesterov=True, weight_decay=0.02)),
]


def bits(t):
    a = t.detach().contiguous().numpy()
    if a.dtype == np.float32:
        return [int(x) for x in a.view(np.uint32)]
    return [str(int(x)) for x in a.view(np.uint64)]


def record(name, kw, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    params = [torch.randn(SHAPES[k], generator=g, dtype=dtype).requires_grad_() for k in SHAPES]
    opt = torch.optim.SGD(params, **kw)
    out = {
        "name": name,
        "dtype": str(dtype).replace("torch.", ""),
        "hparams": {k: opt.param_groups[0][k]
                    for k in ["lr", "momentum", "dampening", "weight_decay", "nesterov"]},
        "initial": [bits(p) for p in params],
        "steps": [],
    }
    for _ in range(N_STEPS):
        grads = [torch.randn(SHAPES[k], generator=g, dtype=dtype) for k in SHAPES]
        for p, gr in zip(params, grads):
            p.grad = gr.clone()
        opt.step()
        bufs = [opt.state[p].get("momentum_buffer") for p in params]
        out["steps"].append({
            "grads": [bits(x) for x in grads],
            "params": [bits(p) for p in params],
            "momentum_buffers": [bits(b) if b is not None else None for b in bufs],
        })
    return out


def main():
    cases = []
    for i, (name, kw) in enumerate(CONFIGS):
        for dtype in (torch.float32, torch.float64):
            cases.append(record(name, kw, dtype, 100 + i))
    path = os.path.join("grad_tests", "fixtures", "optim", "bitexact_sgd.json")
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-optim-bitexact-v1", "torch": torch.__version__,
                   "cases": cases}, f, separators=(",", ":"))
    print("wrote", path, len(cases), "cases")


if __name__ == "__main__":
    main()
