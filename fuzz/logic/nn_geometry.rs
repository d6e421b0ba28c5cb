//! Target `nn_geometry`: convolutions (1-3-D, transposed), pools (max, avg, adaptive), norms
//! (batch, instance, group, layer), scaled dot-product attention and einsum with arbitrary
//! geometry: zero, negative and huge kernels, strides, dilations, paddings, output paddings and
//! groups, empty tensors with huge dims, wrong ranks and dtypes, random masks, and equations of
//! random subscripts. Invariants: no panic; a failing op leaves every tensor unchanged; a conv,
//! transposed conv or pool that succeeds has the output shape of PyTorch's formula (computed
//! here in i128), and a float64 `conv1d` equals a direct sum; gradients of a successful op have
//! their inputs' shapes. Ops whose legal output the formulas predict above `MAX_OUT` elements
//! are skipped (they would allocate it, as PyTorch does).

use super::check::guarded;
use super::input::Input;
use tapegrad::{
    ConvOptions, ConvPadding, ConvTransposeOptions, DType, SdpaOptions, Spatial, Tensor,
};

/// Elements a generated input tensor may hold.
const MAX_IN: usize = 1024;
/// Elements a predicted output may hold before the op is skipped.
const MAX_OUT: i128 = 1 << 18;

/// A shape of `rank` dims: mostly 0..=3, sometimes huge (then the tensor is made empty so it
/// stays small: a huge dim is only reachable through an empty tensor).
fn shape(inp: &mut Input, rank: usize) -> Vec<usize> {
    let mut s: Vec<usize> = (0..rank)
        .map(|_| match inp.u8() % 12 {
            0 => inp.size(),
            1 => 4 + inp.small(4),
            k => (k as usize) % 4,
        })
        .collect();
    if too_big(&s) {
        let i = inp.below(rank);
        s[i] = 0;
    }
    s
}

/// A shape of rank `0..=max_rank`.
fn rshape(inp: &mut Input, max_rank: usize) -> Vec<usize> {
    let r = inp.small(max_rank);
    shape(inp, r)
}

fn too_big(s: &[usize]) -> bool {
    let n = s.iter().try_fold(1usize, |a, &d| a.checked_mul(d));
    !s.is_empty() && n.is_none_or(|n| n > MAX_IN)
}

/// Makes `s` small again after an edit (its largest dim becomes 0).
fn fit(s: &mut [usize]) {
    if too_big(s) {
        let i = (0..s.len()).max_by_key(|&i| s[i]).unwrap();
        s[i] = 0;
    }
}

/// Product of the dims, each at least 1: bounds every index space built from them.
fn span(s: &[usize]) -> i128 {
    s.iter()
        .try_fold(1i128, |a, &d| a.checked_mul(d.max(1) as i128))
        .unwrap_or(i128::MAX)
}

/// A tensor of `shape` (made empty by [`shape`] when large) with small values; mostly float64,
/// sometimes float32 or an integer dtype (a dtype error for most ops).
fn tensor(inp: &mut Input, shape: &[usize], grad: bool) -> Tensor {
    // callers pass derived shapes (a channel count, a normalized shape): keep them small too
    let mut shape = shape.to_vec();
    fit(&mut shape);
    let shape = shape.as_slice();
    let n = if shape.contains(&0) {
        0
    } else {
        shape.iter().product()
    };
    let v: Vec<f64> = (0..n).map(|_| (inp.u8() as f64 - 128.0) / 32.0).collect();
    let mut t = Tensor::from_vec(v, &[n]).unwrap();
    t = match inp.u8() % 16 {
        0 => t.to_dtype(DType::F32).unwrap(),
        1 => t.to_dtype(DType::I64).unwrap(),
        _ => t,
    };
    let t = match Tensor::zeros(shape, t.dtype()) {
        // an empty shape of huge dims may exceed int64 sizes: keep the flat tensor then
        Err(_) => t,
        Ok(z) if n == 0 => z,
        Ok(_) => t
            .reshape(&shape.iter().map(|&d| d as i64).collect::<Vec<_>>())
            .unwrap(),
    };
    if grad && t.dtype().is_float() && inp.bool() {
        t.requires_grad_(true).unwrap()
    } else {
        t
    }
}

