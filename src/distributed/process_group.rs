//! [`ProcessGroup`]: this process's place in an MPI job (rank, world size, sub-groups) and the
//! one communication thread that makes every MPI call.
//!
//! MPI is initialised on a dedicated thread (`tapegrad-mpi`, thread level `Funneled`: only that
//! thread calls MPI), which runs submitted jobs one after the other, as PyTorch's MPI backend
//! does. A collective copies its tensor's elements out, queues a job and returns a [`Work`]
//! handle; the caller keeps computing (DDP keeps running backward) while the thread is inside
//! MPI, and [`Work::wait`] writes the result back. Jobs run in submission order, so every rank
//! must issue the collectives of a group in the same order (MPI's rule). MPI is finalised when
//! the last handle on the world group is dropped; it cannot be initialised again in the same
//! process.

use super::wire::Wire;
use crate::{Result, Tensor, bail};
use mpi::Threading;
use mpi::environment::Universe;
use mpi::topology::{Color, Communicator, SimpleCommunicator};
use parking_lot::Mutex;
use std::sync::mpsc::{Receiver, Sender, TryRecvError, channel};
use std::sync::{Arc, Weak};
use std::thread::JoinHandle;

/// A job for the communication thread: runs with every communicator made so far (index 0 is
/// the world).
type Job = Box<dyn FnOnce(&mut Vec<SimpleCommunicator>) + Send>;

/// The communication thread and its queue.
pub(crate) struct Engine {
    tx: Mutex<Option<Sender<Job>>>,
    thread: Mutex<Option<JoinHandle<()>>>,
}

impl Drop for Engine {
    fn drop(&mut self) {
        // closing the queue ends the thread's loop; it frees the sub-communicators and
        // finalises MPI before it returns
        self.tx.lock().take();
        if let Some(h) = self.thread.lock().take() {
            let _ = h.join();
        }
    }
}

/// The live engine (weak: the process groups own it) and whether MPI was already finalised.
static ENGINE: Mutex<(Option<Weak<Engine>>, bool)> = Mutex::new((None, false));

/// A group of processes that run collectives together: the world (every rank of the MPI job,
/// from [`ProcessGroup::init`]) or a sub-group ([`ProcessGroup::new_group`]). PyTorch's
/// `ProcessGroup` with the MPI backend. Cheap to clone (handles share the communication
/// thread).
///
/// Launch the program with `mpirun -np N program` (see the [module docs](super)); run alone it
/// is a world of one rank.
///
/// In-place collectives (`all_reduce_`, `broadcast_`) follow tapegrad's aliasing rules: the
/// result is written with `copy_` when the [`Work`] is waited on, so a non-contiguous
/// destination works, a view writes through to its base, the version is bumped once, and an
/// expanded (self-overlapping) destination is refused (`InvalidArgument`) before anything is
/// sent. They are not differentiable: a destination that requires grad is refused in grad mode
/// (`Unsupported`; use the autograd-aware [`all_reduce`](super::all_reduce), or call them under
/// `no_grad` as DDP does).
#[derive(Clone)]
pub struct ProcessGroup {
    engine: Arc<Engine>,
    comm: usize,
    rank: usize,
    size: usize,
    /// World ranks of the members, in group-rank order.
    ranks: Arc<Vec<usize>>,
}

impl std::fmt::Debug for ProcessGroup {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessGroup")
            .field("rank", &self.rank)
            .field("size", &self.size)
            .field("ranks", &self.ranks)
            .finish()
    }
}

