//! Property test: random chains of view ops map every element to the same storage element as an
//! independent reference model (an explicit n-d array of storage indices transformed op by op),
//! and writes through a view are seen by the base.

use proptest::prelude::*;
use tapegrad::{DType, Tensor};

/// Reference: explicit storage indices in row-major logical order, with a shape.
#[derive(Clone, Debug)]
struct Ref {
    shape: Vec<usize>,
    idx: Vec<usize>,
}

impl Ref {
    fn strides(shape: &[usize]) -> Vec<usize> {
        let mut s = vec![1; shape.len()];
        for i in (0..shape.len().saturating_sub(1)).rev() {
            s[i] = s[i + 1] * shape[i + 1];
        }
        s
    }
    fn at(&self, pos: &[usize]) -> usize {
        let st = Self::strides(&self.shape);
        self.idx[pos.iter().zip(&st).map(|(p, s)| p * s).sum::<usize>()]
    }
    /// Builds a new Ref of `shape` where element `pos` comes from `f(pos)`.
    fn build(shape: Vec<usize>, f: impl Fn(&[usize]) -> usize) -> Ref {
        let n: usize = shape.iter().product();
        let st = Self::strides(&shape);
        let idx = (0..n)
            .map(|lin| {
                let pos: Vec<usize> = st.iter().zip(&shape).map(|(s, d)| (lin / s) % d).collect();
                f(&pos)
            })
            .collect();
        Ref { shape, idx }
    }
}

#[derive(Clone, Debug)]
enum Op {
    Transpose(usize, usize),
    Narrow(usize, usize, usize),
    Select(usize, usize),
    Slice(usize, usize, usize),
    Unsqueeze(usize),
    Squeeze,
    Expand(usize),
    Diagonal,
    Flatten,
}

fn apply(t: &Tensor, r: &Ref, op: &Op) -> Option<(Tensor, Ref)> {
    let nd = r.shape.len();
    match *op {
        Op::Transpose(a, b) if nd >= 1 => {
            let (a, b) = (a % nd, b % nd);
            let mut shape = r.shape.clone();
            shape.swap(a, b);
            let rr = Ref::build(shape, |p| {
                let mut q = p.to_vec();
                q.swap(a, b);
                r.at(&q)
            });
            Some((t.transpose(a as i64, b as i64).ok()?, rr))
        }
        Op::Narrow(d, s, l) if nd >= 1 => {
            let d = d % nd;
            let size = r.shape[d];
            let s = s % (size + 1);
            let l = l % (size - s + 1);
            let mut shape = r.shape.clone();
            shape[d] = l;
            let rr = Ref::build(shape, |p| {
                let mut q = p.to_vec();
                q[d] += s;
                r.at(&q)
            });
            Some((t.narrow(d as i64, s as i64, l).ok()?, rr))
        }
        Op::Select(d, i) if nd >= 1 && r.shape[d % nd] > 0 => {
            let d = d % nd;
            let i = i % r.shape[d];
            let mut shape = r.shape.clone();
            shape.remove(d);
            let rr = Ref::build(shape, |p| {
                let mut q = p.to_vec();
                q.insert(d, i);
                r.at(&q)
            });
            Some((t.select(d as i64, i as i64).ok()?, rr))
        }
        Op::Slice(d, s, step) if nd >= 1 => {
            let d = d % nd;
            let size = r.shape[d];
            let s = s % (size + 1);
            let step = step % 3 + 1;
            let len = (size - s).div_ceil(step);
            let mut shape = r.shape.clone();
            shape[d] = len;
            let rr = Ref::build(shape, |p| {
                let mut q = p.to_vec();
                q[d] = s + q[d] * step;
                r.at(&q)
            });
            Some((
                t.slice(d as i64, Some(s as i64), None, step as i64).ok()?,
                rr,
            ))
        }
        Op::Unsqueeze(d) => {
            let d = d % (nd + 1);
            let mut shape = r.shape.clone();
            shape.insert(d, 1);
            let rr = Ref::build(shape, |p| {
                let mut q = p.to_vec();
                q.remove(d);
                r.at(&q)
            });
            Some((t.unsqueeze(d as i64).ok()?, rr))
        }
        Op::Squeeze => {
            let shape: Vec<usize> = r.shape.iter().copied().filter(|&s| s != 1).collect();
            let rr = Ref::build(shape, |p| {
                let mut it = p.iter();
                let q: Vec<usize> = r
                    .shape
                    .iter()
                    .map(|&s| if s == 1 { 0 } else { *it.next().unwrap() })
                    .collect();
                r.at(&q)
            });
            Some((t.squeeze().ok()?, rr))
        }
        Op::Expand(n) => {
            let n = n % 3 + 1;
            let mut shape = vec![n];
            shape.extend(r.shape.iter().map(|&s| if s == 1 { 2 } else { s }));
            let target: Vec<i64> = shape.iter().map(|&s| s as i64).collect();
            let rr = Ref::build(shape, |p| {
                let q: Vec<usize> = p[1..]
                    .iter()
                    .zip(&r.shape)
                    .map(|(&x, &s)| if s == 1 { 0 } else { x })
                    .collect();
                r.at(&q)
            });
            Some((t.expand(&target).ok()?, rr))
        }
        Op::Diagonal if nd >= 2 => {
            let k = r.shape[0].min(r.shape[1]);
            let mut shape: Vec<usize> = r.shape[2..].to_vec();
            shape.push(k);
            let rr = Ref::build(shape, |p| {
                let i = *p.last().unwrap();
                let mut q = vec![i, i];
                q.extend_from_slice(&p[..p.len() - 1]);
                r.at(&q)
            });
            Some((t.diagonal(0, 0, 1).ok()?, rr))
        }
        Op::Flatten => {
            let n: usize = r.shape.iter().product();
            let rr = Ref {
                shape: vec![n],
                idx: r.idx.clone(),
            };
            Some((t.reshape(&[-1]).ok()?, rr))
        }
        _ => None,
    }
}

