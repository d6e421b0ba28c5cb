//! Threads: `Tensor` is `Send + Sync`; independent graphs run on 8 threads at once; readers of
//! shared parameters run while an optimizer steps under a lock; writers through disjoint views
//! of one storage lose no update; aliasing and cross-aliasing in-place ops never deadlock and give
//! PyTorch's results. Every potentially blocking scenario runs under a watchdog, so a deadlock
//! fails the test instead of hanging CI.

use crate::common::f64s;
use std::sync::mpsc;
use std::sync::{Arc, Barrier, RwLock};
use std::thread;
use std::time::Duration;
use tapegrad::optim::{Optimizer, Sgd, SgdConfig};
use tapegrad::{DType, Error, ErrorKind, Storage, Tensor};

const _: () = {
    const fn send_sync<T: Send + Sync>() {}
    send_sync::<Tensor>();
    send_sync::<Storage>();
    send_sync::<Error>();
    send_sync::<tapegrad::autograd::NodeRef>();
    const fn send<T: Send>() {}
    send::<Sgd>();
};

/// Runs `f` on a helper thread and fails if it has not finished within `secs` (a deadlock).
fn watchdog<R: Send + 'static>(secs: u64, what: &str, f: impl FnOnce() -> R + Send + 'static) -> R {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(Duration::from_secs(secs)) {
        Ok(r) => r,
        Err(_) => panic!("{what}: did not finish within {secs} s (deadlock?)"),
    }
}

/// Runs `f(i)` on `n` threads released together by a barrier; their results in thread order.
fn at_once<R: Send + 'static>(n: usize, f: impl Fn(usize) -> R + Send + Sync + 'static) -> Vec<R> {
    let (barrier, f) = (Arc::new(Barrier::new(n)), Arc::new(f));
    let hs: Vec<_> = (0..n)
        .map(|i| {
            let (b, f) = (barrier.clone(), f.clone());
            thread::spawn(move || {
                b.wait();
                f(i)
            })
        })
        .collect();
    hs.into_iter().map(|h| h.join().unwrap()).collect()
}

