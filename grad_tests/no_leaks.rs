//! Graphs are freed: a counting global allocator (this test binary's own) checks that building
//! and dropping autograd graphs returns every byte — in particular graphs where an in-place op
//! writes a tensor that a node of its own history saved (`x.mul_(&x)`, `x.mul_(&(&x * &w))`,
//! writes through views), which are reference cycles in PyTorch. One `#[test]` only, so no other
//! test allocates concurrently.

#[path = "../fuzz/logic/mod.rs"]
mod fuzz_logic;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicIsize, Ordering::Relaxed};
use tapegrad::Tensor;

struct Counting;
static LIVE: AtomicIsize = AtomicIsize::new(0);

std::thread_local! {
    /// Only the test's own thread counts: libtest's and rayon's threads allocate on their own
    /// schedule (rayon's workers start lazily), which would make the count racy.
    static COUNTED: std::cell::Cell<bool> = const { std::cell::Cell::new(false) };
}

fn count(delta: isize) {
    if COUNTED.with(|c| c.get()) {
        LIVE.fetch_add(delta, Relaxed);
    }
}

// SAFETY: forwards every call to the system allocator unchanged; only counts successful ones.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn alloc_zeroed(&self, l: Layout) -> *mut u8 {
        let p = unsafe { System.alloc_zeroed(l) };
        if !p.is_null() {
            count(l.size() as isize);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, l: Layout) {
        count(-(l.size() as isize));
        unsafe { System.dealloc(p, l) }
    }
    unsafe fn realloc(&self, p: *mut u8, l: Layout, n: usize) -> *mut u8 {
        let q = unsafe { System.realloc(p, l, n) };
        if !q.is_null() {
            count(n as isize - l.size() as isize);
        }
        q
    }
}

#[global_allocator]
static A: Counting = Counting;

/// Bytes still allocated per run of `f`.
fn growth(f: impl Fn() -> tapegrad::Result<()>) -> isize {
    // warm-up: per-thread engine and view caches reach their size in the first runs
    for _ in 0..5 {
        f().unwrap();
    }
    let before = LIVE.load(Relaxed);
    for _ in 0..20 {
        f().unwrap();
    }
    (LIVE.load(Relaxed) - before) / 20
}

fn leaf() -> Tensor {
    let v: Vec<f64> = (0..16).map(|i| i as f64 / 7.0).collect();
    Tensor::from_vec(v, &[4, 2, 2])
        .unwrap()
        .requires_grad_(true)
        .unwrap()
}

/// A named graph builder.
type Case = (&'static str, Box<dyn Fn() -> tapegrad::Result<()>>);

#[test]
fn graphs_with_in_place_writes_of_saved_tensors_are_freed() {
    COUNTED.with(|c| c.set(true));
    let cases: Vec<Case> = vec![
        (
            "y.mul_(y)",
            Box::new(|| {
                let y = leaf().mul(2.0)?;
                y.mul_(&y)?;
                Ok(())
            }),
        ),
        (
            "batched matmul output .mul_(itself)",
            Box::new(|| {
                let a = leaf();
                let y = a.matmul(&a)?;
                y.mul_(&y)?;
                Ok(())
            }),
        ),
        (
            "x.mul_(x * w)",
            Box::new(|| {
                let w = leaf();
                let x = w.mul(1.5)?;
                let z = x.mul(&w)?;
                x.mul_(&z)?;
                Ok(())
            }),
        ),
        (
            "x.add_(f(view of x))",
            Box::new(|| {
                let w = leaf();
                let x = w.mul(1.5)?;
                let v = x.narrow(0, 1, 2)?;
                let y = v.maximum(&w.narrow(0, 0, 2)?)?.sum()?;
                x.add_(&y)?;
                Ok(())
            }),
        ),
        (
            "view.copy_(saved base)",
            Box::new(|| {
                let w = leaf();
                let x = w.exp()?;
                let s = x.mul(&x)?;
                x.select(0, 0)?.copy_(&s.select(0, 1)?)?;
                Ok(())
            }),
        ),
        (
            "failing backward after the write",
            Box::new(|| {
                let y = leaf().mul(2.0)?;
                y.mul_(&y)?;
                let e = y.sum()?.backward().unwrap_err();
                assert_eq!(e.kind(), tapegrad::ErrorKind::SavedTensorModified);
                Ok(())
            }),
        ),
    ];
    for (name, f) in &cases {
        assert_eq!(growth(f), 0, "{name}: bytes leaked per run");
    }

    // The interp fuzz target's random programs (in-place, aliasing, views, backward): live memory
    // stays flat. Before saved inputs were held weakly it grew by ~90 bytes per program.
    let (_, run) = fuzz_logic::TARGETS
        .iter()
        .find(|(n, _)| *n == "interp")
        .unwrap();
    let mut rng = fuzz_logic::input::Rng::new(12345);
    let mut program = || {
        let data = rng.bytes(400);
        run(&data);
    };
    for _ in 0..3000 {
        program();
    }
    let before = LIVE.load(Relaxed);
    for _ in 0..6000 {
        program();
    }
    let grew = LIVE.load(Relaxed) - before;
    assert!(grew < 64 * 1024, "6000 interp programs kept {grew} bytes");
}
