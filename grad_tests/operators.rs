//! Rust operators on tensors (`src/tensor/operators.rs`): each equals its method in values,
//! dtypes and gradients; compound assignments are the in-place ops (version bump, leaf check,
//! CopySlices); a failing operator panics with its method's error message.

use crate::common::{R, i64t, leaf64, t64};
use tapegrad::{DType, Tensor};

fn vals(t: &Tensor) -> Vec<f64> {
    t.to_vec::<f64>().unwrap()
}

#[test]
fn binary_operators_equal_their_methods() -> R {
    let a = t64(&[1.5, -2.0, 3.0, 4.5], &[2, 2]);
    let b = t64(&[0.5, 4.0], &[2]);
    for (op, m) in [
        (&a + &b, a.add(&b)?),
        (&a - &b, a.sub(&b)?),
        (&a * &b, a.mul(&b)?),
        (&a / &b, a.div(&b)?),
        (&a % &b, a.remainder(&b)?),
        (a.clone() + b.clone(), a.add(&b)?),
        (&a - b.clone(), a.sub(&b)?),
        (a.clone() * &b, a.mul(&b)?),
        (-&a, a.neg()?),
        (-a.clone(), a.neg()?),
    ] {
        assert_eq!((op.shape(), op.dtype()), (m.shape(), m.dtype()));
        assert_eq!(vals(&op), vals(&m));
    }
    Ok(())
}

#[test]
fn scalar_operands_on_either_side() -> R {
    let a = t64(&[1.0, -2.0, 4.0], &[3]);
    assert_eq!(vals(&(&a + 1)), vec![2.0, -1.0, 5.0]);
    assert_eq!(vals(&(&a * 2.0f32)), vec![2.0, -4.0, 8.0]);
    assert_eq!(vals(&(a.clone() - 1i32)), vec![0.0, -3.0, 3.0]);
    assert_eq!(vals(&(&a / 2u8)), vec![0.5, -1.0, 2.0]);
    assert_eq!(vals(&(&a % 3)), vec![1.0, 1.0, 1.0]);
    assert_eq!(vals(&(1.0 + &a)), vec![2.0, -1.0, 5.0]);
    assert_eq!(vals(&(3 * a.clone())), vec![3.0, -6.0, 12.0]);
    // the scalar stays the first operand: `s - t`, `s / t`, `s % t` (Python's `__rsub__` ...)
    assert_eq!(vals(&(1.0 - &a)), vec![0.0, 3.0, -3.0]);
    assert_eq!(vals(&(4i64 / &a)), vec![4.0, -2.0, 1.0]);
    assert_eq!(vals(&(5 % &a)), vec![0.0, -1.0, 1.0]);
    assert_eq!(
        vals(&(5 % &a)),
        vals(&Tensor::remainder_scalar_base(5, &a)?)
    );
    Ok(())
}

#[test]
fn operators_promote_like_the_methods() -> R {
    let i = i64t(&[3, -4], &[2]);
    // int tensor with a float scalar: the default float dtype; int / int: true division
    assert_eq!((&i * 0.5).dtype(), DType::F32);
    assert_eq!((&i / 2).to_vec::<f32>()?, vec![1.5, -2.0]);
    assert_eq!((&i + 1).dtype(), DType::I64);
    assert_eq!((-&i).to_vec::<i64>()?, vec![-3, 4]);
    assert_eq!((&i % 3).to_vec::<i64>()?, vec![0, 2]);
    let f = Tensor::from_vec(vec![1.0f32, 2.0], &[2])?;
    assert_eq!((&f + 1.0f64).dtype(), DType::F32);
    assert_eq!((&f + &i).dtype(), DType::F32);
    Ok(())
}

