//! The binary extras of `Bin`: `maximum/minimum`, `fmax/fmin`, `floor_divide/remainder/fmod`,
//! `atan2`, `hypot` — kernels, the out-of-place and in-place entry points and the backward
//! formula. In-place forms compute the result out of place (so self-aliasing is exact), then
//! write it back.

use crate::autograd::{SavedTensor, record};
use crate::backend::Transcendental;
use crate::dtype::{Operand, result_type};
use crate::ops::elementwise::binary::{binary_map, operand_tensor, scalar_tensor};
use crate::ops::elementwise::div_round::RoundingMode;
use crate::ops::grad::backward;
use crate::ops::util::{tensors, write_back};
use crate::{DType, Element, Result, Scalar, Tensor, bail};

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
            Bin::FloorDivide => "NotImplemented",
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
            DTypeMismatch,
            name,
            "{} is not supported for complex tensors",
            name
        );
    }
    if dt == DType::Bool && !matches!(op, Bin::Maximum | Bin::Minimum | Bin::Fmax | Bin::Fmin) {
        // before the zero-divisor check, as PyTorch's kernel lookup comes first
        bail!(
            DTypeMismatch,
            name,
            "{} is not supported for bool tensors",
            name
        );
    }
    let (ta, tb) = (operand_tensor(a, dt)?, operand_tensor(b, dt)?);
    if dt.is_integral(true) && matches!(op, Bin::FloorDivide | Bin::Remainder | Bin::Fmod) {
        // ("any zero" in the divisor, read in place)
        let z = crate::dispatch!(dt, T => crate::backend::any::<T>(&tb.data(), &|x: T| {
            x == <T as crate::Element>::zero()
        })?);
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
        ($T:ty, $R:ty) => {{
            use crate::dtype::FloatCompute;
            let (to, from) = (|x: $T| -> $R { x.widen() }, <$T as FloatCompute>::narrow);
            match op {
                Bin::Maximum | Bin::Minimum | Bin::Fmax | Bin::Fmin => nanmax!($T),
                Bin::FloorDivide => {
                    // PyTorch's `div_floor` given `m = fmod(a, b)`, `b != 0`
                    let div_floor = |a: $R, b: $R, m: $R| -> $R {
                        let mut d = (a - m) / b;
                        if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                            d -= 1.0;
                        }
                        let mut f = d.floor();
                        if d - f > 0.5 {
                            f += 1.0;
                        }
                        if d == 0.0 {
                            (0.0 as $R).copysign(a / b)
                        } else {
                            f
                        }
                    };
                    let f = move |x: $T, y: $T| {
                        let (a, b): ($R, $R) = (to(x), to(y));
                        from(if b == 0.0 {
                            a / b
                        } else {
                            div_floor(a, b, a % b)
                        })
                    };
                    // (`b = 0` is off the fast domain)
                    let fast = move |x: $T, y: $T| {
                        let (a, b): ($R, $R) = (to(x), to(y));
                        let (m, slow) = a.vfmod_fast(b);
                        (from(div_floor(a, b, m)), slow)
                    };
                    fmod_map::<$T>(&ta, &tb, name, false, fast, f, f)
                }
                Bin::Remainder => {
                    // Python's remainder: the fmod moved into the divisor's sign
                    let rem = |m: $R, b: $R| -> $R {
                        if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
                            m + b
                        } else {
                            m
                        }
                    };
                    fmod_map::<$T>(
                        &ta,
                        &tb,
                        name,
                        true,
                        move |x, y| {
                            let (m, slow) = to(x).vfmod_fast(to(y));
                            (from(rem(m, to(y))), slow)
                        },
                        move |x, y| from(rem(to(x).vfmod(to(y)), to(y))),
                        move |x, y| from(rem(to(x) % to(y), to(y))),
                    )
                }
                Bin::Fmod => fmod_map::<$T>(
                    &ta,
                    &tb,
                    name,
                    true,
                    move |x, y| {
                        let (m, slow) = to(x).vfmod_fast(to(y));
                        (from(m), slow)
                    },
                    move |x, y| from(to(x).vfmod(to(y))),
                    move |x, y| from(to(x) % to(y)),
                ),
                Bin::Atan2 => {
                    binary_map::<$T, $T>(&ta, &tb, name, move |x, y| from(to(x).vatan2(to(y))))
                }
                Bin::Hypot => {
                    binary_map::<$T, $T>(&ta, &tb, name, move |x, y| from(to(x).vhypot(to(y))))
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
        d if d.is_float() => crate::match_dtype!(d, float, (T, R) => float!(T, R)),
        d if d.is_integral(false) && d != DType::U8 => crate::match_dtype!(d, signed, T => int!(T)),
        // unsigned: floor division is truncation and remainders are never negative
        DType::U8 => match op {
            Bin::Maximum | Bin::Minimum | Bin::Fmax | Bin::Fmin => nanmax!(u8),
            Bin::FloorDivide => binary_map::<u8, u8>(&ta, &tb, name, |x, y| x.wrapping_div(y)),
            _ => binary_map::<u8, u8>(&ta, &tb, name, |x, y| x.wrapping_rem(y)),
        },
        DType::Bool => match op {
            Bin::Maximum | Bin::Fmax => binary_map::<bool, bool>(&ta, &tb, name, |x, y| x | y),
            Bin::Minimum | Bin::Fmin => binary_map::<bool, bool>(&ta, &tb, name, |x, y| x & y),
            _ => unreachable!("internal: bool handled above"),
        },
        _ => unreachable!("internal: complex handled above"),
    }
}

/// A float `fmod`/`remainder` (`f`) as PyTorch's CPU kernel computes it: its vector code
/// (SLEEF's `fmod`, `head`, see `backend/cpu/math/fmod.rs`) runs on the first `n - n % lanes`
/// elements of a dense run (lanes with AVX-512: 8 f64, 16 f32, 32 f16/bf16, which compute in
/// f32; without `prefix` there is none: `floor_divide`) and exact `fmod`
/// on the rest. The prefix applies where the whole op is one dense run in memory order (every
/// operand of the result's layout, or 0-dim: the dense fast path); other layouts keep the exact
/// values (PyTorch also vectorises a one-element `[1]` operand and operands that differ only by
/// leading size-1 dims; those keep exact values here).
///
/// For f32 the dense run takes `fast` (`Transcendental::vfmod_fast`: exact and branch-free where
/// `|x| < |y| 2^52`, values finite, `y != 0`), and `head`/`f` only on the elements it flags, in
/// the backend's chunked kernel (per-op speed sweep rows `fmod`, `remainder`, `floor_divide`).
/// f64 keeps the scalar path (its `fmod64_fast` is exact too, but unmeasured here), and
/// f16/bf16 theirs.
fn fmod_map<T: Element>(
    a: &Tensor,
    b: &Tensor,
    name: &'static str,
    prefix: bool,
    fast: impl Fn(T, T) -> (T, bool) + Sync,
    head: impl Fn(T, T) -> T + Sync,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Tensor> {
    let lanes = match (prefix, T::DTYPE) {
        (false, _) => 0,
        (_, DType::F64) => 8,
        (_, DType::F32) => 16,
        _ => 32,
    };
    a.check_strided(name)?;
    b.check_strided(name)?;
    let r = if T::DTYPE == DType::F32 {
        crate::ops::dense::binary_split_fallback::<T, T>(a, b, lanes, &fast, &head, &f)
    } else {
        crate::ops::dense::binary_split::<T, T>(a, b, lanes, &head, &f)
    };
    if let Some(r) = r {
        return r;
    }
    binary_map::<T, T>(a, b, name, f)
}

/// Backward of the [`Bin`] ops; saved `a` then `b` (as tensors; scalars become 0-dim
/// constants) then the result for hypot.
struct BinBackward {
    op: Bin,
    has: [bool; 2],
}

backward!(
    BinBackward,
    self.op.backward_name(),
    |self, ctx, g: Tensor| {
        let s = &ctx.saved;
        let (a, b) = (&s[0], &s[1]);
        let (ga, gb): (Tensor, Tensor) = match self.op {
            Bin::Maximum | Bin::Minimum => {
                // PyTorch's `where(a == b, g / 2, g).masked_fill_(a < b, 0)` (`>` for `b`;
                // flipped for minimum)
                let half = Tensor::where_(&a.eq(b)?, &g.div(2.0)?, &g)?;
                let (lt, gt) = if self.op == Bin::Maximum {
                    (a.lt(b)?, a.gt(b)?)
                } else {
                    (a.gt(b)?, a.lt(b)?)
                };
                (
                    masked_zero_in_place(Tensor::where_(&lt, 0.0, &half)?),
                    masked_zero_in_place(Tensor::where_(&gt, 0.0, &half)?),
                )
            }
            Bin::Fmax | Bin::Fmin => {
                // as maximum (ties split the gradient), except that a NaN operand loses: `a`
                // keeps its share where `a >= b` or `b` is NaN, `b` where `a < b` or `a` is
                // NaN and `b` is not (`<=` / `>` for fmin)
                let half = Tensor::where_(&a.eq(b)?, &g.div(2.0)?, &g)?;
                let (ka, kb) = if self.op == Bin::Fmax {
                    (a.ge(b)?, a.gt(b)?)
                } else {
                    (a.le(b)?, a.lt(b)?)
                };
                let bnan = b.isnan()?;
                let ka = ka.logical_or(&bnan)?;
                let drop_b = kb.logical_or(&bnan)?;
                (
                    masked_zero_in_place(Tensor::where_(&ka, &half, 0.0)?),
                    masked_zero_in_place(Tensor::where_(&drop_b, 0.0, &half)?),
                )
            }
            Bin::FloorDivide => {
                return Err(crate::err!(
                    NotImplemented,
                    "floor_divide",
                    "derivative for floor_divide is not implemented"
                ));
            }
            Bin::Remainder if !self.has[0] => {
                // PyTorch has no derivative for `remainder(Scalar, Tensor)`
                return Err(crate::err!(
                    NotImplemented,
                    "remainder",
                    "derivative for remainder with a scalar self is not implemented"
                ));
            }
            // PyTorch's `-g * a.div(b, rounding_mode="floor")` / `"trunc"` (the rounding
            // division's own inf / NaN rules, not `floor(a / b)`)
            Bin::Remainder => (
                g.clone(),
                g.mul(&a.div_rounding(b, RoundingMode::Floor)?)?.neg()?,
            ),
            Bin::Fmod => (
                g.clone(),
                g.mul(&a.div_rounding(b, RoundingMode::Trunc)?)?.neg()?,
            ),
            Bin::Atan2 => {
                // PyTorch's atan2_backward: `1 / (a^2 + b^2)`, set to 0 where that is 0 (so
                // atan2(±0, ±0) has zero gradients, not NaN)
                let d = a.mul(a)?.add(&b.mul(b)?)?;
                let zero = {
                    let _g = crate::autograd::no_grad();
                    d.eq(0)?
                };
                let recip = d.reciprocal()?.masked_fill(&zero, 0.0)?;
                (g.mul(b)?.mul(&recip)?, g.mul(&a.neg()?)?.mul(&recip)?)
            }
            Bin::Hypot => {
                let y = &s[2];
                (g.mul(a)?.div(y)?, g.mul(b)?.div(y)?)
            }
        };
        let mut out = crate::autograd::Grads::new();
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
);

/// A gradient PyTorch masks with `masked_fill_` on a fresh tensor: the write leaves it at
/// version 1.
fn masked_zero_in_place(t: Tensor) -> Tensor {
    t.0.version.bump();
    t
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
    if out.dtype().is_differentiable() {
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

impl Tensor {
    /// Elementwise maximum (NaN propagates).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, f64::NAN], &[2])?;
    /// let b = Tensor::from_vec(vec![2.0f64, 0.0], &[2])?;
    /// assert!(a.maximum(&b)?.to_vec::<f64>()?[1].is_nan());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn maximum(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Maximum)
    }
    /// Elementwise minimum (NaN propagates).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64], &[1])?;
    /// assert_eq!(a.minimum(&a.mul(2.0)?)?.to_vec::<f64>()?, vec![1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn minimum(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Minimum)
    }
    /// Elementwise maximum ignoring NaN (NaN only if both are NaN).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f64::NAN], &[1])?;
    /// let b = Tensor::from_vec(vec![2.0f64], &[1])?;
    /// assert_eq!(a.fmax(&b)?.to_vec::<f64>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmax(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmax)
    }
    /// Elementwise minimum ignoring NaN.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f64::NAN], &[1])?;
    /// let b = Tensor::from_vec(vec![2.0f64], &[1])?;
    /// assert_eq!(a.fmin(&b)?.to_vec::<f64>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmin(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmin)
    }
    /// Floor division (integer division by zero is an InvalidArgument error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.floor_divide(2)?.to_vec::<i64>()?, vec![3, -4]);
    /// assert!(a.floor_divide(0).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn floor_divide(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::FloorDivide)
    }
    /// In-place [`Tensor::floor_divide`] (`self` must hold the promoted result; like PyTorch,
    /// backward through it is a `NotImplemented` error).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// a.floor_divide_(2)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![3, -4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn floor_divide_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::FloorDivide, "floor_divide_")
    }
    /// Python-style remainder (sign of the divisor).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.remainder(3)?.to_vec::<i64>()?, vec![1, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Remainder)
    }
    /// `scalar % tensor` with Python sign semantics (`torch.remainder(-3, t)`).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![2i64, -2], &[2])?;
    /// assert_eq!(Tensor::remainder_scalar_base(-3, &t)?.to_vec::<i64>()?, vec![1, -1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder_scalar_base(base: impl Into<Scalar>, other: &Tensor) -> Result<Tensor> {
        bin_op(&Operand::Scalar(base.into()), &other.into(), Bin::Remainder)
    }
    /// C-style remainder (sign of the dividend).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![7i64, -7], &[2])?;
    /// assert_eq!(a.fmod(3)?.to_vec::<i64>()?, vec![1, -1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmod(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Fmod)
    }
    /// In-place [`Tensor::remainder`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![-7i64], &[1])?;
    /// a.remainder_(3)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn remainder_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Remainder, "remainder_")
    }
    /// In-place [`Tensor::fmod`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![-7i64], &[1])?;
    /// a.fmod_(3)?;
    /// assert_eq!(a.to_vec::<i64>()?, vec![-1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fmod_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Fmod, "fmod_")
    }
    /// In-place [`Tensor::maximum`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// a.maximum_(&Tensor::from_vec(vec![2.0f32], &[1])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn maximum_(&self, other: &Tensor) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Maximum, "maximum_")
    }
    /// `atan2(self, other)` (integers promote to f32).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// assert_eq!(a.atan2(&Tensor::from_vec(vec![1.0f32], &[1])?)?.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn atan2(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Atan2)
    }
    /// In-place [`Tensor::atan2`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![0.0f32], &[1])?;
    /// a.atan2_(&Tensor::from_vec(vec![1.0f32], &[1])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn atan2_(&self, other: &Tensor) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Atan2, "atan2_")
    }
    /// `sqrt(self^2 + other^2)` without overflow.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![3.0f32], &[1])?;
    /// assert_eq!(a.hypot(&Tensor::from_vec(vec![4.0f32], &[1])?)?.to_vec::<f32>()?, vec![5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn hypot(&self, other: &Tensor) -> Result<Tensor> {
        bin_op(&self.into(), &other.into(), Bin::Hypot)
    }
    /// In-place [`Tensor::hypot`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![3.0f32], &[1])?;
    /// a.hypot_(&Tensor::from_vec(vec![4.0f32], &[1])?)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![5.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn hypot_(&self, other: &Tensor) -> Result<Tensor> {
        bin_op_(self, other.into(), Bin::Hypot, "hypot_")
    }
}

