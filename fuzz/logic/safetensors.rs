//! Target `safetensors`: `StateDict::from_bytes` (header length, JSON header, dtypes, shapes,
//! data offsets). Invariants: no panic; errors are `InvalidArgument` (a malformed file) or
//! `Unsupported` (a dtype tapegrad lacks); a state dict that loads saves and reloads with the same
//! names, metadata, dtypes, shapes and values.

use super::pt::same;
use tapegrad::ErrorKind;
use tapegrad::checkpoint::StateDict;
use tapegrad::interop::pt::Value;

pub fn run(data: &[u8]) {
    match StateDict::from_bytes(data) {
        Ok(sd) => {
            let back = StateDict::from_bytes(&sd.to_bytes().expect("a loaded state dict saves"))
                .expect("a file we wrote must load");
            assert_eq!(sd.names(), back.names());
            assert_eq!(sd.metadata_map(), back.metadata_map());
            for ((_, a), (_, b)) in sd.iter().zip(back.iter()) {
                same(&Value::from(a), &Value::from(b));
            }
        }
        Err(e) => assert!(
            matches!(
                e.kind(),
                ErrorKind::InvalidArgument | ErrorKind::Unsupported
            ),
            "unexpected error kind: {e}"
        ),
    }
}
