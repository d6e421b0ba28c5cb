//! Reductions. `sum` (all dims or given dims, keepdim) and `sum_to_size` live here with their
//! backward; integer and bool sums accumulate (and return) i64, f16/bf16 accumulate in f32.

use crate::autograd::record;
use crate::layout::{Layout, for_each_run, wrap_dims};
use crate::ops::grad::{backward, input_grad};
use crate::ops::util::{broadcast_strides, with_raw};
use crate::tensor::TensorData;
use crate::{DType, Element, Result, Tensor, dispatch};

/// Sums a contiguous run with 8 independent accumulators (vectorisable).
#[inline]
fn sum_run<T: Element>(p: &[T]) -> T {
    let mut acc = [T::zero(); 8];
    let chunks = p.chunks_exact(8);
    let rem = chunks.remainder();
    for c in chunks {
        for k in 0..8 {
            acc[k] = acc[k].add(c[k]);
        }
    }
    let mut s = T::zero();
    for a in acc {
        s = s.add(a);
    }
    for &v in rem {
        s = s.add(v);
    }
    s
}

/// Sum-reduces `x` (already of accumulation dtype `T`) over `dims` into `out` (keepdim shape,
/// zero-initialised, contiguous).
fn sum_kernel<T: Element>(x: &TensorData, out: &TensorData, in_shape: &[usize]) {
    let out_st = broadcast_strides(&out.layout, in_shape);
    let out_geo = TensorData {
        storage: out.storage.clone(),
        layout: Layout::new(
            in_shape.to_vec(),
            out_st
                .iter()
                .map(|&s| s as usize)
                .collect::<crate::layout::Dims>(),
            out.layout.offset(),
        ),
    };
    with_raw(&out_geo, in_shape, &[x], |o, ins| {
        let (po, px) = (o.ptr as *mut T, ins[0].ptr as *const T);
        for_each_run(
            in_shape,
            [o.strides, ins[0].strides],
            [o.offset, ins[0].offset],
            |[oo, ox], len, [so, sx]| {
                // SAFETY: geometries are tensor layouts inside their locked storages; `out` is a
                // fresh tensor distinct from `x`.
                unsafe {
                    if so == 0 && sx == 1 {
                        let s = sum_run(std::slice::from_raw_parts(px.offset(ox), len));
                        *po.offset(oo) = (*po.offset(oo)).add(s);
                    } else {
                        for i in 0..len as isize {
                            let p = po.offset(oo + i * so);
                            *p = (*p).add(*px.offset(ox + i * sx));
                        }
                    }
                }
            },
        );
    });
}

/// Full reductions of at least this many contiguous elements are split across the kernel team.
const PAR_SUM_MIN: usize = 1 << 20;

/// Sums all of contiguous `x` into the single element of `out`: a few contiguous ranges per
/// team thread, each summed in 64K-element chunks, the range sums added in order.
fn par_sum_all<T: Element>(x: &TensorData, out: &TensorData) {
    use crate::backend::cpu::team;
    let n = x.layout.numel();
    let parts = (team::size() * team::PARTS_PER_THREAD).min(n.div_ceil(1 << 16));
    let per = n.div_ceil(parts);
    with_raw(out, &[], &[x], |o, ins| {
        // SAFETY: `x` is contiguous, so its `n` elements start at its offset inside the locked
        // storage; `out` is a fresh 1-element tensor distinct from `x`.
        unsafe {
            let px = std::slice::from_raw_parts((ins[0].ptr as *const T).offset(ins[0].offset), n);
            let sums = team::map(parts, &|i| {
                let r = &px[(i * per).min(n)..((i + 1) * per).min(n)];
                r.chunks(1 << 16)
                    .map(sum_run)
                    .fold(T::zero(), |a, b| a.add(b))
            });
            let s = sums.into_iter().fold(T::zero(), |a, b| a.add(b));
            *(o.ptr as *mut T).offset(o.offset) = s;
        }
    });
}

/// The dtype `sum` returns for an input dtype.
pub(crate) fn sum_dtype(d: DType) -> DType {
    if d.is_integral(true) { DType::I64 } else { d }
}

