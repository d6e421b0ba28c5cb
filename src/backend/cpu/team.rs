//! The kernel team: a fork/join pool of spinning worker threads for short data-parallel kernels
//! (elementwise ranges, full sums, GEMM panels), in the manner of an OpenMP parallel region.
//!
//! Why not rayon here: a rayon worker that has gone to sleep needs a futex wake-up, which on a
//! virtual machine takes tens of microseconds (37-58 us median measured on the 2-vCPU CI
//! machine, p90 above 1 ms). A 4M-element add takes about 100 us, so the calling thread had
//! usually finished both halves itself before the worker woke: rayon bought no parallelism on
//! exactly the kernels that are memory bound and gain 2x from a second core. Team workers
//! instead keep polling for a while after each job (pure spinning for a few microseconds, then
//! polling with `yield_now` so a busy core is handed to whoever needs it), and only park after
//! the spin time without work ([`DEFAULT_SPIN`], or what `tapegrad::set_spin_time` chose; zero
//! parks at once). A job published while a worker spins starts on it within nanoseconds.
//!
//! Size: the team has `tapegrad::get_num_threads() - 1` workers taking part (the caller is the
//! last thread). Workers are spawned when the count first needs them and never exit; lowering
//! the count parks the workers above it (they take no part in later jobs), raising it wakes them.
//!
//! One job runs at a time. A call made while the team is busy (from another thread, or nested
//! inside a part) runs all its parts on the calling thread, so the team can never deadlock.
//!
//! Schedule: static blocks with stealing. Of `parts` parts and `threads` threads, thread `t`
//! (the caller is 0, worker slot `i` is `i + 1`) first claims its own block
//! `t·parts/threads ..`, then walks on through the others' blocks, claiming what is left. So
//! when every thread is on time, part `p` runs on the same core job after job, as an OpenMP
//! static schedule does: consecutive kernels over the same tensor split it the same way and
//! each core finds its half in its own cache. (Claiming parts first come first served instead
//! handed a 16 MB in-place add to a different core each iteration: `add_inplace_f32_4M` ran at
//! 270-300 GB/s where the same loop with stable halves runs at 375-390.) A worker that is late
//! (parked, descheduled) just means the others claim its block.
//!
//! The shared state is one 64-bit word, `epoch (32) | parts (16) | threads (16)`, which tells
//! workers a job exists, and a bitmap with one bit per part, set when the part is claimed. A
//! claim is a `fetch_or` that finds its bit clear. Between jobs every bit is set; publishing a
//! job clears exactly the bits of its parts. So a successful claim, even by a worker still
//! holding the previous job's word, is a claim of a part of the live job, and proves the job is
//! live: the caller does not return, and so the closure it lent stays valid, until every
//! claimed part has finished.

use parking_lot::Mutex;
use std::any::Any;
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicBool, AtomicPtr, AtomicU8, AtomicU64, AtomicUsize, Ordering};
use std::thread::Thread;
use std::time::{Duration, Instant};

/// How long an idle worker keeps polling for the next job before it parks, by default.
pub(crate) const DEFAULT_SPIN: Duration = Duration::from_micros(2000);
/// The spin time in nanoseconds (`tapegrad::set_spin_time`); read by idle workers.
static SPIN_NS: AtomicU64 = AtomicU64::new(DEFAULT_SPIN.as_nanos() as u64);
/// Most workers the team can have (the thread count is clamped to this plus the caller).
pub(crate) const MAX_WORKERS: usize = 1023;
/// Polls of pure spinning before an idle worker starts yielding its core between polls.
const PURE_SPINS: u32 = 1 << 12;
/// Most parts one job may have (the part fields of the word are 16 bits).
pub(crate) const MAX_PARTS: usize = u16::MAX as usize;

const AWAKE: u8 = 0;
const PARKED: u8 = 1;

/// A part function lent by the caller for the duration of one job.
type PartFn<'a> = &'a (dyn Fn(usize) + Sync);

