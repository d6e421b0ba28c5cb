//! The README's main job, as a test: trains the digits MLP of `examples/train_mlp.rs` (the same
//! code, included below) and checks it learns. PyTorch reaches 0.97–0.99 with this recipe.
//! The seeded generator is process-global (like PyTorch's default generator), so two trainings
//! running on parallel test threads would interleave their draws: it runs in the `seeded` crate,
//! holding `serial`.

#[path = "../examples/train_mlp.rs"]
mod train_mlp;

#[test]
fn digits_mlp_learns_and_is_deterministic_under_a_seed() {
    let _serial = crate::serial();
    let a = train_mlp::run(2, false).expect("training runs");
    let b = train_mlp::run(2, false).expect("training runs");
    assert_eq!(a, b, "same seed, same accuracy");
    let acc = train_mlp::run(15, false).expect("training runs");
    assert!(acc >= 0.97, "test accuracy {acc:.3} < 0.97");
}