#[test]
fn gradients_flow_through_operators() -> R {
    let x = leaf64(&[0.5, 1.5, -2.0], &[3]);
    let w = leaf64(&[2.0, -1.0, 3.0], &[3]);
    // y = (x w + 1) / x - 2 x - (3 - w) = w + 1/x - 2x - 3 + w
    let y = (&x * &w + 1.0) / &x - 2.0 * &x - (3.0 - &w);
    y.sum()?.backward()?;
    let gx: Vec<f64> = [0.5f64, 1.5, -2.0]
        .iter()
        .map(|v| -1.0 / (v * v) - 2.0)
        .collect();
    crate::common::assert_close(&vals(&x.grad().unwrap()), &gx, 1e-12);
    crate::common::assert_close(&vals(&w.grad().unwrap()), &[2.0; 3], 1e-12);
    // the nodes are the methods' nodes
    assert_eq!((&x * &w).grad_fn().unwrap().name(), "MulBackward0");
    assert_eq!((-&x).grad_fn().unwrap().name(), "NegBackward0");
    assert_eq!((2.0 - &x).grad_fn().unwrap().name(), "SubBackward0");
    assert_eq!((&x % 1.0).grad_fn().unwrap().name(), "RemainderBackward0");
    Ok(())
}

#[test]
fn compound_assignment_is_the_inplace_op() -> R {
    let mut a = t64(&[1.0, 2.0], &[2]);
    let alias = a.clone();
    a += 1.0;
    assert_eq!((a.version(), vals(&alias)), (1, vec![2.0, 3.0]));
    a -= &t64(&[1.0, 1.0], &[2]);
    a *= t64(&[3.0, 4.0], &[2]);
    a /= 2;
    a %= 2.5;
    assert_eq!(vals(&alias), vec![1.5, 1.5]);
    assert_eq!(alias.version(), 5);
    // int tensor: `+=` keeps its dtype, `/=` with a float result is the in-place cast error
    let mut i = i64t(&[1, 2], &[2]);
    i += 2;
    assert_eq!(i.to_vec::<i64>()?, vec![3, 4]);
    Ok(())
}

#[test]
fn compound_assignment_through_a_view_rebases_history() -> R {
    let x = leaf64(&[1.0, 2.0, 3.0, 4.0], &[2, 2]);
    let b = x.copy()?;
    let mut row = b.select(0, 1)?;
    row *= 10.0;
    row += &x.select(0, 0)?;
    assert_eq!(b.grad_fn().unwrap().name(), "CopySlices");
    assert_eq!(vals(&b), vec![1.0, 2.0, 31.0, 42.0]);
    b.sum()?.backward()?;
    assert_eq!(vals(&x.grad().unwrap()), vec![2.0, 2.0, 10.0, 10.0]);
    Ok(())
}

fn panic_text(f: impl FnOnce()) -> String {
    let p = std::panic::catch_unwind(std::panic::AssertUnwindSafe(f))
        .expect_err("the operator did not panic");
    match p.downcast::<String>() {
        Ok(s) => *s,
        Err(p) => p.downcast_ref::<&str>().unwrap().to_string(),
    }
}

#[test]
fn operators_panic_with_the_method_error() {
    let a = t64(&[1.0, 2.0, 3.0], &[3]);
    let b = t64(&[1.0, 2.0], &[2]);
    let e = a.add(&b).unwrap_err();
    let (a2, b2) = (a.clone(), b.clone());
    assert_eq!(panic_text(move || drop(&a2 + &b2)), e.to_string());
    let e = a.remainder(&b).unwrap_err();
    let (a2, b2) = (a.clone(), b.clone());
    assert_eq!(panic_text(move || drop(a2 % b2)), e.to_string());
    // in place: a leaf requiring grad, and a result that cannot be cast
    let leaf = leaf64(&[1.0], &[1]);
    let e = leaf.add_(1.0).unwrap_err();
    let mut l2 = leaf.clone();
    assert_eq!(panic_text(move || l2 += 1.0), e.to_string());
    assert_eq!(leaf.version(), 0);
    let i = i64t(&[1, 2], &[2]);
    let e = i.div_(2).unwrap_err();
    let mut i2 = i.clone();
    assert_eq!(panic_text(move || i2 /= 2), e.to_string());
    assert_eq!(i.to_vec::<i64>().unwrap(), vec![1, 2]);
}
