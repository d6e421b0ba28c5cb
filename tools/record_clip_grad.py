#!/usr/bin/env python3
"""Record PyTorch's gradient clipping (torch.nn.utils.clip_grad_norm_ / clip_grad_value_).

Three float64 parameters (shapes [5, 3], [7], [2, 2]) get seeded-normal gradients (scaled per
case); each case records the gradients before, the returned total norm and the gradients
after. Cases cover norm_type 2, 1, inf, 3.5 and 0.5, a max_norm above the total (the
coefficient clamps to 1), a float32 case, a non-finite gradient scaled anyway, and
error_if_nonfinite=True (recorded as an error, gradients unchanged).

Usage (from the repository root)::

    python3 tools/record_clip_grad.py   # writes grad_tests/fixtures/optim/clip_grad.json
"""

import json
import math
import os

import torch

SHAPES = [[5, 3], [7], [2, 2]]


def enc(x):
    """A float as its repr string (parsed exactly by the test; also "inf", "nan")."""
    return repr(x)


def grads_of(params):
    return [[enc(v) for v in p.grad.flatten().tolist()] for p in params]


def case(name, kind, seed, dtype=torch.float64, scale=1.0, poison=False, **kw):
    g = torch.Generator().manual_seed(seed)
    params = [torch.zeros(s, dtype=dtype, requires_grad=True) for s in SHAPES]
    for p in params:
        p.grad = torch.randn(p.shape, generator=g, dtype=dtype) * scale
    if poison:
        params[1].grad[3] = float("inf")
    out = {"name": name, "kind": kind, "dtype": str(dtype).replace("torch.", ""),
           "shapes": SHAPES, "kwargs": {k: enc(v) if isinstance(v, float) else v for k, v in kw.items()},
           "before": grads_of(params)}
    if kind == "norm":
        try:
            total = torch.nn.utils.clip_grad_norm_(params, **kw)
            out["total_norm"] = enc(total.item())
            out["error"] = False
        except RuntimeError:
            out["error"] = True
    else:
        torch.nn.utils.clip_grad_value_(params, **kw)
    out["after"] = grads_of(params)
    return out


def main():
    cases = [
        case("l2", "norm", 1, max_norm=1.0),
        case("l1", "norm", 2, max_norm=2.0, norm_type=1.0),
        case("inf", "norm", 3, max_norm=0.5, norm_type=float("inf")),
        case("p3_5", "norm", 4, max_norm=0.7, norm_type=3.5),
        case("p0_5", "norm", 5, max_norm=10.0, norm_type=0.5),
        case("no_clip", "norm", 6, max_norm=100.0),
        case("f32", "norm", 7, dtype=torch.float32, max_norm=1.5),
        case("nonfinite_scaled", "norm", 8, poison=True, max_norm=1.0),
        case("nonfinite_error", "norm", 9, poison=True, max_norm=1.0, error_if_nonfinite=True),
        case("value", "value", 10, scale=2.0, clip_value=0.75),
    ]
    path = os.path.join("grad_tests", "fixtures", "optim", "clip_grad.json")
    with open(path, "w") as f:
        json.dump({"format": "tapegrad-clip-v1", "torch": torch.__version__, "cases": cases}, f)
    print("wrote", path, len(cases), "cases")


if __name__ == "__main__":
    main()
