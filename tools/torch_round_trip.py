"""The live half of grad_tests/interop.rs `torch_round_trip_both_ways` (run by the test when
`python3 -c "import torch"` works).

    python3 tools/torch_round_trip.py OURS.pt RESAVED.pt FRESH.pt OUT.json

Loads OURS.pt (written by tapegrad) with torch.load(weights_only=True) and saves what it got
again with torch.save as RESAVED.pt; writes FRESH.pt, a tree torch builds here (views of one
storage with offsets, a transpose, a diagonal, an expanded row, every dtype non-contiguous, a
storage shared across nesting, a Parameter). OUT.json describes what torch itself loads from
OURS.pt and FRESH.pt (`describe` of tools/make_interop_fixtures.py: dtype, shape, strides,
offset, storage group, requires_grad, version, values).
"""
import json
import os
import sys

import torch

sys.path.insert(0, os.path.dirname(__file__))
from make_interop_fixtures import DTYPES, describe, sample  # noqa: E402


def fresh_tree():
    torch.manual_seed(0)
    a = torch.arange(30, dtype=torch.float64).reshape(5, 6) * 0.25
    s = torch.arange(12, dtype=torch.int32)
    return {
        "base": a,
        "t": a.t(),
        "diag": a.diagonal(),
        "window": a.view(-1)[7:19].view(4, 3),
        "expanded": a[1].expand(3, 6),
        "dtypes": {str(d).removeprefix("torch."): sample(d).reshape(3, 2).t() for d in DTYPES},
        "nested": [{"tail": s[3:], "k": 5}, (s, None, "x", 2.5, True)],
        "param": torch.nn.Parameter(torch.randn(2, 3)),
    }


def main(ours, resaved, fresh, out):
    got = torch.load(ours, weights_only=True)
    torch.save(got, resaved)
    torch.save(fresh_tree(), fresh)
    desc = {
        "ours": describe(got, {}),
        "fresh": describe(torch.load(fresh, weights_only=True), {}),
    }
    with open(out, "w") as f:
        json.dump(desc, f)
    print("torch round trip: wrote", resaved, fresh, out)


if __name__ == "__main__":
    main(*sys.argv[1:5])
