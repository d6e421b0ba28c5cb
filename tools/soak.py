#!/usr/bin/env python3
"""Soak test (issue 26): a long training run of the largest example, `train_charlm` (a 2-layer
character transformer trained with AdamW, evaluated every epoch), sampling its resident memory.

    python3 tools/soak.py [--seconds 600] [--interval 5] [--warmup 60] [--limit 1.0]

Builds the example (`cargo build --release --example train_charlm`; CARGO_TARGET_DIR is
honoured), starts it with `--epochs 1000000` (its default run of 12 epochs is unchanged; one
epoch is 50 steps, so the run never ends on its own within any sensible `--seconds`), reads
VmRSS from /proc/<pid>/status every `--interval` seconds and stops the run after `--seconds`.
Prints the curve (seconds, RSS in KiB, epochs finished so far) and the growth after warm-up:
the peak RSS of the last quarter of the post-warm-up samples against the peak of the first
quarter (peaks, because the sampling lands at random phases of training and evaluation).
Exits 1 when that growth exceeds `--limit` percent, 2 when the example dies early.
"""
import argparse
import json
import os
import signal
import subprocess
import sys
import time

ROOT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def build():
    out = subprocess.run(
        ["cargo", "build", "--release", "--example", "train_charlm", "--message-format=json"],
        cwd=ROOT, check=True, stdout=subprocess.PIPE, text=True,
    ).stdout
    for line in out.splitlines():
        msg = json.loads(line)
        if msg.get("reason") == "compiler-artifact" and msg["target"]["name"] == "train_charlm":
            if msg.get("executable"):
                return msg["executable"]
    sys.exit("soak: cargo did not report the train_charlm executable")


def rss_kib(pid):
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=float, default=600)
    ap.add_argument("--interval", type=float, default=5)
    ap.add_argument("--warmup", type=float, default=60)
    ap.add_argument("--limit", type=float, default=1.0, help="allowed growth, percent")
    args = ap.parse_args()
    exe = build()
    log = open(os.path.join(os.environ.get("TMPDIR", "/tmp"), f"soak_{os.getpid()}.log"), "w+")
    proc = subprocess.Popen([exe, "--epochs", "1000000"], stdout=log, stderr=subprocess.STDOUT)
    start = time.monotonic()
    samples = []  # (seconds, rss KiB, epochs finished)
    try:
        while (now := time.monotonic() - start) < args.seconds:
            if proc.poll() is not None:
                log.seek(0)
                print(log.read()[-2000:])
                print(f"soak: the example exited ({proc.returncode}) after {now:.0f} s")
                return 2
            rss = rss_kib(proc.pid)
            log.flush()
            with open(log.name) as f:
                epochs = sum(1 for line in f if line.startswith("epoch"))
            samples.append((now, rss, epochs))
            time.sleep(args.interval)
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait()
    with open(log.name) as f:
        epochs = [line.strip() for line in f if line.startswith("epoch")]
    print(f"soak: train_charlm for {args.seconds:.0f} s, {len(epochs)} epochs "
          f"({len(epochs) * 50} AdamW steps); last: {epochs[-1] if epochs else '-'}")
    print("curve (s, VmRSS KiB, epochs):")
    for t, rss, e in samples:
        print(f"  {t:7.1f} {rss:9d} {e:6d}")
    after = [s for s in samples if s[0] >= args.warmup]
    if len(after) < 8:
        print("soak: too few samples after warm-up (raise --seconds or lower --interval)")
        return 2
    q = len(after) // 4
    first, last = max(s[1] for s in after[:q]), max(s[1] for s in after[-q:])
    growth = 100.0 * (last - first) / first
    lo, hi = min(s[1] for s in after), max(s[1] for s in after)
    print(f"after warm-up ({args.warmup:.0f} s, {len(after)} samples): min {lo} KiB, max {hi} KiB; "
          f"peak of first quarter {first} KiB, of last quarter {last} KiB: growth {growth:+.2f}% "
          f"(limit {args.limit}%)")
    return 1 if growth > args.limit else 0


if __name__ == "__main__":
    sys.exit(main())