#[cfg(test)]
mod tests {
    use crate::Tensor;
    use crate::backend::cpu::math::fmod::{fmod32, tests::sweep32};

    /// The f32 pairs of the `fmod` sweep, as two contiguous tensors.
    fn pairs() -> (Vec<f32>, Vec<f32>, Tensor, Tensor) {
        let (mut xs, mut ys) = (vec![], vec![]);
        sweep32(1 << 18, |x, y| {
            xs.push(x);
            ys.push(y);
        });
        let n = xs.len();
        let (a, b) = (
            Tensor::from_vec(xs.clone(), &[n]).unwrap(),
            Tensor::from_vec(ys.clone(), &[n]).unwrap(),
        );
        (xs, ys, a, b)
    }

    fn assert_bits(got: &[f32], want: impl Fn(usize) -> f32, what: &str, xs: &[f32], ys: &[f32]) {
        for (i, g) in got.iter().enumerate() {
            let w = want(i);
            assert_eq!(
                g.to_bits(),
                w.to_bits(),
                "{what}[{i}]({:e}, {:e}): {g:e} != {w:e}",
                xs[i],
                ys[i]
            );
        }
    }

    /// Python's remainder from an fmod, as the op's closure.
    fn rem(m: f32, b: f32) -> f32 {
        if m != 0.0 && ((b < 0.0) != (m < 0.0)) {
            m + b
        } else {
            m
        }
    }

