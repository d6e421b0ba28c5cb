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
            same(&Value::from(&t), &Value::from(&back));
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
