//! `interpolate` (`torch.nn.functional.interpolate`) in the modes `nearest` (1-, 2- and 3-d)
//! and `linear` / `bilinear` / `trilinear`, with and without `align_corners`, from `size` or
//! `scale_factor` (with `recompute_scale_factor`). Each output position reads one input
//! position (nearest) or the `2^d` corners around its source point with the products of the
//! per-dim linear weights: a weighted plan whose gather is the forward and whose scatter is
//! the backward. The per-dim indices and weights follow PyTorch's `nearest_idx`,
//! `area_pixel_compute_source_index` and `guard_index_and_lambda`, computed in the op's
//! compute type (f32 for f16 / bf16 / f32, f64 for f64) so they round as PyTorch's do.

use super::{Plan, gather};
use crate::backend::PlaneMap;
use crate::{DType, Result, Spatial, Tensor, bail};
use std::sync::Arc;

/// The `mode` of [`Tensor::interpolate`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum InterpolateMode {
    /// The input element at `floor(dst * in / out)` (PyTorch's `"nearest"`).
    #[default]
    Nearest,
    /// Linear interpolation along the one spatial dim of a 3-d input.
    Linear,
    /// Bilinear interpolation over the two spatial dims of a 4-d input.
    Bilinear,
    /// Trilinear interpolation over the three spatial dims of a 5-d input.
    Trilinear,
}

impl InterpolateMode {
    fn name(self) -> &'static str {
        match self {
            InterpolateMode::Nearest => "nearest",
            InterpolateMode::Linear => "linear",
            InterpolateMode::Bilinear => "bilinear",
            InterpolateMode::Trilinear => "trilinear",
        }
    }
}

/// The arguments of [`Tensor::interpolate`] (PyTorch's keywords; exactly one of `size` and
/// `scale_factor`, each one value for every spatial dim or one per dim). `size` takes any
/// integer type, one value or a list (`Some(3.into())`, `Some([3usize, 4].into())`, or the
/// setter [`InterpolateOptions::size`]).
#[derive(Clone, Debug, Default)]
pub struct InterpolateOptions<'a> {
    /// Output spatial size (a size below 1 is refused, PyTorch's message).
    pub size: Option<Spatial>,
    /// Multiplier of the spatial size (output `floor(in * scale)`).
    pub scale_factor: Option<&'a [f64]>,
    /// Interpolation mode.
    pub mode: InterpolateMode,
    /// Align the corner pixels' centres (linear modes only; default false).
    pub align_corners: Option<bool>,
    /// Compute the output size from `scale_factor`, then interpolate as if `size` had been
    /// given (the scale used is `in / out`, not `1 / scale_factor`).
    pub recompute_scale_factor: Option<bool>,
}

impl InterpolateOptions<'_> {
    /// Builder setter of `size`: one integer of any type or a list
    /// ([`IntoGeometry`](crate::IntoGeometry)).
    pub fn size(mut self, size: impl crate::IntoGeometry) -> Self {
        self.size = Some(size.into());
        self
    }
}

/// Per-dim source positions and weights, in the compute type `$f`.
macro_rules! axis_fns {
    ($nearest:ident, $linear:ident, $f:ty) => {
        /// `nearest_idx`: the input position of every output position.
        fn $nearest(n_in: usize, n_out: usize, scale: Option<f64>) -> Vec<(usize, f64)> {
            (0..n_out)
                .map(|o| {
                    let i = if n_out == n_in {
                        o
                    } else if n_out == 2 * n_in {
                        o >> 1
                    } else {
                        // PyTorch computes this scale in float whatever the dtype
                        let s = match scale {
                            Some(s) if s > 0.0 => (1.0 / s) as f32,
                            _ => n_in as f32 / n_out as f32,
                        };
                        ((o as f32 * s).floor() as usize).min(n_in - 1)
                    };
                    (i, 1.0)
                })
                .collect()
        }

        /// The two taps (`(i0, 1 - λ)`, `(i0 + offset, λ)`) of every output position.
        fn $linear(
            n_in: usize,
            n_out: usize,
            align: bool,
            scale: Option<f64>,
        ) -> Vec<[(usize, f64); 2]> {
            let s: $f = if align {
                if n_out > 1 {
                    (n_in - 1) as $f / (n_out - 1) as $f
                } else {
                    0.0
                }
            } else {
                match scale {
                    Some(s) if s > 0.0 => (1.0 / s) as $f,
                    _ => n_in as $f / n_out as $f,
                }
            };
            (0..n_out)
                .map(|o| {
                    let real: $f = if align {
                        s * o as $f
                    } else {
                        let r = s * (o as $f + 0.5) - 0.5;
                        if r < 0.0 { 0.0 } else { r }
                    };
                    let i0 = (real.floor() as usize).min(n_in - 1);
                    let lambda = (real - i0 as $f).clamp(0.0, 1.0);
                    let off = usize::from(i0 < n_in - 1);
                    [(i0, (1.0 - lambda) as f64), (i0 + off, lambda as f64)]
                })
                .collect()
        }
    };
}
axis_fns!(nearest_f32, linear_f32, f32);
axis_fns!(nearest_f64, linear_f64, f64);