impl ProcessGroup {
    /// The world group: initialises MPI on first use (PyTorch's
    /// `init_process_group("mpi")`); later calls return the same world while a handle lives.
    /// Errors (`Unsupported`) if MPI was already finalised in this process (the last handle
    /// was dropped) or cannot be initialised.
    pub fn init() -> Result<ProcessGroup> {
        let mut slot = ENGINE.lock();
        if let Some(engine) = slot.0.as_ref().and_then(Weak::upgrade) {
            return ProcessGroup::world_of(engine);
        }
        if slot.1 {
            bail!(
                Unsupported,
                "ProcessGroup::init",
                "MPI was finalised when the last process group was dropped and cannot be initialised again in this process"
            );
        }
        let (tx, rx) = channel::<Job>();
        let (ready_tx, ready_rx) = channel::<Option<(usize, usize)>>();
        let thread = std::thread::Builder::new()
            .name("tapegrad-mpi".into())
            .spawn(move || comm_thread(rx, ready_tx))
            .map_err(|e| {
                crate::Error::new(
                    crate::ErrorKind::Unsupported,
                    "ProcessGroup::init",
                    format!("cannot start the communication thread: {e}"),
                )
            })?;
        let Ok(Some((rank, size))) = ready_rx.recv() else {
            let _ = thread.join();
            bail!(
                Unsupported,
                "ProcessGroup::init",
                "MPI could not be initialised (already initialised outside tapegrad?)"
            );
        };
        tracing::debug!(rank, size, "MPI initialised");
        let engine = Arc::new(Engine {
            tx: Mutex::new(Some(tx)),
            thread: Mutex::new(Some(thread)),
        });
        slot.0 = Some(Arc::downgrade(&engine));
        slot.1 = true;
        Ok(ProcessGroup {
            engine,
            comm: 0,
            rank,
            size,
            ranks: Arc::new((0..size).collect()),
        })
    }

    fn world_of(engine: Arc<Engine>) -> Result<ProcessGroup> {
        let pg = ProcessGroup {
            engine,
            comm: 0,
            rank: 0,
            size: 0,
            ranks: Arc::new(Vec::new()),
        };
        let (rank, size) = pg
            .run(|c| (c.rank() as usize, c.size() as usize))?
            .recv_done()?;
        Ok(ProcessGroup {
            rank,
            size,
            ranks: Arc::new((0..size).collect()),
            ..pg
        })
    }

    /// This process's rank in the group (`0..world_size()`).
    pub fn rank(&self) -> usize {
        self.rank
    }

    /// Number of processes in the group.
    pub fn world_size(&self) -> usize {
        self.size
    }

    /// The world ranks of the members, in group-rank order.
    pub fn ranks(&self) -> &[usize] {
        &self.ranks
    }

    /// A sub-group of the members at `ranks` (ranks of this group; the new group's rank `i` is
    /// `ranks[i]`), PyTorch's `new_group(ranks)`. Collective: every member of this group calls
    /// it with the same list; members get `Some`, the others `None`. Errors
    /// (`InvalidArgument`, before any communication): an empty list, a repeated rank or one
    /// outside the group.
    pub fn new_group(&self, ranks: &[usize]) -> Result<Option<ProcessGroup>> {
        let mut seen = vec![false; self.size];
        for &r in ranks {
            if r >= self.size || std::mem::replace(&mut seen[r], true) {
                bail!(
                    InvalidArgument,
                    "new_group",
                    "ranks {:?} must be distinct ranks of a group of size {}",
                    ranks,
                    self.size
                );
            }
        }
        if ranks.is_empty() {
            bail!(
                InvalidArgument,
                "new_group",
                "a group needs at least one rank"
            );
        }
        let me = ranks.iter().position(|&r| r == self.rank);
        let comm = self.comm;
        let (tx, rx) = channel();
        self.submit(Box::new(move |comms: &mut Vec<SimpleCommunicator>| {
            let color = match me {
                Some(_) => Color::with_value(0),
                None => Color::undefined(),
            };
            let key = me.unwrap_or(0) as i32;
            let sub = comms[comm].split_by_color_with_key(color, key);
            let id = sub.map(|s| {
                comms.push(s);
                comms.len() - 1
            });
            let _ = tx.send(id);
        }))?;
        let id = Done(rx).recv_done()?;
        Ok(match (me, id) {
            (Some(rank), Some(id)) => Some(ProcessGroup {
                engine: self.engine.clone(),
                comm: id,
                rank,
                size: ranks.len(),
                ranks: Arc::new(ranks.iter().map(|&r| self.ranks[r]).collect()),
            }),
            _ => None,
        })
    }

