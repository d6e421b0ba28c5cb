//! Pointwise ops with extra operands: `where_`, `masked_fill`, `clamp`, `pow`, their in-place
//! forms and backward formulas, and the shared ternary kernel and write-back used by
//! [`super::binary_extra`]. In-place forms compute the result
//! out of place (so self-aliasing such as `x.pow_(&x)` is exact), then write it back.

use super::binary::{binary_map, can_cast, cast_error, operand_tensor};
use super::compare::real_dispatch;
use super::util::{check_no_internal_overlap, check_no_partial_overlap, with_raw};
use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, SavedTensor, check_inplace, record_inplace};
use crate::dtype::{Operand, result_type};
use crate::layout::{broadcast_shapes, dense_strides_like, for_each_run};
use crate::{DType, Element, Result, Scalar, Tensor, bail};
use half::{bf16, f16};

/// `f(c, a, b)` over the broadcast of three tensors (`c` Bool, `a`/`b` of type `T`).
fn ternary_map<T: Element>(
    c: &Tensor,
    a: &Tensor,
    b: &Tensor,
    op: &'static str,
    f: impl Fn(bool, T, T) -> T,
) -> Result<Tensor> {
    let s1 = broadcast_shapes(&c.shape(), &a.shape(), op)?;
    let shape = broadcast_shapes(&s1, &b.shape(), op)?;
    let (cd, ad, bd) = (c.data(), a.data(), b.data());
    let sc = super::util::broadcast_strides(&cd.layout, &shape);
    let sa = super::util::broadcast_strides(&ad.layout, &shape);
    let sb = super::util::broadcast_strides(&bd.layout, &shape);
    let strides = dense_strides_like(&shape, &[&sa, &sb, &sc]);
    let out = Tensor::empty_strided(&shape, &strides, T::DTYPE)?;
    let od = out.data();
    with_raw(&od, &shape, &[&cd, &ad, &bd], |o, ins| {
        let (po, pc, pa, pb) = (
            o.ptr as *mut T,
            ins[0].ptr as *const bool,
            ins[1].ptr as *const T,
            ins[2].ptr as *const T,
        );
        for_each_run(
            &shape,
            [o.strides, ins[0].strides, ins[1].strides, ins[2].strides],
            [o.offset, ins[0].offset, ins[1].offset, ins[2].offset],
            |[oo, oc, oa, ob], len, [so, sc, sa, sb]| {
                // SAFETY: all geometries are tensor layouts inside their locked storages and
                // `out` is fresh (no overlap with the inputs).
                unsafe {
                    let (po, pc, pa, pb) =
                        (po.offset(oo), pc.offset(oc), pa.offset(oa), pb.offset(ob));
                    if so == 1 && sc == 1 && sa == 1 && sb == 1 {
                        for i in 0..len {
                            *po.add(i) = f(*pc.add(i), *pa.add(i), *pb.add(i));
                        }
                    } else {
                        for i in 0..len as isize {
                            *po.offset(i * so) =
                                f(*pc.offset(i * sc), *pa.offset(i * sa), *pb.offset(i * sb));
                        }
                    }
                }
            },
        );
    });
    drop(od);
    Ok(out)
}

