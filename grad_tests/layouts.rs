//! Layout conformance: every unary, binary, comparison, reduction, matmul and data-movement op
//! runs on four layouts of the same logical values (contiguous, transposed, sliced with a step,
//! expanded) and must agree with the same op on a `.contiguous()` copy, with a scalar reference
//! where one is cheap, and in its gradient. Elementwise results of a permuted dense input keep
//! its memory order (PyTorch's TensorIterator rule). Error paths leave every tensor unchanged.

use crate::common::{R, close_rel};
use tapegrad::autograd;
use tapegrad::{
    DType, ErrorKind, IncludeSelf, RoundingMode, Scalar, ScatterReduce, Stability, Tensor,
};

type F1 = fn(&Tensor) -> tapegrad::Result<Tensor>;
type F2 = fn(&Tensor, &Tensor) -> tapegrad::Result<Tensor>;
/// A unary op, its scalar reference and whether it is checked away from zero.
type UnaryRow = (&'static str, F1, fn(f64) -> f64, bool);
/// A unary op and its scalar reference.
type RefRow = (&'static str, F1, fn(f64) -> f64);
/// A comparison and its scalar reference.
type CmpRow = (&'static str, F2, fn(f64, f64) -> bool);
/// A named op given as a closure.
type OpRow<'a> = (
    &'static str,
    Box<dyn Fn(&Tensor) -> tapegrad::Result<Tensor> + 'a>,
);

const ROWS: usize = 3;
const COLS: usize = 4;

/// Deterministic values with mixed signs, a zero and repeats (`pos` = strictly positive).
fn values(seed: usize, pos: bool) -> Vec<f64> {
    (0..ROWS * COLS)
        .map(|i| {
            let v = (((i * 7 + seed * 5) % 11) as f64 - 5.0) * 0.375;
            if pos { v.abs() + 0.25 } else { v }
        })
        .collect()
}

/// The four layouts of a `[3, 4]` f64 tensor holding `vals` (row-major); the expanded one
/// repeats the first row. Each is a view of a leaf that requires grad when `rg`.
fn layouts(vals: &[f64], rg: bool) -> tapegrad::Result<Vec<(&'static str, Tensor, Tensor)>> {
    let mk = |v: Vec<f64>, shape: &[usize]| -> tapegrad::Result<Tensor> {
        Tensor::from_vec(v, shape)?.requires_grad_(rg)
    };
    let contiguous = mk(vals.to_vec(), &[ROWS, COLS])?;
    let mut vt = vec![0.0; ROWS * COLS];
    let mut big = vec![0.0; 4 * ROWS * COLS];
    for i in 0..ROWS {
        for j in 0..COLS {
            vt[j * ROWS + i] = vals[i * COLS + j];
            big[(2 * i) * (2 * COLS) + 1 + 2 * j] = vals[i * COLS + j];
        }
    }
    let tleaf = mk(vt, &[COLS, ROWS])?;
    let sleaf = mk(big, &[2 * ROWS, 2 * COLS])?;
    let eleaf = mk(vals[..COLS].to_vec(), &[1, COLS])?;
    Ok(vec![
        ("contiguous", contiguous.clone(), contiguous),
        ("transposed", tleaf.t()?, tleaf),
        (
            "stepped",
            sleaf.slice(0, None, None, 2)?.slice(1, Some(1), None, 2)?,
            sleaf,
        ),
        (
            "expanded",
            eleaf.expand(&[ROWS as i64, COLS as i64])?,
            eleaf,
        ),
    ])
}

/// Same dtype, shape and values (NaN equal to NaN).
fn same(what: &str, got: &Tensor, want: &Tensor) -> R {
    assert_eq!(got.dtype(), want.dtype(), "{what}: dtype");
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w) = (
        got.to_dtype(DType::F64)?.to_vec::<f64>()?,
        want.to_dtype(DType::F64)?.to_vec::<f64>()?,
    );
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            close_rel(*a, *b, 1e-9),
            "{what}: element {i}: got {a}, want {b}"
        );
    }
    Ok(())
}

fn same_vals(what: &str, got: &Tensor, want: &[f64]) -> R {
    let g = got.to_dtype(DType::F64)?.to_vec::<f64>()?;
    assert_eq!(g.len(), want.len(), "{what}: numel");
    for (i, (a, b)) in g.iter().zip(want).enumerate() {
        assert!(
            close_rel(*a, *b, 1e-9),
            "{what}: element {i}: got {a}, reference {b}"
        );
    }
    Ok(())
}

