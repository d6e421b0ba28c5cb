//! Pointwise ops with extra operands: `where_`, `masked_fill`, `clamp`, `pow`, `maximum/minimum`,
//! `fmax/fmin`, `floor_divide/remainder/fmod`, `atan2`, `hypot`, `lerp`, `addcmul`,
//! `nan_to_num`, their in-place forms and backward formulas. In-place forms compute the result
//! out of place (so self-aliasing such as `x.pow_(&x)` is exact), then write it back.

use super::binary::{binary_map, can_cast, cast_error, operand_tensor, scalar_tensor};
use super::compare::real_dispatch;
use super::util::{check_no_internal_overlap, check_no_partial_overlap, with_raw};
use crate::autograd::{Backward, BackwardCtx, SavedTensor, check_inplace, record, record_inplace};
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
    super::geometry::copy_raw(&a.data(), &res.data(), a.dtype(), res.dtype());
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
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let n = self.has.iter().filter(|h| **h).count();
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None; n]);
        };
        let c = &ctx.saved[0];
        let mut out = Vec::new();
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
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let n = 1 + self.value_tensor as usize;
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None; n]);
        };
        let m = &ctx.saved[0];
        let mut out = vec![if ctx.needs(0) {
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
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None]);
        };
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
        Ok(vec![Some(Tensor::where_(&m, &g, 0.0)?)])
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
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let n = if self.kind == 1 { 2 } else { 1 };
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None; n]);
        };
        let s = &ctx.saved;
        match self.kind {
            0 => {
                let e = self.scalar;
                if e.is_zero() {
                    return Ok(vec![Some(g.zeros_like()?)]);
                }
                let em1 = match e {
                    Scalar::Int(i) => Scalar::Int(i - 1),
                    o => Scalar::Float(o.to_f64() - 1.0),
                };
                Ok(vec![Some(g.mul(e)?.mul(&s[0].pow(em1)?)?)])
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
                Ok(vec![ga, gb])
            }
            _ => Ok(vec![Some(g.mul(&s[0])?.mul(self.scalar.to_f64().ln())?)]),
        }
    }
}

// ---------------------------------------------------------------- binary extras

#[derive(Clone, Copy, PartialEq, Debug)]
pub(crate) enum Bin {
    Maximum,
    Minimum,
    Fmax,
    Fmin,
    FloorDivide,
    Remainder,
    Fmod,
    Atan2,
    Hypot,
}

impl Bin {
    fn name(self) -> &'static str {
        match self {
            Bin::Maximum => "maximum",
            Bin::Minimum => "minimum",
            Bin::Fmax => "fmax",
            Bin::Fmin => "fmin",
            Bin::FloorDivide => "floor_divide",
            Bin::Remainder => "remainder",
            Bin::Fmod => "fmod",
            Bin::Atan2 => "atan2",
            Bin::Hypot => "hypot",
        }
    }
    fn backward_name(self) -> &'static str {
        match self {
            Bin::Maximum => "MaximumBackward0",
            Bin::Minimum => "MinimumBackward0",
            Bin::Fmax => "FmaxBackward0",
            Bin::Fmin => "FminBackward0",
            Bin::FloorDivide => "FloorDivideBackward0",
            Bin::Remainder => "RemainderBackward0",
            Bin::Fmod => "FmodBackward0",
            Bin::Atan2 => "Atan2Backward0",
            Bin::Hypot => "HypotBackward0",
        }
    }
}

