//! `unfold` (`torch.nn.functional.unfold`, im2col) and `fold` (`torch.nn.functional.fold`,
//! col2im): `unfold` gathers every sliding `kh × kw` block of each channel plane into a column
//! (`[N, C, H, W]` → `[N, C·kh·kw, L]`, zero where a block covers the padding); `fold` is the
//! scatter of the same plan (overlapping block entries add up). Each is the other's backward.

use super::{Plan, gather, scatter};
use crate::backend::PlaneMap;
use crate::tensor::dims::geometry;
use crate::{DType, IntoGeometry, Result, Tensor, bail};
use std::sync::Arc;

/// Kernel size, dilation, padding and stride, one value per spatial dim.
struct Blocks {
    k: [usize; 2],
    dil: [usize; 2],
    pad: [usize; 2],
    stride: [usize; 2],
}

fn pair(v: &[i64], what: &str, op: &'static str) -> Result<[i64; 2]> {
    match v {
        [a] => Ok([*a, *a]),
        [a, b] => Ok([*a, *b]),
        _ => bail!(
            InvalidArgument,
            op,
            "It is expected {} equals to 2, but got size {}",
            what,
            v.len()
        ),
    }
}

impl Blocks {
    /// The checked geometry (PyTorch's `im2col_shape_check` order and messages).
    fn new(
        (kernel, dilation, padding, stride): (
            impl IntoGeometry,
            impl IntoGeometry,
            impl IntoGeometry,
            impl IntoGeometry,
        ),
        op: &'static str,
    ) -> Result<Blocks> {
        let k = pair(&geometry(kernel, op)?, "kernel_size", op)?;
        let dil = pair(&geometry(dilation, op)?, "dilation", op)?;
        let pad = pair(&geometry(padding, op)?, "padding", op)?;
        let stride = pair(&geometry(stride, op)?, "stride", op)?;
        if k.iter().any(|&a| a <= 0) {
            bail!(
                InvalidArgument,
                op,
                "kernel size should be greater than zero, but got kernel_height: {} kernel_width: {}",
                k[0],
                k[1]
            );
        }
        if dil.iter().any(|&a| a <= 0) {
            bail!(
                InvalidArgument,
                op,
                "dilation should be greater than zero, but got dilation_height: {} dilation_width: {}",
                dil[0],
                dil[1]
            );
        }
        if pad.iter().any(|&a| a < 0) {
            bail!(
                InvalidArgument,
                op,
                "padding should be non-negative, but got pad_height: {} pad_width: {}",
                pad[0],
                pad[1]
            );
        }
        if stride.iter().any(|&a| a <= 0) {
            bail!(
                InvalidArgument,
                op,
                "stride should be greater than zero, but got stride_height: {} stride_width: {}",
                stride[0],
                stride[1]
            );
        }
        // every value checked positive (non-negative for the padding) above
        let u = |v: [i64; 2]| v.map(|a| a as usize);
        Ok(Blocks {
            k: u(k),
            dil: u(dil),
            pad: u(pad),
            stride: u(stride),
        })
    }

    /// Number of blocks along dim `d` of a plane of `size` (may be below 1).
    fn count(&self, d: usize, size: i64) -> i64 {
        (size + 2 * self.pad[d] as i64 - (self.dil[d] * (self.k[d] - 1)) as i64 - 1)
            .div_euclid(self.stride[d] as i64)
            + 1
    }

    /// The im2col plan of `planes` planes of `[h, w]` with `[bh, bw]` blocks: output
    /// `(ki * kw + kj) * L + (by * bw + bx)` reads `(by * sh - ph + ki * dh, bx * sw - pw + kj * dw)`.
    fn plan(&self, planes: usize, (h, w): (usize, usize), (bh, bw): (usize, usize)) -> PlaneMap {
        let l = bh * bw;
        let mut src = Vec::with_capacity(self.k[0] * self.k[1] * l);
        let at = |d: usize, b: usize, k: usize, size: usize| {
            let i = (b * self.stride[d] + k * self.dil[d]) as i64 - self.pad[d] as i64;
            (0..size as i64).contains(&i).then_some(i as usize)
        };
        for ki in 0..self.k[0] {
            for kj in 0..self.k[1] {
                for by in 0..bh {
                    for bx in 0..bw {
                        src.push(match (at(0, by, ki, h), at(1, bx, kj, w)) {
                            (Some(r), Some(c)) => r * w + c,
                            _ => PlaneMap::NONE,
                        });
                    }
                }
            }
        }
        PlaneMap {
            planes,
            in_plane: h * w,
            out_plane: self.k[0] * self.k[1] * l,
            taps: 1,
            src,
            weight: None,
        }
    }
}

/// im2col / col2im are float, complex and bool kernels in PyTorch (not integers).
fn check_dtype(x: &Tensor, kernel: &str, op: &'static str) -> Result<()> {
    let dt = x.dtype();
    if !(dt.is_float() || dt.is_complex() || dt == DType::Bool) {
        bail!(
            DTypeMismatch,
            op,
            "\"{}\" not implemented for '{}'",
            kernel,
            dt.torch_scalar_name()
        );
    }
    Ok(())
}

