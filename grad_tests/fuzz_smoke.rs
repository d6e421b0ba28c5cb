//! CI smoke run of every fuzz target (`fuzz/`): replays the checked-in corpus of each target
//! (`fuzz/corpus/<target>/`; for the file readers also mutants of it) and a few thousand
//! pseudo-random inputs through the same logic the cargo-fuzz binaries run, so CI (`cargo test
//! --release`) exercises every target without libFuzzer. Long campaigns run with
//! `cargo fuzz run <target>` (see fuzz/README.md).

#[path = "../fuzz/logic/mod.rs"]
mod fuzz_logic;

use fuzz_logic::TARGETS;
use fuzz_logic::input::Rng;
use std::path::Path;

/// Pseudo-random inputs per target in the smoke run.
const RANDOM_INPUTS: u64 = 3000;

fn replay_corpus(name: &str, run: fn(&[u8])) -> usize {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let mut n = 0;
    let Ok(entries) = std::fs::read_dir(&dir) else {
        panic!("missing corpus directory {}", dir.display());
    };
    let mut files: Vec<_> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    for f in files {
        let data = std::fs::read(&f).unwrap();
        let r = std::panic::catch_unwind(|| run(&data));
        assert!(r.is_ok(), "{name}: corpus input {} fails", f.display());
        n += 1;
    }
    n
}

/// File-reader targets: besides random bytes (which rarely pass a magic number), their smoke run
/// feeds mutants of every corpus file (truncated, bytes overwritten).
const READERS: &[&str] = &["pt", "zip", "npy", "safetensors"];
/// Mutants per corpus file of a reader target.
const MUTANTS: u64 = 64;

fn mutants(name: &str, run: fn(&[u8]), rng: &mut Rng) {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fuzz/corpus")
        .join(name);
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    for f in files {
        let seed = std::fs::read(&f).unwrap();
        for i in 0..MUTANTS {
            let mut data = seed.clone();
            if rng.next_u64().is_multiple_of(4) {
                data.truncate((rng.next_u64() % (seed.len() as u64 + 1)) as usize);
            }
            for _ in 0..1 + rng.next_u64() % 4 {
                if !data.is_empty() {
                    let at = (rng.next_u64() % data.len() as u64) as usize;
                    data[at] = rng.next_u64() as u8;
                }
            }
            let r = std::panic::catch_unwind(|| run(&data));
            assert!(
                r.is_ok(),
                "{name}: mutant #{i} of {} fails: {data:?}",
                f.display()
            );
        }
    }
}

fn smoke(name: &str) {
    let (_, run) = TARGETS.iter().find(|(n, _)| *n == name).unwrap();
    let replayed = replay_corpus(name, *run);
    assert!(replayed > 0, "{name}: empty corpus");
    let mut rng = Rng::new(0x7a9e_67ad ^ name.len() as u64);
    if READERS.contains(&name) {
        mutants(name, *run, &mut rng);
    }
    for i in 0..RANDOM_INPUTS {
        let data = rng.bytes(160);
        let r = std::panic::catch_unwind(|| run(&data));
        assert!(r.is_ok(), "{name}: random input #{i} fails: {data:?}");
    }
}

#[test]
fn views() {
    smoke("views");
}

#[test]
fn index() {
    smoke("index");
}

#[test]
fn set_resize() {
    smoke("set_resize");
}

#[test]
fn interp() {
    smoke("interp");
}

#[test]
fn sparse() {
    smoke("sparse");
}

#[test]
fn pt() {
    smoke("pt");
}

#[test]
fn zip() {
    smoke("zip");
}

#[test]
fn npy() {
    smoke("npy");
}

#[test]
fn safetensors() {
    smoke("safetensors");
}

#[test]
fn nn_geometry() {
    smoke("nn_geometry");
}
