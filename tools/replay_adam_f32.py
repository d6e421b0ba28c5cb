#!/usr/bin/env python3
"""Replay PyTorch's single-tensor Adam/AdamW op by op on the recorded float32 data and find
the first op whose result differs from the correctly rounded result of the same op on the same
inputs (what tapegrad's fused kernel computes, src/backend/cpu/optim.rs).

For every float32 case and step of grad_tests/fixtures/optim/bitexact_adam.json, starting from
PyTorch's recorded state before the step (as the Rust test does), each op of
``torch.optim.adam._single_tensor_adam`` is run in torch and compared element by element with
the correctly rounded IEEE result of that op on the *same* input bits (exact rational
arithmetic for the fused multiply-adds, float64 then float32 for the single +, *, /, sqrt,
which is innocuous double rounding since 53 >= 2*24 + 2). The torch value is carried forward,
so every op is judged on its own. Then tapegrad's kernel is emulated end to end, once with a
correctly rounded sqrt (what tapegrad does) and once with torch's sqrt bits substituted: with
torch's sqrt every parameter element equals PyTorch's, so the sqrt is the only cause.

Usage (from the repository root)::

    python3 tools/replay_adam_f32.py
"""

import json
import os
from fractions import Fraction

import numpy as np
import torch

F32 = np.float32


def arr(bits):
    return np.array(bits, dtype=np.uint32).view(np.float32)


def fma(a, b, c):
    """a * b + c rounded once to float32 (exact rational, then nearest-even via float64 is
    not safe, so round the Fraction directly)."""
    out = np.empty(len(a), dtype=np.float32)
    for i, (x, y, z) in enumerate(zip(a, b, c)):
        exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
        out[i] = round_f32(exact)
    return out


def round_f32(q):
    """Nearest-even float32 of a Fraction."""
    f = np.float32(float(q))  # close; fix the last place exactly
    best = f
    for cand in (np.nextafter(f, np.float32(-np.inf)), f, np.nextafter(f, np.float32(np.inf))):
        if abs(Fraction(float(cand)) - q) < abs(Fraction(float(best)) - q) or (
            abs(Fraction(float(cand)) - q) == abs(Fraction(float(best)) - q)
            and int(np.array(cand).view(np.uint32)) % 2 == 0
        ):
            best = cand
    return best


def cr_sqrt(x):
    return np.sqrt(x.astype(np.float64)).astype(np.float32)


def lerp(a, b, w):
    """PyTorch's CPU lerp (and tapegrad's): a + w(b - a) if |w| < 0.5 else b - (b - a)(1 - w)."""
    d = (b - a).astype(np.float32)
    if abs(w) < 0.5:
        return fma(np.full_like(d, w), d, a)
    return fma(-d, np.full_like(d, F32(1.0) - w), b)


def diff(name, torch_out, ours, report, inp=None):
    t = torch_out.numpy()
    bad = np.nonzero(t.view(np.uint32) != ours.view(np.uint32))[0]
    report.setdefault(name, [0, 0])
    report[name][0] += len(bad)
    report[name][1] += len(t)
    if len(bad) and inp is not None and name not in EXAMPLES:
        i = bad[0]
        EXAMPLES[name] = (int(inp.view(np.uint32)[i]), int(t.view(np.uint32)[i]),
                          int(ours.view(np.uint32)[i]))


EXAMPLES = {}


