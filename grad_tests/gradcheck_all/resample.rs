//! Rows of the resampling family (`ops/resample/`): pad in every mode (negative pads, 1-3
//! dims), unfold/fold (padding, dilation, stride), interpolate (nearest and the linear modes,
//! align_corners, size and scale_factor), pixel_shuffle / pixel_unshuffle.

use super::*;
use tapegrad::{InterpolateMode, InterpolateOptions, PadMode};

fn interp<'a>(
    size: Option<&[usize]>,
    scale_factor: Option<&'a [f64]>,
    mode: InterpolateMode,
    align_corners: Option<bool>,
) -> InterpolateOptions<'a> {
    InterpolateOptions {
        size: size.map(Into::into),
        scale_factor,
        mode,
        align_corners,
        recompute_scale_factor: None,
    }
}

pub(crate) fn resample_cases() -> Vec<Case> {
    let img = |s| leaf(&[2, 2, 4, 5], -2.0, 2.0, s);
    vec![
        case!("pad", [img(950)], |v| {
            v[0].pad(&[1, 2, 0, 1], PadMode::Constant, Some(0.5))
        }),
        case!("pad/constant_crop_all_dims", [img(951)], |v| {
            v[0].pad(&[-1, 2, 1, -1, 0, 1, 1, 0], PadMode::Constant, None)
        }),
        case!("pad/reflect_2d", [img(952)], |v| {
            v[0].pad(&[2, 1, 3, 1], PadMode::Reflect, None)
        }),
        case!(
            "pad/reflect_1d_negative",
            [leaf(&[2, 5], -2.0, 2.0, 953)],
            |v| v[0].pad(&[-1, 3], PadMode::Reflect, None)
        ),
        case!(
            "pad/replicate_3d",
            [leaf(&[1, 2, 2, 3, 3], -2.0, 2.0, 954)],
            |v| v[0].pad(&[1, 2, 2, 0, 1, 1], PadMode::Replicate, None)
        ),
        case!("pad/circular_2d", [img(955)], |v| {
            v[0].pad(&[2, 1, -1, 3], PadMode::Circular, None)
        }),
        case!("pad/transposed_input", [img(956)], |v| {
            v[0].transpose(2, 3)?
                .pad(&[1, 1, 2, 0], PadMode::Reflect, None)
        }),
        case!("unfold_blocks", [img(957)], |v| {
            v[0].unfold_blocks(&[2, 3], &[1], &[0], &[1])
        }),
        case!("unfold_blocks/pad_dilation_stride", [img(958)], |v| {
            v[0].unfold_blocks(&[2], &[2, 1], &[1], &[2, 1])
        }),
        case!(
            "unfold_blocks/unbatched",
            [leaf(&[3, 4, 4], -2.0, 2.0, 959)],
            |v| v[0].unfold_blocks(&[3], &[1], &[1], &[2])
        ),
        case!("fold", [leaf(&[2, 8, 12], -2.0, 2.0, 960)], |v| {
            v[0].fold(&[4, 5], &[2], &[1], &[0], &[1])
        }),
        case!(
            "fold/pad_dilation_stride",
            [leaf(&[1, 12, 6], -2.0, 2.0, 961)],
            |v| v[0].fold(&[4, 5], &[2], &[2, 1], &[1], &[2, 2])
        ),
        case!("interpolate", [img(962)], |v| {
            v[0].interpolate(interp(None, Some(&[2.0]), InterpolateMode::Nearest, None))
        }),
        case!(
            "interpolate/nearest_size_1d",
            [leaf(&[2, 3, 5], -2.0, 2.0, 963)],
            |v| v[0].interpolate(interp(Some(&[7]), None, InterpolateMode::Nearest, None))
        ),
        case!(
            "interpolate/nearest_downscale_3d",
            [leaf(&[1, 2, 3, 4, 5], -2.0, 2.0, 964)],
            |v| {
                v[0].interpolate(interp(
                    Some(&[2, 5, 3]),
                    None,
                    InterpolateMode::Nearest,
                    None,
                ))
            }
        ),
        case!("interpolate/bilinear", [img(965)], |v| {
            v[0].interpolate(interp(
                None,
                Some(&[1.5, 1.7]),
                InterpolateMode::Bilinear,
                None,
            ))
        }),
        case!("interpolate/bilinear_align_corners", [img(966)], |v| {
            v[0].interpolate(interp(
                Some(&[7, 3]),
                None,
                InterpolateMode::Bilinear,
                Some(true),
            ))
        }),
        case!(
            "interpolate/linear",
            [leaf(&[2, 3, 5], -2.0, 2.0, 967)],
            |v| {
                v[0].interpolate(interp(
                    Some(&[8]),
                    None,
                    InterpolateMode::Linear,
                    Some(false),
                ))
            }
        ),
        case!(
            "interpolate/trilinear",
            [leaf(&[1, 1, 2, 3, 4], -2.0, 2.0, 968)],
            |v| {
                v[0].interpolate(interp(
                    None,
                    Some(&[2.0]),
                    InterpolateMode::Trilinear,
                    Some(true),
                ))
            }
        ),
        case!(
            "pixel_shuffle",
            [leaf(&[2, 8, 2, 3], -2.0, 2.0, 969)],
            |v| v[0].pixel_shuffle(2)
        ),
        case!(
            "pixel_unshuffle",
            [leaf(&[2, 2, 4, 6], -2.0, 2.0, 970)],
            |v| v[0].pixel_unshuffle(2)
        ),
        case!(
            "pixel_shuffle/5d_r3",
            [leaf(&[1, 2, 9, 2, 1], -2.0, 2.0, 971)],
            |v| v[0].pixel_shuffle(3)
        ),
    ]
}
