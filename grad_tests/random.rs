//! Generators (`tapegrad::random`): the stream is the documented ChaCha12 one (the same numbers
//! `rand` 0.8's `StdRng` gave, so seeded results did not move), states replay, handles share.
//! The samplers (`uniform_`, `normal_`, `bernoulli_` on views, `randperm`, `multinomial`) draw
//! from explicit generators here; tests of the process-global generator live in the `seeded`
//! crate (`seeded_rng.rs`).

use rand::{Rng, SeedableRng, rngs::StdRng};
use tapegrad::random::{Generator, RngState};
use tapegrad::{DType, ErrorKind, Tensor};

#[test]
fn stream_matches_the_documented_chacha12_transforms() {
    let g = Generator::new(5);
    let mut r = StdRng::seed_from_u64(5);
    let u = Tensor::rand_with(&[64], DType::F64, Some(&g)).unwrap();
    let want: Vec<f64> = (0..64).map(|_| r.r#gen::<f64>()).collect();
    assert_eq!(u.to_vec::<f64>().unwrap(), want);
    let i = Tensor::randint_with(-7, 1000, &[64], Some(&g)).unwrap();
    let want: Vec<i64> = (0..64).map(|_| r.gen_range(-7..1000)).collect();
    assert_eq!(i.to_vec::<i64>().unwrap(), want);
    let n = Tensor::randn_with(&[64], DType::F64, Some(&g)).unwrap();
    let want: Vec<f64> = (0..64)
        .map(|_| {
            let u1: f64 = 1.0 - r.r#gen::<f64>();
            let u2: f64 = r.r#gen::<f64>();
            (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos()
        })
        .collect();
    assert_eq!(n.to_vec::<f64>().unwrap(), want);
}

#[test]
fn state_replays_and_survives_bytes() {
    let g = Generator::new(11);
    let _ = Tensor::rand_with(&[3], DType::F64, Some(&g)).unwrap();
    let s = g.get_state();
    let a = Tensor::randn_with(&[9], DType::F64, Some(&g)).unwrap();
    let b = Tensor::randn_with(&[9], DType::F64, Some(&g)).unwrap();
    assert_ne!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    let bytes = s.to_bytes();
    assert_eq!(bytes.len(), RngState::NBYTES);
    let h = Generator::new(0);
    h.set_state(&RngState::from_bytes(&bytes).unwrap());
    assert_eq!(h.initial_seed(), 11);
    let c = Tensor::randn_with(&[9], DType::F64, Some(&h)).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), c.to_vec::<f64>().unwrap());
    let e = RngState::from_bytes(&bytes[1..]).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn clones_share_one_stream_and_reseeding_restarts_it() {
    let g = Generator::new(2);
    let h = g.clone();
    let a = Tensor::rand_with(&[4], DType::F64, Some(&g)).unwrap();
    let b = Tensor::rand_with(&[4], DType::F64, Some(&h)).unwrap();
    assert_ne!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    h.manual_seed(2);
    let c = Tensor::rand_with(&[4], DType::F64, Some(&g)).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), c.to_vec::<f64>().unwrap());
    assert_eq!(Generator::new(3).initial_seed(), 3);
}

#[test]
fn samplers_write_through_views_and_bump_once() {
    let g = Generator::new(4);
    let base = Tensor::zeros(&[4, 6], DType::F32).unwrap();
    let v = base.narrow(0, 1, 2).unwrap().narrow(1, 0, 3).unwrap();
    let before = base.version();
    v.uniform_(-2.0, 5.0, Some(&g)).unwrap();
    assert_eq!(base.version(), before + 1);
    let all = base.to_vec::<f32>().unwrap();
    for (i, x) in all.iter().enumerate() {
        let (r, c) = (i / 6, i % 6);
        if (1..3).contains(&r) && c < 3 {
            assert!((-2.0..5.0).contains(x), "{x}");
        } else {
            assert_eq!(*x, 0.0, "untouched at {r},{c}");
        }
    }
    v.normal_(0.0, 1.0, Some(&g)).unwrap();
    v.bernoulli_(1.0, Some(&g)).unwrap();
    assert_eq!(base.version(), before + 3);
    assert_eq!(base.sum().unwrap().item::<f32>().unwrap(), 6.0);
    // a generator replays, the global generator is not touched by it
    let h = Generator::new(4);
    let w = Tensor::zeros(&[2, 3], DType::F32).unwrap();
    w.uniform_(-2.0, 5.0, Some(&h)).unwrap();
    let again = Tensor::zeros(&[4, 6], DType::F32).unwrap();
    again
        .narrow(0, 1, 2)
        .unwrap()
        .narrow(1, 0, 3)
        .unwrap()
        .uniform_(-2.0, 5.0, Some(&Generator::new(4)))
        .unwrap();
    assert_eq!(
        w.to_vec::<f32>().unwrap(),
        again
            .narrow(0, 1, 2)
            .unwrap()
            .narrow(1, 0, 3)
            .unwrap()
            .to_vec::<f32>()
            .unwrap()
    );
}

