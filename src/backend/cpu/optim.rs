//! Fused optimizer steps ([`OptimStep`]): one pass over a parameter, its gradient and its state
//! buffers (contiguous, one float dtype). SGD rounds as PyTorch's CPU ops do in the parameter's
//! dtype (each `add(.., alpha)` a fused multiply-add with `alpha` rounded to the dtype), so its
//! f32 and f64 steps are bit-identical to `torch.optim.SGD`; Adam/AdamW follow PyTorch's op
//! order the same way, with a correctly rounded `sqrt` (PyTorch's CPU `sqrt` is not, so an
//! element can differ in the last place where it rounds differently).

use super::Cpu;
use crate::backend::OptimKernels;
use crate::backend::OptimStep;
use crate::storage::CpuBuffer;
use crate::{DType, Element};

/// A real float the fused kernels store (f32 or f64), with the arithmetic PyTorch's CPU kernels
/// use in that dtype.
trait Real:
    Element
    + Copy
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
    + std::ops::Add<Output = Self>
    + std::ops::Neg<Output = Self>
{
    fn f(v: f64) -> Self;
    /// `self * a + b` rounded once (PyTorch's `add(b, self, alpha=a)` on CPU).
    fn fma(self, a: Self, b: Self) -> Self;
    fn sqrt(self) -> Self;
    /// PyTorch's CPU `lerp`: `a + w (b - a)` for `|w| < 0.5`, else `b - (b - a)(1 - w)`,
    /// each a fused multiply-add.
    fn lerp(a: Self, b: Self, w: Self) -> Self;
    /// `torch.maximum`: NaN wins.
    fn max_nan(a: Self, b: Self) -> Self;
}

/// The same bodies for both float types (only the conversion differs).
macro_rules! impl_real {
    ($($t:ident),*) => {$(
        impl Real for $t {
            fn f(v: f64) -> Self {
                v as $t
            }
            fn fma(self, a: Self, b: Self) -> Self {
                self.mul_add(a, b)
            }
            fn sqrt(self) -> Self {
                $t::sqrt(self)
            }
            fn lerp(a: Self, b: Self, w: Self) -> Self {
                let d = b - a;
                if w.abs() < 0.5 {
                    w.mul_add(d, a)
                } else {
                    (-d).mul_add(1.0 - w, b)
                }
            }
            fn max_nan(a: Self, b: Self) -> Self {
                if a.is_nan() || b.is_nan() {
                    $t::NAN
                } else {
                    a.max(b)
                }
            }
        }
    )*};
}
impl_real!(f32, f64);

/// See [`OptimKernels::optim_step`].
pub(super) fn optim_step(
    bufs: &mut [&mut CpuBuffer],
    parts: &[(usize, usize)],
    dt: DType,
    step: OptimStep,
) -> bool {
    match dt {
        DType::F32 => run::<f32>(bufs, parts, step),
        DType::F64 => run::<f64>(bufs, parts, step),
        _ => return false,
    }
    true
}

fn run<T: Real>(bufs: &mut [&mut CpuBuffer], parts: &[(usize, usize)], step: OptimStep) {
    let mut slices: Vec<&mut [T]> = bufs
        .iter_mut()
        .zip(parts)
        .map(|(b, &(off, n))| {
            assert!(
                off.checked_add(n)
                    .and_then(|e| e.checked_mul(std::mem::size_of::<T>()))
                    .is_some_and(|e| e <= b.len()),
                "internal: optimizer range outside its buffer"
            );
            // SAFETY: [off, off + n) elements lie inside the buffer (asserted); buffers are
            // 16-byte aligned; each `&mut CpuBuffer` is exclusive and distinct, so the slices
            // do not alias; elements are plain old data.
            unsafe { std::slice::from_raw_parts_mut((b.as_mut_ptr() as *mut T).add(off), n) }
        })
        .collect();
    match step {
        OptimStep::Sgd {
            lr,
            momentum,
            dampening,
            weight_decay,
            nesterov,
            maximize,
            first,
        } => sgd(
            &mut slices,
            lr,
            momentum,
            dampening,
            weight_decay,
            (nesterov, maximize, first),
        ),
        OptimStep::Adam { .. } => adam(&mut slices, step),
    }
}

