#!/usr/bin/env python3
"""Record PyTorch optimizer / LR-scheduler trajectories as JSON fixtures for tapegrad.

Each configuration runs 20 optimizer steps, in float64, on two parameters

    p1: shape [3, 2]      p2: shape [4]

with the deterministic smooth loss

    loss = sum(sin(p1) * c1) + sum((p2 - c2)**2 * c3)

(c1 [3,2], c2 [4], c3 [4] are constant tensors).  At every step PyTorch's
autograd computes the gradient, the optimizer steps, and (for the scheduler
configurations) the scheduler steps.  The JSON records the set-up (initial
values, constants, optimizer hyper-parameters), and for every step the lr
used, the loss, the gradients, the parameters after the step and the
optimizer state after the step; plus the optimizer state after the last step.

The single-tensor ("for-loop") optimizer implementation is forced with
``foreach=False`` so the arithmetic is the reference one documented in
grad_tests/fixtures/optim/README.md.  After recording, the script replays each
trajectory with plain numpy using the *recorded* gradients and the formulas of
that README, and fails if any value differs by more than a few ulps: this
checks both the fixtures and the README's formulas.

Usage (from the repository root; needs ``pip install torch numpy``)::

    python3 tools/record_optim.py [OUTPUT_DIR]   # default: grad_tests/fixtures/optim

Floats are written with Python's ``repr`` (shortest string that round-trips
to the same float64).
"""

import json
import math
import os
import sys

import numpy as np
import torch

N_STEPS = 20
FORMAT = "tapegrad-optim-v1"

# ---------------------------------------------------------------------------
# Fixed set-up (exact binary fractions are not needed: repr round-trips).
# ---------------------------------------------------------------------------
P1_INIT = [[-1.5, -1.2], [2.0, 0.3], [-0.7, 1.5]]
P2_INIT = [1.0, 0.55, 0.25, 2.0]
C1 = [[1.0, -0.5], [0.8, 2.0], [-1.5, 0.3]]
C2 = [0.5, 0.5, -1.0, 1.5]
C3 = [1.0, 0.2, 3.0, 0.5]

LOSS_TEXT = "sum(sin(p1) * c1) + sum((p2 - c2)**2 * c3)"
GRAD_TEXT = {"p1": "cos(p1) * c1", "p2": "2 * (p2 - c2) * c3"}

# name -> (optimizer class name, kwargs, scheduler or None)
CONFIGS = [
    ("sgd_plain", "SGD", dict(lr=0.1), None),
    ("sgd_momentum_dampening_wd", "SGD",
     dict(lr=0.1, momentum=0.9, dampening=0.1, weight_decay=0.01), None),
    ("sgd_nesterov_wd", "SGD",
     dict(lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01), None),
    ("adam", "Adam", dict(lr=0.01), None),
    ("adam_amsgrad_wd", "Adam",
     dict(lr=0.01, amsgrad=True, weight_decay=0.1, betas=(0.8, 0.95), eps=1e-6), None),
    ("adamw", "AdamW", dict(lr=0.01, weight_decay=0.05), None),
    ("adamw_amsgrad", "AdamW", dict(lr=0.01, amsgrad=True), None),
    ("sgd_steplr", "SGD", dict(lr=0.1), ("StepLR", dict(step_size=5, gamma=0.5))),
    ("sgd_cosine", "SGD", dict(lr=0.1), ("CosineAnnealingLR", dict(T_max=10, eta_min=0.001))),
]

# Hyper-parameters a replayer needs, completed with PyTorch's defaults.
HPARAM_KEYS = {
    "SGD": ["lr", "momentum", "dampening", "weight_decay", "nesterov", "maximize"],
    "Adam": ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"],
    "AdamW": ["lr", "betas", "eps", "weight_decay", "amsgrad", "maximize"],
}


def enc(t: torch.Tensor) -> dict:
    """Tensor -> {"shape": [...], "data": [row-major floats]}."""
    return {"shape": list(t.shape), "data": [float(v) for v in t.detach().reshape(-1).tolist()]}


