//! Resampling, one file per concept: [`pad`] (`pad`: constant, reflect, replicate, circular),
//! [`fold`] (`unfold` = im2col, `fold` = col2im), [`interpolate`] (`interpolate`: nearest and
//! linear / bilinear / trilinear, with and without align_corners) and [`pixel_shuffle`]
//! (`pixel_shuffle`, `pixel_unshuffle`).
//!
//! Every one of them is a fixed position plan from input planes to output planes (a
//! [`PlaneMap`]: per output position the input positions it reads, with weights for the linear
//! modes), computed here once per call and run by the backend's `plane_gather`; its adjoint
//! `plane_scatter` is the backward, and the backward of that is the gather again, so every order
//! of derivative is exact. `fold` is the scatter of `unfold`'s plan.
//!
//! Derivative rules (`g` = output gradient, `P` the op's plan):
//! - gather ops (pad, unfold, interpolate, pixel_shuffle / pixel_unshuffle): `scatter_P(g)`
//!   (every input position receives the sum of `weight * g` over the outputs that read it)
//! - fold: `gather_P(g)` (= `unfold(g)`)
//! - and of those rules: the other one of the pair, `gather_P` ↔ `scatter_P`

mod fold;
mod interpolate;
mod pad;
mod pixel_shuffle;

pub use interpolate::{InterpolateMode, InterpolateOptions};
pub use pad::PadMode;

use crate::autograd::{no_grad, record};
use crate::backend::PlaneMap;
use crate::layout::Layout;
use crate::ops::grad::{backward, input_grad};
use crate::{Result, Tensor};
use std::sync::Arc;

/// A plan with the shapes on both sides and the node names of its two directions.
struct Plan {
    map: PlaneMap,
    /// Shape of the planes' side (`planes * in_plane` elements).
    in_shape: Vec<usize>,
    /// Shape of the gathered side (`planes * out_plane` elements).
    out_shape: Vec<usize>,
    /// Node name recorded by the gather.
    gather_name: &'static str,
    /// Node name recorded by the scatter.
    scatter_name: &'static str,
}

struct GatherBackward(Arc<Plan>);

backward!(GatherBackward, self.0.gather_name, |self, _, g: Tensor| {
    input_grad(scatter(&g, &self.0)?)
});

struct ScatterBackward(Arc<Plan>);

backward!(
    ScatterBackward,
    self.0.scatter_name,
    |self, _, g: Tensor| input_grad(gather(&g, &self.0, 0.0)?)
);

fn contiguous(x: &Tensor) -> Result<Tensor> {
    if x.is_contiguous() {
        Ok(x.clone())
    } else {
        x.contiguous()
    }
}

/// `plan` gathered from `x` (shape `plan.in_shape`), `fill` where an output reads nothing.
fn gather(x: &Tensor, plan: &Arc<Plan>, fill: f64) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        let xc = contiguous(x)?;
        let sh = &plan.out_shape;
        let out = Tensor::empty_strided(sh, Layout::contiguous(sh).strides(), x.dtype())?;
        crate::backend::resample::plane_gather(&out.data(), &xc.data(), &plan.map, fill, x.dtype());
        out
    };
    record(&[&out], &[x], Vec::new, GatherBackward(plan.clone()))?;
    Ok(out)
}

/// The adjoint of [`gather`] applied to `g` (shape `plan.out_shape`).
fn scatter(g: &Tensor, plan: &Arc<Plan>) -> Result<Tensor> {
    let out = {
        let _g = no_grad();
        let gc = contiguous(g)?;
        let out = Tensor::zeros(&plan.in_shape, g.dtype())?;
        crate::backend::resample::plane_scatter(&out.data(), &gc.data(), &plan.map, g.dtype());
        out
    };
    record(&[&out], &[g], Vec::new, ScatterBackward(plan.clone()))?;
    Ok(out)
}

/// The row-major positions of the grid whose dim `d` takes the positions `axes[d]` (each
/// `None` = outside the input) in planes of sizes `dims`: one entry per grid point, `NONE`
/// when any coordinate is outside.
fn grid(axes: &[Vec<Option<usize>>], dims: &[usize]) -> Vec<usize> {
    let mut out = vec![0usize];
    for (axis, &size) in axes.iter().zip(dims) {
        let mut next = Vec::with_capacity(out.len() * axis.len());
        for &base in &out {
            for &c in axis {
                next.push(match c {
                    Some(c) if base != PlaneMap::NONE => base * size + c,
                    _ => PlaneMap::NONE,
                });
            }
        }
        out = next;
    }
    out
}