/// Writes an out-of-place result back into `a` (in-place protocol, validation done by the caller
/// except for the autograd/overlap checks done here). `saved` receives `a`'s pre-op value (a
/// private copy, only when autograd records) and `a` itself after the op.
pub(crate) fn write_back(
    a: &Tensor,
    others: &[&Tensor],
    name: &'static str,
    result: impl FnOnce() -> Result<Tensor>,
    saved: impl FnOnce(Option<SavedTensor>, &Tensor) -> Vec<SavedTensor>,
    bw: impl Backward,
) -> Result<Tensor> {
    let rec = check_inplace(a, others)?;
    check_no_internal_overlap(&a.data(), name)?;
    for o in others {
        check_no_partial_overlap(a, o, name)?;
    }
    let res = {
        let _g = crate::autograd::no_grad();
        result()?
    };
    if res.shape() != a.shape() {
        bail!(
            ShapeMismatch,
            name,
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            a.shape(),
            res.shape()
        );
    }
    if !can_cast(res.dtype(), a.dtype()) {
        return Err(cast_error(name, res.dtype(), a.dtype()));
    }
    let orig = if rec.is_some() {
        // a recorded clone: the saved pre-op value stays differentiable (double backward)
        Some(SavedTensor::private(a.copy()?))
    } else {
        None
    };
    let before = a.version();
    crate::backend::copy_raw(&a.data(), &res.data(), a.dtype(), res.dtype());
    a.0.version.bump();
    let saved = || {
        saved(orig, a)
            .into_iter()
            .map(|s| s.saved_before_write(a, before))
            .collect()
    };
    record_inplace(rec, a, saved, bw)?;
    Ok(a.clone())
}

pub(crate) fn tensors(ops: &[&Operand]) -> Vec<Tensor> {
    ops.iter()
        .filter_map(|o| match o {
            Operand::Tensor(t) => Some(t.clone()),
            _ => None,
        })
        .collect()
}

// ---------------------------------------------------------------- where / masked_fill

pub(crate) fn where_impl(c: &Tensor, a: &Operand, b: &Operand) -> Result<Tensor> {
    if c.dtype() != DType::Bool {
        bail!(
            DTypeMismatch,
            "where",
            "where expected condition to be a boolean tensor, but got a tensor with dtype {}",
            c.dtype().torch_scalar_name()
        );
    }
    let dt = result_type(&[a, b]);
    let (ta, tb) = (operand_tensor(a, dt)?, operand_tensor(b, dt)?);
    crate::dispatch!(dt, T => ternary_map::<T>(c, &ta, &tb, "where", |c, x, y| if c { x } else { y }))
}

/// Backward of `where` (and of `masked_fill` for the value): saved the condition.
pub(crate) struct WhereBackward {
    pub(crate) has: [bool; 2],
    pub(crate) name: &'static str,
}

impl Backward for WhereBackward {
    fn name(&self) -> &'static str {
        self.name
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let c = &ctx.saved[0];
        let mut out = crate::autograd::Grads::new();
        let mut i = 0;
        if self.has[0] {
            out.push(if ctx.needs(i) {
                Some(Tensor::where_(c, &g, 0.0)?)
            } else {
                None
            });
            i += 1;
        }
        if self.has[1] {
            out.push(if ctx.needs(i) {
                Some(Tensor::where_(c, 0.0, &g)?)
            } else {
                None
            });
        }
        Ok(out)
    }
}

pub(crate) fn check_mask(mask: &Tensor, value: &Operand, name: &'static str) -> Result<()> {
    if mask.dtype() != DType::Bool {
        bail!(
            DTypeMismatch,
            name,
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().torch_scalar_name()
        );
    }
    if let Operand::Tensor(v) = value {
        if v.dim() != 0 {
            bail!(
                InvalidArgument,
                name,
                "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
                v.dim()
            );
        }
    }
    Ok(())
}

/// Backward of masked_fill: self gets `g` with masked positions zeroed, value gets their sum.
pub(crate) struct MaskedFillBackward {
    pub(crate) value_tensor: bool,
}

impl Backward for MaskedFillBackward {
    fn name(&self) -> &'static str {
        "MaskedFillBackward0"
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let m = &ctx.saved[0];
        let mut out = smallvec::smallvec![if ctx.needs(0) {
            Some(Tensor::where_(m, 0.0, &g)?)
        } else {
            None
        }];
        if self.value_tensor {
            out.push(if ctx.needs(1) {
                Some(Tensor::where_(m, &g, 0.0)?.sum()?)
            } else {
                None
            });
        }
        Ok(out)
    }
}

