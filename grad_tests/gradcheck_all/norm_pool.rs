//! Rows of the normalization (`ops/norm/`) and pooling (`ops/pool/`) families.

use super::*;

pub(crate) fn norm_cases() -> Vec<Case> {
    let x = |s| leaf(&[3, 2, 4], -2.0, 2.0, s);
    let x4 = |s| leaf(&[2, 2, 3, 2], -2.0, 2.0, s);
    let w = |s| leaf(&[2], 0.5, 1.5, s);
    let stats = || {
        (
            Tensor::from_vec(vec![0.25f64, -0.5], &[2]).unwrap(),
            Tensor::from_vec(vec![1.5f64, 0.75], &[2]).unwrap(),
        )
    };
    vec![
        case!("batch_norm", [x(600), w(601), w(602)], |v| {
            let (rm, rv) = stats();
            v[0].batch_norm(
                Some(&rm),
                Some(&rv),
                Some(&v[1]),
                Some(&v[2]),
                true,
                0.1,
                1e-5,
            )
        }),
        case!(
            "batch_norm/no_affine_2d",
            [leaf(&[4, 3], -2.0, 2.0, 603)],
            |v| v[0].batch_norm(None, None, None, None, true, 0.1, 1e-5)
        ),
        case!("batch_norm/4d_transposed", [x4(604), w(605)], |v| {
            v[0].transpose(2, 3)?
                .batch_norm(None, None, Some(&v[1]), None, true, 0.1, 1e-3)
        }),
        case!("batch_norm/eval", [x(606), w(607), w(608)], |v| {
            let (rm, rv) = stats();
            v[0].batch_norm(
                Some(&rm),
                Some(&rv),
                Some(&v[1]),
                Some(&v[2]),
                false,
                0.1,
                1e-5,
            )
        }),
        case!("batch_norm/eval_bias_only", [x(609), w(610)], |v| {
            let (rm, rv) = stats();
            v[0].batch_norm(Some(&rm), Some(&rv), None, Some(&v[1]), false, 0.1, 1e-5)
        }),
        case!(
            "group_norm",
            [
                leaf(&[2, 4, 3], -2.0, 2.0, 611),
                leaf(&[4], 0.5, 1.5, 612),
                leaf(&[4], -1.0, 1.0, 613)
            ],
            |v| v[0].group_norm(2, Some(&v[1]), Some(&v[2]), 1e-5)
        ),
        case!("group_norm/one_group_4d", [x4(614)], |v| v[0]
            .group_norm(1, None, None, 1e-5)),
        // channels-last inputs: the output and input gradient keep the format
        case!("batch_norm/channels_last", [x4(690), w(691)], |v| {
            let x = v[0]
                .permute([0, 2, 3, 1])?
                .contiguous()?
                .permute([0, 3, 1, 2])?;
            x.batch_norm(None, None, Some(&v[1]), None, true, 0.1, 1e-3)
        }),
        case!("group_norm/channels_last", [x4(692), w(693)], |v| {
            let x = v[0]
                .permute([0, 2, 3, 1])?
                .contiguous()?
                .permute([0, 3, 1, 2])?;
            x.group_norm(2, Some(&v[1]), None, 1e-3)
        }),
        // the kernel's bias-only path (`scale = rstd`, `bias = b - rstd mean`)
        case!("group_norm/bias_only", [x(694), w(695)], |v| v[0]
            .group_norm(2, None, Some(&v[1]), 1e-5)),
        case!("instance_norm", [x(615), w(616), w(617)], |v| {
            let (rm, rv) = stats();
            v[0].instance_norm(
                Some(&rm),
                Some(&rv),
                Some(&v[1]),
                Some(&v[2]),
                true,
                0.1,
                1e-5,
            )
        }),
        case!("instance_norm/eval", [x(618)], |v| {
            let (rm, rv) = stats();
            v[0].instance_norm(Some(&rm), Some(&rv), None, None, false, 0.1, 1e-5)
        }),
    ]
}