/// PyTorch's single-tensor SGD, op by op in `T`: `g = -g` (maximize); `g = g.add(p, alpha=wd)`;
/// `buf = g.clone()` on the first step, else `buf.mul_(momentum).add_(g, alpha=1 - dampening)`;
/// `g = g.add(buf, alpha=momentum)` (Nesterov) or `g = buf`; `p.add_(g, alpha=-lr)`.
fn sgd<T: Real>(
    s: &mut [&mut [T]],
    lr: f64,
    mom: f64,
    damp: f64,
    wd: f64,
    (nesterov, maximize, first): (bool, bool, bool),
) {
    let (head, rest) = s.split_at_mut(2);
    let (p, g) = head.split_at_mut(1);
    let (p, g) = (&mut *p[0], &*g[0]);
    let mut buf = rest.first_mut();
    let (neg_lr, mom_t, wd_t) = (T::f(-lr), T::f(mom), T::f(wd));
    let keep = T::f(1.0 - damp);
    for i in 0..p.len() {
        let pv = p[i];
        let mut d = if maximize { -g[i] } else { g[i] };
        if wd != 0.0 {
            d = pv.fma(wd_t, d);
        }
        if let Some(b) = buf.as_mut() {
            let nb = if first { d } else { d.fma(keep, b[i] * mom_t) };
            b[i] = nb;
            d = if nesterov { nb.fma(mom_t, d) } else { nb };
        }
        p[i] = d.fma(neg_lr, pv);
    }
}

/// PyTorch's single-tensor Adam/AdamW, op by op in `T` (scalars rounded to `T` first):
/// `g = -g` (maximize); `p.mul_(1 - lr*wd)` (AdamW) or `g = g.add(p, alpha=wd)`; `m.lerp_(g, 1 - beta1)`;
/// `v.mul_(beta2).addcmul_(g, g, value=1 - beta2)`; `vmax = max(vmax, v)` (AMSGrad);
/// `denom = (sqrt(v) / sqrt(1 - beta2^t)).add_(eps)`; `p.addcdiv_(m, denom, value=-lr/(1 - beta1^t))`.
/// `sqrt` is the correctly rounded one, where PyTorch's CPU `sqrt` is not always (see
/// grad_tests/optim_bitexact.rs): the only source of difference.
fn adam<T: Real>(s: &mut [&mut [T]], step: OptimStep) {
    let OptimStep::Adam {
        lr,
        beta1: b1,
        beta2: b2,
        eps,
        weight_decay,
        decoupled,
        maximize,
        step: t,
    } = step
    else {
        unreachable!("internal: adam kernel on {:?}", step)
    };
    // the bias corrections in f64 as Python computes them (`beta ** step`, `** 0.5`)
    let bc1 = 1.0 - b1.powf(t as f64);
    let bc2_sqrt = (1.0 - b2.powf(t as f64)).powf(0.5);
    let neg_step = T::f(-(lr / bc1));
    let (bc2_sqrt, eps_t) = (T::f(bc2_sqrt), T::f(eps));
    let decay = T::f(1.0 - lr * weight_decay);
    let wd = T::f(weight_decay);
    let w1 = T::f(1.0 - b1);
    let (b2_t, k2) = (T::f(b2), T::f(1.0 - b2));
    let (head, rest) = s.split_at_mut(2);
    let (p, g) = head.split_at_mut(1);
    let (p, g) = (&mut *p[0], &*g[0]);
    let (m, rest) = rest.split_at_mut(1);
    let (v, rest) = rest.split_at_mut(1);
    let (m, v) = (&mut *m[0], &mut *v[0]);
    let mut vmax = rest.first_mut();
    for i in 0..p.len() {
        let mut pv = p[i];
        let mut gv = if maximize { -g[i] } else { g[i] };
        if weight_decay != 0.0 {
            if decoupled {
                pv = pv * decay;
            } else {
                gv = pv.fma(wd, gv);
            }
        }
        let mv = T::lerp(m[i], gv, w1);
        let vv = (k2 * gv).fma(gv, v[i] * b2_t);
        m[i] = mv;
        v[i] = vv;
        let dv = match vmax.as_mut() {
            Some(vm) => {
                let x = T::max_nan(vm[i], vv);
                vm[i] = x;
                x
            }
            None => vv,
        };
        let denom = dv.sqrt() / bc2_sqrt + eps_t;
        p[i] = (neg_step * mv) / denom + pv;
    }
}

impl OptimKernels for Cpu {
    fn optim_step(
        bufs: &mut [&mut CpuBuffer],
        parts: &[(usize, usize)],
        dt: DType,
        step: OptimStep,
    ) -> bool {
        optim_step(bufs, parts, dt, step)
    }
}
