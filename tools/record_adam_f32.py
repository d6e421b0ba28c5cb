#!/usr/bin/env python3
"""Record PyTorch's Adam/AdamW steps bit for bit (float32 and float64) for tapegrad.

For each configuration: two parameters (p1 [259], p2 [7]) from a seeded normal and, for each
of 4 steps, a recorded gradient (seeded normal scaled by 0.1, set as ``p.grad``). PyTorch's
default on CPU is the single-tensor implementation. Per step the JSON holds the gradients and,
after the step, the parameters, exp_avg, exp_avg_sq and max_exp_avg_sq as IEEE bit patterns
(u32, or u64 as decimal strings), plus ``sqrt_off``: the indices where PyTorch's own
``torch.sqrt`` of the denominator's source (exp_avg_sq, or max_exp_avg_sq with amsgrad) is not
the correctly rounded square root. PyTorch's CPU sqrt is not correctly rounded (about 20% of
float32 inputs come out one ulp off on the recording machine), tapegrad's is: those elements
of the parameter can differ in the last place, and the test names them instead of hiding them.

Usage (from the repository root)::

    python3 tools/record_adam_f32.py   # writes grad_tests/fixtures/optim/bitexact_adam.json
"""

import json
import os

import numpy as np
import torch

N_STEPS = 4
SHAPES = [[259], [7]]
CONFIGS = [
    ("adam", "Adam", dict(lr=0.01)),
    ("adam_amsgrad_wd", "Adam", dict(lr=0.01, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.95), eps=1e-6)),
    ("adamw", "AdamW", dict(lr=0.003, weight_decay=0.05)),
    ("adamw_amsgrad", "AdamW", dict(lr=0.01, amsgrad=True, betas=(0.6, 0.99))),
]


def bits(t):
    a = t.detach().contiguous().numpy()
    if a.dtype == np.float32:
        return [int(x) for x in a.view(np.uint32)]
    return [str(int(x)) for x in a.view(np.uint64)]


def sqrt_off(t):
    a = t.detach().numpy()
    if a.dtype == np.float32:
        exact = np.sqrt(a.astype(np.float64)).astype(np.float32)
    else:
        import decimal
        decimal.getcontext().prec = 60
        exact = np.array([float(decimal.Decimal(float(x)).sqrt()) for x in a])
    ours = torch.sqrt(t.detach()).numpy()
    return [int(i) for i in np.nonzero(ours != exact)[0]]


def record(name, cls, kw, dtype, seed):
    g = torch.Generator().manual_seed(seed)
    params = [torch.randn(s, generator=g, dtype=dtype).requires_grad_() for s in SHAPES]
    opt = getattr(torch.optim, cls)(params, **kw)
    grp = opt.param_groups[0]
    out = {
        "name": name,
        "class": cls,
        "dtype": str(dtype).replace("torch.", ""),
        "hparams": {"lr": grp["lr"], "betas": list(grp["betas"]), "eps": grp["eps"],
                    "weight_decay": grp["weight_decay"], "amsgrad": grp["amsgrad"]},
        "initial": [bits(p) for p in params],
        "steps": [],
    }
    for _ in range(N_STEPS):
        grads = [torch.randn(s, generator=g, dtype=dtype) * 0.1 for s in SHAPES]
        for p, gr in zip(params, grads):
            p.grad = gr.clone()
        opt.step()
        st = [opt.state[p] for p in params]
        out["steps"].append({
            "grads": [bits(x) for x in grads],
            "params": [bits(p) for p in params],
            "exp_avg": [bits(s["exp_avg"]) for s in st],
            "exp_avg_sq": [bits(s["exp_avg_sq"]) for s in st],
            "max_exp_avg_sq": [bits(s["max_exp_avg_sq"]) if grp["amsgrad"] else None for s in st],
            "sqrt_off": [sqrt_off(s["max_exp_avg_sq"] if grp["amsgrad"] else s["exp_avg_sq"])
                         for s in st],
        })
    return out


def main():
    cases = []
    for i, (name, cls, kw) in enumerate(CONFIGS):
        for dtype in (torch.float32, torch.float64):
            cases.append(record(name, cls, kw, dtype, 200 + i))
    path = os.path.join("grad_tests", "fixtures", "optim", "bitexact_adam.json")
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-optim-bitexact-v1", "torch": torch.__version__,
                   "cases": cases}, f, separators=(",", ":"))
    off = sum(len(x) for c in cases for s in c["steps"] for x in s["sqrt_off"])
    total = sum(len(x) for c in cases for s in c["steps"] for x in s["params"])
    print("wrote", path, len(cases), "cases;", off, "of", total, "elements behind a sqrt PyTorch rounds off")


if __name__ == "__main__":
    main()