#[allow(clippy::eq_op)]
fn bin_result(a: &Operand, b: &Operand, op: Bin) -> Result<Tensor> {
    let name = op.name();
    let mut dt = result_type(&[a, b]);
    if matches!(op, Bin::Atan2 | Bin::Hypot) && dt.is_integral(true) {
        dt = DType::F32;
    }
    if dt.is_complex() {
        bail!(
            Unsupported,
            name,
            "{} is not supported for complex tensors",
            name
        );
    }
    let (ta, tb) = (operand_tensor(a, dt)?, operand_tensor(b, dt)?);
    if dt.is_integral(true) && matches!(op, Bin::FloorDivide | Bin::Remainder | Bin::Fmod) {
        let z = {
            let _g = crate::autograd::no_grad();
            tb.eq(0)?.to_vec::<bool>()?.contains(&true)
        };
        if z {
            bail!(InvalidArgument, name, "ZeroDivisionError");
        }
    }
    macro_rules! nanmax {
        ($T:ty) => {
            match op {
                Bin::Maximum => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    if x != x {
                        x
                    } else if y != y {
                        y
                    } else if x > y {
                        x
                    } else {
                        y
                    }
                }),
                Bin::Minimum => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    if x != x {
                        x
                    } else if y != y {
                        y
                    } else if x < y {
                        x
                    } else {
                        y
                    }
                }),
                Bin::Fmax => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    if x != x {
                        y
                    } else if y != y {
                        x
                    } else if x > y {
                        x
                    } else {
                        y
                    }
                }),
                _ => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    if x != x {
                        y
                    } else if y != y {
                        x
                    } else if x < y {
                        x
                    } else {
                        y
                    }
                }),
            }
        };
    }
    macro_rules! float {
        ($T:ty, $R:ty, $to:expr, $from:expr) => {{
            let (to, from) = ($to, $from);
            match op {
                Bin::Maximum | Bin::Minimum | Bin::Fmax | Bin::Fmin => nanmax!($T),
                Bin::FloorDivide => binary_map::<$T, $T>(&ta, &tb, name, move |x, y| {
                    let (a, b): ($R, $R) = (to(x), to(y));
                    if b == 0.0 {
                        return from(a / b);
                    }
                    let m = a % b;
                    let mut d = (a - m) / b;
                    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                        d -= 1.0;
                    }
                    let mut f = d.floor();
                    if d - f > 0.5 {
                        f += 1.0;
                    }
                    from(if d == 0.0 {
                        (0.0 as $R).copysign(a / b)
                    } else {
                        f
                    })
                }),
                Bin::Remainder => binary_map::<$T, $T>(&ta, &tb, name, move |x, y| {
                    let (a, b): ($R, $R) = (to(x), to(y));
                    let mut m = a % b;
                    if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                        m += b;
                    }
                    from(m)
                }),
                Bin::Fmod => binary_map::<$T, $T>(&ta, &tb, name, move |x, y| from(to(x) % to(y))),
                Bin::Atan2 => {
                    binary_map::<$T, $T>(&ta, &tb, name, move |x, y| from(to(x).atan2(to(y))))
                }
                Bin::Hypot => {
                    binary_map::<$T, $T>(&ta, &tb, name, move |x, y| from(to(x).hypot(to(y))))
                }
            }
        }};
    }
    macro_rules! int {
        ($T:ty) => {
            match op {
                Bin::Maximum | Bin::Minimum | Bin::Fmax | Bin::Fmin => nanmax!($T),
                Bin::FloorDivide => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    let q = x.wrapping_div(y);
                    if x.wrapping_rem(y) != 0 && ((x < 0) != (y < 0)) {
                        q.wrapping_sub(1)
                    } else {
                        q
                    }
                }),
                Bin::Remainder => binary_map::<$T, $T>(&ta, &tb, name, |x, y| {
                    let r = x.wrapping_rem(y);
                    if r != 0 && ((r < 0) != (y < 0)) {
                        r.wrapping_add(y)
                    } else {
                        r
                    }
                }),
                _ => binary_map::<$T, $T>(&ta, &tb, name, |x, y| x.wrapping_rem(y)),
            }
        };
    }
    match dt {
        DType::F64 => float!(f64, f64, |x: f64| x, |x: f64| x),
        DType::F32 => float!(f32, f32, |x: f32| x, |x: f32| x),
        DType::F16 => float!(f16, f32, |x: f16| x.to_f32(), f16::from_f32),
        DType::BF16 => float!(bf16, f32, |x: bf16| x.to_f32(), bf16::from_f32),
        DType::I64 => int!(i64),
        DType::I32 => int!(i32),
        DType::I16 => int!(i16),
        DType::I8 => int!(i8),
        DType::U8 => int!(u8),
        DType::Bool => match op {
            Bin::Maximum | Bin::Fmax => binary_map::<bool, bool>(&ta, &tb, name, |x, y| x | y),
            Bin::Minimum | Bin::Fmin => binary_map::<bool, bool>(&ta, &tb, name, |x, y| x & y),
            _ => bail!(
                Unsupported,
                name,
                "{} is not supported for bool tensors",
                name
            ),
        },
        _ => unreachable!("internal: complex handled above"),
    }
}

/// Backward of the [`Bin`] ops; saved `a` then `b` (as tensors; scalars become 0-dim
/// constants) then the result for hypot.
struct BinBackward {
    op: Bin,
    has: [bool; 2],
}

