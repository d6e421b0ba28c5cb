#!/usr/bin/env python3
"""OpInfo-style sweep of tapegrad's public ops, recorded from PyTorch.

Writes conformance fixtures (format 1 of the shared conformance recorder, with the small
extensions listed in README.md) to grad_tests/fixtures/sweep/<family>.json.

    python tools/sweep/sweep.py                 # (re)write the fixtures
    python tools/sweep/sweep.py --check         # re-record; fail if any byte differs
    python tools/sweep/sweep.py --only unary    # one family

The recorder (record.py) is imported from $SWEEP_RECORDER, else ../shared/conformance next to
the repository, else /work/shared/conformance.
"""

from __future__ import annotations

import argparse
import gzip
import importlib.util
import json
import math
import os
import random
import sys
import time
import zlib

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))


def _load_recorder():
    cands = [os.environ.get("SWEEP_RECORDER"), os.path.join(REPO, os.pardir, "shared", "conformance"),
             "/work/shared/conformance"]
    for d in cands:
        if d and os.path.exists(os.path.join(d, "record.py")):
            spec = importlib.util.spec_from_file_location("record", os.path.join(d, "record.py"))
            mod = importlib.util.module_from_spec(spec)
            sys.modules["record"] = mod
            spec.loader.exec_module(mod)
            return mod
    raise SystemExit("record.py not found (set SWEEP_RECORDER)")


R = _load_recorder()

# ----------------------------------------------------------------------------- format extensions
# complex dtypes; a complex element is written {"re": x, "im": y}
R.DTYPES["complex64"] = torch.complex64
R.DTYPES["complex128"] = torch.complex128
R.DTYPE_NAMES.update({torch.complex64: "complex64", torch.complex128: "complex128"})
R.DEFAULT_TOL["complex64"] = R.DEFAULT_TOL["float32"]
R.DEFAULT_TOL["complex128"] = R.DEFAULT_TOL["float64"]
R.PLAIN_STRINGS.update({"prod", "amax", "amin", "fro"})
R.PLAIN_STRINGS.update({"linear", "trilinear"})     # F.interpolate modes (resample family)
_orig_scalar = R._scalar


def _scalar(v):
    if isinstance(v, complex):
        return {"re": _orig_scalar(v.real), "im": _orig_scalar(v.imag)}
    return _orig_scalar(v)


_orig_from_json = R._from_json_scalar


def _from_json_scalar(v):
    if isinstance(v, dict):
        return complex(_orig_from_json(v["re"]), _orig_from_json(v["im"]))
    return _orig_from_json(v)


R._scalar = _scalar
_orig_values = R._values


def _values(t):
    # PyTorch hands out "efficient zero" gradients (no storage) from some double-backward
    # formulas; their value is all zeros.
    if t.layout == torch.strided and t._is_zerotensor():
        return R._nested(torch.zeros(t.shape, dtype=t.dtype).tolist())
    return _orig_values(t)


R._values = _values
R._from_json_scalar = _from_json_scalar
_orig_invoke = R._invoke


def _invoke(op, args, kwargs):
    # second order: torch.autograd.grad(outputs, inputs, grad_outputs=, create_graph=True)
    if op == "autograd.grad":
        return torch.autograd.grad(args[0], args[1], create_graph=True, **kwargs)
    return _orig_invoke(op, args, kwargs)


R._invoke = _invoke

# Error messages the shared table does not map (sweep-only additions, see README "error
# kinds"). Each pattern is one message class PyTorch raises in the sweep, given the kind the
# shared table's rules give its kind of condition: an op or argument that a dtype does not
# support is DTypeMismatch (as for `-` on bool); sizes that do not fit together are
# ShapeMismatch (as for `cat` and `expand`), while an operand of the wrong rank is
# InvalidArgument (as for `t()` and `tril`); a value outside what the op accepts is
# InvalidArgument; a derivative PyTorch does not implement is tapegrad's NotImplemented. They
# are appended, so the shared patterns win; there is no catch-all: a message no pattern maps
# stops the recording (`main` fails), as in the shared recorder.
R.ERROR_KINDS.extend([
    ("DTypeMismatch", r"^\"\w+\" not implemented for '\w+'$|"              # a kernel lacks the dtype
                      r"^\"slow_conv_dilated<>\" not implemented for '\w+'$|"
                      r"^Input type \(.*\) and (weight|bias) type \(.*\) should be the same|"   # conv operands
                      r"^Unlike NumPy, torch\.sign is not intended to support complex numbers|"
                      r"does not support automatic differentiation for outputs with complex dtype|"
                      r"^Autograd not support dtype: \w+$|"                   # prod(dtype=int) of a grad input
                      r"^For integral input tensors, argument alpha must not be a floating point|"
                      r"^Integer division with addcdiv is no longer supported|"
                      r"^where expected condition to be a boolean tensor|"
                      r"^Expected isFloatingType\(grad\.scalar_type\(\)\) \|\| "
                      r"\(input_is_complex == grad_is_complex\) to be true"),   # a real grad for a complex input
    ("ShapeMismatch", r"^stack expects each tensor to be equal size|"
                      r"^size \{\[[\d, ]*\]\} is not expandable to size|"         # sum_to_size
                      r"^Given normalized_shape=\[[\d, ]*\], expected input with shape|"
                      r"returned an invalid gradient at index \d+ - got \[[\d, ]*\] but expected shape|"
                      r"^Number of dimensions of repeat dims can not be smaller than number of dimensions|"
                      r"expected bias to be 1-dimensional with \d+ elements"),       # conv bias size
    ("ShapeMismatch", r"^(running_mean|running_var|weight|bias) should contain \d+ elements not \d+$|"
                      r"^Expected (weight|bias) to be a vector of size equal to the number of channels"),
    ("IndexOutOfRange", r"^Class values must be smaller than num_classes"),
    ("NotImplemented", r"^derivative for aten::\w+ is not implemented$|"
                       r"is not differentiable with respect to argument '\w+'\. This input cannot have requires_grad"),
    ("ViewInplaceForbidden", r"^Can't detach views in-place"),
    ("InvalidArgument", r"^mm: self must be a matrix, got \d+-D tensor$|"      # the rank of an operand
                        r"^output padding must be smaller than either stride or dilation|"
                        r"^\dD tensors expected, but got \dD and \dD tensors$|"
                        r"^t_\(\) expects a tensor with <= 2 dimensions|"
                        r"^upper bound and lower bound inconsistent with step sign$|^step must be nonzero$|"
                        r"^zeros: Dimension size must be non-negative|"
                        r"^masked_fill_ only supports a 0-dimensional value tensor|"   # a tensor for a scalar
                        r"^fill_ only supports 0-dimension value tensor|"
                        r"^a Tensor with \d+ elements cannot be converted to Scalar$|"
                        r"^torch\.clamp: At least one of 'min' or 'max' must not be None$|"
                        r"^value cannot be converted to type \w+ without overflow$|"   # a scalar out of range
                        r"^all elements of target should be between 0 and 1$|"
                        r"^Can not infer total number of classes from empty tensor|"
                        r"^Expected more than 1 spatial element when training|"   # instance_norm
                        r"^Expected running_mean and running_var to be defined when use_input_stats|"
                        r"^divisor must be not zero$|non-empty 3D or 4D \(batch mode\) tensor expected|"
                        r"Expected 2D or 3D \(batch mode\) tensor with optional 0 dim batch size|"
                        r"cannot compute the -?inf norm on an empty tensor because the operation does not have an identity"),
])
# resampling family (issue 27): argument errors of F.pad / F.unfold / F.fold / F.interpolate /
# F.pixel_shuffle / F.pixel_unshuffle (dtype errors use the "not implemented for" pattern above)
R.ERROR_KINDS.extend([
    ("InvalidArgument", r"^Padding size \d+ is not supported for \d+D input tensor|"
                        r"^Padding length must be divisible by 2|"
                        r"^Padding length should be less than or equal to two times|"
                        r"doesn't take in value argument|"
                        r"^Expected \dD or \dD \(batch mode\) tensor (with|for input with) possibly 0 batch size|"
                        r"^Given input with spatial size|"
                        r"^Expected size of input's dimension \d+ to be divisible by the product of kernel_size|"
                        r"^Given output_size=|^(kernel size|stride|dilation) should be greater than zero|"
                        r"^Got \dD input, but \w+ mode needs \dD input|"
                        r"^(only one|either) of size or scale_factor should be defined|"
                        r"^either size or scale_factor should be defined|"
                        r"^Input and (output|scale_factor) must have the same number of spatial dimensions|"
                        r"^align_corners option can only be set with the interpolating modes|"
                        r"^recompute_scale_factor is not meaningful|"
                        r"^Input and output sizes should be greater than 0|"
                        r"^Non-empty \dD data tensor expected|^pixel_(un)?shuffle expects|"
                        r"is too small\. Calculated output|"
                        r"^Negative padding value is resulting in an empty dimension"),
])
# argmin() of an empty tensor raises IndexError like argmax(), which the shared table maps to
# IndexOutOfRange; its argmin twin would fall through to the generic InvalidArgument pattern.
R.ERROR_KINDS.insert(0, ("IndexOutOfRange", r"^argmin\(\): Expected reduction dim to be specified for input\.numel\(\) == 0"))
# nn layouts family: a weight with fewer rows than groups (no input or output channels)
R.ERROR_KINDS.extend([
    ("InvalidArgument", r"^Given groups=\d+, expected weight to be at least \d+ at dimension 0"),
])
UNMAPPED = "unmapped torch error message"     # the shared recorder's RecordError text for them

TORCH_VERSION = R.TORCH_VERSION

