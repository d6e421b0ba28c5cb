//! Fuzz target `views`: chains of view ops with arbitrary geometry (as_strided, view, reshape,
//! narrow, slice, expand, permute, select, diagonal, squeeze/unsqueeze, flatten, unflatten,
//! split, in-place view ops). Every view's values are checked against an independent strided
//! read of the (never modified) storage, failures must leave everything unchanged, and for views
//! derived from the leaf without re-striding, `sum().backward()` must give the leaf a gradient
//! equal to how often each element is referenced.

use super::check::{MAX_READ, check_in_bounds, guarded, offsets, values};
use super::input::Input;
use tapegrad::Tensor;

/// Largest view (in elements) whose run still checks gradients: a backward through it allocates
/// gradients of that size.
const MAX_BACKWARD: usize = 1 << 22;

/// The size of (possibly negative) dim `d` of `t`, if it has one.
fn size_at(t: &Tensor, d: i64) -> Option<usize> {
    let shape = t.shape();
    shape
        .get(d.rem_euclid(shape.len().max(1) as i64) as usize)
        .copied()
}

struct Entry {
    t: Tensor,
    /// The view reads the base's elements with plain storage semantics and its gradient must
    /// scatter back as reference counts.
    clean: bool,
}

fn i64_list(inp: &mut Input, max_len: usize) -> Vec<i64> {
    let n = inp.small(max_len);
    (0..n).map(|_| inp.geom()).collect()
}

fn opt(inp: &mut Input) -> Option<i64> {
    if inp.u8().is_multiple_of(4) {
        None
    } else {
        Some(inp.geom())
    }
}

