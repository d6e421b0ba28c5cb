"""Records the PyTorch side of grad_tests/cnn_state.rs: a small network of the normalization and
pooling layers (BatchNorm2d, MaxPool2d, GroupNorm, AvgPool2d, AdaptiveAvgPool2d, Flatten,
Linear, BatchNorm1d), its state_dict after a few training steps (so the running statistics
and num_batches_tracked are not their defaults), its eval outputs, and three more SGD training
steps: the losses and every buffer after them.

Writes grad_tests/fixtures/cnn_state/:
  model.safetensors  the state_dict as PyTorch saves it (float64)
  expected.json      keys, repr, the inputs, eval outputs, training losses and buffers

    pip install torch safetensors
    python3 tools/record_cnn_state.py
"""

import json
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn


def model():
    return nn.Sequential(
        nn.BatchNorm2d(3),
        nn.ReLU(),
        nn.MaxPool2d(2),
        nn.GroupNorm(1, 3),
        nn.AvgPool2d(3, stride=1, padding=1, count_include_pad=False),
        nn.AdaptiveAvgPool2d((2, 2)),
        nn.Flatten(),
        nn.Linear(12, 6),
        nn.BatchNorm1d(6, momentum=None),
        nn.Linear(6, 4),
    ).double()


def main():
    torch.manual_seed(0)
    m = model()
    for p in m.parameters():
        with torch.no_grad():
            p.add_(torch.randn_like(p) * 0.1)
    x0 = torch.randn(4, 3, 8, 8, dtype=torch.float64)
    m.train()
    for _ in range(2):
        m(x0 * 2 + 1)
    out = pathlib.Path(__file__).resolve().parent.parent / "grad_tests" / "fixtures" / "cnn_state"
    out.mkdir(parents=True, exist_ok=True)
    sd = m.state_dict()
    save_file({k: v.contiguous() for k, v in sd.items()}, str(out / "model.safetensors"), {"format": "pt"})

    x = torch.randn(4, 3, 8, 8, dtype=torch.float64)
    m.eval()
    with torch.no_grad():
        y_eval = m(x)
    m.train()
    opt = torch.optim.SGD(m.parameters(), lr=0.1)
    losses = []
    for step in range(3):
        opt.zero_grad()
        loss = m(x * (1 + step)).pow(2).mean()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    buffers = {k: v.flatten().tolist() for k, v in m.named_buffers()}
    expected = {
        "state_dict_keys": list(sd.keys()),
        "repr": repr(m),
        "x": x.flatten().tolist(),
        "y_eval": y_eval.flatten().tolist(),
        "losses": losses,
        "buffers": buffers,
        "weight_after": m[7].weight.flatten().tolist(),
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