/// One small training-like graph; returns (loss, grad of x, grad of w).
fn graph(seed: usize) -> (f64, Vec<f64>, Vec<f64>) {
    let xs: Vec<f64> = (0..12)
        .map(|i| ((i * 7 + seed * 13) % 11) as f64 / 5.0 - 1.0)
        .collect();
    let ws: Vec<f64> = (0..8)
        .map(|i| ((i * 3 + seed) % 7) as f64 / 3.0 - 1.0)
        .collect();
    let x = Tensor::from_vec(xs, &[3, 4])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let w = Tensor::from_vec(ws, &[4, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let h = x.matmul(&w).unwrap().tanh().unwrap();
    let y = h.mul(&h).unwrap().add(x.narrow(1, 0, 2).unwrap()).unwrap();
    let loss = y.sum().unwrap();
    loss.backward().unwrap();
    (
        loss.item::<f64>().unwrap(),
        f64s(&x.grad().unwrap()),
        f64s(&w.grad().unwrap()),
    )
}

#[test]
fn eight_independent_graphs_at_once() {
    let want: Vec<_> = (0..8).map(graph).collect();
    let got = watchdog(120, "8 graphs", move || {
        at_once(8, |s| {
            let mut last = None;
            for _ in 0..50 {
                last = Some(graph(s));
            }
            last.unwrap()
        })
    });
    assert_eq!(got, want);
}

#[test]
fn backward_from_many_threads_into_one_leaf_loses_nothing() {
    for _round in 0..20 {
        let x = Tensor::ones(&[4], DType::F64)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let x2 = x.clone();
        watchdog(60, "shared leaf", move || {
            at_once(8, move |_| {
                for _ in 0..10 {
                    x2.mul(2.0).unwrap().sum().unwrap().backward().unwrap();
                }
            })
        });
        assert_eq!(f64s(&x.grad().unwrap()), vec![160.0; 4]);
    }
}

/// One graph, retained, run backward from 8 threads at once: a node's formula may run for
/// several passes at the same time (formulas only read themselves), and every pass contributes.
#[test]
fn one_retained_graph_backward_from_many_threads() {
    let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let x2 = x.clone();
    watchdog(60, "shared graph", move || {
        // d/dx sum(exp(x) * x) = exp(x) * (x + 1)
        let y = x2.exp().unwrap().mul(&x2).unwrap().sum().unwrap();
        at_once(8, move |_| {
            for _ in 0..25 {
                y.backward_with(
                    None,
                    tapegrad::autograd::BackwardOptions::default().retain_graph(true),
                )
                .unwrap();
            }
        })
    });
    let g = f64s(&x.grad().unwrap());
    for (i, v) in [1.0f64, 2.0, 3.0].into_iter().enumerate() {
        let want = 200.0 * v.exp() * (v + 1.0);
        assert!((g[i] - want).abs() < 1e-9 * want, "{g:?}");
    }
}

#[test]
fn readers_during_locked_optimizer_steps() {
    // every step subtracts lr * 1 from every element, so a consistent snapshot has equal
    // elements and values only ever decrease
    let p = Tensor::full(&[64], 100.0, DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let q = Tensor::full(&[8, 8], 100.0, DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let params = Arc::new(RwLock::new(vec![p.clone(), q.clone()]));
    let opt = Arc::new(std::sync::Mutex::new(
        Sgd::new(vec![p.clone(), q.clone()], SgdConfig::new(0.5)).unwrap(),
    ));
    let (p2, q2) = (p.clone(), q.clone());
    watchdog(120, "readers + optimizer", move || {
        let (p, _q) = (p2, q2);
        let mut hs = Vec::new();
        for r in 0..4 {
            let params = params.clone();
            hs.push(thread::spawn(move || {
                let mut last = f64::INFINITY;
                for _ in 0..300 {
                    let guard = params.read().unwrap();
                    let (a, b) = (&guard[0], &guard[1]);
                    // a forward pass on the shared parameters, without grad
                    let _ng = tapegrad::autograd::no_grad();
                    let s = a.view(&[8, 8]).unwrap().matmul(b).unwrap();
                    let va = f64s(a);
                    let vb = f64s(b);
                    drop(guard);
                    assert!(va.iter().all(|&v| v == va[0]), "reader {r}: torn p {va:?}");
                    assert!(vb.iter().all(|&v| v == vb[0]), "reader {r}: torn q");
                    assert_eq!(va[0], vb[0], "reader {r}: p and q from different steps");
                    assert!(va[0] <= last, "reader {r}: parameter went back");
                    last = va[0];
                    assert_eq!(f64s(&s)[0], 8.0 * va[0] * vb[0]);
                }
            }));
        }
        // unlocked readers still never see a half-written tensor (storage locks)
        {
            let p = p.clone();
            hs.push(thread::spawn(move || {
                for _ in 0..300 {
                    let v = f64s(&p);
                    assert!(v.iter().all(|&x| x == v[0]), "unlocked reader: torn p");
                }
            }));
        }
        for _ in 0..100 {
            let guard = params.write().unwrap();
            let mut opt = opt.lock().unwrap();
            opt.zero_grad().unwrap();
            guard[0]
                .sum()
                .unwrap()
                .add(guard[1].sum().unwrap())
                .unwrap()
                .backward()
                .unwrap();
            opt.step().unwrap();
        }
        for h in hs {
            h.join().unwrap();
        }
    });
    assert_eq!(f64s(&p), vec![50.0; 64]);
    assert_eq!(f64s(&q), vec![50.0; 64]);
}

#[test]
fn disjoint_views_written_from_two_threads() {
    // rows, and interleaved columns (the two views' memory ranges overlap but never share an
    // element)
    for interleaved in [false, true] {
        let x = Tensor::zeros(&[2, 500], DType::F64).unwrap();
        let (a, b) = if interleaved {
            let v = x.view(&[500, 2]).unwrap();
            (v.select(1, 0).unwrap(), v.select(1, 1).unwrap())
        } else {
            (x.select(0, 0).unwrap(), x.select(0, 1).unwrap())
        };
        watchdog(60, "disjoint views", move || {
            let ta = thread::spawn(move || {
                for _ in 0..1000 {
                    a.add_(1.0).unwrap();
                }
            });
            let tb = thread::spawn(move || {
                for _ in 0..1000 {
                    b.add_(2.0).unwrap();
                }
            });
            ta.join().unwrap();
            tb.join().unwrap();
        });
        let v = f64s(&x);
        let (ones, twos): (Vec<f64>, Vec<f64>) = if interleaved {
            (
                v.iter().step_by(2).copied().collect(),
                v.iter().skip(1).step_by(2).copied().collect(),
            )
        } else {
            (v[..500].to_vec(), v[500..].to_vec())
        };
        assert!(ones.iter().all(|&e| e == 1000.0));
        assert!(twos.iter().all(|&e| e == 2000.0));
        // the shared version counter counts every write exactly once
        assert_eq!(x.version(), 2000);
    }
}

#[test]
fn cross_aliasing_inplace_ops_from_many_threads_never_deadlock() {
    // a += b on one thread while b += a on another (and copies both ways): the storage locks
    // are taken in a fixed global order
    let a = Tensor::ones(&[16], DType::F64).unwrap();
    let b = Tensor::ones(&[16], DType::F64).unwrap();
    let c = Tensor::ones(&[4, 4], DType::F64).unwrap();
    watchdog(120, "cross aliasing", move || {
        let hs: Vec<_> = (0..8)
            .map(|i| {
                let (a, b, c) = (a.clone(), b.clone(), c.clone());
                thread::spawn(move || {
                    for _ in 0..300 {
                        match i % 4 {
                            0 => a.add_(&b).and_then(|_| a.mul_(0.5)),
                            1 => b.add_(&a).and_then(|_| b.mul_(0.5)),
                            2 => c
                                .view(&[16])
                                .unwrap()
                                .copy_(&a)
                                .and_then(|_| b.copy_(&c.view(&[16])?)),
                            _ => a.add_(&a).and_then(|_| a.copy_(&c.t()?.reshape(&[16])?)),
                        }
                        .unwrap();
                    }
                })
            })
            .collect();
        for h in hs {
            h.join().unwrap();
        }
    });
}

#[test]
fn self_aliasing_inplace_ops_match_pytorch() {
    watchdog(60, "self aliasing", || {
        // x.add_(x) doubles
        let x = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4]).unwrap();
        x.add_(&x).unwrap();
        assert_eq!((f64s(&x), x.version()), (vec![0.0, 2.0, 4.0, 6.0], 1));
        // a.mul_(a.flip(0)) (flip is a copy): [0*3, 1*2, 2*1, 3*0]
        let a = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[4]).unwrap();
        a.mul_(a.flip(&[0]).unwrap()).unwrap();
        assert_eq!(f64s(&a), vec![0.0, 2.0, 2.0, 0.0]);
        // x.copy_(x.t()): PyTorch refuses the partial overlap; x is unchanged
        let m = Tensor::from_vec(vec![0.0f64, 1.0, 2.0, 3.0], &[2, 2]).unwrap();
        let e = m.copy_(&m.t().unwrap()).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::InvalidArgument);
        assert!(
            e.message().contains("refer to a single memory location"),
            "{e}"
        );
        assert_eq!((f64s(&m), m.version()), (vec![0.0, 1.0, 2.0, 3.0], 0));
        // same for m.add_(m.t())
        assert!(m.add_(m.t().unwrap()).is_err());
        assert_eq!((f64s(&m), m.version()), (vec![0.0, 1.0, 2.0, 3.0], 0));
        // full overlap is fine: copy_ onto itself, a view of itself, a detached alias
        m.copy_(&m).unwrap();
        m.copy_(&m.detach()).unwrap();
        m.view(&[4]).unwrap().mul_(m.view(&[4]).unwrap()).unwrap();
        assert_eq!((f64s(&m), m.version()), (vec![0.0, 1.0, 4.0, 9.0], 3));
        // addcmul_ with every operand aliasing self: x + 1 * x * x
        let y = Tensor::from_vec(vec![1.0f64, 2.0], &[2]).unwrap();
        y.addcmul_(&y, &y, 1.0).unwrap();
        assert_eq!(f64s(&y), vec![2.0, 6.0]);
        // in-place through autograd with aliasing: z.mul_(z) saves z and then modifies it, so
        // backward fails exactly as in PyTorch
        let l = Tensor::from_vec(vec![1.0f64, 2.0], &[2])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let z = l.mul(1.0).unwrap();
        z.mul_(&z).unwrap();
        let e = z.sum().unwrap().backward().unwrap_err();
        assert_eq!(e.kind(), ErrorKind::SavedTensorModified);
        for op in 0..3 {
            let l = Tensor::from_vec(vec![1.0f64, 2.0], &[2])
                .unwrap()
                .requires_grad_(true)
                .unwrap();
            let z = l.mul(1.0).unwrap();
            let v = z.view(&[2]).unwrap();
            match op {
                0 => z.div_(&v).unwrap(),
                1 => z.pow_(&z).unwrap(),
                _ => z.addcmul_(&v, &v, 1.0).unwrap(),
            };
            let e = z.sum().unwrap().backward().unwrap_err();
            assert_eq!(e.kind(), ErrorKind::SavedTensorModified, "op {op}");
        }
    });
}

