//! Activation modules without parameters: [`Relu`], [`Tanh`], [`Sigmoid`], [`Gelu`].

use super::Module;
use crate::{Result, Tensor};

/// `max(x, 0)` (`torch.nn.ReLU`).
#[derive(Clone, Copy, Debug, Default)]
pub struct Relu;

impl Module for Relu {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.relu()
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![]
    }
}

/// `tanh(x)` (`torch.nn.Tanh`).
///
/// ```
/// # use tapegrad::{Tensor, nn::{Module, Tanh}};
/// let y = Tanh.forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Tanh;

impl Module for Tanh {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.tanh()
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![]
    }
}

/// `1 / (1 + exp(-x))` (`torch.nn.Sigmoid`).
///
/// ```
/// # use tapegrad::{Tensor, nn::{Module, Sigmoid}};
/// let y = Sigmoid.forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.5]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Sigmoid;

impl Module for Sigmoid {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.sigmoid()
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![]
    }
}

/// GELU (`torch.nn.GELU`); `approximate: true` is `approximate="tanh"`.
///
/// ```
/// # use tapegrad::{Tensor, nn::{Module, Gelu}};
/// let y = Gelu::default().forward(&Tensor::from_vec(vec![0.0f64], &[1])?)?;
/// assert_eq!(y.to_vec::<f64>()?, vec![0.0]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct Gelu {
    /// Use the tanh approximation.
    pub approximate: bool,
}

impl Module for Gelu {
    fn forward(&self, x: &Tensor) -> Result<Tensor> {
        x.gelu(self.approximate)
    }
    fn named_parameters(&self) -> Vec<(String, Tensor)> {
        vec![]
    }
}
