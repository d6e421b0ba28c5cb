//! Threads when embedded: the CPU thread count ([`set_num_threads`], [`get_num_threads`], with
//! PyTorch's names and meaning) and how long idle kernel workers spin ([`set_spin_time`]).
//! The mechanism (the kernel team, the crate's rayon pool) is in `backend/cpu/team.rs` and
//! `backend/cpu/threads.rs`.

use crate::backend::cpu::{team, threads};
use crate::{Result, bail};
use std::time::Duration;

/// Sets the number of threads CPU kernels use, the calling thread included (PyTorch's
/// `torch.set_num_threads`). Kernels started after the call use at most `n` threads; `1` runs
/// every kernel on the calling thread (no worker, no pool). Raising the count again wakes (or
/// spawns) the workers. The count governs both the kernel team and the crate's own rayon pool
/// (rayon's global pool is left to the host application). The default is `RAYON_NUM_THREADS`
/// if set, else the number of cores, read once.
///
/// Results do not depend on the count, except full reductions of large tensors (`sum()` of
/// over 2^16 elements and the like), whose floating-point summation tree follows the thread
/// count as in PyTorch.
///
/// # Errors
/// `InvalidArgument` if `n` is 0 ("set_num_threads expects a positive integer").
///
/// ```
/// tapegrad::set_num_threads(2)?;
/// assert_eq!(tapegrad::get_num_threads(), 2);
/// assert!(tapegrad::set_num_threads(0).is_err());
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn set_num_threads(n: usize) -> Result<()> {
    if n == 0 {
        bail!(
            InvalidArgument,
            "set_num_threads",
            "set_num_threads expects a positive integer"
        );
    }
    threads::set_num_threads(n);
    Ok(())
}

/// The number of threads CPU kernels use (PyTorch's `torch.get_num_threads`): the last
/// [`set_num_threads`], else `RAYON_NUM_THREADS` or the number of cores.
pub fn get_num_threads() -> usize {
    threads::num_threads()
}

/// Sets how long an idle kernel worker keeps polling for the next kernel before it parks
/// (default 2 ms). Polling lets back-to-back kernels start on the workers at once (a parked
/// thread takes tens of microseconds to wake); a host application that runs its own work
/// between kernels can shorten it, or pass [`Duration::ZERO`] so the workers park right after
/// each kernel and use no CPU between kernels. Workers yield their core while they poll,
/// after a few microseconds of pure spinning.
///
/// ```
/// use std::time::Duration;
/// tapegrad::set_spin_time(Duration::ZERO);
/// assert_eq!(tapegrad::get_spin_time(), Duration::ZERO);
/// tapegrad::set_spin_time(Duration::from_millis(2));
/// ```
pub fn set_spin_time(d: Duration) {
    team::set_spin(d);
}

/// The idle kernel workers' spin time ([`set_spin_time`]).
pub fn get_spin_time() -> Duration {
    team::spin()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{DType, Tensor};
    use parking_lot::Mutex;
    use std::time::Instant;

    /// Serializes the tests that change the process-wide settings.
    static SETTINGS: Mutex<()> = Mutex::new(());

    /// Outputs of a few kernels large enough to run in parallel, as bits.
    fn kernels() -> Vec<Vec<u64>> {
        let n = 1 << 18;
        let v: Vec<f64> = (0..n).map(|i| (i as f64 * 1e-3).sin()).collect();
        let a = Tensor::from_vec(v, &[n]).unwrap();
        let b = a.reshape(&[512, 512]).unwrap();
        let bits = |t: &Tensor| -> Vec<u64> {
            t.to_dtype(DType::F64)
                .unwrap()
                .to_vec::<f64>()
                .unwrap()
                .iter()
                .map(|v| v.to_bits())
                .collect()
        };
        vec![
            bits(&a.exp().unwrap().add(&a).unwrap()),
            bits(&b.matmul(&b.t().unwrap()).unwrap()),
            bits(&b.t().unwrap().contiguous().unwrap()),
            bits(&b.softmax(-1).unwrap()),
            bits(&b.sum_dims(&[0], false).unwrap()),
            bits(
                &b.to_dtype(DType::F32)
                    .unwrap()
                    .matmul(&b.to_dtype(DType::F32).unwrap())
                    .unwrap(),
            ),
        ]
    }

    #[test]
    fn results_do_not_depend_on_the_thread_count() {
        let _g = SETTINGS.lock();
        let before = get_num_threads();
        set_num_threads(1).unwrap();
        let one = kernels();
        for n in [2, 3, 1, 3] {
            set_num_threads(n).unwrap();
            assert_eq!(get_num_threads(), n);
            assert_eq!(team::size(), n);
            assert!(kernels() == one, "{n} threads differ from one");
        }
        set_num_threads(before).unwrap();
    }

    #[test]
    fn zero_threads_is_refused_and_changes_nothing() {
        let _g = SETTINGS.lock();
        let before = get_num_threads();
        let e = set_num_threads(0).unwrap_err();
        assert_eq!(e.kind(), crate::ErrorKind::InvalidArgument);
        assert_eq!(e.message(), "set_num_threads expects a positive integer");
        assert_eq!(get_num_threads(), before);
    }

    #[test]
    fn one_thread_runs_on_the_caller() {
        let _g = SETTINGS.lock();
        let before = get_num_threads();
        set_num_threads(1).unwrap();
        let me = std::thread::current().id();
        let seen = Mutex::new(Vec::new());
        team::run(16, &|_| seen.lock().push(std::thread::current().id()));
        assert!(seen.lock().iter().all(|&t| t == me));
        set_num_threads(before).unwrap();
    }

    #[test]
    fn with_zero_spin_the_workers_park_after_a_kernel() {
        let _g = SETTINGS.lock();
        let (before, spin) = (get_num_threads(), get_spin_time());
        set_num_threads(3).unwrap();
        set_spin_time(Duration::ZERO);
        let x = Tensor::ones(&[1 << 20], DType::F32).unwrap();
        x.add(&x).unwrap();
        // workers park as soon as they find no part left: wait for that state (bounded)
        let t0 = Instant::now();
        let mut last = team::parked();
        while last.1 < last.0 && t0.elapsed() < Duration::from_secs(10) {
            std::thread::yield_now();
            last = team::parked();
        }
        assert!(last.0 >= 2, "3 threads spawn two workers: {last:?}");
        assert_eq!(last.1, last.0, "every worker parked: {last:?}");
        // and they still take part in the next kernel
        let y = x.add(&x).unwrap();
        assert_eq!(
            y.sum().unwrap().item::<f32>().unwrap(),
            2.0 * (1 << 20) as f32
        );
        set_spin_time(spin);
        set_num_threads(before).unwrap();
    }
}