    /// Queues `f` on the communication thread with this group's communicator.
    pub(crate) fn run<R: Send + 'static>(
        &self,
        f: impl FnOnce(&SimpleCommunicator) -> R + Send + 'static,
    ) -> Result<Done<R>> {
        let comm = self.comm;
        let (tx, rx) = channel();
        self.submit(Box::new(move |comms: &mut Vec<SimpleCommunicator>| {
            let _ = tx.send(f(&comms[comm]));
        }))?;
        Ok(Done(rx))
    }

    fn submit(&self, job: Job) -> Result<()> {
        let tx = self.engine.tx.lock();
        match tx.as_ref().map(|tx| tx.send(job)) {
            Some(Ok(())) => Ok(()),
            _ => bail!(
                Unsupported,
                "distributed",
                "the MPI communication thread has stopped"
            ),
        }
    }
}

/// The communication thread: initialises MPI, reports (rank, size), runs jobs until the queue
/// closes, then frees the communicators and finalises MPI.
fn comm_thread(rx: Receiver<Job>, ready: Sender<Option<(usize, usize)>>) {
    let Some((universe, _level)) = mpi::initialize_with_threading(Threading::Funneled) else {
        let _ = ready.send(None);
        return;
    };
    let universe: Universe = universe;
    let world = universe.world();
    let _ = ready.send(Some((world.rank() as usize, world.size() as usize)));
    let mut comms = vec![world];
    while let Ok(job) = rx.recv() {
        job(&mut comms);
    }
    drop(comms);
    drop(universe);
    tracing::debug!("MPI finalised");
}

/// The pending result of a job on the communication thread.
pub(crate) struct Done<R>(Receiver<R>);

impl<R> Done<R> {
    pub(crate) fn into_receiver(self) -> Receiver<R> {
        self.0
    }

    /// Blocks until the job has run.
    pub(crate) fn recv_done(self) -> Result<R> {
        match self.0.recv() {
            Ok(r) => Ok(r),
            Err(_) => bail!(
                Unsupported,
                "distributed",
                "the MPI communication thread stopped before the collective ran"
            ),
        }
    }
}

/// A collective in flight (PyTorch's `Work`, returned by the `_async` forms): [`wait`](Work::wait)
/// blocks until it has run and writes its result (into the destination of an in-place
/// collective; as the returned value otherwise). Dropping a `Work` without waiting still runs
/// the collective but discards its result.
#[must_use = "a collective's result is only written by `wait`"]
pub struct Work<T = ()> {
    rx: Receiver<Wire>,
    ready: Option<Wire>,
    finish: Box<dyn FnOnce(Wire) -> Result<T> + Send>,
}

impl<T> std::fmt::Debug for Work<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Work")
            .field("ready", &self.ready.is_some())
            .finish()
    }
}

impl<T> Work<T> {
    pub(crate) fn new(
        rx: Receiver<Wire>,
        finish: impl FnOnce(Wire) -> Result<T> + Send + 'static,
    ) -> Work<T> {
        Work {
            rx,
            ready: None,
            finish: Box::new(finish),
        }
    }

    /// True once the communication is done (the result is written by [`wait`](Work::wait)).
    pub fn is_completed(&mut self) -> bool {
        if self.ready.is_none() {
            match self.rx.try_recv() {
                Ok(w) => self.ready = Some(w),
                Err(TryRecvError::Empty) => return false,
                Err(TryRecvError::Disconnected) => return true,
            }
        }
        true
    }

    /// Waits for the communication and writes its result.
    pub fn wait(self) -> Result<T> {
        let w = match self.ready {
            Some(w) => w,
            None => Done(self.rx).recv_done()?,
        };
        (self.finish)(w)
    }
}

/// Waits for every handle, in order (the first error is returned after all have finished).
pub fn wait_all<T>(works: impl IntoIterator<Item = Work<T>>) -> Result<Vec<T>> {
    let mut out = Vec::new();
    let mut err = None;
    for w in works {
        match w.wait() {
            Ok(v) => out.push(v),
            Err(e) => err = err.or(Some(e)),
        }
    }
    err.map_or(Ok(out), Err)
}

/// A tensor's elements and geometry, taken when a collective is issued.
pub(crate) struct Snapshot {
    pub(crate) wire: Wire,
    pub(crate) shape: Vec<usize>,
    pub(crate) dtype: crate::DType,
}

impl Snapshot {
    pub(crate) fn of(t: &Tensor) -> Result<Snapshot> {
        Ok(Snapshot {
            wire: Wire::from_tensor(t)?,
            shape: t.shape(),
            dtype: t.dtype(),
        })
    }
}
