#!/usr/bin/env python3
"""Record PyTorch optimizer steps over two parameter groups, float32, bit for bit.

Cases: SGD (momentum, per-group lr / weight_decay / momentum / nesterov / dampening), Adam and
AdamW (per-group lr / weight_decay / betas / eps / amsgrad / maximize). Group 0 holds two
parameters ([37], [5]), group 1 one ([19]); each of 5 steps sets a recorded gradient (seeded
normal * 0.1) on every parameter and calls ``opt.step()`` (PyTorch's CPU default, the
single-tensor implementation). Per step the JSON holds the gradients and, after the step, the
parameters and the state (momentum_buffer; exp_avg, exp_avg_sq, max_exp_avg_sq) as IEEE bit
patterns (u32), and for Adam/AdamW ``sqrt_off``: the elements where PyTorch's own float32
``torch.sqrt`` of the second moment is not correctly rounded (MKL VML, see
tools/replay_adam_f32.py); tapegrad's sqrt is correctly rounded, so only those parameter
elements may differ in the last place. The options of each group are written as given and as
PyTorch resolved them (``param_groups``), floats as ``repr`` strings.

Usage (from the repository root)::

    python3 tools/record_optim_groups.py   # writes grad_tests/fixtures/optim/groups.json
"""

import json
import os

import numpy as np
import torch

N_STEPS = 5
SHAPES = [[[37], [5]], [[19]]]
CASES = [
    ("sgd_momentum", "SGD", dict(lr=0.1, momentum=0.9, weight_decay=0.01),
     [dict(), dict(lr=0.03, weight_decay=0.0, momentum=0.5, dampening=0.1)]),
    ("sgd_nesterov_maximize", "SGD", dict(lr=0.05, momentum=0.8, nesterov=True),
     [dict(weight_decay=0.02), dict(lr=0.2, maximize=True)]),
    ("adam", "Adam", dict(lr=0.01),
     [dict(weight_decay=0.1), dict(lr=0.003, betas=(0.8, 0.95), eps=1e-6, amsgrad=True)]),
    ("adamw", "AdamW", dict(lr=0.004, weight_decay=0.05),
     [dict(betas=(0.85, 0.99)), dict(lr=0.02, weight_decay=0.0, maximize=True)]),
]
KEYS = ["lr", "momentum", "dampening", "weight_decay", "nesterov", "betas", "eps", "amsgrad",
        "maximize"]


def bits(t):
    return [int(x) for x in t.detach().contiguous().numpy().view(np.uint32)]


def sqrt_off(t):
    a = t.detach().numpy()
    exact = np.sqrt(a.astype(np.float64)).astype(np.float32)
    return [int(i) for i in np.nonzero(torch.sqrt(t.detach()).numpy() != exact)[0]]


def enc(v):
    if isinstance(v, bool):
        return v
    if isinstance(v, (tuple, list)):
        return [repr(float(x)) for x in v]
    return repr(float(v))


def record(i, name, cls, defaults, overrides):
    g = torch.Generator().manual_seed(300 + i)
    groups = [[torch.randn(s, generator=g).requires_grad_() for s in shapes] for shapes in SHAPES]
    flat = [p for grp in groups for p in grp]
    opt = getattr(torch.optim, cls)(
        [dict(params=ps, **ov) for ps, ov in zip(groups, overrides)], **defaults)
    out = {
        "name": name,
        "class": cls,
        "defaults": {k: enc(v) for k, v in defaults.items()},
        "groups": [{"num_params": len(ps), "overrides": {k: enc(v) for k, v in ov.items()},
                    "resolved": {k: enc(pg[k]) for k in KEYS if k in pg}}
                   for ps, ov, pg in zip(groups, overrides, opt.param_groups)],
        "initial": [bits(p) for p in flat],
        "steps": [],
    }
    for _ in range(N_STEPS):
        grads = [torch.randn(p.shape, generator=g) * 0.1 for p in flat]
        for p, gr in zip(flat, grads):
            p.grad = gr.clone()
        opt.step()
        st = [opt.state[p] for p in flat]
        rec = {"grads": [bits(x) for x in grads], "params": [bits(p) for p in flat]}
        if cls == "SGD":
            rec["momentum_buffer"] = [bits(s["momentum_buffer"]) for s in st]
        else:
            ams = [pg["amsgrad"] for pg, ps in zip(opt.param_groups, groups) for _ in ps]
            rec["exp_avg"] = [bits(s["exp_avg"]) for s in st]
            rec["exp_avg_sq"] = [bits(s["exp_avg_sq"]) for s in st]
            rec["max_exp_avg_sq"] = [bits(s["max_exp_avg_sq"]) if a else None
                                     for s, a in zip(st, ams)]
            rec["sqrt_off"] = [sqrt_off(s["max_exp_avg_sq"] if a else s["exp_avg_sq"])
                               for s, a in zip(st, ams)]
        out["steps"].append(rec)
    return out


def main():
    cases = [record(i, *c) for i, c in enumerate(CASES)]
    path = os.path.join("grad_tests", "fixtures", "optim", "groups.json")
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-optim-groups-v1", "torch": torch.__version__,
                   "cases": cases}, f, separators=(",", ":"))
    off = sum(len(x) for c in cases for s in c["steps"] for x in s.get("sqrt_off", []))
    print("wrote", path, len(cases), "cases;", off, "Adam elements behind torch's sqrt")


if __name__ == "__main__":
    main()