/// Sequence numbers come from per-thread blocks, so a node recorded later on another thread may
/// carry a smaller number than the nodes before it. A graph built alternately on two threads
/// (each step's input made on the other thread) still backpropagates exactly.
#[test]
fn graph_built_across_threads_backprops_exactly() {
    let x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0], &[3])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    // take a block of sequence numbers on this thread first: each helper thread takes a newer
    // block, so the nodes this thread records later carry smaller numbers than theirs
    let _warm: Vec<Tensor> = (0..10).map(|_| x.mul(1.0).unwrap()).collect();
    let mut y = x.clone();
    for step in 0..6 {
        let t = y.clone();
        y = if step % 2 == 0 {
            thread::spawn(move || t.mul(1.5).unwrap().add(0.25).unwrap())
                .join()
                .unwrap()
        } else {
            t.mul(&t).unwrap()
        };
    }
    // the same chain and its derivative by hand, in f64
    let (mut v, mut d) = (f64s(&x), vec![1.0f64; 3]);
    for step in 0..6 {
        for i in 0..3 {
            if step % 2 == 0 {
                v[i] = v[i] * 1.5 + 0.25;
                d[i] *= 1.5;
            } else {
                d[i] *= 2.0 * v[i];
                v[i] *= v[i];
            }
        }
    }
    y.sum().unwrap().backward().unwrap();
    let g = f64s(&x.grad().unwrap());
    for i in 0..3 {
        assert!(
            (g[i] - d[i]).abs() <= 1e-9 * d[i].abs().max(1.0),
            "{g:?} vs {d:?}"
        );
    }
    assert_eq!(f64s(&y), v);
}

