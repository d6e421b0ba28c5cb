//! Choosing between values by a mask: `where_` (`cond ? a : b` over three broadcast operands),
//! `masked_fill` / `masked_fill_` and `nan_to_num` / `nan_to_num_`, with the ternary kernel they share and their
//! backward (the gradient passes where the value was taken, zero elsewhere).

use crate::autograd::view::{grad_edges, record_edges};
use crate::autograd::{SavedTensor, record};
use crate::dtype::{Operand, result_type};
use crate::layout::{broadcast_shapes, iter_output_strides};
use crate::ops::elementwise::binary::operand_tensor;
use crate::ops::grad::{GradIf, backward};
use crate::ops::util::{tensors, write_back};
use crate::{DType, Element, Result, Scalar, Tensor, bail};

/// `f(c, a, b)` over the broadcast of three tensors (`c` Bool, `a`/`b` of type `T`).
fn ternary_map<T: Element>(
    c: &Tensor,
    a: &Tensor,
    b: &Tensor,
    op: &'static str,
    f: impl Fn(bool, T, T) -> T + Sync,
) -> Result<Tensor> {
    let s1 = broadcast_shapes(&c.shape(), &a.shape(), op)?;
    let shape = broadcast_shapes(&s1, &b.shape(), op)?;
    let (cd, ad, bd) = (c.data(), a.data(), b.data());
    let sc = crate::ops::util::broadcast_strides(&cd.layout, &shape);
    let sa = crate::ops::util::broadcast_strides(&ad.layout, &shape);
    let sb = crate::ops::util::broadcast_strides(&bd.layout, &shape);
    // PyTorch's operand order: the condition first
    let strides = iter_output_strides(
        &shape,
        &[&cd.layout, &ad.layout, &bd.layout],
        &[&sc, &sa, &sb],
    );
    let out = Tensor::empty_strided(&shape, &strides, T::DTYPE)?;
    // `out` is fresh: no overlap with the inputs
    crate::backend::map3::<bool, T, T>(&out.data(), &cd, &ad, &bd, &f);
    Ok(out)
}

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

backward!(WhereBackward, self.name, |self, ctx, g: Tensor| {
    let c = &ctx.saved[0];
    let mut out = crate::autograd::Grads::new();
    let mut i = 0;
    if self.has[0] {
        out.push(ctx.grad_if(i, || Tensor::where_(c, &g, 0.0))?);
        i += 1;
    }
    if self.has[1] {
        out.push(ctx.grad_if(i, || Tensor::where_(c, 0.0, &g))?);
    }
    Ok(out)
});

pub(crate) fn check_mask(mask: &Tensor, value: &Operand, name: &'static str) -> Result<()> {
    if mask.dtype() != DType::Bool {
        bail!(
            DTypeMismatch,
            name,
            "masked_fill_ only supports boolean masks, but got mask with dtype {}",
            mask.dtype().torch_scalar_name()
        );
    }
    if let Operand::Tensor(v) = value
        && v.dim() != 0
    {
        bail!(
            InvalidArgument,
            name,
            "masked_fill_ only supports a 0-dimensional value tensor, but got tensor with {} dimension(s).",
            v.dim()
        );
    }
    Ok(())
}

/// Backward of masked_fill: self gets `g` with masked positions zeroed, value gets their sum.
/// `value`: the dtype of a tensor `value` (`None` for a scalar).
pub(crate) struct MaskedFillBackward {
    pub(crate) value: Option<DType>,
}

backward!(
    MaskedFillBackward,
    "MaskedFillBackward0",
    |self, ctx, g: Tensor| {
        let m = &ctx.saved[0];
        let mut out = smallvec::smallvec![ctx.grad_if(0, || Tensor::where_(m, 0.0, &g))?];
        if let Some(vdt) = self.value {
            out.push(ctx.grad_if(1, || {
                // PyTorch's `where(mask, g, 0).sum()` has no real-to-complex step: a complex
                // gradient for a real value tensor fails its engine's dtype check
                if g.dtype().is_complex() && !vdt.is_complex() {
                    bail!(
                        DTypeMismatch,
                        "backward",
                        "Expected isFloatingType(grad.scalar_type()) || (input_is_complex == grad_is_complex) to be true, but got false. (MaskedFillBackward0: a {} gradient for a {} value)",
                        g.dtype().name(),
                        vdt.name()
                    );
                }
                Tensor::where_(m, &g, 0.0)?.sum()
            })?);
        }
        Ok(out)
    }
);

