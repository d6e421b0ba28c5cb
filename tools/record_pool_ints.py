"""Records PyTorch 2.15's pooling of integer inputs into grad_tests/fixtures/pool_ints/cases.json
(replayed by grad_tests/pool_ints.rs): values and indices of the integer dtypes each pooling
takes on CPU, and which (op, dtype) pairs PyTorch refuses with `NotImplementedError`.

Run: python3 tools/record_pool_ints.py
"""
import json
import os

import torch
import torch.nn.functional as F

DTYPES = {
    "u8": torch.uint8,
    "i8": torch.int8,
    "i16": torch.int16,
    "i32": torch.int32,
    "i64": torch.int64,
    "bool": torch.bool,
}
# values ((i * 37) % 23 - 11) * scale (u8: (i * 37) % 23 * 11): negatives, ties, range ends
SCALE = {"i8": 11, "i16": 2000, "i32": 100_000_000, "i64": 100_000_000_000_000_000}


def values(n, dt):
    if dt == "bool":
        return [(i * 37) % 3 == 0 for i in range(n)]
    if dt == "u8":
        return [(i * 37) % 23 * 11 for i in range(n)]
    return [((i * 37) % 23 - 11) * SCALE[dt] for i in range(n)]


def tensor(shape, dt):
    n = 1
    for s in shape:
        n *= s
    return torch.tensor(values(n, dt), dtype=DTYPES[dt]).reshape(shape)


# (op, shape, kwargs) — kwargs in tapegrad's argument order (see pool_ints.rs)
CASES = [
    ("max_pool2d_with_indices", [2, 3, 5, 6],
     dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1], dilation=[1, 2], ceil_mode=True)),
    ("max_pool2d_with_indices", [3, 4, 4],
     dict(kernel_size=[2, 2], stride=[2, 2], padding=[0, 0], dilation=[1, 1], ceil_mode=False)),
    ("max_pool1d_with_indices", [2, 3, 7],
     dict(kernel_size=3, stride=2, padding=1, dilation=2, ceil_mode=True)),
    ("max_pool1d", [2, 7], dict(kernel_size=2, stride=2, padding=0, dilation=1, ceil_mode=False)),
]
for cip in (True, False):
    for div in (None, 3, -2):
        CASES.append(("avg_pool2d", [1, 2, 5, 4],
                      dict(kernel_size=[3, 2], stride=[2, 1], padding=[1, 1], ceil_mode=True,
                           count_include_pad=cip, divisor_override=div)))
    CASES.append(("avg_pool1d", [2, 3, 6],
                  dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=cip)))
CASES += [
    ("adaptive_avg_pool2d", [2, 3, 5], dict(output_size=[2, 3])),
    ("adaptive_avg_pool1d", [2, 5], dict(output_size=3)),
    ("adaptive_max_pool2d", [2, 3, 5], dict(output_size=[2, 3])),
]


def run(op, x, kw):
    if op == "max_pool2d_with_indices":
        return F.max_pool2d(x, return_indices=True, **kw)
    if op == "max_pool1d_with_indices":
        return F.max_pool1d(x, return_indices=True, **kw)
    if op == "max_pool1d":
        return F.max_pool1d(x, **kw), None
    if op == "avg_pool2d":
        return F.avg_pool2d(x, **kw), None
    if op == "avg_pool1d":
        return F.avg_pool1d(x, **kw), None
    if op == "adaptive_avg_pool2d":
        return F.adaptive_avg_pool2d(x, **kw), None
    if op == "adaptive_avg_pool1d":
        return F.adaptive_avg_pool1d(x, **kw), None
    if op == "adaptive_max_pool2d":
        return F.adaptive_max_pool2d(x, **kw), None
    raise ValueError(op)


out = []
for op, shape, kw in CASES:
    for dt in DTYPES:
        x = tensor(shape, dt)
        rec = dict(op=op, dtype=dt, shape=shape, input=[int(v) for v in x.flatten().tolist()], **kw)
        try:
            y, i = run(op, x, kw)
            rec["out_shape"] = list(y.shape)
            rec["out"] = [int(v) for v in y.flatten().tolist()]
            rec["indices"] = None if i is None else i.flatten().tolist()
        except NotImplementedError as e:
            rec["not_implemented"] = str(e).splitlines()[0]
        out.append(rec)

path = os.path.join(os.path.dirname(__file__), "..", "grad_tests", "fixtures", "pool_ints", "cases.json")
with open(path, "w") as f:
    json.dump(dict(torch=torch.__version__, cases=out), f, indent=0)
print(len(out), "cases,", sum("not_implemented" in c for c in out), "refused")