/// Deterministic small integers in `-3..=3` (as f64): products and sums of them stay exact.
fn ints(n: usize, seed: usize) -> Vec<f64> {
    (0..n)
        .map(|i| ((i * 5 + seed * 11) % 7) as f64 - 3.0)
        .collect()
}

/// One thread's model: two Linear layers with deterministic weights (`Linear::new` would draw
/// from the global generator, which the other threads use at the same time).
fn small_model(id: usize) -> (tapegrad::nn::Linear, tapegrad::nn::Linear) {
    let p = |shape: &[usize], seed: usize| {
        let n = shape.iter().product();
        let v: Vec<f64> = ints(n, seed).into_iter().map(|x| x / 8.0).collect();
        Tensor::from_vec(v, shape)
            .unwrap()
            .requires_grad_(true)
            .unwrap()
    };
    let l1 = tapegrad::nn::Linear {
        weight: p(&[8, 8], id),
        bias: Some(p(&[8], id + 1)),
    };
    let l2 = tapegrad::nn::Linear {
        weight: p(&[4, 8], id + 2),
        bias: Some(p(&[4], id + 3)),
    };
    (l1, l2)
}

/// Trains model `id` for 4 SGD (momentum) steps on lookups of the frozen embedding `emb`
/// projected by the read-only `proj`; returns every loss and the final parameters.
fn train_small(id: usize, emb: &tapegrad::nn::Embedding, proj: &Tensor) -> Vec<Vec<f64>> {
    use tapegrad::nn::Forward;
    let (l1, l2) = small_model(id);
    let params = vec![
        l1.weight.clone(),
        l1.bias.clone().unwrap(),
        l2.weight.clone(),
        l2.bias.clone().unwrap(),
    ];
    let mut opt = Sgd::new(params.clone(), SgdConfig::new(0.05).momentum(0.9)).unwrap();
    let target = Tensor::from_vec(ints(24, id + 7), &[6, 4]).unwrap();
    let mut losses = Vec::new();
    for step in 0..4 {
        let idx: Vec<i64> = (0..6)
            .map(|j| ((id * 5 + step * 3 + j) % 16) as i64)
            .collect();
        let x = emb
            .forward(&Tensor::from_vec(idx, &[6]).unwrap())
            .unwrap()
            .matmul(proj)
            .unwrap();
        let y = l2
            .forward(&l1.forward(&x).unwrap().tanh().unwrap())
            .unwrap();
        let loss = y.mse_loss(&target, tapegrad::Reduction::Mean).unwrap();
        opt.zero_grad().unwrap();
        loss.backward().unwrap();
        opt.step().unwrap();
        losses.push(loss.item::<f64>().unwrap());
    }
    let mut out = vec![losses];
    out.extend(params.iter().map(f64s));
    out
}

