//! batch_norm, instance_norm, group_norm (`ops/norm/`): values, gradients and running
//! statistics against PyTorch 2.15 (numbers recorded with `torch.nn.functional`), version
//! counters of the running statistics, and errors that change nothing.

use crate::common::{R, assert_close, f64s, t64};
use tapegrad::{DType, ErrorKind, Tensor};

/// `sin(0..24)` as `[3, 2, 4]` f64.
fn x_sin() -> Tensor {
    let v: Vec<f64> = (0..24).map(|i| (i as f64).sin()).collect();
    t64(&v, &[3, 2, 4])
}

fn cos24() -> Tensor {
    let v: Vec<f64> = (0..24).map(|i| (i as f64).cos()).collect();
    t64(&v, &[3, 2, 4])
}

#[test]
fn batch_norm_training_matches_torch() -> R {
    let x = x_sin().requires_grad_(true)?;
    let w = t64(&[0.5, 1.5], &[2]).requires_grad_(true)?;
    let b = t64(&[0.25, -1.0], &[2]).requires_grad_(true)?;
    let (rm, rv) = (t64(&[0.25, -0.5], &[2]), t64(&[1.5, 0.75], &[2]));
    let y = x.batch_norm(Some(&rm), Some(&rv), Some(&w), Some(&b), true, 0.3, 1e-5)?;
    assert_close(
        &f64s(&y.select(0, 0)?),
        &[
            0.25616808400568714,
            0.8724851878441553,
            0.9221631887054833,
            0.3595283616996049,
            -2.7930567114080516,
            -3.2210018875200555,
            -1.7823023869452617,
            0.2003081043905457,
        ],
        1e-12,
    );
    assert_close(
        &f64s(&rm),
        &[0.17247357471162908, -0.3229784294743725],
        1e-12,
    );
    assert_close(&f64s(&rv), &[1.2025142261002146, 0.6892606874445962], 1e-12);
    // PyTorch's native batch_norm writes the running statistics without a version bump
    assert_eq!((rm.version(), rv.version()), (0, 0));
    y.mul(cos24())?.sum()?.backward()?;
    assert_close(
        &f64s(&x.grad().unwrap().select(0, 0)?),
        &[
            0.8142162873413362,
            0.47196639568584364,
            -0.22901166066836937,
            -0.6442418894351729,
            -1.4293475412775458,
            0.5780263040645949,
            1.9335537948245443,
            1.3909692073329114,
        ],
        1e-12,
    );
    assert_close(
        &f64s(&w.grad().unwrap()),
        &[0.0738266411365435, 0.45393622359531655],
        1e-12,
    );
    assert_close(
        &f64s(&b.grad().unwrap()),
        &[-1.3409146460053725, 0.8000001059860746],
        1e-12,
    );
    Ok(())
}

#[test]
fn batch_norm_eval_uses_running_stats() -> R {
    let x = x_sin();
    let (rm, rv) = (t64(&[0.25, -0.5], &[2]), t64(&[1.5, 0.75], &[2]));
    let y = x.batch_norm(Some(&rm), Some(&rv), None, None, false, 0.3, 1e-5)?;
    let xs = f64s(&x);
    let ys = f64s(&y);
    for (i, (&a, &b)) in xs.iter().zip(&ys).enumerate() {
        let c = (i / 4) % 2;
        let want = (a - [0.25, -0.5][c]) / ([1.5f64, 0.75][c] + 1e-5).sqrt();
        assert!((b - want).abs() < 1e-14, "{b} vs {want}");
    }
    assert_eq!(f64s(&rm), vec![0.25, -0.5]);
    Ok(())
}

#[test]
fn batch_norm_f32_matches_f64() -> R {
    let x = Tensor::randn(&[4, 3, 5, 6], DType::F32)?;
    let (rm, rv) = (
        Tensor::zeros(&[3], DType::F32)?,
        Tensor::ones(&[3], DType::F32)?,
    );
    let y = x.batch_norm(Some(&rm), Some(&rv), None, None, true, 0.1, 1e-5)?;
    let x64 = x.to_dtype(DType::F64)?;
    let y64 = x64.batch_norm(None, None, None, None, true, 0.1, 1e-5)?;
    assert_eq!(y.dtype(), DType::F32);
    assert_close(&f64s(&y), &f64s(&y64), 1e-5);
    let mean = x64.mean(&[0, 2, 3], false, None)?.mul(0.1)?;
    assert_close(&f64s(&rm), &f64s(&mean), 1e-6);
    Ok(())
}