impl Tensor {
    /// `torch.nn.functional.unfold(input, kernel_size, dilation, padding, stride)` (im2col):
    /// every sliding block of a `[N, C, H, W]` (or `[C, H, W]`) input as a column of the
    /// `[N, C·kh·kw, L]` (or `[C·kh·kw, L]`) output, `L` the number of blocks; each argument is
    /// one value or two.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec((0..9).map(|v| v as f32).collect(), &[1, 1, 3, 3])?;
    /// let cols = x.unfold_blocks(2, 1, 0, 1)?;
    /// assert_eq!(cols.shape(), vec![1, 4, 4]);
    /// assert_eq!(cols.to_vec::<f32>()?[..4], [0.0, 1.0, 3.0, 4.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn unfold_blocks(
        &self,
        kernel_size: impl IntoGeometry,
        dilation: impl IntoGeometry,
        padding: impl IntoGeometry,
        stride: impl IntoGeometry,
    ) -> Result<Tensor> {
        let op = "unfold";
        let b = Blocks::new((kernel_size, dilation, padding, stride), op)?;
        check_dtype(self, "im2col_out_cpu", op)?;
        let sh = self.shape();
        let nd = sh.len();
        if !(nd == 3 || nd == 4) || sh[nd - 3..].contains(&0) {
            bail!(
                InvalidArgument,
                op,
                "Expected 3D or 4D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
                sh
            );
        }
        let (h, w) = (sh[nd - 2], sh[nd - 1]);
        let (bh, bw) = (b.count(0, h as i64), b.count(1, w as i64));
        if bh < 1 || bw < 1 {
            bail!(
                InvalidArgument,
                op,
                "Given input with spatial size ({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), calculated shape of the array of sliding blocks as ({}, {}), but its components must be at least one.",
                h,
                w,
                b.k[0],
                b.k[1],
                b.dil[0],
                b.dil[1],
                b.pad[0],
                b.pad[1],
                bh,
                bw
            );
        }
        let (bh, bw) = (bh as usize, bw as usize);
        let map = b.plan(sh[..nd - 2].iter().product(), (h, w), (bh, bw));
        let mut out_shape = sh[..nd - 3].to_vec();
        out_shape.extend([sh[nd - 3] * b.k[0] * b.k[1], bh * bw]);
        let plan = Plan {
            map,
            in_shape: sh,
            out_shape,
            gather_name: "Im2ColBackward0",
            scatter_name: "Col2ImBackward0",
        };
        gather(self, &Arc::new(plan), 0.0)
    }

    /// `torch.nn.functional.fold(input, output_size, kernel_size, dilation, padding, stride)`
    /// (col2im): the columns of a `[N, C·kh·kw, L]` (or `[C·kh·kw, L]`) input summed back into
    /// `[N, C, H, W]` (or `[C, H, W]`) with `(H, W) = output_size`; the adjoint of
    /// [`Tensor::unfold_blocks`].
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::ones(&[1, 1, 3, 3], tapegrad::DType::F32)?;
    /// let cols = x.unfold_blocks(2, 1, 0, 1)?;
    /// let back = cols.fold([3, 3], 2, 1, 0, 1)?;
    /// // each position counted once per block covering it
    /// assert_eq!(back.to_vec::<f32>()?, vec![1.0, 2.0, 1.0, 2.0, 4.0, 2.0, 1.0, 2.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn fold(
        &self,
        output_size: impl IntoGeometry,
        kernel_size: impl IntoGeometry,
        dilation: impl IntoGeometry,
        padding: impl IntoGeometry,
        stride: impl IntoGeometry,
    ) -> Result<Tensor> {
        let op = "fold";
        let os = pair(&geometry(output_size, op)?, "output_size", op)?;
        let b = Blocks::new((kernel_size, dilation, padding, stride), op)?;
        check_dtype(self, "col2im_out_cpu", op)?;
        let sh = self.shape();
        let nd = sh.len();
        if !(nd == 2 || nd == 3) || sh[nd - 2..].contains(&0) {
            bail!(
                InvalidArgument,
                op,
                "Expected 2D or 3D (batch mode) tensor for input with possibly 0 batch size and non-zero dimensions for input, but got: {:?}",
                sh
            );
        }
        let kk = b.k[0] * b.k[1];
        if !sh[nd - 2].is_multiple_of(kk) {
            bail!(
                InvalidArgument,
                op,
                "Expected size of input's dimension {} to be divisible by the product of kernel_size, but got input.size({})={} and kernel_size=({}, {}).",
                nd - 2,
                nd - 2,
                sh[nd - 2],
                b.k[0],
                b.k[1]
            );
        }
        let (bh, bw) = (b.count(0, os[0]).max(0), b.count(1, os[1]).max(0));
        if (bh * bw) as usize != sh[nd - 1] {
            bail!(
                InvalidArgument,
                op,
                "Given output_size=({}, {}), kernel_size=({}, {}), dilation=({}, {}), padding=({}, {}), stride=({}, {}), expected size of input's dimension {} to match the calculated number of sliding blocks {} * {} = {}, but got input.size({})={}.",
                os[0],
                os[1],
                b.k[0],
                b.k[1],
                b.dil[0],
                b.dil[1],
                b.pad[0],
                b.pad[1],
                b.stride[0],
                b.stride[1],
                nd - 1,
                bh,
                bw,
                bh * bw,
                nd - 1,
                sh[nd - 1]
            );
        }
        // PyTorch checks this after the block count (a size below 1 can match it with padding)
        if os.iter().any(|&a| a < 1) {
            bail!(
                InvalidArgument,
                op,
                "Expected output spatial size to be positive, but got: output_size=({}, {}).",
                os[0],
                os[1]
            );
        }
        let os = os.map(|a| a as usize);
        let c = sh[nd - 2] / kk;
        let lead: usize = sh[..nd - 2].iter().product();
        let map = b.plan(lead * c, (os[0], os[1]), (bh as usize, bw as usize));
        let mut in_shape = sh[..nd - 2].to_vec();
        in_shape.extend([c, os[0], os[1]]);
        let plan = Plan {
            map,
            in_shape,
            out_shape: sh,
            gather_name: "Im2ColBackward0",
            scatter_name: "Col2ImBackward0",
        };
        scatter(self, &Arc::new(plan))
    }
}