pub(crate) fn pool_cases() -> Vec<Case> {
    // distinct values: no ties inside a window
    let img = |s| leaf(&[2, 2, 5, 6], -2.0, 2.0, s);
    vec![
        case!("max_pool2d", [img(630)], |v| v[0].max_pool2d(
            &[2],
            None,
            &[0],
            &[1],
            false
        )),
        case!("max_pool2d/stride_pad_ceil", [img(631)], |v| {
            v[0].max_pool2d(&[3, 2], &[2, 1], &[1, 1], &[1], true)
        }),
        case!(
            "max_pool2d/dilation_3d_input",
            [leaf(&[2, 5, 6], -2.0, 2.0, 632)],
            |v| v[0].max_pool2d(&[2], &[1], &[1], &[2], false)
        ),
        case!("max_pool2d/transposed", [img(633)], |v| {
            v[0].transpose(2, 3)?
                .max_pool2d(&[2], &[2], &[0], &[1], true)
        }),
        case!("max_pool2d_with_indices", [img(634)], |v| {
            Ok(v[0]
                .max_pool2d_with_indices(&[2], None, &[1], &[1], false)?
                .0)
        }),
        case!("max_pool1d", [leaf(&[2, 3, 7], -2.0, 2.0, 635)], |v| {
            v[0].max_pool1d(3, Some(2), 1, 1, true)
        }),
        case!(
            "max_pool1d_with_indices",
            [leaf(&[3, 7], -2.0, 2.0, 636)],
            |v| Ok(v[0].max_pool1d_with_indices(2, None, 0, 2, false)?.0)
        ),
        case!("adaptive_max_pool2d", [img(637)], |v| v[0]
            .adaptive_max_pool2d(&[3, 4])),
        case!("adaptive_max_pool2d_with_indices", [img(638)], |v| {
            Ok(v[0].adaptive_max_pool2d_with_indices(&[2])?.0)
        }),
        case!("avg_pool2d", [img(639)], |v| v[0].avg_pool2d(
            &[2],
            None,
            &[0],
            false,
            true,
            None
        )),
        case!("avg_pool2d/pad_ceil_include", [img(640)], |v| {
            v[0].avg_pool2d(&[3, 2], &[2], &[1], true, true, None)
        }),
        case!("avg_pool2d/pad_ceil_exclude", [img(641)], |v| {
            v[0].avg_pool2d(&[3], &[2], &[1], true, false, None)
        }),
        case!("avg_pool2d/divisor_override", [img(642)], |v| {
            v[0].avg_pool2d(&[2], &[1], &[1], false, true, Some(3))
        }),
        case!("avg_pool1d", [leaf(&[2, 3, 7], -2.0, 2.0, 643)], |v| {
            v[0].avg_pool1d(3, Some(2), 1, true, false)
        }),
        case!("adaptive_avg_pool2d", [img(644)], |v| v[0]
            .adaptive_avg_pool2d(&[3, 4])),
        case!(
            "adaptive_avg_pool1d",
            [leaf(&[2, 3, 7], -2.0, 2.0, 645)],
            |v| v[0].adaptive_avg_pool1d(3)
        ),
        case!("max_unpool2d", [leaf(&[2, 2, 2, 3], -2.0, 2.0, 646)], |v| {
            let x = Tensor::from_vec(vals(2 * 2 * 4 * 6, -2.0, 2.0, 647), &[2, 2, 4, 6])?;
            let (_, i) = x.max_pool2d_with_indices(&[2], None, &[0], &[1], false)?;
            v[0].max_unpool2d(&i, &[2], None, &[0], None)
        }),
        // windows without a tap inside the input (issue 27): -inf outputs (clamped, so the
        // finite differences exist), their gradient scattered through the spare column
        case!(
            "max_pool2d/window_without_tap",
            [leaf(&[1, 2, 4, 1], -2.0, 2.0, 9270)],
            |v| v[0]
                .max_pool2d(&[1, 2], &[2, 1], &[0, 1], &[1, 2], false)?
                .clamp_min(-10.0)
        ),
    ]
}