/// Gradient of `sum(op(view) * w)` with respect to the leaf under `view`, for a fixed,
/// non-uniform `w` shaped like the output.
fn grad_through(
    op: &dyn Fn(&Tensor) -> tapegrad::Result<Tensor>,
    view: &Tensor,
    leaf: &Tensor,
) -> tapegrad::Result<Option<Tensor>> {
    let y = op(view)?;
    if !y.requires_grad() {
        return Ok(None);
    }
    let n = y.numel();
    let w = Tensor::arange_dtype(1, n as i64 + 1, 1, y.dtype())?
        .reshape(&y.shape().iter().map(|&s| s as i64).collect::<Vec<_>>())?;
    let loss = y.mul(&w)?.sum()?;
    Ok(autograd::grad(
        &[loss],
        std::slice::from_ref(leaf),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?[0]
        .clone())
}

/// Runs `op` on every layout: compares with the op on a contiguous copy (values, dtype,
/// shape, gradient) and returns (layout name, layout input, result) for extra checks.
fn check_layouts(
    name: &str,
    vals: &[f64],
    op: &dyn Fn(&Tensor) -> tapegrad::Result<Tensor>,
) -> tapegrad::Result<Vec<(&'static str, Tensor, Tensor)>> {
    let mut out = vec![];
    for (lname, x, leaf) in layouts(vals, true)? {
        let what = format!("{name} on {lname}");
        let y = op(&x)?;
        let yc = op(&x.contiguous()?)?;
        same(&what, &y, &yc)?;
        // gradient through the strided view equals the gradient through a contiguous copy
        let g1 = grad_through(op, &x, &leaf)?;
        let g2 = grad_through(&|v: &Tensor| op(&v.contiguous()?), &x, &leaf)?;
        match (g1, g2) {
            (Some(a), Some(b)) => same(&format!("{what} (grad)"), &a, &b)?,
            (None, None) => {}
            (a, b) => panic!(
                "{what}: grad presence differs: {} vs {}",
                a.is_some(),
                b.is_some()
            ),
        }
        out.push((lname, x, y));
    }
    Ok(out)
}

/// PyTorch's output layout of an elementwise op on one tensor: a permuted dense input keeps its
/// memory order, anything else is row-major.
fn expect_elementwise_strides(what: &str, lname: &str, y: &Tensor) {
    let want: Vec<usize> = if lname == "transposed" {
        vec![1, ROWS]
    } else {
        vec![COLS, 1]
    };
    assert_eq!(y.strides(), want, "{what} on {lname}: output strides");
}

#[test]
fn unary_ops_on_all_layouts() -> R {
    let table: Vec<UnaryRow> = vec![
        ("neg", Tensor::neg, |x| -x, false),
        ("abs", Tensor::abs, f64::abs, false),
        ("exp", Tensor::exp, f64::exp, false),
        ("expm1", Tensor::expm1, f64::exp_m1, false),
        ("log", Tensor::log, f64::ln, true),
        ("log2", Tensor::log2, f64::log2, true),
        ("log1p", Tensor::log1p, f64::ln_1p, true),
        ("sqrt", Tensor::sqrt, f64::sqrt, true),
        ("rsqrt", Tensor::rsqrt, |x| 1.0 / x.sqrt(), true),
        ("reciprocal", Tensor::reciprocal, |x| 1.0 / x, true),
        ("sin", Tensor::sin, f64::sin, false),
        ("cos", Tensor::cos, f64::cos, false),
        ("tan", Tensor::tan, f64::tan, false),
        ("atan", Tensor::atan, f64::atan, false),
        ("sinh", Tensor::sinh, f64::sinh, false),
        ("tanh", Tensor::tanh, f64::tanh, false),
        (
            "sigmoid",
            Tensor::sigmoid,
            |x| 1.0 / (1.0 + (-x).exp()),
            false,
        ),
        ("silu", Tensor::silu, |x| x / (1.0 + (-x).exp()), false),
        ("relu", Tensor::relu, |x| x.max(0.0), false),
        ("floor", Tensor::floor, f64::floor, false),
        ("ceil", Tensor::ceil, f64::ceil, false),
        ("trunc", Tensor::trunc, f64::trunc, false),
        (
            "sign",
            Tensor::sign,
            |x| if x == 0.0 { 0.0 } else { x.signum() },
            false,
        ),
        (
            "clamp",
            |t| t.clamp(Some(Scalar::from(-0.5)), Some(Scalar::from(1.0))),
            |x| x.clamp(-0.5, 1.0),
            false,
        ),
        ("pow_scalar", |t| t.pow(2.5), |x| x.powf(2.5), true),
        ("mul_scalar", |t| t.mul(-1.5), |x| x * -1.5, false),
        ("add_scalar", |t| t.add(2), |x| x + 2.0, false),
        (
            "leaky_relu",
            |t| t.leaky_relu(0.1),
            |x| if x > 0.0 { x } else { 0.1 * x },
            false,
        ),
    ];
    for (name, f, r, pos) in table {
        let vals = values(1, pos);
        for (lname, x, y) in check_layouts(name, &vals, &|t| f(t))? {
            let xs = x.to_vec::<f64>()?;
            let want: Vec<f64> = xs.iter().map(|&v| r(v)).collect();
            same_vals(&format!("{name} on {lname}"), &y, &want)?;
            expect_elementwise_strides(name, lname, &y);
        }
    }
    Ok(())
}

#[test]
fn inplace_unary_ops_on_all_layouts() -> R {
    let table: Vec<RefRow> = vec![
        ("exp_", Tensor::exp_, f64::exp),
        ("neg_", Tensor::neg_, |x| -x),
        ("sin_", Tensor::sin_, f64::sin),
        ("relu_", Tensor::relu_, |x| x.max(0.0)),
        ("mul_", |t| t.mul_(3.0), |x| x * 3.0),
        (
            "clamp_",
            |t| t.clamp_(Some(Scalar::from(0.0)), None),
            |x| x.max(0.0),
        ),
    ];
    for (name, f, r) in table {
        let vals = values(2, false);
        // expanded tensors overlap themselves: in-place writes are refused, nothing changes
        for (lname, x, leaf) in layouts(&vals, false)? {
            let before = x.to_vec::<f64>()?;
            let (v0, lv0) = (x.version(), leaf.to_vec::<f64>()?);
            let res = f(&x);
            if lname == "expanded" {
                let e = res.expect_err("in-place on an expanded tensor must fail");
                assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{name}");
                assert_eq!(x.version(), v0);
                assert_eq!(leaf.to_vec::<f64>()?, lv0);
                continue;
            }
            let y = res?;
            assert!(y.is_same(&x), "{name} returns self");
            assert_eq!(x.version(), v0 + 1, "{name} on {lname}: version");
            let want: Vec<f64> = before.iter().map(|&v| r(v)).collect();
            same_vals(&format!("{name} on {lname}"), &x, &want)?;
            // the write went through the view into the leaf's storage
            let lv = leaf.to_vec::<f64>()?;
            let changed = lv
                .iter()
                .zip(&lv0)
                .filter(|(a, b)| !close_rel(**a, **b, 1e-9))
                .count();
            let expect_changed = before
                .iter()
                .zip(&want)
                .filter(|(a, b)| !close_rel(**a, **b, 1e-9))
                .count();
            assert_eq!(
                changed, expect_changed,
                "{name} on {lname}: writes outside the view"
            );
        }
    }
    Ok(())
}

type Ref2 = fn(f64, f64) -> f64;

#[test]
fn binary_ops_on_all_layout_pairs() -> R {
    let table: Vec<(&str, F2, Ref2, bool)> = vec![
        ("add", |a, b| a.add(b), |x, y| x + y, false),
        ("sub", |a, b| a.sub(b), |x, y| x - y, false),
        ("mul", |a, b| a.mul(b), |x, y| x * y, false),
        ("div", |a, b| a.div(b), |x, y| x / y, true),
        ("maximum", Tensor::maximum, f64::max, false),
        ("minimum", Tensor::minimum, f64::min, false),
        ("atan2", Tensor::atan2, f64::atan2, false),
        ("hypot", Tensor::hypot, f64::hypot, false),
        ("pow", |a, b| a.pow(b), f64::powf, true),
        (
            "remainder",
            |a, b| a.remainder(b),
            |x, y| x - (x / y).floor() * y,
            true,
        ),
        ("fmod", |a, b| a.fmod(b), |x, y| x % y, true),
        (
            // values and layouts only: PyTorch's floor_divide has no derivative (backward
            // through it is NotImplemented, tested in unary.rs)
            "floor_divide",
            |a, b| Ok(a.floor_divide(b)?.detach()),
            |x, y| (x / y).floor(),
            true,
        ),
        (
            "div_trunc",
            |a, b| a.div_rounding(b, RoundingMode::Trunc),
            |x, y| (x / y).trunc(),
            true,
        ),
        (
            "lerp",
            |a, b| a.lerp(b, 0.25),
            |x, y| x + 0.25 * (y - x),
            false,
        ),
    ];
    for (name, f, r, pos) in table {
        let (va, vb) = (values(3, pos), values(4, pos));
        for (la, a, _) in layouts(&va, false)? {
            // the second operand in each layout, via check_layouts (values + gradient)
            let a2 = a.clone();
            let res = check_layouts(&format!("{name}(a[{la}], b)"), &vb, &|b| f(&a2, b))?;
            for (lb, b, y) in res {
                let (xa, xb) = (a.to_vec::<f64>()?, b.to_vec::<f64>()?);
                let want: Vec<f64> = xa.iter().zip(&xb).map(|(&x, &y)| r(x, y)).collect();
                same_vals(&format!("{name}({la}, {lb})"), &y, &want)?;
                if lb == "contiguous" {
                    // the first operand decides the memory order when the other is row-major
                    expect_elementwise_strides(name, la, &f(&a, &b.contiguous()?)?);
                }
            }
            // broadcast against a row and a 0-dim tensor
            let row = Tensor::from_vec(vb[..COLS].to_vec(), &[COLS])?;
            let y = f(&a, &row)?;
            let xa = a.to_vec::<f64>()?;
            let want: Vec<f64> = (0..ROWS * COLS).map(|i| r(xa[i], vb[i % COLS])).collect();
            same_vals(&format!("{name}({la}, row)"), &y, &want)?;
            let z = Tensor::scalar(vb[5]);
            let want: Vec<f64> = xa.iter().map(|&x| r(x, vb[5])).collect();
            same_vals(&format!("{name}({la}, 0-d)"), &f(&a, &z)?, &want)?;
        }
    }
    Ok(())
}

#[test]
fn comparison_and_logical_ops_on_all_layouts() -> R {
    let table: Vec<CmpRow> = vec![
        ("eq", |a, b| a.eq(b), |x, y| x == y),
        ("ne", |a, b| a.ne(b), |x, y| x != y),
        ("lt", |a, b| a.lt(b), |x, y| x < y),
        ("le", |a, b| a.le(b), |x, y| x <= y),
        ("gt", |a, b| a.gt(b), |x, y| x > y),
        ("ge", |a, b| a.ge(b), |x, y| x >= y),
        ("logical_and", Tensor::logical_and, |x, y| {
            x != 0.0 && y != 0.0
        }),
        ("logical_or", Tensor::logical_or, |x, y| {
            x != 0.0 || y != 0.0
        }),
        ("logical_xor", Tensor::logical_xor, |x, y| {
            (x != 0.0) != (y != 0.0)
        }),
    ];
    let va = values(5, false);
    // b equals a in every other element, so each comparison sees ties
    let vb: Vec<f64> = va
        .iter()
        .enumerate()
        .map(|(i, &v)| if i % 2 == 0 { v } else { -v + 0.5 })
        .collect();
    for (name, f, r) in table {
        for (la, a, _) in layouts(&va, false)? {
            for (lb, b, _) in layouts(&vb, false)? {
                let y = f(&a, &b)?;
                assert_eq!(y.dtype(), DType::Bool, "{name}");
                same(
                    &format!("{name}({la}, {lb}) vs contiguous"),
                    &y,
                    &f(&a.contiguous()?, &b.contiguous()?)?,
                )?;
                let (xa, xb) = (a.to_vec::<f64>()?, b.to_vec::<f64>()?);
                let want: Vec<bool> = xa.iter().zip(&xb).map(|(&x, &y)| r(x, y)).collect();
                assert_eq!(y.to_vec::<bool>()?, want, "{name}({la}, {lb})");
                if lb == "contiguous" {
                    expect_elementwise_strides(name, la, &y);
                }
            }
        }
    }
    Ok(())
}

type RefRed = fn(&[f64]) -> Vec<f64>;

fn rows_of(x: &[f64]) -> Vec<&[f64]> {
    x.chunks(COLS).collect()
}
fn col(x: &[f64], j: usize) -> Vec<f64> {
    (0..ROWS).map(|i| x[i * COLS + j]).collect()
}
fn lse(v: &[f64]) -> f64 {
    let m = v.iter().cloned().fold(f64::NEG_INFINITY, f64::max);
    m + v.iter().map(|x| (x - m).exp()).sum::<f64>().ln()
}
fn var(v: &[f64], c: f64) -> f64 {
    let m = v.iter().sum::<f64>() / v.len() as f64;
    v.iter().map(|x| (x - m) * (x - m)).sum::<f64>() / (v.len() as f64 - c)
}

#[test]
fn reductions_on_all_layouts() -> R {
    let table: Vec<(&str, F1, Option<RefRed>)> = vec![
        ("sum", |t| t.sum(), Some(|x| vec![x.iter().sum()])),
        (
            "sum_dim0",
            |t| t.sum_dims(&[0], false),
            Some(|x| (0..COLS).map(|j| col(x, j).iter().sum()).collect()),
        ),
        (
            "sum_dim1_keep",
            |t| t.sum_dims(&[1], true),
            Some(|x| rows_of(x).iter().map(|r| r.iter().sum()).collect()),
        ),
        (
            "mean_dim1",
            |t| t.mean(&[1], false, None),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .map(|r| r.iter().sum::<f64>() / COLS as f64)
                    .collect()
            }),
        ),
        (
            "prod_dim0",
            |t| t.prod(&[0], false),
            Some(|x| (0..COLS).map(|j| col(x, j).iter().product()).collect()),
        ),
        (
            "amax_dim1",
            |t| t.amax(&[1], false),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .map(|r| r.iter().cloned().fold(f64::MIN, f64::max))
                    .collect()
            }),
        ),
        (
            "amin_all",
            |t| t.amin((), false),
            Some(|x| vec![x.iter().cloned().fold(f64::MAX, f64::min)]),
        ),
        (
            "max_dim0",
            |t| Ok(t.max_dim(0, false)?.0),
            Some(|x| {
                (0..COLS)
                    .map(|j| col(x, j).iter().cloned().fold(f64::MIN, f64::max))
                    .collect()
            }),
        ),
        ("max_dim0_idx", |t| Ok(t.max_dim(0, false)?.1), None),
        ("min_dim1_idx", |t| Ok(t.min_dim(1, true)?.1), None),
        ("argmax_dim1", |t| t.argmax(1, false), None),
        ("argmin_all", |t| t.argmin(None, false), None),
        (
            "var_dim1",
            |t| t.var(&[1], 1.0, false),
            Some(|x| rows_of(x).iter().map(|r| var(r, 1.0)).collect()),
        ),
        (
            "std_all",
            |t| t.std((), 0.0, false),
            Some(|x| vec![var(x, 0.0).sqrt()]),
        ),
        (
            "logsumexp_dim1",
            |t| t.logsumexp(&[1], false),
            Some(|x| rows_of(x).iter().map(|r| lse(r)).collect()),
        ),
        (
            "norm_l2_dim1",
            |t| t.norm(tapegrad::NormOrd::L2, &[1], false),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .map(|r| r.iter().map(|v| v * v).sum::<f64>().sqrt())
                    .collect()
            }),
        ),
        (
            "norm_l1_all",
            |t| t.norm(tapegrad::NormOrd::L1, (), false),
            Some(|x| vec![x.iter().map(|v| v.abs()).sum()]),
        ),
        (
            "norm_inf_dim0",
            |t| t.norm(tapegrad::NormOrd::Inf, &[0], false),
            None,
        ),
        (
            "cumsum_dim1",
            |t| t.cumsum(1, None),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .flat_map(|r| {
                        r.iter()
                            .scan(0.0, |s, v| {
                                *s += v;
                                Some(*s)
                            })
                            .collect::<Vec<_>>()
                    })
                    .collect()
            }),
        ),
        ("cumsum_dim0", |t| t.cumsum(0, None), None),
        ("cumprod_dim1", |t| t.cumprod(1, None), None),
        (
            "softmax_dim1",
            |t| t.softmax(1),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .flat_map(|r| {
                        let l = lse(r);
                        r.iter().map(move |v| (v - l).exp())
                    })
                    .collect()
            }),
        ),
        ("softmax_dim0", |t| t.softmax(0), None),
        (
            "log_softmax_dim1",
            |t| t.log_softmax(1),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .flat_map(|r| {
                        let l = lse(r);
                        r.iter().map(move |v| v - l)
                    })
                    .collect()
            }),
        ),
        (
            "all_dim1",
            |t| t.all(&[1], false),
            Some(|x| {
                rows_of(x)
                    .iter()
                    .map(|r| f64::from(u8::from(r.iter().all(|v| *v != 0.0))))
                    .collect()
            }),
        ),
        ("any_dim0", |t| t.any(&[0], false), None),
    ];
    for (name, f, r) in table {
        let vals = values(6, false);
        for (lname, x, y) in check_layouts(name, &vals, &|t| f(t))? {
            if let Some(r) = r {
                same_vals(&format!("{name} on {lname}"), &y, &r(&x.to_vec::<f64>()?))?;
            }
        }
    }
    Ok(())
}

