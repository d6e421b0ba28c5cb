"""Records the PyTorch side of grad_tests/nn_state.rs: a small transformer of nested containers
(ModuleList of blocks, each with an attention module taking a mask, a Sequential MLP; a
ModuleDict of heads, one a Sequential inside a Sequential) with a float64 buffer, an int64
buffer and a non-persistent buffer.

Writes grad_tests/fixtures/nn_state/:
  model.safetensors  the state_dict as PyTorch saves it (float32 parameters, float64 `pos`,
                     int64 `steps`; no `cache`, which is not persistent)
  expected.json      state_dict keys in order, named_parameters / named_buffers keys, repr,
                     the input tokens and mask, and the model's outputs in eval mode, once as
                     saved (float32) and once after model.double()

    pip install torch safetensors
    python3 tools/record_nn_state.py
"""

import json
import math
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn

V, D, H, F, T, B = 11, 8, 2, 16, 5, 2


class Attention(nn.Module):
    def __init__(self, d, heads):
        super().__init__()
        self.heads = heads
        self.q = nn.Linear(d, d)
        self.k = nn.Linear(d, d)
        self.v = nn.Linear(d, d)
        self.o = nn.Linear(d, d)

    def forward(self, x, mask):
        b, t, d = x.shape
        dh = d // self.heads

        def split(y):
            return y.view(b, t, self.heads, dh).transpose(1, 2)

        q, k, v = split(self.q(x)), split(self.k(x)), split(self.v(x))
        s = q @ k.transpose(-2, -1) / math.sqrt(dh)
        s = s.masked_fill(~mask, float("-inf"))
        y = (s.softmax(-1) @ v).transpose(1, 2).reshape(b, t, d)
        return self.o(y)


class Block(nn.Module):
    def __init__(self, d, heads, ffn):
        super().__init__()
        self.ln1 = nn.LayerNorm(d)
        self.attn = Attention(d, heads)
        self.ln2 = nn.LayerNorm(d)
        self.mlp = nn.Sequential(nn.Linear(d, ffn), nn.GELU(), nn.Linear(ffn, d), nn.Dropout(0.1))

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.mlp(self.ln2(x))


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("pos", torch.randn(T, D, dtype=torch.float64))
        self.register_buffer("steps", torch.tensor(7, dtype=torch.int64))
        self.register_buffer("cache", torch.zeros(2), persistent=False)
        self.embed = nn.Embedding(V, D)
        self.layers = nn.ModuleList([Block(D, H, F) for _ in range(2)])
        self.heads = nn.ModuleDict(
            {"lm": nn.Linear(D, V, bias=False), "cls": nn.Sequential(nn.Sequential(nn.Linear(D, 2)))}
        )

    def forward(self, tokens, mask):
        h = self.embed(tokens) + self.pos[: tokens.shape[1]].to(self.embed.weight.dtype)
        for block in self.layers:
            h = block(h, mask)
        return self.heads["lm"](h), self.heads["cls"](h.mean(1))


def main():
    torch.manual_seed(0)
    model = Model().eval()
    out = pathlib.Path(__file__).resolve().parent.parent / "grad_tests" / "fixtures" / "nn_state"
    out.mkdir(parents=True, exist_ok=True)
    sd = model.state_dict()
    save_file({k: v.contiguous() for k, v in sd.items()}, str(out / "model.safetensors"), {"format": "pt"})

    tokens = torch.tensor([[1, 4, 9, 0, 3], [10, 2, 2, 7, 5]])
    mask = torch.ones(T, T, dtype=torch.bool).tril()
    with torch.no_grad():
        lm32, cls32 = model(tokens, mask)
        model.double()
        lm64, cls64 = model(tokens, mask)
    expected = {
        "state_dict_keys": list(sd.keys()),
        "parameter_keys": [k for k, _ in model.named_parameters()],
        "buffer_keys": [k for k, _ in model.named_buffers()],
        "module_keys": [k for k, _ in model.named_modules()],
        "num_parameters": sum(p.numel() for p in model.parameters()),
        "repr": repr(model),
        "tokens": tokens.flatten().tolist(),
        "mask": mask.flatten().tolist(),
        "lm_f32": lm32.flatten().tolist(),
        "cls_f32": cls32.flatten().tolist(),
        "lm_f64": lm64.flatten().tolist(),
        "cls_f64": cls64.flatten().tolist(),
        "lm_shape": list(lm64.shape),
    }
    (out / "expected.json").write_text(json.dumps(expected, indent=1) + "\n")


if __name__ == "__main__":
    main()
