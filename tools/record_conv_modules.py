"""Records the PyTorch side of the module test in grad_tests/conv.rs: a small convolutional
model (Conv1d over a sequence view, Conv2d with stride/padding/groups/no bias, ConvTranspose2d
with output_padding) with seeded weights.

Writes grad_tests/fixtures/conv_modules/:
  model.safetensors  the state_dict as PyTorch saves it (float32)
  expected.json      state_dict keys in order, repr, the input and the model's output

    pip install torch safetensors
    python3 tools/record_conv_modules.py
"""

import json
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.c1 = nn.Conv2d(2, 4, 3, stride=1, padding=1)
        self.c2 = nn.Conv2d(4, 6, (3, 2), stride=2, padding=(1, 0), groups=2, bias=False)
        self.up = nn.ConvTranspose2d(6, 3, 3, stride=2, padding=1, output_padding=1)
        self.seq = nn.Conv1d(3, 2, 5, padding="same", dilation=2)

    def forward(self, x):
        y = self.up(torch.relu(self.c2(torch.relu(self.c1(x)))))
        n, c, h, w = y.shape
        return self.seq(y.reshape(n, c, h * w))


def main():
    torch.manual_seed(0)
    m = Net().eval()
    x = torch.randn(2, 2, 7, 6)
    with torch.no_grad():
        y = m(x)
    out = pathlib.Path(__file__).resolve().parent.parent / "grad_tests" / "fixtures" / "conv_modules"
    out.mkdir(parents=True, exist_ok=True)
    sd = m.state_dict()
    save_file({k: v.contiguous() for k, v in sd.items()}, str(out / "model.safetensors"))
    exp = {
        "keys": list(sd.keys()),
        "repr": {name: repr(mod) for name, mod in m.named_children()},
        "input_shape": list(x.shape),
        "input": x.flatten().tolist(),
        "output_shape": list(y.shape),
        "output": y.flatten().tolist(),
        "torch": torch.__version__,
    }
    (out / "expected.json").write_text(json.dumps(exp, indent=1) + "\n")


if __name__ == "__main__":
    main()
