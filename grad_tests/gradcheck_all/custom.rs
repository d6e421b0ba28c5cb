//! Rows for user-defined autograd functions (`tapegrad::autograd::Function`, defined in
//! `grad_tests/custom_fns.rs`): a saved input, a saved output, several outputs with one unused,
//! and an in-place function (`mark_dirty`) on a plain tensor and on a view (CopySlices). Their
//! backward formulas are differentiable, so gradgradcheck proves `create_graph` through them.

use super::*;
use crate::custom_fns::{ExpOut, MulInto, Three, XExp};
use tapegrad::autograd::Function;

pub(crate) fn custom_cases() -> Vec<Case> {
    vec![
        case!(
            "compose/custom_function",
            [leaf(&[2, 3], -1.0, 1.0, 700)],
            |v| Ok(XExp.apply(&[&v[0]])?.remove(0))
        ),
        case!(
            "compose/custom_function_saved_output",
            [leaf(&[3], -1.0, 1.0, 701)],
            |v| Ok(ExpOut.apply(&[&v[0]])?.remove(0))
        ),
        case!(
            "compose/custom_function_outputs",
            [leaf(&[3], -1.0, 1.0, 702), leaf(&[3], -1.0, 1.0, 703)],
            |v| {
                let o = Three.apply(&[&v[0], &v[1]])?;
                o[0].add(&o[2].mul(&o[0])?)
            }
        ),
        case!(
            "compose/custom_function_dirty",
            [leaf(&[3], -1.0, 1.0, 704), leaf(&[3], -1.0, 1.0, 705)],
            |v| Ok(MulInto.apply(&[&v[0], &v[1].copy()?])?.remove(0))
        ),
        case!(
            "compose/custom_function_dirty_view",
            [leaf(&[1], 0.5, 1.5, 706), leaf(&[4], -1.0, 1.0, 707)],
            |v| {
                let b = v[1].copy()?;
                MulInto.apply(&[&v[0], &b.narrow(0, 1, 2)?])?;
                b.mul(&b)
            }
        ),
    ]
}
