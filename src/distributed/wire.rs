//! Tensors on the wire: a tensor's elements as a typed host buffer MPI can send and reduce, and
//! back. Copying out and in keeps raw pointers out of this module (the buffers are plain `Vec`s
//! that rsmpi borrows) and gives non-contiguous and view tensors the same path as dense ones:
//! the copy in goes through `copy_`, so it writes through to a view's base and bumps the version
//! once.
//!
//! MPI has no 16-bit float types, so `f16`/`bf16` travel and reduce as `f32` (as tapegrad's
//! own kernels compute them) and are rounded once on the way back; `bool` travels as `u8`.

use super::ReduceOp;
use crate::{DType, Result, Tensor, bail};
use mpi::collective::SystemOperation;
use num_complex::{Complex32, Complex64};

/// A tensor's elements in the type MPI sees.
pub(crate) enum Wire {
    U8(Vec<u8>),
    I8(Vec<i8>),
    I16(Vec<i16>),
    I32(Vec<i32>),
    I64(Vec<i64>),
    F32(Vec<f32>),
    F64(Vec<f64>),
    C64(Vec<Complex32>),
    C128(Vec<Complex64>),
}

/// Runs `$body` with `$v` bound to the buffer of whichever variant `$w` is (`$w` may be `&`,
/// `&mut` or owned: the binding mode follows).
macro_rules! on_wire {
    ($w:expr, $v:ident => $body:expr) => {
        match $w {
            Wire::U8($v) => $body,
            Wire::I8($v) => $body,
            Wire::I16($v) => $body,
            Wire::I32($v) => $body,
            Wire::I64($v) => $body,
            Wire::F32($v) => $body,
            Wire::F64($v) => $body,
            Wire::C64($v) => $body,
            Wire::C128($v) => $body,
        }
    };
}
pub(crate) use on_wire;

/// The dtype a tensor of `dtype` travels as.
fn wire_dtype(dtype: DType) -> DType {
    match dtype {
        DType::Bool => DType::U8,
        DType::F16 | DType::BF16 => DType::F32,
        d => d,
    }
}

impl Wire {
    /// The elements of `t` (any layout), in row-major order.
    pub(crate) fn from_tensor(t: &Tensor) -> Result<Wire> {
        let t = t.detach();
        let wd = wire_dtype(t.dtype());
        let t = if wd == t.dtype() { t } else { t.to_dtype(wd)? };
        Ok(match wd {
            DType::U8 => Wire::U8(t.to_vec()?),
            DType::I8 => Wire::I8(t.to_vec()?),
            DType::I16 => Wire::I16(t.to_vec()?),
            DType::I32 => Wire::I32(t.to_vec()?),
            DType::I64 => Wire::I64(t.to_vec()?),
            DType::F32 => Wire::F32(t.to_vec()?),
            DType::F64 => Wire::F64(t.to_vec()?),
            DType::C64 => Wire::C64(t.to_vec()?),
            DType::C128 => Wire::C128(t.to_vec()?),
            d => bail!(
                Unsupported,
                "distributed",
                "collectives do not support dtype {}",
                d
            ),
        })
    }

    /// The elements of several tensors of one dtype, one after the other.
    pub(crate) fn from_tensors(ts: &[Tensor]) -> Result<Wire> {
        let flat: Vec<Tensor> = ts
            .iter()
            .map(|t| t.detach().reshape(&[-1]))
            .collect::<Result<_>>()?;
        let refs: Vec<&Tensor> = flat.iter().collect();
        Wire::from_tensor(&Tensor::cat(&refs, 0)?)
    }

    /// Number of elements.
    pub(crate) fn len(&self) -> usize {
        on_wire!(self, v => v.len())
    }

