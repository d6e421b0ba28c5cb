//! `gradcheck` / `gradgradcheck`: compare autograd's Jacobian with central finite differences
//! (f64 inputs; complex inputs are perturbed in their real and imaginary parts). A numerical test
//! utility (like `torch.autograd.gradcheck` over `torch.testing`): it reads values on the host
//! with `to_vec` by design, which is why it lives here and not under `autograd/`. Re-exported as
//! `tapegrad::autograd::{gradcheck, gradgradcheck, GradcheckOptions}`.

use crate::autograd::grad;
use crate::{DType, Result, Tensor, bail};

/// Tolerances and step for [`gradcheck`].
#[derive(Clone, Copy, Debug)]
pub struct GradcheckOptions {
    /// Finite-difference step.
    pub eps: f64,
    /// Absolute tolerance.
    pub atol: f64,
    /// Relative tolerance.
    pub rtol: f64,
}

impl Default for GradcheckOptions {
    fn default() -> Self {
        GradcheckOptions {
            eps: 1e-6,
            atol: 1e-5,
            rtol: 1e-3,
        }
    }
}

/// The perturbable elements of an input: a sparse input's stored values, else all elements.
fn flat_of(t: &Tensor) -> Result<Vec<f64>> {
    match t.sparse_parts() {
        Some(p) => p.values().to_vec::<f64>(),
        None => t.to_vec::<f64>(),
    }
}

/// Sparse outputs are compared through their dense form.
fn dense_out(y: Tensor) -> Result<Tensor> {
    if y.is_sparse() { y.to_dense() } else { Ok(y) }
}

fn perturbed(inputs: &[Tensor], which: usize, flat: usize, delta: f64) -> Result<Vec<Tensor>> {
    inputs
        .iter()
        .enumerate()
        .map(|(i, t)| {
            // Perturbed copies keep `requires_grad`, so functions that differentiate inside
            // (gradgradcheck's first-order grad) still work on them.
            let c = t.detach().copy()?;
            if t.is_sparse() {
                // perturb one stored value, keep the pattern
                let mut v = flat_of(&c)?;
                if i == which {
                    v[flat] += delta;
                }
                let vals = c.sparse_parts().expect("sparse").values();
                let nv = Tensor::from_vec(v, &vals.shape())?.to_dtype(t.dtype())?;
                return crate::sparse::with_values(&c, &nv)?.requires_grad_(t.requires_grad());
            }
            let c = if i == which {
                let mut v = c.to_vec::<f64>()?;
                v[flat] += delta;
                Tensor::from_vec(v, &c.shape())?.to_dtype(t.dtype())?
            } else {
                c
            };
            c.requires_grad_(t.requires_grad())
        })
        .collect()
}