fn spatial(inp: &mut Input, nd: usize) -> Spatial {
    match inp.u8() % 8 {
        0 => Spatial(vec![inp.geom()]),
        1 => Spatial((0..inp.small(4)).map(|_| inp.geom()).collect()),
        2 => Spatial((0..nd).map(|_| inp.geom()).collect()),
        k => Spatial(vec![(k as i64 - 3) % 3 + 1]), // 1, 2, 3, 1, 2
    }
}

/// The per-dim values of a `Spatial` for `nd` dims (PyTorch's `expand_param_if_needed`), or
/// `None` when the count does not fit (an error expected).
fn per_dim(s: &Spatial, nd: usize) -> Option<Vec<i128>> {
    match s.0.len() {
        1 => Some(vec![s.0[0] as i128; nd]),
        n if n == nd => Some(s.0.iter().map(|&v| v as i128).collect()),
        _ => None,
    }
}

/// PyTorch's conv output shape, `None` when the arguments are invalid.
fn conv_shape(x: &[usize], w: &[usize], nd: usize, o: &ConvOptions) -> Option<Vec<i128>> {
    let batched = x.len() == nd + 2;
    if !(batched || x.len() == nd + 1) || w.len() != nd + 2 {
        return None;
    }
    let x: Vec<i128> = x.iter().map(|&v| v as i128).collect();
    let w: Vec<i128> = w.iter().map(|&v| v as i128).collect();
    let (s, d) = (per_dim(&o.stride, nd)?, per_dim(&o.dilation, nd)?);
    let g = o.groups as i128;
    let c_in = x[x.len() - nd - 1];
    if g <= 0 || s.iter().any(|&v| v <= 0) || d.iter().any(|&v| v <= 0) {
        return None;
    }
    if w[0] == 0 || w[0] % g != 0 || c_in != w[1] * g {
        return None;
    }
    let p: Vec<i128> = match &o.padding {
        ConvPadding::Explicit(p) => per_dim(p, nd)?,
        ConvPadding::Valid => vec![0; nd],
        ConvPadding::Same => {
            if s.iter().any(|&v| v != 1) {
                return None;
            }
            // output = input; the kernel must still fit with the total padding
            let mut out = x[..x.len() - nd - 1].to_vec();
            out.push(c_out(&x, &w, nd));
            out.extend_from_slice(&x[x.len() - nd..]);
            return Some(out);
        }
    };
    if p.iter().any(|&v| v < 0) {
        return None;
    }
    let mut out = x[..x.len() - nd - 1].to_vec();
    out.push(c_out(&x, &w, nd));
    for i in 0..nd {
        let span = x[x.len() - nd + i] + 2 * p[i] - d[i] * (w[2 + i] - 1) - 1;
        if span < 0 {
            return None;
        }
        out.push(span / s[i] + 1);
    }
    Some(out)
}

/// PyTorch's transposed conv output shape, `None` when the arguments are invalid.
fn conv_t_shape(
    x: &[usize],
    w: &[usize],
    nd: usize,
    o: &ConvTransposeOptions,
) -> Option<Vec<i128>> {
    if !(x.len() == nd + 2 || x.len() == nd + 1) || w.len() != nd + 2 {
        return None;
    }
    let x: Vec<i128> = x.iter().map(|&v| v as i128).collect();
    let w: Vec<i128> = w.iter().map(|&v| v as i128).collect();
    let (s, d) = (per_dim(&o.stride, nd)?, per_dim(&o.dilation, nd)?);
    let (p, op) = (per_dim(&o.padding, nd)?, per_dim(&o.output_padding, nd)?);
    let g = o.groups as i128;
    let c_in = x[x.len() - nd - 1];
    if g <= 0 || s.iter().any(|&v| v <= 0) || d.iter().any(|&v| v <= 0) {
        return None;
    }
    if p.iter().any(|&v| v < 0) || op.iter().any(|&v| v < 0) || c_in != w[0] || w[0] % g != 0 {
        return None;
    }
    // torch refuses a weight without output channels ("non-empty 2D or 4D weight tensor
    // expected")
    if w[1] == 0 {
        return None;
    }
    if (0..nd).any(|i| op[i] >= s[i] && op[i] >= d[i]) {
        return None;
    }
    let mut out = x[..x.len() - nd - 1].to_vec();
    out.push(w[1] * g);
    for i in 0..nd {
        // checked: sizes near 2^64 times strides near 2^63 overflow even i128; such an
        // output size is far above i64::MAX, which the library must refuse
        let v = (x[x.len() - nd + i] - 1)
            .checked_mul(s[i])?
            .checked_sub(2 * p[i])?
            .checked_add(d[i].checked_mul(w[2 + i] - 1)?)?
            .checked_add(op[i] + 1)?;
        if v <= 0 {
            return None;
        }
        out.push(v);
    }
    Some(out)
}