FLOATS = ["float16", "bfloat16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
INTS = ["uint8", "int8", "int16", "int32", "int64"]
ALL = ["bool"] + INTS + FLOATS + COMPLEX
ALL_DT = {n: R.DTYPES[n] for n in ALL}


def is_fc(dt):
    return dt in FLOATS or dt in COMPLEX


# ----------------------------------------------------------------------------- values

def edge_values(dt):
    if dt == "bool":
        return [True, False, True, True, False]
    if dt in INTS:
        ii = torch.iinfo(ALL_DT[dt])
        return [ii.min, ii.max, 0, -1 if ii.min < 0 else 1, 1, 2, 3, ii.max - 1, 7]
    if dt in COMPLEX:
        return [complex(0, 0), complex(-0.0, 1), complex(math.inf, 0), complex(1, math.nan),
                complex(1e30, -1e30), complex(0.5, -2.5), complex(-3, 4)]
    fi = torch.finfo(ALL_DT[dt])
    return [0.0, -0.0, math.inf, -math.inf, math.nan, float(fi.max), -float(fi.max),
            float(fi.tiny) / 4, 0.5, 1.5, 2.5, -2.5, 1.0, -1.0]


def gen_values(rng, n, dt, kind):
    """n values of dtype dt; kind in randn, pos, unit, edge, ties, small."""
    if kind == "edge":
        ev = edge_values(dt)
        off = rng.randrange(len(ev))
        return [ev[(i + off) % len(ev)] for i in range(n)]
    if kind == "ties":
        pool = [1, 2, 2] if dt != "bool" else [True, False]
        return [(pool[rng.randrange(len(pool))] if dt != "bool" else pool[rng.randrange(2)]) for _ in range(n)]
    if dt == "bool":
        return [rng.random() < 0.5 for _ in range(n)]
    if dt in INTS:
        lo = 0 if dt == "uint8" else -5
        if kind == "pos":
            lo = 1
        hi = 3 if kind == "small" else 6
        if kind == "unit":
            lo, hi = (0 if dt == "uint8" else -1), 1
        return [rng.randint(lo, hi) for _ in range(n)]

    def one():
        if kind == "pos":
            return rng.randint(2, 56) / 16
        if kind == "unit":
            return rng.randint(-15, 15) / 16
        if kind == "small":
            return rng.randint(-24, 24) / 16
        return rng.randint(-56, 56) / 16
    if dt in COMPLEX:
        return [complex(one(), one()) for _ in range(n)]
    return [one() for _ in range(n)]


def nest(flat, shape):
    if not shape:
        return flat[0]
    if len(shape) == 1:
        return list(flat[:shape[0]])
    step = int(math.prod(shape[1:]))
    return [nest(flat[i * step:(i + 1) * step], shape[1:]) for i in range(shape[0])]


# ----------------------------------------------------------------------------- inputs

class In:
    """A tensor input: shape (as the op sees it), dtype, layout, value kind, grad."""

    def __init__(self, shape, dt, layout="contig", vals="randn", grad=True, fixed=None):
        self.shape, self.dt, self.layout, self.vals, self.grad, self.fixed = \
            list(shape), dt, layout, vals, grad, fixed

    def ok(self):
        r = len(self.shape)
        if self.layout == "T":
            return r >= 2
        if self.layout in ("step", "offset"):
            return r >= 1
        if self.layout == "expand":
            return r >= 1 and any(d > 1 for d in self.shape)
        if self.layout == "cl":
            return r >= 3
        return True


def build(s, rng, spec: In, name, need_clone=False):
    """Creates the input in the scenario; returns (handle, leaf handle or None)."""
    rg = spec.grad and is_fc(spec.dt)
    shape = spec.shape
    lay = spec.layout
    if lay == "T":
        base = shape[:-2] + [shape[-1], shape[-2]]
    elif lay == "step":
        base = shape[:-1] + [shape[-1] * 2]
    elif lay == "offset":
        base = [shape[0] + 1] + shape[1:]
    elif lay == "expand":
        d = next(i for i, n in enumerate(shape) if n > 1)
        base = shape[:d] + [1] + shape[d + 1:]
    elif lay == "cl":
        # channels last: a [N, *spatial, C] literal permuted to [N, C, *spatial] (the strides
        # of `contiguous(memory_format=torch.channels_last)` / `_3d`)
        base = [shape[0]] + shape[2:] + [shape[1]]
    else:
        base = shape
    n = int(math.prod(base))
    flat = spec.fixed if spec.fixed is not None else gen_values(rng, n, spec.dt, spec.vals)
    direct = lay == "contig" and not need_clone
    if n == 0 and len(base) > 1:
        # a literal cannot carry the sizes of an empty tensor: reshape a 1-D empty one
        e = s.tensor([], dtype=spec.dt, requires_grad=rg, bind=name + "_e")
        leaf = s.call("reshape", e, list(base), bind=name if direct else name + "_b")
        x = leaf
        leaf = e
    else:
        leaf = s.tensor(nest(flat, base) if base else flat[0], dtype=spec.dt, requires_grad=rg,
                        bind=name if direct else name + "_b")
        x = leaf
    if need_clone and rg:
        x = s.call("clone", x, bind=name + "_c")
    if lay == "T":
        x = s.call("transpose", x, -1, -2, bind=name)
    elif lay == "step":
        x = s.getitem(x, (Ellipsis, slice(None, None, 2)), bind=name)
    elif lay == "offset":
        x = s.getitem(x, (slice(1, None, None),), bind=name)
    elif lay == "expand":
        x = s.call("expand", x, list(shape), bind=name)
    elif lay == "cl":
        r = len(shape)
        x = s.call("permute", x, [0, r - 1] + list(range(1, r - 1)), bind=name)
    elif x is not leaf or x.name != name:
        if need_clone and rg:
            pass
    return x, (leaf if rg else None)


def cotangent(s, rng, h, name):
    t = h.torch
    dt = R.DTYPE_NAMES[t.dtype]
    n = t.numel()
    if n == 0 and t.dim() > 1:      # a literal cannot carry the sizes of an empty tensor
        e = s.tensor([], dtype=dt, bind=name + "_e")
        return s.call("reshape", e, list(t.shape), bind=name)
    flat = gen_values(rng, n, dt, "small")
    return s.tensor(nest(flat, list(t.shape)) if t.dim() else flat[0], dtype=dt, bind=name)


# ----------------------------------------------------------------------------- samples

class NotACall(Exception):
    """PyTorch's Python binding rejects the argument list (TypeError): the sample is not a call."""


class Sample:
    def __init__(self, op, args, kwargs=None, about="", unspecified=None, inplace=False,
                 second=False, grad=True, input_grads=False):
        # input_grads: also `autograd.grad` w.r.t. the op's tensor arguments themselves (not
        # their leaves), so the gradients' strides are recorded (nn_layouts family)
        self.input_grads = input_grads
        self.op, self.args, self.kwargs = op, args, kwargs or {}
        self.about, self.unspecified, self.inplace, self.second, self.grad = \
            about, unspecified, inplace, second, grad


def _arg_repr(a):
    if isinstance(a, In):
        return f"{R.DTYPE_NAMES.get(a.dt, a.dt) if False else a.dt}{a.shape}{'' if a.layout == 'contig' else ':' + a.layout}" \
               f"{'' if a.vals == 'randn' else '/' + a.vals}"
    if isinstance(a, tuple):
        return "[" + ",".join(_arg_repr(e) for e in a) + "]"
    if isinstance(a, slice):
        return f"{'' if a.start is None else a.start}:{'' if a.stop is None else a.stop}" + \
               ("" if a.step is None else f":{a.step}")
    if a is Ellipsis:
        return "..."
    if isinstance(a, list) and a and any(isinstance(e, In) for e in a):
        return "[" + ",".join(_arg_repr(e) for e in a) + "]"
    return repr(a)


def record_sample(case_name, smp: Sample):
    torch.set_grad_enabled(True)
    torch.manual_seed(0)
    about = smp.about or (smp.op + "(" + ", ".join(_arg_repr(a) for a in smp.args) +
                          "".join(f", {k}={_arg_repr(v)}" for k, v in smp.kwargs.items()) + ")")
    s = R.Scenario(case_name, about[:200])
    rng = random.Random(zlib.crc32(case_name.encode()))
    leaves = []
    names = iter("abcdefgh")

    def conv(a, top=True):
        if isinstance(a, In):
            nm = next(names)
            h, leaf = build(s, rng, a, nm, need_clone=smp.inplace and top)
            if leaf is not None:
                leaves.append(leaf)
            return h
        if isinstance(a, list):
            return [conv(e, False) for e in a]
        return a
    args = [conv(a, i == 0) for i, a in enumerate(smp.args)]
    kwargs = {k: conv(v, False) for k, v in smp.kwargs.items()}
    if smp.op in ("getitem", "setitem"):
        args[1] = R._IndexTuple(tuple(conv(e, False) if isinstance(e, In) else e for e in smp.args[1]))
    try:
        if smp.op == "getitem":
            res = s.getitem(args[0], args[1])
        elif smp.op == "setitem":
            res = s.setitem(args[0], args[1], args[2])
        else:
            res = s.call(smp.op, *args, **kwargs)
    except R.RecordError:
        raise
    except TypeError as e:      # Python argument parsing: not a call PyTorch's signature accepts
        raise NotACall(str(e)) from e
    except Exception:           # noqa: BLE001 - torch raised: record the error kind
        s.expect_error(smp.op, *args, **kwargs)
        res = None
    outs = res if isinstance(res, list) else [res]
    outs = [o for o in outs if isinstance(o, R.T)]
    if smp.grad and outs and leaves:
        y = outs[0]
        if y.torch.requires_grad and is_fc(R.DTYPE_NAMES[y.torch.dtype]):
            ct = cotangent(s, rng, y, "ct")
            if smp.input_grads:
                ins = [a for a in args if isinstance(a, R.T) and a.torch.requires_grad]
                try:
                    s.call("autograd.grad", [y], ins, grad_outputs=[ct])
                except R.RecordError:
                    raise
                except Exception:   # noqa: BLE001 - torch raises: record the error kind
                    s.expect_error("autograd.grad", [y], ins, grad_outputs=[ct])
            second = smp.second or (
                not smp.inplace and all(lf.torch.dtype == torch.float64 for lf in leaves) and
                all(a.layout == "contig" for a in smp.args if isinstance(a, In)) and
                zlib.crc32(case_name.encode()) % 3 == 0)
            if second and y.torch.grad_fn is not None:
                # first order through .grad (what a replayer without autograd.grad still checks),
                # then the first-order gradients as tensors with a graph, then their backward:
                # the leaves' .grad then holds first + second order
                try:
                    s.backward(y, gradient=ct, retain_graph=True)
                except R.RecordError:
                    raise
                except Exception:   # noqa: BLE001
                    s.expect_error("backward", y, gradient=ct, retain_graph=True)
                try:
                    gs = s.call("autograd.grad", [y], leaves, grad_outputs=[ct])
                except R.RecordError:
                    raise
                except Exception:   # noqa: BLE001
                    gs = None
                if gs:
                    g0 = gs[0]
                    if g0.torch.requires_grad:
                        ct2 = cotangent(s, rng, g0, "ct2")
                        s.backward(g0, gradient=ct2)
                    else:
                        s.expect_error("backward", g0, gradient=cotangent(s, rng, g0, "ct2"))
            else:
                try:
                    s.backward(y, gradient=ct)
                except R.RecordError:
                    raise
                except Exception:   # noqa: BLE001 - backward itself raises in PyTorch
                    s.expect_error("backward", y, gradient=ct)
    js = s.to_json()
    js["op"] = smp.op
    if smp.unspecified:
        js["unspecified"] = smp.unspecified
    elif smp.op == "topk" and _topk_has_ties(js):
        js["unspecified"] = TOPK_TIES
    return js


TOPK_TIES = "topk among ties: which of the equal elements (indices) is returned is unspecified"


def _topk_has_ties(js):
    """True when the recorded input of a `topk` case (dim -1) has, in some row, equal values
    among the k picked or at the cut: which index PyTorch returns there is its partial sort's
    (any sample, not only the generator's `ties`/`edge` ones: small random integers tie)."""
    top = next(st for st in js["steps"] if st.get("op") == "topk")
    src, k = top["args"][0]["t"], top["args"][1]
    vals = next(st for st in js["steps"] if st.get("out") == src)["expect"]["values"]
    largest = top["kwargs"].get("largest", True)

    def key(v):   # NaN orders above every number, and all NaNs are equal
        v = float(v) if isinstance(v, str) else v
        return (1, 0.0) if v != v else (0, v)

    def rows(v):
        if isinstance(v, list) and v and isinstance(v[0], list):
            for r in v:
                yield from rows(r)
        elif isinstance(v, list):
            yield v

    for r in rows(vals):
        sr = sorted((key(v) for v in r), reverse=largest)
        sel = sr[:k]
        if len(set(sel)) < len(sel) or (0 < k < len(sr) and sr[k - 1] == sr[k]):
            return True
    return False


# ----------------------------------------------------------------------------- the op table

SHAPES_1 = [[], [0], [1], [5], [2, 3], [3, 1, 2], [2, 1, 2, 2]]
LAYOUTS = ["contig", "T", "step", "expand", "offset"]
BCAST = [([2, 3], [3]), ([3, 1], [1, 4]), ([2, 1, 3], [4, 1]), ([], [2, 2]), ([2, 2], []),
         ([0, 3], [1, 3]), ([1], [0])]

OPS = {}        # name -> dict(family, gen, ...)


def op(name, family, **kw):
    OPS[name] = dict(family=family, **kw)


def supported(opname, dt, make):
    """Does PyTorch implement this op for dtype dt?  (probe on a small input)"""
    try:
        args, kwargs = make(dt)
        with torch.no_grad():
            R._invoke(opname, args, kwargs)
        return True
    except Exception as e:   # noqa: BLE001
        m = str(e)
        return not ("not implemented for" in m or "not supported" in m or "does not support" in m
                    or "only supports" in m or "must be floating" in m or "expected a floating" in m.lower()
                    or "Boolean value" in m or "isn't implemented" in m or "is not supported" in m
                    or "only defined for" in m or "can only be" in m or "only Tensors of floating" in m
                    or "Expected floating" in m or "got unsupported" in m)


def probe_unary(opname, extra_kwargs=None):
    def make(dt):
        return [torch.ones(2, 3, dtype=ALL_DT[dt])], dict(extra_kwargs or {})
    return [dt for dt in ALL if supported(opname, dt, make)]


def probe_binary(opname, scalar=None):
    def make(dt):
        b = torch.ones(2, 3, dtype=ALL_DT[dt]) if scalar is None else scalar
        return [torch.ones(2, 3, dtype=ALL_DT[dt]), b], {}
    return [dt for dt in ALL if supported(opname, dt, make)]


def has_method(name):
    return hasattr(torch.Tensor, name)


def pick(rng, seq, k):
    seq = list(seq)
    if len(seq) <= k:
        return seq
    return rng.sample(seq, k)


# ---- unary
UNARY = ["abs", "neg", "sign", "relu", "exp", "exp2", "log", "log2", "log10", "log1p", "expm1", "sqrt",
         "rsqrt", "reciprocal", "sin", "cos", "tan", "asin", "acos", "atan", "sinh", "cosh", "tanh",
         "sigmoid", "floor", "ceil", "round", "trunc", "logical_not", "bitwise_not", "isnan", "isinf",
         "isfinite", "nonzero", "F.silu", "F.gelu", "F.softplus", "F.elu", "F.leaky_relu", "nan_to_num",
         "clone", "contiguous", "detach", "square", "frac", "erf"]
DOMAIN = {"log": "pos", "log2": "pos", "log10": "pos", "log1p": "pos", "sqrt": "pos", "rsqrt": "pos",
          "asin": "unit", "acos": "unit", "exp": "small", "exp2": "small", "sinh": "small", "cosh": "small",
          "expm1": "small"}
UNARY_KW = {"F.gelu": [{}, {"approximate": "tanh"}], "F.softplus": [{}, {"beta": 2.0, "threshold": 1.0}],
            "F.elu": [{}, {"alpha": 0.5}], "F.leaky_relu": [{}, {"negative_slope": 0.2}],
            "nan_to_num": [{}, {"nan": 1.5, "posinf": 9.0, "neginf": -9.0}],
            "round": [{}, {"decimals": 1}]}


def gen_unary(name, rng):
    dts = probe_unary(name)
    out = []
    for dt in dts:
        vk = DOMAIN.get(name, "randn")
        for shape in SHAPES_1:
            lays = ["contig"] + (pick(rng, LAYOUTS[1:], 1) if dt in ("float32", "float64", "int64") or
                                 rng.random() < 0.2 else [])
            for lay in lays:
                i = In(shape, dt, lay, vk)
                if i.ok():
                    out.append(Sample(name, [i], second=(dt == "float64" and lay == "contig" and len(shape) == 2)))
        out.append(Sample(name, [In([3, 3], dt, "contig", "edge")]))
        out.append(Sample(name, [In([2, 5], dt, "T", "edge")]))
        if vk != "randn":
            out.append(Sample(name, [In([2, 3], dt, "contig", "randn")], about=name + " outside its domain"))
        for kw in UNARY_KW.get(name, [])[1:]:
            out.append(Sample(name, [In([2, 3], dt)], dict(kw)))
            out.append(Sample(name, [In([3, 3], dt, "contig", "edge")], dict(kw)))
    # in-place twin: PyTorch's Tensor.<name>_
    ip = name + "_"
    if not name.startswith("F.") and has_method(ip) and name not in ("clone", "contiguous"):
        ipdts = [dt for dt in dts if supported(ip, dt, lambda d: ([torch.ones(2, 3, dtype=ALL_DT[d])], {}))]
        for dt in ipdts:
            for shape, lay in [([], "contig"), ([0], "contig"), ([4], "step"), ([2, 3], "contig"), ([2, 3], "T"),
                               ([2, 3], "expand"), ([2, 1, 2, 2], "contig")]:
                    i = In(shape, dt, lay, DOMAIN.get(name, "randn"))
                    if i.ok():
                        out.append(Sample(ip, [i], inplace=True))
            out.append(Sample(ip, [In([3, 3], dt, "offset", "edge")], inplace=True))
    if name.startswith("F.") and name not in ("F.gelu",):
        for dt in [d for d in dts if d in FLOATS]:
            out.append(Sample(name, [In([2, 3], dt)], {"inplace": True}, inplace=True))
    return out


for _n in UNARY:
    op(_n, "unary", gen=lambda rng, n=_n: gen_unary(n, rng))

# ---- binary
BINARY = ["add", "sub", "mul", "div", "true_divide", "floor_divide", "remainder", "fmod", "pow", "eq", "ne",
          "lt", "le", "gt", "ge", "bitwise_and", "bitwise_or", "bitwise_xor", "logical_and", "logical_or",
          "logical_xor", "maximum", "minimum", "fmax", "fmin", "atan2", "hypot"]
BIN_SCALARS = [2, -3, 0.5, True, 0, 0.0, "inf"]
BIN_KW = {"add": [{"alpha": 2}, {"alpha": 0.5}], "sub": [{"alpha": 2}],
          "div": [{"rounding_mode": "floor"}, {"rounding_mode": "trunc"}]}


def _scal(v):
    return float(v) if v == "inf" else v


def gen_binary(name, rng):
    dts = probe_binary(name)
    out = []
    rhs_vals = "pos" if name in ("div", "true_divide", "floor_divide", "remainder", "fmod") else "randn"
    for dt in dts:
        # same shape, layouts on either side
        for shape in [[], [0], [4], [2, 3], [2, 1, 2, 2]]:
            pairs = [("contig", "contig"), ("T", "contig"), ("contig", "T"), ("step", "expand"), ("offset", "step")]
            for la, lb in (pairs if dt in ("float32", "float64", "int64") else [pairs[0], pick(rng, pairs[1:], 1)[0]]):
                a, b = In(shape, dt, la), In(shape, dt, lb, rhs_vals)
                if a.ok() and b.ok():
                    out.append(Sample(name, [a, b], second=(dt == "float64" and la == lb == "contig" and
                                                            len(shape) == 2)))
        for sa, sb in (BCAST if dt in ("float32", "float64", "int64", "bool") else pick(rng, BCAST, 3)):
            out.append(Sample(name, [In(sa, dt), In(sb, dt, vals=rhs_vals)]))
        # scalars and 0-dim tensors in the second position
        for sc in pick(rng, BIN_SCALARS, 4):
            out.append(Sample(name, [In([2, 3], dt), _scal(sc)]))
        out.append(Sample(name, [In([2, 3], dt), In([], dt, vals=rhs_vals)]))
        out.append(Sample(name, [In([], dt), In([2, 3], dt, vals=rhs_vals)]))
        # edge values on both sides
        out.append(Sample(name, [In([3, 4], dt, vals="edge"), In([3, 4], dt, vals="edge")]))
        out.append(Sample(name, [In([4, 3], dt, vals="edge"), In([3], dt, vals="randn")]))
        out.append(Sample(name, [In([5], dt, vals="edge"), 0]))
        for kw in BIN_KW.get(name, []):
            out.append(Sample(name, [In([2, 3], dt), In([2, 3], dt, vals=rhs_vals)], dict(kw)))
            out.append(Sample(name, [In([3, 4], dt, vals="edge"), In([4], dt, vals="edge")], dict(kw)))
    # mixed dtypes (type promotion)
    for da, db in [("int64", "float32"), ("float32", "float64"), ("bool", "int32"), ("uint8", "int8"),
                   ("float16", "bfloat16"), ("int32", "complex64"), ("float32", "int64")]:
        if da in dts and db in dts:
            out.append(Sample(name, [In([2, 3], da), In([2, 3], db, vals=rhs_vals)]))
            out.append(Sample(name, [In([2, 3], da), In([], db, vals=rhs_vals)]))
    # scalar in the first position (function form)
    if name in ("pow", "remainder", "add", "mul", "sub", "div", "maximum", "eq"):
        for dt in pick(rng, dts, 4):
            out.append(Sample(name, [2, In([2, 3], dt, vals=rhs_vals)]))
            out.append(Sample(name, [-1.5, In([3], dt, vals=rhs_vals)]))
    # in-place twin
    ip = name + "_"
    if has_method(ip):
        for dt in dts:
            ipforms = [([2, 3], "contig", [2, 3]), ([2, 3], "T", [3]), ([4], "step", []),
                       ([2, 3], "expand", [2, 3]), ([], "contig", []), ([1, 3], "contig", [2, 3])]
            for shape, la, sb in (ipforms if dt in ("float32", "float64", "int64") else pick(rng, ipforms, 3)):
                a = In(shape, dt, la)
                if a.ok():
                    out.append(Sample(ip, [a, In(sb, dt, vals=rhs_vals)], inplace=True))
            out.append(Sample(ip, [In([2, 3], dt), 2], inplace=True))
            out.append(Sample(ip, [In([2, 3], dt), 0.5], inplace=True))
            out.append(Sample(ip, [In([3, 4], dt, vals="edge"), In([3, 4], dt, vals="edge")], inplace=True))
        for da, db in [("int64", "float32"), ("float32", "float64"), ("bool", "int32")]:
            if da in dts and db in dts:
                out.append(Sample(ip, [In([2, 3], da), In([2, 3], db, vals=rhs_vals)], inplace=True))
    if name == "pow":
        for dt in [d for d in dts if d in ("float32", "float64")]:
            z = In([6], dt, fixed=[0.0, 0.0, 0.0, 2.0, -1.0, 0.0])
            e = In([6], dt, fixed=[0.0, 2.0, 0.5, 0.0, -2.0, -1.0])
            out.append(Sample("pow", [z, e], about="pow with base 0 and exponent 0 (gradient conventions)"))
            out.append(Sample("pow", [In([4], dt, fixed=[0.0, 1.0, -2.0, 0.0]), 0.0]))
            out.append(Sample("pow", [In([4], dt, fixed=[0.0, 1.0, -2.0, 0.0]), 2]))
            out.append(Sample("pow", [0.0, In([4], dt, fixed=[0.0, 1.0, -2.0, 0.5])]))
        for dt in [d for d in dts if d in INTS]:
            out.append(Sample("pow", [In([3], dt), -2]))
    return out


for _n in BINARY:
    op(_n, "binary", gen=lambda rng, n=_n: gen_binary(n, rng))


# ---- ternary / pointwise with extra operands
def gen_ternary(name, rng):
    out = []
    fl = ["float32", "float64", "float16", "bfloat16"]
    if name in ("clamp", "clamp_"):
        dts = probe_binary("clamp_min", scalar=1)
        for dt in dts:
            for kw in [{"min": -1}, {"max": 0.5}, {"min": -1.0, "max": 1.0}, {"min": 2, "max": 1}]:
                for lay in ["contig", "T"]:
                    out.append(Sample(name, [In([2, 3], dt, lay)], dict(kw), inplace=name.endswith("_")))
            out.append(Sample(name, [In([3, 4], dt, vals="edge")], {"min": -1, "max": 1}, inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt), In([3], dt), In([2, 1], dt)], inplace=name.endswith("_"),
                              about="clamp with tensor bounds"))
            out.append(Sample(name, [In([2, 3], dt)], {"min": In([], dt)}, inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt)], {"min": "nan"}, inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt)], {}, inplace=name.endswith("_")))
    elif name in ("clamp_min", "clamp_max", "clamp_min_", "clamp_max_"):
        dts = probe_binary("clamp_min", scalar=1)
        for dt in dts:
            for v in [0, -0.5, 1, In([], dt), In([3], dt)]:
                for lay in ["contig", "T", "step"]:
                    out.append(Sample(name, [In([2, 3], dt, lay), v], inplace=name.endswith("_")))
    elif name == "where":
        for dt in ALL:
            for sc, sx, sy in [([2, 3], [2, 3], [2, 3]), ([2, 1], [3], [2, 3]), ([], [2, 2], []),
                               ([0, 2], [0, 2], [1])]:
                out.append(Sample("where", [In(sc, "bool"), In(sx, dt), In(sy, dt)]))
            out.append(Sample("where", [In([2, 3], "bool", "T"), In([2, 3], dt, "step"), In([2, 3], dt, "expand")]))
            for s in [1, 0.5, True]:
                out.append(Sample("where", [In([2, 3], "bool"), In([2, 3], dt), s]))
                out.append(Sample("where", [In([2, 3], "bool"), s, In([2, 3], dt)]))
            out.append(Sample("where", [In([2, 3], "bool"), In([2, 3], dt, vals="edge"), In([2, 3], dt, vals="edge")]))
        out.append(Sample("where", [In([2, 3], "bool"), 1, 2.5]))
        out.append(Sample("where", [In([2, 3], "int64"), In([2, 3], "float32"), 0.0]))
    elif name in ("masked_fill", "masked_fill_"):
        for dt in ALL:
            for v in [0, 1.5, True, "-inf", In([], dt), In([], "float64")]:
                out.append(Sample(name, [In([2, 3], dt), In([2, 3], "bool"), v], inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([3], "bool"), 2], inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt), In([2, 3], "int64", vals="unit"), 2],
                              inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt), In([2, 3], "bool"), In([3], dt)], inplace=name.endswith("_")))
    elif name in ("lerp", "lerp_"):
        for dt in fl + COMPLEX:
            for w in [0.25, 0.75, In([], dt), In([2, 3], dt, vals="unit"), In([3], dt, vals="unit")]:
                for lay in ["contig", "T"]:
                    out.append(Sample(name, [In([2, 3], dt, lay), In([2, 3], dt), w], inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt, vals="edge"), In([3], dt, vals="edge"), 0.5],
                              inplace=name.endswith("_")))
    elif name in ("addcmul", "addcmul_", "addcdiv", "addcdiv_"):
        dts = [d for d in ALL if d != "bool"]
        for dt in dts:
            for kw in [{}, {"value": 2}, {"value": -0.5}]:
                for sa, s1, s2 in [([2, 3], [2, 3], [2, 3]), ([2, 3], [3], [2, 1]), ([], [], [])]:
                    out.append(Sample(name, [In(sa, dt), In(s1, dt), In(s2, dt, vals="pos")], dict(kw),
                                      inplace=name.endswith("_")))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([2, 3], dt, "step"), In([2, 3], dt, "expand", "pos")],
                              inplace=name.endswith("_")))
    return out


