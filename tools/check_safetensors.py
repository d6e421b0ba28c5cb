"""Checks, in PyTorch, a safetensors file written by tapegrad's checkpoint test
(grad_tests/checkpoint.rs, test `python_loads_our_file`, which runs this script):

    python3 tools/check_safetensors.py FILE

FILE must hold the state_dict of Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) in float32 with
ramp values (element k = float32(k * 0.37 - 1.5)), plus `extra.f64` (ramp, shape [2, 3]),
`extra.i64` = [-3, 0, 2**40] and `extra.bool` = [True, False]. It loads the file with
safetensors.torch.load_file, compares every tensor exactly, and loads the four model tensors into
a torch.nn.Sequential with load_state_dict(strict=True). Exit code 0 means all agreed.
"""

import sys

import torch
from safetensors.torch import load_file


def ramp(shape, dtype):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float64) * 0.37 - 1.5).reshape(shape).to(dtype)


def main(path):
    got = load_file(path)
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    want = {k: ramp(v.shape, torch.float32) for k, v in model.state_dict().items()}
    want["extra.f64"] = ramp((2, 3), torch.float64)
    want["extra.i64"] = torch.tensor([-3, 0, 2**40], dtype=torch.int64)
    want["extra.bool"] = torch.tensor([True, False])
    assert sorted(got) == sorted(want), f"keys {sorted(got)} != {sorted(want)}"
    for k, w in want.items():
        g = got[k]
        assert g.dtype == w.dtype and g.shape == w.shape, f"{k}: {g.dtype} {g.shape} vs {w.dtype} {w.shape}"
        assert torch.equal(g, w), f"{k}: {g} != {w}"
    model.load_state_dict({k: got[k] for k in model.state_dict()}, strict=True)
    y = model(torch.ones(1, 3))
    print(f"ok: {len(got)} tensors match; model output {y.tolist()}")


if __name__ == "__main__":
    main(sys.argv[1])
