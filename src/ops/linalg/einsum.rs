//! `einsum`: PyTorch's equation language (implicit and explicit output, `...`, repeated
//! subscripts within one operand = diagonal, size-1 broadcasting) composed of views
//! (`diagonal`, `permute`, `unsqueeze`, `reshape`), `sum_dims`, `mul` and `bmm`, so its
//! backward (and double backward) is theirs.
//!
//! As in PyTorch, every operand is first aligned to one label order (the output labels, then
//! the contracted ones), with size-1 dims for labels it lacks; the operands are then contracted
//! left to right, a label being summed out as soon as no later operand carries it.

use crate::{Result, Tensor, bail};

const OP: &str = "einsum";
/// Label id of the ellipsis in a parsed term (letters are `0..52`).
const ELL: usize = 52;

/// One term of the equation: its labels in order, `ELL` standing for `...`.
type Term = Vec<usize>;

fn label_of(c: u8) -> usize {
    if c.is_ascii_uppercase() {
        (c - b'A') as usize
    } else {
        (c - b'a') as usize + 26
    }
}

fn label_char(l: usize) -> char {
    if l < 26 {
        (b'A' + l as u8) as char
    } else {
        (b'a' + (l - 26) as u8) as char
    }
}

/// Splits `eq` into input terms and the explicit output term (if `->` is present).
fn parse(eq: &str) -> Result<(Vec<Term>, Option<Term>)> {
    let bytes = eq.as_bytes();
    let arrow = eq.find("->");
    let lhs_end = arrow.unwrap_or(bytes.len());
    let mut terms: Vec<Term> = vec![Vec::new()];
    let mut i = 0;
    let mut dots = 0usize;
    let mut parse_term = |range: std::ops::Range<usize>,
                          terms: &mut Vec<Term>,
                          allow_comma: bool|
     -> Result<()> {
        i = range.start;
        while i < range.end {
            let c = bytes[i];
            let opnum = terms.len() - 1;
            match c {
                b' ' => {}
                b',' if allow_comma => {
                    if dots != 0 {
                        bail!(
                            InvalidArgument,
                            OP,
                            "einsum(): found '.' for operand {} that is not part of any ellipsis",
                            opnum
                        );
                    }
                    terms.push(Vec::new());
                }
                b'.' => {
                    let term = terms.last_mut().expect("one term");
                    if term.contains(&ELL) {
                        bail!(
                            InvalidArgument,
                            OP,
                            "einsum(): found '.' for operand {} for which an ellipsis was already found",
                            opnum
                        );
                    }
                    dots += 1;
                    if dots == 3 {
                        term.push(ELL);
                        dots = 0;
                    }
                }
                c if c.is_ascii_alphabetic() => {
                    if dots != 0 {
                        bail!(
                            InvalidArgument,
                            OP,
                            "einsum(): found '.' for operand {} that is not part of any ellipsis",
                            opnum
                        );
                    }
                    terms.last_mut().expect("one term").push(label_of(c));
                }
                _ => bail!(
                    InvalidArgument,
                    OP,
                    "einsum(): invalid subscript given at index {} in the equation string, subscripts must be in [a-zA-Z]",
                    i
                ),
            }
            i += 1;
        }
        if dots != 0 {
            bail!(
                InvalidArgument,
                OP,
                "einsum(): found '.' for operand {} that is not part of any ellipsis",
                terms.len() - 1
            );
        }
        Ok(())
    };
    parse_term(0..lhs_end, &mut terms, true)?;
    let out = match arrow {
        Some(a) => {
            let mut o = vec![Vec::new()];
            parse_term(a + 2..bytes.len(), &mut o, false)?;
            Some(o.pop().expect("one term"))
        }
        None => None,
    };
    Ok((terms, out))
}

/// Tensors of one label order: `operand[d]` has the size of label order entry `d` or 1.
struct Aligned {
    ops: Vec<Tensor>,
    /// Number of leading output dims.
    n_out: usize,
    /// Total aligned dims (output then contracted).
    n_all: usize,
}

