#!/usr/bin/env python3
"""Classifies the conformance runner's output over the sweep fixtures into a divergence report.

    python tools/sweep/sweep.py --plain /tmp/sweep_json
    TAPEGRAD_CONFORMANCE_DIRS=/tmp/sweep_json target/release/deps/conformance-* > /tmp/replay.txt
    python tools/sweep/divergences.py /tmp/sweep_json /tmp/replay.txt > report.md

Only reads: the plain fixtures, the runner's FAIL/SKIP lines and (to tell "the replayer lacks an
arm" from "tapegrad lacks the op") the names of tapegrad's public functions under src/.
"""

import collections
import glob
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.normpath(os.path.join(HERE, os.pardir, os.pardir))

KIND_TEXT = {
    "unknown_op_replayer": "unknown op name in the replayer (tapegrad has a function of that name: "
                           "only a dispatch arm is missing)",
    "unknown_op_lib": "unknown op name (tapegrad has no function of that name)",
    "missing_inplace_twin": "missing in-place twin (PyTorch has `op_`, tapegrad/the replayer does not)",
    "arg_form": "argument form the replayer cannot pass (keyword, tensor-or-scalar, negative int, p=)",
    "complex_literal": "complex dtype: the replayer cannot build a complex tensor literal",
    "complex_values": "complex values: the replayer cannot compare a complex result with `{re, im}`",
    "second_order": "second order (`autograd.grad`, create_graph) not in the replayer",
    "value": "value mismatch",
    "stride": "stride/offset mismatch",
    "is_view": "is_view mismatch",
    "error_kind_differs": "error kind differs (both raise; PyTorch's kind from the shared ERROR_KINDS table)",
    "error_kind_differs_sweepmap": "error kind differs (both raise; PyTorch's message is not in the shared table, "
                                   "its kind comes from the sweep's added patterns, see README)",
    "torch_raises_lib_ok": "PyTorch raises, tapegrad succeeds",
    "lib_raises_torch_ok": "tapegrad raises, PyTorch succeeds",
    "gradient": "gradient mismatch (values, None-ness, or backward raising differently)",
    "dtype": "result dtype mismatch",
    "shape": "result shape mismatch",
    "requires_grad": "requires_grad / is_leaf / grad_fn mismatch",
    "storage_of": "storage sharing (storage_of) mismatch",
    "version": "version counter mismatch",
    "panic": "tapegrad panicked",
    "harness": "other harness conversion failure",
    "other": "other",
}


def shared_kind(msg):
    """The kind the shared recorder's own table gives a torch message (None: it maps none)."""
    import importlib.util
    for d in [os.environ.get("SWEEP_RECORDER"), os.path.join(REPO, os.pardir, "shared", "conformance"),
              "/work/shared/conformance"]:
        if d and os.path.exists(os.path.join(d, "record.py")):
            break
    if not hasattr(shared_kind, "table"):
        src = open(os.path.join(d, "record.py")).read()
        start = src.index("ERROR_KINDS = [")
        end = src.index("ERROR_KIND_NAMES")
        ns = {}
        exec(src[start:end], ns)
        shared_kind.table = ns["ERROR_KINDS"]
    for kind, pat in shared_kind.table:
        if re.search(pat, msg):
            return kind
    return None


def lib_names():
    out = subprocess.run(["grep", "-rhoE", r"pub fn [a-z_0-9]+", os.path.join(REPO, "src")],
                         capture_output=True, text=True).stdout
    names = {l.split()[-1] for l in out.splitlines()}
    # the elementwise macro-generated methods (exp, sin_, ...) are not spelled `pub fn`
    src = subprocess.run(["grep", "-rhoE", r"\b[a-z][a-z0-9_]*\b", os.path.join(REPO, "src", "ops")],
                         capture_output=True, text=True).stdout
    return names, set(src.split())


def classify(line, case, lib, words):
    m = re.match(r"SKIP (\S+): missing (.*)$", line)
    if m:
        what = m.group(2)
        if what.startswith("tensor(") or what == "tensor":
            return "complex_literal", what
        if what.startswith("autograd.grad"):
            return "second_order", what
        if "(" in what:
            return "arg_form", what
        base = what[2:] if what.startswith("F.") else what
        if base.endswith("_") and not base.endswith("__"):
            return ("missing_inplace_twin" if base not in lib else "unknown_op_replayer"), what
        return ("unknown_op_replayer" if base in lib else "unknown_op_lib"), what
    m = re.match(r"FAIL (\S+) step (\d+) (\S+): ([^:]+): expected (.*) got (.*)$", line)
    if not m:
        return "other", line
    _, si, label, field, exp, got = m.groups()
    step = case["steps"][int(si)] if case else {}
    if field == "harness":
        if step.get("op") == "tensor" or "complex" in json.dumps(step.get("kwargs", {})):
            return "complex_literal", got
        return "arg_form", got
    if label.startswith("grad(") or label in ("backward", "autograd.grad"):
        return "gradient", f"{field}: expected {exp} got {got}"
    if field.startswith("values") and '"re":' in exp:
        return "complex_values", f"{field}: expected {exp} got {got}"
    if field.startswith("values"):
        return "value", f"{field}: expected {exp} got {got}"
    if field in ("stride", "offset"):
        return "stride", f"{field}: expected {exp} got {got}"
    if field == "error":
        if exp == "success":
            return "lib_raises_torch_ok", got
        msg = step.get("torch_message", "")
        src = "" if shared_kind(msg) else " [kind from the sweep's added patterns]"
        if got == "success":
            return "torch_raises_lib_ok", f"{exp}{src} ({msg[:150]})"
        if src:
            return "error_kind_differs_sweepmap", f"expected {exp} got {got}; torch: {msg[:120]}"
        return "error_kind_differs", f"expected {exp} got {got}; torch: {msg[:120]}"
    if field in ("requires_grad", "is_leaf", "grad_fn_error"):
        return "requires_grad", f"{field}: expected {exp} got {got}"
    if field in ("is_view", "dtype", "shape", "storage_of", "version", "panic"):
        return field, f"expected {exp} got {got}"
    return "other", f"{field}: expected {exp} got {got}"


