//! Pooling over the windows of a [`PoolWindows`] on contiguous planes: max (values and
//! plane indices), average and its adjoint (max/avg/adaptive pooling). Front door
//! `dispatch/pool.rs`; CPU body `cpu/pool.rs`.

use crate::DType;
use crate::backend::{Device, PoolWindows};

/// Windows over contiguous planes.
pub(crate) trait PoolKernels: Device {
    /// The maximum of every window of `win` over `src` (`planes * h * w` contiguous float
    /// or integer (not bool) elements of dtype `dt` from element `so`) into `dst` (`planes * oh * ow`, from 0) and,
    /// when `idx` is given, its position in the plane (`row * w + col`, i64) into `idx`. NaN
    /// wins (the last NaN of a window); of equal maxima the first in row-major order; an all
    /// `-inf` window picks its first element. Buffers are distinct. Panics (an internal
    /// invariant) if a range lies outside its buffer.
    fn max_pool(
        dst: &mut Self::Buffer,
        idx: Option<&mut Self::Buffer>,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        dt: DType,
    );

    /// The sum of every window of `win` over `src` (as in [`Self::max_pool`]) divided by
    /// `div[i * ow + j]`, into `dst` (`planes * oh * ow`, from 0; an empty window gives 0),
    /// computed in the compute type of `dt` (i64: a wrapping sum divided truncating). Panics (an internal invariant) if a range lies
    /// outside its buffer.
    fn avg_pool(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    );

    /// The adjoint of [`Self::avg_pool`]: every element of every window of `win` in the
    /// zero-filled `dst` (`planes * h * w`, from 0) receives `src[i, j] / div[i * ow + j]`
    /// (`src`: `planes * oh * ow` elements from `so`). Buffers are distinct. Panics (an
    /// internal invariant) if a range lies outside its buffer.
    fn avg_pool_transpose(
        dst: &mut Self::Buffer,
        src: &Self::Buffer,
        so: usize,
        win: &PoolWindows,
        div: &[f64],
        dt: DType,
    );
}