/// One backward pass of thread `t` into the shared leaf `leaf` (`[16, 8]`): through a matmul
/// with the read-only `proj` and through an embedding lookup of the leaf by the frozen table's
/// integer-valued rows. Every gradient entry is a small integer.
fn backprop_into_leaf(
    t: usize,
    r: usize,
    leaf: &Tensor,
    emb: &tapegrad::nn::Embedding,
    proj: &Tensor,
) {
    let c = (t + r) as f64 - 2.0;
    let idx: Vec<i64> = (0..5).map(|j| ((t * 3 + r + j * 7) % 16) as i64).collect();
    let looked = Tensor::embedding(&Tensor::from_vec(idx, &[5]).unwrap(), leaf).unwrap();
    let a = leaf.matmul(proj).unwrap().mul(c).unwrap().sum().unwrap();
    let b = looked
        .mul(&emb.weight.narrow(0, 0, 5).unwrap())
        .unwrap()
        .sum()
        .unwrap();
    a.add(&b).unwrap().backward().unwrap();
}

/// Stress (issue 26): 8 threads each train their own small model (4 SGD steps) while all read
/// the same read-only projection and one frozen `Embedding` (requires_grad false), and 4 more
/// threads backpropagate 5 times each into one shared leaf, all released together; the scenario
/// runs 100 times, each under a watchdog. Each model's losses and parameters equal a sequential
/// run bit for bit (its graph is its own). The shared leaf's gradient is compared bitwise with
/// a sequential run: every contribution is a small integer, so each partial sum is exact in f64
/// and the result does not depend on the order the engine accumulates concurrent passes in. The
/// frozen table and the projection end unchanged (values and versions) and without gradients.
#[test]
fn stress_training_threads_share_frozen_weights_and_leaves() {
    let table = Tensor::from_vec(ints(16 * 8, 1), &[16, 8]).unwrap();
    let emb = Arc::new(tapegrad::nn::Embedding::from_pretrained(&table, true, None).unwrap());
    let proj = Tensor::from_vec(ints(64, 2), &[8, 8]).unwrap();
    let (emb_v, proj_v) = (emb.weight.version(), proj.version());
    let want_models: Vec<_> = (0..8).map(|id| train_small(id, &emb, &proj)).collect();
    let want_leaf = {
        let leaf = Tensor::zeros(&[16, 8], DType::F64)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        for t in 0..4 {
            for r in 0..5 {
                backprop_into_leaf(t, r, &leaf, &emb, &proj);
            }
        }
        f64s(&leaf.grad().unwrap())
    };
    assert!(want_leaf.iter().any(|&g| g != 0.0));
    let start = std::time::Instant::now();
    for round in 0..100 {
        let leaf = Tensor::zeros(&[16, 8], DType::F64)
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let (emb2, proj2, leaf2) = (emb.clone(), proj.clone(), leaf.clone());
        let got = watchdog(120, "stress round", move || {
            at_once(12, move |i| {
                if i < 8 {
                    Some(train_small(i, &emb2, &proj2))
                } else {
                    for r in 0..5 {
                        backprop_into_leaf(i - 8, r, &leaf2, &emb2, &proj2);
                    }
                    None
                }
            })
        });
        for (id, g) in got.into_iter().take(8).enumerate() {
            assert_eq!(
                g.as_ref(),
                Some(&want_models[id]),
                "round {round}, model {id}"
            );
        }
        let g = f64s(&leaf.grad().unwrap());
        assert!(
            g.iter()
                .zip(&want_leaf)
                .all(|(a, b)| a.to_bits() == b.to_bits()),
            "round {round}: shared leaf gradient {g:?}"
        );
    }
    assert!(emb.weight.grad().is_none() && !emb.weight.requires_grad());
    assert!(proj.grad().is_none());
    assert_eq!((emb.weight.version(), proj.version()), (emb_v, proj_v));
    assert_eq!(f64s(&emb.weight), ints(16 * 8, 1));
    assert_eq!(f64s(&proj), ints(64, 2));
    eprintln!("stress: 100 rounds in {:.2?}", start.elapsed());
}
