//! The samplers: `uniform_`, `normal_`, `bernoulli_` fill a tensor (a view writes through to its
//! base) in place, bump its version once and record a zero-gradient node (PyTorch's
//! `UniformBackward0`, `NormalBackward0`, `BernoulliBackward2`); `randperm` and `multinomial`
//! return new i64 tensors. Each takes `Option<&Generator>` (`None`: the global generator) and
//! draws in the tensor's logical (row-major) order. Values are not PyTorch's stream.

use super::{Generator, with_stream};
use crate::{DType, Result, Tensor, bail};

/// `values` (f64, row-major) as a tensor of `like`'s shape.
fn sampled(values: Vec<f64>, like: &Tensor) -> Result<Tensor> {
    Tensor::from_vec(values, &like.shape())
}

/// The largest finite value of a float dtype (the bound of `uniform_`'s `to - from`).
fn float_max(dt: DType) -> f64 {
    match dt {
        DType::F16 => 65504.0,
        DType::BF16 => 3.3895313892515355e38,
        DType::F32 => f32::MAX as f64,
        _ => f64::MAX,
    }
}

fn float_only(t: &Tensor, op: &'static str) -> Result<()> {
    if !t.dtype().is_float() {
        bail!(
            DTypeMismatch,
            op,
            "{} is not implemented for {} tensors (floating point only)",
            op,
            t.dtype()
        );
    }
    Ok(())
}

