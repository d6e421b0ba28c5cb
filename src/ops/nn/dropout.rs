//! `dropout`: a seeded Bernoulli mask scaled by `1/(1-p)`, multiplied in (so the gradient is
//! the mask).

use super::from_f64;
use crate::{Result, Tensor, bail};

impl Tensor {
    /// Dropout: in training, zeroes each element with probability `p` (global seeded RNG) and
    /// scales the rest by `1/(1-p)`; `self` itself when `train` is false or `p` is 0.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::ones(&[4], DType::F32)?;
    /// assert_eq!(x.dropout(0.5, false)?.to_vec::<f32>()?, vec![1.0; 4]);
    /// let v = x.dropout(0.5, true)?.to_vec::<f32>()?;
    /// assert!(v.iter().all(|&a| a == 0.0 || a == 2.0));
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn dropout(&self, p: f64, train: bool) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            bail!(
                InvalidArgument,
                "dropout",
                "dropout probability has to be between 0 and 1, but got {}",
                p
            );
        }
        if !train || p == 0.0 {
            // PyTorch returns the input itself (no copy, no graph node)
            return Ok(self.clone());
        }
        let n = self.numel();
        let scale = if p == 1.0 { 0.0 } else { 1.0 / (1.0 - p) };
        let m: Vec<f64> = crate::random::with_stream(None, |r| {
            (0..n)
                .map(|_| if r.uniform() >= p { scale } else { 0.0 })
                .collect()
        });
        let mask = from_f64(m, &self.shape(), self.dtype())?;
        self.mul(&mask)
    }
}
