//! The keyword options of a backward pass, as option structs: [`BackwardOptions`] for
//! [`Tensor::backward_with`](crate::Tensor::backward_with) and [`backward`](super::backward),
//! [`GradOptions`] for [`grad`](super::grad) (PyTorch's `retain_graph=`, `create_graph=`,
//! `allow_unused=` keywords).

/// Options of [`Tensor::backward_with`](crate::Tensor::backward_with) and
/// [`autograd::backward`](super::backward). The default is PyTorch's: free the graph, no graph
/// of the backward itself.
///
/// ```
/// # use tapegrad::autograd::BackwardOptions;
/// let o = BackwardOptions::default().create_graph(true);
/// assert!(o.is_create_graph() && o.is_retain_graph()); // retain_graph defaults to create_graph
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct BackwardOptions {
    retain_graph: Option<bool>,
    create_graph: bool,
}

impl BackwardOptions {
    /// Keep the graph (its saved tensors) for another backward pass. Default: `create_graph`.
    pub fn retain_graph(mut self, on: bool) -> Self {
        self.retain_graph = Some(on);
        self
    }
    /// Record the backward pass itself, so the gradients are differentiable (double backward).
    pub fn create_graph(mut self, on: bool) -> Self {
        self.create_graph = on;
        self
    }
    /// Whether the graph is kept ([`retain_graph`](Self::retain_graph), else `create_graph`).
    pub fn is_retain_graph(&self) -> bool {
        self.retain_graph.unwrap_or(self.create_graph)
    }
    /// Whether the backward pass is recorded.
    pub fn is_create_graph(&self) -> bool {
        self.create_graph
    }
}

/// Options of [`autograd::grad`](super::grad): [`BackwardOptions`]' two plus `allow_unused`.
///
/// ```
/// # use tapegrad::autograd::GradOptions;
/// let o = GradOptions::default().create_graph(true).allow_unused(true);
/// assert!(o.is_create_graph() && o.is_retain_graph() && o.is_allow_unused());
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GradOptions {
    backward: BackwardOptions,
    allow_unused: bool,
}

impl GradOptions {
    /// Keep the graph for another backward pass. Default: `create_graph`.
    pub fn retain_graph(mut self, on: bool) -> Self {
        self.backward = self.backward.retain_graph(on);
        self
    }
    /// Record the backward pass itself, so the gradients are differentiable.
    pub fn create_graph(mut self, on: bool) -> Self {
        self.backward = self.backward.create_graph(on);
        self
    }
    /// Give `None` for an input the outputs do not depend on, instead of an error.
    pub fn allow_unused(mut self, on: bool) -> Self {
        self.allow_unused = on;
        self
    }
    /// Whether the graph is kept.
    pub fn is_retain_graph(&self) -> bool {
        self.backward.is_retain_graph()
    }
    /// Whether the backward pass is recorded.
    pub fn is_create_graph(&self) -> bool {
        self.backward.is_create_graph()
    }
    /// Whether unused inputs give `None`.
    pub fn is_allow_unused(&self) -> bool {
        self.allow_unused
    }
}