fn numel(s: &[i128]) -> i128 {
    s.iter()
        .try_fold(1i128, |a, &d| a.checked_mul(d))
        .unwrap_or(i128::MAX)
}

fn as_i128(s: &[usize]) -> Vec<i128> {
    s.iter().map(|&v| v as i128).collect()
}

/// Direct float64 conv1d (batched `[N, C, L]`, explicit padding) for comparison.
fn conv1d_ref(
    x: &Tensor,
    w: &Tensor,
    b: Option<&Tensor>,
    s: i128,
    p: i128,
    d: i128,
    g: i128,
) -> Vec<f64> {
    let (xs, ws) = (x.shape(), w.shape());
    let (n, c, l) = (xs[0], xs[1], xs[2] as i128);
    let (oc, icg, k) = (ws[0], ws[1], ws[2] as i128);
    let xv: Vec<f64> = x.to_vec().unwrap();
    let wv: Vec<f64> = w.to_vec().unwrap();
    let bv: Option<Vec<f64>> = b.map(|b| b.to_vec().unwrap());
    let ol = (l + 2 * p - d * (k - 1) - 1) / s + 1;
    let ocg = oc as i128 / g;
    let mut out = Vec::new();
    for ni in 0..n {
        for o in 0..oc {
            let grp = o as i128 / ocg;
            for t in 0..ol {
                let mut acc = bv.as_ref().map_or(0.0, |b| b[o]);
                for ci in 0..icg {
                    let cin = grp as usize * icg + ci;
                    for kk in 0..k {
                        let pos = t * s - p + kk * d;
                        if pos >= 0 && pos < l {
                            acc += xv[(ni * c + cin) * l as usize + pos as usize]
                                * wv[(o * icg + ci) * k as usize + kk as usize];
                        }
                    }
                }
                out.push(acc);
            }
        }
    }
    out
}

/// PyTorch's output channels: none for an input without channels (its `Empty` backend),
/// else the weight's rows.
fn c_out<T: Copy + PartialEq + Default>(x: &[T], w: &[T], nd: usize) -> T {
    if x[x.len() - nd - 1] == T::default() {
        T::default()
    } else {
        w[0]
    }
}

fn check_shape(out: &Tensor, want: Option<Vec<i128>>, ctx: &str) {
    let got = as_i128(&out.shape());
    match want {
        Some(w) => assert_eq!(got, w, "{ctx}: output shape differs from PyTorch's formula"),
        None => panic!("{ctx}: succeeded with arguments PyTorch refuses (output {got:?})"),
    }
}

/// `sum().backward()` through `out` and gradient shapes = input shapes.
fn backward(out: &Tensor, inputs: &[&Tensor], ctx: &str) {
    if !out.requires_grad() || out.numel() > MAX_OUT as usize {
        return;
    }
    let loss = out.sum().unwrap();
    if let Err(e) = loss.backward() {
        panic!("{ctx}: backward failed: {e}");
    }
    for t in inputs {
        if let Some(g) = t.grad() {
            assert_eq!(g.shape(), t.shape(), "{ctx}: gradient shape");
        }
    }
}

