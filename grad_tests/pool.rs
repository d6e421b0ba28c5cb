//! Pooling (`ops/pool/`): values and indices against PyTorch 2.15 (numbers recorded with
//! `torch.nn.functional` on `sin(0.7 * arange(120)).reshape(2, 2, 5, 6)`), NaN propagation,
//! shapes, errors.

use crate::common::{R, assert_close, f64s, t64};
use tapegrad::{DType, ErrorKind, Tensor};

fn img() -> Tensor {
    let v: Vec<f64> = (0..120).map(|i| (0.7 * i as f64).sin()).collect();
    t64(&v, &[2, 2, 5, 6])
}

fn head(t: &Tensor) -> Vec<f64> {
    f64s(t)[..12].to_vec()
}

fn head_i(t: &Tensor) -> Vec<i64> {
    t.to_vec::<i64>().unwrap()[..12].to_vec()
}

#[test]
fn max_pool2d_matches_torch() -> R {
    let x = img();
    let (y, i) = x.max_pool2d_with_indices(&[3, 2], &[2, 1], &[1], &[1], true)?;
    assert_eq!(y.shape(), vec![2, 2, 3, 7]);
    assert_close(
        &head(&y),
        &[
            0.0,
            0.644217687237691,
            0.98544972998846,
            0.98544972998846,
            0.863209366648874,
            0.988168233877,
            0.988168233877,
            0.854598908088281,
            0.854598908088281,
            0.99060735569487,
            0.99060735569487,
            0.845746831142934,
        ],
        1e-14,
    );
    assert_eq!(head_i(&i), vec![0, 1, 2, 2, 3, 11, 11, 12, 12, 20, 20, 21]);
    let y = x.max_pool2d(&[2], &[1], &[1], &[2], false)?;
    assert_eq!(y.shape(), vec![2, 2, 5, 6]);
    assert_close(
        &head(&y),
        &[
            -0.982452612624333,
            -0.631266637872322,
            0.01681390048435,
            0.656986598718789,
            0.988168233877,
            0.656986598718789,
            0.644217687237691,
            0.98544972998846,
            0.863209366648874,
            0.98544972998846,
            0.863209366648874,
            0.334988150155905,
        ],
        1e-14,
    );
    let (y, i) = x.adaptive_max_pool2d_with_indices(&[3, 4])?;
    assert_close(
        &head(&y),
        &[
            0.644217687237691,
            0.98544972998846,
            0.863209366648874,
            0.988168233877,
            0.854598908088281,
            0.99060735569487,
            0.845746831142934,
            0.988168233877,
            0.669569762196601,
            0.99060735569487,
            0.845746831142934,
            0.992766405835907,
        ],
        1e-14,
    );
    assert_eq!(
        head_i(&i),
        vec![1, 2, 3, 11, 12, 20, 21, 11, 19, 20, 21, 29]
    );
    Ok(())
}

#[test]
fn max_pool2d_nan_and_inf_rules() -> R {
    let x = img();
    let mut v = f64s(&x);
    v[1] = f64::NAN;
    v[7] = f64::NAN;
    let z = t64(&v, &[2, 2, 5, 6]);
    let (y, i) = z.max_pool2d_with_indices(&[2], None, &[0], &[1], false)?;
    let y00 = f64s(&y.select(0, 0)?.select(0, 0)?);
    assert!(y00[0].is_nan());
    assert_close(
        &y00[1..],
        &[
            0.98544972998846,
            0.9881682338770003,
            0.8545989080882814,
            0.9906073556948704,
            0.303118356745704,
        ],
        1e-14,
    );
    // the last NaN of the window wins
    assert_eq!(
        i.select(0, 0)?.select(0, 0)?.to_vec::<i64>()?,
        vec![7, 2, 11, 12, 20, 22]
    );
    let inf = Tensor::full(&[1, 1, 2, 2], f64::NEG_INFINITY, DType::F32)?;
    let (_, i) = inf.max_pool2d_with_indices(&[2], None, &[0], &[1], false)?;
    assert_eq!(i.to_vec::<i64>()?, vec![0]);
    Ok(())
}

