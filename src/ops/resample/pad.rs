//! `pad` (`torch.nn.functional.pad`): constant padding of any number of trailing dims, and
//! reflect / replicate / circular padding of the last 1, 2 or 3 dims, with negative pads
//! cropping. Forward: the plan's gather (`fill` = the constant); backward: its scatter. The
//! plans follow PyTorch's index formulas (`ReflectionPad*`, `ReplicationPad*` kernels, the
//! crop-then-wrap of `_pad_circular`).

use super::{Plan, gather, grid};
use crate::backend::PlaneMap;
use crate::{DType, IntoShape, Result, Tensor, bail};
use std::sync::Arc;

/// The `mode` of [`Tensor::pad`].
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PadMode {
    /// Pad with a constant (`value`, default 0).
    #[default]
    Constant,
    /// Mirror the input without repeating the edge (`[a b c]` → `c b | a b c | b a`).
    Reflect,
    /// Repeat the edge element.
    Replicate,
    /// Wrap around (the input tiles the line).
    Circular,
}

impl PadMode {
    fn name(self) -> &'static str {
        match self {
            PadMode::Constant => "constant",
            PadMode::Reflect => "reflect",
            PadMode::Replicate => "replicate",
            PadMode::Circular => "circular",
        }
    }
}

/// Input position read by output `o` of a dim of `n` padded by `(l, r)` (PyTorch's formulas).
fn source(mode: PadMode, o: i64, n: i64, l: i64, r: i64) -> Option<usize> {
    let (i_start, o_start) = ((-l).max(0), l.max(0));
    let i = match mode {
        PadMode::Constant => o - l,
        PadMode::Reflect => {
            let ip = if o < l {
                2 * l - o
            } else if o < n + l {
                o
            } else {
                2 * (n + l - 1) - o
            };
            ip - o_start + i_start
        }
        PadMode::Replicate => {
            let ip = if o < l {
                l
            } else if o < n + l {
                o
            } else {
                n + l - 1
            };
            ip - o_start + i_start
        }
        PadMode::Circular => {
            let m = n - (-l).max(0) - (-r).max(0);
            i_start + (o - o_start).rem_euclid(m)
        }
    };
    (0..n).contains(&i).then_some(i as usize)
}

const SUPPORTED: &str = "Supported combinations for non-constant padding:\n  - 2D or 3D input: padding size = 2 (pads last dimension)\n  - 3D or 4D input: padding size = 4 (pads last 2 dimensions)\n  - 4D or 5D input: padding size = 6 (pads last 3 dimensions)";

/// Checks of the non-constant modes (PyTorch's order and messages).
fn check_mode(x: &Tensor, pad: &[i64], mode: PadMode, value: Option<f64>) -> Result<()> {
    let op = "pad";
    if let Some(v) = value
        && v != 0.0
    {
        bail!(
            InvalidArgument,
            op,
            "Padding mode \"{}\" doesn't take in value argument",
            mode.name()
        );
    }
    let (k, nd, sh) = (pad.len() / 2, x.dim(), x.shape());
    if !(1..=3).contains(&k) || !(nd == k + 1 || nd == k + 2) {
        bail!(
            InvalidArgument,
            op,
            "Padding size {} is not supported for {}D input tensor.\n{}",
            pad.len(),
            nd,
            SUPPORTED
        );
    }
    if x.dtype() == DType::Bool && mode != PadMode::Circular {
        let kernel = if mode == PadMode::Reflect {
            "reflection"
        } else {
            "replication"
        };
        bail!(
            DTypeMismatch,
            op,
            "\"{}_pad{}d\" not implemented for 'Bool'",
            kernel,
            k
        );
    }
    if mode != PadMode::Circular && sh[1..].contains(&0) {
        bail!(
            InvalidArgument,
            op,
            "Expected {}D or {}D (batch mode) tensor with possibly 0 batch size and other non-zero dimensions for input, but got: {:?}",
            k + 1,
            k + 2,
            sh
        );
    }
    for j in 0..k {
        let dim = nd - 1 - j;
        let (n, l, r) = (sh[dim] as i64, pad[2 * j], pad[2 * j + 1]);
        match mode {
            PadMode::Reflect if l >= n || r >= n => bail!(
                InvalidArgument,
                op,
                "Argument #4: Padding size should be less than the corresponding input dimension, but got: padding ({}, {}) at dimension {} of input {:?}",
                l,
                r,
                dim,
                sh
            ),
            PadMode::Circular if l > n || r > n => bail!(
                InvalidArgument,
                op,
                "Padding value causes wrapping around more than once."
            ),
            PadMode::Circular if (l < 0 || r < 0) && n - (-l).max(0) - (-r).max(0) <= 0 => bail!(
                InvalidArgument,
                op,
                "Negative padding value is resulting in an empty dimension."
            ),
            _ => {}
        }
        if mode != PadMode::Circular && n + l + r < 1 {
            let letter = ["W", "H", "D"][j];
            bail!(
                InvalidArgument,
                op,
                "input ({}: {}) is too small. Calculated output {}: {}",
                letter,
                n,
                letter,
                n + l + r
            );
        }
    }
    Ok(())
}