fn conv(inp: &mut Input, transpose: bool) {
    let nd = 1 + inp.below(3);
    let xr = match inp.u8() % 8 {
        0 => inp.small(5),
        1 => nd + 1,
        _ => nd + 2,
    };
    let mut xs = shape(inp, xr);
    let wr = if inp.u8().is_multiple_of(8) {
        inp.small(5)
    } else {
        nd + 2
    };
    let mut ws = shape(inp, wr);
    let groups = match inp.u8() % 4 {
        0 => inp.geom(),
        1 => 2,
        _ => 1,
    };
    // mostly matching channels, so the geometry is what is tested
    if xs.len() > nd && ws.len() == nd + 2 && !inp.u8().is_multiple_of(4) && groups > 0 {
        let g = groups as usize;
        let ci = xs.len() - nd - 1;
        if transpose {
            ws[0] = xs[ci];
        } else if ws[1].checked_mul(g).is_some_and(|c| c <= 8) {
            xs[ci] = ws[1] * g;
            if !ws[0].is_multiple_of(g) {
                ws[0] = g;
            }
        }
        fit(&mut xs);
        fit(&mut ws);
    }
    let x = tensor(inp, &xs, true);
    let w = tensor(inp, &ws, true);
    let bias = match inp.u8() % 4 {
        0 => {
            let n = if transpose {
                ws.get(1).map(|&c| c.saturating_mul(groups.max(1) as usize))
            } else {
                ws.first().copied()
            };
            let bs = if inp.bool() {
                vec![n.unwrap_or(0).min(MAX_IN)]
            } else {
                rshape(inp, 2)
            };
            Some(tensor(inp, &bs, true))
        }
        _ => None,
    };
    let pool = [x.clone(), w.clone()];
    let ctx = format!("conv{nd}d transpose={transpose} x{xs:?} w{ws:?} groups {groups}");
    if transpose {
        let o = ConvTransposeOptions {
            stride: spatial(inp, nd),
            padding: if inp.bool() {
                0.into()
            } else {
                spatial(inp, nd)
            },
            output_padding: if !inp.u8().is_multiple_of(4) {
                0.into()
            } else {
                spatial(inp, nd)
            },
            groups,
            dilation: spatial(inp, nd),
        };
        let want = conv_t_shape(&xs, &ws, nd, &o);
        if want.as_ref().is_some_and(|w| numel(w) > MAX_OUT) {
            return;
        }
        let f = match nd {
            1 => Tensor::conv_transpose1d,
            2 => Tensor::conv_transpose2d,
            _ => Tensor::conv_transpose3d,
        };
        if let Some(out) = guarded(&pool, &ctx, || f(&x, &w, bias.as_ref(), &o)) {
            // bias and dtype errors are outside the formula
            if bias.is_none() && x.dtype() == w.dtype() && x.dtype().is_float() {
                check_shape(&out, want, &format!("{ctx} {o:?}"));
            }
            backward(&out, &[&x, &w], &ctx);
        }
    } else {
        let padding = match inp.u8() % 6 {
            0 => ConvPadding::Same,
            1 => ConvPadding::Valid,
            2 | 3 => ConvPadding::Explicit(0.into()),
            _ => ConvPadding::Explicit(spatial(inp, nd)),
        };
        let o = ConvOptions {
            stride: if inp.bool() {
                1.into()
            } else {
                spatial(inp, nd)
            },
            padding,
            dilation: if inp.bool() {
                1.into()
            } else {
                spatial(inp, nd)
            },
            groups,
        };
        let want = conv_shape(&xs, &ws, nd, &o);
        if want.as_ref().is_some_and(|w| numel(w) > MAX_OUT) {
            return;
        }
        let f = match nd {
            1 => Tensor::conv1d,
            2 => Tensor::conv2d,
            _ => Tensor::conv3d,
        };
        if let Some(out) = guarded(&pool, &ctx, || f(&x, &w, bias.as_ref(), &o)) {
            let plain = bias.is_none() && x.dtype() == w.dtype() && x.dtype().is_float();
            if plain {
                check_shape(&out, want, &format!("{ctx} {o:?}"));
            }
            if plain
                && nd == 1
                && xs.len() == 3
                && x.dtype() == DType::F64
                && out.numel() > 0
                && let (Some(s), Some(d), ConvPadding::Explicit(p)) =
                    (per_dim(&o.stride, 1), per_dim(&o.dilation, 1), &o.padding)
            {
                let p = per_dim(p, 1).unwrap()[0];
                let want = conv1d_ref(&x, &w, None, s[0], p, d[0], groups as i128);
                let got: Vec<f64> = out.detach().to_vec().unwrap();
                assert_eq!(got.len(), want.len(), "{ctx}");
                for (a, b) in got.iter().zip(&want) {
                    assert!((a - b).abs() <= 1e-9 * (1.0 + b.abs()), "{ctx}: {a} vs {b}");
                }
            }
            backward(&out, &[&x, &w], &ctx);
        }
    }
}