for _n in ["clamp", "clamp_", "clamp_min", "clamp_max", "clamp_min_", "clamp_max_", "where", "masked_fill",
           "masked_fill_", "lerp", "lerp_", "addcmul", "addcmul_", "addcdiv", "addcdiv_"]:
    op(_n, "ternary", gen=lambda rng, n=_n: gen_ternary(n, rng))


# ---- reductions
RED = ["sum", "mean", "prod", "var", "std", "amax", "amin", "max", "min", "argmax", "argmin", "all", "any",
       "logsumexp", "norm", "cumsum", "cumprod", "softmax", "log_softmax", "nansum", "count_nonzero"]
RSHAPES = [[], [0], [5], [2, 3], [3, 1, 2], [2, 0, 3], [2, 1, 2, 2]]


def gen_reduce(name, rng):
    out = []
    dts = probe_unary(name, {"dim": 0} if name in ("cumsum", "cumprod", "softmax", "log_softmax") else None)
    for dt in dts:
        for shape in RSHAPES:
            r = len(shape)
            forms = []
            if name in ("cumsum", "cumprod", "softmax", "log_softmax"):
                forms = [([d], {}) for d in range(-1, r)] if r else [([0], {})]
                if name in ("cumsum", "softmax", "log_softmax") and dt in ("float32",):
                    forms.append(([0], {"dtype": "float64"}))
            elif name in ("argmax", "argmin"):
                forms = [([], {})] + [([d], {}) for d in range(-r, r)][:2] + ([([0], {"keepdim": True})] if r else [])
            elif name in ("max", "min"):
                forms = [([], {})] + [([d], {}) for d in range(r)][:2] + ([([-1, True], {})] if r else [])
            elif name == "norm":
                forms = [([], {}), ([1], {}), (["inf"], {}), ([3], {}), ([0.5], {}), ([0], {}), (["-inf"], {})]
                if r:
                    forms += [([2, 0], {}), ([1, -1, True], {}), (["fro"], {})]
            elif name in ("var", "std"):
                forms = [([], {})] + ([([0], {}), ([[0, -1]], {"keepdim": True}), ([0], {"correction": 0}),
                                       ([None], {"unbiased": False}), ([-1], {"correction": 2})] if r else [])
            elif name == "count_nonzero":
                forms = [([], {})] + ([([0], {})] if r else [])
            elif name == "logsumexp":
                forms = [([0 if r else []], {})] + ([([-1], {"keepdim": True}), ([[]], {})] if r else [])
            else:
                forms = [([], {})] + ([([0], {}), ([-1], {"keepdim": True})] if r else [])
                if r >= 2:
                    forms.append(([[0, -1]], {}))
                if name in ("sum", "mean", "prod", "nansum") and dt in ("int32", "float16", "bool"):
                    forms.append(([], {"dtype": "float64" if name != "prod" else "int64"}))
            for fa, fk in forms:
                main = dt in ("float32", "float64", "int64")
                if not main and fa and rng.random() < 0.5:
                    continue
                lays = ["contig"] + (pick(rng, ["T", "step", "expand", "offset"], 1) if r >= 2 and main else [])
                for lay in lays:
                    i = In(shape, dt, lay)
                    if i.ok():
                        out.append(Sample(name, [i] + fa, dict(fk),
                                          second=(dt == "float64" and lay == "contig" and r == 2 and not fa)))
        # edge values and ties
        e = In([3, 4], dt, vals="edge")
        out.append(Sample(name, [e] + ([1] if name in ("cumsum", "cumprod", "softmax", "log_softmax") else [])))
        if name not in ("cumsum", "cumprod", "softmax", "log_softmax", "count_nonzero"):
            out.append(Sample(name, [In([3, 4], dt, vals="edge"), 1]))
            out.append(Sample(name, [In([3, 4], dt, vals="ties"), 1]))
            out.append(Sample(name, [In([2, 4], dt, fixed=[1] * 4 + [2] * 4) if dt != "bool" else
                                     In([2, 4], dt, vals="ties"), -1], about=name + " over all-equal rows"))
        if name in ("softmax", "log_softmax", "logsumexp") and dt in FLOATS:
            inf_row = In([3, 3], dt, fixed=[0.0, "inf", 1.0, "-inf", "-inf", "-inf", 1.0, "inf", "inf"])
            out.append(Sample(name, [inf_row, -1], about=name + " rows holding +inf / all -inf"))
            out.append(Sample(name, [inf_row, 0]))
    # errors: dim out of range
    out.append(Sample(name, [In([2, 3], dts[0] if dts else "float32"), 5]))
    return out