fn names(mode: PadMode, k: usize) -> (&'static str, &'static str) {
    match (mode, k) {
        (PadMode::Constant, _) => ("ConstantPadNdBackward0", "ConstantPadNdBackward0"),
        (PadMode::Circular, _) => ("CopySlices", "CopySlices"),
        (PadMode::Reflect, 1) => (
            "ReflectionPad1DBackward0",
            "ReflectionPad1DBackwardBackward0",
        ),
        (PadMode::Reflect, 2) => (
            "ReflectionPad2DBackward0",
            "ReflectionPad2DBackwardBackward0",
        ),
        (PadMode::Reflect, _) => (
            "ReflectionPad3DBackward0",
            "ReflectionPad3DBackwardBackward0",
        ),
        (PadMode::Replicate, 1) => (
            "ReplicationPad1DBackward0",
            "ReplicationPad1DBackwardBackward0",
        ),
        (PadMode::Replicate, 2) => (
            "ReplicationPad2DBackward0",
            "ReplicationPad2DBackwardBackward0",
        ),
        (PadMode::Replicate, _) => (
            "ReplicationPad3DBackward0",
            "ReplicationPad3DBackwardBackward0",
        ),
    }
}

impl Tensor {
    /// `torch.nn.functional.pad(input, pad, mode, value)`: `pad` lists `(left, right)` pairs
    /// from the last dim backwards (`[l, r]` pads the last dim, `[l, r, t, b]` the last two);
    /// negative pads crop. `Constant` pads any number of dims (up to all) with `value` (default
    /// 0, any dtype); `Reflect`, `Replicate` and `Circular` pad the last 1, 2 or 3 dims of an
    /// input with one or two more dims (a value other than 0 is refused, as in PyTorch).
    /// Errors: a bool input to reflect / replicate (DTypeMismatch); an odd or too long `pad`,
    /// an unsupported dims combination, a reflect pad not below the size, a circular pad above
    /// it, an empty output (InvalidArgument).
    ///
    /// The circular mode records one node named `CopySlices` (the name PyTorch's
    /// composite implementation shows) whose rule is the adjoint of the wrap, and leaves the
    /// output at the version PyTorch's in-place slice copies give it (1 + the number of
    /// positive pads).
    ///
    /// ```
    /// # use tapegrad::{Tensor, PadMode};
    /// let x = Tensor::from_vec(vec![1.0f32, 2.0, 3.0], &[1, 3])?;
    /// assert_eq!(x.pad(&[2, 1], PadMode::Reflect, None)?.to_vec::<f32>()?, vec![3.0, 2.0, 1.0, 2.0, 3.0, 2.0]);
    /// assert_eq!(x.pad(&[1, 1], PadMode::Replicate, None)?.to_vec::<f32>()?, vec![1.0, 1.0, 2.0, 3.0, 3.0]);
    /// assert_eq!(x.pad(&[1, -1], PadMode::Constant, Some(9.0))?.to_vec::<f32>()?, vec![9.0, 1.0, 2.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn pad(&self, pad: impl IntoShape, mode: PadMode, value: Option<f64>) -> Result<Tensor> {
        let op = "pad";
        let pad = &crate::tensor::dims::ints(pad, op)?[..];
        if !pad.len().is_multiple_of(2) {
            bail!(InvalidArgument, op, "Padding length must be divisible by 2");
        }
        let (k, nd, sh) = (pad.len() / 2, self.dim(), self.shape());
        if k > nd {
            bail!(
                InvalidArgument,
                op,
                "Padding length should be less than or equal to two times the input dimension but got padding length {} and input of dimension {}",
                pad.len(),
                nd
            );
        }
        if mode == PadMode::Constant {
            for j in 0..k {
                let dim = nd - 1 - j;
                let (l, r) = (pad[2 * j], pad[2 * j + 1]);
                if sh[dim] as i64 + l + r < 0 {
                    bail!(
                        InvalidArgument,
                        op,
                        "The input size {}, plus negative padding {} and {} resulted in a negative output size, which is invalid. Check dimension {} of your input.",
                        sh[dim],
                        l,
                        r,
                        dim
                    );
                }
            }
        } else {
            check_mode(self, pad, mode, value)?;
        }
        let lead = nd - k;
        let mut axes = Vec::with_capacity(k);
        let mut out_shape = sh[..lead].to_vec();
        for (dim, &n) in sh.iter().enumerate().skip(lead) {
            let j = nd - 1 - dim;
            let (n, l, r) = (n as i64, pad[2 * j], pad[2 * j + 1]);
            let out = (n + l + r) as usize;
            axes.push((0..out as i64).map(|o| source(mode, o, n, l, r)).collect());
            out_shape.push(out);
        }
        let dims = &sh[lead..];
        let (gather_name, scatter_name) = names(mode, k);
        let plan = Plan {
            map: PlaneMap {
                planes: sh[..lead].iter().product(),
                in_plane: dims.iter().product(),
                out_plane: out_shape[lead..].iter().product(),
                taps: 1,
                src: grid(&axes, dims),
                weight: None,
            },
            in_shape: sh,
            out_shape,
            gather_name,
            scatter_name,
        };
        let out = gather(self, &Arc::new(plan), value.unwrap_or(0.0))?;
        if mode == PadMode::Circular {
            // PyTorch's composite writes the output in place: the centre, then one slice copy
            // per positive pad; its version counter shows those writes
            for _ in 0..1 + pad.iter().filter(|&&p| p > 0).count() {
                out.0.version.bump();
            }
        }
        Ok(out)
    }
}
