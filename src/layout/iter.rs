//! Strided iteration. [`StridedOffsets`] yields storage offsets in logical order;
//! [`for_each_run`] walks N operands together, coalescing dims that are contiguous for all of
//! them and calling back once per innermost run, so kernels get long unit-stride loops.

/// Iterator over the storage offsets of a strided layout in row-major logical order.
pub struct StridedOffsets<'a> {
    sizes: &'a [usize],
    strides: &'a [usize],
    index: Vec<usize>,
    next: Option<usize>,
}

impl<'a> StridedOffsets<'a> {
    pub(crate) fn new(sizes: &'a [usize], strides: &'a [usize], offset: usize) -> Self {
        let empty = sizes.contains(&0);
        StridedOffsets {
            sizes,
            strides,
            index: vec![0; sizes.len()],
            next: if empty { None } else { Some(offset) },
        }
    }
}

impl Iterator for StridedOffsets<'_> {
    type Item = usize;
    #[inline]
    fn next(&mut self) -> Option<usize> {
        let cur = self.next?;
        let mut off = cur;
        let mut d = self.sizes.len();
        loop {
            if d == 0 {
                self.next = None;
                break;
            }
            d -= 1;
            self.index[d] += 1;
            off += self.strides[d];
            if self.index[d] < self.sizes[d] {
                self.next = Some(off);
                break;
            }
            off -= self.strides[d] * self.index[d];
            self.index[d] = 0;
        }
        Some(cur)
    }
}

/// Walks `N` operands of one broadcast shape together. `strides[k]` are operand k's strides (in
/// elements, may be 0 or — for flips — negative) and `offsets[k]` its start. Dims are coalesced
/// where possible; `f(offsets, len, inner_strides)` is called once per innermost run.
pub fn for_each_run<const N: usize>(
    sizes: &[usize],
    strides: [&[isize]; N],
    offsets: [isize; N],
    mut f: impl FnMut([isize; N], usize, [isize; N]),
) {
    if sizes.contains(&0) {
        return;
    }
    // Coalesce: drop size-1 dims, merge dim i into i+1 when contiguous for every operand.
    let mut shp: Vec<usize> = Vec::with_capacity(sizes.len());
    let mut st: Vec<[isize; N]> = Vec::with_capacity(sizes.len());
    for d in 0..sizes.len() {
        if sizes[d] == 1 {
            continue;
        }
        let cur: [isize; N] = std::array::from_fn(|k| strides[k][d]);
        if let (Some(&ps), Some(pst)) = (shp.last(), st.last()) {
            if (0..N).all(|k| pst[k] == cur[k] * sizes[d] as isize) {
                let n = shp.len();
                shp[n - 1] = ps * sizes[d];
                st[n - 1] = cur;
                continue;
            }
        }
        shp.push(sizes[d]);
        st.push(cur);
    }
    if shp.is_empty() {
        f(offsets, 1, [0; N]);
        return;
    }
    let nd = shp.len();
    let inner = shp[nd - 1];
    let inner_st = st[nd - 1];
    let outer = nd - 1;
    let mut idx = vec![0usize; outer];
    let mut off = offsets;
    loop {
        f(off, inner, inner_st);
        // advance the outer index
        let mut d = outer;
        loop {
            if d == 0 {
                return;
            }
            d -= 1;
            idx[d] += 1;
            for k in 0..N {
                off[k] += st[d][k];
            }
            if idx[d] < shp[d] {
                break;
            }
            for k in 0..N {
                off[k] -= st[d][k] * shp[d] as isize;
            }
            idx[d] = 0;
        }
    }
}