/// Checks the gradients of `f` at `inputs` (each a f64 tensor requiring grad) against central
/// differences. Returns an error describing the first mismatch. Sparse inputs are perturbed in
/// their stored values (the gradient is read on their pattern); a sparse output is compared
/// through its dense form.
///
/// ```
/// # use tapegrad::{Tensor, autograd::gradcheck};
/// let x = Tensor::from_vec(vec![0.5f64, -1.0, 2.0], &[3])?.requires_grad_(true)?;
/// gradcheck(|v| v[0].mul(&v[0])?.sum(), &[x], Default::default())?;
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn gradcheck(
    f: impl Fn(&[Tensor]) -> Result<Tensor>,
    inputs: &[Tensor],
    opts: GradcheckOptions,
) -> Result<()> {
    for t in inputs {
        if t.dtype() != DType::F64 {
            bail!(
                InvalidArgument,
                "gradcheck",
                "gradcheck needs float64 inputs, got {}",
                t.dtype()
            );
        }
    }
    let f = |xs: &[Tensor]| f(xs).and_then(dense_out);
    let out = f(inputs)?;
    let out_n = out.numel();
    let outv = out.shape();
    for j in 0..out_n {
        // analytical row j: d out[j] / d inputs
        let mut seed = vec![0.0f64; out_n];
        seed[j] = 1.0;
        let g = Tensor::from_vec(seed, &outv)?.to_dtype(out.dtype())?;
        let y = f(inputs)?;
        // an output that does not require grad has a zero analytical Jacobian (as in PyTorch)
        let grads = if y.requires_grad() {
            grad(
                &[y],
                inputs,
                &[Some(g)],
                crate::autograd::GradOptions::default().allow_unused(true),
            )?
        } else {
            vec![None; inputs.len()]
        };
        for (i, t) in inputs.iter().enumerate() {
            let n_in = flat_of(t)?.len();
            let an = match &grads[i] {
                Some(g) if t.is_sparse() => {
                    crate::sparse::grad_values_of(t, g)?.read_as::<f64>()?
                }
                Some(g) => g.read_as::<f64>()?,
                None => vec![0.0; n_in],
            };
            for (k, &ak) in an.iter().enumerate().take(n_in) {
                let plus = f(&perturbed(inputs, i, k, opts.eps)?)?.read_as::<f64>()?[j];
                let minus = f(&perturbed(inputs, i, k, -opts.eps)?)?.read_as::<f64>()?[j];
                let num = (plus - minus) / (2.0 * opts.eps);
                if (ak - num).abs() > opts.atol + opts.rtol * num.abs() {
                    bail!(
                        InvalidArgument,
                        "gradcheck",
                        "Jacobian mismatch for output {} with respect to input {} element {}: numerical {} vs analytical {}",
                        j,
                        i,
                        k,
                        num,
                        ak
                    );
                }
            }
        }
    }
    Ok(())
}

/// Checks second derivatives: gradcheck of the function `(inputs, v) -> Σ_k (k+1)·sum(grad_k)`
/// where `grad = autograd::grad(f(inputs), inputs, grad_outputs = v, create_graph = true)`. Like
/// PyTorch, the grad_outputs `v` (fixed values, linspace 0.5..1.5) are differentiated too, so the
/// backward of every backward formula is checked, including ops that are linear in their input.
///
/// ```
/// # use tapegrad::{Tensor, autograd::gradgradcheck};
/// let x = Tensor::from_vec(vec![0.5f64, -1.0], &[2])?.requires_grad_(true)?;
/// gradgradcheck(|v| v[0].mul(&v[0])?.mul(&v[0])?.sum(), &[x], Default::default())?;
/// # Ok::<(), tapegrad::Error>(())
/// ```
pub fn gradgradcheck(
    f: impl Fn(&[Tensor]) -> Result<Tensor>,
    inputs: &[Tensor],
    opts: GradcheckOptions,
) -> Result<()> {
    let y = f(inputs)?;
    let shape: Vec<i64> = y.shape().iter().map(|&s| s as i64).collect();
    let v = Tensor::linspace(0.5, 1.5, y.numel().max(1), DType::F64)?
        .view(&shape)?
        .requires_grad_(true)?;
    let n_in = inputs.len();
    let first = |xs: &[Tensor]| -> Result<Tensor> {
        let (xs, v) = xs.split_at(n_in);
        let y = f(xs)?;
        let w = if y.dtype() == v[0].dtype() {
            v[0].clone()
        } else {
            v[0].to_dtype(y.dtype())?
        };
        let gs = grad(
            &[y],
            xs,
            &[Some(w)],
            crate::autograd::GradOptions::default()
                .retain_graph(true)
                .create_graph(true)
                .allow_unused(true),
        )?;
        let mut acc: Option<Tensor> = None;
        for (k, g) in gs.into_iter().enumerate() {
            if let Some(g) = g {
                let s = g.mul((k + 1) as f64)?.sum()?;
                acc = Some(match acc {
                    None => s,
                    Some(a) => a.add(&s)?,
                });
            }
        }
        match acc {
            Some(a) => Ok(a),
            None => Ok(Tensor::scalar(0.0f64)),
        }
    };
    let mut all = inputs.to_vec();
    all.push(v);
    gradcheck(first, &all, opts)
}
