//! [`DistributedDataParallel`]: data-parallel training of any [`Module`], PyTorch's
//! `DistributedDataParallel` design (described on the type): buckets, post-accumulate-grad
//! hooks that start each bucket's all-reduce during backward, `no_sync`, buffer broadcast.

use super::ReduceOp;
use super::process_group::{ProcessGroup, Snapshot, Work, wait_all};
use super::wire::Wire;
use crate::autograd::{RemovableHandle, is_grad_enabled, no_grad};
use crate::nn::{Forward, Module, Visitor, VisitorMut};
use crate::{DType, Result, Tensor, bail};
use parking_lot::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Receiver;
use std::sync::{Arc, Weak};

/// Settings of [`DistributedDataParallel`] (PyTorch's constructor arguments of the same names).
#[derive(Clone, Copy, Debug)]
pub struct DdpOptions {
    /// Bucket size in MiB (default 25).
    pub bucket_cap_mb: f64,
    /// Broadcast rank 0's buffers before each forward (default true).
    pub broadcast_buffers: bool,
}

impl Default for DdpOptions {
    fn default() -> Self {
        DdpOptions {
            bucket_cap_mb: 25.0,
            broadcast_buffers: true,
        }
    }
}

/// Wraps a [`Module`] for data-parallel training over a [`ProcessGroup`].
///
/// At construction the parameters and buffers are broadcast from rank 0 (after checking that
/// every rank has the same parameter count and sizes), the trainable parameters are packed in
/// reverse registration order (about the order backward produces their gradients) into
/// buckets of at most `bucket_cap_mb` (one dtype per bucket), and a post-accumulate-grad hook
/// is registered on each. During backward, when every gradient of a bucket has been
/// accumulated, the bucket is flattened and its all-reduce (`Avg`) starts on the communication
/// thread while backward goes on; buckets are launched in index order so every rank issues the
/// same sequence. When the last bucket is launched its hook waits for all of them and writes
/// the averaged gradients back into each `.grad` (in place), so `loss.backward()` returns with
/// synchronised gradients and any optimizer then takes identical steps on every rank.
///
/// As in PyTorch the reduction is armed by the forward: run it through
/// [`forward_with`](DistributedDataParallel::forward_with) (or [`Forward::forward`] for
/// one-tensor modules), which also broadcasts rank 0's buffers first (PyTorch's
/// `broadcast_buffers=True`: batch-norm running statistics stay identical). A forward under
/// [`no_sync`](DistributedDataParallel::no_sync) or `no_grad` arms nothing, so gradients
/// accumulate locally and the next synchronised backward all-reduces the accumulated sums.
/// Every trainable parameter must get a gradient in each synchronised backward (PyTorch's
/// default `find_unused_parameters=False`); otherwise the next forward reports the ones that
/// did not.
///
/// ```no_run
/// use tapegrad::distributed::{DistributedDataParallel, DdpOptions, ProcessGroup};
/// use tapegrad::nn::{Forward, Linear};
/// use tapegrad::optim::{Optimizer, Sgd, SgdConfig};
/// use tapegrad::{DType, Tensor};
///
/// let pg = ProcessGroup::init()?;
/// let ddp = DistributedDataParallel::new(Linear::new(4, 1, true, DType::F32)?, &pg, DdpOptions::default())?;
/// let mut opt = Sgd::new(ddp.module().parameters(), SgdConfig::new(0.1))?;
/// let x = Tensor::randn(&[8, 4], DType::F32)?; // this rank's batch
/// let y = ddp.forward(&x)?;
/// let loss = y.mul(&y)?.mean()?;
/// loss.backward()?; // gradients are averaged over the ranks when this returns
/// opt.step()?;
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub struct DistributedDataParallel<M: Module> {
    module: M,
    group: ProcessGroup,
    options: DdpOptions,
    reducer: Arc<Reducer>,
    sync: AtomicBool,
    /// The parameters' post-accumulate hooks, removed when the wrapper is dropped.
    hooks: Vec<RemovableHandle>,
}

