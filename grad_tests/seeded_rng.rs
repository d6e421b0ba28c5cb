//! The global generator's state (`tapegrad::random::get_rng_state` / `set_rng_state`, what
//! activation checkpointing saves): restoring it replays `randn` and dropout masks.

use tapegrad::random::{default_generator, get_rng_state, initial_seed, set_rng_state};
use tapegrad::{DType, Tensor, manual_seed};

#[test]
fn global_state_restores_randn_and_dropout() {
    let _serial = crate::serial();
    manual_seed(21);
    assert_eq!(initial_seed(), 21);
    let s = get_rng_state();
    let x = Tensor::ones(&[64], DType::F32).unwrap();
    let a = Tensor::randn(&[5], DType::F64).unwrap();
    let da = x.dropout(0.5, true).unwrap();
    set_rng_state(&s);
    let b = Tensor::randn(&[5], DType::F64).unwrap();
    let db = x.dropout(0.5, true).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), b.to_vec::<f64>().unwrap());
    assert_eq!(da.to_vec::<f32>().unwrap(), db.to_vec::<f32>().unwrap());
    // the default generator is a handle on the same stream
    assert_eq!(default_generator().get_state(), get_rng_state());
    manual_seed(21);
    let c = Tensor::randn(&[5], DType::F64).unwrap();
    assert_eq!(a.to_vec::<f64>().unwrap(), c.to_vec::<f64>().unwrap());
}