/// PyTorch's checks of a `masked_fill` value before the fill: a value tensor that requires
/// grad needs a differentiable `self` (out of place: autograd refuses the integral result),
/// and the value converts to `self`'s dtype without overflow.
fn check_fill_value(x: &Tensor, value: &Operand, name: &'static str, inplace: bool) -> Result<()> {
    let v = match value {
        Operand::Scalar(s) => *s,
        Operand::Tensor(t) => {
            if !inplace
                && t.requires_grad()
                && crate::autograd::is_grad_enabled()
                && !x.dtype().is_differentiable()
            {
                bail!(
                    DTypeMismatch,
                    name,
                    "Autograd not support dtype: {}",
                    x.dtype().torch_scalar_name()
                );
            }
            let _g = crate::autograd::no_grad();
            match t.dtype() {
                d if d.is_complex() => return Ok(()),
                d if d.is_float() => Scalar::Float(t.to_dtype(DType::F64)?.item::<f64>()?),
                DType::Bool => Scalar::Bool(t.item::<bool>()?),
                _ => Scalar::Int(t.to_dtype(DType::I64)?.item::<i64>()?),
            }
        }
    };
    crate::ops::movement::copy::check_fits(v, x.dtype(), name)
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

fn where_record(cond: &Tensor, a: Operand, b: Operand) -> Result<Tensor> {
    let out = where_impl(cond, &a, &b)?;
    if out.dtype().is_differentiable() {
        let ts = tensors(&[&a, &b]);
        let refs: Vec<&Tensor> = ts.iter().collect();
        let has = [
            matches!(a, Operand::Tensor(_)),
            matches!(b, Operand::Tensor(_)),
        ];
        record(
            &[&out],
            &refs,
            || vec![SavedTensor::input(cond)],
            WhereBackward {
                has,
                name: "WhereBackward0",
            },
        )?;
    }
    Ok(out)
}

/// `f(x)` into a fresh tensor with `x`'s preserved layout (PyTorch's `nan_to_num` writes into
/// `empty_like(self)`).
fn preserved_map<T: crate::Element, U: crate::Element>(
    x: &Tensor,
    f: impl Fn(T) -> U + Sync,
) -> Result<Tensor> {
    x.check_strided("nan_to_num")?;
    crate::layout::check_numel(&x.shape(), "nan_to_num")?;
    let out = Tensor::empty_strided(&x.shape(), &x.layout().preserved_strides(), U::DTYPE)?;
    crate::ops::elementwise::map::unary_into::<T, U>(&out, x, f);
    Ok(out)
}

fn nan_to_num_result(
    x: &Tensor,
    nan: f64,
    posinf: Option<f64>,
    neginf: Option<f64>,
) -> Result<Tensor> {
    macro_rules! go {
        ($T:ty, $max:expr, $min:expr, $to:expr, $from:expr) => {{
            let (p, n) = (posinf.unwrap_or($max), neginf.unwrap_or($min));
            let (to, from) = ($to, $from);
            let (nan, p, n): ($T, $T, $T) = (from(nan), from(p), from(n));
            // inline(always): out of line, the closure runs its baseline copy inside the
            // vectorised loops of the backend (per-op sweep `nan_to_num`)
            preserved_map::<$T, $T>(
                x,
                #[inline(always)]
                move |v| {
                    let f: f64 = to(v);
                    if f.is_nan() {
                        nan
                    } else if f == f64::INFINITY {
                        p
                    } else if f == f64::NEG_INFINITY {
                        n
                    } else {
                        v
                    }
                },
            )
        }};
    }
    use crate::Element;
    match x.dtype() {
        d if d.is_float() => crate::match_dtype!(d, float, T => go!(
            T,
            T::MAX.to_f64(),
            T::MIN.to_f64(),
            |v: T| v.to_f64(),
            <T as Element>::from_f64
        )),
        // complex: the real and imaginary parts separately, with the part type's defaults
        DType::C64 => {
            let (p, n) = (
                posinf.unwrap_or(f32::MAX as f64),
                neginf.unwrap_or(f32::MIN as f64),
            );
            let f = move |v: f32| -> f32 {
                if v.is_nan() {
                    nan as f32
                } else if v == f32::INFINITY {
                    p as f32
                } else if v == f32::NEG_INFINITY {
                    n as f32
                } else {
                    v
                }
            };
            preserved_map::<crate::dtype::C64, crate::dtype::C64>(x, move |z| {
                crate::dtype::C64::new(f(z.re), f(z.im))
            })
        }
        DType::C128 => {
            let (p, n) = (posinf.unwrap_or(f64::MAX), neginf.unwrap_or(f64::MIN));
            let f = move |v: f64| -> f64 {
                if v.is_nan() {
                    nan
                } else if v == f64::INFINITY {
                    p
                } else if v == f64::NEG_INFINITY {
                    n
                } else {
                    v
                }
            };
            preserved_map::<crate::dtype::C128, crate::dtype::C128>(x, move |z| {
                crate::dtype::C128::new(f(z.re), f(z.im))
            })
        }
        _ => x.copy(),
    }
}

impl Tensor {
    /// `cond ? a : b` elementwise with broadcasting; `a`/`b` are tensors or scalars and promote
    /// together (PyTorch `torch.where`). `cond` must be Bool.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let c = Tensor::from_vec(vec![true, false], &[2])?;
    /// let x = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert_eq!(Tensor::where_(&c, &x, 0.5)?.to_vec::<f32>()?, vec![1.0, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn where_(cond: &Tensor, a: impl Into<Operand>, b: impl Into<Operand>) -> Result<Tensor> {
        where_record(cond, a.into(), b.into())
    }

    /// Copy of `self` with `value` where `mask` (Bool, broadcastable to `self`) is true.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// let m = Tensor::from_vec(vec![true, false], &[2])?;
    /// assert_eq!(x.masked_fill(&m, -1.0)?.to_vec::<f32>()?, vec![-1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn masked_fill(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<Tensor> {
        let value = value.into();
        check_mask(mask, &value, "masked_fill")?;
        check_fill_value(self, &value, "masked_fill", false)?;
        let out = masked_fill_result(self, mask, &value)?;
        // PyTorch fills a row-major clone, whatever the input's memory order
        let out = if out.is_contiguous() {
            out
        } else {
            let _g = crate::autograd::no_grad();
            out.contiguous()?
        };
        if out.dtype().is_differentiable() {
            let mut ins = vec![self.clone()];
            ins.extend(tensors(&[&value]));
            let refs: Vec<&Tensor> = ins.iter().collect();
            let bw = MaskedFillBackward {
                value: ins.get(1).map(|v| v.dtype()),
            };
            record(&[&out], &refs, || vec![SavedTensor::input(mask)], bw)?;
        }
        Ok(out)
    }

    /// In-place [`Tensor::masked_fill`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// x.masked_fill_(&Tensor::from_vec(vec![false, true], &[2])?, 9)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1, 9]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn masked_fill_(&self, mask: &Tensor, value: impl Into<Operand>) -> Result<Tensor> {
        let value = value.into();
        check_mask(mask, &value, "masked_fill_")?;
        check_fill_value(self, &value, "masked_fill_", true)?;
        let vt = tensors(&[&value]);
        let refs: Vec<&Tensor> = vt.iter().collect();
        let m = mask.clone();
        write_back(
            self,
            &refs,
            "masked_fill_",
            || masked_fill_result(self, mask, &value),
            |_, _| vec![SavedTensor::input(&m)],
            MaskedFillBackward {
                value: vt.first().map(|v| v.dtype()),
            },
        )
    }

    /// Replaces NaN by `nan`, +inf by `posinf` and -inf by `neginf` (defaults: the dtype's
    /// largest/lowest finite values).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::NAN, f32::NEG_INFINITY], &[2])?;
    /// assert_eq!(a.nan_to_num(0.0, None, Some(-1.0))?.to_vec::<f32>()?, vec![0.0, -1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nan_to_num(&self, nan: f64, posinf: Option<f64>, neginf: Option<f64>) -> Result<Tensor> {
        let out = nan_to_num_result(self, nan, posinf, neginf)?;
        // the finite mask only when a graph is recorded (made unconditionally it was a second
        // pass over the input: per-op sweep row `nan_to_num`)
        if out.dtype().is_differentiable()
            && let Some(edges) = grad_edges(&[self])?
        {
            let m = {
                let _g = crate::autograd::no_grad();
                self.isfinite()?
            };
            let bw = WhereBackward {
                has: [true, false],
                name: "NanToNumBackward0",
            };
            record_edges(&[&out], edges, vec![SavedTensor::private(m)], bw);
        }
        Ok(out)
    }

    /// In-place [`Tensor::nan_to_num`] (integer and bool tensors are left as they are).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![f32::NAN, 1.0], &[2])?;
    /// a.nan_to_num_(0.0, None, None)?;
    /// assert_eq!(a.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn nan_to_num_(
        &self,
        nan: f64,
        posinf: Option<f64>,
        neginf: Option<f64>,
    ) -> Result<Tensor> {
        if self.dtype().is_integral(true) {
            // PyTorch copies an integer tensor onto itself: only the version moves
            self.0.version.bump();
            return Ok(self.clone());
        }
        // the mask of the pre-op values (the gradient passes where they were finite), made
        // only when the op is recorded
        let m = if self.dtype().is_differentiable()
            && crate::autograd::is_grad_enabled()
            && self.requires_grad()
        {
            let _g = crate::autograd::no_grad();
            Some(self.isfinite()?)
        } else {
            None
        };
        write_back(
            self,
            &[],
            "nan_to_num_",
            || nan_to_num_result(self, nan, posinf, neginf),
            |_, _| m.into_iter().map(SavedTensor::private).collect(),
            WhereBackward {
                has: [true, false],
                name: "NanToNumBackward0",
            },
        )
    }
}