for _n in RED:
    op(_n, "reduce", gen=lambda rng, n=_n: gen_reduce(n, rng))


# ---- sort / topk
def gen_sort(name, rng):
    out = []
    dts = [d for d in ALL if d not in COMPLEX and
           supported(name, d, lambda d: ([torch.ones(2, 3, dtype=ALL_DT[d])] + ([1] if name == "topk" else []), {}))]
    for dt in dts:
        for shape in [[], [0], [6], [2, 3], [3, 1, 4]]:
            r = len(shape)
            for vk in ["randn", "ties", "edge"]:
                i = In(shape, dt, vals=vk)
                ties = vk != "randn" and r and shape[-1] > 1
                if name in ("sort", "argsort"):
                    for kw in [{}, {"descending": True}, {"stable": True}, {"stable": True, "descending": True}]:
                        a = [i] + ([0] if r == 3 and kw == {} else [])
                        un = None
                        if ties and not kw.get("stable"):
                            un = "unstable sort: the order of equal elements (their indices) is unspecified"
                        out.append(Sample(name, a, dict(kw), unspecified=un))
                else:   # topk
                    n = shape[-1] if r else 1
                    for k, kw in [(min(2, n), {}), (min(1, n), {"largest": False}), (n, {"sorted": True}),
                                  (n + 1, {})]:
                        un = TOPK_TIES if ties else None
                        out.append(Sample(name, [i, k], dict(kw), unspecified=un))
            for lay in ["T", "step", "expand"]:
                i = In([3, 4], dt, lay)
                if name == "topk":
                    out.append(Sample(name, [i, 2]))
                else:
                    out.append(Sample(name, [i], {"stable": True}))
    out.append(Sample(name, [In([2, 3], "float32"), 1, 5] if name == "topk" else [In([2, 3], "float32"), 4]))
    return out


for _n in ["sort", "argsort", "topk", "msort"][:3]:
    op(_n, "sort", gen=lambda rng, n=_n: gen_sort(n, rng))


# ---- indexing family
def idx(shape, hi, rng, dt="int64"):
    n = int(math.prod(shape))
    return In(shape, dt, fixed=[rng.randrange(hi) for _ in range(n)], grad=False)


def gen_index(name, rng):
    out = []
    dts = [d for d in ALL]
    for dt in dts:
        if name == "gather":
            for d in [0, 1, -1]:
                out.append(Sample(name, [In([3, 4], dt), d, idx([2, 3], 3 if d == 0 else 4, rng)]))
            out.append(Sample(name, [In([3, 4], dt, "T"), 1, idx([3, 2], 4, rng)]))
            out.append(Sample(name, [In([3, 4], dt), 0, In([1, 2], "int64", fixed=[3, 0], grad=False)]))
            out.append(Sample(name, [In([5], dt), 0, idx([0], 5, rng)]))
            out.append(Sample(name, [In([], dt), 0, In([], "int64", fixed=[0], grad=False)]))
        elif name == "index_select":
            for d in [0, 1]:
                out.append(Sample(name, [In([3, 4], dt), d, idx([5], 3 if d == 0 else 4, rng)]))
            out.append(Sample(name, [In([3, 4], dt, "step"), 1, idx([2], 4, rng)]))
            out.append(Sample(name, [In([3, 4], dt), 0, In([], "int64", fixed=[2], grad=False)]))
            out.append(Sample(name, [In([3, 4], dt), 0, In([1], "int64", fixed=[3], grad=False)]))
            out.append(Sample(name, [In([3, 4], dt), 0, In([2], "int32", fixed=[1, 0], grad=False)]))
        elif name in ("scatter", "scatter_", "scatter_add", "scatter_add_"):
            ip = name.endswith("_")
            un = "scatter with duplicate indices: which value wins is unspecified" if "add" not in name else None
            out.append(Sample(name, [In([3, 4], dt), 0, In([2, 4], "int64", fixed=[0, 1, 2, 0, 1, 2, 0, 1], grad=False),
                                     In([2, 4], dt)], inplace=ip))
            out.append(Sample(name, [In([3, 4], dt), 1, idx([3, 2], 4, rng), In([3, 3], dt)], inplace=ip, unspecified=un))
            out.append(Sample(name, [In([3, 4], dt, "T"), 1, In([3, 1], "int64", fixed=[3, 2, 0], grad=False),
                                     In([3, 2], dt)], inplace=ip))
            if "add" not in name:
                out.append(Sample(name, [In([3, 4], dt), 0, In([1, 3], "int64", fixed=[2, 0, 1], grad=False), 1.5],
                                  inplace=ip))
                out.append(Sample(name, [In([3, 4], dt), 0, In([1, 3], "int64", fixed=[2, 0, 1], grad=False)],
                                  {"value": 2}, inplace=ip))
            out.append(Sample(name, [In([3, 4], dt), 0, In([1, 2], "int64", fixed=[3, 0], grad=False),
                                     In([1, 2], dt)], inplace=ip))
        elif name in ("scatter_reduce", "scatter_reduce_"):
            if dt == "bool" or dt in COMPLEX:
                continue
            ip = name.endswith("_")
            for red in ["sum", "prod", "mean", "amax", "amin"]:
                for inc in [True, False]:
                    out.append(Sample(name, [In([3, 4], dt), 0, idx([4, 4], 3, rng), In([4, 4], dt), red],
                                      {"include_self": inc}, inplace=ip))
        elif name in ("index_put", "index_put_"):
            ip = name.endswith("_")
            out.append(Sample(name, [In([4, 3], dt), [In([2], "int64", fixed=[3, 1], grad=False)], In([2, 3], dt)],
                              inplace=ip))
            out.append(Sample(name, [In([4, 3], dt), [In([3], "int64", fixed=[0, 0, 2], grad=False)], In([3], dt)],
                              {"accumulate": True}, inplace=ip))
            out.append(Sample(name, [In([4, 3], dt), [In([3], "int64", fixed=[0, 0, 2], grad=False)], In([3], dt)],
                              inplace=ip, unspecified="index_put without accumulate and duplicate indices: "
                                                      "which value wins is unspecified"))
            out.append(Sample(name, [In([4, 3], dt), [In([4, 3], "bool", grad=False)], In([], dt)], inplace=ip))
            out.append(Sample(name, [In([4, 3], dt), [In([2], "int64", fixed=[0, 3], grad=False),
                                                      In([2], "int64", fixed=[2, 1], grad=False)], In([2], dt)],
                              inplace=ip))
        elif name == "masked_select":
            out.append(Sample(name, [In([2, 3], dt), In([2, 3], "bool", grad=False)]))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([3], "bool", grad=False)]))
            out.append(Sample(name, [In([], dt), In([2, 2], "bool", grad=False)]))
        elif name == "getitem":
            out.append(Sample(name, [In([3, 4], dt), [1]]))
    if name == "F.one_hot":
        for n in [[3], [2, 2], [0]]:
            out.append(Sample(name, [idx(n, 4, rng)]))
            out.append(Sample(name, [idx(n, 4, rng)], {"num_classes": 5}))
        out.append(Sample(name, [In([2], "int64", fixed=[0, 6], grad=False)], {"num_classes": 3}))
    if name == "F.embedding":
        for dt in FLOATS:
            out.append(Sample(name, [idx([2, 3], 5, rng), In([5, 3], dt)]))
            out.append(Sample(name, [idx([4], 5, rng), In([5, 2], dt)], {"padding_idx": 1}))
    return out


for _n in ["gather", "index_select", "scatter", "scatter_", "scatter_add", "scatter_add_", "scatter_reduce",
           "scatter_reduce_", "index_put", "index_put_", "masked_select", "F.one_hot", "F.embedding"]:
    op(_n, "index", gen=lambda rng, n=_n: gen_index(n, rng))


# ---- matmul family
def gen_matmul(name, rng):
    out = []
    dts = probe_binary("mm") if name != "dot" else ALL
    for dt in dts:
        if name == "matmul":
            for sa, sb in [([3], [3]), ([2, 3], [3]), ([3], [3, 2]), ([2, 3], [3, 4]), ([2, 2, 3], [3, 2]),
                           ([2, 1, 2, 3], [3, 3, 2]), ([0, 3], [3, 2]), ([2, 0], [0, 3]), ([2, 3], [2, 3])]:
                out.append(Sample(name, [In(sa, dt), In(sb, dt)]))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([3, 4], dt, "step")]))
            out.append(Sample(name, [In([3, 3], dt, vals="edge"), In([3, 2], dt)]))
        elif name == "mm":
            for sa, sb in [([2, 3], [3, 4]), ([1, 1], [1, 1]), ([0, 2], [2, 3]), ([2, 3], [4, 2]), ([3], [3, 1])]:
                out.append(Sample(name, [In(sa, dt), In(sb, dt)]))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([3, 4], dt, "expand")]))
            out.append(Sample(name, [In([2, 3], dt, "offset"), In([3, 4], dt, "T")]))
        elif name == "bmm":
            for sa, sb in [([2, 2, 3], [2, 3, 4]), ([1, 2, 3], [2, 3, 1]), ([0, 2, 3], [0, 3, 1])]:
                out.append(Sample(name, [In(sa, dt), In(sb, dt)]))
            out.append(Sample(name, [In([2, 2, 3], dt, "T"), In([2, 3, 2], dt, "step")]))
        elif name == "dot":
            for sa, sb in [([3], [3]), ([0], [0]), ([3], [4]), ([2, 2], [4])]:
                out.append(Sample(name, [In(sa, dt), In(sb, dt)]))
            out.append(Sample(name, [In([4], dt, "step"), In([4], dt, "offset")]))
        elif name == "outer":
            for sa, sb in [([3], [2]), ([0], [2]), ([1], [1])]:
                out.append(Sample(name, [In(sa, dt), In(sb, dt)]))
            out.append(Sample(name, [In([3], dt, "step"), In([3], dt, "expand")]))
        elif name == "addmm":
            for kw in [{}, {"beta": 0.5, "alpha": 2}, {"beta": 0}]:
                out.append(Sample(name, [In([2, 4], dt), In([2, 3], dt), In([3, 4], dt)], dict(kw)))
                out.append(Sample(name, [In([4], dt), In([2, 3], dt, "T"), In([3, 4], dt)], dict(kw)))
        elif name == "F.linear":
            if dt not in FLOATS + COMPLEX:
                continue
            out.append(Sample(name, [In([2, 3], dt), In([4, 3], dt)]))
            out.append(Sample(name, [In([2, 3], dt), In([4, 3], dt), In([4], dt)]))
            out.append(Sample(name, [In([5, 2, 3], dt), In([4, 3], dt), In([4], dt)]))
            out.append(Sample(name, [In([3], dt), In([4, 3], dt, "T"), In([], dt)]))
    if name in ("mm", "matmul", "dot"):
        out.append(Sample(name, [In([2, 3] if name != "dot" else [3], "float32"),
                                 In([3, 2] if name != "dot" else [3], "float64")]))
    return out


for _n in ["matmul", "mm", "bmm", "dot", "outer", "addmm", "F.linear"]:
    op(_n, "matmul", gen=lambda rng, n=_n: gen_matmul(n, rng))


# ---- attention (issue 27): einsum, baddbmm, F.scaled_dot_product_attention
EINSUM_EQS = [
    ("ij,jk->ik", [[2, 3], [3, 4]]), ("ij,jk", [[2, 3], [3, 4]]), ("ij,jk->ki", [[2, 3], [3, 4]]),
    ("bij,bjk->bik", [[2, 2, 3], [2, 3, 4]]), ("...ij,...jk", [[2, 1, 2, 3], [3, 3, 2]]),
    ("ii->i", [[3, 3]]), ("ii", [[3, 3]]), ("iij->ji", [[2, 2, 3]]), ("i,j->ij", [[3], [2]]),
    ("i,i->", [[4], [4]]), ("ij->", [[2, 3]]), ("ij->j", [[2, 3]]), ("ij->ji", [[2, 3]]),
    ("ji", [[2, 3]]), ("ij,jk,kl->il", [[2, 3], [3, 4], [4, 2]]),
    ("bhqd,bhkd->bhqk", [[1, 2, 3, 4], [2, 1, 5, 4]]), ("i...,i->...", [[3, 2, 2], [3]]),
    ("aab,bc->ca", [[2, 2, 3], [3, 2]]), ("Ab,bC", [[2, 3], [3, 4]]), ("ij,ij->ij", [[2, 3], [2, 3]]),
    ("", [[]]), ("i j , j k -> i k", [[2, 3], [3, 2]]), ("ij->...", [[2, 3]]),
    ("bn,anm,bm->ba", [[2, 3], [4, 3, 5], [2, 5]]), ("ijk,ikj->i", [[2, 3, 4], [2, 4, 3]]),
]
EINSUM_ERRORS = [
    ("ij,jk->ii", [[2, 3], [3, 4]]), ("ij,jk", [[2, 3]]), ("ij", [[2, 3], [2, 3]]), ("ij->k", [[2, 3]]),
    ("ijk", [[2, 3]]), ("ij,jk", [[2, 3], [4, 4]]), ("ii", [[2, 3]]), ("...i,...i", [[2, 3], [4, 3]]),
    ("i..j", [[2, 3]]), ("i...j...", [[2, 3]]), ("1i", [[2, 3]]), ("ij->i->j", [[2, 3]]),
]