#[test]
fn avg_pool2d_matches_torch() -> R {
    let x = img();
    let y = x.avg_pool2d(&[3], &[2], &[1], true, true, None)?;
    assert_eq!(y.shape(), vec![2, 2, 3, 4]);
    assert_close(
        &head(&y),
        &[
            -0.134423410866692,
            0.099552381540302,
            0.278820335799478,
            0.106230834364563,
            0.00254018831305,
            -0.002006436428016,
            -0.005360899730583,
            -0.002006715924007,
            -0.128888914403547,
            0.108431978774086,
            0.276882942712831,
            0.10178249810865,
        ],
        1e-13,
    );
    let y = x.avg_pool2d(&[3], &[2], &[1], true, false, None)?;
    assert_close(
        &head(&y),
        &[
            -0.302452674450057,
            0.149328572310453,
            0.418230503699216,
            0.31869250309369,
            0.003810282469575,
            -0.002006436428016,
            -0.005360899730583,
            -0.004013431848013,
            -0.290000057407981,
            0.162647968161129,
            0.415324414069247,
            0.30534749432595,
        ],
        1e-13,
    );
    let y = x.avg_pool2d(&[2], &[1], &[1], false, true, Some(3))?;
    assert_eq!(y.shape(), vec![2, 2, 6, 7]);
    assert_close(
        &head(&y),
        &[
            0.0,
            0.21473922907923,
            0.543222472408717,
            0.616219698879111,
            0.39939917226826,
            -0.005265025844572,
            -0.116927742563207,
            -0.290525257471196,
            -0.403270232600076,
            0.005316055576499,
            0.411402119749787,
            0.623999338669306,
        ],
        1e-13,
    );
    let y = x.adaptive_avg_pool2d(&[3, 4])?;
    assert_close(
        &head(&y),
        &[
            -0.302452674450057,
            0.003987041682374,
            0.467999504001979,
            0.407339938765519,
            0.003810282469575,
            -0.000153816584626,
            -0.006034633671868,
            -0.005185511538477,
            -0.290000057407981,
            0.019929572504257,
            0.470312873940896,
            0.398944241366434,
        ],
        1e-13,
    );
    Ok(())
}

#[test]
fn one_d_pools_are_the_two_d_ones_on_a_row() -> R {
    let v: Vec<f64> = (0..14).map(|i| (0.9 * i as f64).cos()).collect();
    let x = t64(&v, &[2, 7]);
    let a = x.max_pool1d(3, Some(2), 1, 1, true)?;
    let b = x
        .unsqueeze(0)?
        .unsqueeze(2)?
        .max_pool2d(&[1, 3], &[1, 2], &[0, 1], &[1], true)?;
    assert_eq!(f64s(&a), f64s(&b));
    let a = x.avg_pool1d(3, None, 1, false, false)?;
    let b = x
        .unsqueeze(1)?
        .avg_pool2d(&[1, 3], &[1, 3], &[0, 1], false, false, None)?;
    assert_eq!(f64s(&a), f64s(&b));
    assert_eq!(x.adaptive_avg_pool1d(3)?.shape(), vec![2, 3]);
    Ok(())
}

#[test]
fn max_unpool2d_inverts_the_picks() -> R {
    let x = img();
    let (y, i) = x.max_pool2d_with_indices(&[2], None, &[0], &[1], false)?;
    let u = y.max_unpool2d(&i, &[2], None, &[0], &[5, 6])?;
    assert_eq!(u.shape(), vec![2, 2, 5, 6]);
    let back = u.max_pool2d(&[2], None, &[0], &[1], false)?;
    assert_eq!(f64s(&back), f64s(&y));
    let bad = Tensor::full(&[1, 1, 2, 2], 100i64, DType::I64)?;
    let e = Tensor::ones(&[1, 1, 2, 2], DType::F32)?
        .max_unpool2d(&bad, &[2], None, &[0], None)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::IndexOutOfRange);
    Ok(())
}

