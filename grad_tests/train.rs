//! The README's main job, as a test: trains the digits MLP of `examples/train_mlp.rs` (the same
//! code, included below) and checks it learns. PyTorch reaches 0.97–0.99 with this recipe.
//! The seeded generator is process-global (like PyTorch's default generator), so two trainings
//! running on parallel test threads would interleave their draws: it runs in the `seeded` crate,
//! holding `serial`.

#[path = "../examples/train_mlp.rs"]
#[allow(clippy::duplicate_mod)] // every example includes examples/common/mod.rs
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

#[path = "../examples/train_cnn.rs"]
#[allow(clippy::duplicate_mod)] // every example includes examples/common/mod.rs
mod train_cnn;

/// The conv + batch norm + pooling network of `examples/train_cnn.rs` (PyTorch's model of the
/// `cnn_step_digits_b64` workload): deterministic under the seed, and past the bar.
#[test]
fn digits_cnn_learns_past_the_bar_and_is_deterministic() {
    let _serial = crate::serial();
    let a = train_cnn::run(1, false).expect("training runs");
    let b = train_cnn::run(1, false).expect("training runs");
    assert_eq!(a, b, "same seed, same accuracy");
    let acc = train_cnn::run(12, false).expect("training runs");
    assert!(acc >= 0.985, "test accuracy {acc:.3} < 0.985");
}

#[path = "../examples/train_charlm.rs"]
#[allow(clippy::duplicate_mod)] // every example includes examples/common/mod.rs
mod train_charlm;

/// The character-level transformer of `examples/train_charlm.rs`: its validation loss falls
/// well below the text's unigram entropy (what a model ignoring context reaches), and the
/// sample is made of the text's characters.
#[test]
fn charlm_validation_loss_falls_well_below_the_unigram_entropy() {
    let _serial = crate::serial();
    let r = train_charlm::run(6, false).expect("training runs");
    let last = *r.val.last().expect("one loss per epoch");
    assert_eq!((r.train.len(), r.val.len()), (6, 6));
    assert!(r.unigram > 2.5, "unigram entropy {:.3}", r.unigram);
    assert!(
        last < 0.75 * r.unigram,
        "val loss {last:.3} not well below the unigram entropy {:.3}",
        r.unigram
    );
    assert!(last < r.val[0], "val loss {:.3} -> {last:.3}", r.val[0]);
    assert_eq!(r.sample.chars().count(), 200);
}
