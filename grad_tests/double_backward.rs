//! Second derivatives through view ops: the view backward (`scatter_to_geometry`) is itself
//! differentiable, so `gradgradcheck` passes for slicing views, multi-output views and
//! embedding/indexing (PyTorch's gradgradcheck passes for each of these functions).
//! Not covered yet: CopySlices (in-place through a view) under create_graph gives wrong second
//! derivatives.

use crate::common::{R, rg};
use tapegrad::Tensor;
use tapegrad::autograd::{gradcheck, gradgradcheck};

fn both(f: impl Fn(&[Tensor]) -> tapegrad::Result<Tensor>, inputs: &[Tensor]) -> R {
    gradcheck(&f, inputs, Default::default())?;
    gradgradcheck(&f, inputs, Default::default())
}

#[test]
fn slicing_views_are_twice_differentiable() -> R {
    both(|v| v[0].narrow(0, 1, 2)?.pow(3.0), &[rg(&[4])])?;
    both(|v| v[0].select(1, 2)?.pow(3.0), &[rg(&[2, 3])])?;
    both(
        |v| v[0].slice(0, Some(0), Some(5), 2)?.pow(3.0),
        &[rg(&[5])],
    )?;
    both(|v| v[0].diagonal(0, 0, 1)?.pow(3.0), &[rg(&[3, 3])])?;
    // a view of an intermediate: narrow(x * x)^2
    both(
        |v| {
            let a = v[0].mul(&v[0])?.narrow(0, 0, 2)?;
            a.mul(&a)
        },
        &[rg(&[3])],
    )?;
    // several views of one tensor (unbind: a multi-output view)
    both(
        |v| {
            let p = v[0].unbind(0)?;
            p[0].mul(&p[1])?.mul(&p[2])
        },
        &[rg(&[3, 2])],
    )?;
    Ok(())
}

#[test]
fn embedding_and_index_select_are_twice_differentiable() -> R {
    let idx = Tensor::from_vec(vec![2i64, 0, 2], &[3])?;
    both(
        |v| Tensor::embedding(&idx, &v[0])?.mul(&v[0].narrow(0, 0, 3)?),
        &[rg(&[4, 2])],
    )?;
    both(|v| v[0].mul(&v[0])?.index_select(0, &idx), &[rg(&[3, 2])])?;
    Ok(())
}

/// Saved inputs hold their tensor weakly (no reference cycles through in-place writes): when the
/// user has dropped an intermediate the node saved, a `create_graph` backward still leads back
/// through the intermediate's history. y = (3x) * (x^2) = 3x^3: y' = 9x^2, y'' = 18x.
#[test]
fn saved_intermediates_dropped_by_the_user_stay_differentiable() -> R {
    let x = Tensor::from_vec(vec![0.5f64, -2.0], &[2])?.requires_grad_(true)?;
    let y = {
        let a = x.mul(3.0)?; // dropped at the end of this block: only MulBackward0 saved it
        let b = x.mul(&x)?;
        a.mul(&b)?.sum()?
    };
    let g = tapegrad::autograd::grad(
        &[y],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default()
            .retain_graph(true)
            .create_graph(true),
    )?;
    let g = g[0].clone().unwrap();
    assert_eq!(g.to_vec::<f64>()?, vec![9.0 * 0.25, 9.0 * 4.0]);
    let gg = tapegrad::autograd::grad(
        &[g.sum()?],
        std::slice::from_ref(&x),
        &[None],
        tapegrad::autograd::GradOptions::default(),
    )?;
    assert_eq!(
        gg[0].clone().unwrap().to_vec::<f64>()?,
        vec![18.0 * 0.5, 18.0 * -2.0]
    );
    Ok(())
}