pub(crate) fn masked_fill_result(a: &Tensor, mask: &Tensor, value: &Operand) -> Result<Tensor> {
    let shape = broadcast_shapes(&a.shape(), &mask.shape(), "masked_fill")?;
    if shape != a.shape() {
        bail!(
            ShapeMismatch,
            "masked_fill",
            "The size of the mask {:?} must be broadcastable to the tensor {:?}",
            mask.shape(),
            a.shape()
        );
    }
    let v = operand_tensor(value, a.dtype())?;
    let _g = crate::autograd::no_grad();
    crate::dispatch!(a.dtype(), T => ternary_map::<T>(mask, &v, a, "masked_fill", |c, x, y| if c { x } else { y }))
}

// ---------------------------------------------------------------- clamp

pub(crate) fn clamp_result(
    a: &Tensor,
    lo: Option<Scalar>,
    hi: Option<Scalar>,
    name: &'static str,
) -> Result<Tensor> {
    if lo.is_none() && hi.is_none() {
        bail!(
            InvalidArgument,
            name,
            "At least one of 'min' or 'max' must not be None"
        );
    }
    let ao = Operand::Tensor(a.clone());
    let los = lo.map(Operand::Scalar);
    let his = hi.map(Operand::Scalar);
    let mut ops = vec![&ao];
    ops.extend(los.iter());
    ops.extend(his.iter());
    let dt = result_type(&ops);
    let ta = operand_tensor(&ao, dt)?;
    macro_rules! go {
        ($T:ty) => {{
            let l: Option<$T> = lo.map(|s| s.to::<$T>());
            let h: Option<$T> = hi.map(|s| s.to::<$T>());
            super::unary::unary_map::<$T, $T>(&ta, move |x| {
                #[allow(clippy::eq_op)]
                if x != x {
                    return x;
                }
                let mut v = x;
                if let Some(l) = l {
                    if v < l || l != l {
                        v = l;
                    }
                }
                if let Some(h) = h {
                    if v > h || h != h {
                        v = h;
                    }
                }
                v
            })
        }};
    }
    real_dispatch!(dt, T => go!(T), complex bail!(Unsupported, name, "clamp is not supported for complex types"))
}

/// Backward of clamp with scalar bounds: saved self; grad passes where `lo < x < hi` (PyTorch
/// 2.15 gives the bounds themselves a zero gradient).
pub(crate) struct ClampBackward {
    pub(crate) lo: Option<Scalar>,
    pub(crate) hi: Option<Scalar>,
    pub(crate) name: &'static str,
}

impl Backward for ClampBackward {
    fn name(&self) -> &'static str {
        self.name
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let x = &ctx.saved[0];
        let mut m: Option<Tensor> = None;
        if let Some(l) = self.lo {
            m = Some(x.gt(l)?);
        }
        if let Some(h) = self.hi {
            let mh = x.lt(h)?;
            m = Some(match m {
                Some(m) => m.logical_and(&mh)?,
                None => mh,
            });
        }
        let m = m.expect("internal: clamp without bounds");
        Ok(smallvec::smallvec![Some(Tensor::where_(&m, &g, 0.0)?)])
    }
}

pub(crate) fn clamp_name(lo: &Option<Scalar>, hi: &Option<Scalar>) -> &'static str {
    match (lo, hi) {
        (Some(_), None) => "ClampMinBackward0",
        (None, Some(_)) => "ClampMaxBackward0",
        _ => "ClampBackward1",
    }
}

// ---------------------------------------------------------------- pow

fn ipow<T: Copy + PartialEq + Default>(
    mut base: T,
    mut e: i64,
    one: T,
    mul: impl Fn(T, T) -> T,
    neg_one: T,
) -> T {
    if e < 0 {
        return if base == one {
            one
        } else if base == neg_one {
            if e % 2 == 0 { one } else { neg_one }
        } else {
            T::default()
        };
    }
    let mut r = one;
    while e > 0 {
        if e & 1 == 1 {
            r = mul(r, base);
        }
        base = mul(base, base);
        e >>= 1;
    }
    r
}

