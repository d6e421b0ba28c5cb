#!/usr/bin/env python3
"""Convert scikit-learn's bundled handwritten-digits data into examples/data/digits.csv.

Source: ``sklearn/datasets/data/digits.csv.gz`` as shipped inside the installed
scikit-learn package (the same data that ``sklearn.datasets.load_digits()``
returns: the test set of the UCI ML "Optical Recognition of Handwritten Digits"
data set, 1,797 images of 8x8 pixels, 10 classes).

Output format (plain ASCII, no header, ``\\n`` line endings, one image a line)::

    p0,p1,...,p63,label

where ``p0..p63`` are the pixel values (integers 0..16) in row-major order
(row 0 left to right, then row 1, ...) and ``label`` is the digit 0..9.

The script validates the data (shape, value ranges, class counts) and checks
that it is identical to ``load_digits()`` before writing.  It needs only
scikit-learn (and numpy, which scikit-learn depends on).

Usage (from the repository root)::

    pip install scikit-learn
    python3 tools/convert_digits.py [OUTPUT]   # default: examples/data/digits.csv
"""

import gzip
import os
import sys

import numpy as np
import sklearn
import sklearn.datasets

N_SAMPLES = 1797
N_PIXELS = 64


def source_path() -> str:
    """Path of digits.csv.gz inside the installed scikit-learn package."""
    return os.path.join(os.path.dirname(sklearn.datasets.__file__), "data", "digits.csv.gz")


def read_source(path: str) -> np.ndarray:
    """Read the gzip'd CSV into an (N, 65) integer array, checking every value is integral."""
    rows = []
    with gzip.open(path, "rt", encoding="ascii") as f:
        for lineno, line in enumerate(f, 1):
            line = line.strip()
            if not line:
                continue
            vals = [float(v) for v in line.split(",")]
            if len(vals) != N_PIXELS + 1:
                raise ValueError(f"line {lineno}: expected {N_PIXELS + 1} fields, got {len(vals)}")
            if any(v != int(v) for v in vals):
                raise ValueError(f"line {lineno}: non-integer value")
            rows.append([int(v) for v in vals])
    return np.asarray(rows, dtype=np.int64)


def validate(data: np.ndarray) -> None:
    """Check shape, ranges, and equality with sklearn.datasets.load_digits()."""
    if data.shape != (N_SAMPLES, N_PIXELS + 1):
        raise ValueError(f"unexpected shape {data.shape}")
    pixels, labels = data[:, :N_PIXELS], data[:, N_PIXELS]
    if pixels.min() < 0 or pixels.max() > 16:
        raise ValueError("pixel value out of 0..16")
    if labels.min() < 0 or labels.max() > 9:
        raise ValueError("label out of 0..9")
    ref = sklearn.datasets.load_digits()
    if not (np.array_equal(ref.data.astype(np.int64), pixels) and np.array_equal(ref.target, labels)):
        raise ValueError("data differs from sklearn.datasets.load_digits()")


def main() -> None:
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join("examples", "data", "digits.csv")
    src = source_path()
    data = read_source(src)
    validate(data)
    with open(out, "w", encoding="ascii", newline="\n") as f:
        for row in data:
            f.write(",".join(str(int(v)) for v in row))
            f.write("\n")
    counts = np.bincount(data[:, N_PIXELS], minlength=10)
    print(f"scikit-learn {sklearn.__version__}: {src}")
    print(f"wrote {out}: {data.shape[0]} rows, {os.path.getsize(out)} bytes; class counts {counts.tolist()}")


if __name__ == "__main__":
    main()
