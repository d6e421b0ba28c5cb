"""Records the PyTorch side of grad_tests/transformer.rs: two TransformerEncoderLayer(8, 2, 16,
dropout=0, batch_first=True) models (post-norm with relu, pre-norm with gelu) saved as
safetensors, and their outputs in eval mode on one input with every mask form (none, boolean
causal src_mask, float src_mask, boolean key padding mask, both, is_causal with its mask), plus
their self_attn's outputs and head-averaged / per-head weights, and a cross-attention call.

Recorded with grad enabled (parameters require grad), so PyTorch takes its reference path,
not the inference fast path (which writes zeros at padded positions).

Writes grad_tests/fixtures/transformer/{post_relu,pre_gelu}.safetensors and expected.json.

    pip install torch safetensors
    python3 tools/record_transformer.py
"""

import json
import pathlib

import torch
from safetensors.torch import save_file
from torch import nn

OUT = pathlib.Path(__file__).resolve().parent.parent / "grad_tests" / "fixtures" / "transformer"
B, T, D, H, F = 2, 5, 8, 2, 16


def flat(t):
    return {"shape": list(t.shape), "values": t.detach().double().flatten().tolist()}


def main():
    torch.manual_seed(27)
    OUT.mkdir(parents=True, exist_ok=True)
    x = torch.randn(B, T, D)
    mem = torch.randn(B, T + 1, D)
    causal = torch.triu(torch.ones(T, T, dtype=torch.bool), 1)
    fmask = torch.randn(T, T)
    kpm = torch.zeros(B, T, dtype=torch.bool)
    kpm[0, 3:] = True
    kpm[1, 1] = True
    kpm_mem = torch.zeros(B, T + 1, dtype=torch.bool)
    kpm_mem[1, :2] = True
    masks = {
        "none": {},
        "causal": {"src_mask": causal},
        "float": {"src_mask": fmask},
        "padding": {"src_key_padding_mask": kpm},
        "both": {"src_mask": causal, "src_key_padding_mask": kpm},
        "is_causal": {"src_mask": causal, "is_causal": True},
    }
    expected = {
        "input": flat(x),
        "memory": flat(mem),
        "causal": causal.flatten().tolist(),
        "float_mask": flat(fmask),
        "kpm": kpm.flatten().tolist(),
        "kpm_memory": kpm_mem.flatten().tolist(),
        "models": {},
    }
    for name, norm_first, act in [("post_relu", False, "relu"), ("pre_gelu", True, "gelu")]:
        layer = nn.TransformerEncoderLayer(D, H, F, dropout=0.0, activation=act,
                                           batch_first=True, norm_first=norm_first)
        layer.eval()
        save_file({k: v.contiguous() for k, v in layer.state_dict().items()},
                  str(OUT / f"{name}.safetensors"))
        rec = {"keys": list(layer.state_dict().keys()), "layer": {}}
        for mname, kw in masks.items():
            rec["layer"][mname] = flat(layer(x, **kw))
        mha = layer.self_attn
        y, w = mha(x, x, x, key_padding_mask=kpm, attn_mask=causal)
        rec["mha_weights_avg"] = {"out": flat(y), "weights": flat(w)}
        y, w = mha(x, x, x, attn_mask=fmask, average_attn_weights=False)
        rec["mha_weights_heads"] = {"out": flat(y), "weights": flat(w)}
        y, _ = mha(x, mem, mem, key_padding_mask=kpm_mem, need_weights=False)
        rec["mha_cross"] = {"out": flat(y)}
        expected["models"][name] = rec
    (OUT / "expected.json").write_text(json.dumps(expected))


if __name__ == "__main__":
    main()