def gen_attention(name, rng):
    out = []
    dts = ["float32", "float64"]
    if name == "einsum":
        for dt in dts:
            for eq, shapes in EINSUM_EQS:
                out.append(Sample(name, [eq] + [In(sh, dt) for sh in shapes]))
            out.append(Sample(name, ["ij,jk->ik", In([2, 3], dt, "T"), In([3, 4], dt, "step")]))
            out.append(Sample(name, ["bij,bjk->bik", In([2, 2, 3], dt, "offset"), In([2, 3, 2], dt, "expand")]))
            out.append(Sample(name, ["ij,jk->ik", In([2, 3], dt, vals="edge"), In([3, 2], dt)]))
        for eq, shapes in EINSUM_ERRORS:
            out.append(Sample(name, [eq] + [In(sh, "float64") for sh in shapes]))
        for dt in ["int64", "complex128"]:
            out.append(Sample(name, ["ij,jk->ik", In([2, 3], dt), In([3, 4], dt)]))
            out.append(Sample(name, ["bii->bi", In([2, 3, 3], dt)]))
        out.append(Sample(name, ["ij,jk", In([2, 3], "float32"), In([3, 2], "float64")]))
    elif name == "baddbmm":
        for dt in dts:
            for kw in [{}, {"beta": 0.5, "alpha": 2}, {"beta": 0}, {"alpha": 0}]:
                out.append(Sample(name, [In([2, 2, 4], dt), In([2, 2, 3], dt), In([2, 3, 4], dt)], dict(kw)))
            out.append(Sample(name, [In([4], dt), In([2, 2, 3], dt, "T"), In([2, 3, 4], dt)]))
            out.append(Sample(name, [In([2, 1, 4], dt), In([2, 2, 3], dt), In([2, 3, 4], dt, "step")],
                              {"beta": -1.5}))
            out.append(Sample(name, [In([2, 2, 2], dt, vals="edge"), In([2, 2, 3], dt), In([2, 3, 2], dt)],
                              {"beta": 0}))
            out.append(Sample(name, [In([0, 2, 2], dt), In([0, 2, 3], dt), In([0, 3, 2], dt)]))
        for a, b, c in [([2, 2, 4], [2, 2, 3], [3, 3, 4]), ([2, 2, 4], [2, 2, 3], [2, 4, 4]),
                        ([3, 2, 4], [2, 2, 3], [2, 3, 4]), ([2, 2, 4], [2, 3], [2, 3, 4])]:
            out.append(Sample(name, [In(a, "float64"), In(b, "float64"), In(c, "float64")]))
        out.append(Sample(name, [In([2, 2, 2], "int64"), In([2, 2, 3], "int64"), In([2, 3, 2], "int64")],
                          {"beta": 2, "alpha": 3}))
    elif name == "F.scaled_dot_product_attention":
        dead_row = [True, False, True, True, False] + [False] * 5 + [True, True, False, True, True]
        for dt in dts:
            q3, k3, v3 = In([2, 3, 4], dt), In([2, 5, 4], dt), In([2, 5, 3], dt)
            out.append(Sample(name, [q3, k3, v3]))
            out.append(Sample(name, [q3, k3, v3], {"scale": 0.3}))
            out.append(Sample(name, [q3, k3, v3], {"is_causal": True}))
            out.append(Sample(name, [In([1, 2, 4, 3], dt), In([1, 2, 4, 3], dt), In([1, 2, 4, 2], dt)],
                              {"is_causal": True, "scale": 0.7}))
            out.append(Sample(name, [q3, k3, v3],
                              {"attn_mask": In([3, 5], "bool", fixed=dead_row, grad=False)}))
            out.append(Sample(name, [q3, k3, v3],
                              {"attn_mask": In([1, 5], "bool", fixed=[True, False, True, True, False],
                                               grad=False)}))
            out.append(Sample(name, [In([2, 2, 3, 2], dt), In([2, 2, 4, 2], dt), In([2, 2, 4, 3], dt)],
                              {"attn_mask": In([2, 1, 3, 4], dt, grad=False)}))
            out.append(Sample(name, [In([2, 2, 3, 2], dt), In([2, 2, 4, 2], dt), In([2, 2, 4, 3], dt)],
                              {"attn_mask": In([3, 4], dt)}))
            out.append(Sample(name, [In([1, 4, 3, 2], dt), In([1, 2, 3, 2], dt), In([1, 2, 3, 2], dt)],
                              {"enable_gqa": True}))
            out.append(Sample(name, [In([4, 3], dt), In([2, 3], dt), In([2, 2], dt)], {"is_causal": True}))
            out.append(Sample(name, [In([2, 3, 4], dt, "T"), In([2, 5, 4], dt, "step"), In([2, 5, 3], dt, "offset")]))
            out.append(Sample(name, [q3, k3, v3], {"dropout_p": 1.0}))
            out.append(Sample(name, [q3, k3, v3], {"dropout_p": 0.0, "is_causal": False, "scale": None}))
        out.append(Sample(name, [In([2, 3, 4], "float64"), In([2, 5, 4], "float64"), In([2, 5, 3], "float64")],
                          {"attn_mask": In([3, 5], "bool", grad=False), "is_causal": True}))
        out.append(Sample(name, [In([2, 3, 4], "float64"), In([2, 5, 3], "float64"), In([2, 5, 3], "float64")]))
        out.append(Sample(name, [In([2, 3, 4], "float64"), In([2, 5, 4], "float64"), In([2, 5, 3], "float64")],
                          {"attn_mask": In([3, 4], "float64", grad=False)}))
    return out


for _n in ["einsum", "baddbmm", "F.scaled_dot_product_attention"]:
    op(_n, "attention", gen=lambda rng, n=_n: gen_attention(n, rng))

# ---- shape ops (views and copies)
def gen_shape(name, rng):
    out = []
    dts = ["float32", "float64", "int64", "bool", "complex64", "float16", "uint8"]
    for dt in dts:
        def S(*args, **kw):
            out.append(Sample(name, list(args), kw))
        x23 = lambda lay="contig": In([2, 3], dt, lay)
        x234 = lambda lay="contig": In([2, 3, 4], dt, lay)
        if name in ("view", "reshape"):
            for lay in ["contig", "T", "step", "expand", "offset"]:
                S(x234(lay), [6, 4]); S(x234(lay), [-1]); S(x234(lay), [2, -1, 2]); S(x234(lay), [24, 1])
            S(x23(), [-1, -1]); S(x23(), [4, 2]); S(In([0, 3], dt), [3, -1]); S(In([0, 3], dt), [-1])
            S(In([], dt), [1, 1]); S(In([], dt), []); S(In([1], dt), [])
        elif name == "flatten":
            for lay in ["contig", "T", "step"]:
                S(x234(lay)); S(x234(lay), 1); S(x234(lay), 0, 1); S(x234(lay), -2, -1)
            S(In([], dt)); S(In([3], dt)); S(x234(), 2, 1)
        elif name == "unflatten":
            S(x234(), 1, [3, 1]); S(x234(), -1, [2, -1]); S(x234(), 2, [-1, -1]); S(x234(), 1, [2, 2])
            S(x234("T"), -1, [1, 3]); S(In([0, 4], dt), 1, [2, 2]); S(In([4], dt), 0, [-1, 0])
        elif name in ("squeeze", "unsqueeze", "squeeze_", "unsqueeze_"):
            ip = name.endswith("_")
            y = In([2, 1, 3, 1], dt)
            if name.startswith("squeeze"):
                for a in [[], [1], [0], [-1], [[1, 3]] if not ip else [1], [4]]:
                    out.append(Sample(name, [In([2, 1, 3, 1], dt)] + a, inplace=ip))
                out.append(Sample(name, [In([], dt), 0], inplace=ip))
                out.append(Sample(name, [In([1, 3], dt, "T")], inplace=ip))
            else:
                for a in [0, 2, -1, 4, -5, 5]:
                    out.append(Sample(name, [In([2, 1, 3, 1], dt), a], inplace=ip))
                out.append(Sample(name, [In([], dt), 0], inplace=ip))
                out.append(Sample(name, [In([2, 3], dt, "step"), 1], inplace=ip))
        elif name == "permute":
            S(x234(), [2, 0, 1]); S(x234("T"), [1, 0, 2]); S(x234(), [-1, 0, 1]); S(x234(), [0, 0, 1])
            S(x234(), [0, 1]); S(In([], dt), []); S(x234("step"), [2, 1, 0])
        elif name in ("transpose", "transpose_"):
            ip = name.endswith("_")
            for a in [(0, 1), (-1, 0), (1, 1), (0, 3)]:
                out.append(Sample(name, [x234()] + list(a), inplace=ip))
            out.append(Sample(name, [In([], dt), 0, -1], inplace=ip))
            out.append(Sample(name, [x234("step"), 0, 2], inplace=ip))
        elif name in ("t", "t_"):
            ip = name.endswith("_")
            for i in [In([], dt), In([3], dt), x23(), x23("T"), x234()]:
                out.append(Sample(name, [i], inplace=ip))
        elif name in ("expand", "broadcast_to"):
            S(In([3, 1], dt), [3, 4]); S(In([3, 1], dt), [2, 3, 4]); S(In([3, 1], dt), [-1, 2]); S(In([3], dt), [2, -1])
            S(In([3, 1], dt), [4, 4]); S(In([3, 1], dt), [1]); S(In([], dt), [2, 2]); S(In([1, 3], dt, "T"), [2, 3, 2])
            S(In([3, 1], dt), [-1, -1, 3]); S(In([3, 1], dt), [0, 3, 1]); S(In([1, 3], dt), [3, 1, 3])
        elif name == "expand_as":
            S(In([3, 1], dt), In([2, 3, 4], dt, grad=False)); S(In([3], dt), In([3, 2], dt, grad=False))
        elif name == "movedim":
            S(x234(), 0, 2); S(x234(), [0, 1], [2, 0]); S(x234(), -1, 0); S(x234(), [0, 0], [1, 2]); S(x234(), 3, 0)
        elif name == "diagonal":
            for a in [[], [1], [-1], [0, 1, 2], [0, -1, 0], [5], [0, 0, 0]]:
                S(x234(), *a)
            S(In([3, 3], dt, "T"), 1)
        elif name == "narrow":
            S(x234(), 0, 1, 1); S(x234(), -1, 1, 2); S(x234(), 1, 3, 0); S(x234(), 1, 2, 2); S(x234("T"), 2, 0, 2)
            S(x234(), 1, -2, 1)
        elif name == "select":
            S(x234(), 0, 1); S(x234(), -1, -1); S(x234(), 1, 3); S(x234("step"), 2, 1); S(In([3], dt), 0, 0)
        elif name == "slice":
            S(x234(), 1, 0, 2, 1); S(x234(), 2, 1, None, 2); S(x234(), 0, -5, 10, 1); S(x234(), 1, 2, 1, 1)
            S(x234(), 2, None, None, 3); S(x234(), 0, 0, 1, 0)
        elif name in ("unbind", "split", "chunk"):
            if name == "unbind":
                S(x234()); S(x234(), 1); S(x234(), -1); S(In([0, 2], dt), 1); S(In([0, 2], dt), 0)
            elif name == "split":
                S(x234(), 2); S(x234(), 2, 2); S(x234(), [1, 2], 1); S(x234(), [1, 1], 1); S(x234(), 0, 1)
                S(x234("T"), 3, -1)
            else:
                S(x234(), 2); S(x234(), 3, 1); S(x234(), 5, 2); S(x234(), 0); S(In([0, 2], dt), 2)
        elif name in ("cat", "stack"):
            S([x23(), x23()]); S([x23(), x23("T")], 1); S([x23(), In([1, 3], dt)], 0); S([x23(), In([1, 3], dt)], 1)
            S([x23(), In([0], dt)]); S([In([], dt), In([], dt)]); S([x23()], -1); S([x23(), x23("step")], -1)
            S([x23(), x23()], 2)
        elif name == "flip":
            S(x234(), [0]); S(x234(), [0, 2]); S(x234("T"), [-1]); S(x234(), [1, 1]); S(In([], dt), [])
        elif name == "roll":
            S(x234(), 1); S(x234(), 2, 1); S(x234(), [1, -1], [0, 2]); S(x234("step"), -5, -1); S(In([0, 2], dt), 1, 1)
        elif name == "repeat":
            S(x23(), [2, 1]); S(x23(), [1, 2, 2]); S(In([], dt), [3]); S(x23(), [0, 2]); S(x23(), [2])
            S(x23("T"), [2, 2])
        elif name in ("tril", "triu"):
            for a in [[], [1], [-1], [5]]:
                S(In([3, 4], dt), *a)
            S(x234("T")); S(In([4], dt)); S(In([3, 3], dt, "step"), -2)
        elif name == "as_strided":
            S(In([3, 4], dt), [2, 2], [1, 2]); S(In([3, 4], dt), [2, 2], [4, 1], 1); S(In([3, 4], dt), [3, 3], [0, 1])
            S(In([3, 4], dt), [4, 4], [4, 1]); S(In([3, 4], dt), [2], [-1])
        elif name == "contiguous" or name == "clone":
            for lay in LAYOUTS:
                S(x234(lay))
    return out


