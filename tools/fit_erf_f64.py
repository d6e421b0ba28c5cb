#!/usr/bin/env python3
"""Regenerate the coefficients of the f64 `erf` lanes (`src/backend/cpu/math/fp64.rs`).

    python3 tools/fit_erf_f64.py      # needs mpmath; prints the three Rust constant arrays

Fits are made at 60 digits; the four leading coefficients of `ERF_S` and `ERF_T` are rounded to
f64 one at a time, the rest refit after each (so they absorb those roundings):
- `ERF_S`: `erf(a)/a - 1` as a polynomial in `z = a^2` on `[0, 0.875^2]` (least squares).
- `ERF_T`: `erfc(a) e^(a^2)` as a polynomial in `u = a - 1.75` on `[0.875, 6]`, least squares on
  300 Chebyshev nodes weighted by `e^(-a^2)`: erf takes `1 - e^(-a^2) T`, so the error that
  counts is the absolute one of `erfc`, which lets `T` be loose where `e^(-a^2)` is small.
- `ERF_E`: `(e^r - 1 - r)/r^2` on `|r| <= ln2/2` (Chebyshev fit).
It also prints each fit's worst error (for `ERF_T`, in units of 2^-53, erf's ulp on [0.5, 1)).
"""
import mpmath as mp

mp.mp.dps = 60
A0, B, C = mp.mpf("0.875"), mp.mpf(6), mp.mpf("1.75")


def least_squares(f, w, lo, hi, var, n, fixed, m=300):
    """Coefficients of `sum c_k var(x)^k` (n terms) fitting f on [lo, hi] weighted by w, least
    squares on m Chebyshev nodes, with the first `len(fixed)` coefficients held at `fixed`."""
    xs = [(lo + hi) / 2 + (hi - lo) / 2 * mp.cos(mp.pi * (k + 0.5) / m) for k in range(m)]
    free = n - len(fixed)
    a, b = mp.matrix(m, free), mp.matrix(m, 1)
    for i, x in enumerate(xs):
        v, wx = var(x), w(x)
        for k in range(free):
            a[i, k] = wx * v ** (len(fixed) + k)
        b[i] = wx * (f(x) - sum(c * v**k for k, c in enumerate(fixed)))
    sol, _ = mp.qr_solve(a, b)
    return list(fixed) + [sol[k] for k in range(free)]


def rounded_fit(f, w, lo, hi, var, n, lead):
    """The fit with its `lead` leading coefficients rounded to f64 one at a time, the rest refit
    after each (so the rest absorbs the rounding of the large leading terms)."""
    fixed = []
    for _ in range(lead):
        fixed.append(mp.mpf(float(least_squares(f, w, lo, hi, var, n, fixed)[len(fixed)])))
    return [float(c) for c in least_squares(f, w, lo, hi, var, n, fixed)]


def weighted_t(n):
    return rounded_fit(lambda x: mp.erfc(x) * mp.exp(x * x), lambda x: mp.exp(-x * x), A0, B,
                       lambda x: x - C, n, 4)


def worst_error(coef, lo, hi, var, err):
    """The largest `err(x, p)` over 2001 points of [lo, hi], `p` the polynomial `coef` in
    `var(x)` evaluated exactly."""
    worst = 0
    for k in range(2001):
        x = lo + (hi - lo) * k / mp.mpf(2000)
        p = mp.mpf(0)
        for c in reversed(coef):
            p = p * var(x) + mp.mpf(c)
        worst = max(worst, err(x, p))
    return worst


def t_error(coef):
    return worst_error(coef, A0, B, lambda x: x - C,
                       lambda x, p: abs(mp.exp(-x * x) * p - mp.erfc(x)) / mp.mpf(2) ** -53)


def small(z):
    if z == 0:
        return 2 / mp.sqrt(mp.pi) - 1
    x = mp.sqrt(z)
    return mp.erf(x) / x - 1


def s_error(coef):
    return worst_error(coef, 0, A0 * A0, lambda z: z, lambda z, p: abs(p - small(z)))


def expm1_q(r):
    return (mp.exp(r) - 1 - r) / r**2 if r != 0 else mp.mpf(1) / 2


def emit(name, coef, note):
    print(f"// {note}")
    print(f"const {name}: [f64; {len(coef)}] = [" + ", ".join(repr(c) for c in coef) + "];")


t = weighted_t(23)
emit("ERF_T", t, f"worst |erfc error| {mp.nstr(t_error(t), 3)} x 2^-53")
s = rounded_fit(small, lambda z: 1, 0, A0 * A0, lambda z: z, 12, 4)
emit("ERF_S", s, f"worst error {mp.nstr(s_error(s), 3)}")
h = mp.log(2) / 2 + mp.mpf("1e-6")
e, err = mp.chebyfit(expm1_q, [-h, h], 11, error=True)
emit("ERF_E", [float(c) for c in reversed(e)], f"worst error of e^r - 1: {mp.nstr(err * h * h, 3)}")
