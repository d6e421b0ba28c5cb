//! The one-input drivers of the elementwise family: [`unary_map`] (a fresh output whose
//! strides follow the input's memory order) and [`unary_into`] (a given output, possibly the
//! input itself), and the dtype runners the op files build on: [`run`], [`run_fallback`] and
//! the macros `float_go!` (a float rule in its compute type; f16/bf16 through f32),
//! `float_go_fallback!` (a cheap rule with a per-element fallback) and `int_go!`. The loops
//! themselves are the backend's (`map1`, the dense fast paths of `ops::dense`).

use crate::layout::iter_output_strides;
use crate::ops::util::broadcast_strides;
use crate::{Element, Result, Tensor};

/// Computes `f(a)` elementwise into a fresh tensor laid out like `a`.
pub(crate) fn unary_map<T: Element, U: Element>(
    a: &Tensor,
    f: impl Fn(T) -> U + Sync,
) -> Result<Tensor> {
    a.check_strided("unary op")?;
    if let Some(r) = crate::ops::dense::unary::<T, U>(a, &f) {
        return r;
    }
    let shape = a.shape();
    let strides = {
        let ad = a.data();
        let sa = broadcast_strides(&ad.layout, &shape);
        iter_output_strides(&shape, &[&ad.layout], &[&sa])
    };
    let out = Tensor::empty_strided(&shape, &strides, U::DTYPE)?;
    unary_into::<T, U>(&out, a, f);
    Ok(out)
}

/// Writes `f(a)` into `out` (same shape); `out` may be `a` itself (exact overlap). Large operands
/// are split into element ranges processed on the rayon pool.
pub(crate) fn unary_into<T: Element, U: Element>(
    out: &Tensor,
    a: &Tensor,
    f: impl Fn(T) -> U + Sync,
) {
    if T::DTYPE == U::DTYPE && out.is_same(a) {
        // equal dtypes: T and U are one type, and the cast is the identity
        let g = |x: T| -> T { cast_same::<U, T>(f(x)) };
        if crate::ops::dense::unary_inplace::<T>(a, &g) {
            return;
        }
    }
    let (od, ad) = (out.data(), a.data());
    // when `out` aliases `a` it does so exactly, so each element is read before it is written
    crate::backend::map1::<T, U>(&od, &ad, &f);
}

/// `x` as `D` when `S` and `D` are the same type (checked by the caller through their dtypes).
fn cast_same<S: Element, D: Element>(x: S) -> D {
    crate::dtype::cast::<S, D>(x)
}

/// Runs a float kernel `$body` (in terms of `$x: $R`) on float tensor `$a`; f16/bf16 go through f32.
macro_rules! float_go {
    ($dt:expr, $a:expr, $out:expr, $R:ident, |$x:ident| $body:expr) => {
        $crate::match_dtype!($dt, float, (__S, $R) => {
            use $crate::dtype::FloatCompute;
            // inline(always): a closure left out of line runs the baseline copy of its body
            // (`mul_add` as a libm call, no vectors) inside the AVX2/AVX-512 loops of
            // `backend::map1`; softplus (exp + log1p) and the trig lanes measured 10-30x slower
            $crate::ops::elementwise::map::run::<__S>($a, $out, #[inline(always)] move |v: __S| {
                let $x: $R = v.widen();
                <__S as FloatCompute>::narrow($body)
            })
        })
    };
}
pub(crate) use float_go;

/// [`float_go!`] for an element rule `$full` with a cheap form `$fast` returning `(value,
/// large)` (bit for bit `$full` where `large` is false): a fresh dense output goes through
/// the backend's chunk kernel (`flat_map1_fallback`), every other case evaluates `$full`.
macro_rules! float_go_fallback {
    ($dt:expr, $a:expr, $out:expr, $R:ident, |$x:ident| $fast:expr, $full:expr) => {
        $crate::match_dtype!($dt, float, (__S, $R) => {
            use $crate::dtype::FloatCompute;
            $crate::ops::elementwise::map::run_fallback::<__S>(
                $a,
                $out,
                #[inline(always)]
                move |v: __S| {
                    let $x: $R = v.widen();
                    let (r, large) = $fast;
                    (<__S as FloatCompute>::narrow(r), large)
                },
                #[inline(always)]
                move |v: __S| {
                    let $x: $R = v.widen();
                    <__S as FloatCompute>::narrow($full)
                },
            )
        })
    };
}
pub(crate) use float_go_fallback;

/// [`run`] of `full`, through `crate::ops::dense::unary_fallback` (`fast` chunk by chunk) for
/// a fresh output of a dense input.
pub(crate) fn run_fallback<T: Element>(
    a: &Tensor,
    out: Option<&Tensor>,
    fast: impl Fn(T) -> (T, bool) + Sync,
    full: impl Fn(T) -> T + Sync,
) -> Result<Tensor> {
    if out.is_none() {
        a.check_strided("unary op")?;
        if let Some(r) = crate::ops::dense::unary_fallback::<T, T>(a, &fast, &full) {
            return r;
        }
    }
    run::<T>(a, out, full)
}

/// Runs an integer kernel: `$body` on signed integers, `$u` on u8 and `$b` on bool.
macro_rules! int_go {
    ($dt:expr, $a:expr, $out:expr, |$x:ident| $body:expr, bool $b:expr, u8 $u:expr) => {{
        match $dt {
            $crate::DType::U8 => $crate::ops::elementwise::map::run::<u8>($a, $out, |$x: u8| $u),
            $crate::DType::Bool => {
                $crate::ops::elementwise::map::run::<bool>($a, $out, |$x: bool| $b)
            }
            d => $crate::match_dtype!(d, signed, __I => {
                $crate::ops::elementwise::map::run::<__I>($a, $out, |$x: __I| $body)
            }),
        }
    }};
}
pub(crate) use int_go;

pub(crate) fn run<T: Element>(
    a: &Tensor,
    out: Option<&Tensor>,
    f: impl Fn(T) -> T + Sync,
) -> Result<Tensor> {
    match out {
        Some(o) => {
            unary_into::<T, T>(o, a, f);
            Ok(o.clone())
        }
        None => unary_map::<T, T>(a, f),
    }
}
