//! Activation modules without parameters: [`Relu`], [`Tanh`], [`Sigmoid`], [`Gelu`].

use super::{Forward, Module, Visitor};
use crate::{Result, Tensor};

/// `max(x, 0)` (`torch.nn.ReLU`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Relu;

impl Forward for Relu {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.relu()
    }
}

impl Module for Relu {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn type_name(&self) -> String {
        "ReLU".to_string()
    }
}

/// `tanh(x)` (`torch.nn.Tanh`).
///
/// ```
/// # use tapegrad::{Tensor, nn::{Forward, Tanh}};
/// let y = Tanh.forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Tanh;

impl Forward for Tanh {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.tanh()
    }
}

impl Module for Tanh {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
}

/// `1 / (1 + exp(-x))` (`torch.nn.Sigmoid`).
///
/// ```
/// # use tapegrad::{Tensor, nn::{Forward, Sigmoid}};
/// let y = Sigmoid.forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.5]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Sigmoid;

impl Forward for Sigmoid {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.sigmoid()
    }
}

impl Module for Sigmoid {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
}

/// GELU (`torch.nn.GELU`); `approximate` as in [`Tensor::gelu`].
///
/// ```
/// # use tapegrad::{Tensor, nn::{Forward, Gelu}};
/// let y = Gelu::default().forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu {
    /// Exact (the default) or the tanh approximation.
    pub approximate: crate::Approximate,
}

impl Forward for Gelu {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.gelu(self.approximate)
    }
}

impl Module for Gelu {
    fn visit<'a>(&'a self, _v: &mut dyn Visitor<'a>) {}
    fn extra_repr(&self) -> String {
        format!("approximate='{}'", self.approximate.as_str())
    }
}

super::module::display_as_repr!(Relu, Tanh, Sigmoid, Gelu);
