//! Invariant checks shared by the fuzz targets: snapshots of everything an op may change, "an
//! error leaves every tensor unchanged", "versions only grow", and "geometry stays inside its
//! storage".

use tapegrad::{DType, Layout, Tensor};

/// Largest tensor whose values the checks read back (bigger ones are compared by metadata).
pub const MAX_READ: usize = 4096;

/// Everything observable about a tensor that an op could change.
#[derive(Debug, PartialEq, Eq)]
pub struct Snap {
    pub layout: Layout,
    pub version: u64,
    pub storage_id: u64,
    pub nbytes: usize,
    pub requires_grad: bool,
    pub values: Option<Vec<u64>>,
}

/// Values as bit patterns (so NaN compares equal to itself); `None` when too large to read.
pub fn values(t: &Tensor) -> Option<Vec<u64>> {
    if t.numel() > MAX_READ {
        return None;
    }
    let v = t
        .to_dtype(DType::F64)
        .and_then(|t| t.to_vec::<f64>())
        .unwrap_or_else(|e| panic!("reading a valid tensor failed: {e}"));
    Some(v.into_iter().map(f64::to_bits).collect())
}

pub fn snap(t: &Tensor) -> Snap {
    let s = t.storage();
    Snap {
        layout: t.layout(),
        version: t.version(),
        storage_id: s.id(),
        nbytes: s.nbytes(),
        requires_grad: t.requires_grad(),
        values: values(t),
    }
}

pub fn snap_all(ts: &[Tensor]) -> Vec<Snap> {
    ts.iter().map(snap).collect()
}

/// Geometry stays inside the storage (what makes every unchecked kernel access sound).
pub fn check_in_bounds(t: &Tensor, ctx: &str) {
    let l = t.layout();
    let span = Layout::checked_storage_span(l.sizes(), l.strides(), l.offset())
        .unwrap_or_else(|| panic!("{ctx}: layout {l:?} overflows"));
    let need = span
        .checked_mul(t.dtype().size())
        .unwrap_or_else(|| panic!("{ctx}: byte span of {l:?} overflows"));
    assert!(
        need <= t.storage().nbytes(),
        "{ctx}: layout {l:?} needs {need} bytes, storage has {}",
        t.storage().nbytes()
    );
}

/// After a failed op: nothing changed at all.
pub fn check_unchanged(before: &[Snap], ts: &[Tensor], ctx: &str) {
    for (i, (b, t)) in before.iter().zip(ts).enumerate() {
        let a = snap(t);
        assert_eq!(b, &a, "{ctx}: a failing op modified tensor #{i}");
    }
}

/// After a successful op: versions never decrease, storages never shrink, geometry in bounds.
pub fn check_monotone(before: &[Snap], ts: &[Tensor], ctx: &str) {
    for (i, (b, t)) in before.iter().zip(ts).enumerate() {
        assert!(
            t.version() >= b.version,
            "{ctx}: version of tensor #{i} went from {} to {}",
            b.version,
            t.version()
        );
        if t.storage().id() == b.storage_id {
            assert!(
                t.storage().nbytes() >= b.nbytes,
                "{ctx}: storage of tensor #{i} shrank"
            );
        }
        check_in_bounds(t, ctx);
    }
}

/// Runs `op` against a pool: on error nothing may change, on success versions only grow.
/// Returns the op's result.
pub fn guarded<R>(
    pool: &[Tensor],
    ctx: &str,
    op: impl FnOnce() -> tapegrad::Result<R>,
) -> Option<R> {
    let before = snap_all(pool);
    match op() {
        Ok(r) => {
            check_monotone(&before, pool, ctx);
            Some(r)
        }
        Err(e) => {
            assert!(!e.message().is_empty(), "{ctx}: error without message");
            check_unchanged(&before, pool, ctx);
            None
        }
    }
}

/// Storage element offsets of a layout, computed independently of the library's iterator.
pub fn offsets(l: &Layout) -> Vec<usize> {
    // checked: a zero size makes the element count 0 even when other sizes overflow a product
    let n = if l.sizes().contains(&0) {
        0
    } else {
        l.sizes()
            .iter()
            .try_fold(1usize, |a, &d| a.checked_mul(d))
            .expect("offsets: callers only ask for layouts of at most MAX_READ elements")
    };
    let mut out = Vec::with_capacity(n.min(MAX_READ));
    if n == 0 {
        return out;
    }
    let nd = l.dim();
    let mut idx = vec![0usize; nd];
    'outer: loop {
        out.push(
            l.offset()
                + idx
                    .iter()
                    .zip(l.strides())
                    .map(|(i, s)| i * s)
                    .sum::<usize>(),
        );
        for d in (0..nd).rev() {
            idx[d] += 1;
            if idx[d] < l.sizes()[d] {
                continue 'outer;
            }
            idx[d] = 0;
        }
        break;
    }
    out
}
