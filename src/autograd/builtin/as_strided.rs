//! Moving gradients between strided geometries of one storage: `AsStridedBackward0` (the
//! backward of every view op whose geometry is not a plain reshape/permute, and of a view's
//! regenerated history), the multi-output view backward, and [`scatter_geometry`], their
//! differentiable scatter (recorded when building a higher-order graph: its adjoint is the same
//! scatter with the geometries swapped).

use crate::autograd::node::{Backward, BackwardCtx, Grads, Node, output_grad, output_meta};
use crate::autograd::view::{gradient_edge, record};
use crate::layout::Layout;
use crate::tensor::TensorData;
use crate::{Result, Tensor};
use smallvec::smallvec;

/// Gradient of a strided view w.r.t. the tensor it was taken from: scatter-add `grad` (view
/// geometry) into zeros of the input geometry (PyTorch's `as_strided_backward`). Used by every
/// view op whose geometry is not a plain reshape/permute, and by view regeneration.
pub(crate) struct AsStridedBackward {
    pub(crate) name: &'static str,
    pub(crate) base: Layout,
    pub(crate) view: Layout,
}

impl Backward for AsStridedBackward {
    fn name(&self) -> &'static str {
        self.name
    }
    fn apply(&self, _ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        let g = output_grad(grads);
        let gi = scatter_geometry(&[(&g, &self.view)], &self.base)?;
        Ok(smallvec![Some(gi)])
    }
}

/// Multi-output view backward (unbind/split/chunk): sums the scatters of every output's grad.
pub(crate) struct MultiViewBackward {
    pub(crate) name: &'static str,
    pub(crate) base: Layout,
    pub(crate) views: Vec<Layout>,
}

impl Backward for MultiViewBackward {
    fn name(&self) -> &'static str {
        self.name
    }
    fn apply(&self, _ctx: &BackwardCtx<'_>, grads: Grads) -> Result<Grads> {
        let parts: Vec<(&Tensor, &Layout)> = grads
            .iter()
            .zip(&self.views)
            .filter_map(|(g, l)| g.as_ref().map(|g| (g, l)))
            .collect();
        if parts.is_empty() {
            return Ok(smallvec::smallvec![None]);
        }
        let gi = scatter_geometry(&parts, &self.base)?;
        Ok(smallvec![Some(gi)])
    }
}

/// Replaces a view's grad_fn by `AsStridedBackward0` on its base's current history (the lazy
/// regeneration after its base or a sibling view was written in place).
pub(crate) fn regenerate(t: &Tensor) -> Result<()> {
    let (base, _) = t.view_info().expect("internal: regenerate on a non-view");
    let edge = gradient_edge(&base)?;
    let version = t.version();
    let node = edge.map(|e| {
        let bw = AsStridedBackward {
            name: "AsStridedBackward0",
            base: base.layout(),
            view: t.layout(),
        };
        Node::new(bw, smallvec![Some(e)], vec![], smallvec![output_meta(t)])
    });
    t.0.meta.lock().set_history(node, 0, version);
    Ok(())
}

/// [`scatter_to_geometry`] that records its own backward when grad mode is on and a part
/// requires grad (double backward through views, CopySlices and view regeneration).
pub(crate) fn scatter_geometry(parts: &[(&Tensor, &Layout)], base: &Layout) -> Result<Tensor> {
    let out = {
        let _g = crate::autograd::no_grad();
        scatter_to_geometry(parts, base)?
    };
    let inputs: Vec<&Tensor> = parts.iter().map(|p| p.0).collect();
    record(
        &[&out],
        &inputs,
        Vec::new,
        ScatterGeometryBackward {
            base: base.clone(),
            views: parts.iter().map(|p| p.1.clone()).collect(),
        },
    )?;
    Ok(out)
}

/// Backward of [`scatter_geometry`]: part `k` gets `grad` (base geometry) scattered into storage
/// positions and read back with view `k`'s geometry, i.e. the same scatter with roles swapped.
struct ScatterGeometryBackward {
    base: Layout,
    views: Vec<Layout>,
}

impl Backward for ScatterGeometryBackward {
    fn name(&self) -> &'static str {
        "AsStridedScatterBackward0"
    }
    fn apply(&self, ctx: &BackwardCtx<'_>, g: Grads) -> Result<Grads> {
        let g = output_grad(g);
        self.views
            .iter()
            .enumerate()
            .map(|(k, v)| {
                if ctx.needs(k) {
                    scatter_geometry(&[(&g, &self.base)], v).map(Some)
                } else {
                    Ok(None)
                }
            })
            .collect()
    }
}

/// Gradient w.r.t. a tensor of geometry `base` given gradients of views of it (`(grad, view
/// geometry)`): every grad element is added at its storage position, then the base geometry
/// reads the result. Positions outside every view get 0; overlapping views accumulate. When the
/// base geometry itself overlaps (an expanded base), each storage sum is split evenly among the
/// base elements that alias it (PyTorch's `as_strided_backward`), so a later expand backward
/// does not count it once per alias.
fn scatter_to_geometry(parts: &[(&Tensor, &Layout)], base: &Layout) -> Result<Tensor> {
    let dtype = parts[0].0.dtype();
    if base.numel() == 0 {
        // nothing to read back (an empty base may even report overlap through a stride 0,
        // while its span is 0: libFuzzer interp/views finding)
        return Tensor::zeros(base.sizes(), dtype);
    }
    let lo = parts
        .iter()
        .map(|(_, l)| l.offset())
        .chain([base.offset()])
        .min()
        .unwrap_or(0);
    let hi = parts
        .iter()
        .map(|(_, l)| l.storage_span())
        .chain([base.storage_span()])
        .max()
        .unwrap_or(0);
    let span = hi.saturating_sub(lo);
    let flat = Tensor::zeros(&[span], dtype)?;
    let fd = flat.data();
    for (g, l) in parts {
        let gd = g.data();
        let target = TensorData {
            storage: fd.storage.clone(),
            layout: Layout::new(l.sizes(), l.strides(), l.offset() - lo),
        };
        // (the target geometry lies inside `flat`: span computed above; grads are fresh
        // tensors that do not alias `flat`)
        crate::backend::accumulate(&target, dtype, &gd, g.dtype());
    }
    let fd = if base.has_internal_overlap() {
        let mut count = vec![0.0f64; span];
        for o in base.offsets() {
            count[o - lo] += 1.0;
        }
        let _g = crate::autograd::no_grad();
        let c = Tensor::from_vec(count.into_iter().map(|c| c.max(1.0)).collect(), &[span])?;
        flat.div(&c.to_dtype(dtype)?)?.to_dtype(dtype)?.data()
    } else {
        fd
    };
    let src = TensorData {
        storage: fd.storage.clone(),
        layout: Layout::new(base.sizes(), base.strides(), base.offset() - lo),
    };
    let out = Tensor::zeros(base.sizes(), dtype)?;
    crate::backend::copy_raw(&out.data(), &src, dtype, dtype);
    Ok(out)
}
