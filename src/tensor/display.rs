//! `Display` and `Debug` for tensors, in PyTorch's style: `tensor([[1., 2.], [3., 4.]],
//! dtype=torch.float64)`. The dtype suffix is omitted for the defaults (float32, int64, bool);
//! an empty tensor of several dims prints its sizes instead of its brackets (`tensor([],
//! size=(2, 0))`).

use super::Tensor;
use crate::{DType, Scalar};
use std::fmt;

fn fmt_value(v: Scalar, all_int_floats: bool) -> String {
    match v {
        Scalar::Bool(b) => {
            if b {
                "True".into()
            } else {
                "False".into()
            }
        }
        Scalar::Int(i) => i.to_string(),
        Scalar::Float(f) => {
            if f.is_nan() {
                "nan".into()
            } else if f.is_infinite() {
                if f > 0.0 { "inf".into() } else { "-inf".into() }
            } else if all_int_floats {
                format!("{}.", f)
            } else {
                format!("{:.4}", f)
            }
        }
        Scalar::Complex(c) => format!("{:.4}{:+.4}j", c.re, c.im),
    }
}

impl fmt::Display for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(p) = self.sparse_parts() {
            return crate::sparse::fmt_sparse(self, p, f);
        }
        let dtype = self.dtype();
        let vals: Vec<Scalar> = match dtype {
            DType::Bool => self
                .read_as::<bool>()
                .map(|v| v.into_iter().map(Scalar::Bool).collect()),
            d if d.is_integral(false) => self
                .read_as::<i64>()
                .map(|v| v.into_iter().map(Scalar::Int).collect()),
            d if d.is_complex() => self
                .read_as::<crate::dtype::C128>()
                .map(|v| v.into_iter().map(Scalar::Complex).collect()),
            _ => self
                .read_as::<f64>()
                .map(|v| v.into_iter().map(Scalar::Float).collect()),
        }
        .map_err(|_| fmt::Error)?;
        let all_int = vals
            .iter()
            .all(|v| matches!(v, Scalar::Float(x) if x.fract() == 0.0 || !x.is_finite()));
        let strs: Vec<String> = vals.into_iter().map(|v| fmt_value(v, all_int)).collect();
        let shape = self.shape();
        let mut pos = 0;
        fn rec(out: &mut String, strs: &[String], shape: &[usize], pos: &mut usize, depth: usize) {
            if shape.is_empty() {
                out.push_str(&strs[*pos]);
                *pos += 1;
                return;
            }
            out.push('[');
            for i in 0..shape[0] {
                if i > 0 {
                    out.push(',');
                    if shape.len() > 1 {
                        out.push('\n');
                        out.push_str(&" ".repeat(8 + depth));
                    } else {
                        out.push(' ');
                    }
                }
                rec(out, strs, &shape[1..], pos, depth + 1);
            }
            out.push(']');
        }
        if shape.len() > 1 && strs.is_empty() {
            // PyTorch's `tensor([], size=(2, 0))`: an empty tensor's sizes may be huge
            let sizes: Vec<String> = shape.iter().map(|d| d.to_string()).collect();
            write!(f, "tensor([], size=({})", sizes.join(", "))?;
        } else {
            let mut body = String::new();
            rec(&mut body, &strs, &shape, &mut pos, 0);
            write!(f, "tensor({}", body)?;
        }
        if !matches!(dtype, DType::F32 | DType::I64 | DType::Bool) {
            write!(f, ", dtype=torch.{}", dtype.name())?;
        }
        if self.requires_grad() {
            f.write_str(", requires_grad=True")?;
        }
        f.write_str(")")
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "Tensor(shape={:?}, strides={:?}, offset={}, dtype={}, version={})",
            self.shape(),
            self.strides(),
            self.storage_offset(),
            self.dtype(),
            self.version()
        )?;
        fmt::Display::fmt(self, f)
    }
}
