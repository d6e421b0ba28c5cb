//! Binary arithmetic with broadcasting and PyTorch type promotion: add/sub (with alpha), mul,
//! div, their in-place forms and the scalar-first `sub`/`div` (`torch.sub(2, t)`). The shared driver [`binary_map`] is what every elementwise
//! binary op uses: promotion → broadcasting → output strides that keep the inputs' memory
//! order → a typed kernel over coalesced runs.

use crate::autograd::output_grad;
use crate::autograd::{Backward, BackwardCtx, SavedTensor, check_inplace, record, record_inplace};
use crate::dtype::{Operand, result_type, result_type_scalar};
use crate::layout::{broadcast_shapes, iter_output_strides};
use crate::ops::elementwise::arith_scalar::{
    arith_scalar_dense, arith_scalar_dense_inplace, arith_scalar_dense_owned,
};
use crate::ops::grad::{GradIf, backward, input_grad};
use crate::ops::util::{broadcast_strides, check_no_internal_overlap, check_no_partial_overlap};
use crate::{DType, Element, Result, Scalar, Tensor, bail};

/// Turns an operand into a tensor of `dtype` (scalars become 0-dim tensors), without autograd.
pub(crate) fn operand_tensor(o: &Operand, dtype: DType) -> Result<Tensor> {
    match o {
        Operand::Tensor(t) => {
            if t.dtype() == dtype {
                Ok(t.clone())
            } else {
                let _g = crate::autograd::no_grad();
                t.to_dtype(dtype)
            }
        }
        Operand::Scalar(s) => Ok(scalar_tensor(*s, dtype)),
    }
}

/// A 0-dim tensor of `dtype` holding `s`.
pub(crate) fn scalar_tensor(s: Scalar, dtype: DType) -> Tensor {
    crate::dispatch!(dtype, T => Tensor::scalar::<T>(s.to::<T>()))
}

/// PyTorch's `canCast(from, to)` for writing a result into an existing tensor.
pub(crate) fn can_cast(from: DType, to: DType) -> bool {
    use crate::dtype::Category::*;
    let (f, t) = (from.category(), to.category());
    !((f == Complex && t != Complex)
        || (f == Floating && (t == Integral || t == Bool))
        || (f != Bool && t == Bool))
}

pub(crate) fn cast_error(op: &'static str, from: DType, to: DType) -> crate::Error {
    crate::err!(
        DTypeMismatch,
        op,
        "result type {} can't be cast to the desired output type {}",
        from.torch_scalar_name(),
        to.torch_scalar_name()
    )
}

/// Computes `f(a, b)` elementwise over the broadcast of `a` and `b` (both already of dtype
/// `T`), into a fresh tensor whose strides follow the inputs' memory order.
pub(crate) fn binary_map<T: Element, U: Element>(
    a: &Tensor,
    b: &Tensor,
    op: &'static str,
    f: impl Fn(T, T) -> U + Sync,
) -> Result<Tensor> {
    a.check_strided(op)?;
    b.check_strided(op)?;
    if let Some(r) = crate::ops::dense::binary::<T, U>(a, b, &f) {
        return r;
    }
    let shape = broadcast_shapes(&a.shape(), &b.shape(), op)?;
    let (ad, bd) = (a.data(), b.data());
    let sa = broadcast_strides(&ad.layout, &shape);
    let sb = broadcast_strides(&bd.layout, &shape);
    let strides = iter_output_strides(&shape, &[&ad.layout, &bd.layout], &[&sa, &sb]);
    let out = Tensor::empty_strided(&shape, &strides, U::DTYPE)?;
    binary_into::<T, U>(&out, &shape, a, b, f);
    Ok(out)
}

/// Writes `f(a, b)` into `out` (shape `shape`); callers have done every overlap check. Large
/// operands are split into element ranges processed on the rayon pool.
pub(crate) fn binary_into<T: Element, U: Element>(
    out: &Tensor,
    shape: &[usize],
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> U + Sync,
) {
    debug_assert_eq!(out.shape(), shape);
    let (od, ad, bd) = (out.data(), a.data(), b.data());
    // `out` either does not overlap the inputs or overlaps one of them exactly (each element is
    // read before it is written, by the same call)
    crate::backend::map2::<T, U>(&od, &ad, &bd, &f);
}