impl<M: Module> std::fmt::Debug for DistributedDataParallel<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("DistributedDataParallel")
            .field("group", &self.group)
            .field("options", &self.options)
            .field("buckets", &self.bucket_sizes())
            .finish()
    }
}

/// The trainable parameters, their buckets and the state of the current step.
struct Reducer {
    group: ProcessGroup,
    /// Trainable parameters (registration order) with their keys.
    params: Vec<(String, Tensor)>,
    /// Parameter indices of each bucket, in launch order.
    buckets: Vec<Vec<usize>>,
    /// The bucket of each parameter.
    bucket_of: Vec<usize>,
    step: Mutex<Step>,
}

/// One synchronised backward's progress.
#[derive(Default)]
struct Step {
    /// Set by a synchronising forward, cleared when the gradients are written back.
    armed: bool,
    ready: Vec<bool>,
    /// Gradients still missing per bucket.
    pending: Vec<usize>,
    /// The next bucket to launch.
    next: usize,
    /// Launched buckets' reductions.
    inflight: Vec<(usize, Receiver<Wire>)>,
}

impl<M: Module> DistributedDataParallel<M> {
    /// Wraps `module`: checks that every rank's module has the same parameters (count and
    /// element counts; `InvalidArgument` on every rank otherwise), broadcasts parameters and
    /// buffers from rank 0, builds the buckets and registers the gradient hooks. Collective:
    /// every rank of `group` calls it.
    pub fn new(module: M, group: &ProcessGroup, options: DdpOptions) -> Result<Self> {
        if options.bucket_cap_mb.is_nan() || options.bucket_cap_mb <= 0.0 {
            bail!(
                InvalidArgument,
                "DistributedDataParallel",
                "bucket_cap_mb must be positive, got {}",
                options.bucket_cap_mb
            );
        }
        let named = module.named_parameters();
        check_same_model(&named, group)?;
        {
            let _g = no_grad();
            let works: Vec<Work> = named
                .iter()
                .map(|(_, p)| p)
                .chain(module.buffers().iter())
                .map(|t| group.broadcast_async_(&t.detach(), 0))
                .collect::<Result<_>>()?;
            wait_all(works)?;
        }
        let params: Vec<(String, Tensor)> = named
            .into_iter()
            .filter(|(_, p)| p.requires_grad())
            .collect();
        let cap = (options.bucket_cap_mb * 1024.0 * 1024.0) as usize;
        let mut buckets: Vec<Vec<usize>> = Vec::new();
        let (mut bytes, mut dtype) = (0usize, None::<DType>);
        for i in (0..params.len()).rev() {
            let p = &params[i].1;
            let size = p.numel() * p.dtype().size();
            let fits = dtype == Some(p.dtype()) && bytes + size <= cap;
            if !fits || buckets.is_empty() {
                buckets.push(Vec::new());
                bytes = 0;
                dtype = Some(p.dtype());
            }
            buckets.last_mut().expect("pushed above").push(i);
            bytes += size;
        }
        let mut bucket_of = vec![0; params.len()];
        for (b, ps) in buckets.iter().enumerate() {
            for &i in ps {
                bucket_of[i] = b;
            }
        }
        let reducer = Arc::new(Reducer {
            group: group.clone(),
            params,
            buckets,
            bucket_of,
            step: Mutex::new(Step::default()),
        });
        let mut hooks = Vec::with_capacity(reducer.params.len());
        for (i, (_, p)) in reducer.params.iter().enumerate() {
            let weak: Weak<Reducer> = Arc::downgrade(&reducer);
            hooks.push(
                p.register_post_accumulate_grad_hook(move |_| match weak.upgrade() {
                    Some(r) => r.mark_ready(i),
                    None => Ok(()),
                })?,
            );
        }
        tracing::debug!(
            rank = group.rank(),
            buckets = reducer.buckets.len(),
            "DistributedDataParallel ready"
        );
        Ok(DistributedDataParallel {
            module,
            group: group.clone(),
            options,
            reducer,
            sync: AtomicBool::new(true),
            hooks,
        })
    }