#[test]
fn matmul_family_on_all_layout_pairs() -> R {
    let (va, vb) = (values(7, false), values(8, false));
    for (la, a, _) in layouts(&va, false)? {
        let a2 = a.clone();
        // b is [3, 4] in each layout; a @ b^T is [3, 3]
        let ops: Vec<OpRow<'_>> = vec![
            ("matmul", Box::new(move |b: &Tensor| a2.matmul(&b.t()?))),
            (
                "mm",
                Box::new({
                    let a = a.clone();
                    move |b: &Tensor| a.mm(&b.t()?)
                }),
            ),
            (
                "linear",
                Box::new({
                    let a = a.clone();
                    move |b: &Tensor| Tensor::linear(&a, b, None)
                }),
            ),
            (
                "bmm",
                Box::new({
                    let a = a.clone();
                    move |b: &Tensor| a.unsqueeze(0)?.bmm(&b.t()?.unsqueeze(0)?)
                }),
            ),
            (
                "addmm",
                Box::new({
                    let a = a.clone();
                    move |b: &Tensor| b.narrow(1, 0, 3)?.addmm(&a, &b.t()?, 0.5, 2.0)
                }),
            ),
        ];
        for (name, op) in ops {
            for (lb, b, y) in check_layouts(&format!("{name}(a[{la}], b)"), &vb, &*op)? {
                let (xa, xb) = (a.to_vec::<f64>()?, b.to_vec::<f64>()?);
                let mut want = vec![0.0; ROWS * ROWS];
                for i in 0..ROWS {
                    for j in 0..ROWS {
                        want[i * ROWS + j] =
                            (0..COLS).map(|k| xa[i * COLS + k] * xb[j * COLS + k]).sum();
                        if name == "addmm" {
                            want[i * ROWS + j] = 2.0 * want[i * ROWS + j] + 0.5 * xb[i * COLS + j];
                        }
                    }
                }
                same_vals(&format!("{name}({la}, {lb})"), &y, &want)?;
            }
        }
        // matrix-vector, dot and outer with a strided vector (a column of each layout)
        for (lb, b, _) in layouts(&vb, false)? {
            let v = b.select(0, 1)?; // [4], stride depends on the layout
            let xa = a.to_vec::<f64>()?;
            let xv = v.to_vec::<f64>()?;
            let mv: Vec<f64> = (0..ROWS)
                .map(|i| (0..COLS).map(|k| xa[i * COLS + k] * xv[k]).sum())
                .collect();
            same_vals(&format!("mv({la}, {lb})"), &a.matmul(&v)?, &mv)?;
            let r0 = a.select(0, 0)?;
            let d: f64 = (0..COLS).map(|k| xa[k] * xv[k]).sum();
            same_vals(&format!("dot({la}, {lb})"), &r0.dot(&v)?, &[d])?;
            let o: Vec<f64> = (0..COLS)
                .flat_map(|i| (0..COLS).map(move |j| (i, j)))
                .map(|(i, j)| xa[i] * xv[j])
                .collect();
            same_vals(&format!("outer({la}, {lb})"), &r0.outer(&v)?, &o)?;
        }
    }
    Ok(())
}

