"""Writes grad_tests/fixtures/torch_mlp.safetensors with PyTorch's safetensors.torch.save_file.

The file holds the state_dict of torch.nn.Sequential(Linear(3, 4), ReLU(), Linear(4, 2)) in
float32 (keys 0.weight, 0.bias, 2.weight, 2.bias) plus one tensor of every other dtype tapegrad
reads (dtype.*). Values follow formulas that grad_tests/checkpoint.rs recomputes:
element k of a float tensor is float64(k * 0.37 - 1.5) rounded to the tensor's dtype.

    pip install torch safetensors
    python3 tools/make_safetensors_fixture.py
"""

import pathlib

import torch
from safetensors.torch import save_file


def ramp(shape, dtype):
    n = 1
    for s in shape:
        n *= s
    return (torch.arange(n, dtype=torch.float64) * 0.37 - 1.5).reshape(shape).to(dtype)


def main():
    model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.ReLU(), torch.nn.Linear(4, 2))
    with torch.no_grad():
        for p in model.parameters():
            p.copy_(ramp(p.shape, torch.float32))
    tensors = {k: v.contiguous() for k, v in model.state_dict().items()}
    tensors["dtype.f64"] = ramp((2, 3), torch.float64)
    tensors["dtype.f16"] = ramp((5,), torch.float16)
    tensors["dtype.bf16"] = ramp((5,), torch.bfloat16)
    tensors["dtype.i64"] = torch.tensor([-3, 0, 2**40], dtype=torch.int64)
    tensors["dtype.i32"] = torch.tensor([[-7, 8]], dtype=torch.int32)
    tensors["dtype.u8"] = torch.tensor([0, 255], dtype=torch.uint8)
    tensors["dtype.bool"] = torch.tensor([True, False, True])
    tensors["dtype.c64"] = torch.tensor([1 + 2j, -0.5j], dtype=torch.complex64)
    tensors["dtype.scalar"] = torch.tensor(2.5, dtype=torch.float32)
    tensors["dtype.empty"] = torch.zeros(0, 3, dtype=torch.float32)
    out = pathlib.Path(__file__).resolve().parent.parent / "grad_tests/fixtures/torch_mlp.safetensors"
    save_file(tensors, str(out), metadata={"format": "pt", "writer": "tools/make_safetensors_fixture.py"})
    print(f"wrote {out} ({out.stat().st_size} bytes)")


if __name__ == "__main__":
    main()