    /// A buffer of the same type and length (the receive side of an MPI call).
    pub(crate) fn like(&self, n: usize) -> Wire {
        match self {
            Wire::U8(_) => Wire::U8(vec![0; n]),
            Wire::I8(_) => Wire::I8(vec![0; n]),
            Wire::I16(_) => Wire::I16(vec![0; n]),
            Wire::I32(_) => Wire::I32(vec![0; n]),
            Wire::I64(_) => Wire::I64(vec![0; n]),
            Wire::F32(_) => Wire::F32(vec![0.0; n]),
            Wire::F64(_) => Wire::F64(vec![0.0; n]),
            Wire::C64(_) => Wire::C64(vec![Complex32::new(0.0, 0.0); n]),
            Wire::C128(_) => Wire::C128(vec![Complex64::new(0.0, 0.0); n]),
        }
    }

    /// Elements `[start, start + len)` as a tensor of `shape` and `dtype`.
    pub(crate) fn to_tensor(&self, start: usize, shape: &[usize], dtype: DType) -> Result<Tensor> {
        let n: usize = shape.iter().product();
        let t = on_wire!(self, v => Tensor::from_vec(v[start..start + n].to_vec(), shape)?);
        if t.dtype() == dtype {
            Ok(t)
        } else {
            t.to_dtype(dtype)
        }
    }

    /// Divides every element by `n` (the `Avg` reduction after a sum): floats and complex
    /// divide, integers divide truncating toward zero.
    pub(crate) fn divide(&mut self, n: usize) {
        match self {
            Wire::U8(v) => v.iter_mut().for_each(|x| *x = (*x as usize / n) as u8),
            Wire::I8(v) => v.iter_mut().for_each(|x| *x = (*x as i64 / n as i64) as i8),
            Wire::I16(v) => v
                .iter_mut()
                .for_each(|x| *x = (*x as i64 / n as i64) as i16),
            Wire::I32(v) => v
                .iter_mut()
                .for_each(|x| *x = (*x as i64 / n as i64) as i32),
            Wire::I64(v) => v.iter_mut().for_each(|x| *x /= n as i64),
            Wire::F32(v) => v.iter_mut().for_each(|x| *x /= n as f32),
            Wire::F64(v) => v.iter_mut().for_each(|x| *x /= n as f64),
            Wire::C64(v) => v.iter_mut().for_each(|x| *x /= n as f32),
            Wire::C128(v) => v.iter_mut().for_each(|x| *x /= n as f64),
        }
    }
}

/// Checks that `op` applies to `dtype` (PyTorch's rules): `Avg` is refused for `bool`, and
/// `Max`, `Min` and `Product` for complex dtypes. `what` names the collective.
pub(crate) fn check_reduce(op: ReduceOp, dtype: DType, what: &'static str) -> Result<()> {
    if dtype == DType::Bool && op == ReduceOp::Avg {
        bail!(
            Unsupported,
            what,
            "cannot use ReduceOp::Avg with boolean inputs"
        );
    }
    if dtype.is_complex() && matches!(op, ReduceOp::Max | ReduceOp::Min | ReduceOp::Product) {
        bail!(
            Unsupported,
            what,
            "{} does not support ReduceOp::{:?} on complex tensors",
            what,
            op
        );
    }
    Ok(())
}

/// The MPI operation for `op` on tensors of `dtype` (already checked): on `bool` (sent as
/// 0/1 bytes) `Sum` and `Max` are logical or, `Product` and `Min` logical and, as NCCL does.
pub(crate) fn mpi_op(op: ReduceOp, dtype: DType) -> SystemOperation {
    match (op, dtype == DType::Bool) {
        (ReduceOp::Sum | ReduceOp::Max, true) => SystemOperation::max(),
        (ReduceOp::Product | ReduceOp::Min, true) => SystemOperation::min(),
        (ReduceOp::Sum | ReduceOp::Avg, false) => SystemOperation::sum(),
        (ReduceOp::Product, false) => SystemOperation::product(),
        (ReduceOp::Max, false) => SystemOperation::max(),
        (ReduceOp::Min, false) => SystemOperation::min(),
        (ReduceOp::Avg, true) => unreachable!("checked by check_reduce"),
    }
}