#[test]
fn data_movement_on_all_layouts() -> R {
    let idx_cols = Tensor::from_vec(vec![3i64, 0, 0, 2, 1, 1], &[3, 2])?;
    let idx_rows = Tensor::from_vec(vec![2i64, 0, 2], &[3])?;
    let scat = Tensor::from_vec(vec![0i64, 1, 2, 3, 3, 2, 1, 0, 1, 1, 0, 0], &[3, 4])?;
    let table: Vec<OpRow<'_>> = vec![
        ("contiguous", Box::new(|t| t.contiguous())),
        ("copy", Box::new(|t| t.copy())),
        ("to_f32", Box::new(|t| t.to_dtype(DType::F32))),
        (
            "transpose_contiguous",
            Box::new(|t| t.transpose(0, 1)?.contiguous()),
        ),
        ("reshape", Box::new(|t| t.reshape(&[2, 6]))),
        ("flip0", Box::new(|t| t.flip(&[0]))),
        ("flip01", Box::new(|t| t.flip(&[0, 1]))),
        ("roll", Box::new(|t| t.roll(&[1, -1], &[0, 1]))),
        ("repeat", Box::new(|t| t.repeat(&[2, 1, 2]))),
        ("tril", Box::new(|t| t.tril(0))),
        ("triu1", Box::new(|t| t.triu(1))),
        ("cat1", Box::new(|t| Tensor::cat(&[t, &t.neg()?], 1))),
        ("stack", Box::new(|t| Tensor::stack(&[t, t], 0))),
        ("narrow", Box::new(|t| t.narrow(1, 1, 2)?.contiguous())),
        ("gather", Box::new(move |t| t.gather(1, &idx_cols))),
        (
            "index_select",
            Box::new(move |t| t.index_select(0, &idx_rows)),
        ),
        (
            "scatter",
            Box::new({
                let s = scat.clone();
                move |t| t.zeros_like()?.scatter_add(1, &s, t)
            }),
        ),
        (
            "scatter_reduce",
            Box::new({
                let s = scat.clone();
                move |t| {
                    t.scatter_reduce(1, &s, &t.mul(2.0)?, ScatterReduce::Amax, IncludeSelf::Yes)
                }
            }),
        ),
        (
            "where",
            Box::new(|t| Tensor::where_(&t.gt(0.0)?, t, &t.mul(-2.0)?)),
        ),
        ("masked_fill", Box::new(|t| t.masked_fill(&t.lt(0.0)?, 9.0))),
        ("masked_select", Box::new(|t| t.masked_select(&t.ge(0.0)?))),
        ("nonzero", Box::new(|t| t.nonzero())),
        (
            "sort",
            Box::new(|t| Ok(t.sort(1, false, Stability::Stable)?.0)),
        ),
        (
            "sort_desc_idx",
            Box::new(|t| Ok(t.sort(0, true, Stability::Stable)?.1)),
        ),
        (
            "argsort",
            Box::new(|t| t.argsort(1, false, Stability::Stable)),
        ),
        ("topk", Box::new(|t| Ok(t.topk(2, 1, true, true)?.0))),
        (
            "topk_small_idx",
            Box::new(|t| Ok(t.topk(2, 0, false, true)?.1)),
        ),
        (
            "one_hot",
            Box::new(|t| t.gt(0.0)?.to_dtype(DType::I64)?.one_hot(2)),
        ),
    ];
    for (name, f) in &table {
        let vals = values(9, false);
        for (lname, x, y) in check_layouts(name, &vals, &**f)? {
            let xs = x.to_vec::<f64>()?;
            let what = format!("{name} on {lname}");
            match *name {
                "flip0" => same_vals(
                    &what,
                    &y,
                    &(0..ROWS)
                        .rev()
                        .flat_map(|i| xs[i * COLS..(i + 1) * COLS].to_vec())
                        .collect::<Vec<_>>(),
                )?,
                "index_select" => same_vals(
                    &what,
                    &y,
                    &[2, 0, 2]
                        .iter()
                        .flat_map(|&i| xs[i * COLS..(i + 1) * COLS].to_vec())
                        .collect::<Vec<_>>(),
                )?,
                "masked_select" => same_vals(
                    &what,
                    &y,
                    &xs.iter().cloned().filter(|v| *v >= 0.0).collect::<Vec<_>>(),
                )?,
                "sort" => {
                    let want: Vec<f64> = rows_of(&xs)
                        .iter()
                        .flat_map(|r| {
                            let mut r = r.to_vec();
                            r.sort_by(|a, b| a.partial_cmp(b).unwrap());
                            r
                        })
                        .collect();
                    same_vals(&what, &y, &want)?;
                }
                "tril" => {
                    let want: Vec<f64> = (0..ROWS * COLS)
                        .map(|k| if k % COLS <= k / COLS { xs[k] } else { 0.0 })
                        .collect();
                    same_vals(&what, &y, &want)?;
                }
                "nonzero" => assert_eq!(y.strides(), vec![1, y.shape()[0]], "{what}: column-major"),
                _ => {}
            }
        }
    }
    Ok(())
}

