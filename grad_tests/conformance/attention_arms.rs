//! Dispatch arms of the attention family (issue 27): `einsum` (equation then operands, or
//! the operands as one list), `baddbmm` (`beta=`, `alpha=`) and
//! `F.scaled_dot_product_attention` with every keyword (`attn_mask`, `dropout_p`,
//! `is_causal`, `scale`, `enable_gqa`). Returns `CallErr::Missing(op)` for other ops.

use super::*;

pub(super) fn dispatch(c: &Call) -> CallResult<Val> {
    match c.op {
        "einsum" => {
            let eq = match c.arg(0)? {
                Value::String(s) => s.clone(),
                v => return bad(format!("einsum: equation must be a string, got {v}")),
            };
            let ts: Vec<Tensor> = match c.args.get(1) {
                Some(Value::Array(a)) if c.args.len() == 2 => a
                    .iter()
                    .map(|v| c.env.tensor_of(v))
                    .collect::<CallResult<_>>()?,
                _ => (1..c.args.len())
                    .map(|i| c.t(i))
                    .collect::<CallResult<_>>()?,
            };
            let refs: Vec<&Tensor> = ts.iter().collect();
            val(Tensor::einsum(&eq, &refs))
        }
        "baddbmm" => {
            let beta = c.opt(3, "beta").map_or(Ok(1.0), to_f64)?;
            let alpha = c.opt(4, "alpha").map_or(Ok(1.0), to_f64)?;
            val(c.t(0)?.baddbmm(&c.t(1)?, &c.t(2)?, beta, alpha))
        }
        "F.scaled_dot_product_attention" => {
            let mask = ops_arms::opt_tensor(c, 3, "attn_mask")?;
            let opts = tapegrad::SdpaOptions {
                attn_mask: mask.as_ref(),
                dropout_p: c
                    .opt(4, "dropout_p")
                    .filter(|v| !v.is_null())
                    .map_or(Ok(0.0), to_f64)?,
                is_causal: c.bool_or(5, "is_causal", false)?,
                scale: c
                    .opt(6, "scale")
                    .filter(|v| !v.is_null())
                    .map(to_f64)
                    .transpose()?,
                enable_gqa: c.bool_or(7, "enable_gqa", false)?,
            };
            val(Tensor::scaled_dot_product_attention(
                &c.t(0)?,
                &c.t(1)?,
                &c.t(2)?,
                opts,
            ))
        }
        op => Err(CallErr::Missing(op.to_string())),
    }
}