fn names(mode: InterpolateMode, k: usize) -> (&'static str, &'static str) {
    match (mode, k) {
        (InterpolateMode::Nearest, 1) => (
            "UpsampleNearest1DBackward0",
            "UpsampleNearest1DBackwardBackward0",
        ),
        (InterpolateMode::Nearest, 2) => (
            "UpsampleNearest2DBackward0",
            "UpsampleNearest2DBackwardBackward0",
        ),
        (InterpolateMode::Nearest, _) => (
            "UpsampleNearest3DBackward0",
            "UpsampleNearest3DBackwardBackward0",
        ),
        (InterpolateMode::Linear, _) => (
            "UpsampleLinear1DBackward0",
            "UpsampleLinear1DBackwardBackward0",
        ),
        (InterpolateMode::Bilinear, _) => (
            "UpsampleBilinear2DBackward0",
            "UpsampleBilinear2DBackwardBackward0",
        ),
        (InterpolateMode::Trilinear, _) => (
            "UpsampleTrilinear3DBackward0",
            "UpsampleTrilinear3DBackwardBackward0",
        ),
    }
}

/// `"(D: 2, H: 3, W: 4)"`-style spatial sizes.
fn labelled(v: &[i64]) -> String {
    let letters = &["D", "H", "W"][3 - v.len()..];
    let parts: Vec<String> = letters
        .iter()
        .zip(v)
        .map(|(l, n)| format!("{l}: {n}"))
        .collect();
    format!("({})", parts.join(", "))
}