/// PyTorch's pooling output length, `None` when the arguments are invalid.
/// (`d` = 0 for an average pool, whose padding is bounded by half the kernel itself.)
fn pool_len(l: i128, k: i128, s: i128, p: i128, d: i128, ceil: bool) -> Option<i128> {
    let eff = if d == 0 { k } else { (k - 1) * d + 1 };
    let d = d.max(1);
    if k <= 0 || s <= 0 || p < 0 || 2 * p > eff {
        return None;
    }
    let span = l + 2 * p - d * (k - 1) - 1;
    let mut o = if ceil {
        (span + s - 1).div_euclid(s)
    } else {
        span.div_euclid(s)
    } + 1;
    if ceil && (o - 1) * s >= l + p {
        o -= 1;
    }
    (o > 0).then_some(o)
}

fn pool(inp: &mut Input) {
    let r = match inp.u8() % 6 {
        0 => inp.small(5),
        1 => 3,
        _ => 4,
    };
    let xs = shape(inp, r);
    let x = tensor(inp, &xs, true);
    let pool = [x.clone()];
    let sz = |inp: &mut Input| -> usize {
        match inp.u8() % 8 {
            0 => inp.size(),
            k => k as usize % 4,
        }
    };
    let kind = inp.below(6);
    let ctx = format!("pool {kind} x{xs:?}");
    let out = match kind {
        0 | 1 => {
            let k: Vec<usize> = (0..2).map(|_| sz(inp)).collect();
            let s: Vec<usize> = (0..inp.small(2)).map(|_| sz(inp)).collect();
            let (p, d, ceil) = (vec![sz(inp)], vec![1 + inp.small(2)], inp.bool());
            let ctx = format!("{ctx} k{k:?} s{s:?} p{p:?} d{d:?} ceil {ceil}");
            let s2 = if s.is_empty() { k.clone() } else { s.clone() };
            let dd = if kind == 0 { d[0] as i128 } else { 0 };
            let want: Option<Vec<i128>> = (xs.len() >= 3)
                .then(|| {
                    (0..2)
                        .map(|i| {
                            let pick = |v: &Vec<usize>| *v.get(i).unwrap_or(&v[0]) as i128;
                            let l = xs[xs.len() - 2 + i] as i128;
                            pool_len(l, pick(&k), pick(&s2), p[0] as i128, dd, ceil)
                        })
                        .collect()
                })
                .flatten();
            if let Some(w) = &want
                && span(&xs[..xs.len() - 2]).saturating_mul(numel(w)) > MAX_OUT
            {
                return;
            }
            let out = if kind == 0 {
                guarded(&pool, &ctx, || x.max_pool2d(&k, &s, &p, &d, ceil))
            } else {
                guarded(&pool, &ctx, || {
                    x.avg_pool2d(&k, &s, &p, ceil, inp_flag(&k), None)
                })
            };
            if let (Some(out), Some(w)) = (&out, &want) {
                let sh = as_i128(&out.shape());
                assert_eq!(&sh[sh.len() - 2..], &w[..], "{ctx}: output shape");
            }
            out
        }
        2 | 3 => {
            let (k, s, p) = (
                sz(inp),
                if inp.bool() { None } else { Some(sz(inp)) },
                sz(inp),
            );
            let (d, ceil) = (1 + inp.small(2), inp.bool());
            let ctx = format!("{ctx} k{k} s{s:?} p{p} d{d} ceil {ceil}");
            let dd = if kind == 2 { d as i128 } else { 0 };
            let st = s.unwrap_or(k) as i128;
            let l = xs.last().map_or(0, |&l| l as i128);
            if let Some(o) = pool_len(l, k as i128, st, p as i128, dd, ceil)
                && span(&xs[..xs.len().saturating_sub(1)]).saturating_mul(o) > MAX_OUT
            {
                return;
            }
            // `None` is the only option form of the integer rule's `MaybeDim` (a stride above
            // i64::MAX acts as i64::MAX: at least the length either way)
            let s = s.map(|v| i64::try_from(v).unwrap_or(i64::MAX));
            if kind == 2 {
                guarded(&pool, &ctx, || x.max_pool1d(k, s, p, d, ceil))
            } else {
                guarded(&pool, &ctx, || x.avg_pool1d(k, s, p, ceil, inp_flag(&[k])))
            }
        }
        _ => {
            let os: Vec<usize> = (0..1 + inp.small(2)).map(|_| sz(inp)).collect();
            // (checked: three dims of up to 2^63 overflow even an i128 product)
            let planes = numel(&as_i128(&xs[..xs.len().saturating_sub(2)]));
            if numel(&as_i128(&os)).saturating_mul(planes.max(1)) > MAX_OUT {
                return;
            }
            let ctx = format!("{ctx} adaptive {os:?}");
            if kind == 4 {
                guarded(&pool, &ctx, || x.adaptive_max_pool2d(&os))
            } else {
                guarded(&pool, &ctx, || x.adaptive_avg_pool2d(&os))
            }
        }
    };
    if let Some(out) = out {
        backward(&out, &[&x], &ctx);
    }
}

