//! Tensors from nested Rust literals: the [`tensor!`](crate::tensor!) macro and the [`Nested`]
//! trait behind it (arrays and `Vec`s of arrays and `Vec`s of any element type).

use crate::dtype::Element;
use crate::{Result, Tensor, bail};
use half::{bf16, f16};
use num_complex::{Complex32, Complex64};

/// A nested literal: an element, or an array / `Vec` of nested literals of one shape.
pub trait Nested {
    /// The element type at the leaves.
    type Elem: Element;
    /// Appends the sizes of this level and the ones below (from the first child) to `out`.
    fn shape_into(&self, out: &mut Vec<usize>);
    /// Appends the leaves in row-major order; errors if sibling sub-lists differ in shape.
    fn flatten_into(&self, shape: &[usize], out: &mut Vec<Self::Elem>) -> Result<()>;
}

macro_rules! leaf {
    ($($t:ty),*) => {$(
        impl Nested for $t {
            type Elem = $t;
            fn shape_into(&self, _out: &mut Vec<usize>) {}
            fn flatten_into(&self, shape: &[usize], out: &mut Vec<$t>) -> Result<()> {
                if !shape.is_empty() {
                    bail!(ShapeMismatch, "tensor!", "ragged nested literal: found a scalar where a list of {} was expected", shape[0]);
                }
                out.push(*self);
                Ok(())
            }
        }
    )*};
}
leaf!(
    bool, u8, i8, i16, i32, i64, f16, bf16, f32, f64, Complex32, Complex64
);

fn flatten_list<U: Nested>(items: &[U], shape: &[usize], out: &mut Vec<U::Elem>) -> Result<()> {
    match shape.split_first() {
        Some((&n, rest)) if n == items.len() => {
            items.iter().try_for_each(|x| x.flatten_into(rest, out))
        }
        Some((&n, _)) => bail!(
            ShapeMismatch,
            "tensor!",
            "ragged nested literal: expected a sequence of length {} (like its first sibling), got {}",
            n,
            items.len()
        ),
        None => bail!(
            ShapeMismatch,
            "tensor!",
            "ragged nested literal: found a list where a scalar was expected"
        ),
    }
}

impl<U: Nested, const N: usize> Nested for [U; N] {
    type Elem = U::Elem;
    fn shape_into(&self, out: &mut Vec<usize>) {
        out.push(N);
        if let Some(first) = self.first() {
            first.shape_into(out);
        }
    }
    fn flatten_into(&self, shape: &[usize], out: &mut Vec<U::Elem>) -> Result<()> {
        flatten_list(self, shape, out)
    }
}

impl<U: Nested> Nested for Vec<U> {
    type Elem = U::Elem;
    fn shape_into(&self, out: &mut Vec<usize>) {
        out.push(self.len());
        if let Some(first) = self.first() {
            first.shape_into(out);
        }
    }
    fn flatten_into(&self, shape: &[usize], out: &mut Vec<U::Elem>) -> Result<()> {
        flatten_list(self, shape, out)
    }
}

impl Tensor {
    /// A tensor from a nested literal (what [`tensor!`](crate::tensor!) calls); the dtype is the
    /// leaves' element type. Ragged `Vec` nestings are a `ShapeMismatch` error.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let t = Tensor::from_nested(&[[1i64, 2, 3], [4, 5, 6]])?;
    /// assert_eq!((t.shape(), t.dtype()), (vec![2, 3], DType::I64));
    /// assert!(Tensor::from_nested(&vec![vec![1.0f32], vec![]]).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn from_nested<N: Nested>(lit: &N) -> Result<Tensor> {
        let mut shape = Vec::new();
        lit.shape_into(&mut shape);
        let mut flat = Vec::with_capacity(shape.iter().product());
        lit.flatten_into(&shape, &mut flat)?;
        Tensor::from_vec(flat, &shape)
    }
}

/// Builds a tensor from a nested literal, like `torch.tensor([[1., 2.], [3., 4.]])`; evaluates to
/// `Result<Tensor>`. The element type of the leaves is the dtype (`1.0` is f64: write `1.0f32`
/// for a float32 tensor).
///
/// ```
/// use tapegrad::tensor;
/// let x = tensor!([[1.0f32, 2.0], [3.0, 4.0]])?;
/// assert_eq!(x.shape(), vec![2, 2]);
/// assert_eq!(x.to_vec::<f32>()?, vec![1.0, 2.0, 3.0, 4.0]);
/// let s = tensor!(7i32)?; // 0-d
/// assert_eq!(s.dim(), 0);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[macro_export]
macro_rules! tensor {
    ($lit:expr) => {
        $crate::Tensor::from_nested(&$lit)
    };
}