/// Runs a same-dtype binary op in place on `self_` (dtype `T`), checking geometry and overlap.
pub(crate) fn binary_inplace<T: Element>(
    self_: &Tensor,
    other: &Tensor,
    op: &'static str,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<()> {
    self_.check_strided(op)?;
    other.check_strided(op)?;
    let shape = self_.shape();
    let b = broadcast_shapes(&shape, &other.shape(), op)?;
    if b != shape {
        bail!(
            ShapeMismatch,
            op,
            "output with shape {:?} doesn't match the broadcast shape {:?}",
            shape,
            b
        );
    }
    check_no_internal_overlap(&self_.data_ref(), op)?;
    check_no_partial_overlap(self_, other, op)?;
    if !crate::ops::dense::binary_inplace::<T>(self_, other, &f) {
        binary_into::<T, T>(self_, &shape, self_, other, f);
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Arith {
    Add,
    Sub,
    Mul,
    Div,
}

impl Arith {
    fn name(self) -> &'static str {
        match self {
            Arith::Add => "add",
            Arith::Sub => "sub",
            Arith::Mul => "mul",
            Arith::Div => "div",
        }
    }
    /// The result dtype of `a op b` (a scalar `b` without building an operand for `a`).
    fn result_dtype_of(self, a: &Tensor, b: &Operand) -> DType {
        self.promoted(match b {
            Operand::Scalar(s) => result_type_scalar(a.dtype(), s),
            Operand::Tensor(_) => result_type(&[&Operand::Tensor(a.clone()), b]),
        })
    }

    /// Integer division is true division (to the default float dtype).
    fn promoted(self, r: DType) -> DType {
        if self == Arith::Div && r.is_integral(true) {
            DType::F32
        } else {
            r
        }
    }
}

/// Typed kernel for the four arithmetic ops (`alpha` scales `b` for add/sub).
fn arith_kernel(
    op: Arith,
    dtype: DType,
    alpha: Scalar,
    out: Option<&Tensor>,
    a: &Tensor,
    b: &Tensor,
) -> Result<Tensor> {
    // One closure per (op, alpha == 1) so every kernel loop is branch-free and vectorises.
    // PyTorch's complex add/sub is always `x + y * alpha` (sub: `-alpha`) with the naive
    // complex product, so `y = inf + 0i` adds `inf + nan i` even for alpha = 1.
    macro_rules! go {
        ($T:ty, $div:expr) => {{
            let al: $T = alpha.to::<$T>();
            let cplx = <$T as Element>::DTYPE.is_complex();
            let one = alpha == Scalar::Int(1) && !cplx;
            match (op, one) {
                (Arith::Sub, false) if cplx => {
                    let neg = <$T as Element>::zero().sub(al);
                    arith_run::<$T>(op, out, a, b, move |x: $T, y: $T| x.add(y.mul(neg)))
                }
                (Arith::Add, true) => arith_run::<$T>(op, out, a, b, |x: $T, y: $T| x.add(y)),
                (Arith::Add, false) => {
                    arith_run::<$T>(op, out, a, b, move |x: $T, y: $T| x.add(y.mul(al)))
                }
                (Arith::Sub, true) => arith_run::<$T>(op, out, a, b, |x: $T, y: $T| x.sub(y)),
                (Arith::Sub, false) => {
                    arith_run::<$T>(op, out, a, b, move |x: $T, y: $T| x.sub(y.mul(al)))
                }
                (Arith::Mul, _) => arith_run::<$T>(op, out, a, b, |x: $T, y: $T| x.mul(y)),
                (Arith::Div, _) => arith_run::<$T>(op, out, a, b, $div),
            }
        }};
    }
    match dtype {
        DType::Bool => go!(bool, |x: bool, _y: bool| x),
        DType::U8 => go!(u8, |x: u8, y: u8| x / y),
        d if d.is_integral(false) => {
            crate::match_dtype!(d, signed, T => go!(T, |x: T, y: T| x.wrapping_div(y)))
        }
        // PyTorch's scaled complex division (not the textbook formula, which overflows)
        DType::C64 => go!(crate::dtype::C64, crate::dtype::div_c64),
        DType::C128 => go!(crate::dtype::C128, crate::dtype::div_c128),
        d => crate::match_dtype!(d, float, T => go!(T, |x: T, y: T| x / y)),
    }
}

/// Runs one arithmetic kernel into `out` (in place) or a fresh tensor.
fn arith_run<T: Element>(
    op: Arith,
    out: Option<&Tensor>,
    a: &Tensor,
    b: &Tensor,
    f: impl Fn(T, T) -> T + Sync,
) -> Result<Tensor> {
    match out {
        Some(o) => {
            binary_inplace::<T>(o, b, op.name(), f)?;
            Ok(o.clone())
        }
        None => binary_map::<T, T>(a, b, op.name(), f),
    }
}

/// PyTorch's `sub_check` for one bool operand (a Python bool is a bool operand too; two bool
/// tensors are refused before, with their own message).
fn sub_bool_check(op: Arith, a: &Tensor, b: &Operand, name: &'static str) -> Result<()> {
    let b_bool = match b {
        Operand::Tensor(t) => t.dtype() == DType::Bool,
        Operand::Scalar(s) => matches!(s, Scalar::Bool(_)),
    };
    if op == Arith::Sub && (a.dtype() == DType::Bool || b_bool) {
        bail!(
            DTypeMismatch,
            name,
            "Subtraction, the `-` operator, with a bool tensor is not supported. If you are trying to invert a mask, use the `~` or `logical_not()` operator instead."
        );
    }
    Ok(())
}

/// PyTorch's `alpha_check` of add/sub: an integral (or bool) result takes no float or
/// complex `alpha`, a real result no complex one.
fn alpha_check(op: Arith, dt: DType, alpha: Scalar, name: &'static str) -> Result<()> {
    if !matches!(op, Arith::Add | Arith::Sub) {
        return Ok(());
    }
    if dt.is_integral(true) && matches!(alpha, Scalar::Float(_) | Scalar::Complex(_)) {
        bail!(
            DTypeMismatch,
            name,
            "For integral input tensors, argument alpha must not be a floating point number."
        );
    }
    if !dt.is_complex() && matches!(alpha, Scalar::Complex(_)) {
        bail!(
            DTypeMismatch,
            name,
            "For non-complex input tensors, argument alpha must not be a complex number."
        );
    }
    Ok(())
}

fn arith(a: &Tensor, b: Operand, alpha: Scalar, op: Arith) -> Result<Tensor> {
    if a.is_sparse() || matches!(&b, Operand::Tensor(t) if t.is_sparse()) {
        return crate::sparse::arith(a, &b, alpha, op);
    }
    let dt = op.result_dtype_of(a, &b);
    if op == Arith::Sub && dt == DType::Bool {
        bail!(
            InvalidArgument,
            "sub",
            "Subtraction, the `-` operator, with two bool tensors is not supported. Use the `^` or `logical_xor()` operator instead."
        );
    }
    sub_bool_check(op, a, &b, "sub")?;
    alpha_check(op, dt, alpha, op.name())?;
    let fast = match &b {
        Operand::Scalar(v) if dt == a.dtype() && alpha == Scalar::Int(1) => {
            arith_scalar_dense(op, a, *v)
        }
        _ => None,
    };
    let mut out = match fast {
        Some(r) => r?,
        None => {
            let ao = Operand::Tensor(a.clone());
            let (ta, tb) = (operand_tensor(&ao, dt)?, operand_tensor(&b, dt)?);
            arith_kernel(op, dt, alpha, None, &ta, &tb)?
        }
    };
    let pair;
    let inputs: &[&Tensor] = match &b {
        Operand::Tensor(t) => {
            pair = [a, t];
            &pair
        }
        Operand::Scalar(_) => std::slice::from_ref(&a),
    };
    if dt.is_differentiable() {
        let bw = ArithBackward {
            op,
            alpha,
            b_scalar: scalar_of(&b),
            saved_a: false,
            saved_b: false,
        };
        record_arith(&mut out, inputs, a, &b, bw)?;
    }
    Ok(out)
}

fn scalar_of(o: &Operand) -> Option<Scalar> {
    match o {
        Operand::Scalar(s) => Some(*s),
        Operand::Tensor(_) => None,
    }
}

fn record_arith(
    out: &mut Tensor,
    inputs: &[&Tensor],
    a: &Tensor,
    b: &Operand,
    mut bw: ArithBackward,
) -> Result<()> {
    let Some(edges) = crate::autograd::view::grad_edges(inputs)? else {
        return Ok(());
    };
    // an input requires grad exactly when it has an edge
    let a_rg = edges[0].is_some();
    let bt = match b {
        Operand::Tensor(t) => Some(t),
        _ => None,
    };
    let b_rg = edges.get(1).is_some_and(Option::is_some);
    let op = bw.op;
    // save only what the formula reads (PyTorch's conditional saving)
    let save_b = matches!(op, Arith::Mul | Arith::Div) && a_rg && bt.is_some();
    let save_a = matches!(op, Arith::Mul | Arith::Div) && b_rg;
    let save_b = save_b || (op == Arith::Div && b_rg);
    bw.saved_a = save_a;
    bw.saved_b = save_b;
    let mut saved = Vec::new();
    if save_a {
        saved.push(SavedTensor::input(a));
    }
    if let (true, Some(t)) = (save_b, bt) {
        saved.push(SavedTensor::input(t));
    }
    crate::autograd::view::record_fresh(out, edges, saved, bw);
    Ok(())
}

fn arith_inplace(a: &Tensor, b: Operand, alpha: Scalar, op: Arith) -> Result<Tensor> {
    let name = match op {
        Arith::Add => "add_",
        Arith::Sub => "sub_",
        Arith::Mul => "mul_",
        Arith::Div => "div_",
    };
    a.check_strided(name)?;
    if let Operand::Tensor(t) = &b {
        t.check_strided(name)?;
    }
    let dt = op.result_dtype_of(a, &b);
    if dt != DType::Bool {
        sub_bool_check(op, a, &b, name)?;
    }
    alpha_check(op, dt, alpha, name)?;
    let bt = match &b {
        Operand::Tensor(t) => Some(t.clone()),
        _ => None,
    };
    let others: Vec<&Tensor> = bt.iter().collect();
    let rec = check_inplace(a, &others)?;
    // PyTorch's order after autograd's check: the written-to memory, the shapes, the dtypes
    check_no_internal_overlap(&a.data_ref(), name)?;
    if let Some(t) = &bt {
        check_no_partial_overlap(a, t, name)?;
        let (shape, bshape) = (a.shape(), broadcast_shapes(&a.shape(), &t.shape(), name)?);
        if bshape != shape {
            bail!(
                ShapeMismatch,
                name,
                "output with shape {:?} doesn't match the broadcast shape {:?}",
                shape,
                bshape
            );
        }
    }
    if !can_cast(dt, a.dtype()) {
        return Err(cast_error(name, dt, a.dtype()));
    }
    // keep the pre-op value of self when the formula for `other` needs it
    let b_rg = bt.as_ref().is_some_and(|t| t.requires_grad());
    let orig = if rec.is_some() && b_rg && matches!(op, Arith::Mul | Arith::Div) {
        // a recorded clone: the saved pre-op value stays differentiable (double backward)
        Some(a.copy()?)
    } else {
        None
    };
    let a_needed = rec.is_some();
    let save_b = a_needed && matches!(op, Arith::Mul | Arith::Div) && bt.is_some();
    // save `other` before writing: when it aliases `self` (`x.mul_(&x)`) the bump below must
    // make the saved version stale, as in PyTorch
    let saved_other = if save_b {
        bt.as_ref().map(SavedTensor::input)
    } else {
        None
    };
    if dt == a.dtype() {
        let done = match &b {
            Operand::Scalar(v) if alpha == Scalar::Int(1) => arith_scalar_dense_inplace(op, a, *v),
            _ => false,
        };
        if !done {
            let tb = operand_tensor(&b, dt)?;
            arith_kernel(op, dt, alpha, Some(a), a, &tb)?;
        }
    } else {
        let ao = Operand::Tensor(a.clone());
        let (ta, tb) = (operand_tensor(&ao, dt)?, operand_tensor(&b, dt)?);
        let tmp = arith_kernel(op, dt, alpha, None, &ta, &tb)?;
        crate::backend::copy_raw(&a.data(), &tmp.data(), a.dtype(), dt);
    }
    a.0.version.bump();
    let bw = ArithBackward {
        op,
        alpha,
        b_scalar: scalar_of(&b),
        saved_a: orig.is_some(),
        saved_b: save_b,
    };
    record_inplace(
        rec,
        a,
        || {
            let mut s = Vec::new();
            if let Some(o) = orig {
                s.push(SavedTensor::private(o));
            }
            s.extend(saved_other);
            s
        },
        bw,
    )?;
    Ok(a.clone())
}

/// Backward of complex conjugation: the conjugated gradient.
struct ConjBackward;

backward!(ConjBackward, "ConjBackward0", |self, _, g: Tensor| {
    input_grad(g.conj_if_complex()?)
});

/// Backward of add/sub/mul/div (tensor or scalar second operand). Saved: `a` then `b`, each
/// only if a formula reads it.
struct ArithBackward {
    op: Arith,
    alpha: Scalar,
    b_scalar: Option<Scalar>,
    saved_a: bool,
    saved_b: bool,
}

impl Backward for ArithBackward {
    fn name(&self) -> &'static str {
        match self.op {
            Arith::Add => "AddBackward0",
            Arith::Sub => "SubBackward0",
            Arith::Mul => "MulBackward0",
            Arith::Div => "DivBackward0",
        }
    }
    fn scalar_grad(&self) -> Option<crate::autograd::ScalarGrad> {
        use crate::autograd::ScalarGrad;
        match self.b_scalar? {
            Scalar::Complex(_) => None,
            s => Some(match self.op {
                Arith::Add | Arith::Sub => ScalarGrad::Identity,
                Arith::Mul => ScalarGrad::Mul(s),
                Arith::Div => ScalarGrad::Div(s),
            }),
        }
    }
    fn apply(
        &self,
        ctx: &BackwardCtx<'_>,
        g: crate::autograd::Grads,
    ) -> Result<crate::autograd::Grads> {
        let mut g = output_grad(g);
        // `g * s` / `g / s` for a scalar `s`: overwrite a gradient nobody else can see instead
        // of allocating (the dense kernel computes the same values as the out-of-place path)
        if let (Arith::Mul | Arith::Div, Some(s)) = (self.op, self.b_scalar)
            && ctx.grad_owned
            && ctx.needs(0)
            && !matches!(s, Scalar::Complex(_))
            && arith_scalar_dense_owned(self.op, &mut g, s)
        {
            // (built by pushes: cheaper than the `smallvec!` macro's iterator on this hot path)
            let mut r = crate::autograd::Grads::new();
            r.push(Some(g));
            r.push(None);
            return Ok(r);
        }
        let mut it = ctx.saved.iter();
        let a = if self.saved_a { it.next() } else { None };
        let b = if self.saved_b { it.next() } else { None };
        let b_op = |b: Option<&Tensor>| -> Result<Operand> {
            Ok(match (b, self.b_scalar) {
                (Some(t), _) => Operand::Tensor(t.conj_if_complex()?),
                (None, Some(s)) => Operand::Scalar(s),
                (None, None) => unreachable!("internal: operand b was not saved"),
            })
        };
        let one = self.alpha == Scalar::Int(1);
        let (ga, gb) = match self.op {
            Arith::Add => {
                let gb = ctx.grad_if(1, || Ok(if one { g.clone() } else { g.mul(self.alpha)? }))?;
                (ctx.needs(0).then_some(g), gb)
            }
            Arith::Sub => (
                ctx.needs(0).then(|| g.clone()),
                ctx.grad_if(1, || {
                    Ok(if one {
                        g.neg()?
                    } else {
                        g.mul(self.alpha)?.neg()?
                    })
                })?,
            ),
            Arith::Mul => (
                ctx.grad_if(0, || g.mul(b_op(b)?))?,
                ctx.grad_if(1, || {
                    g.mul(&a.expect("internal: a saved").conj_if_complex()?)
                })?,
            ),
            Arith::Div => {
                let ga = ctx.grad_if(0, || g.div(b_op(b)?))?;
                let gb = ctx.grad_if(1, || {
                    // PyTorch's `-g * conj((a / b) / b)` (its inf / NaN pattern included)
                    let (a, b) = (a.expect("internal: a saved"), b.expect("internal: b saved"));
                    g.neg()?.mul(&a.div(b)?.div(b)?.conj_if_complex()?)
                })?;
                (ga, gb)
            }
        };
        // (`smallvec!`, not `grads`: its `collect` is an out-of-line `from_iter` per node)
        Ok(smallvec::smallvec![ga, gb])
    }
}