def enc_state(opt: torch.optim.Optimizer, params) -> dict:
    """Optimizer state for each named parameter, tensors encoded, 'step' as an int."""
    out = {}
    for name, p in params:
        st = {}
        for k, v in sorted(opt.state.get(p, {}).items()):
            if v is None:
                st[k] = None
            elif k == "step":
                st[k] = int(v.item()) if torch.is_tensor(v) else int(v)
            elif torch.is_tensor(v):
                st[k] = enc(v)
            else:
                st[k] = v
        out[name] = st
    return out


def record(name, opt_name, kwargs, sched) -> dict:
    dt = torch.float64
    p1 = torch.tensor(P1_INIT, dtype=dt, requires_grad=True)
    p2 = torch.tensor(P2_INIT, dtype=dt, requires_grad=True)
    c1 = torch.tensor(C1, dtype=dt)
    c2 = torch.tensor(C2, dtype=dt)
    c3 = torch.tensor(C3, dtype=dt)
    params = [("p1", p1), ("p2", p2)]

    opt = getattr(torch.optim, opt_name)([p1, p2], foreach=False, **kwargs)
    scheduler = None
    if sched is not None:
        scheduler = getattr(torch.optim.lr_scheduler, sched[0])(opt, **sched[1])

    group = opt.param_groups[0]
    hparams = {}
    for k in HPARAM_KEYS[opt_name]:
        v = group[k]
        hparams[k] = list(v) if isinstance(v, tuple) else v
    if opt_name == "AdamW":
        hparams["decoupled_weight_decay"] = True
    elif opt_name == "Adam":
        hparams["decoupled_weight_decay"] = bool(group.get("decoupled_weight_decay", False))

    doc = {
        "format": FORMAT,
        "name": name,
        "torch_version": torch.__version__,
        "dtype": "float64",
        "n_steps": N_STEPS,
        "loss": LOSS_TEXT,
        "grad": GRAD_TEXT,
        "constants": {"c1": enc(c1), "c2": enc(c2), "c3": enc(c3)},
        "initial_params": {"p1": enc(p1), "p2": enc(p2)},
        "optimizer": {
            "class": opt_name,
            "kwargs": {k: (list(v) if isinstance(v, tuple) else v) for k, v in kwargs.items()},
            "hparams": hparams,
            "implementation": "single_tensor (foreach=False)",
        },
        "scheduler": None if sched is None else {
            "class": sched[0],
            "kwargs": sched[1],
            "order": "optimizer.step() then scheduler.step(), once per step",
        },
        "steps": [],
    }

    for i in range(N_STEPS):
        lr_used = float(group["lr"])
        opt.zero_grad(set_to_none=True)
        loss = (torch.sin(p1) * c1).sum() + ((p2 - c2) ** 2 * c3).sum()
        loss.backward()
        grads = {"p1": enc(p1.grad), "p2": enc(p2.grad)}
        opt.step()
        if scheduler is not None:
            scheduler.step()
        doc["steps"].append({
            "step": i + 1,
            "lr": lr_used,
            "loss": float(loss.item()),
            "grads": grads,
            "params_after": {"p1": enc(p1), "p2": enc(p2)},
            "state_after": enc_state(opt, params),
        })
    doc["final_state"] = enc_state(opt, params)
    return doc


# ---------------------------------------------------------------------------
# Independent numpy replay of the README formulas, using the recorded grads.
# ---------------------------------------------------------------------------
def arr(e) -> np.ndarray:
    return np.array(e["data"], dtype=np.float64).reshape(e["shape"])


