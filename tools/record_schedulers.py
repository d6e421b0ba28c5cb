#!/usr/bin/env python3
"""Record PyTorch learning-rate trajectories of LambdaLR and LinearLR for tapegrad.

Each case builds torch.optim.SGD (one float64 parameter, the given lr), the scheduler, and
records the lr right after construction (PyTorch applies epoch 0's factor there) and after each
of 12 `scheduler.step()` calls (each after an `optimizer.step()`). The lambdas are written in
the JSON as the names the Rust test maps to the same closures. Every float is written as its `repr` string (the
shortest round trip), which the test parses exactly.

Usage (from the repository root)::

    python3 tools/record_schedulers.py   # writes grad_tests/fixtures/optim/schedulers.json
"""

import json
import os

import torch

N_STEPS = 12
LAMBDAS = {
    "pow_0.95": lambda e: 0.95 ** e,
    "inverse": lambda e: 1.0 / (e + 1.0),
}
CASES = [
    ("linear_warmup", 0.1, "LinearLR", dict(start_factor=0.25, end_factor=1.0, total_iters=4)),
    ("linear_decay", 0.05, "LinearLR", dict(start_factor=1.0, end_factor=0.1, total_iters=5)),
    ("linear_default", 0.3, "LinearLR", dict()),
    ("lambda_pow", 0.1, "LambdaLR", dict(lr_lambda="pow_0.95")),
    ("lambda_inverse", 0.2, "LambdaLR", dict(lr_lambda="inverse")),
]


def main():
    out = []
    for name, lr, cls, kw in CASES:
        p = torch.zeros(1, dtype=torch.float64, requires_grad=True)
        opt = torch.optim.SGD([p], lr=lr)
        args = dict(kw)
        if cls == "LambdaLR":
            args["lr_lambda"] = LAMBDAS[kw["lr_lambda"]]
        sched = getattr(torch.optim.lr_scheduler, cls)(opt, **args)
        lrs = [opt.param_groups[0]["lr"]]
        for _ in range(N_STEPS):
            opt.step()
            sched.step()
            lrs.append(opt.param_groups[0]["lr"])
        kwargs = dict(kw)
        if cls == "LinearLR":
            kwargs = dict(start_factor=repr(sched.start_factor), end_factor=repr(sched.end_factor),
                          total_iters=sched.total_iters)
        out.append({"name": name, "lr": repr(lr), "class": cls, "kwargs": kwargs,
                    "lrs": [repr(x) for x in lrs]})
    path = os.path.join("grad_tests", "fixtures", "optim", "schedulers.json")
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-sched-v1", "torch": torch.__version__, "cases": out}, f,
                  indent=1)
    print("wrote", path, len(out), "cases")


if __name__ == "__main__":
    main()