struct Team {
    /// `epoch << 32 | parts << 16 | threads`.
    word: AtomicU64,
    /// Bit `p` (of word `p / 64`) is set once part `p` of the live job is claimed; all set
    /// between jobs.
    claimed: Box<[AtomicU64]>,
    /// Points at the caller's `PartFn` while a job is live.
    job: AtomicPtr<PartFn<'static>>,
    /// Parts finished (run to completion or panicked) in the live job.
    done: AtomicUsize,
    /// The first panic payload of the live job.
    panic: Mutex<Option<Box<dyn Any + Send>>>,
    /// Held by the thread whose job is live.
    busy: AtomicBool,
    /// Per worker slot: [`AWAKE`] or [`PARKED`].
    state: Vec<AtomicU8>,
    /// Per worker slot: its thread, once spawned.
    threads: Vec<OnceLock<Thread>>,
    /// Workers that take part in jobs (slots `0..active`); the others stay parked.
    active: AtomicUsize,
    /// Workers spawned so far (slots `0..spawned`); grows under `spawn_lock`.
    spawned: AtomicUsize,
    spawn_lock: Mutex<()>,
}

fn parts_of(w: u64) -> usize {
    ((w >> 16) & 0xFFFF) as usize
}

fn threads_of(w: u64) -> usize {
    (w & 0xFFFF) as usize
}

impl Team {
    /// A team without workers and without a live job (every part bit set).
    fn new() -> Team {
        Team {
            word: AtomicU64::new(0),
            claimed: (0..=MAX_PARTS / 64)
                .map(|_| AtomicU64::new(u64::MAX))
                .collect(),
            job: AtomicPtr::new(std::ptr::null_mut()),
            done: AtomicUsize::new(0),
            panic: Mutex::new(None),
            busy: AtomicBool::new(false),
            state: (0..MAX_WORKERS).map(|_| AtomicU8::new(AWAKE)).collect(),
            threads: (0..MAX_WORKERS).map(|_| OnceLock::new()).collect(),
            active: AtomicUsize::new(0),
            spawned: AtomicUsize::new(0),
            spawn_lock: Mutex::new(()),
        }
    }

    /// Claims and runs parts of the live job until none is left, as thread `t` (0 is the
    /// caller): its own block first, then the rest in order. Returns the word it started from.
    fn work(&self, t: usize) -> u64 {
        let w = self.word.load(Ordering::Acquire);
        let (parts, threads) = (parts_of(w), threads_of(w).max(1));
        let start = (t % threads) * parts / threads;
        for (a, b) in [(start, parts), (0, start)] {
            let mut p = a;
            while p < b {
                let (slot, bit) = (&self.claimed[p / 64], p % 64);
                // skip the run of already claimed parts from `p` on within this bitmap word
                let taken = (slot.load(Ordering::Acquire) >> bit).trailing_ones() as usize;
                if taken > 0 {
                    p += taken;
                    continue;
                }
                if slot.fetch_or(1 << bit, Ordering::AcqRel) & (1 << bit) == 0 {
                    self.run_part(p);
                }
                p += 1;
            }
        }
        w
    }