SHAPE_OPS = ["view", "reshape", "flatten", "unflatten", "squeeze", "unsqueeze", "squeeze_", "unsqueeze_", "permute",
             "transpose", "transpose_", "t", "t_", "expand", "broadcast_to", "expand_as", "movedim", "diagonal",
             "narrow", "select", "slice", "unbind", "split", "chunk", "cat", "stack", "flip", "roll", "repeat", "tril",
             "triu", "as_strided"]
for _n in SHAPE_OPS:
    op(_n, "shape", gen=lambda rng, n=_n: gen_shape(n, rng))


# ---- NN functions and losses
def gen_nn(name, rng):
    out = []
    for dt in FLOATS:
        if name == "F.cross_entropy":
            for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 1}, {"label_smoothing": 0.1}]:
                out.append(Sample(name, [In([4, 3], dt), idx([4], 3, rng)], dict(kw)))
            out.append(Sample(name, [In([4, 3], dt), idx([4], 3, rng), In([3], dt, vals="pos")]))
            out.append(Sample(name, [In([2, 3, 2], dt), idx([2, 2], 3, rng)]))
            out.append(Sample(name, [In([3], dt), In([], "int64", fixed=[1], grad=False)]))
            out.append(Sample(name, [In([4, 3], dt), In([4, 3], dt, vals="pos", grad=False)]))
            out.append(Sample(name, [In([4, 3], dt, vals="edge"), idx([4], 3, rng)]))
            out.append(Sample(name, [In([2, 3], dt), In([2], "int64", fixed=[0, 3], grad=False)]))
        elif name == "F.nll_loss":
            for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}, {"ignore_index": 0}]:
                out.append(Sample(name, [In([4, 3], dt), idx([4], 3, rng)], dict(kw)))
            out.append(Sample(name, [In([4, 3], dt), idx([4], 3, rng), In([3], dt, vals="pos")]))
        elif name in ("F.mse_loss", "F.l1_loss"):
            for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}]:
                out.append(Sample(name, [In([2, 3], dt), In([2, 3], dt)], dict(kw)))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([2, 3], dt, "step")]))
            out.append(Sample(name, [In([3, 3], dt, vals="edge"), In([3, 3], dt)]))
            out.append(Sample(name, [In([0], dt), In([0], dt)]))
        elif name == "F.binary_cross_entropy":
            for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}]:
                out.append(Sample(name, [In([2, 3], dt, fixed=[0.25, 0.5, 0.75, 0.125, 0.875, 0.5]),
                                         In([2, 3], dt, vals="unit", grad=False)], dict(kw)))
            out.append(Sample(name, [In([3], dt, fixed=[0.0, 1.0, 0.5]), In([3], dt, fixed=[0.0, 1.0, 1.0])]))
        elif name == "F.binary_cross_entropy_with_logits":
            for kw in [{}, {"reduction": "sum"}, {"reduction": "none"}]:
                out.append(Sample(name, [In([2, 3], dt), In([2, 3], dt, fixed=[0, 1, 1, 0, 0.5, 1])], dict(kw)))
            out.append(Sample(name, [In([2, 3], dt), In([2, 3], dt, fixed=[0, 1, 1, 0, 0.5, 1])],
                              {"pos_weight": In([3], dt, vals="pos")}))
            out.append(Sample(name, [In([2, 3], dt, vals="edge"), In([2, 3], dt, fixed=[0, 1, 1, 0, 0.5, 1])]))
        elif name == "layer_norm":
            out.append(Sample(name, [In([2, 3], dt), [3]]))
            out.append(Sample(name, [In([2, 3, 4], dt), [3, 4], In([3, 4], dt), In([3, 4], dt)]))
            out.append(Sample(name, [In([2, 3], dt, "T"), [3], None, None, 1e-3]))
            out.append(Sample(name, [In([2, 3], dt, fixed=[1.0] * 6), [3]]))
            out.append(Sample(name, [In([2, 3], dt), [2]]))
        elif name == "F.dropout":
            out.append(Sample(name, [In([2, 3], dt)], {"p": 0.0}))
            out.append(Sample(name, [In([2, 3], dt)], {"p": 0.5, "training": False}))
    return out


for _n in ["F.cross_entropy", "F.nll_loss", "F.mse_loss", "F.l1_loss", "F.binary_cross_entropy",
           "F.binary_cross_entropy_with_logits", "layer_norm", "F.dropout"]:
    op(_n, "nn", gen=lambda rng, n=_n: gen_nn(n, rng))


# ---- convolutions (issue 27): F.conv1d/2d/3d, F.conv_transpose1d/2d/3d
def gen_conv(name, rng):
    out = []
    nd = int(name[-2])
    sp = {1: [7], 2: [5, 4], 3: [4, 3, 4]}[nd]
    k = {1: [3], 2: [3, 2], 3: [2, 2, 3]}[nd]
    tr = "transpose" in name
    for dt in FLOATS + COMPLEX + ["int64"]:
        def X(c, n=2, layout="contig", sp=sp):
            return In([n, c] + sp, dt, layout)

        def W(co, ci, kk=k):
            return In([co, ci] + kk, dt)
        if not tr:
            out.append(Sample(name, [X(3), W(4, 3), In([4], dt)]))
            if dt not in ("float64", "float32"):
                continue
            out.append(Sample(name, [X(3), W(2, 3)], {"stride": 2, "padding": 1}))
            out.append(Sample(name, [X(2), W(2, 2), In([2], dt)], {"dilation": 2, "padding": [1] * nd}))
            out.append(Sample(name, [X(4, 1), W(6, 2)], {"groups": 2, "stride": [1] * (nd - 1) + [2]}))
            out.append(Sample(name, [X(3), W(3, 1), In([3], dt)], {"groups": 3, "padding": 1}))
            out.append(Sample(name, [X(2), In([2, 2] + [2] * nd, dt)], {"padding": "same"}))
            out.append(Sample(name, [X(2), In([3, 2] + [3] * nd, dt)], {"padding": "same", "dilation": 2}))
            out.append(Sample(name, [X(2), W(2, 2)], {"padding": "valid"}))
            out.append(Sample(name, [In([3] + sp, dt), W(2, 3)]))                  # unbatched
            out.append(Sample(name, [X(3, layout="T"), W(2, 3)], {"padding": 1}))
            out.append(Sample(name, [X(3, n=0), W(2, 3)]))                          # empty batch
            out.append(Sample(name, [In([1, 2] + [1] * nd, dt), In([3, 2] + [1] * nd, dt)]))
            # errors: channels, kernel larger than the padded input, 'same' with a stride,
            # groups not dividing the weight
            out.append(Sample(name, [X(3), W(2, 2)]))
            out.append(Sample(name, [X(3), In([2, 3] + [9] * nd, dt)]))
            out.append(Sample(name, [X(2), W(2, 2)], {"padding": "same", "stride": 2}))
            out.append(Sample(name, [X(4), W(3, 2)], {"groups": 2}))
            out.append(Sample(name, [X(3), W(4, 3), In([5], dt)]))
        else:
            out.append(Sample(name, [X(3), W(3, 2), In([2], dt)]))
            if dt not in ("float64", "float32"):
                continue
            out.append(Sample(name, [X(2), W(2, 3)], {"stride": 2, "padding": 1, "output_padding": 1}))
            out.append(Sample(name, [X(4), W(4, 1), In([2], dt)], {"groups": 2, "dilation": 2}))
            out.append(Sample(name, [X(2), W(2, 2)], {"stride": 3, "output_padding": 2, "dilation": 2}))
            out.append(Sample(name, [In([2] + sp, dt), W(2, 3)]))                  # unbatched
            out.append(Sample(name, [X(2, layout="T"), W(2, 3)], {"stride": 2}))
            out.append(Sample(name, [X(3), W(2, 2)]))                               # channels
            out.append(Sample(name, [X(2), W(2, 2)], {"output_padding": 1}))       # output padding
    if not tr:
        out.append(Sample(name, [In([2, 3] + sp, "float32"), In([4, 3] + k, "float64")]))
        out.append(Sample(name, [In([2, 3] + sp, "bool"), In([4, 3] + k, "bool")]))
        out.append(Sample(name, [In([2, 3] + sp, "int32"), In([4, 3] + k, "int32")], {"dilation": 2}))
    return out


for _n in ["F.conv1d", "F.conv2d", "F.conv3d", "F.conv_transpose1d", "F.conv_transpose2d",
           "F.conv_transpose3d"]:
    op(_n, "conv", gen=lambda rng, n=_n: gen_conv(n, rng))
# ---- normalization family (issue 27): batch_norm (running statistics written in place),
# group_norm, instance_norm
def gen_norm(name, rng):
    out = []
    for dt in ["float32", "float64"]:
        rm = lambda c=3: In([c], dt, vals="unit", grad=False)
        rv = lambda c=3: In([c], dt, vals="pos", grad=False)
        if name == "F.batch_norm":
            out.append(Sample(name, [In([4, 3], dt), rm(), rv()], {"training": True}))
            out.append(Sample(name, [In([2, 3, 4], dt), rm(), rv(), In([3], dt), In([3], dt)],
                              {"training": True, "momentum": 0.3, "eps": 1e-3}))
            out.append(Sample(name, [In([2, 3, 2, 3], dt, "T"), rm(), rv()], {"training": True}))
            out.append(Sample(name, [In([2, 3, 4], dt), None, None, In([3], dt)], {"training": True}))
            out.append(Sample(name, [In([2, 3, 4], dt), rm(), rv(), In([3], dt), In([3], dt)]))
            out.append(Sample(name, [In([2, 3, 2, 2], dt, "step"), rm(), rv(), None, In([3], dt)]))
            out.append(Sample(name, [In([1, 3], dt), rm(), rv()], {"training": True}))
            out.append(Sample(name, [In([2, 3], dt), None, None]))
            out.append(Sample(name, [In([2, 3], dt), rm(4), rv(4)], {"training": True}))
        elif name == "F.group_norm":
            out.append(Sample(name, [In([2, 4, 3], dt), 2]))
            out.append(Sample(name, [In([2, 4, 3], dt), 2, In([4], dt), In([4], dt)]))
            out.append(Sample(name, [In([2, 6, 2, 2], dt, "T"), 3, In([6], dt), None, 1e-3]))
            out.append(Sample(name, [In([3, 2], dt), 1]))
            out.append(Sample(name, [In([2, 4, 3], dt), 3]))
        elif name == "F.instance_norm":
            out.append(Sample(name, [In([2, 3, 4], dt)]))
            out.append(Sample(name, [In([2, 3, 4], dt), rm(), rv(), In([3], dt), In([3], dt)],
                              {"use_input_stats": True, "momentum": 0.2}))
            out.append(Sample(name, [In([2, 3, 2, 2], dt), rm(), rv()], {"use_input_stats": False}))
            out.append(Sample(name, [In([2, 3, 1], dt)]))
            out.append(Sample(name, [In([2, 3, 4], dt)], {"use_input_stats": False}))
    return out


for _n in ["F.batch_norm", "F.group_norm", "F.instance_norm"]:
    op(_n, "norm", gen=lambda rng, n=_n: gen_norm(n, rng))


# ---- pooling family (issue 27)
def gen_pool(name, rng):
    out = []
    for dt in ["float32", "float64"]:
        img = lambda lay="contig", shape=(2, 2, 5, 6): In(list(shape), dt, lay)
        if name == "F.max_pool2d":
            out.append(Sample(name, [img(), 2]))
            out.append(Sample(name, [img("T"), [3, 2], [2, 1], 1], {"ceil_mode": True}))
            out.append(Sample(name, [img(), 2], {"stride": 1, "padding": 1, "dilation": 2}))
            out.append(Sample(name, [img("step", (2, 5, 6)), 3], {"return_indices": True}))
            out.append(Sample(name, [img(), 3, 2, 1, 1, True, True]))
            out.append(Sample(name, [In([1, 1, 2, 3], dt, vals="edge"), 2], {"ceil_mode": True}))
            out.append(Sample(name, [img(), 2, 1, 2]))
            out.append(Sample(name, [img(), 7]))
            out.append(Sample(name, [In([5, 6], dt), 2]))
        elif name == "F.max_pool1d":
            out.append(Sample(name, [In([2, 3, 7], dt), 3, 2, 1], {"ceil_mode": True}))
            out.append(Sample(name, [In([3, 7], dt, "T"), 2], {"dilation": 2, "return_indices": True}))
        elif name == "F.avg_pool2d":
            out.append(Sample(name, [img(), 2]))
            out.append(Sample(name, [img("T"), 3, 2, 1], {"ceil_mode": True}))
            out.append(Sample(name, [img(), 3, 2, 1, True, False]))
            out.append(Sample(name, [img("offset"), [2, 3], 1, [1, 1]], {"divisor_override": 4}))
            out.append(Sample(name, [img(), 2], {"divisor_override": 0}))
            out.append(Sample(name, [img(), 2, 1, 2]))
        elif name == "F.avg_pool1d":
            out.append(Sample(name, [In([2, 3, 7], dt), 3, 2, 1, True, False]))
            out.append(Sample(name, [In([3, 7], dt, "step"), 2]))
        elif name == "F.adaptive_avg_pool2d":
            out.append(Sample(name, [img(), [3, 4]]))
            out.append(Sample(name, [img("T"), 2]))
            out.append(Sample(name, [img(), [7, 8]]))
        elif name == "F.adaptive_avg_pool1d":
            out.append(Sample(name, [In([2, 3, 7], dt), 3]))
        elif name == "F.adaptive_max_pool2d":
            out.append(Sample(name, [img(), [3, 4]]))
            out.append(Sample(name, [img("T"), 2], {"return_indices": True}))
        elif name == "F.max_unpool2d":
            # the picks of a 2x2 max pooling of [.., 4, 6] planes: one position per window
            picks = [(2 * i + (i + j) % 2) * 6 + 2 * j + j % 2 for i in range(2) for j in range(3)]
            ix = lambda: In([2, 2, 2, 3], "int64", fixed=picks * 4, grad=False)
            out.append(Sample(name, [In([2, 2, 2, 3], dt), ix(), 2]))
            out.append(Sample(name, [In([2, 2, 2, 3], dt), ix(), 2], {"output_size": [5, 7]}))
            out.append(Sample(name, [In([2, 2, 2, 3], dt), ix(), [2, 3], [2, 2]]))
    return out


