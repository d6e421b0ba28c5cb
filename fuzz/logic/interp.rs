//! Fuzz target `interp`: a small interpreter running random op sequences (pointwise, in-place,
//! aliasing in-place, views, reductions, matmul, copy_, detach, no_grad, backward) over a pool
//! of f64 tensors with autograd. Invariants: no panic; a failing op leaves every tensor
//! unchanged (values, layout, storage, version); versions never decrease and a successful
//! in-place op bumps its target exactly once; gradients have their leaf's shape; self-aliasing
//! in-place ops give PyTorch's results.

use super::check::{MAX_READ, guarded};
use super::input::Input;
use tapegrad::autograd::no_grad;
use tapegrad::{DType, Tensor};

const POOL: usize = 8;

fn leaf(inp: &mut Input) -> Tensor {
    let nd = inp.small(3);
    let shape: Vec<usize> = (0..nd).map(|_| 1 + inp.small(3)).collect();
    let n: usize = shape.iter().product();
    let v: Vec<f64> = (0..n).map(|_| (inp.u8() as f64 - 128.0) / 32.0).collect();
    Tensor::from_vec(v, &shape).unwrap()
}

fn unary(t: &Tensor, k: usize, inplace: bool) -> tapegrad::Result<Tensor> {
    match (k, inplace) {
        (0, false) => t.exp(),
        (0, true) => t.exp_(),
        (1, false) => t.neg(),
        (1, true) => t.neg_(),
        (2, false) => t.tanh(),
        (2, true) => t.tanh_(),
        (3, false) => t.relu(),
        (3, true) => t.relu_(),
        (4, false) => t.sigmoid(),
        (4, true) => t.sigmoid_(),
        (5, false) => t.sqrt(),
        (5, true) => t.sqrt_(),
        (_, false) => t.abs(),
        (_, true) => t.abs_(),
    }
}

fn binary(a: &Tensor, b: &Tensor, k: usize, inplace: bool) -> tapegrad::Result<Tensor> {
    match (k, inplace) {
        (0, false) => a.add(b),
        (0, true) => a.add_(b),
        (1, false) => a.sub(b),
        (1, true) => a.sub_(b),
        (2, false) => a.mul(b),
        (2, true) => a.mul_(b),
        (3, false) => a.div(b),
        (3, true) => a.div_(b),
        (_, false) => a.maximum(b),
        (_, true) => a.maximum_(b),
    }
}

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec().unwrap()
}

fn same_bits(a: &[f64], b: &[f64]) -> bool {
    a.len() == b.len()
        && a.iter()
            .zip(b)
            .all(|(x, y)| x.to_bits() == y.to_bits() || (x.is_nan() && y.is_nan()))
}

/// Entry point: runs one program.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let mut leaves = Vec::new();
    let mut pool = Vec::new();
    for _ in 0..1 + inp.small(2) {
        let t = leaf(&mut inp);
        let t = t.requires_grad_(inp.bool()).unwrap();
        leaves.push(t.clone());
        pool.push(t);
    }
    let steps = inp.small(24);
    for step in 0..steps {
        if inp.is_empty() {
            break;
        }
        let a = pool[inp.below(pool.len())].clone();
        let b = pool[inp.below(pool.len())].clone();
        let op = inp.below(18);
        let ctx = format!(
            "interp step {step} op {op} a {:?} b {:?}",
            a.layout(),
            b.layout()
        );
        let v0 = a.version();
        let k = inp.below(8);
        let out: Option<Tensor> = match op {
            0 => guarded(&pool, &ctx, || unary(&a, k, false)),
            1 => {
                let r = guarded(&pool, &ctx, || unary(&a, k, true));
                if r.is_some() {
                    assert_eq!(a.version(), v0 + 1, "{ctx}: in-place bumps once");
                }
                r
            }
            2 => guarded(&pool, &ctx, || binary(&a, &b, k, false)),
            3 => {
                let r = guarded(&pool, &ctx, || binary(&a, &b, k, true));
                if r.is_some() {
                    assert_eq!(a.version(), v0 + 1, "{ctx}: in-place bumps once");
                }
                r
            }
            4 => {
                // aliasing in-place ops
                let before = vals(&a);
                match inp.below(4) {
                    0 => {
                        let r = guarded(&pool, &ctx, || a.add_(&a));
                        if r.is_some() {
                            let want: Vec<f64> = before.iter().map(|x| x + x).collect();
                            assert!(same_bits(&vals(&a), &want), "{ctx}: x.add_(x)");
                        }
                        r
                    }
                    1 => {
                        let r = guarded(&pool, &ctx, || a.mul_(&a.flip(&[0])?));
                        if r.is_some() {
                            let want: Vec<f64> = before
                                .iter()
                                .zip(before.iter().rev())
                                .map(|(x, y)| x * y)
                                .collect();
                            if a.dim() == 1 {
                                assert!(same_bits(&vals(&a), &want), "{ctx}: x.mul_(x.flip(0))");
                            }
                        }
                        r
                    }
                    2 => guarded(&pool, &ctx, || a.copy_(&a.t()?)),
                    _ => guarded(&pool, &ctx, || a.copy_(&b)),
                }
            }
            5 => {
                let d = inp.dim(a.dim());
                let (s, l) = (inp.small(3) as i64, inp.small(3));
                guarded(&pool, &ctx, || a.narrow(d, s, l))
            }
            6 => guarded(&pool, &ctx, || a.t()),
            7 => guarded(&pool, &ctx, || a.view(&[-1])),
            8 => {
                let mut s: Vec<i64> = a.shape().iter().map(|&x| x as i64).collect();
                s.insert(0, inp.small(3) as i64);
                guarded(&pool, &ctx, || a.expand(&s))
            }
            9 => {
                let (d, i) = (inp.dim(a.dim()), inp.small(3) as i64 - 1);
                guarded(&pool, &ctx, || a.select(d, i))
            }
            10 => guarded(&pool, &ctx, || a.sum()),
            11 => {
                let d = inp.dim(a.dim());
                let keep = inp.bool();
                guarded(&pool, &ctx, || a.sum_dims(&[d], keep))
            }
            12 => guarded(&pool, &ctx, || a.mean((), false, None)),
            13 => guarded(&pool, &ctx, || a.matmul(&b)),
            14 => {
                if inp.bool() {
                    Some(a.detach())
                } else {
                    guarded(&pool, &ctx, || a.copy())
                }
            }
            15 => {
                let _g = no_grad();
                guarded(&pool, &ctx, || binary(&a, &b, k, inp.bool()))
            }
            16 => {
                if a.requires_grad() && a.numel() <= MAX_READ {
                    let retain = inp.bool();
                    let r = guarded(&pool, &ctx, || {
                        a.sum()?.backward_with(
                            None,
                            tapegrad::autograd::BackwardOptions::default().retain_graph(retain),
                        )
                    });
                    if r.is_some() {
                        for l in &leaves {
                            if let Some(g) = l.grad() {
                                assert_eq!(g.shape(), l.shape(), "{ctx}: grad shape");
                                assert_eq!(g.dtype(), DType::F64, "{ctx}: grad dtype");
                            }
                        }
                    }
                }
                None
            }
            _ => {
                for l in &leaves {
                    l.set_grad(None).unwrap();
                }
                None
            }
        };
        if let Some(t) = out {
            if t.numel() > MAX_READ {
                continue;
            }
            if pool.len() < POOL {
                pool.push(t);
            } else {
                let i = inp.below(POOL);
                pool[i] = t;
            }
        }
    }
}
