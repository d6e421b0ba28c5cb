//! Parameter initialisers (PyTorch's `torch.nn.init` formulas), drawing from the global seeded
//! generator (`tapegrad::manual_seed`): uniform, normal, Kaiming and Xavier (uniform and normal).

use crate::tensor::dims::sizes;
use crate::{DType, IntoShape, Result, Tensor};

/// `U(low, high)` samples.
///
/// ```
/// let t = tapegrad::nn::init::uniform(&[3], -1.0, 1.0, tapegrad::DType::F32)?;
/// assert!(t.to_vec::<f32>()?.iter().all(|v| (-1.0..1.0).contains(v)));
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn uniform(shape: impl IntoShape, low: f64, high: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "uniform")?[..];
    let r = Tensor::rand(shape, DType::F64)?;
    let v: Vec<f64> = r
        .to_vec::<f64>()?
        .into_iter()
        .map(|u| low + (high - low) * u)
        .collect();
    Tensor::from_vec(v, shape)?.to_dtype(dtype)
}

/// `N(mean, std)` samples.
///
/// ```
/// let t = tapegrad::nn::init::normal(&[2, 2], 0.0, 0.02, tapegrad::DType::F32)?;
/// assert_eq!(t.shape(), vec![2, 2]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn normal(shape: impl IntoShape, mean: f64, std: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "normal")?[..];
    let r = Tensor::randn(shape, DType::F64)?;
    let v: Vec<f64> = r
        .to_vec::<f64>()?
        .into_iter()
        .map(|z| mean + std * z)
        .collect();
    Tensor::from_vec(v, shape)?.to_dtype(dtype)
}

fn fans(shape: &[usize]) -> (f64, f64) {
    let receptive: usize = shape.iter().skip(2).product();
    let fan_in = shape.get(1).copied().unwrap_or(1) * receptive;
    let fan_out = shape.first().copied().unwrap_or(1) * receptive;
    (fan_in as f64, fan_out as f64)
}

/// Kaiming (He) uniform with leaky-ReLU slope `a` and fan-in mode.
///
/// ```
/// let w = tapegrad::nn::init::kaiming_uniform(&[4, 3], 0.0, tapegrad::DType::F32)?;
/// let b = (6.0f32 / 3.0).sqrt();
/// assert!(w.to_vec::<f32>()?.iter().all(|v| v.abs() <= b));
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn kaiming_uniform(shape: impl IntoShape, a: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "kaiming_uniform")?[..];
    let (fan_in, _) = fans(shape);
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let bound = if fan_in > 0.0 {
        gain * (3.0 / fan_in).sqrt()
    } else {
        0.0
    };
    uniform(shape, -bound, bound, dtype)
}

/// Xavier (Glorot) uniform.
///
/// ```
/// let w = tapegrad::nn::init::xavier_uniform(&[4, 4], 1.0, tapegrad::DType::F64)?;
/// assert!(w.to_vec::<f64>()?.iter().all(|v| v.abs() <= (6.0f64 / 8.0).sqrt()));
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn xavier_uniform(shape: impl IntoShape, gain: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "xavier_uniform")?[..];
    let (fi, fo) = fans(shape);
    let bound = gain * (6.0 / (fi + fo)).sqrt();
    uniform(shape, -bound, bound, dtype)
}

/// Kaiming (He) normal with leaky-ReLU slope `a` and fan-in mode: `N(0, gain / sqrt(fan_in))`,
/// `gain = sqrt(2 / (1 + a^2))`.
///
/// ```
/// let w = tapegrad::nn::init::kaiming_normal(&[64, 32], 0.0, tapegrad::DType::F64)?;
/// assert_eq!(w.shape(), vec![64, 32]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn kaiming_normal(shape: impl IntoShape, a: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "kaiming_normal")?[..];
    let (fan_in, _) = fans(shape);
    let gain = (2.0 / (1.0 + a * a)).sqrt();
    let std = if fan_in > 0.0 {
        gain / fan_in.sqrt()
    } else {
        0.0
    };
    normal(shape, 0.0, std, dtype)
}

/// Xavier (Glorot) normal: `N(0, gain * sqrt(2 / (fan_in + fan_out)))`.
///
/// ```
/// let w = tapegrad::nn::init::xavier_normal(&[8, 8], 1.0, tapegrad::DType::F32)?;
/// assert_eq!(w.shape(), vec![8, 8]);
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn xavier_normal(shape: impl IntoShape, gain: f64, dtype: DType) -> Result<Tensor> {
    let shape = &sizes(shape, "xavier_normal")?[..];
    let (fi, fo) = fans(shape);
    let std = if fi + fo > 0.0 {
        gain * (2.0 / (fi + fo)).sqrt()
    } else {
        0.0
    };
    normal(shape, 0.0, std, dtype)
}