/// Parses and checks the equation against the operands; returns the aligned operands.
fn align(eq: &str, operands: &[&Tensor]) -> Result<Aligned> {
    let (terms, out) = parse(eq)?;
    if operands.is_empty() {
        bail!(
            InvalidArgument,
            OP,
            "einsum(): must provide at least one operand"
        );
    }
    if terms.len() > operands.len() {
        bail!(
            InvalidArgument,
            OP,
            "einsum(): fewer operands were provided than specified in the equation"
        );
    }
    if terms.len() < operands.len() {
        bail!(
            InvalidArgument,
            OP,
            "einsum(): more operands were provided than specified in the equation"
        );
    }
    let dt = operands[0].dtype();
    for t in operands {
        t.check_strided(OP)?;
        if t.dtype() != dt {
            bail!(
                DTypeMismatch,
                OP,
                "einsum(): expected every operand to have dtype {}, but found {} and {}",
                dt.torch_scalar_name(),
                dt.torch_scalar_name(),
                t.dtype().torch_scalar_name()
            );
        }
    }
    // ellipsis dims: the most any operand covers
    let mut ell_dims = 0usize;
    let mut counts = [0usize; 52];
    for (k, (term, t)) in terms.iter().zip(operands).enumerate() {
        let nlab = term.iter().filter(|&&l| l != ELL).count();
        let has_ell = term.contains(&ELL);
        if (has_ell && t.dim() < nlab) || (!has_ell && t.dim() != nlab) {
            bail!(
                InvalidArgument,
                OP,
                "einsum(): the number of subscripts in the equation ({}) {} the number of dimensions ({}) for operand {}{}",
                nlab,
                if has_ell {
                    "is more than"
                } else {
                    "does not match"
                },
                t.dim(),
                k,
                if has_ell {
                    ""
                } else {
                    " and no ellipsis was given"
                }
            );
        }
        if has_ell {
            ell_dims = ell_dims.max(t.dim() - nlab);
        }
        for &l in term.iter().filter(|&&l| l != ELL) {
            counts[l] += 1;
        }
    }
    // output term: implicit = ellipsis then labels seen once, in ASCII order
    let out: Term = match out {
        Some(o) => {
            let mut seen = [false; 52];
            for &l in o.iter().filter(|&&l| l != ELL) {
                if seen[l] {
                    bail!(
                        InvalidArgument,
                        OP,
                        "einsum(): output subscript {} appears more than once in the output",
                        label_char(l)
                    );
                }
                if counts[l] == 0 {
                    bail!(
                        InvalidArgument,
                        OP,
                        "einsum(): output subscript {} does not appear in the equation for any input operand",
                        label_char(l)
                    );
                }
                seen[l] = true;
            }
            o
        }
        None => {
            let mut o = vec![ELL];
            o.extend((0..52).filter(|&l| counts[l] == 1));
            o
        }
    };
    // aligned slots: output slots (ellipsis expands to `ell_dims` slots), then contracted
    // labels in label order. `slot_of[l]` for letters; ellipsis slots start at `ell_at`.
    let mut slot_of = [usize::MAX; 52];
    let mut n = 0usize;
    let mut ell_at = None;
    for &l in &out {
        if l == ELL {
            ell_at = Some(n);
            n += ell_dims;
        } else {
            slot_of[l] = n;
            n += 1;
        }
    }
    let n_out = n;
    let ell_at = match ell_at {
        Some(e) => e,
        None => {
            // ellipsis dims not in the output are summed: contracted slots
            let e = n;
            n += ell_dims;
            e
        }
    };
    for l in 0..52 {
        if counts[l] > 0 && slot_of[l] == usize::MAX {
            slot_of[l] = n;
            n += 1;
        }
    }
    let n_all = n;
    let mut sizes = vec![1usize; n_all];
    let mut ops = Vec::with_capacity(operands.len());
    for (k, (term, t)) in terms.iter().zip(operands).enumerate() {
        // slot of each dim of `t`
        let nlab = term.iter().filter(|&&l| l != ELL).count();
        let covered = t.dim() - nlab;
        let mut dim_slot = Vec::with_capacity(t.dim());
        for &l in term {
            if l == ELL {
                // right-aligned within the ellipsis slots
                dim_slot.extend((ell_dims - covered..ell_dims).map(|j| ell_at + j));
            } else {
                dim_slot.push(slot_of[l]);
            }
        }
        // repeated labels: take diagonals (the diagonal dim moves to the end)
        let mut x = (*t).clone();
        let mut d = 0;
        while d < dim_slot.len() {
            if let Some(e) = (d + 1..dim_slot.len()).find(|&e| dim_slot[e] == dim_slot[d]) {
                let (sd, se) = (x.shape()[d], x.shape()[e]);
                if sd != se {
                    bail!(
                        ShapeMismatch,
                        OP,
                        "einsum(): subscript {} is repeated for operand {} but the sizes don't match, {} != {}",
                        term_label_char(dim_slot[d], &slot_of),
                        k,
                        se,
                        sd
                    );
                }
                x = x.diagonal(0, d as i64, e as i64)?;
                let s = dim_slot[d];
                dim_slot.remove(e);
                dim_slot.remove(d);
                dim_slot.push(s);
            } else {
                d += 1;
            }
        }
        // sizes must agree or be 1
        let xs = x.shape();
        for (j, &s) in dim_slot.iter().enumerate() {
            let (have, got) = (sizes[s], xs[j]);
            if have == 1 {
                sizes[s] = got;
            } else if got != 1 && got != have {
                if s >= ell_at && s < ell_at + ell_dims && !slot_of.contains(&s) {
                    // PyTorch's RuntimeError here is its generic einsum error (not a size kind)
                    bail!(
                        InvalidArgument,
                        OP,
                        "einsum(): dimension {} covered by ellipsis in operand {} has size {} which does not broadcast with previously seen ellipsis with size {} for the respective dimension",
                        j,
                        k,
                        got,
                        have
                    );
                }
                bail!(
                    ShapeMismatch,
                    OP,
                    "einsum(): subscript {} has size {} for operand {} which does not broadcast with previously seen size {}",
                    term_label_char(s, &slot_of),
                    got,
                    k,
                    have
                );
            }
        }
        // permute into slot order, then insert size-1 dims for the missing slots
        let mut order: Vec<usize> = (0..dim_slot.len()).collect();
        order.sort_by_key(|&j| dim_slot[j]);
        let perm: Vec<i64> = order.iter().map(|&j| j as i64).collect();
        // always a permute, as PyTorch (so even `"ij->ij"` returns a view with a grad_fn)
        let mut y = x.permute(&perm)?;
        let present: Vec<usize> = order.iter().map(|&j| dim_slot[j]).collect();
        for s in 0..n_all {
            if !present.contains(&s) {
                y = y.unsqueeze(s as i64)?;
            }
        }
        ops.push(y);
    }
    Ok(Aligned { ops, n_out, n_all })
}

