//! `embedding` / `embedding_with`: rows of a weight table copied by the backend's
//! `index_select`; the backward adds the output rows into the looked-up rows through the
//! differentiable [`put_add`] primitive (`padding_idx` positions are skipped).

use crate::autograd::record;
use crate::layout::Layout;
use crate::ops::grad::{backward, input_grad};
use crate::ops::movement::gather::{SKIP, output, put_add};
use crate::tensor::TensorData;
use crate::{Result, Tensor, bail};
use std::sync::Arc;

impl Tensor {
    /// Embedding lookup: rows of `weight` (`[V, D]`) at i64 `indices` (any shape).
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let w = Tensor::arange(0, 6, 1)?.view(&[3, 2])?;
    /// let i = Tensor::from_vec(vec![2i64, 0], &[2])?;
    /// assert_eq!(Tensor::embedding(&i, &w)?.to_vec::<i64>()?, vec![4, 5, 0, 1]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn embedding(indices: &Tensor, weight: &Tensor) -> Result<Tensor> {
        Tensor::embedding_with(indices, weight, None)
    }

    /// Embedding lookup with an optional `padding_idx`, like
    /// `torch.nn.functional.embedding(indices, weight, padding_idx)`: the forward is the plain
    /// lookup (the padding row is returned as it is), but positions that look up row
    /// `padding_idx` contribute no gradient, so that row's gradient is zero. A negative
    /// `padding_idx` counts from the end (`padding_idx + V`); one outside `[-V, V)` is an
    /// `InvalidArgument` error ("Padding_idx must be within num_embeddings").
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let w = Tensor::ones(&[3, 2], DType::F64)?.requires_grad_(true)?;
    /// let i = Tensor::from_vec(vec![0i64, 2, 0, 1], &[4])?;
    /// let y = Tensor::embedding_with(&i, &w, Some(0))?;
    /// assert_eq!(y.to_vec::<f64>()?, vec![1.0; 8]); // forward unchanged
    /// y.sum()?.backward()?;
    /// assert_eq!(w.grad().unwrap().to_vec::<f64>()?, vec![0.0, 0.0, 1.0, 1.0, 1.0, 1.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn embedding_with(
        indices: &Tensor,
        weight: &Tensor,
        padding_idx: impl crate::MaybeDim,
    ) -> Result<Tensor> {
        let op = "embedding";
        let padding_idx = crate::tensor::dims::maybe_dim(padding_idx, op)?;
        if weight.dim() != 2 {
            bail!(
                InvalidArgument,
                op,
                "'weight' must be 2-D, got a weight of shape {:?}",
                weight.shape()
            );
        }
        let (v, d) = (weight.shape()[0], weight.shape()[1]);
        let pad = match padding_idx {
            Some(p) => Some(wrap_padding_idx(p, v, op)?),
            None => None,
        };
        let iv = crate::ops::movement::gather::index_values(indices, op, true)?;
        let mut rows = crate::storage::try_vec::<usize>(iv.len(), op)?;
        for &i in &iv {
            if i < 0 || i as usize >= v {
                bail!(
                    IndexOutOfRange,
                    op,
                    "index out of range in self: index {} for a weight of {} rows",
                    i,
                    v
                );
            }
            rows.push(i as usize);
        }
        let mut sh = indices.shape();
        sh.push(d);
        // the rows are copied whole by the backend's `index_select` (as `[rows, d]`)
        let out = output(&sh, weight.dtype(), op)?;
        let dst = TensorData {
            storage: out.data().storage.clone(),
            layout: Layout::contiguous(&[rows.len(), d]),
        };
        crate::backend::movement::index_select(&dst, &weight.data(), 0, &rows, weight.dtype())?;
        record(
            &[&out],
            &[weight],
            Vec::new,
            EmbeddingBackward {
                rows,
                pad,
                in_shape: weight.shape(),
            },
        )?;
        Ok(out)
    }
}

/// `weight`'s gradient: each looked-up row's output gradient added into its row (none for
/// `padding_idx`), through the differentiable [`put_add`] (whose backward is `take`, so double
/// backward works); PyTorch's `embedding_backward` is out of place (version 0).
struct EmbeddingBackward {
    rows: Vec<usize>,
    pad: Option<usize>,
    in_shape: Vec<usize>,
}

backward!(
    EmbeddingBackward,
    "EmbeddingBackward0",
    |self, _, g: Tensor| {
        let d = self.in_shape[1];
        let mut idx = crate::storage::try_vec::<usize>(self.rows.len() * d, "embedding")?;
        for &i in &self.rows {
            if Some(i) == self.pad {
                idx.extend(std::iter::repeat_n(SKIP, d));
            } else {
                idx.extend(i * d..(i + 1) * d);
            }
        }
        input_grad(put_add(&g, Arc::new(idx), &self.in_shape)?)
    }
);

/// `padding_idx` of a table with `num_embeddings` rows as a row number, PyTorch's rule: a
/// negative value counts from the end, and one outside `[-num_embeddings, num_embeddings)` is
/// an `InvalidArgument` error (`0` is always accepted, as in PyTorch).
pub(crate) fn wrap_padding_idx(
    padding_idx: i64,
    num_embeddings: usize,
    op: &'static str,
) -> Result<usize> {
    let n = i64::try_from(num_embeddings).unwrap_or(i64::MAX);
    if padding_idx >= n.max(1) || padding_idx < -n {
        bail!(
            InvalidArgument,
            op,
            "Padding_idx must be within num_embeddings: padding_idx {} for {} embeddings",
            padding_idx,
            num_embeddings
        );
    }
    Ok(if padding_idx < 0 {
        (padding_idx + n) as usize
    } else {
        padding_idx as usize
    })
}