impl Tensor {
    /// `self + other` with broadcasting and type promotion (`other`: tensor or Rust number).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 2], &[2])?;
    /// assert_eq!(a.add(0.5)?.to_vec::<f32>()?, vec![1.5, 2.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn add(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith(self, other.into(), Scalar::Int(1), Arith::Add)
    }
    /// `self + alpha * other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// assert_eq!(a.add_alpha(&a, 2.0)?.to_vec::<f32>()?, vec![3.0, 6.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn add_alpha(&self, other: impl Into<Operand>, alpha: impl Into<Scalar>) -> Result<Tensor> {
        arith(self, other.into(), alpha.into(), Arith::Add)
    }
    /// `self - other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// assert_eq!(a.sub(1.0)?.to_vec::<f32>()?, vec![0.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sub(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith(self, other.into(), Scalar::Int(1), Arith::Sub)
    }
    /// `self - alpha * other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32], &[1])?;
    /// assert_eq!(a.sub_alpha(&a, 3.0)?.to_vec::<f32>()?, vec![-2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sub_alpha(&self, other: impl Into<Operand>, alpha: impl Into<Scalar>) -> Result<Tensor> {
        arith(self, other.into(), alpha.into(), Arith::Sub)
    }
    /// `self * other`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    /// assert_eq!(a.mul(&a)?.to_vec::<f32>()?, vec![1.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn mul(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith(self, other.into(), Scalar::Int(1), Arith::Mul)
    }
    /// True division `self / other` (integers promote to float).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1i64, 3], &[2])?;
    /// assert_eq!(a.div(2)?.to_vec::<f32>()?, vec![0.5, 1.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn div(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith(self, other.into(), Scalar::Int(1), Arith::Div)
    }
    /// `base - other` for a scalar first operand (`torch.sub(2, t)`: the scalar is a wrapped
    /// number, so `other`'s dtype category decides the result).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![1i32, 5], &[2])?;
    /// assert_eq!(Tensor::sub_scalar_base(2, &t)?.to_vec::<i32>()?, vec![1, -3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sub_scalar_base(base: impl Into<Scalar>, other: &Tensor) -> Result<Tensor> {
        let s = base.into();
        let dt = result_type(&[&Operand::Scalar(s), &other.into()]);
        scalar_tensor(s, dt).sub(other)
    }
    /// `base / other` for a scalar first operand (`torch.div(2, t)`; integers give float).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![4i64], &[1])?;
    /// assert_eq!(Tensor::div_scalar_base(2, &t)?.to_vec::<f32>()?, vec![0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn div_scalar_base(base: impl Into<Scalar>, other: &Tensor) -> Result<Tensor> {
        let s = base.into();
        let dt = result_type(&[&Operand::Scalar(s), &other.into()]);
        scalar_tensor(s, dt).div(other)
    }
    /// In-place `add`; returns `self`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// x.add_(1.0)?.add_(&x)?;
    /// assert_eq!((x.to_vec::<f32>()?, x.version()), (vec![2.0, 2.0], 2));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn add_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith_inplace(self, other.into(), Scalar::Int(1), Arith::Add)
    }
    /// In-place `self += alpha * other`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.add_alpha_(&x.copy()?, -0.5)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.5, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn add_alpha_(
        &self,
        other: impl Into<Operand>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        arith_inplace(self, other.into(), alpha.into(), Arith::Add)
    }
    /// In-place `sub`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.sub_(1.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sub_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith_inplace(self, other.into(), Scalar::Int(1), Arith::Sub)
    }
    /// In-place `self -= alpha * other`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.sub_alpha_(&x.copy()?, 0.5)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.5, 0.5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sub_alpha_(
        &self,
        other: impl Into<Operand>,
        alpha: impl Into<Scalar>,
    ) -> Result<Tensor> {
        arith_inplace(self, other.into(), alpha.into(), Arith::Sub)
    }
    /// In-place `mul`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.mul_(3.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![3.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn mul_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith_inplace(self, other.into(), Scalar::Int(1), Arith::Mul)
    }
    /// In-place true division (an integer `self` is refused: the result would be float).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// x.div_(4.0)?;
    /// assert_eq!(x.to_vec::<f32>()?, vec![0.25, 0.25]);
    /// assert!(Tensor::ones(&[1], DType::I64)?.div_(2).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn div_(&self, other: impl Into<Operand>) -> Result<Tensor> {
        arith_inplace(self, other.into(), Scalar::Int(1), Arith::Div)
    }
    /// The complex conjugate for complex dtypes (a no-op handle otherwise); recorded
    /// (`ConjBackward0`: the gradient is conjugated back) so complex formulas stay
    /// differentiable.
    pub(crate) fn conj_if_complex(&self) -> Result<Tensor> {
        let out = match self.dtype() {
            DType::C64 => crate::ops::elementwise::map::unary_map::<
                crate::dtype::C64,
                crate::dtype::C64,
            >(self, |z| z.conj())?,
            DType::C128 => crate::ops::elementwise::map::unary_map::<
                crate::dtype::C128,
                crate::dtype::C128,
            >(self, |z| z.conj())?,
            _ => return Ok(self.clone()),
        };
        record(&[&out], &[self], Vec::new, ConjBackward)?;
        Ok(out)
    }
}