/// The letter of a slot (for messages); ellipsis slots have none.
fn term_label_char(slot: usize, slot_of: &[usize; 52]) -> char {
    slot_of
        .iter()
        .position(|&s| s == slot)
        .map(label_char)
        .unwrap_or('.')
}

/// PyTorch's `sumproduct_pair`: `sum over sum_dims of a * b` for aligned `a`, `b` (equal rank,
/// sizes equal or 1), keeping the summed dims as size 1.
fn sumproduct_pair(a: &Tensor, b: &Tensor, sum_dims: &[usize]) -> Result<Tensor> {
    if sum_dims.is_empty() {
        return a.mul(b);
    }
    let n = a.dim();
    let (mut a, mut b) = (a.clone(), b.clone());
    // a summed dim carried by one side only is summed there first
    let one_sided_a: Vec<i64> = sum_dims
        .iter()
        .filter(|&&d| a.shape()[d] != 1 && b.shape()[d] == 1)
        .map(|&d| d as i64)
        .collect();
    let one_sided_b: Vec<i64> = sum_dims
        .iter()
        .filter(|&&d| b.shape()[d] != 1 && a.shape()[d] == 1)
        .map(|&d| d as i64)
        .collect();
    if !one_sided_a.is_empty() {
        a = a.sum_dims(&one_sided_a, true)?;
    }
    if !one_sided_b.is_empty() {
        b = b.sum_dims(&one_sided_b, true)?;
    }
    let (sa, sb) = (a.shape(), b.shape());
    let (mut lro, mut lo, mut ro, mut sm, mut rest) = (vec![], vec![], vec![], vec![], vec![]);
    for d in 0..n {
        let (x, y) = (sa[d] != 1, sb[d] != 1);
        if sum_dims.contains(&d) {
            if x && y {
                sm.push(d);
            } else {
                rest.push(d);
            }
        } else if x && y {
            lro.push(d);
        } else if x {
            lo.push(d);
        } else if y {
            ro.push(d);
        } else {
            rest.push(d);
        }
    }
    // when the right operand's free dims end before the left one's in the aligned order,
    // PyTorch's result has them outer: `b^T a^T` gives that layout
    if ro.last().zip(lo.last()).is_some_and(|(r, l)| r < l) {
        let r = sumproduct_pair_ordered(&b, &a, (&lro, &ro, &lo, &sm, &rest), (&sb, &sa))?;
        return Ok(r);
    }
    sumproduct_pair_ordered(&a, &b, (&lro, &lo, &ro, &sm, &rest), (&sa, &sb))
}

type Groups<'g> = (
    &'g [usize],
    &'g [usize],
    &'g [usize],
    &'g [usize],
    &'g [usize],
);