    /// Runs claimed part `p` of the live job and counts it done.
    fn run_part(&self, p: usize) {
        // SAFETY: `p` was just claimed: its bit was cleared by the live job's publication (bits
        // are all set between jobs), and that job's caller waits for `done` to count this part,
        // so the `PartFn` it stored before clearing the bits is still borrowed on its stack.
        let f: PartFn<'_> = unsafe { *self.job.load(Ordering::Acquire) };
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| f(p))) {
            let mut first = self.panic.lock();
            match *first {
                None => *first = Some(e),
                // (a second payload is leaked, not dropped: its Drop could panic
                // and kill this thread before `done` counts the part)
                Some(_) => std::mem::forget(e),
            }
        }
        self.done.fetch_add(1, Ordering::AcqRel);
    }

    fn worker(&self, me: usize) {
        // (0 is the word before the first job: a job published before this thread started
        // is picked up too)
        let mut seen = 0;
        loop {
            // wait for a word with unclaimed parts: spin, then poll politely, then park
            let mut polls = 0u32;
            let mut since: Option<Instant> = None;
            loop {
                let w = self.word.load(Ordering::Acquire);
                let on = me < self.active.load(Ordering::Relaxed);
                if on && w != seen && parts_of(w) > 0 {
                    break;
                }
                seen = w;
                let spin = Duration::from_nanos(SPIN_NS.load(Ordering::Relaxed));
                polls = polls.wrapping_add(1);
                let park = if !on || spin.is_zero() {
                    true
                } else if polls < PURE_SPINS {
                    std::hint::spin_loop();
                    continue;
                } else {
                    std::thread::yield_now();
                    let t0 = *since.get_or_insert_with(Instant::now);
                    polls.is_multiple_of(64) && t0.elapsed() >= spin
                };
                if park {
                    self.state[me].store(PARKED, Ordering::SeqCst);
                    // (a resize unparks every worker after storing `active`, and a job is
                    // published before its caller looks for parked workers: neither is lost)
                    if self.word.load(Ordering::SeqCst) == seen
                        || me >= self.active.load(Ordering::SeqCst)
                    {
                        std::thread::park();
                    }
                    self.state[me].store(AWAKE, Ordering::SeqCst);
                    polls = 0;
                    since = None;
                }
            }
            seen = self.work(me + 1);
        }
    }

    /// Makes `f` the live job of `parts` parts split in `threads` blocks: stores it, clears its
    /// parts' bits, then publishes the word. The caller must claim parts (or wait for them)
    /// until `done` counts all, keeping `f` borrowed that long.
    fn publish(&self, parts: usize, f: &PartFn<'_>, threads: usize) {
        let old = self.word.load(Ordering::Relaxed);
        let epoch = (old >> 32).wrapping_add(1) & 0xFFFF_FFFF;
        // (the lifetime is erased: the pointer is only dereferenced after a claim of one of this
        // job's parts, and the caller returns only after all of them finished)
        let fp: *const PartFn<'_> = f;
        self.job
            .store(fp as *mut PartFn<'static>, Ordering::Relaxed);
        self.done.store(0, Ordering::Relaxed);
        // clear the bits of parts `0..parts` (the rest stay set), releasing `job` and `done`
        for (k, slot) in self.claimed.iter().enumerate().take(parts.div_ceil(64)) {
            let free = (parts - k * 64).min(64);
            let set = if free == 64 { 0 } else { u64::MAX << free };
            slot.store(set, Ordering::Release);
        }
        self.word.store(
            epoch << 32 | (parts as u64) << 16 | threads as u64,
            Ordering::SeqCst,
        );
    }

    /// Runs `f(0) .. f(parts - 1)` on the team and the calling thread; returns when all ran.
    fn run(&'static self, parts: usize, f: PartFn<'_>) {
        let active = self.active.load(Ordering::SeqCst);
        self.publish(parts, &f, active + 1);
        for (s, t) in self.state.iter().zip(&self.threads).take(active) {
            if s.load(Ordering::SeqCst) == PARKED
                && let Some(t) = t.get()
            {
                t.unpark();
            }
        }
        self.work(0);
        let mut polls = 0u32;
        while self.done.load(Ordering::Acquire) < parts {
            polls = polls.wrapping_add(1);
            if polls < PURE_SPINS {
                std::hint::spin_loop();
            } else {
                std::thread::yield_now();
            }
        }
        let p = self.panic.lock().take();
        self.busy.store(false, Ordering::Release);
        if let Some(p) = p {
            resume_unwind(p);
        }
    }
}

/// The process-wide team: its slots exist from the first use, its threads as the thread count
/// needs them ([`resize`]).
fn team() -> &'static Team {
    static TEAM: OnceLock<&'static Team> = OnceLock::new();
    TEAM.get_or_init(|| {
        let t: &'static Team = Box::leak(Box::new(Team::new()));
        t.resize(super::threads::num_threads());
        t
    })
}