    /// The wrapped module.
    pub fn module(&self) -> &M {
        &self.module
    }

    /// The wrapped module, mutably (for `train`/`eval`).
    pub fn module_mut(&mut self) -> &mut M {
        &mut self.module
    }

    /// The process group gradients are averaged over.
    pub fn group(&self) -> &ProcessGroup {
        &self.group
    }

    /// The parameter count of each bucket, in launch order.
    pub fn bucket_sizes(&self) -> Vec<usize> {
        self.reducer.buckets.iter().map(Vec::len).collect()
    }

    /// Runs a forward pass `f` on the wrapped module (PyTorch's `ddp(inputs)`): broadcasts rank
    /// 0's buffers (when `broadcast_buffers`), then arms the gradient reduction for the next
    /// backward unless under [`no_sync`](Self::no_sync) or `no_grad`. Collective. Errors
    /// (`InvalidArgument`) if the previous synchronised backward did not give every trainable
    /// parameter a gradient (it names them).
    pub fn forward_with<R>(&self, f: impl FnOnce(&M) -> Result<R>) -> Result<R> {
        self.reducer
            .prepare(is_grad_enabled() && self.sync.load(Ordering::Acquire))?;
        if self.options.broadcast_buffers && self.group.world_size() > 1 {
            let _g = no_grad();
            let works: Vec<Work> = self
                .module
                .buffers()
                .iter()
                .map(|b| self.group.broadcast_async_(&b.detach(), 0))
                .collect::<Result<_>>()?;
            wait_all(works)?;
        }
        f(&self.module)
    }

    /// Turns gradient synchronisation off until the guard is dropped (PyTorch's `no_sync()`
    /// context): backward passes after forwards run under it accumulate gradients locally; the
    /// first synchronised backward afterwards averages the accumulated gradients.
    pub fn no_sync(&self) -> NoSync<'_> {
        let prev = self.sync.swap(false, Ordering::AcqRel);
        NoSync {
            flag: &self.sync,
            prev,
        }
    }
}

/// The guard of [`DistributedDataParallel::no_sync`].
pub struct NoSync<'a> {
    flag: &'a AtomicBool,
    prev: bool,
}

impl<M: Module> Drop for DistributedDataParallel<M> {
    /// Takes the gradient hooks off the parameters: the module goes on training alone.
    fn drop(&mut self) {
        for h in &self.hooks {
            h.remove();
        }
    }
}

impl Drop for NoSync<'_> {
    fn drop(&mut self) {
        self.flag.store(self.prev, Ordering::Release);
    }
}

impl<M: Forward> Forward for DistributedDataParallel<M> {
    /// [`forward_with`](DistributedDataParallel::forward_with) of the module's forward.
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        self.forward_with(|m| m.forward(x))
    }
}

impl<M: Module> Module for DistributedDataParallel<M> {
    fn visit<'a>(&'a self, v: &mut dyn Visitor<'a>) {
        v.module("module", &self.module)
    }
    fn visit_mut(&mut self, v: &mut dyn VisitorMut) {
        v.module("module", &mut self.module)
    }
    fn type_name(&self) -> String {
        "DistributedDataParallel".into()
    }
}

/// Every rank must hold the same parameters: compares (count, element count of each) with
/// rank 0's through one all-gather, so every rank reaches the same verdict.
fn check_same_model(named: &[(String, Tensor)], group: &ProcessGroup) -> Result<()> {
    let mut sig: Vec<i64> = vec![named.len() as i64];
    // a position-weighted sum of the element counts: equal counts in another order differ
    let (mut total, mut weighted) = (0i64, 0i64);
    for (i, (_, p)) in named.iter().enumerate() {
        total = total.wrapping_add(p.numel() as i64);
        weighted = weighted.wrapping_add((i as i64 + 1).wrapping_mul(p.numel() as i64));
    }
    sig.extend([total, weighted]);
    let all = group.all_gather(&Tensor::from_vec(sig, &[3])?)?;
    let first = all[0].to_vec::<i64>()?;
    for (r, t) in all.iter().enumerate() {
        let v = t.to_vec::<i64>()?;
        if v != first {
            bail!(
                InvalidArgument,
                "DistributedDataParallel",
                "rank {} has {} parameters with {} elements but rank 0 has {} with {}: every rank must wrap the same model",
                r,
                v[0],
                v[1],
                first[0],
                first[1]
            );
        }
    }
    Ok(())
}