fn op_strategy() -> impl Strategy<Value = Op> {
    prop_oneof![
        (0..4usize, 0..4usize).prop_map(|(a, b)| Op::Transpose(a, b)),
        (0..4usize, 0..5usize, 0..5usize).prop_map(|(d, s, l)| Op::Narrow(d, s, l)),
        (0..4usize, 0..5usize).prop_map(|(d, i)| Op::Select(d, i)),
        (0..4usize, 0..5usize, 0..3usize).prop_map(|(d, s, st)| Op::Slice(d, s, st)),
        (0..5usize).prop_map(Op::Unsqueeze),
        Just(Op::Squeeze),
        (0..3usize).prop_map(Op::Expand),
        Just(Op::Diagonal),
        Just(Op::Flatten),
    ]
}

proptest! {
    #![proptest_config(crate::common::proptest_config(256))]
    #[test]
    fn view_chains_match_reference(shape in prop::collection::vec(1..5usize, 1..4), ops in prop::collection::vec(op_strategy(), 1..6)) {
        let n: usize = shape.iter().product();
        let base = Tensor::arange_dtype(0, n as i64, 1, DType::F64).unwrap().reshape(&shape.iter().map(|&s| s as i64).collect::<Vec<_>>()).unwrap();
        let mut t = base.clone();
        let mut r = Ref { shape: shape.clone(), idx: (0..n).collect() };
        let mut expanded = false;
        for op in &ops {
            if let Some((nt, nr)) = apply(&t, &r, op) {
                expanded |= matches!(op, Op::Expand(_));
                t = nt;
                r = nr;
            }
        }
        prop_assert_eq!(t.shape(), r.shape.clone());
        let vals = t.to_vec::<f64>().unwrap();
        let want: Vec<f64> = r.idx.iter().map(|&i| i as f64).collect();
        prop_assert_eq!(vals, want);
        prop_assert!(t.is_view() || t.is_same(&base) || !t.shares_storage(&base));
        // A write through the view is seen by the base at the reference positions.
        if !expanded && !r.idx.is_empty() && t.shares_storage(&base) {
            t.fill_(-1.0).unwrap();
            let b = base.to_vec::<f64>().unwrap();
            for &i in &r.idx {
                prop_assert_eq!(b[i], -1.0);
            }
            prop_assert_eq!(base.version(), 1);
        }
    }
}
