"""Checks files tapegrad wrote (grad_tests/interop.rs, `ours_load_in_torch_and_numpy`).

    python3 tools/check_interop.py OURS.pt OURS.npz

OURS.pt must load with torch.load(weights_only=True) and hold (see `torch_check_value` in the
test): `base` = arange(24, float32).view(4, 6) and the views `t` (transpose), `corner`
(base[1:, 3:]), `step` (base[::2, 1::3]) on ONE storage, every dtype's `arange(6) - 2` cast from
int64 (`dtypes`), a nested list/tuple/dict of plain values and an int64 storage shared as
`(s, s[2:])`, and `w` (float32, requires_grad). A write through `base` must be seen by the
views. OURS.npz must load with np.load and hold `c` (float64 2x3 C order), `f` (int32 3x2,
Fortran order), `flags` (bool).
Prints one line per check and `interop check: N passed, 0 failed`; exits 1 on the first failure.
"""
import sys

import numpy as np
import torch

passed = 0


def check(cond, what):
    global passed
    if not cond:
        print(f"FAIL: {what}")
        sys.exit(1)
    passed += 1
    print(f"ok: {what}")


def same_storage(a, b):
    return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr()


def main(pt_path, npz_path):
    d = torch.load(pt_path, weights_only=True)
    base = d["base"]
    ref = torch.arange(24, dtype=torch.float32).view(4, 6)
    check(torch.equal(base, ref), "base values")
    for name, view, stride, offset in [
        ("t", ref.t(), (1, 6), 0),
        ("corner", ref[1:, 3:], (6, 1), 9),
        ("step", ref[::2, 1::3], (12, 3), 1),
    ]:
        v = d[name]
        check(torch.equal(v, view), f"{name} values")
        check(v.stride() == stride and v.storage_offset() == offset,
              f"{name} stride {v.stride()} offset {v.storage_offset()}")
        check(same_storage(v, base), f"{name} shares base's storage")
    check(base.untyped_storage().nbytes() == 24 * 4, "one 96-byte storage for base and views")
    base[1, 4] = -1.0
    check(d["t"][4, 1] == -1.0 and d["corner"][0, 1] == -1.0 and d["step"][0, 1] == 4.0,
          "a write through base is seen by the views it reaches")
    for name, t in d["dtypes"].items():
        dt = getattr(torch, name)
        expect = (torch.arange(6) - 2).to(dt)
        check(t.dtype == dt and torch.equal(t, expect), f"dtype {name}")
    nested = d["nested"]
    check(nested[0] == {"epoch": 3, "lr": 0.5, "name": "x", "none": None, "flag": True,
                        "neg": -70000, "big": 2**40},
          "nested plain values")
    s, s2 = nested[1]
    check(torch.equal(s, torch.arange(10)) and torch.equal(s2, torch.arange(2, 10)),
          "shared int64 values")
    check(same_storage(s, s2) and s2.storage_offset() == 2, "shared int64 storage, offset 2")
    w = d["w"]
    check(w.requires_grad and w.dtype == torch.float32 and w.tolist() == [1.5, -2.0],
          "w requires grad")

    z = np.load(npz_path)
    check(sorted(z.files) == ["c", "f", "flags"], f"npz members {z.files}")
    check(np.array_equal(z["c"], np.arange(6, dtype=np.float64).reshape(2, 3) * 0.5)
          and z["c"].flags.c_contiguous, "npz c (C order)")
    f = z["f"]
    check(np.array_equal(f, np.arange(6, dtype=np.int32).reshape(2, 3).T)
          and f.flags.f_contiguous and not f.flags.c_contiguous, "npz f (Fortran order)")
    check(np.array_equal(z["flags"], np.array([True, False, True])), "npz flags")
    print(f"interop check: {passed} passed, 0 failed")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