#[test]
fn pool_errors() -> R {
    let x = img();
    let kind = |r: tapegrad::Result<Tensor>| r.unwrap_err().kind();
    assert_eq!(
        kind(x.max_pool2d(&[2], &[0], &[0], &[1], false)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.max_pool2d(&[2], None, &[2], &[1], false)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.max_pool2d(&[6], None, &[0], &[1], false)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.avg_pool2d(&[6], None, &[0], false, true, None)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.avg_pool2d(&[2], None, &[0], false, true, Some(0))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(t64(&[1.0; 4], &[2, 2]).max_pool2d(&[2], None, &[0], &[1], false)),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(t64(&[1.0; 4], &[4]).max_pool1d(2, None, 0, 1, false)),
        ErrorKind::InvalidArgument
    );
    // an empty batch is allowed
    let e = Tensor::zeros(&[0, 2, 4, 4], DType::F32)?;
    assert_eq!(
        e.max_pool2d(&[2], None, &[0], &[1], false)?.shape(),
        vec![0, 2, 2, 2]
    );
    Ok(())
}

#[test]
fn max_pool_window_without_a_tap_inside_follows_pytorch() -> R {
    // torch 2.15: a window whose taps all fall in the padding gives -inf (the integer
    // dtype's lowest value, 0 for uint8) and the index of its first taps at or after 0
    // (`row * w + col`), which may lie past the plane; its gradient goes to that index when
    // inside the plane (PyTorch writes it out of bounds otherwise: dropped here)
    let ninf = f64::NEG_INFINITY;
    let x = t64(&[0.5], &[1, 1, 1]).requires_grad_(true)?;
    let (y, i) = x.max_pool1d_with_indices(2, Some(1), 1, 2, false)?;
    assert_eq!((f64s(&y), i.to_vec::<i64>()?), (vec![ninf], vec![1]));
    y.sum()?.backward()?;
    assert_eq!(f64s(&x.grad().unwrap()), vec![0.0]);
    let (y, i) = x.max_pool1d_with_indices(2, Some(2), 1, 3, true)?;
    assert_eq!((f64s(&y), i.to_vec::<i64>()?), (vec![ninf], vec![2]));
    // 2-D: the column windows are hollow, the rows are not: index 2 (inside the plane) and 4
    let x = t64(&[1.0, -2.0, 3.0, 4.0], &[1, 1, 2, 2]).requires_grad_(true)?;
    let (y, i) = x.max_pool2d_with_indices(&[1, 2], &[1], &[0, 1], &[1, 3], false)?;
    assert_eq!(y.shape(), vec![1, 1, 2, 1]);
    assert_eq!((f64s(&y), i.to_vec::<i64>()?), (vec![ninf; 2], vec![2, 4]));
    y.backward_with(Some(&t64(&[7.0, 9.0], &[1, 1, 2, 1])), Default::default())?;
    assert_eq!(f64s(&x.grad().unwrap()), vec![0.0, 0.0, 7.0, 0.0]);
    // hollow rows, columns with taps: every index past the plane
    let x = t64(&[1.0, -2.0, 5.0], &[1, 1, 1, 3]);
    let (y, i) = x.max_pool2d_with_indices(&[2, 2], &[1, 1], &[1, 1], &[2, 1], false)?;
    assert_eq!(y.shape(), vec![1, 1, 1, 4]);
    assert_eq!(
        (f64s(&y), i.to_vec::<i64>()?),
        (vec![ninf; 4], vec![3, 3, 4, 5])
    );
    // integer dtypes: the lowest value
    let xi = Tensor::from_vec(vec![0i64, 1], &[1, 1, 2, 1])?;
    let (y, i) = xi.max_pool2d_with_indices(&[1, 2], &[1], &[0, 1], &[1, 2], false)?;
    assert_eq!(y.to_vec::<i64>()?, vec![i64::MIN; 2]);
    assert_eq!(i.to_vec::<i64>()?, vec![1, 2]);
    let xu = Tensor::from_vec(vec![0u8, 1], &[1, 1, 2, 1])?;
    let (y, i) = xu.max_pool2d_with_indices(&[1, 2], &[1], &[0, 1], &[1, 2], false)?;
    assert_eq!(
        (y.to_vec::<u8>()?, i.to_vec::<i64>()?),
        (vec![0, 0], vec![1, 2])
    );
    Ok(())
}

#[test]
fn max_pool_input_gradient_links_to_the_input_under_create_graph() -> R {
    // torch 2.15: the input gradient of max_pool2d / adaptive_max_pool2d under create_graph
    // requires grad (node MaxPool2DWithIndicesBackwardBackward0 /
    // AdaptiveMaxPool2DBackwardBackward0), and its gradient w.r.t. the input is zeros
    use tapegrad::autograd::{GradOptions, grad};
    let x = img().requires_grad_(true)?;
    for (y, node) in [
        (
            x.max_pool2d(&[2], None, &[0], &[1], false)?,
            "MaxPool2DWithIndicesBackwardBackward0",
        ),
        (
            x.adaptive_max_pool2d(&[2])?,
            "AdaptiveMaxPool2DBackwardBackward0",
        ),
    ] {
        let ones = Tensor::ones(&y.shape(), DType::F64)?;
        let opts = GradOptions::default().create_graph(true);
        let g = grad(&[y], std::slice::from_ref(&x), &[Some(ones)], opts)?;
        let gx = g[0].clone().unwrap();
        assert!(gx.requires_grad());
        assert_eq!(gx.grad_fn().unwrap().name(), node);
        let gg = grad(
            &[gx.sum()?],
            std::slice::from_ref(&x),
            &[None],
            Default::default(),
        )?;
        assert_eq!(f64s(&gg[0].clone().unwrap()), vec![0.0; 120]);
    }
    Ok(())
}

/// The f32 / f64 values of the tiling test: many ties (`-0.0` / `0.0`), `±inf` and two NaNs
/// of different bits (which NaN a window gives shows in its bits).
trait Pick: tapegrad::Element + Copy {
    const VALUES: [Self; 9];
    fn bits(self) -> u64;
    fn gt(self, o: Self) -> bool;
    fn nan(self) -> bool;
}

impl Pick for f32 {
    const VALUES: [f32; 9] = [
        -0.0,
        0.0,
        1.0,
        -1.0,
        2.0,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::NAN,
        -f32::NAN,
    ];
    fn bits(self) -> u64 {
        self.to_bits() as u64
    }
    fn gt(self, o: Self) -> bool {
        self > o
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

impl Pick for f64 {
    const VALUES: [f64; 9] = [
        -0.0,
        0.0,
        1.0,
        -1.0,
        2.0,
        f64::INFINITY,
        f64::NEG_INFINITY,
        f64::NAN,
        -f64::NAN,
    ];
    fn bits(self) -> u64 {
        self.to_bits()
    }
    fn gt(self, o: Self) -> bool {
        self > o
    }
    fn nan(self) -> bool {
        self.is_nan()
    }
}

/// Plain max pooling of `[planes, h, w]` without padding or dilation: every window's taps in
/// row-major order from `-inf`, a tap replacing the best when greater or NaN (PyTorch's rule).
fn max_pool_reference<T: Pick>(
    x: &[T],
    (planes, h, w): (usize, usize, usize),
    (kh, kw, sh, sw): (usize, usize, usize, usize),
    ceil_mode: bool,
) -> (Vec<u64>, Vec<i64>) {
    let out = |n: usize, k: usize, s: usize| {
        let mut o = if ceil_mode {
            (n - k).div_ceil(s)
        } else {
            (n - k) / s
        } + 1;
        if ceil_mode && (o - 1) * s >= n {
            o -= 1; // a last window starts inside the input
        }
        o
    };
    let (oh, ow) = (out(h, kh, sh), out(w, kw, sw));
    let (mut vals, mut idx) = (Vec::new(), Vec::new());
    for p in 0..planes {
        let x = &x[p * h * w..][..h * w];
        for i in 0..oh {
            for j in 0..ow {
                let (mut best, mut at) = (T::VALUES[6], i * sh * w + j * sw);
                for r in i * sh..(i * sh + kh).min(h) {
                    for c in j * sw..(j * sw + kw).min(w) {
                        let v = x[r * w + c];
                        if v.gt(best) || v.nan() {
                            (best, at) = (v, r * w + c);
                        }
                    }
                }
                vals.push(best.bits());
                idx.push(at as i64);
            }
        }
    }
    (vals, idx)
}

fn tiling_case<T: Pick>(dt: DType) -> R {
    // a fixed LCG over the values: runs of ties, NaNs, infinities
    let mut state = 12345u64;
    let mut next = move || {
        state = state
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        (state >> 33) as usize
    };
    for (h, w) in [(56, 56), (57, 57), (7, 9), (2, 2), (1, 5)] {
        let planes = 3;
        let v: Vec<T> = (0..planes * h * w).map(|_| T::VALUES[next() % 9]).collect();
        let x = Tensor::from_vec(v.clone(), &[1, planes, h, w])?;
        assert_eq!(x.dtype(), dt);
        for (kh, kw, sh, sw) in [
            (2, 2, 2, 2),
            (3, 3, 3, 3),
            (2, 3, 2, 3),
            (1, 2, 1, 2),
            (4, 1, 4, 1),
            (5, 5, 5, 5),
            (2, 2, 1, 1),
            (3, 2, 2, 2),
        ] {
            if kh > h || kw > w {
                continue;
            }
            for ceil_mode in [false, true] {
                let (rv, ri) = max_pool_reference(&v, (planes, h, w), (kh, kw, sh, sw), ceil_mode);
                let k = [kh as i64, kw as i64];
                let s = [sh as i64, sw as i64];
                let case = format!("{dt:?} {h}x{w} k{k:?} s{s:?} ceil {ceil_mode}");
                let (y, i) = x.max_pool2d_with_indices(&k, &s, &[0], &[1], ceil_mode)?;
                let bits: Vec<u64> = y.to_vec::<T>()?.into_iter().map(T::bits).collect();
                assert_eq!(bits, rv, "{case}: values");
                assert_eq!(i.to_vec::<i64>()?, ri, "{case}: indices");
                // without indices (the op not recorded): the same values
                let y = x.max_pool2d(&k, &s, &[0], &[1], ceil_mode)?;
                let bits: Vec<u64> = y.to_vec::<T>()?.into_iter().map(T::bits).collect();
                assert_eq!(bits, rv, "{case}: values without indices");
            }
        }
    }
    Ok(())
}

#[test]
fn max_pool2d_tiling_windows_match_a_plain_loop_bit_for_bit() -> R {
    // windows tiling the plane (stride = kernel, as the 2x2 workload `max_pool2d_c64_56`)
    // take the backend's row-wise path; the others (overlapping, partial windows of
    // ceil_mode) the general one: both give a plain loop's values (bits: which NaN, which
    // zero) and indices (the last NaN, else the first of equal maxima)
    tiling_case::<f32>(DType::F32)?;
    tiling_case::<f64>(DType::F64)
}

#[test]
fn max_pool2d_gradient_without_asking_for_indices() -> R {
    // the plain `max_pool2d` of a tensor requiring grad still routes the gradient to the
    // picks (ties: the first; torch 2.15 gives the same)
    let x = t64(&[1.0, 1.0, 0.0, 3.0, 1.0, 0.0, 3.0, 0.0], &[1, 1, 2, 4]).requires_grad_(true)?;
    let y = x.max_pool2d(&[2], None, &[0], &[1], false)?;
    assert_eq!(f64s(&y), vec![1.0, 3.0]);
    y.backward_with(Some(&t64(&[5.0, 7.0], &[1, 1, 1, 2])), Default::default())?;
    assert_eq!(
        f64s(&x.grad().unwrap()),
        vec![5.0, 0.0, 0.0, 7.0, 0.0, 0.0, 0.0, 0.0]
    );
    Ok(())
}