fn inp_flag(k: &[usize]) -> bool {
    k.first().is_some_and(|&v| v % 2 == 0)
}

fn eps(inp: &mut Input) -> f64 {
    match inp.u8() % 8 {
        0 => f64::NAN,
        1 => -1.0,
        2 => 0.0,
        3 => f64::INFINITY,
        _ => 1e-5,
    }
}

fn norm(inp: &mut Input) {
    let r = inp.small(5);
    let xs = shape(inp, r);
    let x = tensor(inp, &xs, true);
    let c = xs.get(1).copied().unwrap_or(0);
    let side = |inp: &mut Input, n: usize| -> Option<Tensor> {
        match inp.u8() % 4 {
            0 => None,
            1 => {
                let s = rshape(inp, 2);
                Some(tensor(inp, &s, true))
            }
            _ => Some(tensor(inp, &[n], true)),
        }
    };
    let kind = inp.below(4);
    let (w, b) = (side(inp, c), side(inp, c));
    let (rm, rv) = if inp.bool() {
        (
            side(inp, c).map(|t| t.detach()),
            side(inp, c).map(|t| t.detach().abs().unwrap()),
        )
    } else {
        (None, None)
    };
    let mut pool = vec![x.clone()];
    pool.extend([&w, &b, &rm, &rv].into_iter().flatten().cloned());
    let (training, mom, e) = (
        inp.bool(),
        [0.1, 0.0, 1.0, f64::NAN, -2.0][inp.below(5)],
        eps(inp),
    );
    let ctx = format!("norm {kind} x{xs:?} training {training} eps {e}");
    let out = match kind {
        0 => guarded(&pool, &ctx, || {
            x.batch_norm(
                rm.as_ref(),
                rv.as_ref(),
                w.as_ref(),
                b.as_ref(),
                training,
                mom,
                e,
            )
        }),
        1 => guarded(&pool, &ctx, || {
            x.instance_norm(
                rm.as_ref(),
                rv.as_ref(),
                w.as_ref(),
                b.as_ref(),
                training,
                mom,
                e,
            )
        }),
        2 => {
            let g = match inp.u8() % 4 {
                0 => inp.size(),
                k => k as usize,
            };
            guarded(&pool, &ctx, || x.group_norm(g, w.as_ref(), b.as_ref(), e))
        }
        _ => {
            let k = inp.small(xs.len() + 1);
            let mut ns = xs[xs.len().saturating_sub(k)..].to_vec();
            if inp.u8().is_multiple_of(8) {
                ns = rshape(inp, 3);
            }
            let (w, b) = (
                w.as_ref().map(|_| tensor(inp, &ns, true)),
                b.as_ref().map(|_| tensor(inp, &ns, true)),
            );
            guarded(&pool, &ctx, || x.layer_norm(&ns, w.as_ref(), b.as_ref(), e))
        }
    };
    if let Some(out) = out {
        assert_eq!(
            out.shape(),
            x.shape(),
            "{ctx}: a norm keeps its input's shape"
        );
        backward(&out, &[&x], &ctx);
    }
}

/// Broadcast of two batch shapes, `None` when they do not broadcast.
fn bcast(a: &[usize], b: &[usize]) -> Option<Vec<usize>> {
    let n = a.len().max(b.len());
    (0..n)
        .map(|i| {
            let x = if i + a.len() >= n {
                a[i + a.len() - n]
            } else {
                1
            };
            let y = if i + b.len() >= n {
                b[i + b.len() - n]
            } else {
                1
            };
            match (x, y) {
                (x, y) if x == y => Some(x),
                (1, y) => Some(y),
                (x, 1) => Some(x),
                _ => None,
            }
        })
        .collect()
}