impl Team {
    /// Lets `threads - 1` workers (at most [`MAX_WORKERS`]) take part in later jobs, spawning
    /// the missing ones; fewer if a thread cannot be spawned (the caller then does more parts).
    fn resize(&'static self, threads: usize) {
        let want = threads.saturating_sub(1).min(MAX_WORKERS);
        let _g = self.spawn_lock.lock();
        let mut have = self.spawned.load(Ordering::Acquire);
        while have < want {
            let spawned = std::thread::Builder::new()
                .name(format!("tapegrad-team-{have}"))
                .spawn(move || self.worker(have));
            match spawned {
                Ok(h) => {
                    let _ = self.threads[have].set(h.thread().clone());
                    have += 1;
                    self.spawned.store(have, Ordering::Release);
                }
                Err(e) => {
                    tracing::warn!("kernel team: could not spawn worker {have}: {e}");
                    break;
                }
            }
        }
        self.active.store(want.min(have), Ordering::SeqCst);
        // every worker rechecks `active`: the ones above it park, the ones below it poll
        for t in self.threads.iter().take(have) {
            if let Some(t) = t.get() {
                t.unpark();
            }
        }
    }
}

/// Applies a new thread count to the team (workers above it park, missing ones are spawned).
pub(crate) fn resize(threads: usize) {
    team().resize(threads);
}

/// Sets how long idle workers poll before parking (zero: park right after each job).
pub(crate) fn set_spin(d: Duration) {
    SPIN_NS.store(d.as_nanos().min(u64::MAX as u128) as u64, Ordering::Relaxed);
}

/// The idle workers' spin time.
pub(crate) fn spin() -> Duration {
    Duration::from_nanos(SPIN_NS.load(Ordering::Relaxed))
}

/// Workers spawned so far and how many of them are parked now (a test hook).
#[cfg(test)]
pub(crate) fn parked() -> (usize, usize) {
    let t = team();
    let n = t.spawned.load(Ordering::Acquire);
    let p = t.state[..n]
        .iter()
        .filter(|s| s.load(Ordering::SeqCst) == PARKED)
        .count();
    (n, p)
}

/// Number of threads a job can use (the caller included); 1 when there is no team.
pub(crate) fn size() -> usize {
    team().active.load(Ordering::Relaxed) + 1
}

/// Parts per thread for evenly divisible work: a few, so that when one thread is descheduled
/// (a busy host) the others claim its unstarted parts instead of waiting for a whole part.
pub(crate) const PARTS_PER_THREAD: usize = 4;

/// Runs `f(i)` for every `i < parts`, split over the team and the calling thread, and returns
/// when all have run. Runs them all on the caller when `parts < 2`, when there is no team, when
/// the team is busy with another job, or when called from a rayon worker (whose caller may hold
/// locks, and whose pool already owns the cores). A panic in a part is re-raised here once no
/// part runs any more (on the team every part still runs; on the calling thread alone the
/// parts after the panicking one are skipped).
pub(crate) fn run(parts: usize, f: &(dyn Fn(usize) + Sync)) {
    let team = if !(2..=MAX_PARTS).contains(&parts) || rayon::current_thread_index().is_some() {
        None
    } else {
        Some(team()).filter(|t| t.active.load(Ordering::Relaxed) > 0)
    };
    match team {
        Some(t)
            if t.busy
                .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
                .is_ok() =>
        {
            t.run(parts, f)
        }
        _ => (0..parts).for_each(f),
    }
}