impl Tensor {
    /// `torch.nn.functional.interpolate(input, size, scale_factor, mode, align_corners,
    /// recompute_scale_factor)` for `[N, C, d1, .., dk]` inputs (`k` = 1, 2, 3): `nearest` for
    /// any `k`, `linear` for `k = 1`, `bilinear` for `k = 2`, `trilinear` for `k = 3`. Float
    /// inputs (and u8 for nearest), as in PyTorch. Errors (InvalidArgument unless said):
    /// both or neither of `size` / `scale_factor`, a count of sizes or factors other than 1 or
    /// `k`, `align_corners` with nearest, `recompute_scale_factor` with `size`, an empty input
    /// or output, a mode that does not fit the input's dims; an unsupported dtype
    /// (DTypeMismatch).
    ///
    /// ```
    /// # use tapegrad::{Tensor, InterpolateMode, InterpolateOptions};
    /// let x = Tensor::from_vec(vec![1.0f32, 3.0], &[1, 1, 2])?;
    /// let o = InterpolateOptions { scale_factor: Some(&[2.0]), mode: InterpolateMode::Linear, ..Default::default() };
    /// assert_eq!(x.interpolate(o)?.to_vec::<f32>()?, vec![1.0, 1.5, 2.5, 3.0]);
    /// let o = InterpolateOptions::default().size(3);
    /// assert_eq!(x.interpolate(o)?.to_vec::<f32>()?, vec![1.0, 1.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn interpolate(&self, o: InterpolateOptions<'_>) -> Result<Tensor> {
        let op = "interpolate";
        let mode = o.mode;
        let nearest = mode == InterpolateMode::Nearest;
        if nearest && o.align_corners.is_some() {
            bail!(
                InvalidArgument,
                op,
                "align_corners option can only be set with the interpolating modes: linear | bilinear | bicubic | trilinear"
            );
        }
        let align = o.align_corners.unwrap_or(false);
        let sh = self.shape();
        let nd = sh.len();
        let k = nd.saturating_sub(2);
        let spatial = &sh[2.min(nd)..];
        let per_dim = |n: usize| n == 1 || n == k;
        let (out, scales): (Vec<i64>, Option<Vec<f64>>) = match (&o.size, o.scale_factor) {
            (Some(_), Some(_)) => bail!(
                InvalidArgument,
                op,
                "only one of size or scale_factor should be defined"
            ),
            (None, None) => bail!(
                InvalidArgument,
                op,
                "either size or scale_factor should be defined"
            ),
            (Some(s), None) => {
                let s = &s.0;
                if !per_dim(s.len()) {
                    bail!(
                        InvalidArgument,
                        op,
                        "Input and output must have the same number of spatial dimensions, but got input with spatial dimensions of {:?} and output size of {:?}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and output size in (o1, o2, ...,oK) format.",
                        spatial,
                        s
                    );
                }
                if o.recompute_scale_factor == Some(true) {
                    bail!(
                        InvalidArgument,
                        op,
                        "recompute_scale_factor is not meaningful with an explicit size."
                    );
                }
                ((0..k).map(|d| s[d.min(s.len() - 1)]).collect(), None)
            }
            (None, Some(f)) => {
                if !per_dim(f.len()) {
                    bail!(
                        InvalidArgument,
                        op,
                        "Input and scale_factor must have the same number of spatial dimensions, but got input with spatial dimensions of {:?} and scale_factor of {:?}. Please provide input tensor in (N, C, d1, d2, ...,dK) format and scale_factor in (s1, s2, ...,sK) format.",
                        spatial,
                        f
                    );
                }
                let f: Vec<f64> = (0..k).map(|d| f[d.min(f.len() - 1)]).collect();
                let out = spatial
                    .iter()
                    .zip(&f)
                    .map(|(&n, &s)| (n as f64 * s).floor().max(0.0) as i64)
                    .collect();
                let keep = o.recompute_scale_factor != Some(true);
                (out, keep.then_some(f))
            }
        };
        let fits = match mode {
            InterpolateMode::Nearest => (1..=3).contains(&k),
            InterpolateMode::Linear => k == 1,
            InterpolateMode::Bilinear => k == 2,
            InterpolateMode::Trilinear => k == 3,
        };
        if !fits {
            if (1..=3).contains(&k) {
                bail!(
                    InvalidArgument,
                    op,
                    "Got {}D input, but {} mode needs {}D input",
                    nd,
                    mode.name(),
                    match mode {
                        InterpolateMode::Linear => 3,
                        InterpolateMode::Bilinear => 4,
                        _ => 5,
                    }
                );
            }
            bail!(
                InvalidArgument,
                op,
                "Input Error: Only 3D, 4D and 5D input Tensors supported (got {}D) for the modes: nearest | linear | bilinear | bicubic | trilinear | area | nearest-exact (got {})",
                nd,
                mode.name()
            );
        }
        let dt = self.dtype();
        if !(dt.is_float() || (nearest && dt == DType::U8)) {
            let kernel = match mode {
                InterpolateMode::Nearest => format!("upsample_nearest{k}d"),
                InterpolateMode::Linear => "upsample_linear1d".to_string(),
                InterpolateMode::Bilinear => "upsample_bilinear2d".to_string(),
                InterpolateMode::Trilinear => "upsample_trilinear3d".to_string(),
            };
            bail!(
                DTypeMismatch,
                op,
                "\"{}\" not implemented for '{}'",
                kernel,
                dt.torch_scalar_name()
            );
        }
        if sh[1..].contains(&0) {
            bail!(
                InvalidArgument,
                op,
                "Non-empty {}D data tensor expected but got a tensor with sizes {:?}",
                nd,
                sh
            );
        }
        if out.iter().any(|&n| n <= 0) {
            let ins: Vec<i64> = spatial.iter().map(|&n| n as i64).collect();
            bail!(
                InvalidArgument,
                op,
                "Input and output sizes should be greater than 0, but got input {} output {}",
                labelled(&ins),
                labelled(&out)
            );
        }
        // every size checked positive above
        let out: Vec<usize> = out.iter().map(|&n| n as usize).collect();
        let wide = dt == DType::F64;
        let scale = |d: usize| scales.as_ref().map(|s| s[d]);
        // per dim: taps of every output position
        let axes: Vec<Vec<Vec<(usize, f64)>>> = (0..k)
            .map(|d| {
                let (n, m) = (spatial[d], out[d]);
                if nearest {
                    let v = if wide {
                        nearest_f64(n, m, scale(d))
                    } else {
                        nearest_f32(n, m, scale(d))
                    };
                    v.into_iter().map(|t| vec![t]).collect()
                } else {
                    let v = if wide {
                        linear_f64(n, m, align, scale(d))
                    } else {
                        linear_f32(n, m, align, scale(d))
                    };
                    v.into_iter().map(|t| t.to_vec()).collect()
                }
            })
            .collect();
        // the product grid: taps multiply across dims, weights too
        let mut pos: Vec<Vec<(usize, f64)>> = vec![vec![(0, 1.0)]];
        for (axis, &n) in axes.iter().zip(spatial) {
            let mut next = Vec::with_capacity(pos.len() * axis.len());
            for p in &pos {
                for taps in axis {
                    next.push(
                        p.iter()
                            .flat_map(|&(base, w)| {
                                taps.iter().map(move |&(i, wi)| (base * n + i, w * wi))
                            })
                            .collect(),
                    );
                }
            }
            pos = next;
        }
        let taps = pos.first().map_or(1, Vec::len);
        let src = pos.iter().flat_map(|p| p.iter().map(|t| t.0)).collect();
        let weight = (!nearest).then(|| pos.iter().flat_map(|p| p.iter().map(|t| t.1)).collect());
        let mut out_shape = sh[..2].to_vec();
        out_shape.extend(&out);
        let (gather_name, scatter_name) = names(mode, k);
        let plan = Plan {
            map: PlaneMap {
                planes: sh[0] * sh[1],
                in_plane: spatial.iter().product(),
                out_plane: out.iter().product(),
                taps,
                src,
                weight,
            },
            in_shape: sh.clone(),
            out_shape,
            gather_name,
            scatter_name,
        };
        gather(self, &Arc::new(plan), 0.0)
    }
}