impl Tensor {
    /// Fills `self` with samples uniform in `[from, to)` (PyTorch's `uniform_`, float dtypes);
    /// returns `self`. Refuses `from > to` and a range wider than the dtype's largest value.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[4, 4], DType::F32)?;
    /// let v = x.narrow(0, 1, 2)?;
    /// v.uniform_(2.0, 3.0, None)?;                  // writes through the view
    /// let row = x.select(0, 1)?.to_vec::<f32>()?;
    /// assert!(row.iter().all(|v| (2.0..3.0).contains(v)));
    /// assert_eq!(x.select(0, 0)?.to_vec::<f32>()?, vec![0.0; 4]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn uniform_(&self, from: f64, to: f64, generator: Option<&Generator>) -> Result<Tensor> {
        float_only(self, "uniform_")?;
        if from > to {
            bail!(
                InvalidArgument,
                "uniform_",
                "uniform_ expects to return a [from, to) range, but found from={} > to={}",
                from,
                to
            );
        }
        if to - from > float_max(self.dtype()) {
            bail!(
                InvalidArgument,
                "uniform_",
                "uniform_ expects to-from <= the largest {} value, but found to={} and from={} \
                 which result in to-from to exceed the limit",
                self.dtype(),
                to,
                from
            );
        }
        let n = self.numel();
        let v = with_stream(generator, |r| {
            (0..n).map(|_| from + (to - from) * r.uniform()).collect()
        });
        self.write_sampled_(&sampled(v, self)?, "uniform_", "UniformBackward0")
    }

    /// Fills `self` with normal samples of mean `mean` and standard deviation `std` (PyTorch's
    /// `normal_`, float dtypes); returns `self`. Refuses a negative `std`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType, random::Generator};
    /// let g = Generator::new(1);
    /// let x = Tensor::zeros(&[1000], DType::F64)?.normal_(3.0, 0.5, Some(&g))?;
    /// assert!((x.mean((), false, None)?.item::<f64>()? - 3.0).abs() < 0.1);
    /// assert!(x.normal_(0.0, -1.0, None).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn normal_(&self, mean: f64, std: f64, generator: Option<&Generator>) -> Result<Tensor> {
        float_only(self, "normal_")?;
        if std.is_nan() || std < 0.0 {
            bail!(
                InvalidArgument,
                "normal_",
                "normal expects std >= 0.0, but found std {}",
                std
            );
        }
        let n = self.numel();
        let v = with_stream(generator, |r| {
            (0..n).map(|_| mean + std * r.normal()).collect()
        });
        self.write_sampled_(&sampled(v, self)?, "normal_", "NormalBackward0")
    }

    /// Fills `self` (any real dtype, bool too) with 1 with probability `p` and 0 otherwise
    /// (PyTorch's `bernoulli_(p)`); returns `self`. Refuses `p` outside `[0, 1]`.
    ///
    /// ```
    /// # use tapegrad::{Tensor, DType};
    /// let x = Tensor::zeros(&[8], DType::I64)?.bernoulli_(1.0, None)?;
    /// assert_eq!(x.to_vec::<i64>()?, vec![1; 8]);
    /// assert!(x.bernoulli_(1.5, None).is_err());
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn bernoulli_(&self, p: f64, generator: Option<&Generator>) -> Result<Tensor> {
        if !(0.0..=1.0).contains(&p) {
            bail!(
                InvalidArgument,
                "bernoulli_",
                "bernoulli_ expects p to be in [0, 1], but got p={}",
                p
            );
        }
        if self.dtype().is_complex() {
            float_only(self, "bernoulli_")?;
        }
        let n = self.numel();
        let v = with_stream(generator, |r| {
            (0..n)
                .map(|_| if r.uniform() < p { 1.0 } else { 0.0 })
                .collect()
        });
        self.write_sampled_(&sampled(v, self)?, "bernoulli_", "BernoulliBackward2")
    }

    /// A random permutation of `0..n` as i64 (PyTorch's `randperm`), by Fisher–Yates.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let mut p = Tensor::randperm(6, None)?.to_vec::<i64>()?;
    /// p.sort();
    /// assert_eq!(p, vec![0, 1, 2, 3, 4, 5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn randperm(n: impl crate::Dim, generator: Option<&Generator>) -> Result<Tensor> {
        let n = crate::tensor::dims::size(n, "randperm", |v| {
            format!("Trying to create tensor with negative dimension {v}: [{v}]")
        })?;
        let mut v: Vec<i64> = (0..n as i64).collect();
        with_stream(generator, |r| {
            for i in (1..n).rev() {
                let j = r.int_in(0, i as i64 + 1) as usize;
                v.swap(i, j);
            }
        });
        Tensor::from_vec(v, &[n])
    }

    /// Draws `num_samples` category indices per row of the 1-D or 2-D weights `self` (PyTorch's
    /// `multinomial`; rows need not sum to 1). With `replacement` a category can repeat; without
    /// it each row gets distinct categories (by exponential races, so zero-weight categories come
    /// last). i64 result of shape `[num_samples]` or `[rows, num_samples]`. PyTorch's errors: a
    /// negative, NaN or infinite weight, a row summing to 0, more samples than categories
    /// without replacement, 0 samples, more than 2^24 categories.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let w = Tensor::from_vec(vec![0.0f32, 1.0, 0.0, 3.0], &[4])?;
    /// let s = w.multinomial(2, false, None)?.to_vec::<i64>()?;
    /// assert!(s == vec![1, 3] || s == vec![3, 1]);
    /// assert!(w.multinomial(5, false, None).is_err());
    /// assert_eq!(w.multinomial(5, true, None)?.shape(), vec![5]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn multinomial(
        &self,
        num_samples: impl crate::Dim,
        replacement: bool,
        generator: Option<&Generator>,
    ) -> Result<Tensor> {
        const OP: &str = "multinomial";
        let num_samples = crate::tensor::dims::size(num_samples, OP, |_| {
            "cannot sample n_sample <= 0 samples".into()
        })?;
        if !self.dtype().is_float() {
            bail!(
                DTypeMismatch,
                OP,
                "multinomial only supports floating-point dtypes for input, got: {}",
                self.dtype()
            );
        }
        if self.dim() != 1 && self.dim() != 2 {
            bail!(InvalidArgument, OP, "prob_dist must be 1 or 2 dim");
        }
        let shape = self.shape();
        let (rows, cats) = if self.dim() == 1 {
            (1, shape[0])
        } else {
            (shape[0], shape[1])
        };
        if cats > 1 << 24 {
            bail!(
                InvalidArgument,
                OP,
                "number of categories cannot exceed 2^24"
            );
        }
        if num_samples == 0 {
            bail!(InvalidArgument, OP, "cannot sample n_sample <= 0 samples");
        }
        if !replacement && num_samples > cats {
            bail!(
                InvalidArgument,
                OP,
                "cannot sample n_sample > prob_dist.size(-1) samples without replacement"
            );
        }
        let w = self.detach().to_dtype(DType::F64)?.to_vec::<f64>()?;
        if cats == 0 && rows > 0 {
            bail!(
                InvalidArgument,
                OP,
                "invalid multinomial distribution (sum of probabilities <= 0)"
            );
        }
        for row in w.chunks(cats.max(1)) {
            if row.iter().any(|v| !v.is_finite() || *v < 0.0) {
                bail!(
                    InvalidArgument,
                    OP,
                    "probability tensor contains either `inf`, `nan` or element < 0"
                );
            }
            if row.iter().sum::<f64>() <= 0.0 {
                bail!(
                    InvalidArgument,
                    OP,
                    "invalid multinomial distribution (sum of probabilities <= 0)"
                );
            }
        }
        let mut out = Vec::with_capacity(rows * num_samples);
        with_stream(generator, |r| {
            for row in w.chunks(cats.max(1)) {
                if replacement {
                    let cdf: Vec<f64> = row
                        .iter()
                        .scan(0.0, |s, v| {
                            *s += v;
                            Some(*s)
                        })
                        .collect();
                    let total = cdf[cats - 1];
                    for _ in 0..num_samples {
                        let u = r.uniform() * total;
                        // the first category whose cumulative weight exceeds u (never a
                        // zero-weight one: its cumulative weight equals its predecessor's)
                        let k = cdf.partition_point(|c| *c <= u).min(cats - 1);
                        out.push(k as i64);
                    }
                } else {
                    // exponential races: key w / E with E ~ Exp(1); the largest keys win
                    let mut keys: Vec<(f64, usize)> = row
                        .iter()
                        .enumerate()
                        .map(|(i, &v)| {
                            let e = -(1.0 - r.uniform()).ln();
                            (if v > 0.0 { v / e } else { -1.0 }, i)
                        })
                        .collect();
                    keys.sort_by(|a, b| b.0.total_cmp(&a.0).then(a.1.cmp(&b.1)));
                    out.extend(keys[..num_samples].iter().map(|&(_, i)| i as i64));
                }
            }
        });
        let out_shape: Vec<usize> = if self.dim() == 1 {
            vec![num_samples]
        } else {
            vec![rows, num_samples]
        };
        Tensor::from_vec(out, &out_shape)
    }
}