/// `f(i)` for every `i < parts`, run as by [`run`]; the results in part order.
pub(crate) fn map<T: Send + Sync>(parts: usize, f: &(dyn Fn(usize) -> T + Sync)) -> Vec<T> {
    let slots: Vec<OnceLock<T>> = (0..parts).map(|_| OnceLock::new()).collect();
    run(parts, &|i| {
        let _ = slots[i].set(f(i));
    });
    slots
        .into_iter()
        .map(|s| s.into_inner().expect("internal: every part ran"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicU32;

    #[test]
    fn every_part_runs_exactly_once() {
        for parts in [0, 1, 2, 3, 7, 64, 1000] {
            for _ in 0..200 {
                let hits: Vec<AtomicU32> = (0..parts).map(|_| AtomicU32::new(0)).collect();
                run(parts, &|i| {
                    hits[i].fetch_add(1, Ordering::Relaxed);
                });
                assert!(hits.iter().all(|h| h.load(Ordering::Relaxed) == 1));
            }
        }
    }

    #[test]
    fn each_thread_claims_its_own_block_first_then_steals_in_order() {
        // a lone thread of a job split in blocks for `threads`: its block, then the rest
        for (parts, threads, t, want) in [
            (8, 2, 0, vec![0, 1, 2, 3, 4, 5, 6, 7]),
            (8, 2, 1, vec![4, 5, 6, 7, 0, 1, 2, 3]),
            (7, 3, 2, vec![4, 5, 6, 0, 1, 2, 3]),
            (130, 2, 1, (65..130).chain(0..65).collect()),
        ] {
            let team = Team::new();
            let order = Mutex::new(Vec::new());
            let f = |p: usize| order.lock().push(p);
            let f: PartFn<'_> = &f;
            team.publish(parts, &f, threads);
            team.work(t);
            assert_eq!(
                *order.lock(),
                want,
                "{parts} parts, {threads} threads, thread {t}"
            );
            assert_eq!(team.done.load(Ordering::Relaxed), parts);
            // claimed parts stay claimed: a late second pass finds nothing
            team.work(0);
            assert_eq!(order.lock().len(), parts);
            // and between jobs every bit is set again
            assert!(
                team.claimed
                    .iter()
                    .all(|w| w.load(Ordering::Relaxed) == u64::MAX)
            );
        }
    }

    #[test]
    fn map_returns_results_in_part_order() {
        for parts in [0, 1, 2, 9, 300] {
            let v = map(parts, &|i| i * i);
            assert_eq!(v, (0..parts).map(|i| i * i).collect::<Vec<_>>());
        }
    }

    #[test]
    fn concurrent_and_nested_callers_fall_back_to_their_own_thread() {
        let total = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..300 {
                        run(4, &|_| {
                            run(3, &|_| {
                                total.fetch_add(1, Ordering::Relaxed);
                            })
                        });
                    }
                });
            }
        });
        assert_eq!(total.load(Ordering::Relaxed), 4 * 300 * 12);
    }

    #[test]
    fn a_panicking_part_is_reraised_once_no_part_runs() {
        let finished = AtomicU32::new(0);
        let r = std::panic::catch_unwind(AssertUnwindSafe(|| {
            run(8, &|i| {
                if i == 5 {
                    panic!("part five");
                }
                std::thread::sleep(Duration::from_millis(1));
                finished.fetch_add(1, Ordering::Relaxed);
            })
        }));
        let msg = r.expect_err("the panic must reach the caller");
        assert_eq!(msg.downcast_ref::<&str>(), Some(&"part five"));
        // nothing still runs once the panic has reached the caller
        let seen = finished.load(Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(20));
        assert_eq!(finished.load(Ordering::Relaxed), seen);
        // the team is usable again
        let n = AtomicU32::new(0);
        run(8, &|_| {
            n.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(n.load(Ordering::Relaxed), 8);
    }

    #[test]
    fn parked_workers_are_woken() {
        // long enough for every worker to park
        std::thread::sleep(spin() * 3);
        let hits = AtomicU32::new(0);
        run(64, &|_| {
            hits.fetch_add(1, Ordering::Relaxed);
        });
        assert_eq!(hits.load(Ordering::Relaxed), 64);
    }
}

/// An output buffer's base pointer shared by the parts of one parallel kernel
/// (`gather_dim`, `index_select`, `nonzero_coords`, `bmm`; `bmm` also shares its operands'
/// pointers this way, only ever read). Whoever builds one guarantees that the parts write
/// disjoint elements of a buffer borrowed exclusively for the whole call.
#[derive(Clone, Copy)]
pub(super) struct SharedOut<T>(pub(super) *mut T);
// SAFETY: the parts write disjoint elements of a buffer borrowed exclusively for the whole
// call (the constructor's contract above), so sharing the pointer across threads races nothing.
unsafe impl<T> Send for SharedOut<T> {}
// SAFETY: as above.
unsafe impl<T> Sync for SharedOut<T> {}

impl<T> SharedOut<T> {
    /// The pointer (a method: a closure calling it captures the whole `Sync` wrapper).
    pub(super) fn ptr(self) -> *mut T {
        self.0
    }
}
