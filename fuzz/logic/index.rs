//! Fuzz target `index`: mixed `TensorIndex` lists (ints, slices with any step, `NewAxis`,
//! `Ellipsis`, Python bools, int64/int32 index tensors, bool/uint8 masks, wrong-dtype tensors)
//! on strided views of an `arange` storage, so every value names its storage position. Checks:
//! getitem reads only positions of the source; setitem writes exactly the positions getitem
//! reads; the gradient of `x[idx].sum()` counts how often each position is read; failures change
//! nothing.

use super::check::{MAX_READ, guarded};
use super::input::Input;
use std::collections::HashSet;
use tapegrad::{DType, Tensor, TensorIndex};

fn small_shape(inp: &mut Input, max_nd: usize, max_size: usize) -> Vec<usize> {
    let nd = inp.small(max_nd);
    (0..nd).map(|_| inp.small(max_size)).collect()
}

fn index_entry(inp: &mut Input) -> TensorIndex {
    match inp.below(12) {
        0 | 1 => TensorIndex::Int(inp.geom()),
        2 | 3 => {
            let mut o = || {
                if inp.u8().is_multiple_of(3) {
                    None
                } else {
                    Some(inp.geom())
                }
            };
            let (start, stop) = (o(), o());
            let step = match inp.u8() % 8 {
                0 => inp.geom(),
                k => (k as i64 + 1) / 2,
            };
            TensorIndex::Slice { start, stop, step }
        }
        4 => TensorIndex::NewAxis,
        5 => TensorIndex::Ellipsis,
        6 => TensorIndex::Bool(inp.bool()),
        7 | 8 => {
            let shape = small_shape(inp, 2, 3);
            let n: usize = shape.iter().product();
            let v: Vec<i64> = (0..n).map(|_| (inp.u8() % 11) as i64 - 5).collect();
            let t = Tensor::from_vec(v, &shape).unwrap();
            TensorIndex::Tensor(if inp.u8().is_multiple_of(4) {
                t.to_dtype(DType::I32).unwrap()
            } else {
                t
            })
        }
        9 | 10 => {
            let shape = small_shape(inp, 3, 4);
            let n: usize = shape.iter().product();
            let v: Vec<bool> = (0..n).map(|_| inp.bool()).collect();
            let t = Tensor::from_vec(v, &shape).unwrap();
            TensorIndex::Tensor(if inp.u8().is_multiple_of(4) {
                t.to_dtype(DType::U8).unwrap()
            } else {
                t
            })
        }
        _ => TensorIndex::Tensor(match inp.below(3) {
            0 => Tensor::scalar((inp.u8() % 7) as i64 - 3),
            1 => Tensor::from_vec(vec![1.0f32], &[1]).unwrap(),
            _ => Tensor::from_vec(vec![0i64; 0], &[0]).unwrap(),
        }),
    }
}

/// Entry point: runs one program.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let shape = small_shape(&mut inp, 4, 4);
    let n: usize = shape.iter().product();
    let base = Tensor::from_vec((0..n).map(|i| i as f64).collect(), &shape).unwrap();
    let needs_grad = inp.bool();
    base.requires_grad_(needs_grad).unwrap();
    // a strided view of the base: values still name storage positions
    let x = match inp.below(4) {
        0 if base.dim() >= 2 => base.transpose(0, -1).unwrap(),
        1 if base.dim() >= 1 => base
            .slice(0, Some(inp.small(2) as i64), None, 1 + inp.small(1) as i64)
            .unwrap(),
        2 if base.dim() >= 1 => base.flip(&[0]).unwrap(),
        _ => base.alias().unwrap(),
    };
    let xs: Vec<f64> = x.to_vec().unwrap();
    let k = inp.small(5);
    let idx: Vec<TensorIndex> = (0..k).map(|_| index_entry(&mut inp)).collect();
    let pool = vec![base.clone(), x.clone()];
    let ctx = format!("index {:?} shape {:?}", describe(&idx), x.shape());
    let Some(r) = guarded(&pool, &ctx, || x.index(&idx)) else {
        return;
    };
    if r.numel() > MAX_READ {
        return;
    }
    let rv: Vec<f64> = r.to_vec().unwrap();
    for v in &rv {
        assert!(
            *v >= 0.0 && (*v as usize) < n && v.fract() == 0.0,
            "{ctx}: read {v}, not an element of the source"
        );
        assert!(xs.contains(v), "{ctx}: read {v}, outside the indexed view");
    }
    // setitem writes exactly what getitem reads
    let y = x.detach().copy().unwrap();
    let ypool = vec![y.clone()];
    if guarded(&ypool, &ctx, || y.index_set(&idx, -1.0)).is_none() {
        panic!("{ctx}: getitem succeeded but setitem with a scalar failed");
    }
    let read: HashSet<u64> = rv.iter().map(|v| v.to_bits()).collect();
    let yv: Vec<f64> = y.to_vec().unwrap();
    for (j, (a, b)) in xs.iter().zip(&yv).enumerate() {
        let hit = read.contains(&a.to_bits());
        assert_eq!(
            *b == -1.0,
            hit,
            "{ctx}: setitem and getitem disagree at element {j} (value {a})"
        );
    }
    if needs_grad && r.requires_grad() {
        r.sum().unwrap().backward().unwrap();
        let g: Vec<f64> = base.grad().unwrap().to_vec().unwrap();
        let mut want = vec![0.0; n];
        for v in &rv {
            want[*v as usize] += 1.0;
        }
        assert_eq!(g, want, "{ctx}: gradient is not the read count");
    }
}

fn describe(idx: &[TensorIndex]) -> Vec<String> {
    idx.iter()
        .map(|i| match i {
            TensorIndex::NewAxis => "None".into(),
            TensorIndex::Ellipsis => "...".into(),
            TensorIndex::Int(v) => format!("{v}"),
            TensorIndex::Bool(b) => format!("{b}"),
            TensorIndex::Slice { start, stop, step } => format!("{start:?}:{stop:?}:{step}"),
            TensorIndex::Tensor(t) => format!(
                "tensor({:?}, {:?})",
                t.dtype(),
                t.to_dtype(DType::I64)
                    .and_then(|t| t.to_vec::<i64>())
                    .unwrap_or_default()
            ),
        })
        .collect()
}
