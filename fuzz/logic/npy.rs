//! Target `npy`: the `.npy` reader. Invariants: no panic; errors are `Malformed`,
//! `Unsupported` or `InvalidArgument`; an array that loads is written back and reloads with
//! the same shape, dtype, layout order and values.

use super::pt::same;
use tapegrad::ErrorKind;
use tapegrad::interop::{npy, pt::Value};

pub fn run(data: &[u8]) {
    match npy::from_bytes(data) {
        Ok(t) => {
            let back = npy::from_bytes(&npy::to_bytes(&t).expect("a loaded array saves"))
                .expect("a file we wrote must load");
            assert_eq!(t.is_contiguous(), back.is_contiguous());
            same_array(&t, &back);
        }
        Err(e) => assert!(
            matches!(
                e.kind(),
                ErrorKind::Malformed | ErrorKind::Unsupported | ErrorKind::InvalidArgument
            ),
            "unexpected error kind: {e}"
        ),
    }
}

/// Same shape, dtype, offset and values, and the same strides wherever a stride means something
/// (a dim of more than one element, in an array with elements). An array that is both C- and
/// Fortran-contiguous (size-1 dims, or no elements) is written in C order, as `numpy.save`
/// writes it, so its reloaded strides may differ exactly there: numpy's own round trip of a
/// Fortran-order `(1, 1, 2)` array gives element strides `[1, 1, 1]`, then `[2, 2, 1]`.
fn same_array(a: &tapegrad::Tensor, b: &tapegrad::Tensor) {
    assert_eq!(
        (a.shape(), a.storage_offset(), a.dtype()),
        (b.shape(), b.storage_offset(), b.dtype())
    );
    if a.numel() > 0 {
        for (d, &n) in a.shape().iter().enumerate() {
            if n > 1 {
                assert_eq!(a.strides()[d], b.strides()[d], "stride of dim {d}");
            }
        }
    }
    // values in logical order: both flattened ([n], stride 1, offset 0 — a copy where the
    // array is Fortran-ordered)
    let flat =
        |t: &tapegrad::Tensor| Value::from(&t.reshape(&[-1i64]).expect("a loaded array flattens"));
    same(&flat(a), &flat(b));
}
