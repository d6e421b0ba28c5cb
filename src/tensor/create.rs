//! Factories: from Rust data, constant fills, ranges, identity, seeded random tensors, `*_like`.

use super::Tensor;
use crate::layout::{Layout, check_contiguous_alloc, check_numel};
use crate::random::{Generator, with_stream};
use crate::storage::Storage;
use crate::{DType, Element, Result, Scalar, bail};

/// Reads `src` (any geometry) into a fresh dense tensor of dtype `dtype` with `strides` (which
/// keep `src`'s memory order): the materialising copy of `reshape`, `contiguous` and `clone`.
pub(crate) fn materialize(src: &Tensor, dtype: DType, strides: &[usize]) -> Result<Tensor> {
    src.check_strided("copy")?;
    let out = Tensor::empty_strided(&src.shape(), strides, dtype)?;
    crate::backend::copy_raw(&out.data(), &src.data(), dtype, src.dtype());
    Ok(out)
}

impl Tensor {
    /// A contiguous tensor holding `data` with the given shape.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_vec(vec![1.0f32, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(t.shape(), vec![2, 2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn from_vec<T: Element>(data: Vec<T>, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "from_vec")?;
        let shape = &shape[..];
        Self::from_slice(&data, shape)
    }

    /// Like [`from_vec`](Self::from_vec) from a borrowed slice.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::from_slice(&[1i64, 2, 3], &[3])?;
    /// assert_eq!(t.to_vec::<i64>()?, vec![1, 2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn from_slice<T: Element>(data: &[T], shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "from_slice")?;
        let shape = &shape[..];
        let n = check_contiguous_alloc(shape, "from_vec")?;
        if n != data.len() {
            bail!(
                ShapeMismatch,
                "from_vec",
                "shape {:?} needs {} elements but {} were given",
                shape,
                n,
                data.len()
            );
        }
        Ok(Tensor::from_parts(
            Storage::from_elements(data)?,
            Layout::contiguous(shape),
            T::DTYPE,
        ))
    }

    /// A 0-dim tensor holding `v`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let t = Tensor::scalar(2.5f64);
    /// assert_eq!(t.dim(), 0);
    /// ```
    pub fn scalar<T: Element>(v: T) -> Tensor {
        Self::from_slice(&[v], ()).expect("internal: one element fits a 0-dim shape")
    }

    /// A contiguous zero-filled tensor.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let z = Tensor::zeros(&[2, 3], DType::F32)?;
    /// assert_eq!(z.to_vec::<f32>()?, vec![0.0; 6]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn zeros(shape: impl crate::IntoShape, dtype: DType) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "zeros")?;
        Self::filled(&shape, 0.into(), dtype, "zeros")
    }

    /// A contiguous tensor of `value` (cast to `dtype`): a recycled block, every element
    /// written by the backend's fill.
    fn filled(shape: &[usize], value: Scalar, dtype: DType, op: &'static str) -> Result<Tensor> {
        let n = check_contiguous_alloc(shape, op)?;
        let nbytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| crate::err!(InvalidArgument, op, "size overflow"))?;
        let t = Tensor::from_parts(
            Storage::for_output(nbytes)?,
            Layout::contiguous(shape),
            dtype,
        );
        crate::backend::fill(&t.data(), dtype, value);
        Ok(t)
    }

    /// A contiguous tensor of uninitialised-in-PyTorch memory; tapegrad zero-fills it.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::empty(&[3], DType::I64)?.to_vec::<i64>()?, vec![0, 0, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn empty(shape: impl crate::IntoShape, dtype: DType) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "empty")?;
        let shape = &shape[..];
        Self::zeros(shape, dtype)
    }

    /// A tensor with explicit strides and storage just large enough, for a kernel that writes
    /// every element before anything reads it. When the geometry is dense (every storage element
    /// is a tensor element) the storage may be a recycled block, since the kernel overwrites all of
    /// it; otherwise the gaps must read as zeros, so it is zero-filled.
    pub(crate) fn empty_strided(
        shape: &[usize],
        strides: &[usize],
        dtype: DType,
    ) -> Result<Tensor> {
        check_numel(shape, "empty_strided")?;
        let span = Layout::checked_storage_span(shape, strides, 0)
            .ok_or_else(|| crate::err!(InvalidArgument, "empty_strided", "geometry overflows"))?;
        let nbytes = span.checked_mul(dtype.size()).ok_or_else(|| {
            crate::err!(
                InvalidArgument,
                "empty_strided",
                "size of {:?} in bytes overflows",
                shape
            )
        })?;
        let layout = Layout::new(shape.to_vec(), strides.to_vec(), 0);
        let storage = if layout.is_non_overlapping_and_dense() {
            Storage::for_output(nbytes)?
        } else {
            Storage::zeroed(nbytes)?
        };
        Ok(Tensor::from_parts(storage, layout, dtype))
    }

    /// A contiguous tensor filled with `value` (cast to `dtype`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let t = Tensor::full(&[2], 7, DType::I32)?;
    /// assert_eq!(t.to_vec::<i32>()?, vec![7, 7]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn full(
        shape: impl crate::IntoShape,
        value: impl Into<Scalar>,
        dtype: DType,
    ) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "full")?;
        Self::filled(&shape, value.into(), dtype, "full")
    }

    /// A contiguous tensor of ones.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::ones(&[2], DType::F64)?.to_vec::<f64>()?, vec![1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ones(shape: impl crate::IntoShape, dtype: DType) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "ones")?;
        let shape = &shape[..];
        Self::full(shape, 1, dtype)
    }

    /// `torch.arange(start, end, step)`: i64 when all bounds are ints, else f32.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// assert_eq!(Tensor::arange(0, 5, 2)?.to_vec::<i64>()?, vec![0, 2, 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn arange(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
    ) -> Result<Tensor> {
        let (s, e, st) = (start.into(), end.into(), step.into());
        let all_int = [s, e, st]
            .iter()
            .all(|v| matches!(v, Scalar::Int(_) | Scalar::Bool(_)));
        Self::arange_dtype(s, e, st, if all_int { DType::I64 } else { DType::F32 })
    }

    /// `torch.arange` with an explicit dtype.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::arange_dtype(0, 3, 1, DType::F64)?.to_vec::<f64>()?, vec![0.0, 1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn arange_dtype(
        start: impl Into<Scalar>,
        end: impl Into<Scalar>,
        step: impl Into<Scalar>,
        dtype: DType,
    ) -> Result<Tensor> {
        let (s, e, st) = (
            start.into().to_f64(),
            end.into().to_f64(),
            step.into().to_f64(),
        );
        if dtype.is_complex() {
            // PyTorch's CPU kernel lookup comes before every range check
            bail!(
                DTypeMismatch,
                "arange",
                "\"arange_cpu\" not implemented for '{}'",
                dtype.torch_scalar_name()
            );
        }
        if st == 0.0 {
            bail!(InvalidArgument, "arange", "step must be nonzero");
        }
        if !(s.is_finite() && e.is_finite()) {
            bail!(
                InvalidArgument,
                "arange",
                "unsupported range: {} -> {}",
                s,
                e
            );
        }
        if (st > 0.0 && e < s) || (st < 0.0 && e > s) {
            bail!(
                InvalidArgument,
                "arange",
                "upper bound and larger bound inconsistent with step sign"
            );
        }
        let n = ((e - s) / st).ceil().max(0.0);
        if n >= i64::MAX as f64 {
            bail!(
                InvalidArgument,
                "arange",
                "invalid size, possible overflow? ({} elements)",
                n
            );
        }
        let n = n as usize;
        let ramp = crate::backend::Ramp {
            start: s,
            end: e,
            step: st,
            half: n,
            fused: false,
        };
        Self::ramp(n, ramp, dtype, "arange")
    }

    /// The 1-D tensor of `n` elements of `ramp` (the values of `arange` and `linspace`).
    fn ramp(
        n: usize,
        ramp: crate::backend::Ramp,
        dtype: DType,
        op: &'static str,
    ) -> Result<Tensor> {
        check_numel(&[n], op)?;
        let nbytes = n
            .checked_mul(dtype.size())
            .ok_or_else(|| crate::err!(InvalidArgument, op, "size overflow"))?;
        let t = Tensor::from_parts(
            Storage::for_output(nbytes)?,
            Layout::contiguous(&[n]),
            dtype,
        );
        crate::backend::ramp(&t.data(), dtype, ramp);
        Ok(t)
    }

    /// `torch.linspace(start, end, steps)`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::linspace(0.0, 1.0, 3, DType::F64)?.to_vec::<f64>()?, vec![0.0, 0.5, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn linspace(start: f64, end: f64, steps: impl crate::Dim, dtype: DType) -> Result<Tensor> {
        let steps = crate::tensor::dims::size(steps, "linspace", |_| {
            "number of steps must be non-negative".into()
        })?;
        if steps == 1 {
            // (PyTorch fills a one-step linspace with `start`: no arithmetic, so -0.0 stays)
            return Self::full(&[1], start, dtype);
        }
        let step = if steps > 1 {
            (end - start) / (steps - 1) as f64
        } else {
            0.0
        };
        // PyTorch fills the second half backwards from `end` for symmetry; f32 and f64 in their
        // own precision with fused multiply-adds (see `Ramp`).
        let ramp = crate::backend::Ramp {
            start,
            end,
            step,
            half: steps / 2,
            fused: matches!(dtype, DType::F32 | DType::F64),
        };
        Self::ramp(steps, ramp, dtype, "linspace")
    }

    /// The `n`×`n` identity matrix.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// assert_eq!(Tensor::eye(2, DType::I64)?.to_vec::<i64>()?, vec![1, 0, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn eye(n: impl crate::Dim, dtype: DType) -> Result<Tensor> {
        let n = crate::tensor::dims::size(n, "eye", |v| {
            format!("n must be greater or equal to 0, got {v}")
        })?;
        crate::layout::check_numel(&[n, n], "eye")?;
        let t = Self::filled(&[n, n], 0.into(), dtype, "eye")?;
        // the diagonal: elements `i * (n + 1)` of the storage
        let diag = Tensor::from_parts(t.storage(), Layout::new(vec![n], vec![n + 1], 0), dtype);
        crate::backend::fill(&diag.data(), dtype, 1.into());
        Ok(t)
    }

    /// Uniform samples in `[0, 1)` from the global generator.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// tapegrad::manual_seed(0);
    /// let r = Tensor::rand(&[4], DType::F32)?;
    /// assert!(r.to_vec::<f32>()?.iter().all(|v| (0.0..1.0).contains(v)));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn rand(shape: impl crate::IntoShape, dtype: DType) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "rand")?;
        let shape = &shape[..];
        Tensor::rand_with(shape, dtype, None)
    }

    /// `rand` drawing from `generator` (the global one when `None`; PyTorch's `generator=`).
    pub fn rand_with(
        shape: impl crate::IntoShape,
        dtype: DType,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "rand")?;
        let shape = &shape[..];
        let n = check_contiguous_alloc(shape, "rand")?;
        let v: Vec<f64> = with_stream(generator, |r| (0..n).map(|_| r.uniform()).collect());
        Tensor::from_vec(v, shape)?.to_dtype(dtype)
    }

    /// Standard normal samples from the global generator.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// tapegrad::manual_seed(0);
    /// assert_eq!(Tensor::randn(&[2, 3], DType::F64)?.shape(), vec![2, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn randn(shape: impl crate::IntoShape, dtype: DType) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "randn")?;
        let shape = &shape[..];
        Tensor::randn_with(shape, dtype, None)
    }

    /// `randn` drawing from `generator` (the global one when `None`).
    pub fn randn_with(
        shape: impl crate::IntoShape,
        dtype: DType,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "randn")?;
        let shape = &shape[..];
        let n = check_contiguous_alloc(shape, "randn")?;
        let v: Vec<f64> = with_stream(generator, |r| (0..n).map(|_| r.normal()).collect());
        Tensor::from_vec(v, shape)?.to_dtype(dtype)
    }

    /// Integers uniform in `[low, high)` as i64.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let r = Tensor::randint(0, 3, &[10])?;
    /// assert!(r.to_vec::<i64>()?.iter().all(|v| (0..3).contains(v)));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn randint(low: i64, high: i64, shape: impl crate::IntoShape) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "randint")?;
        let shape = &shape[..];
        Tensor::randint_with(low, high, shape, None)
    }

    /// `randint` drawing from `generator` (the global one when `None`).
    pub fn randint_with(
        low: i64,
        high: i64,
        shape: impl crate::IntoShape,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        let shape = crate::tensor::dims::sizes(shape, "randint")?;
        let shape = &shape[..];
        if high <= low {
            bail!(
                InvalidArgument,
                "randint",
                "random_ expects 'from' to be less than 'to', but got from={} >= to={}",
                low,
                high
            );
        }
        let n = check_contiguous_alloc(shape, "randint")?;
        let v: Vec<i64> = with_stream(generator, |r| (0..n).map(|_| r.int_in(low, high)).collect());
        Tensor::from_vec(v, shape)
    }

    /// A tensor of `value` in `dtype` with this tensor's shape and PyTorch's preserved layout
    /// (its strides when it is dense and non-overlapping, else dense strides in its memory
    /// order), as PyTorch's `*_like` ops give.
    fn filled_like(&self, value: Scalar, dtype: DType) -> Result<Tensor> {
        let (shape, strides) = (self.shape(), self.layout().preserved_strides());
        if strides == Layout::contiguous(&shape).strides() {
            return Tensor::full(&shape, value, dtype);
        }
        // (a dense recycled block: every element is written)
        let t = Tensor::empty_strided(&shape, &strides, dtype)?;
        crate::backend::fill(&t.data(), dtype, value);
        Ok(t)
    }

    /// Zeros with this tensor's shape, dtype and layout (strides as PyTorch's `zeros_like`).
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// assert_eq!(x.zeros_like()?.to_vec::<f32>()?, vec![0.0, 0.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn zeros_like(&self) -> Result<Tensor> {
        self.filled_like(Scalar::Int(0), self.dtype())
    }
    /// [`Tensor::zeros_like`] in another dtype.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// assert_eq!(x.zeros_like_dtype(DType::I64)?.to_vec::<i64>()?, vec![0, 0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn zeros_like_dtype(&self, dtype: DType) -> Result<Tensor> {
        self.filled_like(Scalar::Int(0), dtype)
    }
    /// Ones with this tensor's shape, dtype and layout.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[1], DType::I64)?;
    /// assert_eq!(x.ones_like()?.to_vec::<i64>()?, vec![1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ones_like(&self) -> Result<Tensor> {
        self.filled_like(Scalar::Int(1), self.dtype())
    }
    /// [`Tensor::ones_like`] in another dtype.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[1], DType::I64)?;
    /// assert_eq!(x.ones_like_dtype(DType::Bool)?.to_vec::<bool>()?, vec![true]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn ones_like_dtype(&self, dtype: DType) -> Result<Tensor> {
        self.filled_like(Scalar::Int(1), dtype)
    }
    /// `value` with this tensor's shape, dtype and layout.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// assert_eq!(x.full_like(3.0)?.to_vec::<f32>()?, vec![3.0, 3.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn full_like(&self, value: impl Into<Scalar>) -> Result<Tensor> {
        self.filled_like(value.into(), self.dtype())
    }
    /// [`Tensor::full_like`] in another dtype.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[2], DType::F32)?;
    /// assert_eq!(x.full_like_dtype(3, DType::I32)?.to_vec::<i32>()?, vec![3, 3]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn full_like_dtype(&self, value: impl Into<Scalar>, dtype: DType) -> Result<Tensor> {
        self.filled_like(value.into(), dtype)
    }
    /// An (zero-filled) tensor with this tensor's shape, dtype and layout.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[2], DType::F32)?;
    /// assert_eq!(x.empty_like()?.shape(), vec![2]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn empty_like(&self) -> Result<Tensor> {
        self.filled_like(Scalar::Int(0), self.dtype())
    }
}
