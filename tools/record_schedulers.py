#!/usr/bin/env python3
"""Record PyTorch learning-rate trajectories of LambdaLR and LinearLR for tapegrad, and (in
``group_cases``) of every scheduler over two parameter groups: OneCycleLR (cos / linear,
three_phase, momentum cycling on SGD's momentum and Adam's beta1, per-group max_lr),
ReduceLROnPlateau (min / max, rel / abs, patience, cooldown, per-group min_lr, eps; the metric
sequence is recorded), SequentialLR (LinearLR warm-up then CosineAnnealingLR, and a three-way
chain), StepLR, CosineAnnealingLR, LinearLR, LambdaLR; and PyTorch's error messages for bad
arguments (``errors``).

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


METRICS = [1.0, 0.9, 0.9, 0.95, 0.91, 0.89, 0.9, 0.9, 0.9, 0.9, 0.5, 0.5, 0.5, 0.5,
           0.5, 0.5, 0.49995, 0.4, 0.41, 0.42, 0.43, 0.44, float("nan"), 0.3]
# (name, optimizer class, per-group options, defaults, scheduler class, kwargs, steps)
GROUP_CASES = [
    ("onecycle_cos_sgd", "SGD", [dict(lr=0.1), dict(lr=0.02)], dict(momentum=0.9),
     "OneCycleLR", dict(max_lr=[1.0, 0.3], total_steps=20), 20),
    ("onecycle_linear_adam", "Adam", [dict(lr=0.1), dict(lr=0.02, betas=(0.8, 0.99))], dict(),
     "OneCycleLR", dict(max_lr=0.5, epochs=3, steps_per_epoch=5, anneal_strategy="linear",
                        pct_start=0.4, div_factor=10.0, final_div_factor=100.0), 15),
    ("onecycle_three_phase", "SGD", [dict(lr=0.1), dict(lr=0.1)], dict(momentum=0.9),
     "OneCycleLR", dict(max_lr=[0.8, 0.4], total_steps=17, three_phase=True,
                        base_momentum=0.8, max_momentum=0.9), 17),
    ("onecycle_no_momentum", "SGD", [dict(lr=0.1), dict(lr=0.2)], dict(momentum=0.7),
     "OneCycleLR", dict(max_lr=0.2, total_steps=9, cycle_momentum=False), 9),
    ("plateau_min_rel", "SGD", [dict(lr=0.1), dict(lr=0.05)], dict(),
     "ReduceLROnPlateau", dict(patience=2, factor=0.5, min_lr=[0.01, 0.02]), 24),
    ("plateau_min_abs_cooldown", "Adam", [dict(lr=0.1), dict(lr=0.01)], dict(),
     "ReduceLROnPlateau", dict(patience=1, threshold=0.05, threshold_mode="abs", cooldown=2,
                               min_lr=0.003, eps=1e-3), 24),
    ("plateau_max_rel", "SGD", [dict(lr=0.1), dict(lr=0.3)], dict(),
     "ReduceLROnPlateau", dict(mode="max", patience=0, factor=0.7, threshold=0.1), 24),
    ("plateau_max_abs", "SGD", [dict(lr=0.1), dict(lr=0.3)], dict(),
     "ReduceLROnPlateau", dict(mode="max", patience=1, threshold=0.01, threshold_mode="abs"), 24),
    ("sequential_warmup_cosine", "SGD", [dict(lr=0.1), dict(lr=0.03)], dict(momentum=0.9),
     "SequentialLR", dict(milestones=[5], schedulers=[
         ("LinearLR", dict(start_factor=0.1, end_factor=1.0, total_iters=5)),
         ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001))]), 20),
    ("sequential_three", "Adam", [dict(lr=0.1), dict(lr=0.02)], dict(),
     "SequentialLR", dict(milestones=[3, 7], schedulers=[
         ("LambdaLR", dict(lr_lambda="inverse")),
         ("StepLR", dict(step_size=2, gamma=0.5)),
         ("CosineAnnealingLR", dict(T_max=4, eta_min=0.0))]), 16),
    ("steplr_groups", "SGD", [dict(lr=0.1), dict(lr=0.03)], dict(),
     "StepLR", dict(step_size=3, gamma=0.3), 10),
    ("cosine_groups", "SGD", [dict(lr=0.1), dict(lr=0.03)], dict(),
     "CosineAnnealingLR", dict(T_max=4, eta_min=0.002), 12),
    ("linear_groups", "Adam", [dict(lr=0.1), dict(lr=0.03)], dict(),
     "LinearLR", dict(start_factor=0.5, end_factor=0.9, total_iters=4), 8),
    ("lambda_groups", "SGD", [dict(lr=0.1), dict(lr=0.03)], dict(),
     "LambdaLR", dict(lr_lambda="pow_0.95"), 8),
    # one function per group, and per-group momenta / max_lr of OneCycleLR
    ("lambda_per_group", "Adam", [dict(lr=0.1), dict(lr=0.03)], dict(),
     "LambdaLR", dict(lr_lambda=["pow_0.95", "inverse"]), 8),
    ("onecycle_per_group_momenta_sgd", "SGD", [dict(lr=0.1), dict(lr=0.02)], dict(momentum=0.9),
     "OneCycleLR", dict(max_lr=[1.0, 0.3], total_steps=12, base_momentum=[0.8, 0.6],
                        max_momentum=[0.95, 0.9]), 12),
    ("onecycle_per_group_momenta_adam", "Adam", [dict(lr=0.1), dict(lr=0.02, betas=(0.8, 0.99))],
     dict(), "OneCycleLR", dict(max_lr=0.5, total_steps=10, three_phase=True,
                                base_momentum=[0.7, 0.75], max_momentum=0.9), 10),
]


def build(opt, cls, kw):
    args = dict(kw)
    if cls == "LambdaLR":
        f = kw["lr_lambda"]
        args["lr_lambda"] = [LAMBDAS[n] for n in f] if isinstance(f, list) else LAMBDAS[f]
    if cls == "SequentialLR":
        args["schedulers"] = [build(opt, c, k) for c, k in kw["schedulers"]]
    return getattr(torch.optim.lr_scheduler, cls)(opt, **args)


def enc(v):
    if isinstance(v, float):
        return repr(v)
    if isinstance(v, (list, tuple)):
        return [enc(x) for x in v]
    if isinstance(v, dict):
        return {k: enc(x) for k, x in v.items()}
    return v


def momenta(opt):
    return [repr(g["betas"][0] if "betas" in g else g["momentum"]) for g in opt.param_groups]


def record_group_case(name, ocls, groups, defaults, cls, kw, steps):
    params = [torch.zeros(1, dtype=torch.float64, requires_grad=True) for _ in groups]
    opt = getattr(torch.optim, ocls)([dict(params=[p], **g) for p, g in zip(params, groups)],
                                     **defaults)
    sched = build(opt, cls, kw)
    lrs = [[repr(g["lr"]) for g in opt.param_groups]]
    moms = [momenta(opt)]
    for k in range(steps):
        opt.step()
        if cls == "ReduceLROnPlateau":
            sched.step(METRICS[k])
        else:
            sched.step()
        lrs.append([repr(g["lr"]) for g in opt.param_groups])
        moms.append(momenta(opt))
    past_end = None
    if cls == "OneCycleLR":
        try:
            sched.step()
        except ValueError as e:
            past_end = str(e)
    return {"name": name, "optimizer": ocls, "groups": enc(groups), "defaults": enc(defaults),
            "class": cls, "kwargs": enc(kw), "steps": steps, "lrs": lrs, "momenta": moms,
            "metrics": [repr(m) for m in METRICS[:steps]] if cls == "ReduceLROnPlateau" else None,
            "past_end_error": past_end}


def errors():
    def err(f):
        try:
            f()
        except (ValueError, TypeError) as e:
            return str(e)
        raise AssertionError("no error")

    def sgd():
        return torch.optim.SGD([torch.zeros(1, requires_grad=True)], lr=0.1, momentum=0.9)
    oc = torch.optim.lr_scheduler.OneCycleLR
    return {
        "onecycle_total_steps_0": err(lambda: oc(sgd(), max_lr=1.0, total_steps=0)),
        "onecycle_no_steps": err(lambda: oc(sgd(), max_lr=1.0)),
        "onecycle_epochs_0": err(lambda: oc(sgd(), max_lr=1.0, epochs=0, steps_per_epoch=3)),
        "onecycle_steps_per_epoch_0": err(
            lambda: oc(sgd(), max_lr=1.0, epochs=2, steps_per_epoch=0)),
        "onecycle_pct_start": err(lambda: oc(sgd(), max_lr=1.0, total_steps=5, pct_start=1.5)),
        "onecycle_no_momentum": err(lambda: oc(
            torch.optim.Adagrad([torch.zeros(1, requires_grad=True)]), max_lr=1.0,
            total_steps=5)),
        "lambda_lr_lambdas": err(lambda: torch.optim.lr_scheduler.LambdaLR(
            sgd(), [LAMBDAS["inverse"], LAMBDAS["inverse"]])),
        "onecycle_base_momentum": err(lambda: oc(sgd(), max_lr=1.0, total_steps=5,
                                                 base_momentum=[0.8, 0.7])),
        "plateau_factor": err(lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(sgd(),
                                                                                 factor=1.0)),
        "plateau_min_lrs": err(lambda: torch.optim.lr_scheduler.ReduceLROnPlateau(
            sgd(), min_lr=[0.1, 0.2])),
        "sequential_milestones": err(lambda: (lambda o: torch.optim.lr_scheduler.SequentialLR(
            o, [torch.optim.lr_scheduler.StepLR(o, 2), torch.optim.lr_scheduler.StepLR(o, 3)],
            milestones=[2, 4]))(sgd())),
    }


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
    group_cases = [record_group_case(*c) for c in GROUP_CASES]
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-sched-v2", "torch": torch.__version__, "cases": out,
                   "group_cases": group_cases, "errors": errors()}, f, indent=1)
    print("wrote", path, len(out), "cases,", len(group_cases), "group cases")


if __name__ == "__main__":
    main()