def main():
    fixdir, replay = sys.argv[1], sys.argv[2]
    cases = {}
    for f in sorted(glob.glob(os.path.join(fixdir, "*.json"))):
        d = json.load(open(f))
        if d.get("format") != 1:
            continue
        for c in d["cases"]:
            cases[c["name"]] = c
    lib, words = lib_names()
    per_op = collections.defaultdict(lambda: collections.Counter())
    per_kind = collections.Counter()
    per_kind_op = collections.defaultdict(collections.Counter)
    example = {}
    unspec = collections.Counter()
    bad_names = set()
    for line in open(replay):
        line = line.rstrip("\n")
        if not (line.startswith("FAIL ") or line.startswith("SKIP ")):
            continue
        name = line.split()[1].rstrip(":")
        c = cases.get(name)
        op = c.get("op", "?") if c else "?"
        kind, detail = classify(line, c, lib, words)
        bad_names.add(name)
        if c and "unspecified" in c:
            unspec[kind] += 1
            kind_key = kind
            per_op[op]["unspecified"] += 1
            example.setdefault(("unspecified", kind), (name, c["about"], detail, c.get("unspecified")))
            continue
        per_op[op][kind] += 1
        per_kind[kind] += 1
        per_kind_op[kind][op] += 1
        example.setdefault(kind, (name, c["about"] if c else "", detail, line))
        example.setdefault((kind, op), (name, c["about"] if c else "", detail, line))
    total_by_op = collections.Counter(c.get("op", "?") for c in cases.values())
    out = []
    w = out.append
    w("# Sweep divergences: tapegrad vs PyTorch (issue 21)\n")
    n_bad = len(bad_names)
    w(f"Samples: {len(cases)}; passing: {len(cases) - n_bad}; diverging: {n_bad} "
      f"(of which {sum(unspec.values())} in samples marked `unspecified`). "
      "A case counts once, under its first divergence (the runner stops a case at its first failing step).\n")
    w("## Per kind\n")
    w("| kind | cases | ops | example case | example |")
    w("|---|---:|---:|---|---|")
    for k, n in per_kind.most_common():
        ex = example[k]
        det = ex[2].replace("|", "\\|")[:160]
        w(f"| {KIND_TEXT.get(k, k)} | {n} | {len(per_kind_op[k])} | `{ex[0]}` {ex[1][:70]} | {det} |")
    w("")
    if unspec:
        w("### In samples marked `unspecified` (PyTorch's result is not specified there)\n")
        w("| kind | cases | example |")
        w("|---|---:|---|")
        for k, n in unspec.most_common():
            ex = example[("unspecified", k)]
            w(f"| {KIND_TEXT.get(k, k)} | {n} | `{ex[0]}` {ex[1][:60]}: {ex[2][:100]} (reason: {ex[3][:80]}) |")
        w("")
    w("## Top ops by diverging samples\n")
    w("| op | samples | diverging | kinds |")
    w("|---|---:|---:|---|")
    ranked = sorted(per_op.items(), key=lambda kv: -sum(v for k, v in kv[1].items() if k != "unspecified"))
    for op, cnt in ranked:
        bad = sum(v for k, v in cnt.items() if k != "unspecified")
        if not bad:
            continue
        kinds = ", ".join(f"{k} {v}" for k, v in cnt.most_common())
        w(f"| `{op}` | {total_by_op[op]} | {bad} | {kinds} |")
    w("")
    w("## Ops per kind\n")
    for k, n in per_kind.most_common():
        ops = ", ".join(f"`{o}` {v}" for o, v in per_kind_op[k].most_common())
        w(f"- **{KIND_TEXT.get(k, k)}** ({n}): {ops}")
    w("")
    w("## One example per kind and op (the worklist)\n")
    for k, n in per_kind.most_common():
        if k in ("complex_literal", "second_order", "complex_values"):
            continue
        w(f"### {KIND_TEXT.get(k, k)} ({n})\n")
        for o, v in per_kind_op[k].most_common():
            ex = example[(k, o)]
            w(f"- `{o}` ({v}): `{ex[0]}` {ex[1][:90]} -> {ex[2][:200]}")
        w("")
    harness = {"complex_literal", "second_order", "complex_values"}
    lib_clean = sorted(op for op in total_by_op
                       if not any(v for k, v in per_op[op].items() if k != "unspecified" and k not in harness))
    w(f"## Ops whose only divergences are replayer-side (complex literals/values, autograd.grad) "
      f"or none ({len(lib_clean)})\n")
    w(", ".join(f"`{o}`" for o in lib_clean))
    w("")
    clean = sorted(op for op in total_by_op if not any(v for k, v in per_op[op].items() if k != "unspecified"))
    w(f"## Ops with every sample passing ({len(clean)})\n")
    w(", ".join(f"`{o}`" for o in clean))
    print("\n".join(out))


if __name__ == "__main__":
    main()
