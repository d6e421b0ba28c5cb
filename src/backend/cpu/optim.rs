//! Fused optimizer steps ([`OptimStep`]): one pass over a parameter, its gradient and its state
//! buffers (contiguous, one float dtype), computing in f64 and rounding each stored value back,
//! as PyTorch's single-tensor (foreach=False) code does per element.

use crate::backend::OptimStep;
use crate::storage::CpuBuffer;
use crate::{DType, Element};

/// A real float the fused kernels store (f32 or f64), computed in f64.
trait Real: Element + Copy {
    fn f(v: f64) -> Self;
    fn v(self) -> f64;
}
impl Real for f32 {
    fn f(v: f64) -> Self {
        v as f32
    }
    fn v(self) -> f64 {
        self as f64
    }
}
impl Real for f64 {
    fn f(v: f64) -> Self {
        v
    }
    fn v(self) -> f64 {
        self
    }
}

/// See [`Backend::optim_step`](crate::backend::Backend::optim_step).
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
            first,
        } => sgd(
            &mut slices,
            lr,
            momentum,
            dampening,
            weight_decay,
            nesterov,
            first,
        ),
        OptimStep::Adam { .. } => adam(&mut slices, step),
    }
}

fn sgd<T: Real>(
    s: &mut [&mut [T]],
    lr: f64,
    mom: f64,
    damp: f64,
    wd: f64,
    nesterov: bool,
    first: bool,
) {
    let (head, rest) = s.split_at_mut(2);
    let (p, g) = head.split_at_mut(1);
    let (p, g) = (&mut *p[0], &*g[0]);
    let mut buf = rest.first_mut();
    for i in 0..p.len() {
        let pv = p[i].v();
        let mut d = g[i].v();
        if wd != 0.0 {
            d += wd * pv;
        }
        if let Some(b) = buf.as_mut() {
            let nb = if first {
                d
            } else {
                mom * b[i].v() + (1.0 - damp) * d
            };
            b[i] = T::f(nb);
            d = if nesterov { d + mom * nb } else { nb };
        }
        p[i] = T::f(pv - lr * d);
    }
}

fn adam<T: Real>(s: &mut [&mut [T]], step: OptimStep) {
    let OptimStep::Adam {
        lr,
        beta1: b1,
        beta2: b2,
        eps,
        weight_decay,
        decoupled,
        step: t,
    } = step
    else {
        unreachable!("internal: adam kernel on {:?}", step)
    };
    let bc1 = 1.0 - b1.powi(t as i32);
    let bc2_sqrt = (1.0 - b2.powi(t as i32)).sqrt();
    let step_size = lr / bc1;
    let (head, rest) = s.split_at_mut(2);
    let (p, g) = head.split_at_mut(1);
    let (p, g) = (&mut *p[0], &*g[0]);
    let (m, rest) = rest.split_at_mut(1);
    let (v, rest) = rest.split_at_mut(1);
    let (m, v) = (&mut *m[0], &mut *v[0]);
    let mut vmax = rest.first_mut();
    for i in 0..p.len() {
        let mut pv = p[i].v();
        let mut gv = g[i].v();
        if weight_decay != 0.0 {
            if decoupled {
                pv *= 1.0 - lr * weight_decay;
            } else {
                gv += weight_decay * pv;
            }
        }
        let mv = m[i].v() + (1.0 - b1) * (gv - m[i].v());
        let vv = b2 * v[i].v() + (1.0 - b2) * gv * gv;
        m[i] = T::f(mv);
        v[i] = T::f(vv);
        let denom_v = match vmax.as_mut() {
            Some(vm) => {
                let x = vm[i].v().max(vv);
                vm[i] = T::f(x);
                x
            }
            None => vv,
        };
        let denom = denom_v.sqrt() / bc2_sqrt + eps;
        p[i] = T::f(pv - step_size * mv / denom);
    }
}
