//! Every loss: the [`Reduction`] and option structs they share, the class losses
//! (`nll_loss`, `cross_entropy`) in [`class`], the elementwise losses (`mse_loss`, `l1_loss`,
//! `binary_cross_entropy_with_logits`) in [`elementwise`] and `binary_cross_entropy` on
//! probabilities in [`bce`].

mod bce;
mod class;
mod elementwise;

use crate::{Result, Tensor};

/// How a loss reduces its per-element values.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Reduction {
    /// Keep per-element losses.
    None,
    /// Mean (weighted mean for weighted class losses).
    #[default]
    Mean,
    /// Sum.
    Sum,
}

/// Options of [`Tensor::cross_entropy`].
#[derive(Clone, Copy, Debug)]
pub struct CrossEntropyOptions<'a> {
    /// Per-class weight (shape `[C]`).
    pub weight: Option<&'a Tensor>,
    /// Class-index target value that is ignored (default -100).
    pub ignore_index: i64,
    /// Label smoothing in `[0, 1]`.
    pub label_smoothing: f64,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

impl CrossEntropyOptions<'_> {
    /// Builder setter of `ignore_index` accepting any integer type (one above `i64::MAX`
    /// is kept as `i64::MAX`, which no `i64` target equals either).
    pub fn ignore_index(mut self, v: impl crate::Dim) -> Self {
        self.ignore_index = v.to_i64().unwrap_or(i64::MAX);
        self
    }
}

impl Default for CrossEntropyOptions<'_> {
    fn default() -> Self {
        CrossEntropyOptions {
            weight: None,
            ignore_index: -100,
            label_smoothing: 0.0,
            reduction: Reduction::Mean,
        }
    }
}

/// Options of [`Tensor::nll_loss`].
#[derive(Clone, Copy, Debug)]
pub struct NllLossOptions<'a> {
    /// Per-class weight (shape `[C]`).
    pub weight: Option<&'a Tensor>,
    /// Ignored target value (default -100).
    pub ignore_index: i64,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

impl NllLossOptions<'_> {
    /// Builder setter of `ignore_index` accepting any integer type (one above `i64::MAX`
    /// is kept as `i64::MAX`, which no `i64` target equals either).
    pub fn ignore_index(mut self, v: impl crate::Dim) -> Self {
        self.ignore_index = v.to_i64().unwrap_or(i64::MAX);
        self
    }
}

impl Default for NllLossOptions<'_> {
    fn default() -> Self {
        NllLossOptions {
            weight: None,
            ignore_index: -100,
            reduction: Reduction::Mean,
        }
    }
}

/// Options of [`Tensor::binary_cross_entropy_with_logits`].
#[derive(Clone, Copy, Debug, Default)]
pub struct BceWithLogitsOptions<'a> {
    /// Elementwise weight (broadcast).
    pub weight: Option<&'a Tensor>,
    /// Weight of positive examples (broadcast along the last dim); treated as a constant.
    pub pos_weight: Option<&'a Tensor>,
    /// Reduction (default mean).
    pub reduction: Reduction,
}

pub(crate) fn reduce(l: Tensor, r: Reduction) -> Result<Tensor> {
    match r {
        Reduction::None => Ok(l),
        Reduction::Sum => l.sum(),
        // PyTorch's `mean()`: accumulated and divided in the accumulation dtype (an f16 loss
        // whose sum overflows f16 can still have a finite mean)
        Reduction::Mean => l.mean((), false, None),
    }
}

/// PyTorch has no derivative for the loss weights (`weight`, `pos_weight`): a weight that
/// requires grad (with grad mode on) is refused in the forward, naming the ATen function.
pub(crate) fn check_weight_no_grad(
    w: Option<&Tensor>,
    func: &str,
    arg: &str,
    op: &'static str,
) -> Result<()> {
    if let Some(w) = w
        && w.requires_grad()
        && crate::autograd::is_grad_enabled()
    {
        crate::bail!(
            NotImplemented,
            op,
            "The function '{}' is not differentiable with respect to argument '{}'. This input cannot have requires_grad True.",
            func,
            arg
        );
    }
    Ok(())
}
