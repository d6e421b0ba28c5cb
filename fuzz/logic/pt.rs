//! Target `pt`: the restricted unpickler of `torch.save` files on raw pickle bytes (storages
//! are zero-filled, up to 4096 bytes). Invariants: no panic; errors are `Malformed` or
//! `Unsupported` (or `InvalidArgument` from a tensor constructor); every tensor of a loaded
//! tree reads within its storage and survives a save/load round trip with its geometry.

use tapegrad::ErrorKind;
use tapegrad::interop::{fuzzing, pt, pt::Value};

pub fn run(data: &[u8]) {
    match fuzzing::unpickle(data) {
        Ok(v) => {
            walk(&v);
            if let Ok(bytes) = pt::to_bytes(&v) {
                let back = pt::from_bytes(&bytes).expect("a file we wrote must load");
                same(&v, &back);
            }
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

/// Reads every tensor (a layout outside its storage would be caught by the kernels' checks).
pub fn walk(v: &Value) {
    match v {
        Value::Tensor(t) => {
            let _ = t
                .to_dtype(tapegrad::DType::C128)
                .expect("a loaded tensor reads");
        }
        Value::List(x) | Value::Tuple(x) => x.iter().for_each(walk),
        Value::Dict(x) => x.iter().for_each(|(k, v)| {
            walk(k);
            walk(v)
        }),
        _ => {}
    }
}

/// Same tree shape, same tensor geometry and values.
pub fn same(a: &Value, b: &Value) {
    match (a, b) {
        (Value::Tensor(x), Value::Tensor(y)) => {
            assert_eq!(
                (x.shape(), x.strides(), x.storage_offset(), x.dtype()),
                (y.shape(), y.strides(), y.storage_offset(), y.dtype())
            );
            let (x, y) = (
                x.to_dtype(tapegrad::DType::C128).unwrap(),
                y.to_dtype(tapegrad::DType::C128).unwrap(),
            );
            let (x, y) = (
                x.to_vec::<tapegrad::dtype::C128>().unwrap(),
                y.to_vec::<tapegrad::dtype::C128>().unwrap(),
            );
            assert!(
                x.iter()
                    .zip(&y)
                    .all(|(p, q)| p == q || (p.is_nan() && q.is_nan()))
            );
        }
        (Value::List(x), Value::List(y)) | (Value::Tuple(x), Value::Tuple(y)) => {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).for_each(|(p, q)| same(p, q));
        }
        (Value::Dict(x), Value::Dict(y)) => {
            assert_eq!(x.len(), y.len());
            x.iter().zip(y).for_each(|((k1, v1), (k2, v2))| {
                same(k1, k2);
                same(v1, v2)
            });
        }
        (Value::Float(x), Value::Float(y)) => assert!(x == y || (x.is_nan() && y.is_nan())),
        (x, y) => assert_eq!(format!("{x:?}"), format!("{y:?}")),
    }
}