/// Entry point: runs one program.
pub fn run(data: &[u8]) {
    let mut inp = Input::new(data);
    let n = inp.small(24);
    let storage: Vec<f64> = (0..n).map(|i| i as f64).collect();
    let base = Tensor::from_vec(storage.clone(), &[n]).unwrap();
    let base = match inp.u8() % 3 {
        0 if n.is_multiple_of(2) && n > 0 => base.view(&[2, -1]).unwrap(),
        1 if n.is_multiple_of(6) && n > 0 => base.view(&[-1, 2, 3]).unwrap(),
        _ => base,
    };
    let needs_grad = inp.bool();
    let base = base.requires_grad_(needs_grad).unwrap();
    let mut pool = vec![Entry {
        t: base.clone(),
        clean: true,
    }];
    // elements of the largest view made so far (bounds the gradients a backward materialises)
    let mut largest = base.numel();
    let steps = inp.small(12);
    for step in 0..steps {
        if inp.is_empty() {
            break;
        }
        let src_i = inp.below(pool.len());
        let src = pool[src_i].t.clone();
        let is_base = src_i == 0;
        let nd = src.dim();
        let op = inp.below(19);
        let ctx = format!("views step {step} op {op} on {:?}", src.layout());
        let tensors: Vec<Tensor> = pool.iter().map(|e| e.t.clone()).collect();
        let mut clean = pool[src_i].clean;
        let out: Option<Vec<Tensor>> = match op {
            0 => {
                let sizes = i64_list(&mut inp, 4);
                let mut strides = i64_list(&mut inp, 4);
                if !inp.u8().is_multiple_of(4) {
                    strides.resize(sizes.len(), 1);
                }
                let off = opt(&mut inp);
                // as_strided re-reads the storage: gradients are only reference counts when it
                // starts from the (contiguous, offset-0) base
                clean &= is_base;
                guarded(&tensors, &ctx, || src.as_strided(&sizes, &strides, off)).map(|t| vec![t])
            }
            1 => {
                let s = i64_list(&mut inp, 4);
                guarded(&tensors, &ctx, || src.view(&s)).map(|t| vec![t])
            }
            2 => {
                let s = i64_list(&mut inp, 4);
                if src.numel() > MAX_READ {
                    None
                } else {
                    guarded(&tensors, &ctx, || src.reshape(&s)).map(|t| vec![t])
                }
            }
            3 => {
                let (d, st, len) = (inp.dim(nd), inp.geom(), inp.size());
                guarded(&tensors, &ctx, || src.narrow(d, st, len)).map(|t| vec![t])
            }
            4 => {
                let (d, a, b, s) = (inp.dim(nd), opt(&mut inp), opt(&mut inp), inp.geom());
                guarded(&tensors, &ctx, || src.slice(d, a, b, s)).map(|t| vec![t])
            }
            5 => {
                let s = i64_list(&mut inp, 5);
                guarded(&tensors, &ctx, || src.expand(&s)).map(|t| vec![t])
            }
            6 => {
                let mut p: Vec<i64> = (0..nd as i64).collect();
                for i in (1..p.len()).rev() {
                    p.swap(i, inp.below(i + 1));
                }
                if inp.u8().is_multiple_of(4) {
                    p = i64_list(&mut inp, 4);
                }
                guarded(&tensors, &ctx, || src.permute(&p)).map(|t| vec![t])
            }
            7 => {
                let (a, b) = (inp.dim(nd), inp.dim(nd));
                guarded(&tensors, &ctx, || src.transpose(a, b)).map(|t| vec![t])
            }
            8 => {
                let (d, i) = (inp.dim(nd), inp.geom());
                guarded(&tensors, &ctx, || src.select(d, i)).map(|t| vec![t])
            }
            9 => {
                let (o, a, b) = (inp.geom(), inp.dim(nd), inp.dim(nd));
                guarded(&tensors, &ctx, || src.diagonal(o, a, b)).map(|t| vec![t])
            }
            10 => {
                let d = inp.dim(nd + 1);
                if inp.bool() {
                    guarded(&tensors, &ctx, || src.unsqueeze(d)).map(|t| vec![t])
                } else {
                    guarded(&tensors, &ctx, || src.squeeze_dim(d)).map(|t| vec![t])
                }
            }
            11 => {
                let (a, b) = (inp.dim(nd), inp.dim(nd));
                if src.numel() > MAX_READ {
                    None // flatten may copy (reshape): a legal multi-GB copy of a huge expanded view
                } else {
                    guarded(&tensors, &ctx, || src.flatten(a, b)).map(|t| vec![t])
                }
            }
            12 => {
                let d = inp.dim(nd);
                let s = i64_list(&mut inp, 3);
                guarded(&tensors, &ctx, || src.unflatten(d, &s)).map(|t| vec![t])
            }
            13 => {
                let (sz, d) = (inp.size(), inp.dim(nd));
                if sz == 0 || size_at(&src, d).is_some_and(|s| s / sz.max(1) > 64) {
                    None
                } else if inp.bool() {
                    guarded(&tensors, &ctx, || src.split(sz, d))
                } else {
                    guarded(&tensors, &ctx, || src.chunk(sz.min(64), d))
                }
            }
            14 if !is_base => {
                // in-place view ops re-point the tensor itself
                clean = false;
                pool[src_i].clean = false;
                let (a, b) = (inp.dim(nd), inp.dim(nd));
                let r = match inp.below(4) {
                    0 => guarded(&tensors, &ctx, || src.t_()),
                    1 => guarded(&tensors, &ctx, || src.transpose_(a, b)),
                    2 => guarded(&tensors, &ctx, || src.unsqueeze_(a)),
                    _ => guarded(&tensors, &ctx, || src.squeeze_(Some(a))),
                };
                r.map(|t| vec![t])
            }
            15 => {
                let (a, b) = (i64_list(&mut inp, 3), i64_list(&mut inp, 3));
                guarded(&tensors, &ctx, || src.movedim(&a, &b)).map(|t| vec![t])
            }
            16 => {
                let d = inp.dim(nd);
                let pieces = size_at(&src, d).unwrap_or(1);
                // an empty tensor may have a dim of 2^25: unbinding it is legal (as in PyTorch)
                // but builds that many tensors, beyond libFuzzer's rss limit (harness finding)
                if src.numel() > MAX_READ || pieces > 4096 {
                    None
                } else {
                    guarded(&tensors, &ctx, || src.unbind(d))
                }
            }
            17 => {
                if src.numel() > MAX_READ {
                    None
                } else {
                    let c = guarded(&tensors, &ctx, || src.contiguous());
                    if let Some(c) = &c {
                        assert_eq!(values(c), values(&src), "{ctx}: contiguous changed values");
                        assert!(c.is_contiguous(), "{ctx}: contiguous() is not contiguous");
                    }
                    clean = false;
                    c.map(|t| vec![t])
                }
            }
            _ => {
                let s = i64_list(&mut inp, 4);
                guarded(&tensors, &ctx, || src.squeeze_dims(&s)).map(|t| vec![t])
            }
        };
        for t in out.into_iter().flatten() {
            check_in_bounds(&t, &ctx);
            largest = largest.max(t.numel());
            // reshape may copy; a copy is no longer a view of the base
            let clean = clean && t.shares_storage(&base);
            if pool.len() < 10 {
                pool.push(Entry { t, clean });
            } else {
                let k = 1 + inp.below(pool.len() - 1);
                pool[k] = Entry { t, clean };
            }
        }
    }
    // every tensor that still aliases the base storage reads exactly the storage elements its
    // layout names
    for (i, e) in pool.iter().enumerate() {
        check_in_bounds(&e.t, "final");
        if e.t.numel() <= MAX_READ && e.t.shares_storage(&base) {
            let want: Vec<u64> = offsets(&e.t.layout())
                .into_iter()
                .map(|o| storage[o].to_bits())
                .collect();
            assert_eq!(
                values(&e.t).unwrap(),
                want,
                "pool #{i} with layout {:?} reads wrong elements",
                e.t.layout()
            );
        }
    }
    if !needs_grad {
        return;
    }
    let k = inp.below(pool.len());
    let v = &pool[k];
    // the backward materialises every intermediate view's gradient: an expanded view of 2^29
    // elements in the chain needs gigabytes (as in PyTorch), beyond libFuzzer's rss limit
    if !v.clean || v.t.numel() > MAX_READ || largest > MAX_BACKWARD {
        return;
    }
    // backward may legitimately refuse (e.g. a multi-output view re-pointed in place)
    if v.t.sum().and_then(|s| s.backward()).is_err() {
        return;
    }
    let g = base.grad().unwrap_or_else(|| {
        panic!(
            "no gradient for the base after backward over {:?}",
            v.t.layout()
        )
    });
    assert_eq!(g.shape(), base.shape(), "gradient shape");
    let mut want = vec![0.0f64; n];
    for o in offsets(&v.t.layout()) {
        want[o] += 1.0;
    }
    assert_eq!(
        g.to_vec::<f64>().unwrap(),
        want,
        "gradient of sum over view {:?} is not the reference count",
        v.t.layout()
    );
}
