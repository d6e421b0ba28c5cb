//! Rows of the convolutions: every form (stride, padding ints / same / valid, dilation,
//! groups incl. depthwise, bias, unbatched, non-contiguous input) of conv1d/2d/3d and the
//! transposed convolutions.

use super::{Case, leaf};
use crate::common::{ConvBuild, ConvPad, ConvTPad};
use tapegrad::{ConvOptions, ConvPadding, ConvTransposeOptions, Tensor};

pub(crate) fn conv_cases() -> Vec<Case> {
    let o = ConvOptions::default;
    let t = ConvTransposeOptions::default;
    vec![
        case!(
            "conv2d",
            [
                leaf(&[2, 2, 4, 5], -1.0, 1.0, 600),
                leaf(&[3, 2, 3, 3], -1.0, 1.0, 601),
                leaf(&[3], -1.0, 1.0, 602)
            ],
            |v| v[0].conv2d(&v[1], Some(&v[2]), &o())
        ),
        case!(
            "conv2d/stride_pad",
            [
                leaf(&[1, 2, 5, 6], -1.0, 1.0, 603),
                leaf(&[2, 2, 3, 2], -1.0, 1.0, 604)
            ],
            |v| v[0].conv2d(&v[1], None, &o().stride([2, 1]).padding([1, 2]))
        ),
        case!(
            "conv2d/dilation",
            [
                leaf(&[1, 1, 6, 5], -1.0, 1.0, 605),
                leaf(&[2, 1, 2, 2], -1.0, 1.0, 606),
                leaf(&[2], -1.0, 1.0, 607)
            ],
            |v| v[0].conv2d(&v[1], Some(&v[2]), &o().dilation([2, 1]).padding(1))
        ),
        case!(
            "conv2d/groups",
            [
                leaf(&[2, 4, 4, 4], -1.0, 1.0, 608),
                leaf(&[6, 2, 2, 3], -1.0, 1.0, 609)
            ],
            |v| v[0].conv2d(&v[1], None, &o().groups(2).stride(2))
        ),
        case!(
            "conv2d/depthwise",
            [
                leaf(&[1, 3, 4, 4], -1.0, 1.0, 610),
                leaf(&[3, 1, 3, 3], -1.0, 1.0, 611),
                leaf(&[3], -1.0, 1.0, 612)
            ],
            |v| v[0].conv2d(&v[1], Some(&v[2]), &o().groups(3).padding(1))
        ),
        case!(
            "conv2d/same_even_kernel",
            [
                leaf(&[1, 2, 4, 5], -1.0, 1.0, 613),
                leaf(&[2, 2, 2, 4], -1.0, 1.0, 614)
            ],
            |v| v[0].conv2d(
                &v[1],
                None,
                &o().padding(ConvPadding::Same).dilation([1, 2])
            )
        ),
        case!(
            "conv2d/valid_unbatched_noncontig",
            [
                leaf(&[5, 4, 2], -1.0, 1.0, 615),
                leaf(&[2, 2, 3, 3], -1.0, 1.0, 616)
            ],
            |v| v[0]
                .permute(&[2, 1, 0])?
                .conv2d(&v[1], None, &o().padding(ConvPadding::Valid))
        ),
        case!(
            "conv2d/pointwise",
            [
                leaf(&[2, 3, 3, 2], -1.0, 1.0, 617),
                leaf(&[2, 3, 1, 1], -1.0, 1.0, 618)
            ],
            |v| v[0].conv2d(&v[1], None, &o())
        ),
        case!(
            "conv1d",
            [
                leaf(&[2, 2, 7], -1.0, 1.0, 620),
                leaf(&[4, 1, 3], -1.0, 1.0, 621),
                leaf(&[4], -1.0, 1.0, 622)
            ],
            |v| v[0].conv1d(
                &v[1],
                Some(&v[2]),
                &o().stride(2).padding(1).dilation(2).groups(2)
            )
        ),
        case!(
            "conv3d",
            [
                leaf(&[1, 2, 3, 4, 3], -1.0, 1.0, 623),
                leaf(&[2, 2, 2, 2, 2], -1.0, 1.0, 624),
                leaf(&[2], -1.0, 1.0, 625)
            ],
            |v| v[0].conv3d(
                &v[1],
                Some(&v[2]),
                &o().padding([0, 1, 1]).stride([1, 2, 1])
            )
        ),
        case!(
            "conv_transpose1d",
            [
                leaf(&[2, 2, 4], -1.0, 1.0, 630),
                leaf(&[2, 3, 3], -1.0, 1.0, 631),
                leaf(&[3], -1.0, 1.0, 632)
            ],
            |v| v[0].conv_transpose1d(
                &v[1],
                Some(&v[2]),
                &t().stride(2).padding(1).output_padding(1)
            )
        ),
        case!(
            "conv_transpose2d",
            [
                leaf(&[1, 4, 3, 3], -1.0, 1.0, 633),
                leaf(&[4, 1, 2, 3], -1.0, 1.0, 634),
                leaf(&[2], -1.0, 1.0, 635)
            ],
            |v| v[0].conv_transpose2d(
                &v[1],
                Some(&v[2]),
                &t().stride([2, 1])
                    .groups(2)
                    .dilation([1, 2])
                    .output_padding([1, 0])
            )
        ),
        case!(
            "conv_transpose3d",
            [
                leaf(&[1, 2, 2, 3, 2], -1.0, 1.0, 636),
                leaf(&[2, 2, 2, 2, 2], -1.0, 1.0, 637)
            ],
            |v| v[0].conv_transpose3d(&v[1], None, &t().stride(2).padding([0, 1, 0]))
        ),
    ]
}