#[test]
fn instance_norm_bumps_running_stats_and_matches_torch() -> R {
    let x = x_sin();
    let (rm, rv) = (t64(&[0.25, -0.5], &[2]), t64(&[1.5, 0.75], &[2]));
    let y = x.instance_norm(Some(&rm), Some(&rv), None, None, true, 0.3, 1e-5)?;
    assert_close(
        &f64s(&y.select(0, 1)?),
        &[
            1.3124828252126037,
            0.5733381763577529,
            -0.6509805787242093,
            -1.2348404228461474,
            -1.6174444421642198,
            0.0688165776533917,
            1.074221723520518,
            0.47440614099030964,
        ],
        1e-12,
    );
    assert_close(
        &f64s(&rm),
        &[0.17247357471162914, -0.32297842947437255],
        1e-12,
    );
    assert_close(&f64s(&rv), &[1.1779048261349296, 0.6880506521546593], 1e-12);
    // instance_norm writes the running statistics back with copy_: one version bump each
    assert_eq!((rm.version(), rv.version()), (1, 1));
    // in evaluation the running statistics are only read: no write, no bump
    x.instance_norm(Some(&rm), Some(&rv), None, None, false, 0.3, 1e-5)?;
    assert_eq!((rm.version(), rv.version()), (1, 1));
    Ok(())
}

/// An empty input repeats nothing: instance norm of a fuzzed `[2^26, 4, 0, 2, 3]` input (then
/// batch norm of `[1, 2^28, 0, 2, 3]`) once took 30 s and 20 GB. Values from torch 2.15.
#[test]
fn instance_norm_of_an_empty_input_repeats_nothing() -> R {
    let stats = || {
        let rm = Tensor::from_vec(vec![0.1f32, 0.2, 0.3], &[3]).unwrap();
        let rv = Tensor::from_vec(vec![1.5f32, 0.5, 2.0], &[3]).unwrap();
        (rm, rv)
    };
    let huge = Tensor::zeros(&[1 << 26, 4, 0, 2, 3], DType::F32)?;
    let (rm4, rv4) = (
        Tensor::zeros(&[4], DType::F32)?,
        Tensor::ones(&[4], DType::F32)?,
    );
    let w4 = Tensor::ones(&[4], DType::F32)?.requires_grad_(true)?;
    let t = std::time::Instant::now();
    let y = huge.instance_norm(Some(&rm4), Some(&rv4), Some(&w4), None, false, 0.1, 1e-5)?;
    assert_eq!(y.shape(), vec![1 << 26, 4, 0, 2, 3]);
    y.sum()?.backward()?;
    assert_eq!(f64s(&w4.grad().expect("weight grad")), vec![0.0; 4]);
    assert!(t.elapsed().as_secs_f64() < 5.0, "{:?}", t.elapsed());
    // eval: torch's output [5, 3, 2, 0] has strides (6, 2, 1, 1), zero parameter gradients,
    // and the running statistics are not written
    let x = Tensor::zeros(&[5, 3, 2, 0], DType::F32)?.requires_grad_(true)?;
    let w = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[3])?.requires_grad_(true)?;
    let b = Tensor::zeros(&[3], DType::F32)?.requires_grad_(true)?;
    let (rm, rv) = stats();
    let y = x.instance_norm(Some(&rm), Some(&rv), Some(&w), Some(&b), false, 0.1, 1e-5)?;
    assert_eq!(
        (y.shape(), y.strides()),
        (vec![5, 3, 2, 0], vec![6, 2, 1, 1])
    );
    y.sum()?.backward()?;
    assert_eq!(f64s(&w.grad().expect("weight grad")), vec![0.0; 3]);
    assert_eq!(f64s(&b.grad().expect("bias grad")), vec![0.0; 3]);
    assert_eq!(x.grad().expect("input grad").shape(), vec![5, 3, 2, 0]);
    assert_eq!((rm.version(), rv.version()), (0, 0));
    // training: torch writes back the mean of N unchanged copies (rounded in f32; NaN for N = 0)
    let (rm, rv) = stats();
    let x = Tensor::zeros(&[7, 3, 0], DType::F32)?;
    x.instance_norm(Some(&rm), Some(&rv), None, None, true, 0.1, 1e-5)?;
    assert_eq!(
        f64s(&rm),
        vec![
            0.10000000894069672,
            0.20000001788139343,
            0.29999998211860657
        ]
    );
    assert_eq!(f64s(&rv), vec![1.5, 0.5, 2.0]);
    assert_eq!((rm.version(), rv.version()), (1, 1));
    let (rm, rv) = stats();
    let x = Tensor::zeros(&[0, 3, 4], DType::F32)?;
    x.instance_norm(Some(&rm), Some(&rv), None, None, true, 0.1, 1e-5)?;
    assert!(f64s(&rm).iter().chain(&f64s(&rv)).all(|v| v.is_nan()));
    Ok(())
}

#[test]
fn group_norm_matches_torch() -> R {
    let v: Vec<f64> = (0..24).map(|i| (i as f64).cos()).collect();
    let x = t64(&v, &[2, 4, 3]);
    let w = t64(&[0.5, 1.5, 0.5, 1.5], &[4]);
    let b = t64(&[0.25, -1.0, 0.25, -1.0], &[4]);
    let y = x.group_norm(2, Some(&w), Some(&b), 1e-5)?;
    assert_close(
        &f64s(&y.select(0, 1)?),
        &[
            0.8469472654252034,
            0.891023727010315,
            0.3568415818281837,
            -2.543423708043753,
            -2.955068567418751,
            -1.5359454473286018,
            0.7073477782605955,
            0.9334588291463009,
            0.5336719538850936,
            -2.1233519143585267,
            -3.057502212598927,
            -2.092581556918517,
        ],
        1e-12,
    );
    Ok(())
}

