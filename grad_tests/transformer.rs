//! `MultiheadAttention` and `TransformerEncoderLayer` against PyTorch: state_dicts of two
//! `nn.TransformerEncoderLayer(8, 2, 16, dropout=0, batch_first=True)` (post-norm relu,
//! pre-norm gelu) saved as safetensors by `tools/record_transformer.py` load under PyTorch's
//! keys and give PyTorch's eval-mode outputs with every mask form, and the attention module's
//! outputs and weights (head-averaged and per head, self- and cross-attention).

use crate::common::R;
use serde_json::Value;
use tapegrad::nn::{
    self, Activation, EncoderLayerConfig, EncoderMasks, MhaOptions, Module, TransformerEncoderLayer,
};
use tapegrad::{DType, Tensor};

const DIR: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/grad_tests/fixtures/transformer"
);

fn expected() -> Value {
    let text = std::fs::read_to_string(format!("{DIR}/expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn tensor(v: &Value) -> Tensor {
    let shape: Vec<usize> = v["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap() as usize)
        .collect();
    let vals: Vec<f32> = v["values"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap() as f32)
        .collect();
    Tensor::from_vec(vals, &shape).unwrap()
}

fn bools(v: &Value, shape: &[usize]) -> Tensor {
    let vals: Vec<bool> = v
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_bool().unwrap())
        .collect();
    Tensor::from_vec(vals, shape).unwrap()
}

fn assert_close(got: &Tensor, want: &Value, what: &str) {
    let w = tensor(want);
    assert_eq!(got.shape(), w.shape(), "{what}");
    let (g, w) = (got.to_vec::<f32>().unwrap(), w.to_vec::<f32>().unwrap());
    for (i, (a, b)) in g.iter().zip(&w).enumerate() {
        assert!(
            (a - b).abs() <= 1e-5 + 1e-5 * b.abs(),
            "{what}[{i}]: {a} vs PyTorch {b}"
        );
    }
}

fn layer(norm_first: bool, act: Activation) -> TransformerEncoderLayer {
    let cfg = EncoderLayerConfig {
        dim_feedforward: 16,
        dropout: 0.0,
        activation: act,
        batch_first: true,
        norm_first,
        ..Default::default()
    };
    let mut l = TransformerEncoderLayer::new(8, 2, cfg, DType::F32).unwrap();
    l.eval();
    l
}

#[test]
fn encoder_layers_load_pytorch_state_dicts_and_match_outputs() -> R {
    let e = expected();
    let x = tensor(&e["input"]);
    let mem = tensor(&e["memory"]);
    let causal = bools(&e["causal"], &[5, 5]);
    let fmask = tensor(&e["float_mask"]);
    let kpm = bools(&e["kpm"], &[2, 5]);
    let kpm_mem = bools(&e["kpm_memory"], &[2, 6]);
    for (name, norm_first, act) in [
        ("post_relu", false, Activation::Relu),
        ("pre_gelu", true, Activation::Gelu),
    ] {
        let l = layer(norm_first, act);
        let rec = &e["models"][name];
        let keys: Vec<String> = l
            .state_dict()?
            .names()
            .iter()
            .map(|k| k.to_string())
            .collect();
        let want: Vec<String> = rec["keys"]
            .as_array()
            .unwrap()
            .iter()
            .map(|k| k.as_str().unwrap().to_string())
            .collect();
        assert_eq!(keys, want);
        nn::load_into(format!("{DIR}/{name}.safetensors"), &l)?;
        let cases: [(&str, EncoderMasks); 6] = [
            ("none", EncoderMasks::default()),
            (
                "causal",
                EncoderMasks {
                    src_mask: Some(&causal),
                    ..Default::default()
                },
            ),
            (
                "float",
                EncoderMasks {
                    src_mask: Some(&fmask),
                    ..Default::default()
                },
            ),
            (
                "padding",
                EncoderMasks {
                    src_key_padding_mask: Some(&kpm),
                    ..Default::default()
                },
            ),
            (
                "both",
                EncoderMasks {
                    src_mask: Some(&causal),
                    src_key_padding_mask: Some(&kpm),
                    is_causal: false,
                },
            ),
            (
                "is_causal",
                EncoderMasks {
                    src_mask: Some(&causal),
                    is_causal: true,
                    ..Default::default()
                },
            ),
        ];
        for (m, masks) in cases {
            assert_close(
                &l.forward(&x, masks)?,
                &rec["layer"][m],
                &format!("{name} {m}"),
            );
        }
        let mha = &l.self_attn;
        let o = MhaOptions {
            key_padding_mask: Some(&kpm),
            attn_mask: Some(&causal),
            ..Default::default()
        };
        let (y, w) = mha.forward(&x, &x, &x, o)?;
        assert_close(&y, &rec["mha_weights_avg"]["out"], "mha out");
        assert_close(
            &w.unwrap(),
            &rec["mha_weights_avg"]["weights"],
            "mha weights",
        );
        let o = MhaOptions {
            attn_mask: Some(&fmask),
            average_attn_weights: false,
            ..Default::default()
        };
        let (y, w) = mha.forward(&x, &x, &x, o)?;
        assert_close(&y, &rec["mha_weights_heads"]["out"], "mha out (heads)");
        assert_close(
            &w.unwrap(),
            &rec["mha_weights_heads"]["weights"],
            "mha weights (heads)",
        );
        let o = MhaOptions {
            key_padding_mask: Some(&kpm_mem),
            need_weights: false,
            ..Default::default()
        };
        let (y, w) = mha.forward(&x, &mem, &mem, o)?;
        assert!(w.is_none());
        assert_close(&y, &rec["mha_cross"]["out"], "mha cross");
    }
    Ok(())
}

#[test]
fn encoder_layer_trains_and_checks_masks() -> R {
    let l = layer(false, Activation::Relu);
    let x = Tensor::randn(&[2, 5, 8], DType::F32)?;
    let y = l.forward(&x, EncoderMasks::default())?;
    y.pow(2.0)?.mean((), false, None)?.backward()?;
    for (k, p) in l.named_parameters() {
        assert!(p.grad().is_some(), "{k} has no grad");
    }
    // is_causal without a mask, a mask of the wrong shape
    let e = l
        .forward(
            &x,
            EncoderMasks {
                is_causal: true,
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.kind(), tapegrad::ErrorKind::InvalidArgument);
    let bad = Tensor::zeros(&[4, 5], DType::Bool)?;
    let e = l
        .forward(
            &x,
            EncoderMasks {
                src_mask: Some(&bad),
                ..Default::default()
            },
        )
        .unwrap_err();
    assert_eq!(e.kind(), tapegrad::ErrorKind::ShapeMismatch);
    Ok(())
}

/// `MultiheadAttention` and `TransformerEncoderLayer` print as PyTorch's `repr` (its
/// `out_proj` is a `NonDynamicallyQuantizableLinear`), checked against `print(...)` in
/// PyTorch 2.15 of `nn.TransformerEncoderLayer(8, 2, 16, dropout=0.0)`.
#[test]
fn attention_modules_print_as_pytorch() {
    let mha = nn::MultiheadAttention::new(8, 2, 0.0, true, false, DType::F32).unwrap();
    let out_proj = "NonDynamicallyQuantizableLinear(in_features=8, out_features=8, bias=True)";
    assert_eq!(
        mha.to_string(),
        format!("MultiheadAttention(\n  (out_proj): {out_proj}\n)")
    );
    let l = layer(false, Activation::Relu);
    let want = format!(
        "TransformerEncoderLayer(
  (self_attn): MultiheadAttention(
    (out_proj): {out_proj}
  )
  (linear1): Linear(in_features=8, out_features=16, bias=True)
  (dropout): Dropout(p=0.0, inplace=False)
  (linear2): Linear(in_features=16, out_features=8, bias=True)
  (norm1): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (norm2): LayerNorm((8,), eps=1e-05, elementwise_affine=True, bias=True)
  (dropout1): Dropout(p=0.0, inplace=False)
  (dropout2): Dropout(p=0.0, inplace=False)
)"
    );
    assert_eq!(l.to_string(), want);
}
