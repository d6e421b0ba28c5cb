//! Activation checkpointing ([`checkpoint`], PyTorch's `torch.utils.checkpoint` with
//! `use_reentrant=False`): the checkpointed function runs once in the forward, recording its
//! graph as usual, but every tensor its ops save for backward is replaced by a placeholder
//! (the saved tensor's shape and dtype over no data, sharing its version counter, so the
//! in-place checks still apply). The first backward step that unpacks one reruns the function
//! on the saved inputs with the random state of the first run restored (dropout draws the same
//! masks), collecting the tensors its ops save in the same order; each placeholder then reads
//! its recomputed tensor, which is freed when the node that saved it releases its saved tensors.
//!
//! Saves are routed by a per-thread stack of modes: the forward of a checkpoint pushes
//! `Defer(frame)`, a recomputation pushes `Capture`. The hot path (`on_save` with the stack
//! empty) is one thread-local read.

use super::saved::SavedTensor;
use super::{enable_grad, is_grad_enabled};
use crate::random::{RngState, get_rng_state, set_rng_state};
use crate::{Result, Tensor, bail};
use parking_lot::Mutex;
use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The checkpointed function, owned by its frame (the graph outlives the call).
type CheckpointFn = dyn Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync;

/// Where tensors saved on this thread go.
enum Mode {
    /// The forward of a checkpoint: saves become placeholders of this frame.
    Defer(Arc<Frame>),
    /// A recomputation: the tensors saved are collected here, in order.
    Capture(Rc<RefCell<Vec<Tensor>>>),
}

thread_local! {
    static MODES: RefCell<Vec<Mode>> = const { RefCell::new(Vec::new()) };
    /// `MODES` is not empty (read on every save).
    static ACTIVE: Cell<bool> = const { Cell::new(false) };
}

/// Pops the mode it pushed when dropped (also on an error or panic in the function).
struct ModeGuard;

impl ModeGuard {
    fn push(m: Mode) -> ModeGuard {
        MODES.with(|s| s.borrow_mut().push(m));
        ACTIVE.with(|a| a.set(true));
        ModeGuard
    }
}

impl Drop for ModeGuard {
    fn drop(&mut self) {
        let empty = MODES.with(|s| {
            let mut s = s.borrow_mut();
            s.pop();
            s.is_empty()
        });
        ACTIVE.with(|a| a.set(!empty));
    }
}

/// One checkpointed call: what a recomputation needs, and its results.
pub(crate) struct Frame {
    f: Box<CheckpointFn>,
    /// The inputs, saved (version-checked at recomputation, like PyTorch's saved inputs), with
    /// whether each required grad.
    inputs: Vec<(SavedTensor, bool)>,
    rng: RngState,
    /// Tensors deferred during the forward.
    saves: AtomicUsize,
    /// The recomputed saved tensors (after the first unpack), each dropped when its
    /// placeholder is.
    recomputed: Mutex<Option<Vec<Option<Tensor>>>>,
}

/// A saved tensor deferred to a frame: its number in the frame's save order.
pub(crate) struct Deferred {
    frame: Arc<Frame>,
    index: usize,
}

impl Drop for Deferred {
    fn drop(&mut self) {
        if let Some(v) = self.frame.recomputed.lock().as_mut()
            && let Some(slot) = v.get_mut(self.index)
        {
            *slot = None;
        }
    }
}

/// Called for every tensor saved for backward (`t`: what the saved tensor holds). Returns the
/// frame slot to defer it to when a checkpoint's forward is running on this thread; collects it
/// when a recomputation is.
pub(crate) fn on_save(t: &Tensor) -> Option<Deferred> {
    if !ACTIVE.with(|a| a.get()) || t.is_sparse() {
        return None;
    }
    MODES.with(|s| match s.borrow().last()? {
        Mode::Defer(frame) => Some(Deferred {
            frame: frame.clone(),
            index: frame.saves.fetch_add(1, Ordering::Relaxed),
        }),
        Mode::Capture(list) => {
            list.borrow_mut().push(t.shallow());
            None
        }
    })
}

impl Deferred {
    /// The recomputed tensor for this slot (recomputing the frame on first use); `like` is the
    /// placeholder, whose shape and dtype it must have.
    pub(crate) fn get(&self, like: &Tensor) -> Result<Tensor> {
        let mut slot = self.frame.recomputed.lock();
        if slot.is_none() {
            *slot = Some(self.frame.recompute()?.into_iter().map(Some).collect());
        }
        let Some(t) = slot
            .as_ref()
            .and_then(|v| v.get(self.index).cloned().flatten())
        else {
            bail!(
                BackwardTwice,
                "backward",
                "checkpoint: the recomputed tensor {} was already freed",
                self.index
            );
        };
        if t.shape() != like.shape() || t.dtype() != like.dtype() {
            bail!(
                CheckpointMismatch,
                "backward",
                "checkpoint: recomputed values for the following tensors have different metadata than during the forward pass.\ntensor at position {}:\nsaved metadata: shape {:?}, dtype {}\nrecomputed metadata: shape {:?}, dtype {}\nThe checkpointed function must do the same work when it runs again (same ops, shapes and dtypes).",
                self.index,
                like.shape(),
                like.dtype(),
                t.shape(),
                t.dtype()
            );
        }
        Ok(t)
    }
}

