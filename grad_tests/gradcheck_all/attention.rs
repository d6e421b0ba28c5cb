//! Table rows: einsum, baddbmm, scaled_dot_product_attention.

use super::*;
use tapegrad::SdpaOptions;

pub(crate) fn attention_cases() -> Vec<Case> {
    let t = |s: &[usize], seed| leaf(s, -1.0, 1.0, seed);
    vec![
        case!("einsum", [t(&[2, 3], 900), t(&[3, 2], 901)], |v| {
            Tensor::einsum("ij,jk->ik", &[&v[0], &v[1]])
        }),
        case!(
            "einsum/ellipsis_broadcast",
            [t(&[2, 1, 2, 3], 902), t(&[3, 3, 2], 903)],
            |v| Tensor::einsum("...ij,...jk", &[&v[0], &v[1]])
        ),
        case!("einsum/diagonal", [t(&[3, 3, 2], 904)], |v| {
            Tensor::einsum("iij->ji", &[&v[0]])
        }),
        case!("einsum/trace", [t(&[3, 3], 905)], |v| Tensor::einsum(
            "ii",
            &[&v[0]]
        )),
        case!(
            "einsum/three_operands",
            [t(&[2, 3], 906), t(&[3, 4], 907), t(&[4, 2], 908)],
            |v| Tensor::einsum("ij,jk,kl->li", &[&v[0], &v[1], &v[2]])
        ),
        case!("einsum/outer", [t(&[3], 909), t(&[2], 910)], |v| {
            Tensor::einsum("i,j", &[&v[0], &v[1]])
        }),
        case!("einsum/sum", [t(&[2, 3, 2], 911)], |v| Tensor::einsum(
            "ijk->j",
            &[&v[0]]
        )),
        case!(
            "einsum/diag_and_contract",
            [t(&[2, 2, 3], 912), t(&[3, 2], 913)],
            |v| Tensor::einsum("aab,bc->ca", &[&v[0], &v[1]])
        ),
        case!(
            "einsum/attention_scores",
            [t(&[1, 2, 3, 2], 914), t(&[2, 1, 4, 2], 915)],
            |v| Tensor::einsum("bhqd,bhkd->bhqk", &[&v[0], &v[1]])
        ),
        case!(
            "baddbmm",
            [t(&[2, 2, 3], 916), t(&[2, 2, 4], 917), t(&[2, 4, 3], 918)],
            |v| v[0].baddbmm(&v[1], &v[2], 0.5, 2.0)
        ),
        case!(
            "baddbmm/broadcast_self",
            [t(&[3], 919), t(&[2, 2, 4], 920), t(&[2, 4, 3], 921)],
            |v| v[0].baddbmm(&v[1], &v[2], 1.0, 1.0)
        ),
        case!(
            "baddbmm/beta0",
            [t(&[2, 1, 3], 922), t(&[2, 2, 4], 923), t(&[2, 4, 3], 924)],
            |v| v[0].baddbmm(&v[1], &v[2], 0.0, -1.5)
        ),
        case!(
            "scaled_dot_product_attention",
            [t(&[2, 3, 4], 925), t(&[2, 5, 4], 926), t(&[2, 5, 3], 927)],
            |v| Tensor::scaled_dot_product_attention(&v[0], &v[1], &v[2], Default::default())
        ),
        case!(
            "scaled_dot_product_attention/causal_scale",
            [
                t(&[1, 2, 4, 3], 928),
                t(&[1, 2, 3, 3], 929),
                t(&[1, 2, 3, 2], 930)
            ],
            |v| Tensor::scaled_dot_product_attention(
                &v[0],
                &v[1],
                &v[2],
                SdpaOptions {
                    is_causal: true,
                    scale: Some(0.7),
                    ..Default::default()
                }
            )
        ),
        case!(
            "scaled_dot_product_attention/bool_mask",
            [t(&[2, 3, 2], 931), t(&[2, 4, 2], 932), t(&[2, 4, 2], 933)],
            |v| {
                // row 1 fully masked: zero output, zero gradient
                let m = mask(
                    &[
                        true, false, true, true, false, false, false, false, true, true, false,
                        true,
                    ],
                    &[3, 4],
                );
                Tensor::scaled_dot_product_attention(
                    &v[0],
                    &v[1],
                    &v[2],
                    SdpaOptions {
                        attn_mask: Some(&m),
                        ..Default::default()
                    },
                )
            }
        ),
        case!(
            "scaled_dot_product_attention/float_mask",
            [
                t(&[2, 2, 3, 2], 934),
                t(&[2, 2, 4, 2], 935),
                t(&[2, 2, 4, 3], 936),
                t(&[2, 1, 3, 4], 937)
            ],
            |v| Tensor::scaled_dot_product_attention(
                &v[0],
                &v[1],
                &v[2],
                SdpaOptions {
                    attn_mask: Some(&v[3]),
                    ..Default::default()
                }
            )
        ),
        case!(
            "scaled_dot_product_attention/gqa",
            [
                t(&[1, 4, 3, 2], 938),
                t(&[1, 2, 3, 2], 939),
                t(&[1, 2, 3, 2], 940)
            ],
            |v| Tensor::scaled_dot_product_attention(
                &v[0],
                &v[1],
                &v[2],
                SdpaOptions {
                    enable_gqa: true,
                    ..Default::default()
                }
            )
        ),
    ]
}
