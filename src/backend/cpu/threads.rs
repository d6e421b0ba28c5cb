//! The CPU thread count and the crate's own rayon pool.
//!
//! One setting governs all parallelism: [`num_threads`] (`tapegrad::set_num_threads`, default
//! `RAYON_NUM_THREADS` or all cores, read once). The kernel team ([`super::team`]) lets that
//! many threads (the caller included) take part in a job; the kernels written with rayon run
//! inside [`install`], on a pool of exactly that many threads that the crate owns (rayon's
//! global pool cannot be resized, and a host application may use it for its own work). The
//! pool is rebuilt lazily by the first kernel after a change; with one thread there is no pool
//! and no team: every kernel runs on the calling thread.

use parking_lot::RwLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, OnceLock};

/// The thread count (0 until first read).
static THREADS: AtomicUsize = AtomicUsize::new(0);

/// The pool and the thread count it was built for.
static POOL: RwLock<Option<(usize, Arc<rayon::ThreadPool>)>> = RwLock::new(None);

/// `RAYON_NUM_THREADS` if set to a positive number, else the number of cores (read once).
fn default_threads() -> usize {
    static DEFAULT: OnceLock<usize> = OnceLock::new();
    *DEFAULT.get_or_init(|| {
        std::env::var("RAYON_NUM_THREADS")
            .ok()
            .and_then(|v| v.trim().parse::<usize>().ok())
            .filter(|&n| n > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// The thread count kernels may use (the calling thread included).
pub(crate) fn num_threads() -> usize {
    match THREADS.load(Ordering::Relaxed) {
        0 => {
            let n = default_threads();
            // (a concurrent `set_num_threads` wins)
            let _ = THREADS.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed);
            THREADS.load(Ordering::Relaxed)
        }
        n => n,
    }
}

/// Sets the thread count (`n >= 1`, checked by the caller): later kernels use at most `n`
/// threads.
pub(crate) fn set_num_threads(n: usize) {
    THREADS.store(n, Ordering::Relaxed);
    super::team::resize(n);
}

/// Whether rayon-based kernels should split their work: more than one thread is allowed.
pub(crate) fn parallel() -> bool {
    num_threads() > 1
}

/// Runs `f` on the crate's pool of [`num_threads`] threads, so that the rayon parallel
/// iterators inside it use that pool (directly when already on it). Call it only when
/// [`parallel`]: with one thread the kernels take their serial branch instead.
pub(crate) fn install<R: Send>(f: impl FnOnce() -> R + Send) -> R {
    let n = num_threads();
    let pool = {
        let p = POOL.read();
        match &*p {
            Some((m, pool)) if *m == n => Some(pool.clone()),
            _ => None,
        }
    };
    let pool = match pool {
        Some(p) => p,
        None => {
            let mut w = POOL.write();
            match &*w {
                Some((m, pool)) if *m == n => pool.clone(),
                _ => {
                    let built = rayon::ThreadPoolBuilder::new()
                        .num_threads(n)
                        .thread_name(|i| format!("tapegrad-rayon-{i}"))
                        .build();
                    match built {
                        Ok(p) => {
                            let p = Arc::new(p);
                            *w = Some((n, p.clone()));
                            p
                        }
                        Err(e) => {
                            tracing::warn!("tapegrad: could not build a {n}-thread pool: {e}");
                            drop(w);
                            return f();
                        }
                    }
                }
            }
        }
    };
    if pool.current_thread_index().is_some() {
        f()
    } else {
        pool.install(f)
    }
}

/// A closure moved to a pool thread although it captures raw pointers (a gemm call): whoever
/// builds one runs it inside [`install`], which returns only after the closure did, while the
/// buffers behind the pointers stay borrowed and locked by the caller.
pub(crate) struct AssertSend<F>(pub(crate) F);
// SAFETY: the closure runs exactly once, inside `install`, while its caller blocks holding the
// borrows its pointers came from (the constructor's contract above), so no access outlives them
// or races the caller.
unsafe impl<F> Send for AssertSend<F> {}