    #[test]
    fn fmod_remainder_f32_fast_path_is_exact() {
        // dense runs take the chunked fast kernel; every element must be SLEEF's `fmod` in the
        // 16-lane prefix and C's in the tail, bit for bit
        let (xs, ys, a, b) = pairs();
        let n = xs.len();
        let m = n - n % 16;
        let fm = |i: usize| {
            if i < m {
                fmod32(xs[i], ys[i])
            } else {
                xs[i] % ys[i]
            }
        };
        let got = a.fmod(&b).unwrap().to_vec::<f32>().unwrap();
        assert_bits(&got, fm, "fmod", &xs, &ys);
        let got = a.remainder(&b).unwrap().to_vec::<f32>().unwrap();
        assert_bits(&got, |i| rem(fm(i), ys[i]), "remainder", &xs, &ys);
        // a 0-dim operand on either side (the one-input chunked kernel)
        for &s in &[3.0f32, -1e-38, 0.0, 1e-45, f32::INFINITY] {
            let t = Tensor::scalar(s);
            let fm = |x: f32, y: f32, i: usize| if i < m { fmod32(x, y) } else { x % y };
            let got = a.fmod(&t).unwrap().to_vec::<f32>().unwrap();
            assert_bits(&got, |i| fm(xs[i], s, i), "fmod(a, s)", &xs, &ys);
            let got = t.fmod(&b).unwrap().to_vec::<f32>().unwrap();
            assert_bits(&got, |i| fm(s, ys[i], i), "fmod(s, b)", &xs, &ys);
            let got = a.remainder(&t).unwrap().to_vec::<f32>().unwrap();
            assert_bits(
                &got,
                |i| rem(fm(xs[i], s, i), s),
                "remainder(a, s)",
                &xs,
                &ys,
            );
        }
    }

