//! `max_unpool2d`: the partial inverse of max pooling, composed: every input value written to
//! its recorded plane position of a zero output (`scatter` over flattened planes, so the
//! gradient is the gather of `g` at those positions).

use super::{geo, per_dim, planes_of};
use crate::ops::nn::check_float;
use crate::{DType, IntoGeometry, Result, Tensor, bail};

impl Tensor {
    /// Max unpooling of a `[C, H, W]` or `[N, C, H, W]` input with the `indices` of
    /// [`Tensor::max_pool2d_with_indices`], as `torch.nn.functional.max_unpool2d(input, indices,
    /// kernel_size, stride, padding, output_size)`: the output plane is `output_size` (its last
    /// two sizes; `None` or `()`: absent) or `(in - 1) * stride - 2 * padding + kernel_size`
    /// per dim (an empty `stride`: the kernel size), zero except at the indexed positions.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1.0f32, 5.0, 2.0, 4.0], &[1, 1, 2, 2])?;
    /// let (y, i) = x.max_pool2d_with_indices(2, None, 0, 1, false)?;
    /// let u = y.max_unpool2d(&i, 2, None, 0, None)?;
    /// assert_eq!(u.to_vec::<f32>()?, vec![0.0, 5.0, 0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn max_unpool2d(
        &self,
        indices: &Tensor,
        kernel_size: impl IntoGeometry,
        stride: impl IntoGeometry,
        padding: impl IntoGeometry,
        output_size: impl IntoGeometry,
    ) -> Result<Tensor> {
        let op = "max_unpool2d";
        check_float(self, op)?;
        if indices.dtype() != DType::I64 {
            bail!(
                DTypeMismatch,
                op,
                "elements in indices should be type int64 but got: {}",
                indices.dtype()
            );
        }
        if indices.shape() != self.shape() {
            bail!(
                ShapeMismatch,
                op,
                "Expected shape of indices to be same as that of the input tensor ({:?}) but got indices tensor with shape: {:?}",
                self.shape(),
                indices.shape()
            );
        }
        let k = per_dim(&geo(kernel_size, op)?, 2, "kernel_size", op)?;
        let stride = geo(stride, op)?;
        let s = if stride.is_empty() {
            k.clone()
        } else {
            per_dim(&stride, 2, "stride", op)?
        };
        let p = per_dim(&geo(padding, op)?, 2, "padding", op)?;
        let output_size = geo(output_size, op)?;
        let (lead, h, w) = planes_of(self, op)?;
        // PyTorch's `_unpool_output_size`: plain arithmetic on the (possibly negative)
        // arguments; a negative result is refused. A given size has 2 elements (or 4: the
        // last 2 taken), each strictly within one stride of the default size
        let default = [
            (h as i64 - 1) * s[0] - 2 * p[0] + k[0],
            (w as i64 - 1) * s[1] - 2 * p[1] + k[1],
        ];
        let (oh, ow) = match output_size.len() {
            0 => (default[0], default[1]),
            n @ (2 | 4) => {
                let given = &output_size[n - 2..];
                for d in 0..2 {
                    let (lo, hi) = (default[d] - s[d], default[d] + s[d]);
                    if !(lo < given[d] && given[d] < hi) {
                        bail!(
                            InvalidArgument,
                            op,
                            "invalid output_size \"{:?}\" (dim {} must be between {} and {})",
                            given,
                            d,
                            lo,
                            hi
                        );
                    }
                }
                (given[0], given[1])
            }
            n => bail!(
                InvalidArgument,
                op,
                "output_size should be a sequence containing 2 or 4 elements, but it has a length of '{}'",
                n
            ),
        };
        for (d, v) in [oh, ow].into_iter().enumerate() {
            if v < 0 {
                bail!(
                    InvalidArgument,
                    op,
                    "max_unpooling: output_size must contain non-negative spatial dimensions, but got output_size[{}]={}",
                    d,
                    v
                );
            }
        }
        let (oh, ow) = (oh as usize, ow as usize);
        let planes: usize = lead.iter().product();
        let flat = [planes as i64, (h * w) as i64];
        let plane = oh * ow;
        let zeros = Tensor::zeros(&[planes, plane], self.dtype())?;
        let ix = indices.reshape(&flat)?;
        if planes * h * w > 0 {
            let _g = crate::autograd::no_grad();
            let (lo, hi) = (ix.amin((), false)?, ix.amax((), false)?);
            let (lo, hi) = (lo.item::<i64>()?, hi.item::<i64>()?);
            if lo < 0 || hi >= plane as i64 {
                let bad = if lo < 0 { lo } else { hi };
                bail!(
                    IndexOutOfRange,
                    op,
                    "Found an invalid max index: {} (output volumes are of size {}x{})",
                    bad,
                    oh,
                    ow
                );
            }
        }
        let out = zeros.scatter(1, &ix, &self.reshape(&flat)?)?;
        let mut shape: Vec<i64> = lead.iter().map(|&d| d as i64).collect();
        shape.extend([oh as i64, ow as i64]);
        // a fresh tensor, not a view of the flat planes (as PyTorch's max_unpool2d)
        out.unsafe_view(&shape)
    }
}