for _n in ["F.max_pool2d", "F.max_pool1d", "F.avg_pool2d", "F.avg_pool1d", "F.adaptive_avg_pool2d",
           "F.adaptive_avg_pool1d", "F.adaptive_max_pool2d", "F.max_unpool2d"]:
    op(_n, "pool", gen=lambda rng, n=_n: gen_pool(n, rng))


# ---- resampling family (issue 27): F.pad, F.unfold / F.fold, F.interpolate, F.pixel_shuffle
def gen_resample(name, rng):
    out = []
    for dt in ["float32", "float64"]:
        img = lambda lay="contig", shape=(2, 2, 4, 5): In(list(shape), dt, lay)
        if name == "F.pad":
            out.append(Sample(name, [img(), [1, 2]]))
            out.append(Sample(name, [img("T"), [1, 0, 2, 1]], {"value": 0.5}))
            out.append(Sample(name, [img(), [-1, 2, 1, -1, 0, 1, 1, 0]]))
            out.append(Sample(name, [img(), [2, 1, 3, 1]], {"mode": "reflect"}))
            out.append(Sample(name, [In([2, 5], dt, "step"), [-1, 3]], {"mode": "reflect"}))
            out.append(Sample(name, [In([1, 2, 2, 3, 3], dt), [1, 2, 2, 0, 1, 1]], {"mode": "replicate"}))
            out.append(Sample(name, [img("offset"), [1, 1]], {"mode": "replicate"}))
            out.append(Sample(name, [img(), [2, 1, -1, 3]], {"mode": "circular"}))
            out.append(Sample(name, [In([2, 3, 4], dt), [-1, 2]], {"mode": "circular"}))
            out.append(Sample(name, [img(), [5, 1]], {"mode": "reflect"}))
            out.append(Sample(name, [img(), [6, 1]], {"mode": "circular"}))
            out.append(Sample(name, [img(), [1, 1]], {"mode": "reflect", "value": 1.0}))
            out.append(Sample(name, [img(), [1, 1, 1, 1, 1, 1, 1, 1]], {"mode": "replicate"}))
            out.append(Sample(name, [img(), [1, 2, 3]]))
            out.append(Sample(name, [img(), [-3, -3]]))
        elif name == "F.unfold":
            out.append(Sample(name, [img(), [2, 3]]))
            out.append(Sample(name, [img("T"), 2], {"dilation": [2, 1], "padding": 1, "stride": [2, 1]}))
            out.append(Sample(name, [In([3, 4, 4], dt), 3, 1, 1, 2]))
            out.append(Sample(name, [img(), 6]))
            out.append(Sample(name, [In([0, 2, 4, 5], dt), 2]))
        elif name == "F.fold":
            out.append(Sample(name, [In([2, 8, 12], dt), [4, 5], 2]))
            out.append(Sample(name, [In([1, 12, 6], dt, "T"), [4, 5], 2, [2, 1], 1, 2]))
            out.append(Sample(name, [In([8, 12], dt), [4, 5], 2]))
            out.append(Sample(name, [In([1, 7, 12], dt), [4, 5], 2]))
            out.append(Sample(name, [In([1, 8, 11], dt), [4, 5], 2]))
        elif name == "F.interpolate":
            out.append(Sample(name, [img()], {"scale_factor": 2}))
            out.append(Sample(name, [In([2, 3, 5], dt)], {"size": 7}))
            out.append(Sample(name, [In([1, 2, 3, 4, 5], dt)], {"size": [2, 5, 3]}))
            out.append(Sample(name, [img("T")], {"scale_factor": [1.5, 1.7], "mode": "bilinear"}))
            out.append(Sample(name, [img()], {"size": [7, 3], "mode": "bilinear", "align_corners": True}))
            out.append(Sample(name, [img("step")], {"size": [3, 8], "mode": "bilinear", "align_corners": False}))
            out.append(Sample(name, [In([2, 3, 5], dt)], {"size": 8, "mode": "linear"}))
            out.append(Sample(name, [In([1, 1, 2, 3, 4], dt)], {"scale_factor": 2, "mode": "trilinear",
                                                                 "align_corners": True}))
            out.append(Sample(name, [img()], {"scale_factor": 0.6, "mode": "bilinear",
                                              "recompute_scale_factor": True}))
            out.append(Sample(name, [img()], {"scale_factor": 2.5}))
            out.append(Sample(name, [img()], {"size": 3, "scale_factor": 2}))
            out.append(Sample(name, [img()]))
            out.append(Sample(name, [img()], {"size": 3, "align_corners": True}))
            out.append(Sample(name, [In([2, 3, 5], dt)], {"size": 4, "mode": "bilinear"}))
            out.append(Sample(name, [img()], {"size": [3, 4, 5]}))
            out.append(Sample(name, [img()], {"scale_factor": 0.1}))
        elif name == "F.pixel_shuffle":
            out.append(Sample(name, [In([2, 8, 2, 3], dt), 2]))
            out.append(Sample(name, [In([1, 2, 9, 2, 1], dt, "T"), 3]))
            out.append(Sample(name, [In([5, 2, 2], dt), 2]))
            out.append(Sample(name, [In([4, 2], dt), 2]))
        elif name == "F.pixel_unshuffle":
            out.append(Sample(name, [In([2, 2, 4, 6], dt), 2]))
            out.append(Sample(name, [In([2, 3, 4], dt), 2]))
    for dt in ["int64", "bool"]:
        if name == "F.pad":
            out.append(Sample(name, [In([2, 3], dt), [1, 2]], {"value": 1}))
            out.append(Sample(name, [In([2, 3], dt), [1, 2]], {"mode": "reflect"}))
            out.append(Sample(name, [In([2, 3], dt), [1, 2]], {"mode": "circular"}))
        elif name == "F.unfold":
            out.append(Sample(name, [In([1, 2, 3, 3], dt), 2]))
        elif name == "F.interpolate":
            out.append(Sample(name, [In([1, 2, 3, 3], dt)], {"scale_factor": 2}))
        elif name == "F.pixel_shuffle":
            out.append(Sample(name, [In([1, 4, 2, 2], dt), 2]))
    return out


for _n in ["F.pad", "F.unfold", "F.fold", "F.interpolate", "F.pixel_shuffle", "F.pixel_unshuffle"]:
    op(_n, "resample", gen=lambda rng, n=_n: gen_resample(n, rng))


# ---- creation, filling, copying, casting
CAST_UB = ("float -> integer cast of nan, inf, a negative value into uint8 or an out-of-range value: undefined "
           "behaviour in C++, PyTorch's result is platform-dependent")

# ---- nn layouts family (issue 27, session 17): channels-last inputs (output strides and,
# through `autograd.grad` w.r.t. the input itself, gradient strides), integer pools (every
# integer dtype, bool, the refusals), windows without a tap inside the input, convolutions
# without input channels or batch
def gen_nn_layouts(_name, rng):
    out = []
    S = lambda op, args, kw=None, **k: out.append(Sample(op, args, kw, input_grads=True, **k))
    for dt in ["float32", "float64"]:
        cl = lambda shape, dt=dt: In(shape, dt, "cl")
        v = lambda shape, dt=dt, **k: In(shape, dt, **k)
        # convolutions: a channels-last input, weight, or both
        S("F.conv2d", [cl([2, 3, 5, 4]), v([4, 3, 3, 2]), v([4])])
        S("F.conv2d", [v([2, 3, 5, 4]), cl([4, 3, 3, 2])])
        S("F.conv2d", [cl([2, 3, 5, 4]), cl([4, 3, 3, 2]), v([4])], {"stride": 2, "padding": 1})
        S("F.conv2d", [cl([2, 3, 5, 4]), v([3, 1, 3, 3])], {"groups": 3, "padding": 1})
        S("F.conv3d", [cl([2, 3, 4, 3, 4]), v([2, 3, 2, 2, 2]), v([2])])
        S("F.conv_transpose2d", [cl([2, 3, 4, 3]), v([3, 2, 2, 2]), v([2])], {"stride": 2})
        # normalization
        rm = lambda c=3: In([c], dt, vals="unit", grad=False)
        rvv = lambda c=3: In([c], dt, vals="pos", grad=False)
        S("F.batch_norm", [cl([2, 3, 4, 5]), rm(), rvv(), v([3]), v([3])], {"training": True})
        S("F.batch_norm", [cl([2, 3, 4, 5]), rm(), rvv(), v([3]), v([3])])
        S("F.batch_norm", [cl([2, 3, 2, 3, 2]), None, None], {"training": True})
        S("F.group_norm", [cl([2, 6, 3, 4]), 3, v([6]), v([6])])
        S("F.group_norm", [cl([2, 3, 4, 5]), 1])
        S("F.instance_norm", [cl([2, 3, 4, 5])])
        S("layer_norm", [cl([2, 3, 4, 5]), [5], v([5]), v([5])])
        S("layer_norm", [cl([2, 3, 4, 5]), [3, 4, 5]])
        # pools
        S("F.max_pool2d", [cl([2, 3, 5, 6]), 2])
        S("F.max_pool2d", [cl([2, 3, 5, 6]), 3, 2, 1], {"return_indices": True})
        S("F.max_pool2d", [cl([2, 3, 5, 6]), 2], {"stride": 1, "padding": 1, "dilation": 2})
        S("F.avg_pool2d", [cl([2, 3, 5, 6]), 2])
        S("F.avg_pool2d", [cl([2, 3, 5, 6]), 3, 2, 1], {"ceil_mode": True, "count_include_pad": False})
        S("F.adaptive_avg_pool2d", [cl([2, 3, 5, 6]), [3, 2]])
        S("F.adaptive_max_pool2d", [cl([2, 3, 5, 6]), [2, 4]], {"return_indices": True})
        S("F.max_pool1d", [cl([2, 3, 7]), 2])
        # windows without a tap inside the input (all taps in the padding): -inf at the index
        # of the first taps at or after 0; in the plane here (torch writes the gradient of
        # an index past the plane out of bounds: those are recorded without a backward)
        S("F.max_pool2d", [v([1, 2, 4, 1]), [1, 2], [2, 1], [0, 1], [1, 2]], {"return_indices": True})
        S("F.max_pool2d", [v([1, 1, 2, 2]), [1, 2], 1, [0, 1], [1, 3]], {"return_indices": True},
          grad=False)
        S("F.max_pool1d", [v([1, 2, 1]), 2, 1, 1, 2], {"return_indices": True}, grad=False)
        S("F.max_pool1d", [v([2, 1]), 2, 2, 1, 3], {"ceil_mode": True, "return_indices": True},
          grad=False)
        # convolutions without input channels (torch: no output channels either, whatever
        # the weight; the bias gradient zeros) or without a batch
        S("F.conv1d", [v([2, 0, 5]), v([3, 0, 2]), v([3])])
        S("F.conv1d", [v([2, 0, 5]), v([4, 0, 2]), v([4])], {"groups": 2})
        S("F.conv1d", [v([2, 0, 5]), v([3, 0, 2])], {"stride": 2, "padding": 1, "dilation": 2})
        S("F.conv2d", [v([2, 0, 5, 5]), v([3, 0, 2, 2]), v([3])])
        S("F.conv3d", [v([2, 0, 3, 3, 3]), v([3, 0, 2, 2, 2])])
        S("F.conv2d", [v([0, 3, 5, 5]), v([4, 3, 2, 2]), v([4])])
        S("F.conv1d", [v([0, 0, 5]), v([3, 0, 2]), v([3])])
        S("F.conv_transpose2d", [v([0, 3, 5, 5]), v([3, 4, 2, 2]), v([4])])
        S("F.conv_transpose1d", [v([2, 0, 5]), v([0, 3, 2]), v([3])])        # refused
        S("F.conv1d", [v([2, 3, 5]), v([0, 3, 2])])                           # refused
    # integer (and bool) pools: what each pool accepts, and PyTorch's refusals
    for dt in ["bool"] + INTS:
        v = lambda shape, dt=dt, **k: In(shape, dt, **k)
        out.append(Sample("F.max_pool2d", [v([2, 2, 5, 6]), 2]))
        out.append(Sample("F.max_pool2d", [v([2, 2, 5, 6]), 3, 2, 1], {"return_indices": True}))
        out.append(Sample("F.max_pool2d", [v([2, 2, 5, 6], layout="cl"), 2], {"ceil_mode": True}))
        out.append(Sample("F.max_pool2d", [v([1, 2, 4, 1]), [1, 2], [2, 1], [0, 1], [1, 2]],
                          {"return_indices": True}))
        out.append(Sample("F.max_pool1d", [v([2, 3, 7]), 3, 2, 1]))
        out.append(Sample("F.max_pool1d", [v([2, 3, 7]), 3, 2, 1], {"return_indices": True}))
        out.append(Sample("F.avg_pool2d", [v([2, 2, 5, 6]), 2]))
        out.append(Sample("F.avg_pool2d", [v([2, 2, 5, 6]), 3, 2, 1], {"count_include_pad": False}))
        out.append(Sample("F.avg_pool2d", [v([2, 2, 5, 6]), 2], {"divisor_override": 3}))
        out.append(Sample("F.avg_pool1d", [v([2, 3, 7]), 3, 2, 1]))
        out.append(Sample("F.adaptive_avg_pool2d", [v([2, 2, 5, 6]), [3, 4]]))
        out.append(Sample("F.adaptive_avg_pool1d", [v([2, 3, 7]), 3]))
        out.append(Sample("F.adaptive_max_pool2d", [v([2, 2, 5, 6]), [3, 4]]))
        out.append(Sample("F.adaptive_max_pool2d", [v([2, 2, 5, 6]), [3, 4]], {"return_indices": True}))
        picks = [(2 * i + (i + j) % 2) * 6 + 2 * j + j % 2 for i in range(2) for j in range(3)]
        out.append(Sample("F.max_unpool2d", [v([2, 2, 2, 3]),
                                             In([2, 2, 2, 3], "int64", fixed=picks * 4, grad=False), 2]))
    return out