def replay_check(doc) -> float:
    """Replay with numpy; return the max relative error over params and state."""
    h = doc["optimizer"]["hparams"]
    cls = doc["optimizer"]["class"]
    params = {k: arr(v) for k, v in doc["initial_params"].items()}
    state = {k: {} for k in params}
    worst = 0.0

    def cmp(a, b):
        nonlocal worst
        err = np.max(np.abs(a - b) / np.maximum(np.abs(b), 1e-300))
        worst = max(worst, float(err))

    for rec in doc["steps"]:
        lr = rec["lr"]
        for name in params:
            p = params[name]
            g = arr(rec["grads"][name])
            st = state[name]
            if cls == "SGD":
                if h["weight_decay"] != 0:
                    g = g + h["weight_decay"] * p
                if h["momentum"] != 0:
                    if "momentum_buffer" not in st:
                        st["momentum_buffer"] = g.copy()
                    else:
                        st["momentum_buffer"] = (st["momentum_buffer"] * h["momentum"]
                                                 + (1 - h["dampening"]) * g)
                    buf = st["momentum_buffer"]
                    g = g + h["momentum"] * buf if h["nesterov"] else buf
                p = p - lr * g
            else:
                b1, b2 = h["betas"]
                st["step"] = st.get("step", 0) + 1
                t = st["step"]
                if h["weight_decay"] != 0:
                    if h["decoupled_weight_decay"]:
                        p = p * (1 - lr * h["weight_decay"])
                    else:
                        g = g + h["weight_decay"] * p
                m = st.get("exp_avg", np.zeros_like(p))
                v = st.get("exp_avg_sq", np.zeros_like(p))
                m = m + (1 - b1) * (g - m)                  # lerp
                v = v * b2 + (1 - b2) * g * g
                st["exp_avg"], st["exp_avg_sq"] = m, v
                bc1 = 1 - b1 ** t
                bc2_sqrt = (1 - b2 ** t) ** 0.5
                if h["amsgrad"]:
                    st["max_exp_avg_sq"] = np.maximum(st.get("max_exp_avg_sq", np.zeros_like(p)), v)
                    denom = np.sqrt(st["max_exp_avg_sq"]) / bc2_sqrt + h["eps"]
                else:
                    denom = np.sqrt(v) / bc2_sqrt + h["eps"]
                p = p - (lr / bc1) * m / denom
            params[name] = p
            cmp(p, arr(rec["params_after"][name]))
            for k, v in st.items():
                if k != "step":
                    cmp(v, arr(rec["state_after"][name][k]))
                elif v != rec["state_after"][name]["step"]:
                    raise AssertionError(f"{doc['name']}: step count mismatch")
    # Check the recorded gradients and losses against the analytic formula at the
    # recorded parameters (loosely: cos/sin may differ from PyTorch's by an ulp).
    c = {k: arr(v) for k, v in doc["constants"].items()}
    prev = {k: arr(v) for k, v in doc["initial_params"].items()}
    for rec in doc["steps"]:
        g1 = np.cos(prev["p1"]) * c["c1"]
        g2 = 2 * (prev["p2"] - c["c2"]) * c["c3"]
        loss = float(np.sum(np.sin(prev["p1"]) * c["c1"]) + np.sum((prev["p2"] - c["c2"]) ** 2 * c["c3"]))
        for got, want in ((g1, arr(rec["grads"]["p1"])), (g2, arr(rec["grads"]["p2"]))):
            if not np.allclose(got, want, rtol=1e-14, atol=1e-15):
                raise AssertionError(f"{doc['name']}: grad formula mismatch at step {rec['step']}")
        if not math.isclose(loss, rec["loss"], rel_tol=1e-13, abs_tol=1e-14):
            raise AssertionError(f"{doc['name']}: loss mismatch at step {rec['step']}")
        prev = {k: arr(v) for k, v in rec["params_after"].items()}
    return worst


def main() -> None:
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join("grad_tests", "fixtures", "optim")
    os.makedirs(out_dir, exist_ok=True)
    torch.set_default_dtype(torch.float64)
    for name, opt_name, kwargs, sched in CONFIGS:
        doc = record(name, opt_name, kwargs, sched)
        worst = replay_check(doc)
        if worst > 1e-13:
            raise AssertionError(f"{name}: numpy replay differs, max rel err {worst:.3e}")
        path = os.path.join(out_dir, f"{name}.json")
        with open(path, "w", encoding="ascii", newline="\n") as f:
            json.dump(doc, f, indent=1)
            f.write("\n")
        print(f"{path}: {N_STEPS} steps, numpy replay max rel err {worst:.2e}")


if __name__ == "__main__":
    main()
