"""Writes the `.pt` fixtures of one storage read as two dtypes (issue 26) into
grad_tests/fixtures/interop/.

    python3 tools/make_pt_alias_fixtures.py

tapegrad storages are typed (`set_` refuses a storage of another dtype), so its reader refuses a
file whose storage record is named with two dtypes (`Unsupported`, naming the key and both
dtypes). torch 2.15 writes such a file only for a storage without data (`torch.save` refuses
"multiple tensors or storages that view the same data as different types" when the storage has
a data pointer), and `torch.load` reads one record as two dtypes whenever the byte counts agree:

  alias_empty.pt  torch.save({"x": x, "xi": x.view(torch.int32)}) of an empty float32 `x`:
                  one record "0", named as FloatStorage and as IntStorage (as torch writes it)
  alias_data.pt   torch.save({"x": arange(4) float32, "xi": 4 int32 values}) with the second
                  tensor's storage key rewritten from "1" to "0" (same length, zip rebuilt):
                  torch.load reads both from record "0" (16 bytes), `xi` as the float bits
The script checks both loads in torch before writing.
"""
import io
import os
import zipfile

import torch

OUT = os.path.join(os.path.dirname(__file__), "..", "grad_tests", "fixtures", "interop")


def saved(obj):
    b = io.BytesIO()
    torch.save(obj, b)
    return b.getvalue()


def rewrite_pickle(data, old, new):
    """The archive `data` with `old` replaced by `new` (same length) in data.pkl, entries kept."""
    src = zipfile.ZipFile(io.BytesIO(data))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as dst:
        for info in src.infolist():
            body = src.read(info)
            if info.filename.endswith("/data.pkl"):
                assert body.count(old) == 1, body
                body = body.replace(old, new)
            dst.writestr(info, body)
    return out.getvalue()


def main():
    x = torch.empty(0)
    assert x.untyped_storage().data_ptr() == 0
    empty = saved({"x": x, "xi": x.view(torch.int32)})
    back = torch.load(io.BytesIO(empty), weights_only=True)
    assert back["x"].dtype == torch.float32 and back["xi"].dtype == torch.int32
    assert back["x"].untyped_storage()._cdata == back["xi"].untyped_storage()._cdata

    x = torch.arange(4, dtype=torch.float32)
    xi = torch.tensor([7, 7, 7, 7], dtype=torch.int32)
    # the storage key "1" of `xi` (BINUNICODE, length 1) becomes "0", the key of `x`
    data = rewrite_pickle(saved({"x": x, "xi": xi}), b"X\x01\x00\x00\x001", b"X\x01\x00\x00\x000")
    back = torch.load(io.BytesIO(data), weights_only=True)
    assert torch.equal(back["xi"], x.view(torch.int32)), back
    assert back["x"].untyped_storage().data_ptr() == back["xi"].untyped_storage().data_ptr()

    for name, body in (("alias_empty.pt", empty), ("alias_data.pt", data)):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(body)
        print(name, len(body), "bytes")


if __name__ == "__main__":
    main()