op("nn_layouts", "nn_layouts", gen=lambda rng: gen_nn_layouts("nn_layouts", rng))


def gen_misc(name, rng):
    out = []
    if name in ("zeros", "ones", "empty"):
        for dt in ALL:
            for sh in [[], [0], [2, 3]]:
                out.append(Sample(name, [sh], {"dtype": dt}, grad=False))
        out.append(Sample(name, [[2]], grad=False))
        out.append(Sample(name, [[-1, 2]], grad=False))
    elif name == "full":
        for dt in ALL:
            out.append(Sample(name, [[2, 2], 1], {"dtype": dt}, grad=False))
        for v in [1, 1.5, True, "nan"]:
            out.append(Sample(name, [[2], v], grad=False))
    elif name == "arange":
        for a in [[5], [1, 4], [0, 1, 0.25], [1.0, 2.5], [5, 0, -2], [0, 5, 0], [0, 5, -1], [0.0, 1.0, 0.3]]:
            out.append(Sample(name, a, grad=False))
            out.append(Sample(name, a, {"dtype": "float64"}, grad=False))
        for dt in ALL[1:]:
            out.append(Sample(name, [4], {"dtype": dt}, grad=False))
    elif name == "linspace":
        for a in [[0, 1, 5], [1.0, -1.0, 4], [0, 1, 1], [0, 1, 0], [0, 10, 4]]:
            out.append(Sample(name, a, grad=False))
            out.append(Sample(name, a, {"dtype": "float64"}, grad=False))
            out.append(Sample(name, a, {"dtype": "int64"}, grad=False))
    elif name == "eye":
        for a in [[3], [0], [1]]:
            for dt in ["float32", "int64", "bool", "float64"]:
                out.append(Sample(name, a, {"dtype": dt}, grad=False))
    elif name in ("zeros_like", "ones_like", "empty_like", "full_like"):
        for dt in ALL:
            for lay in ["contig", "T", "step", "expand"]:
                a = [In([2, 3], dt, lay)] + ([2] if name == "full_like" else [])
                out.append(Sample(name, a))
            out.append(Sample(name, [In([2, 3], dt)] + ([2] if name == "full_like" else []), {"dtype": "float64"}))
    elif name in ("fill_", "zero_"):
        for dt in ALL:
            for lay in ["contig", "T", "step", "expand", "offset"]:
                a = [In([2, 3], dt, lay)] + ([1.5] if name == "fill_" else [])
                out.append(Sample(name, a, inplace=True))
            if name == "fill_":
                for v in [True, -1, "nan", 300]:
                    out.append(Sample(name, [In([3], dt), v], inplace=True))
                out.append(Sample(name, [In([3], dt), In([], dt)], inplace=True))
                out.append(Sample(name, [In([3], dt), In([1], dt)], inplace=True))
    elif name == "copy_":
        for dt in ALL:
            for src_dt in pick(rng, ALL, 4) + [dt]:
                un = CAST_UB if dt == "uint8" and src_dt in FLOATS + COMPLEX else None
                out.append(Sample(name, [In([2, 3], dt), In([2, 3], src_dt)], inplace=True, unspecified=un))
            out.append(Sample(name, [In([2, 3], dt, "T"), In([3], dt)], inplace=True))
            out.append(Sample(name, [In([2, 3], dt, "expand"), In([2, 3], dt)], inplace=True))
            out.append(Sample(name, [In([2, 3], dt), In([3, 2], dt)], inplace=True))
    elif name in ("to", "type_as"):
        for dt in ALL:
            for dst in ALL:
                vk = "edge"
                un = None
                if dst in INTS and dt in FLOATS + COMPLEX:
                    un = CAST_UB
                out.append(Sample(name, [In([3, 3], dt, vals=vk), dst if name == "to" else In([], dst)],
                                  unspecified=un))
                if dt != dst and rng.random() < 0.3:
                    un = CAST_UB if dst == "uint8" and dt in FLOATS + COMPLEX else None
                    out.append(Sample(name, [In([2, 3], dt, "T"), dst if name == "to" else In([], dst)],
                                      unspecified=un))
            out.append(Sample(name, [In([2, 3], dt), dt if name == "to" else In([], dt)]))
    elif name in ("equal", "allclose", "isclose", "numel", "is_contiguous", "dim", "item"):
        for dt in ["float32", "int64", "bool", "float64"]:
            for lay in ["contig", "T"]:
                if name in ("equal", "allclose", "isclose"):
                    out.append(Sample(name, [In([2, 3], dt, lay), In([2, 3], dt)], grad=False))
                    out.append(Sample(name, [In([2, 3], dt, lay, vals="edge"), In([2, 3], dt, lay, vals="edge")],
                                      grad=False))
                    out.append(Sample(name, [In([2, 3], dt), In([3], dt)], grad=False))
                elif name == "item":
                    out.append(Sample(name, [In([], dt)], grad=False))
                    out.append(Sample(name, [In([2], dt)], grad=False))
                else:
                    out.append(Sample(name, [In([2, 3], dt, lay)], grad=False))
                    out.append(Sample(name, [In([0, 3], dt, lay)], grad=False))
    return out


for _n in ["zeros", "ones", "full", "arange", "linspace", "eye", "zeros_like", "ones_like", "full_like", "fill_",
           "zero_", "copy_", "to", "type_as", "equal", "allclose", "isclose", "numel", "is_contiguous", "dim", "item"]:
    op(_n, "misc", gen=lambda rng, n=_n: gen_misc(n, rng))


# ---- basic and advanced indexing, storage-level ops
def gen_store(name, rng):
    out = []
    for dt in ["float32", "float64", "int64", "bool", "float16", "uint8", "complex64"]:
        x = lambda lay="contig": In([3, 4], dt, lay)
        if name == "getitem":
            for ix in [(1,), (-1,), (slice(None), 2), (slice(1, None, 2),), (Ellipsis, None, 1), (None,),
                       (slice(None, None, -1),), (5,), (0, 0, 0), (Ellipsis, slice(2, 1))]:
                for lay in ["contig", "T"]:
                    out.append(Sample(name, [x(lay), ix]))
            out.append(Sample(name, [x(), (In([2], "int64", fixed=[2, 0], grad=False),)]))
            out.append(Sample(name, [x(), (slice(None), In([3], "int64", fixed=[3, -1, 0], grad=False))]))
            out.append(Sample(name, [x(), (In([3, 4], "bool", grad=False),)]))
            out.append(Sample(name, [x("step"), (In([2], "int64", fixed=[1, 1], grad=False), 0)]))
            out.append(Sample(name, [x(), (In([1], "int64", fixed=[3], grad=False),)]))
            out.append(Sample(name, [In([], dt), (None,)]))
            out.append(Sample(name, [In([], dt), (Ellipsis,)]))
        elif name == "setitem":
            for ix, v in [((1,), 2), ((slice(None), 2), 0.5), ((0,), In([4], dt)), ((Ellipsis, 1), In([], dt)),
                          ((In([2], "int64", fixed=[2, 0], grad=False),), 1),
                          ((In([3, 4], "bool", grad=False),), In([], dt)), ((1,), In([3], dt))]:
                for lay in ["contig", "T", "expand"]:
                    out.append(Sample(name, [x(lay), ix, v], inplace=True))
        elif name == "_unsafe_view":
            out.append(Sample(name, [In([2, 3], dt), [3, 2]]))
            out.append(Sample(name, [In([2, 3], dt), [-1]]))
            out.append(Sample(name, [In([2, 3], dt), [4, 2]]))
        elif name == "sum_to_size":
            for sz in [[1, 4], [4], [3, 1], [1], [2, 4]]:
                out.append(Sample(name, [x(), sz]))
        elif name in ("resize_", "resize_as_"):
            for sz in [[2, 2], [4, 4], [0], [12], []]:
                a = In([3, 4], dt, grad=False)
                out.append(Sample(name, [a, sz if name == "resize_" else In(sz, dt, grad=False)], inplace=True,
                                  grad=False))
            out.append(Sample(name, [In([3, 4], dt, "T", grad=False), [2, 2] if name == "resize_" else
                                     In([2, 2], dt, grad=False)], grad=False))
        elif name in ("empty", "empty_like"):
            if name == "empty":
                out.append(Sample(name, [[2, 3]], {"dtype": dt}, grad=False))
            else:
                for lay in ["contig", "T", "expand"]:
                    out.append(Sample(name, [x(lay)], grad=False))
    return out


for _n in ["getitem", "setitem", "_unsafe_view", "sum_to_size", "resize_", "resize_as_", "empty", "empty_like"]:
    op(_n, "store", gen=lambda rng, n=_n: gen_store(n, rng))


# ----------------------------------------------------------------------------- driver

def safe(name):
    """Case-name stem of an op: F.gelu -> f_gelu, add_ -> add_ip (unique per op name)."""
    stem = "".join(c if c.isalnum() else "_" for c in name.lower()).strip("_")
    return stem + "_ip" if name.endswith("_") else stem


def dumps(module, cases):
    j = lambda v: json.dumps(v, allow_nan=False, ensure_ascii=True, separators=(",", ":"))
    lines = ['{"format":1,"module":%s,"torch":%s,"cases":[' % (j(module), j(TORCH_VERSION))]
    for i, c in enumerate(cases):
        lines.append(j(c) + ("," if i + 1 < len(cases) else ""))
    lines.append("]}")
    return "\n".join(lines) + "\n"


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--only", help="comma-separated families")
    ap.add_argument("--out", default=os.path.join(REPO, "grad_tests", "fixtures", "sweep"))
    ap.add_argument("--plain", help="also write the uncompressed .json files here (for the replayer)")
    ap.add_argument("--stats", default=os.path.join(HERE, "stats.json"))
    opts = ap.parse_args(argv)
    torch.set_num_threads(1)
    fams = sorted({v["family"] for v in OPS.values()})
    if opts.only:
        fams = [f for f in fams if f in opts.only.split(",")]
    t0 = time.time()
    stats = {"torch": torch.__version__, "families": {}, "ops": {}, "dropped": [], "not_a_call": []}
    failed = False
    for fam in fams:
        cases = []
        for name, spec in OPS.items():
            if spec["family"] != fam:
                continue
            rng = random.Random(zlib.crc32(name.encode()))
            samples = spec["gen"](rng)
            st = stats["ops"].setdefault(name, {"family": fam, "samples": 0, "variants": {}, "dropped": 0,
                                                "unspecified": 0})
            for i, smp in enumerate(samples):
                cname = f"sw_{safe(name)}_{i:04d}"
                try:
                    c = record_sample(cname, smp)
                except NotACall as e:
                    st["not_a_call"] = st.get("not_a_call", 0) + 1
                    stats["not_a_call"].append(f"{cname} {smp.op}: {str(e)[:160]}")
                    torch.set_grad_enabled(True)
                    continue
                except Exception as e:   # noqa: BLE001 - listed in stats, never silent
                    if isinstance(e, R.RecordError) and str(e).startswith(UNMAPPED):
                        raise            # a torch message without a kind: map it, never guess
                    st["dropped"] += 1
                    stats["dropped"].append(f"{cname} {smp.op}: {type(e).__name__}: {str(e)[:200]}")
                    torch.set_grad_enabled(True)
                    continue
                cases.append(c)
                st["samples"] += 1
                st["variants"][smp.op] = st["variants"].get(smp.op, 0) + 1
                st["unspecified"] += "unspecified" in c
        text = dumps("sweep_" + fam, cases)
        target = os.path.join(opts.out, fam + ".json.gz")
        stats["families"][fam] = {"cases": len(cases), "bytes": len(text),
                                  "gz_bytes": len(gzip.compress(text.encode(), compresslevel=9, mtime=0))}
        if opts.check:
            old = gzip.decompress(open(target, "rb").read()).decode() if os.path.exists(target) else None
            same = old == text
            failed |= not same
            print(f"{fam}: {len(cases)} cases, {'identical' if same else 'DIFFERS'}", flush=True)
        else:
            os.makedirs(opts.out, exist_ok=True)
            with open(target, "wb") as f:     # deterministic: no name, mtime 0
                f.write(gzip.compress(text.encode(), compresslevel=9, mtime=0))
            if opts.plain:
                os.makedirs(opts.plain, exist_ok=True)
                with open(os.path.join(opts.plain, fam + ".json"), "w", encoding="utf-8", newline="\n") as f:
                    f.write(text)
            print(f"{fam}: {len(cases)} cases, {len(text)} bytes -> {os.path.relpath(target)}", flush=True)
    seconds = round(time.time() - t0, 1)
    if not opts.check:
        with open(opts.stats, "w") as f:
            json.dump(stats, f, indent=1, sort_keys=True)
    total = sum(v["cases"] for v in stats["families"].values())
    print(f"total: {total} cases, {len(stats['dropped'])} dropped, {seconds} s")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
