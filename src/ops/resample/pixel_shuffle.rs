//! `pixel_shuffle` and `pixel_unshuffle` (`torch.nn.functional.pixel_shuffle` /
//! `pixel_unshuffle`): the `r²` channels of each output channel become `r × r` sub-pixels
//! (`[*, C·r², H, W]` → `[*, C, H·r, W·r]`) and back. A permutation plan per output channel:
//! the gather is the forward, its scatter (the other shuffle) the backward.

use super::{Plan, gather};
use crate::backend::PlaneMap;
use crate::{Dim, Result, Tensor, bail};
use std::sync::Arc;

/// The plan of `pixel_shuffle` by `r` over planes of `[r², h, w]` → `[h·r, w·r]` (`shuffle`),
/// or of `pixel_unshuffle` over planes of `[h·r, w·r]` → `[r², h, w]`; `(h, w)` the small side.
fn plan(planes: usize, r: usize, (h, w): (usize, usize), shuffle: bool) -> PlaneMap {
    let n = r * r * h * w;
    let mut src = vec![0usize; n];
    for i in 0..r {
        for j in 0..r {
            for y in 0..h {
                for x in 0..w {
                    let small = ((i * r + j) * h + y) * w + x;
                    let big = (y * r + i) * (w * r) + x * r + j;
                    if shuffle {
                        src[big] = small;
                    } else {
                        src[small] = big;
                    }
                }
            }
        }
    }
    PlaneMap {
        planes,
        in_plane: n,
        out_plane: n,
        taps: 1,
        src,
        weight: None,
    }
}

impl Tensor {
    /// `torch.nn.functional.pixel_shuffle(input, upscale_factor)`: `[*, C·r², H, W]` →
    /// `[*, C, H·r, W·r]`, output `(c, y·r + i, x·r + j)` = input `(c·r² + i·r + j, y, x)`. Any
    /// dtype. Errors (InvalidArgument): fewer than 3 dims, `r = 0`, channels not divisible by
    /// `r²`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i64, 2, 3, 4], &[4, 1, 1])?;
    /// let y = x.pixel_shuffle(2)?;
    /// assert_eq!((y.shape(), y.to_vec::<i64>()?), (vec![1, 2, 2], vec![1, 2, 3, 4]));
    /// assert_eq!(y.pixel_unshuffle(2)?.to_vec::<i64>()?, vec![1, 2, 3, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pixel_shuffle(&self, upscale_factor: impl Dim) -> Result<Tensor> {
        let upscale_factor = crate::tensor::dims::dim(upscale_factor, "pixel_shuffle")?;
        let op = "pixel_shuffle";
        let sh = self.shape();
        let nd = sh.len();
        if nd < 3 {
            bail!(
                InvalidArgument,
                op,
                "pixel_shuffle expects input to have at least 3 dimensions, but got input with {} dimension(s)",
                nd
            );
        }
        if upscale_factor <= 0 {
            bail!(
                InvalidArgument,
                op,
                "pixel_shuffle expects a positive upscale_factor, but got {}",
                upscale_factor
            );
        }
        let r = upscale_factor as usize;
        let c = sh[nd - 3];
        if !c.is_multiple_of(r * r) {
            bail!(
                InvalidArgument,
                op,
                "pixel_shuffle expects its input's 'channel' dimension to be divisible by the square of upscale_factor, but input.size(-3)={} is not divisible by {}",
                c,
                r * r
            );
        }
        let (h, w) = (sh[nd - 2], sh[nd - 1]);
        let planes = sh[..nd - 3].iter().product::<usize>() * (c / (r * r));
        let mut out_shape = sh[..nd - 3].to_vec();
        out_shape.extend([c / (r * r), h * r, w * r]);
        let p = Plan {
            map: plan(planes, r, (h, w), true),
            in_shape: sh,
            out_shape,
            gather_name: "PixelShuffleBackward0",
            scatter_name: "PixelUnshuffleBackward0",
        };
        gather(self, &Arc::new(p), 0.0)
    }

    /// `torch.nn.functional.pixel_unshuffle(input, downscale_factor)`, the inverse of
    /// [`Tensor::pixel_shuffle`]: `[*, C, H·r, W·r]` → `[*, C·r², H, W]`. Errors
    /// (InvalidArgument): fewer than 3 dims, `r = 0`, height or width not divisible by `r`.
    pub fn pixel_unshuffle(&self, downscale_factor: impl Dim) -> Result<Tensor> {
        let downscale_factor = crate::tensor::dims::dim(downscale_factor, "pixel_unshuffle")?;
        let op = "pixel_unshuffle";
        let sh = self.shape();
        let nd = sh.len();
        if nd < 3 {
            bail!(
                InvalidArgument,
                op,
                "pixel_unshuffle expects input to have at least 3 dimensions, but got input with {} dimension(s)",
                nd
            );
        }
        if downscale_factor <= 0 {
            bail!(
                InvalidArgument,
                op,
                "pixel_unshuffle expects a positive downscale_factor, but got {}",
                downscale_factor
            );
        }
        let r = downscale_factor as usize;
        let (hr, wr) = (sh[nd - 2], sh[nd - 1]);
        if !hr.is_multiple_of(r) {
            bail!(
                InvalidArgument,
                op,
                "pixel_unshuffle expects height to be divisible by downscale_factor, but input.size(-2)={} is not divisible by {}",
                hr,
                r
            );
        }
        if !wr.is_multiple_of(r) {
            bail!(
                InvalidArgument,
                op,
                "pixel_unshuffle expects width to be divisible by downscale_factor, but input.size(-1)={} is not divisible by {}",
                wr,
                r
            );
        }
        let c = sh[nd - 3];
        let planes = sh[..nd - 3].iter().product::<usize>() * c;
        let mut out_shape = sh[..nd - 3].to_vec();
        out_shape.extend([c * r * r, hr / r, wr / r]);
        let p = Plan {
            map: plan(planes, r, (hr / r, wr / r), false),
            in_shape: sh,
            out_shape,
            gather_name: "PixelUnshuffleBackward0",
            scatter_name: "PixelShuffleBackward0",
        };
        gather(self, &Arc::new(p), 0.0)
    }
}