/// Sum over `dims` (all when `None`) without autograd; result in `sum_dtype`.
pub(crate) fn sum_raw(x: &Tensor, dims: Option<&[usize]>, keepdim: bool) -> Result<Tensor> {
    x.check_strided("sum")?;
    let shape = x.shape();
    let all: Vec<usize> = (0..shape.len()).collect();
    let dims = dims.unwrap_or(&all);
    let kshape: Vec<usize> = shape
        .iter()
        .enumerate()
        .map(|(i, &s)| if dims.contains(&i) { 1 } else { s })
        .collect();
    let fast = if dims.len() == shape.len() {
        full_sum_dense(x, &kshape)
    } else {
        None
    };
    let out = match fast {
        Some(out) => out?,
        None => sum_general(x, &shape, dims, &kshape)?,
    };
    if keepdim {
        return Ok(out);
    }
    let rshape: Vec<usize> = shape
        .iter()
        .enumerate()
        .filter(|(i, _)| !dims.contains(i))
        .map(|(_, &s)| s)
        .collect();
    Ok(Tensor::from_parts(
        out.storage(),
        Layout::contiguous(&rshape),
        out.dtype(),
    ))
}

/// The full sum of a non-overlapping dense float tensor (in memory order, pairwise, f16/bf16
/// accumulated in f32) as a tensor of `kshape` in `sum_dtype`; `None` for other tensors.
fn full_sum_dense(x: &Tensor, kshape: &[usize]) -> Option<Result<Tensor>> {
    use crate::backend::cpu::sum::sum;
    let d = x.data_ref();
    let l = &d.layout;
    let n = l.numel();
    if n == 0 || !l.is_non_overlapping_and_dense() {
        return None;
    }
    let g = d.storage.read();
    if (l.offset() + n) * x.dtype().size() > g.len() {
        return None;
    }
    macro_rules! go {
        ($S:ty, $conv:expr) => {{
            // SAFETY: a dense layout covers `n` elements from its offset (strides are
            // non-negative), inside the read-locked storage (checked above); every Element is
            // plain old data and the buffer is aligned for it.
            let xs =
                unsafe { std::slice::from_raw_parts((g.as_ptr() as *const $S).add(l.offset()), n) };
            sum(xs, &$conv)
        }};
    }
    use crate::dtype::FloatCompute;
    Some(crate::match_dtype!(x.dtype(), float, T => {
        Tensor::from_vec(vec![T::narrow(go!(T, |v: T| v.widen()))], kshape)
    }, else return None))
}

/// Sum of `x` (of `shape`) over `dims` into a tensor of the keepdim shape `kshape`, in
/// `sum_dtype`: the strided kernel (and the parallel one for full sums of contiguous tensors of
/// dtypes without a dense fast path).
fn sum_general(x: &Tensor, shape: &[usize], dims: &[usize], kshape: &[usize]) -> Result<Tensor> {
    let acc = x.dtype().accumulate_dtype();
    let xin = if x.dtype() == acc {
        x.clone()
    } else {
        let _g = crate::autograd::no_grad();
        x.to_dtype(acc)?
    };
    let out = Tensor::zeros(kshape, acc)?;
    if dims.len() == shape.len() && xin.is_contiguous() && xin.numel() >= PAR_SUM_MIN {
        dispatch!(acc, T => par_sum_all::<T>(&xin.data(), &out.data()));
    } else {
        dispatch!(acc, T => sum_kernel::<T>(&xin.data(), &out.data(), shape));
    }
    if out.dtype() != sum_dtype(x.dtype()) {
        let _g = crate::autograd::no_grad();
        out.to_dtype(sum_dtype(x.dtype()))
    } else {
        Ok(out)
    }
}

struct SumBackward {
    name: &'static str,
    shape: Vec<usize>,
    dims: Vec<usize>,
    keepdim: bool,
}