#[test]
fn sampler_statistics() {
    let g = Generator::new(9);
    let n = 20000;
    let x = Tensor::zeros(&[n], DType::F64)
        .unwrap()
        .normal_(2.0, 3.0, Some(&g))
        .unwrap();
    let v = x.to_vec::<f64>().unwrap();
    let mean = v.iter().sum::<f64>() / n as f64;
    let sd = (v.iter().map(|a| (a - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
    assert!(
        (mean - 2.0).abs() < 0.1 && (sd - 3.0).abs() < 0.1,
        "{mean} {sd}"
    );
    let u = Tensor::zeros(&[n], DType::F64)
        .unwrap()
        .uniform_(1.0, 3.0, Some(&g))
        .unwrap();
    let mean = u.to_vec::<f64>().unwrap().iter().sum::<f64>() / n as f64;
    assert!((mean - 2.0).abs() < 0.02, "{mean}");
    let b = Tensor::zeros(&[n], DType::Bool)
        .unwrap()
        .bernoulli_(0.3, Some(&g))
        .unwrap();
    let ones = b.to_vec::<bool>().unwrap().iter().filter(|v| **v).count();
    assert!((ones as f64 / n as f64 - 0.3).abs() < 0.02, "{ones}");
    let z = Tensor::ones(&[50], DType::I64)
        .unwrap()
        .bernoulli_(0.0, Some(&g))
        .unwrap();
    assert_eq!(z.to_vec::<i64>().unwrap(), vec![0; 50]);
}

#[test]
fn sampler_errors_change_nothing() {
    let x = Tensor::zeros(&[3], DType::F32).unwrap();
    let cases = [
        x.uniform_(2.0, 1.0, None).unwrap_err(),
        x.uniform_(-3e38, 3e38, None).unwrap_err(),
        x.normal_(0.0, -1.0, None).unwrap_err(),
        x.bernoulli_(1.5, None).unwrap_err(),
    ];
    for e in &cases {
        assert_eq!(e.kind(), ErrorKind::InvalidArgument, "{e}");
    }
    assert!(
        cases[0].to_string().contains("from=2 > to=1"),
        "{}",
        cases[0]
    );
    assert_eq!(x.version(), 0);
    let i = Tensor::zeros(&[3], DType::I64).unwrap();
    assert_eq!(
        i.uniform_(0.0, 1.0, None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        i.normal_(0.0, 1.0, None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
    // a leaf that requires grad refuses, a non-leaf gets a zero-gradient node
    let leaf = Tensor::ones(&[3], DType::F64)
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    assert_eq!(
        leaf.normal_(0.0, 1.0, None).unwrap_err().kind(),
        ErrorKind::LeafInplace
    );
    let y = leaf.mul(2.0).unwrap();
    y.normal_(0.0, 1.0, None).unwrap();
    assert_eq!(y.grad_fn().unwrap().name(), "NormalBackward0");
    y.sum().unwrap().backward().unwrap();
    assert_eq!(leaf.grad().unwrap().to_vec::<f64>().unwrap(), vec![0.0; 3]);
    // an expanded tensor has elements sharing memory
    let e = Tensor::zeros(&[1], DType::F32)
        .unwrap()
        .expand(&[4])
        .unwrap();
    assert!(e.uniform_(0.0, 1.0, None).is_err());
}

#[test]
fn randperm_is_a_permutation_and_replays() {
    let p = Tensor::randperm(100, Some(&Generator::new(1))).unwrap();
    assert_eq!(p.dtype(), DType::I64);
    let mut v = p.to_vec::<i64>().unwrap();
    assert_ne!(v, (0..100).collect::<Vec<_>>());
    let q = Tensor::randperm(100, Some(&Generator::new(1))).unwrap();
    assert_eq!(v, q.to_vec::<i64>().unwrap());
    v.sort();
    assert_eq!(v, (0..100).collect::<Vec<_>>());
    assert_eq!(Tensor::randperm(0, None).unwrap().shape(), vec![0]);
}

#[test]
fn multinomial_draws_and_refuses_like_pytorch() {
    let g = Generator::new(3);
    let w = Tensor::from_vec(vec![1.0f32, 0.0, 3.0, 0.0], &[4]).unwrap();
    let s = w
        .multinomial(4000, true, Some(&g))
        .unwrap()
        .to_vec::<i64>()
        .unwrap();
    assert!(
        s.iter().all(|k| *k == 0 || *k == 2),
        "zero weights never drawn"
    );
    let twos = s.iter().filter(|k| **k == 2).count() as f64 / 4000.0;
    assert!((twos - 0.75).abs() < 0.03, "{twos}");
    let rows = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0, 5.0, 6.0], &[2, 3]).unwrap();
    let d = rows.multinomial(3, false, Some(&g)).unwrap();
    assert_eq!((d.shape(), d.dtype()), (vec![2, 3], DType::I64));
    for r in d.to_vec::<i64>().unwrap().chunks(3) {
        let mut r = r.to_vec();
        r.sort();
        assert_eq!(r, vec![0, 1, 2], "distinct without replacement");
    }
    let no_rep = w
        .multinomial(2, false, Some(&g))
        .unwrap()
        .to_vec::<i64>()
        .unwrap();
    assert!(no_rep == vec![0, 2] || no_rep == vec![2, 0], "{no_rep:?}");
    let msg =
        |t: &Tensor, n: usize, rep: bool| t.multinomial(n, rep, None).unwrap_err().to_string();
    assert!(msg(&Tensor::ones(&[2, 2, 2], DType::F32).unwrap(), 1, true).contains("1 or 2 dim"));
    assert!(msg(&w, 0, true).contains("n_sample <= 0"));
    assert!(msg(&w, 5, false).contains("without replacement"));
    let bad = Tensor::from_vec(vec![1.0f32, -1.0], &[2]).unwrap();
    assert!(msg(&bad, 1, true).contains("element < 0"));
    let nan = Tensor::from_vec(vec![1.0f32, f32::NAN], &[2]).unwrap();
    assert!(msg(&nan, 1, true).contains("`nan`"));
    let zero = Tensor::zeros(&[2], DType::F32).unwrap();
    assert!(msg(&zero, 1, true).contains("sum of probabilities <= 0"));
    let ints = Tensor::from_vec(vec![1i64, 2], &[2]).unwrap();
    assert_eq!(
        ints.multinomial(1, true, None).unwrap_err().kind(),
        ErrorKind::DTypeMismatch
    );
}