/// Puts the global generator back when dropped.
struct RestoreRng(Option<RngState>);

impl Drop for RestoreRng {
    fn drop(&mut self) {
        if let Some(s) = self.0.take() {
            set_rng_state(&s);
        }
    }
}

impl Frame {
    /// Reruns the function on the saved inputs with the first run's random state and returns
    /// the tensors its ops saved, in order.
    fn recompute(&self) -> Result<Vec<Tensor>> {
        let _span = tracing::debug_span!("checkpoint_recompute").entered();
        let mut inputs = Vec::with_capacity(self.inputs.len());
        for (s, requires_grad) in &self.inputs {
            let t = s.unpack("CheckpointBackward", None)?.detach();
            inputs.push(if *requires_grad {
                t.requires_grad_(true)?
            } else {
                t
            });
        }
        let list = Rc::new(RefCell::new(Vec::new()));
        {
            let _rng = RestoreRng(Some(get_rng_state()));
            set_rng_state(&self.rng);
            let _grad = enable_grad();
            let _mode = ModeGuard::push(Mode::Capture(list.clone()));
            drop((self.f)(&inputs)?);
        }
        let saved = list.take();
        let forward = self.saves.load(Ordering::Relaxed);
        if saved.len() != forward {
            bail!(
                CheckpointMismatch,
                "backward",
                "checkpoint: a different number of tensors was saved during the original forward and recomputation.\nNumber of tensors saved during forward: {}\nNumber of tensors saved during recomputation: {}\nThe checkpointed function must do the same work when it runs again.",
                forward,
                saved.len()
            );
        }
        Ok(saved)
    }
}

/// Runs `f` on `inputs` without keeping the tensors its ops save for backward, and recomputes
/// them in the backward (activation checkpointing: PyTorch's
/// `torch.utils.checkpoint.checkpoint(f, *inputs, use_reentrant=False)`). Gradients are those of
/// `f(inputs)` itself, for the inputs and for every tensor `f` captures (parameters), whether or
/// not an input requires grad; the graph is recorded as usual, so `autograd::grad`, hooks and
/// double backward work through it.
///
/// The recomputation restores the global generator's state of the first run, so dropout
/// draws the same masks, and puts the generator back afterwards. `f` must do the same work
/// when it runs again (a different number, shape or dtype of saved tensors is a
/// `CheckpointMismatch` error) and must not write its inputs in place. The inputs are saved
/// like an op's: writing one in place before the backward is a `SavedTensorModified` error.
/// Without grad mode, `f` just runs.
///
/// Memory: the forward keeps only `f`'s inputs and outputs; the backward holds one checkpointed
/// segment's saved tensors at a time.
///
/// ```
/// use tapegrad::{Tensor, autograd};
/// let w = Tensor::from_vec(vec![0.5f64, -1.0], &[2])?.requires_grad_(true)?;
/// let x = Tensor::from_vec(vec![1.0f64, 2.0], &[2])?;
/// let w2 = w.clone();
/// let y = autograd::checkpoint(move |i| Ok(vec![i[0].mul(&w2)?.tanh()?.sin()?]), &[&x])?;
/// y[0].sum()?.backward()?;
/// let expect = {
///     let wd = w.detach().requires_grad_(true)?;
///     x.mul(&wd)?.tanh()?.sin()?.sum()?.backward()?;
///     wd.grad().unwrap()
/// };
/// assert_eq!(w.grad().unwrap().to_vec::<f64>()?, expect.to_vec::<f64>()?);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn checkpoint<F>(f: F, inputs: &[&Tensor]) -> Result<Vec<Tensor>>
where
    F: Fn(&[Tensor]) -> Result<Vec<Tensor>> + Send + Sync + 'static,
{
    let owned: Vec<Tensor> = inputs.iter().map(|t| (*t).clone()).collect();
    if !is_grad_enabled() {
        return f(&owned);
    }
    let frame = Arc::new(Frame {
        inputs: inputs
            .iter()
            .map(|t| (SavedTensor::input_kept(t), t.requires_grad()))
            .collect(),
        f: Box::new(f),
        rng: get_rng_state(),
        saves: AtomicUsize::new(0),
        recomputed: Mutex::new(None),
    });
    let _mode = ModeGuard::push(Mode::Defer(frame.clone()));
    (frame.f)(&owned)
}