/// `bmm` of `a` `[lro, lo, sum]` and `b` `[lro, sum, ro]`, back in the aligned order.
fn sumproduct_pair_ordered(
    a: &Tensor,
    b: &Tensor,
    (lro, lo, ro, sm, rest): Groups<'_>,
    (sa, sb): (&[usize], &[usize]),
) -> Result<Tensor> {
    let n = a.dim();
    let prod = |dims: &[usize], s: &[usize]| dims.iter().map(|&d| s[d]).product::<usize>() as i64;
    let (lro_n, lo_n, ro_n, sum_n) = (prod(lro, sa), prod(lo, sa), prod(ro, sb), prod(sm, sa));
    let cat = |parts: &[&[usize]]| -> Vec<usize> {
        parts.iter().flat_map(|p| p.iter().copied()).collect()
    };
    let pa = cat(&[lro, lo, sm, ro, rest]);
    let pb = cat(&[lro, sm, ro, lo, rest]);
    let as_i64 = |v: &[usize]| v.iter().map(|&d| d as i64).collect::<Vec<i64>>();
    let a3 = a.permute(&as_i64(&pa))?.reshape(&[lro_n, lo_n, sum_n])?;
    let b3 = b.permute(&as_i64(&pb))?.reshape(&[lro_n, sum_n, ro_n])?;
    let r = a3.bmm(&b3)?;
    // back to the aligned order: the bmm result is [lro, lo, ro], summed and rest dims are 1
    let po = cat(&[lro, lo, ro, sm, rest]);
    let shape: Vec<i64> = po
        .iter()
        .map(|&d| if lro.contains(&d) || lo.contains(&d) { sa[d] } else if ro.contains(&d) { sb[d] } else { 1 } as i64)
        .collect();
    let mut inv = vec![0i64; n];
    for (i, &d) in po.iter().enumerate() {
        inv[d] = i as i64;
    }
    r.view(&shape)?.permute(&inv)
}

impl Tensor {
    /// `torch.einsum(equation, *operands)`: sums of products over the subscripts of
    /// `equation` (`"ij,jk->ik"`; without `->` the output is `...` then the subscripts seen
    /// once, in ASCII order). `...` stands for broadcast dims, a subscript repeated within
    /// one operand takes its diagonal, size-1 dims broadcast. Operands are contracted left to
    /// right. A malformed equation is `InvalidArgument`, subscript sizes that do not
    /// broadcast `ShapeMismatch`, operands of different dtypes `DTypeMismatch`.
    ///
    /// ```
    /// # use tapegrad::Tensor;
    /// let a = Tensor::from_vec(vec![1.0f64, 2.0, 3.0, 4.0], &[2, 2])?;
    /// assert_eq!(Tensor::einsum("ij,jk->ik", &[&a, &a])?.to_vec::<f64>()?, vec![7.0, 10.0, 15.0, 22.0]);
    /// assert_eq!(Tensor::einsum("ii", &[&a])?.item::<f64>()?, 5.0);
    /// assert_eq!(Tensor::einsum("...j->...", &[&a])?.to_vec::<f64>()?, vec![3.0, 7.0]);
    /// # Ok::<(), tapegrad::Error>(())
    /// ```
    pub fn einsum(equation: &str, operands: &[&Tensor]) -> Result<Tensor> {
        let Aligned { ops, n_out, n_all } = align(equation, operands)?;
        if ops.len() == 1 {
            let x = &ops[0];
            if n_all == n_out {
                return Ok(x.clone());
            }
            let dims: Vec<i64> = (n_out..n_all).map(|d| d as i64).collect();
            return x.sum_dims(&dims, false);
        }
        // the last operand carrying each contracted slot (size > 1)
        let last_op = |s: usize| -> Option<usize> { ops.iter().rposition(|t| t.shape()[s] != 1) };
        let mut acc = ops[0].clone();
        // contracted slots only the first operand carries are summed right away
        let first_only: Vec<i64> = (n_out..n_all)
            .filter(|&s| last_op(s) == Some(0))
            .map(|s| s as i64)
            .collect();
        if !first_only.is_empty() {
            acc = acc.sum_dims(&first_only, true)?;
        }
        for (i, b) in ops.iter().enumerate().skip(1) {
            let sum: Vec<usize> = (n_out..n_all).filter(|&s| last_op(s) == Some(i)).collect();
            acc = sumproduct_pair(&acc, b, &sum)?;
        }
        if n_all == n_out {
            return Ok(acc);
        }
        let shape: Vec<i64> = acc.shape()[..n_out].iter().map(|&s| s as i64).collect();
        acc.view(&shape)
    }
}
