"""Writes the interop fixtures (issue 24) into grad_tests/fixtures/interop/.

    python3 tools/make_interop_fixtures.py

PyTorch (`torch.save`, torch 2.15) files:
  dtypes.pt  every dtype tapegrad has, one small tensor each
  model.pt   a small model's state_dict (Linear, BatchNorm1d with its int64 counter, Conv1d)
  views.pt   several views of one storage (transpose, row, offset slice, step slice, flat
             offset window) plus a tensor on its own storage
  nested.pt  nested dict/list/tuple with ints, floats, str, bool, None, an nn.Parameter and a
             storage shared across the nesting
  uint16.pt  a dtype tapegrad lacks (must be refused)
NumPy files (numpy as installed beside torch):
  npy/<dtype>_c.npy, npy/<dtype>_f.npy  every shared dtype in C and Fortran order (shape 2x3x2)
  npy/be_i4.npy, npy/be_c16.npy          big-endian data
  npy/scalar_f8.npy                      a 0-d array
  npy/arrays.npz, npy/arrays_compressed.npz   np.savez / np.savez_compressed of three arrays
expected.json records, for every tensor: dtype, shape, strides, offset, a storage group (tensors
sharing a storage share the group) and the values in row-major order (complex as [re, im]).
"""
import json
import os

import numpy as np
import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "grad_tests", "fixtures", "interop")
os.makedirs(os.path.join(OUT, "npy"), exist_ok=True)


def values(t):
    t = t.detach()
    if t.is_complex():
        return [[float(z.real), float(z.imag)] for z in t.flatten().tolist()]
    if t.dtype in (torch.float16, torch.bfloat16):
        t = t.float()
    return t.flatten().tolist()


def describe(tree, groups):
    """JSON description of a value tree: tensors with geometry and a storage group."""
    if isinstance(tree, torch.Tensor):
        ptr = tree.untyped_storage().data_ptr()
        group = groups.setdefault(ptr, len(groups))
        return {
            "tensor": {
                "dtype": str(tree.dtype).removeprefix("torch."),
                "shape": list(tree.shape),
                "strides": list(tree.stride()),
                "offset": tree.storage_offset(),
                "group": group,
                "requires_grad": tree.requires_grad,
                "version": tree._version,
                "values": values(tree),
            }
        }
    if isinstance(tree, dict):
        return {"dict": [[k, describe(v, groups)] for k, v in tree.items()]}
    if isinstance(tree, list):
        return {"list": [describe(v, groups) for v in tree]}
    if isinstance(tree, tuple):
        return {"tuple": [describe(v, groups) for v in tree]}
    if tree is None:
        return {"none": None}
    if isinstance(tree, bool):
        return {"bool": tree}
    if isinstance(tree, int):
        return {"int": tree}
    if isinstance(tree, float):
        return {"float": tree}
    if isinstance(tree, str):
        return {"str": tree}
    raise TypeError(type(tree))


DTYPES = [torch.bool, torch.uint8, torch.int8, torch.int16, torch.int32, torch.int64,
          torch.float16, torch.bfloat16, torch.float32, torch.float64, torch.complex64,
          torch.complex128]


def sample(dtype, n=6):
    base = torch.tensor([0.5, -1.25, 2.0, 3.75, -7.5, 100.0])[:n]
    if dtype == torch.bool:
        return base > 0
    if dtype in (torch.uint8,):
        return (base.abs() * 2).to(dtype)
    if dtype.is_complex:
        return torch.complex(base, -base * 0.5).to(dtype)
    if dtype.is_floating_point:
        return base.to(dtype)
    return (base * 4).to(dtype)