def replay_step(case, k, report, totals):
    h = case["hparams"]
    lr, (b1, b2), eps, wd, ams = h["lr"], h["betas"], h["eps"], h["weight_decay"], h["amsgrad"]
    decoupled = case["class"] == "AdamW"
    step = float(k + 1)
    steps = case["steps"]
    for i in range(len(steps[k]["grads"])):
        if k == 0:
            p0 = arr(case["initial"][i])
            m0 = np.zeros_like(p0)
            v0 = np.zeros_like(p0)
            vm0 = np.zeros_like(p0)
        else:
            prev = steps[k - 1]
            p0, m0, v0 = arr(prev["params"][i]), arr(prev["exp_avg"][i]), arr(prev["exp_avg_sq"][i])
            vm0 = arr(prev["max_exp_avg_sq"][i]) if ams else None
        g0 = arr(steps[k]["grads"][i])
        P, G, M, V = (torch.from_numpy(x.copy()) for x in (p0, g0, m0, v0))
        # --- torch, op by op (the body of _single_tensor_adam) ---
        grad = G
        if wd != 0:
            if decoupled:
                before = P.numpy().copy()
                P.mul_(1 - lr * wd)
                diff("param.mul_(1 - lr*wd)", P, before * F32(1 - lr * wd), report, before)
            else:
                grad = G.add(P, alpha=wd)
                n = len(p0)
                diff("grad.add(param, alpha=wd)", grad, fma(P.numpy(), np.full(n, F32(wd)), G.numpy()),
                     report, G.numpy())
        before = M.numpy().copy()
        M.lerp_(grad, 1 - b1)
        diff("exp_avg.lerp_(grad, 1 - beta1)", M, lerp(before, grad.numpy(), F32(1 - b1)), report, before)
        before = V.numpy().copy()
        V.mul_(b2)
        diff("exp_avg_sq.mul_(beta2)", V, before * F32(b2), report, before)
        before = V.numpy().copy()
        gn = grad.numpy()
        V.addcmul_(grad, grad, value=1 - b2)
        diff("exp_avg_sq.addcmul_(grad, grad, value=1 - beta2)", V,
             fma((F32(1 - b2) * gn).astype(np.float32), gn, before), report, before)
        bc1 = 1 - b1 ** step
        bc2 = 1 - b2 ** step
        step_size = lr / bc1
        bc2_sqrt = bc2 ** 0.5
        src = V
        if ams:
            VM = torch.from_numpy(vm0.copy())
            torch.maximum(VM, V, out=VM)
            src = VM
        s = src.sqrt()
        diff("sqrt(exp_avg_sq or max_exp_avg_sq)", s, cr_sqrt(src.numpy()), report, src.numpy())
        q = s / bc2_sqrt
        diff("sqrt(..) / bias_correction2_sqrt", q, s.numpy() / F32(bc2_sqrt), report, s.numpy())
        before = q.numpy().copy()
        denom = q.add_(eps)
        diff("denom.add_(eps)", denom, before + F32(eps), report, before)
        before = P.numpy().copy()
        P.addcdiv_(M, denom, value=-step_size)
        ours = (F32(-step_size) * M.numpy()) / denom.numpy() + before
        diff("param.addcdiv_(exp_avg, denom, value=-step_size)", P, ours, report, before)
        # the replay itself reproduces the recorded step
        assert (P.numpy().view(np.uint32) == np.array(steps[k]["params"][i], dtype=np.uint32)).all()
        # --- tapegrad's kernel end to end, correctly rounded sqrt vs torch's sqrt ---
        for which, sq in (("cr", cr_sqrt), ("torch", lambda x: torch.sqrt(torch.from_numpy(x)).numpy())):
            p, g = p0.copy(), g0.copy()
            if wd != 0:
                if decoupled:
                    p = p * F32(1 - lr * wd)
                else:
                    g = fma(p, np.full_like(p, F32(wd)), g)
            m = lerp(m0, g, F32(1 - b1))
            v = fma((F32(1 - b2) * g).astype(np.float32), g, v0 * F32(b2))
            dv = np.maximum(vm0, v) if ams else v
            d = sq(dv) / F32(bc2_sqrt) + F32(eps)
            p = (F32(-step_size) * m) / d + p
            eq = int((p.view(np.uint32) == np.array(steps[k]["params"][i], dtype=np.uint32)).sum())
            totals[which][0] += eq
            totals[which][1] += len(p)


def main():
    path = os.path.join("grad_tests", "fixtures", "optim", "bitexact_adam.json")
    f = json.load(open(path))
    print("torch", torch.__version__, "recorded with", f["torch"],
          "cpu capability", torch.backends.cpu.get_cpu_capability())
    report, totals = {}, {"cr": [0, 0], "torch": [0, 0]}
    for case in f["cases"]:
        if case["dtype"] != "float32":
            continue
        for k in range(len(case["steps"])):
            replay_step(case, k, report, totals)
    print("op (in _single_tensor_adam order): elements where torch != correctly rounded / total")
    for name, (bad, n) in report.items():
        print(f"  {name}: {bad} / {n}")
        if name in EXAMPLES:
            x, t, c = EXAMPLES[name]
            print(f"    e.g. input {x:#010x} ({np.uint32(x).view(np.float32)!r}) -> torch {t:#010x}, "
                  f"correctly rounded {c:#010x}")
    for which, (eq, n) in totals.items():
        print(f"tapegrad's kernel with {which} sqrt: {eq} / {n} parameter elements equal PyTorch's")


if __name__ == "__main__":
    main()