mod errors;

/// The strides of gradients through `unsqueeze` and `squeeze` are PyTorch's: `unsqueeze`'s
/// backward is `grad.squeeze(dim)` (the other strides kept) and `squeeze`'s is `unsqueeze` of
/// the removed dims (stride `size * stride` of the next dim, 1 at the end), never a `reshape`
/// (which computes fresh strides for size-1 dims). Recorded from PyTorch 2.15, with the two
/// einsum cases of the sweep (`sw_einsum_0032`, `sw_einsum_0043`) whose second-order gradient
/// strides depended on it.
#[test]
fn squeeze_unsqueeze_grad_strides_are_torch() -> R {
    let opts = || {
        autograd::GradOptions::default()
            .retain_graph(true)
            .create_graph(true)
    };
    let seq = |shape: &[usize]| -> Tensor {
        let n: usize = shape.iter().product();
        Tensor::from_vec((0..n).map(|i| i as f64).collect::<Vec<_>>(), shape).unwrap()
    };
    // unsqueeze: a gradient [1, 2, 1, 3] with strides [6, 3, 1, 1]
    let x = Tensor::zeros(&[2, 1, 3], DType::F64)?.requires_grad_(true)?;
    let y = x.unsqueeze(0)?;
    let g = seq(&[1, 2, 3, 1]).permute([0, 1, 3, 2])?;
    let r = autograd::grad(&[y], std::slice::from_ref(&x), &[Some(g)], opts())?;
    let r = r[0].clone().unwrap();
    assert_eq!((r.shape(), r.strides()), (vec![2, 1, 3], vec![3, 1, 1]));
    assert_eq!(r.to_vec::<f64>()?, vec![0.0, 1.0, 2.0, 3.0, 4.0, 5.0]);
    // squeeze (all dims and one dim) of a transposed gradient
    let x = Tensor::zeros(&[2, 1, 3, 1], DType::F64)?.requires_grad_(true)?;
    let g = seq(&[3, 2]).t()?;
    let r = autograd::grad(
        &[x.squeeze()?],
        std::slice::from_ref(&x),
        &[Some(g)],
        opts(),
    )?;
    let r = r[0].clone().unwrap();
    assert_eq!(
        (r.shape(), r.strides()),
        (vec![2, 1, 3, 1], vec![1, 6, 2, 1])
    );
    let g = seq(&[3, 1, 2]).permute([2, 1, 0])?;
    let y = x.squeeze_dim(3)?;
    let r = autograd::grad(&[y], std::slice::from_ref(&x), &[Some(g)], opts())?;
    let r = r[0].clone().unwrap();
    assert_eq!(r.strides(), vec![1, 2, 2, 1]);
    // the sweep's einsum cases: first-order gradients under create_graph
    // (equation, shape of a, shape of b, strides of grad a, strides of grad b)
    type EinsumRow = (
        &'static str,
        [usize; 4],
        &'static [usize],
        [usize; 4],
        &'static [usize],
    );
    let cases: [EinsumRow; 2] = [
        (
            "...ij,...jk",
            [2, 1, 2, 3],
            &[3, 3, 2],
            [6, 1, 3, 1],
            &[2, 6, 1],
        ),
        (
            "bhqd,bhkd->bhqk",
            [1, 2, 3, 4],
            &[2, 1, 5, 4],
            [1, 12, 4, 1],
            &[5, 1, 1, 10],
        ),
    ];
    for (eq, sa, sb, want_a, want_b) in cases {
        let a = seq(&sa).requires_grad_(true)?;
        let b = seq(sb).requires_grad_(true)?;
        let out = Tensor::einsum(eq, &[&a, &b])?;
        let ct = Tensor::ones(&out.shape(), DType::F64)?;
        let r = autograd::grad(&[out], &[a, b], &[Some(ct)], opts())?;
        let (ga, gb) = (r[0].clone().unwrap(), r[1].clone().unwrap());
        assert_eq!(ga.strides(), want_a.to_vec(), "{eq}: grad a");
        assert_eq!(gb.strides(), want_b, "{eq}: grad b");
    }
    Ok(())
}