fn attention(inp: &mut Input) {
    let (l, s, e, ev) = (inp.small(4), inp.small(4), inp.small(4), inp.small(4));
    let batch = |inp: &mut Input| rshape(inp, 2);
    let (bq, bk, bv) = (batch(inp), batch(inp), batch(inp));
    let mk = |inp: &mut Input, b: &[usize], r: usize, c: usize| {
        let mut sh = b.to_vec();
        if inp.u8().is_multiple_of(16) {
            sh = rshape(inp, 4);
        } else {
            sh.extend([r, c]);
        }
        tensor(inp, &sh, true)
    };
    let q = mk(inp, &bq, l, e);
    let k = mk(inp, &bk, s, e);
    let v = mk(inp, &bv, s, ev);
    // the broadcast batch times L x max(S, E, Ev) bounds every intermediate (dims counted as at
    // least 1, so an empty tensor's huge dims count)
    let (qs, ks, vs) = (q.shape(), k.shape(), v.shape());
    let lead = |s: &[usize]| s[..s.len().saturating_sub(2)].to_vec();
    let last2 = |s: &[usize]| span(&s[s.len().saturating_sub(2)..]);
    let big = bcast(&lead(&qs), &lead(&ks))
        .and_then(|b| bcast(&b, &lead(&vs)))
        .map_or(i128::MAX, |b| {
            span(&b)
                .saturating_mul(last2(&qs))
                .saturating_mul(last2(&ks).max(last2(&vs)))
        });
    if big > MAX_OUT {
        return;
    }
    let mask = match inp.u8() % 4 {
        0 => {
            let sh = if inp.bool() {
                vec![l, s]
            } else {
                rshape(inp, 3)
            };
            let m = tensor(inp, &sh, false);
            Some(if inp.bool() { m.gt(0.0).unwrap() } else { m })
        }
        _ => None,
    };
    let opts = SdpaOptions {
        attn_mask: mask.as_ref(),
        dropout_p: [0.0, 0.0, 0.5, 1.0, -1.0, f64::NAN][inp.below(6)],
        is_causal: inp.u8().is_multiple_of(4),
        scale: [None, Some(0.5), Some(0.0), Some(f64::INFINITY)][inp.below(4)],
        enable_gqa: inp.bool(),
    };
    let pool = [q.clone(), k.clone(), v.clone()];
    let ctx = format!(
        "sdpa q{:?} k{:?} v{:?} {opts:?}",
        q.shape(),
        k.shape(),
        v.shape()
    );
    if let Some(out) = guarded(&pool, &ctx, || {
        Tensor::scaled_dot_product_attention(&q, &k, &v, opts)
    }) {
        backward(&out, &[&q, &k, &v], &ctx);
    }
}

fn einsum(inp: &mut Input) {
    const ALPHABET: &[u8] = b"ijkab.,->.iI ";
    let len = inp.small(12);
    let eq: String = (0..len)
        .map(|_| match inp.u8() % 16 {
            0 => (inp.u8() % 128) as char,
            k => ALPHABET[k as usize % ALPHABET.len()] as char,
        })
        .collect();
    let n = inp.small(3);
    let ops: Vec<Tensor> = (0..n)
        .map(|_| {
            let s = rshape(inp, 4);
            tensor(inp, &s, true)
        })
        .collect();
    // every index space einsum builds is at most the product of its operands' dims (each
    // counted as at least 1, so an empty operand's huge dims count)
    let bound = ops
        .iter()
        .map(|t| span(&t.shape()))
        .try_fold(1i128, |a, n| a.checked_mul(n));
    if bound.is_none_or(|b| b > MAX_OUT) {
        return;
    }
    let refs: Vec<&Tensor> = ops.iter().collect();
    let ctx = format!(
        "einsum {eq:?} {:?}",
        ops.iter().map(|t| t.shape()).collect::<Vec<_>>()
    );
    if let Some(out) = guarded(&ops, &ctx, || Tensor::einsum(&eq, &refs)) {
        backward(&out, &refs, &ctx);
    }
}

pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    for _ in 0..4 {
        if inp.is_empty() {
            break;
        }
        match inp.below(6) {
            0 => conv(&mut inp, false),
            1 => conv(&mut inp, true),
            2 => pool(&mut inp),
            3 => norm(&mut inp),
            4 => attention(&mut inp),
            _ => einsum(&mut inp),
        }
    }
}