    /// `floor_divide`'s f32 element function before the fast path (PyTorch's `div_floor`).
    fn floor_divide_ref(a: f32, b: f32) -> f32 {
        if b == 0.0 {
            return a / b;
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
        if d == 0.0 { 0.0f32.copysign(a / b) } else { f }
    }

    #[test]
    fn floor_divide_f32_fast_path_keeps_its_values() {
        let (xs, ys, a, b) = pairs();
        let got = a.floor_divide(&b).unwrap().to_vec::<f32>().unwrap();
        assert_bits(
            &got,
            |i| floor_divide_ref(xs[i], ys[i]),
            "floor_divide",
            &xs,
            &ys,
        );
        let t = Tensor::scalar(-0.75f32);
        let got = a.floor_divide(&t).unwrap().to_vec::<f32>().unwrap();
        assert_bits(
            &got,
            |i| floor_divide_ref(xs[i], -0.75),
            "floor_divide(a, s)",
            &xs,
            &ys,
        );
    }

    #[test]
    fn fmod_sleef_prefix_nan_survives_the_fast_path() {
        // PyTorch: NaN in the 16-lane prefix (SLEEF's quotient estimate overflows), exact in
        // the tail
        let a = Tensor::full(&[20], 3e38f32, crate::DType::F32).unwrap();
        let b = Tensor::full(&[20], 1e-38f32, crate::DType::F32).unwrap();
        let r = a.fmod(&b).unwrap().to_vec::<f32>().unwrap();
        assert!(r[..16].iter().all(|v| v.is_nan()));
        assert!(r[16..].iter().all(|&v| v == 3e38f32 % 1e-38f32));
    }
}
