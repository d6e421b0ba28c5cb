//! Target `zip`: the zip container under `torch.save` files and `.npz` archives, and the two
//! readers built on it. Invariants: no panic; a `.pt` that loads survives a save/load round
//! trip with its tree, geometry and values (`pt::same`).

use super::pt::{same, walk};
use tapegrad::interop::{fuzzing, npy, pt};

pub fn run(data: &[u8]) {
    fuzzing::zip(data);
    if let Ok(v) = pt::from_bytes(data) {
        walk(&v);
        if let Ok(bytes) = pt::to_bytes(&v) {
            same(
                &v,
                &pt::from_bytes(&bytes).expect("a file we wrote must load"),
            );
        }
    }
    if let Ok(arrays) = npy::npz_from_bytes(data) {
        for (_, t) in &arrays {
            let _ = t
                .to_dtype(tapegrad::DType::C128)
                .expect("a loaded array reads");
        }
    }
}
