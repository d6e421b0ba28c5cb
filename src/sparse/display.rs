//! PyTorch-style `Display` of sparse tensors: `tensor(indices=..., values=..., size=(..),
//! nnz=.., layout=torch.sparse_coo)`.

use super::SparseParts;
use crate::Tensor;
use std::fmt;

pub(crate) fn fmt_sparse(t: &Tensor, p: &SparseParts, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    let size: Vec<String> = t.shape().iter().map(|s| s.to_string()).collect();
    let size = if size.len() == 1 {
        format!("({},)", size[0])
    } else {
        format!("({})", size.join(", "))
    };
    match p {
        SparseParts::Coo {
            indices, values, ..
        } => write!(
            f,
            "tensor(indices={},\n       values={},\n       size={}, nnz={}, layout=torch.sparse_coo)",
            indices,
            values,
            size,
            p.nnz()
        ),
        SparseParts::Csr {
            crow, col, values, ..
        } => write!(
            f,
            "tensor(crow_indices={},\n       col_indices={},\n       values={}, size={}, nnz={},\n       layout=torch.sparse_csr)",
            crow,
            col,
            values,
            size,
            p.nnz()
        ),
    }
}