fn pow_kernel(a: &Tensor, b: &Tensor, dt: DType) -> Result<Tensor> {
    macro_rules! int {
        ($T:ty) => {
            binary_map::<$T, $T>(a, b, "pow", |x, e| {
                ipow(
                    x,
                    e as i64,
                    1 as $T,
                    |p, q| p.wrapping_mul(q),
                    (0 as $T).wrapping_sub(1),
                )
            })
        };
    }
    match dt {
        DType::F64 => binary_map::<f64, f64>(a, b, "pow", |x, e| x.powf(e)),
        DType::F32 => binary_map::<f32, f32>(a, b, "pow", |x, e| x.powf(e)),
        DType::F16 => binary_map::<f16, f16>(a, b, "pow", |x, e| {
            f16::from_f32(x.to_f32().powf(e.to_f32()))
        }),
        DType::BF16 => binary_map::<bf16, bf16>(a, b, "pow", |x, e| {
            bf16::from_f32(x.to_f32().powf(e.to_f32()))
        }),
        DType::C64 => {
            binary_map::<crate::dtype::C64, crate::dtype::C64>(a, b, "pow", |x, e| x.powc(e))
        }
        DType::C128 => {
            binary_map::<crate::dtype::C128, crate::dtype::C128>(a, b, "pow", |x, e| x.powc(e))
        }
        DType::I64 => int!(i64),
        DType::I32 => int!(i32),
        DType::I16 => int!(i16),
        DType::I8 => int!(i8),
        DType::U8 => int!(u8),
        DType::Bool => binary_map::<bool, bool>(a, b, "pow", |x, e| x || !e),
    }
}

pub(crate) fn pow_result(a: &Operand, b: &Operand) -> Result<Tensor> {
    let dt = result_type(&[a, b]);
    if let (Operand::Tensor(_), Operand::Scalar(Scalar::Int(e))) = (a, b) {
        if dt.is_integral(false) && *e < 0 {
            bail!(
                InvalidArgument,
                "pow",
                "Integers to negative integer powers are not allowed."
            );
        }
    }
    let (ta, tb) = (operand_tensor(a, dt)?, operand_tensor(b, dt)?);
    pow_kernel(&ta, &tb, dt)
}

/// Backward of pow. `kind` 0: tensor ^ scalar (saved self), 1: tensor ^ tensor (saved self,
/// exponent, result), 2: scalar ^ tensor (saved result).
pub(crate) struct PowBackward {
    pub(crate) kind: u8,
    pub(crate) scalar: Scalar,
}

impl Backward for PowBackward {
    fn name(&self) -> &'static str {
        ["PowBackward0", "PowBackward1", "PowBackward2"][self.kind as usize]
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let g = output_grad(g);
        let s = &ctx.saved;
        match self.kind {
            0 => {
                let e = self.scalar;
                if e.is_zero() {
                    return Ok(smallvec::smallvec![Some(g.zeros_like()?)]);
                }
                let em1 = match e {
                    Scalar::Int(i) => Scalar::Int(i - 1),
                    o => Scalar::Float(o.to_f64() - 1.0),
                };
                Ok(smallvec::smallvec![Some(g.mul(e)?.mul(&s[0].pow(em1)?)?)])
            }
            1 => {
                let (x, e, y) = (&s[0], &s[1], &s[2]);
                let ga = if ctx.needs(0) {
                    Some(g.mul(e)?.mul(&x.pow(&e.sub(1)?)?)?)
                } else {
                    None
                };
                let gb = if ctx.needs(1) {
                    let r = g.mul(&y.mul(&x.log()?)?)?;
                    let m = x.eq(0)?.logical_and(&e.ge(0)?)?;
                    Some(Tensor::where_(&m, 0.0, &r)?)
                } else {
                    None
                };
                Ok(smallvec::smallvec![ga, gb])
            }
            _ => Ok(smallvec::smallvec![Some(
                g.mul(&s[0])?.mul(self.scalar.to_f64().ln())?
            )]),
        }
    }
}