backward!(SumBackward, self.name, |self, _, g: Tensor| {
    let mut g = g;
    if !self.keepdim {
        let mut dims = self.dims.clone();
        dims.sort_unstable();
        for d in dims {
            g = g.unsqueeze(d as i64)?;
        }
    }
    input_grad(g.broadcast_to(&self.shape)?)
});

impl Tensor {
    /// Sum of all elements (0-dim). Integers and bool sum to i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::from_vec(vec![1i32, 2, 3], &[3])?;
    /// assert_eq!(x.sum()?.item::<i64>()?, 6);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum(&self) -> Result<Tensor> {
        if self.is_sparse() {
            return crate::sparse::sum(self);
        }
        let out = sum_raw(self, None, false)?;
        let dims = (0..self.dim()).collect();
        record(
            &[&out],
            &[self],
            Vec::new,
            SumBackward {
                name: "SumBackward0",
                shape: self.shape(),
                dims,
                keepdim: false,
            },
        )?;
        Ok(out)
    }

    /// Sum over `dims` (negatives allowed), keeping them as size 1 if `keepdim`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let x = Tensor::arange(0, 6, 1)?.view(&[2, 3])?;
    /// assert_eq!(x.sum_dims(&[1], false)?.to_vec::<i64>()?, vec![3, 12]);
    /// assert_eq!(x.sum_dims(&[0], true)?.shape(), vec![1, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_dims(&self, dims: &[i64], keepdim: bool) -> Result<Tensor> {
        let ds = wrap_dims(dims, self.dim(), "sum")?;
        let ds = if ds.is_empty() {
            (0..self.dim()).collect()
        } else {
            ds
        };
        let out = sum_raw(self, Some(&ds), keepdim)?;
        record(
            &[&out],
            &[self],
            Vec::new,
            SumBackward {
                name: "SumBackward1",
                shape: self.shape(),
                dims: ds,
                keepdim,
            },
        )?;
        Ok(out)
    }

    /// `sum(dims, keepdim, dtype=...)`: the input is cast to `dtype` first and the result keeps
    /// `dtype` (so an int32 sum stays int32, wrapping like PyTorch). Empty `dims` = all dims.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::from_vec(vec![1i32, 2, 3, 4], &[2, 2])?;
    /// assert_eq!(x.sum_dims_dtype(&[0], false, DType::I32)?.dtype(), DType::I32);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_dims_dtype(&self, dims: &[i64], keepdim: bool, dtype: DType) -> Result<Tensor> {
        let x = self.to_dtype(dtype)?;
        let s = if dims.is_empty() && !keepdim {
            x.sum()?
        } else {
            x.sum_dims(dims, keepdim)?
        };
        s.to_dtype(dtype)
    }

    /// Sums broadcast dims away so the result has `shape` (the inverse of broadcasting).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let g = Tensor::ones(&[4, 2, 3], DType::F32)?;
    /// let s = g.sum_to_size(&[2, 1])?;
    /// assert_eq!((s.shape(), s.to_vec::<f32>()?), (vec![2, 1], vec![12.0, 12.0]));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn sum_to_size(&self, shape: &[usize]) -> Result<Tensor> {
        let mine = self.shape();
        if mine == shape {
            return Ok(self.clone());
        }
        if shape.len() > mine.len() {
            crate::bail!(
                ShapeMismatch,
                "sum_to_size",
                "size {:?} is not expandable to size {:?}",
                shape,
                mine
            );
        }
        let lead = mine.len() - shape.len();
        let mut dims: Vec<i64> = (0..lead as i64).collect();
        for (i, &s) in shape.iter().enumerate() {
            let m = mine[lead + i];
            if s == 1 && m != 1 {
                dims.push((lead + i) as i64);
            } else if s != m {
                crate::bail!(
                    ShapeMismatch,
                    "sum_to_size",
                    "size {:?} is not expandable to size {:?}",
                    shape,
                    mine
                );
            }
        }
        let mut r = if dims.is_empty() {
            self.clone()
        } else {
            self.sum_dims(&dims, true)?
        };
        if lead > 0 {
            let s: Vec<i64> = shape.iter().map(|&v| v as i64).collect();
            r = r.view(&s)?;
        }
        Ok(r)
    }
}
