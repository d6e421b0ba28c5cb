#!/usr/bin/env python3
"""Re-checks sweep fixtures against torch with the shared reference replayer (replay_torch.py),
taught the sweep's format extensions (complex values, autograd.grad, the added error kinds).

    python tools/sweep/replay_torch_sweep.py grad_tests/fixtures/sweep/*.json.gz
"""

import gzip
import importlib.util
import json
import math
import os
import sys
import tempfile

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import sweep  # noqa: E402  (patches the shared recorder module: dtypes, error kinds)

R = sweep.R
_spec = importlib.util.spec_from_file_location(
    "replay_torch", os.path.join(os.path.dirname(R.__file__), "replay_torch.py"))
RT = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(RT)

_orig_floats = RT._floats


def _floats(v):
    if isinstance(v, dict) and "re" in v:
        return complex(_orig_floats(v["re"]), _orig_floats(v["im"]))
    if isinstance(v, list):
        return [_floats(e) for e in v]
    return _orig_floats(v)


RT._floats = _floats
_orig_invoke = RT.Replayer.invoke


def invoke(self, op, args, kwargs):
    if op == "autograd.grad":
        a = [self.arg(x) for x in args]
        kw = {k: self.arg(v) for k, v in kwargs.items()}
        return torch.autograd.grad(a[0], a[1], create_graph=True, **kw)
    return _orig_invoke(self, op, args, kwargs)


RT.Replayer.invoke = invoke
_orig_values = RT.Replayer.values


def values(self, where, got, exp):
    if isinstance(exp, dict) and "re" in exp:
        if not isinstance(got, complex):
            raise RT.Mismatch(f"{where}: value {got!r} != {exp!r}")
        _orig_values(self, where, got.real, exp["re"])
        _orig_values(self, where, got.imag, exp["im"])
        return
    if isinstance(exp, list):
        if not isinstance(got, list) or len(got) != len(exp):
            raise RT.Mismatch(f"{where}: values {got} != {exp}")
        for g, x in zip(got, exp):
            values(self, where, g, x)
        return
    _orig_values(self, where, got, exp)


RT.Replayer.values = values
# PyTorch's storage-less "efficient zero" grads read as zeros (as the recorder writes them)
_orig_compare = RT.Replayer.compare


def compare(self, where, t, e, own, candidates):
    if isinstance(t, torch.Tensor) and t.layout == torch.strided and t._is_zerotensor():
        t = torch.zeros(t.shape, dtype=t.dtype)
    return _orig_compare(self, where, t, e, own, candidates)


RT.Replayer.compare = compare


def main(paths):
    plain = []
    with tempfile.TemporaryDirectory() as d:
        for p in paths:
            if p.endswith(".gz"):
                q = os.path.join(d, os.path.basename(p)[:-3])
                with open(q, "wb") as f:
                    f.write(gzip.decompress(open(p, "rb").read()))
                plain.append(q)
            else:
                plain.append(p)
        return RT.main(plain)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