#[test]
fn norm_errors_change_nothing() -> R {
    let x = x_sin();
    let (rm, rv) = (t64(&[0.25, -0.5], &[2]), t64(&[1.5, 0.75], &[2]));
    let bad = t64(&[1.0, 2.0, 3.0], &[3]);
    let e = x
        .batch_norm(Some(&rm), Some(&rv), Some(&bad), None, true, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    let e = x
        .batch_norm(None, None, None, None, false, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let one = t64(&[1.0, 2.0], &[1, 2]);
    let e = one
        .batch_norm(Some(&rm), Some(&rv), None, None, true, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let f32s = Tensor::zeros(&[2], DType::F32)?;
    let e = x
        .batch_norm(Some(&f32s), Some(&rv), None, None, true, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    let ints = Tensor::from_vec(vec![1i64, 2, 3, 4], &[2, 2])?;
    let e = ints
        .batch_norm(None, None, None, None, true, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    let e = x.group_norm(3, None, None, 1e-5).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = x
        .instance_norm(None, None, None, None, false, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    let e = x
        .instance_norm(Some(&rm), Some(&bad), None, None, true, 0.1, 1e-5)
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::ShapeMismatch);
    assert_eq!(f64s(&rm), vec![0.25, -0.5]);
    assert_eq!(f64s(&rv), vec![1.5, 0.75]);
    assert_eq!((rm.version(), rv.version()), (0, 0));
    Ok(())
}

/// `group_norm` is PyTorch's `native_group_norm` node: f32 statistics rounded as its kernel
/// (`rstd` from the f64 root of `var + eps`) and its backward formula in f32. The first row
/// is the sweep's `sw_f_group_norm_0003`, whose input gradient is the small difference of
/// terms of size 1 (f64 statistics gave 8.0479e-4); values recorded from PyTorch 2.15.
#[test]
fn group_norm_f32_is_torch_kernel() -> R {
    let f32s = |t: &Tensor| -> Vec<f64> {
        t.to_vec::<f32>()
            .unwrap()
            .into_iter()
            .map(f64::from)
            .collect()
    };
    let t32 = |v: &[f64], s: &[usize]| -> Tensor {
        let v: Vec<f32> = v.iter().map(|&x| x as f32).collect();
        Tensor::from_vec(v, s).unwrap()
    };
    let x = t32(
        &[-0.8125, -1.1875, 0.4375, -2.875, -0.375, -1.6875],
        &[3, 2],
    )
    .requires_grad_(true)?;
    let ct = t32(&[0.3125, -0.75, 1.25, -0.6875, 1.0625, 0.9375], &[3, 2]);
    x.group_norm(1, None, None, 1e-5)?
        .backward_with(Some(&ct), Default::default())?;
    let want = [
        0.0008058547973632812,
        -0.0008068084716796875,
        2.1457672119140625e-06,
        -2.1457672119140625e-06,
        2.2649765014648438e-06,
        -2.1457672119140625e-06,
    ];
    // bit for bit: PyTorch's kernel order (the fixture's tolerance is rtol 1e-5)
    assert_eq!(f32s(&x.grad().unwrap()), want);

    // affine, two groups of two channels of three elements
    let v: Vec<f64> = (0..24).map(|i| (i as f64).cos() * 2.0).collect();
    let x = t32(&v, &[2, 4, 3]).requires_grad_(true)?;
    let w = t32(&[0.5, 1.5, -0.75, 1.25], &[4]).requires_grad_(true)?;
    let b = t32(&[0.25, -1.0, 0.5, 0.125], &[4]).requires_grad_(true)?;
    let y = x.group_norm(2, Some(&w), Some(&b), 1e-5)?;
    let g: Vec<f64> = (0..24).map(|i| (i as f64).sin()).collect();
    y.backward_with(Some(&t32(&g, &[2, 4, 3])), Default::default())?;
    assert_close(
        &f32s(&y)[..6],
        &[
            0.9918988347053528,
            0.6637470126152039,
            -0.019007153809070587,
            -3.0359277725219727,
            -2.315627336502075,
            -0.3083608150482178,
        ],
        1e-6,
    );
    assert_close(
        &f32s(&x.grad().unwrap())[..6],
        &[
            0.15061087906360626,
            0.4625590741634369,
            0.5109221339225769,
            0.35197269916534424,
            -0.6179845333099365,
            -0.8580801486968994,
        ],
        1e-5,
    );
    assert_close(
        &f32s(&w.grad().unwrap()),
        &[
            0.3168366849422455,
            0.0797257050871849,
            0.2092992514371872,
            0.0625246912240982,
        ],
        1e-5,
    );
    assert_close(
        &f32s(&b.grad().unwrap()),
        &[
            2.624969959259033,
            -2.1736197471618652,
            1.6787645816802979,
            -1.1503090858459473,
        ],
        1e-6,
    );
    Ok(())
}