impl Backward for BinBackward {
    fn name(&self) -> &'static str {
        self.op.backward_name()
    }
    fn apply(
        &mut self,
        ctx: &BackwardCtx<'_>,
        g: Vec<Option<Tensor>>,
    ) -> Result<Vec<Option<Tensor>>> {
        let n = self.has.iter().filter(|h| **h).count();
        let Some(g) = g.into_iter().next().flatten() else {
            return Ok(vec![None; n]);
        };
        let s = &ctx.saved;
        let (a, b) = (&s[0], &s[1]);
        let (ga, gb): (Tensor, Tensor) = match self.op {
            Bin::Maximum | Bin::Minimum => {
                let half = Tensor::where_(&a.eq(b)?, &g.div(2.0)?, &g)?;
                let (lt, gt) = if self.op == Bin::Maximum {
                    (a.lt(b)?, a.gt(b)?)
                } else {
                    (a.gt(b)?, a.lt(b)?)
                };
                (
                    Tensor::where_(&lt, 0.0, &half)?,
                    Tensor::where_(&gt, 0.0, &half)?,
                )
            }
            Bin::Fmax | Bin::Fmin => {
                let ka = if self.op == Bin::Fmax {
                    a.ge(b)?
                } else {
                    a.le(b)?
                };
                let ka = ka.logical_or(&b.isnan()?)?;
                (Tensor::where_(&ka, &g, 0.0)?, Tensor::where_(&ka, 0.0, &g)?)
            }
            Bin::FloorDivide => (g.zeros_like()?, g.zeros_like()?),
            Bin::Remainder => (g.clone(), g.mul(&a.div(b)?.floor()?)?.neg()?),
            Bin::Fmod => (g.clone(), g.mul(&a.div(b)?.trunc()?)?.neg()?),
            Bin::Atan2 => {
                let d = a.mul(a)?.add(&b.mul(b)?)?;
                (g.mul(b)?.div(&d)?, g.mul(a)?.neg()?.div(&d)?)
            }
            Bin::Hypot => {
                let y = &s[2];
                (g.mul(a)?.div(y)?, g.mul(b)?.div(y)?)
            }
        };
        let mut out = Vec::new();
        let mut i = 0;
        if self.has[0] {
            out.push(ctx.needs(i).then_some(ga));
            i += 1;
        }
        if self.has[1] {
            out.push(ctx.needs(i).then_some(gb));
        }
        Ok(out)
    }
}

pub(crate) fn saved_operand(o: &Operand, dt: DType) -> Result<SavedTensor> {
    Ok(match o {
        Operand::Tensor(t) => SavedTensor::input(t),
        Operand::Scalar(s) => SavedTensor::private(scalar_tensor(*s, dt)),
    })
}

pub(crate) fn bin_op(a: &Operand, b: &Operand, op: Bin) -> Result<Tensor> {
    let out = bin_result(a, b, op)?;
    let ts = tensors(&[a, b]);
    if out.dtype().is_differentiable() && op != Bin::FloorDivide {
        let refs: Vec<&Tensor> = ts.iter().collect();
        let dt = out.dtype();
        let sa = saved_operand(a, dt)?;
        let sb = saved_operand(b, dt)?;
        record(
            &[&out],
            &refs,
            || {
                let mut v = vec![sa, sb];
                if op == Bin::Hypot {
                    v.push(SavedTensor::output(&out, 0));
                }
                v
            },
            BinBackward {
                op,
                has: [
                    matches!(a, Operand::Tensor(_)),
                    matches!(b, Operand::Tensor(_)),
                ],
            },
        )?;
    }
    Ok(out)
}

pub(crate) fn bin_op_(a: &Tensor, b: Operand, op: Bin, name: &'static str) -> Result<Tensor> {
    let ao = Operand::Tensor(a.clone());
    let bt = tensors(&[&b]);
    let others: Vec<&Tensor> = bt.iter().collect();
    let dt = a.dtype();
    let sb = saved_operand(&b, dt)?;
    write_back(
        a,
        &others,
        name,
        || bin_result(&ao, &b, op),
        |orig, a| {
            let mut v = vec![orig.unwrap_or_else(|| SavedTensor::private(a.clone())), sb];
            if op == Bin::Hypot {
                v.push(SavedTensor::output(a, 0));
            }
            v
        },
        BinBackward {
            op,
            has: [true, !bt.is_empty()],
        },
    )
}