def main():
    torch.manual_seed(0)
    files = {}

    files["dtypes.pt"] = {str(d).removeprefix("torch."): sample(d).reshape(2, 3) for d in DTYPES}

    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.BatchNorm1d(3),
                                torch.nn.Conv1d(3, 2, 2))
    model[1].running_mean.add_(0.25)
    model[1].num_batches_tracked.add_(7)
    files["model.pt"] = model.state_dict()

    a = torch.arange(24, dtype=torch.float32).reshape(4, 6)
    files["views.pt"] = {
        "base": a,
        "t": a.t(),
        "row": a[2],
        "corner": a[1:, 3:],
        "step": a[::2, 1::3],
        "flat_window": a.view(-1)[5:17].view(3, 4),
        "other": torch.arange(5, dtype=torch.float64) * 0.5,
    }

    p = torch.nn.Parameter(torch.tensor([[1.5, -2.0], [0.25, 8.0]]))
    shared = torch.arange(10, dtype=torch.int64)
    files["nested.pt"] = {
        "epoch": 3,
        "step": -70000,
        "big": 2**40,
        "lr": 0.125,
        "name": "run-α",
        "flags": [True, False, None],
        "layers": [{"w": p, "idx": shared[2:6]}, (shared, 4, "x")],
        "empty": {},
        "unit": (),
    }

    manifest = {}
    for name, obj in files.items():
        path = os.path.join(OUT, name)
        torch.save(obj, path)
        back = torch.load(path, weights_only=True)
        manifest[name] = describe(back, {})
    torch.save({"u": torch.tensor([1, 2, 3], dtype=torch.uint16)}, os.path.join(OUT, "uint16.pt"))

    # NumPy
    npd = os.path.join(OUT, "npy")
    npy = {}
    np_dtypes = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
                 "float64", "complex64", "complex128"]
    base = np.array([0.5, -1.25, 2.0, 3.75, -7.5, 100.0, 1.0, -3.0, 6.5, 0.0, 9.25, -0.75])
    for dt in np_dtypes:
        if dt == "bool":
            arr = base > 0
        elif dt == "uint8":
            arr = (np.abs(base) * 2).astype(dt)
        elif dt.startswith("int"):
            arr = (base * 4).astype(dt)
        elif dt.startswith("complex"):
            arr = (base - 0.5j * base).astype(dt)
        else:
            arr = base.astype(dt)
        arr = arr.reshape(2, 3, 2)
        for order in "CF":
            a2 = np.asarray(arr, order=order)
            fname = f"{dt}_{order.lower()}.npy"
            np.save(os.path.join(npd, fname), a2)
            npy[fname] = npy_desc(a2)
    be = np.arange(6, dtype=">i4").reshape(3, 2) * 1000 - 2500
    np.save(os.path.join(npd, "be_i4.npy"), be)
    npy["be_i4.npy"] = npy_desc(be)
    bec = (np.arange(4) + 1j * np.arange(4)[::-1]).astype(">c16")
    np.save(os.path.join(npd, "be_c16.npy"), bec)
    npy["be_c16.npy"] = npy_desc(bec)
    sc = np.array(2.5)
    np.save(os.path.join(npd, "scalar_f8.npy"), sc)
    npy["scalar_f8.npy"] = npy_desc(sc)
    arrays = {"x": np.arange(6, dtype=np.float32).reshape(2, 3),
              "mask": np.array([True, False, True]),
              "yt": np.asfortranarray(np.arange(12, dtype=np.int64).reshape(3, 4))}
    np.savez(os.path.join(npd, "arrays.npz"), **arrays)
    np.savez_compressed(os.path.join(npd, "arrays_compressed.npz"), **arrays)
    npy["arrays.npz"] = {k: npy_desc(v) for k, v in arrays.items()}
    manifest["npy"] = npy

    with open(os.path.join(OUT, "expected.json"), "w") as f:
        json.dump(manifest, f, indent=1, ensure_ascii=False)
        f.write("\n")


def npy_desc(a):
    flat = a.flatten(order="C")
    if np.iscomplexobj(a):
        vals = [[float(z.real), float(z.imag)] for z in flat]
    else:
        vals = [v.item() if a.dtype != np.float16 else float(v) for v in flat]
    return {
        "dtype": a.dtype.name,
        "shape": list(a.shape),
        "fortran": bool(a.flags.f_contiguous and not a.flags.c_contiguous),
        "values": vals,
    }


if __name__ == "__main__":
    main()