impl Reducer {
    /// Starts a step (called by the forward): `armed` when its backward must synchronise.
    fn prepare(&self, armed: bool) -> Result<()> {
        let mut st = self.step.lock();
        if st.armed && st.ready.iter().any(|&r| r) {
            let missing: Vec<&str> = self
                .params
                .iter()
                .zip(&st.ready)
                .filter(|(_, r)| !**r)
                .map(|((n, _), _)| n.as_str())
                .collect();
            bail!(
                InvalidArgument,
                "DistributedDataParallel",
                "expected to have finished reduction in the prior iteration before starting a new one: parameters that did not receive a gradient: {:?} (every trainable parameter must take part in the loss)",
                missing
            );
        }
        *st = Step {
            armed,
            ready: vec![false; self.params.len()],
            pending: self.buckets.iter().map(Vec::len).collect(),
            next: 0,
            inflight: Vec::new(),
        };
        Ok(())
    }

    /// The hook of parameter `i`: its gradient is accumulated.
    fn mark_ready(&self, i: usize) -> Result<()> {
        let mut st = self.step.lock();
        if !st.armed {
            return Ok(());
        }
        if std::mem::replace(&mut st.ready[i], true) {
            bail!(
                InvalidArgument,
                "DistributedDataParallel",
                "parameter {} received a gradient twice in one synchronised backward (run the extra backward passes under `no_sync`)",
                self.params[i].0
            );
        }
        st.pending[self.bucket_of[i]] -= 1;
        while st.next < self.buckets.len() && st.pending[st.next] == 0 {
            let b = st.next;
            let rx = self.launch(b)?;
            st.inflight.push((b, rx));
            st.next += 1;
        }
        if st.next == self.buckets.len() {
            st.armed = false;
            let inflight = std::mem::take(&mut st.inflight);
            drop(st);
            self.finish(inflight)?;
        }
        Ok(())
    }

    /// Flattens bucket `b`'s gradients and starts their average.
    fn launch(&self, b: usize) -> Result<Receiver<Wire>> {
        let grads: Vec<Tensor> = self.buckets[b]
            .iter()
            .map(|&i| self.grad_of(i))
            .collect::<Result<_>>()?;
        let wire = Wire::from_tensors(&grads)?;
        let len = wire.len();
        let dtype = grads[0].dtype();
        tracing::trace!(bucket = b, elements = len, "bucket all-reduce started");
        self.group.reduce_wire(
            Snapshot {
                wire,
                shape: vec![len],
                dtype,
            },
            ReduceOp::Avg,
        )
    }

    /// Waits for every bucket and writes the averages into the gradients.
    fn finish(&self, inflight: Vec<(usize, Receiver<Wire>)>) -> Result<()> {
        let _g = no_grad();
        for (b, rx) in inflight {
            let w = Work::new(rx, Ok).wait()?;
            let mut offset = 0;
            for &i in &self.buckets[b] {
                let g = self.grad_of(i)?;
                let n = g.numel();
                g.copy_(&w.to_tensor(offset, &g.shape(), g.dtype())?)?;
                offset += n;
            }
        }
        Ok(())
    }

    fn grad_of(&self, i: usize) -> Result<Tensor> {
        match self.params[i].1.grad() {
            Some(g) => Ok(g),
            None => bail!(
                InvalidArgument,
                "DistributedDataParallel",
                "parameter {} has no gradient",
                self.params[i].0
            ),
        }
    }
}
