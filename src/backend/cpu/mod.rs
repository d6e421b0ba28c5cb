//! The CPU backend: [`Cpu`] implements [`Backend`] over [`CpuBuffer`]s. The strided kernels
//! (`copy`, `matmul`) are `unsafe` at the boundary: callers pass base pointers of locked buffers
//! plus geometry that lies inside them. The flat ones (`elementwise`, `sum`) work on slices.
//! `map` holds the elementwise map kernels (flat fast paths, strided maps with broadcasting).
//! `team` is the persistent worker team of the parallel kernels; `threads` holds the thread
//! count both it and the crate's rayon pool (`threads::install`) obey.

mod attention;
mod conv;
pub(crate) mod copy;
pub(crate) mod elementwise;
mod gather_dim;
#[cfg(target_arch = "x86_64")]
pub(crate) mod gemm_x86;
mod index;
mod layer_norm;
mod map;
pub(crate) mod math;
pub(crate) mod matmul;
mod movement;
mod norm;
mod optim;
mod pool;
pub(crate) mod reduce;
mod resample;
mod rowwise;
mod scalar;
pub(crate) mod scan;
pub(crate) mod sort;
mod sparse;
pub(crate) mod sum;
pub(crate) mod team;
pub(crate) mod threads;

use super::{
    AttnGeom, Backend, ConvGeom, DimWalk, Flat, OptimStep, Pattern, Put, Reduce, ReduceOp, RowOp,
    RowPut, RowSel, Rows, RowwiseOp, ScalarArith, Source, Spmm,
};
use crate::layout::Layout;
use crate::storage::{CpuBuffer, DeviceBuffer, Storage};
use crate::{DType, Element, Result, Scalar, dispatch};
use copy::Raw;
use smallvec::SmallVec;

/// The CPU device's kernels.
pub(crate) struct Cpu;

/// `l`'s strides as the signed strides of a raw operand.
fn istrides(l: &Layout) -> SmallVec<[isize; 6]> {
    l.strides().iter().map(|&s| s as isize).collect()
}

impl Backend for Cpu {
    type Buffer = CpuBuffer;

    unsafe fn copy(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: Source<'_, CpuBuffer>,
        sl: &Layout,
        sdt: DType,
    ) {
        let dp = dst.as_mut_ptr();
        let (sp, other) = match src {
            Source::Other(b) => (b.as_ptr(), Some(b.len())),
            Source::Same => (dp as *const u8, None),
        };
        // same dtype, both contiguous, different buffers: one memcpy (the common case in
        // CopySlices, where the per-call bookkeeping of the strided path dominates small copies:
        // fast path F7 of `autograd/builtin/mod.rs`)
        if let Some(src_len) = other
            && ddt == sdt
            && dl.is_contiguous()
            && sl.is_contiguous()
            && dl.numel() == sl.numel()
        {
            let esz = ddt.size();
            let n = dl.numel() * esz;
            let (d0, s0) = (dl.offset() * esz, sl.offset() * esz);
            // (a geometry outside a buffer shrunk by `set_`/`resize_` takes the general path)
            if d0 + n <= dst.len() && s0 + n <= src_len {
                // SAFETY: both byte ranges lie inside their buffers (checked just above) and
                // the buffers are distinct, so the ranges do not overlap.
                unsafe { std::ptr::copy_nonoverlapping(sp.add(s0), dp.add(d0), n) };
                return;
            }
        }
        let (ds, ss) = (istrides(dl), istrides(sl));
        let d = Raw {
            ptr: dp,
            strides: &ds,
            offset: dl.offset() as isize,
        };
        let s = Raw {
            ptr: sp,
            strides: &ss,
            offset: sl.offset() as isize,
        };
        // SAFETY: forwarded contract (geometries inside the buffers; `dst` without internal
        // overlap; a source in the same buffer is disjoint from it or identical).
        unsafe { copy::copy_cast(dl.sizes(), d, ddt, s, sdt) }
    }

    unsafe fn fill(dst: &mut CpuBuffer, dl: &Layout, dt: DType, v: Scalar) {
        let ds = istrides(dl);
        let d = Raw {
            ptr: dst.as_mut_ptr(),
            strides: &ds,
            offset: dl.offset() as isize,
        };
        dispatch!(dt, T => {
            // SAFETY: forwarded contract (`dl` inside the buffer; fill tolerates self-overlap:
            // every write stores the same value).
            unsafe { copy::fill::<T>(dl.sizes(), d, v.to::<T>()) }
        })
    }

    unsafe fn accumulate(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
    ) {
        let (ds, ss) = (istrides(dl), istrides(sl));
        let d = Raw {
            ptr: dst.as_mut_ptr(),
            strides: &ds,
            offset: dl.offset() as isize,
        };
        let s = Raw {
            ptr: src.as_ptr(),
            strides: &ss,
            offset: sl.offset() as isize,
        };
        dispatch!(ddt, T => {
            // SAFETY: forwarded contract (geometries inside distinct buffers).
            unsafe { copy::accumulate::<T>(dl.sizes(), d, s, sdt) }
        })
    }

    fn read<T: Element>(buf: &CpuBuffer, l: &Layout, dt: DType) -> Result<Vec<T>> {
        copy::read(buf, l, dt)
    }

    fn scalar_update(
        buf: &mut CpuBuffer,
        region: &Layout,
        dt: DType,
        op: ScalarArith,
        s: Scalar,
    ) -> bool {
        scalar::update_region(buf, region, dt, op, s)
    }

    fn reduce(
        dst: &mut CpuBuffer,
        doff: usize,
        ddt: DType,
        idx: Option<(&mut CpuBuffer, usize)>,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        nred: usize,
        op: ReduceOp,
    ) {
        reduce::reduce(dst, doff, ddt, idx, src, sl, sdt, nred, op)
    }

    fn row_map(
        dst: &mut CpuBuffer,
        dl: &Layout,
        ddt: DType,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        src2: Option<(&CpuBuffer, &Layout, DType)>,
        nred: usize,
        op: RowOp,
    ) {
        scan::row_map(dst, dl, ddt, src, sl, sdt, src2, nred, op)
    }

    fn sort(
        idx: &mut CpuBuffer,
        il: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        sdt: DType,
        pl: &Layout,
        k: usize,
        descending: bool,
        sorted: bool,
    ) -> Vec<usize> {
        sort::sort(idx, il, src, sl, sdt, pl, k, descending, sorted)
    }

    unsafe fn sum_into(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
        full: bool,
    ) {
        dispatch!(dt, T => {
            // SAFETY: forwarded contract (geometries inside distinct buffers).
            unsafe { sum::sum_into::<T>(dst, dl, src, sl, full) }
        })
    }

    fn sum_dense(
        dst: &mut CpuBuffer,
        doff: usize,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
    ) -> bool {
        sum::sum_dense(dst, doff, src, sl, dt)
    }

    // ---- convolution ----

    fn sdpa_forward(
        out: &mut CpuBuffer,
        q: (&CpuBuffer, usize),
        k: (&CpuBuffer, usize),
        v: (&CpuBuffer, usize),
        g: &AttnGeom,
        dt: DType,
    ) {
        attention::sdpa_forward(out, q, k, v, g, dt)
    }

    unsafe fn conv_forward(
        out: &mut CpuBuffer,
        x: &CpuBuffer,
        xo: usize,
        w: &CpuBuffer,
        wo: usize,
        bias: Option<(&CpuBuffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { conv::conv_forward(out, x, xo, w, wo, bias, g, dt) }
    }

    unsafe fn conv_backward_input(
        out: &mut CpuBuffer,
        gy: &CpuBuffer,
        go: usize,
        w: &CpuBuffer,
        wo: usize,
        bias: Option<(&CpuBuffer, usize)>,
        g: &ConvGeom,
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { conv::conv_backward_input(out, gy, go, w, wo, bias, g, dt) }
    }

    unsafe fn conv_backward_weight(
        out: &mut CpuBuffer,
        x: &CpuBuffer,
        xo: usize,
        gy: &CpuBuffer,
        go: usize,
        g: &ConvGeom,
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { conv::conv_backward_weight(out, x, xo, gy, go, g, dt) }
    }

    // ---- nn, linalg ----

    unsafe fn bmm(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: &CpuBuffer,
        al: &Layout,
        b: &CpuBuffer,
        bl: &Layout,
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { matmul::bmm(out, ol, a, al, b, bl, dt) }
    }

    fn rowwise(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    ) {
        rowwise::rowwise(dst, src, so, outer, n, inner, dt, op)
    }

    fn rowwise_backward(
        dst: &mut CpuBuffer,
        y: (&CpuBuffer, usize),
        g: (&CpuBuffer, usize),
        outer: usize,
        n: usize,
        inner: usize,
        dt: DType,
        op: RowwiseOp,
    ) {
        rowwise::rowwise_backward(dst, y, g, (outer, n, inner), dt, op)
    }

    fn layer_norm(
        out: &mut CpuBuffer,
        stats: &mut CpuBuffer,
        x: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        b: Option<(&CpuBuffer, usize)>,
        rows: usize,
        n: usize,
        eps: f64,
        dt: DType,
    ) {
        layer_norm::forward(out, stats, x, w, b, rows, n, eps, dt)
    }

    fn layer_norm_backward(
        gx: Option<&mut CpuBuffer>,
        gw: Option<&mut CpuBuffer>,
        gb: Option<&mut CpuBuffer>,
        g: (&CpuBuffer, usize),
        x: (&CpuBuffer, usize),
        stats: (&CpuBuffer, usize),
        w: Option<(&CpuBuffer, usize)>,
        rows: usize,
        n: usize,
        dt: DType,
    ) {
        layer_norm::backward(gx, gw, gb, g, x, stats, w, rows, n, dt)
    }

    fn read_at<T: Element>(buf: &CpuBuffer, l: &Layout, dt: DType, at: &[usize]) -> Result<Vec<T>> {
        rowwise::read_at(buf, l, dt, at)
    }

    fn channel_stats(
        src: &CpuBuffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
    ) -> Vec<(f64, f64)> {
        norm::channel_stats(src, so, dims, dt)
    }

    fn channel_affine(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        dims: (usize, usize, usize),
        dt: DType,
        scale: &[f64],
        shift: &[f64],
    ) {
        norm::channel_affine(dst, src, so, dims, dt, scale, shift)
    }

    fn max_pool(
        dst: &mut CpuBuffer,
        idx: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        win: &super::PoolWindows,
        dt: DType,
    ) {
        pool::max_pool(dst, idx, src, so, win, dt)
    }

    fn avg_pool(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        win: &super::PoolWindows,
        div: &[f64],
        dt: DType,
    ) {
        pool::avg_pool(dst, src, so, win, div, dt)
    }

    fn avg_pool_transpose(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        win: &super::PoolWindows,
        div: &[f64],
        dt: DType,
    ) {
        pool::avg_pool_transpose(dst, src, so, win, div, dt)
    }

    fn plane_gather(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        map: &super::PlaneMap,
        fill: f64,
        dt: DType,
    ) {
        resample::plane_gather(dst, src, so, map, fill, dt)
    }

    fn plane_scatter(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        so: usize,
        map: &super::PlaneMap,
        dt: DType,
    ) {
        resample::plane_scatter(dst, src, so, map, dt)
    }

    fn optim_step(
        bufs: &mut [&mut CpuBuffer],
        parts: &[(usize, usize)],
        dt: DType,
        step: OptimStep,
    ) -> bool {
        optim::optim_step(bufs, parts, dt, step)
    }

    // ---- gather/scatter/index and data movement ----

    unsafe fn copy_flipped(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        flip: &[usize],
        dt: DType,
    ) {
        // SAFETY: forwarded contract.
        unsafe { movement::copy_flipped(dst, dl, src, sl, flip, dt) }
    }

    fn take(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        idx: &[usize],
        dt: DType,
        op: &'static str,
    ) -> Result<()> {
        dispatch!(dt, T => index::take::<T>(
            index::elems_mut(dst), dl, index::elems(src), sl, idx, op
        ))
    }

    fn put(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: Source<'_, CpuBuffer>,
        sl: &Layout,
        p: &Put<'_>,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => {
            let s = match src {
                Source::Other(b) => Some(index::elems::<T>(b)),
                Source::Same => None,
            };
            index::put::<T>(index::elems_mut(dst), dl, s, sl, p)
        })
    }

    fn put_rows(
        dst: &mut CpuBuffer,
        g: &RowPut<'_>,
        src: &CpuBuffer,
        sl: &Layout,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => index::put_rows::<T>(index::elems_mut(dst), g, index::elems(src), sl))
    }

    fn index_select(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        dim: usize,
        idx: &[usize],
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => index::index_select::<T>(
            index::elems_mut(dst), dl, index::elems(src), sl, dim, idx
        ))
    }

    fn tri_zero(dst: &mut CpuBuffer, dl: &Layout, dt: DType, diagonal: i64, lower: bool) {
        movement::tri_zero(dst, dl, dt, diagonal, lower)
    }

    fn scatter_reduce(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        r: &Reduce<'_>,
        dt: DType,
    ) -> Result<()> {
        movement::scatter_reduce(dst, dl, src, sl, r, dt)
    }

    fn nonzero(buf: &CpuBuffer, l: &Layout, dt: DType) -> Result<Vec<usize>> {
        dispatch!(dt, T => index::nonzero::<T>(index::elems(buf), l))
    }

    fn gather_dim(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        index: &CpuBuffer,
        w: &DimWalk<'_>,
        dt: DType,
    ) -> Result<()> {
        dispatch!(dt, T => gather_dim::gather::<T>(dst, dl, src, sl, index, w))
    }

    fn scatter_dim(
        dst: &mut CpuBuffer,
        dl: &Layout,
        src: &CpuBuffer,
        sl: &Layout,
        index: &CpuBuffer,
        w: &DimWalk<'_>,
        dt: DType,
        accumulate: bool,
    ) -> Result<()> {
        dispatch!(dt, T => gather_dim::scatter::<T>(dst, dl, src, sl, index, w, accumulate))
    }

    // ---- sparse ----

    fn sparse_positions(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<Vec<usize>> {
        sparse::positions(p, shape)
    }

    fn sparse_entry_rows(
        p: &Pattern<'_, CpuBuffer>,
        shape: &[usize],
    ) -> Result<(Vec<usize>, Vec<usize>)> {
        sparse::entry_rows(p, shape)
    }

    fn csr_to_coo(p: &Pattern<'_, CpuBuffer>, shape: &[usize]) -> Result<(Storage, bool)> {
        sparse::csr_to_coo(p, shape)
    }

    fn sparse_check(p: &Pattern<'_, CpuBuffer>, shape: &[usize], op: &'static str) -> Result<bool> {
        sparse::check(p, shape, op)
    }

    fn coo_coalesce(p: &Pattern<'_, CpuBuffer>) -> Result<(Storage, Vec<usize>, usize)> {
        match *p {
            Pattern::Coo { ix, off, sd, nnz } => sparse::coalesce(ix, off, sd, nnz),
            Pattern::Csr { .. } => unreachable!("internal: coalesce of a CSR pattern"),
        }
    }

    fn coo_slice(
        p: &Pattern<'_, CpuBuffer>,
        coalesced: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, RowSel)> {
        match *p {
            Pattern::Coo { ix, off, sd, nnz } => {
                sparse::coo_slice(ix, off, sd, nnz, coalesced, ranges, shape)
            }
            Pattern::Csr { .. } => unreachable!("internal: coo_slice of a CSR pattern"),
        }
    }

    fn csr_slice(
        p: &Pattern<'_, CpuBuffer>,
        sorted: bool,
        ranges: &[(usize, usize)],
        shape: &[usize],
    ) -> Result<(Storage, usize, Storage, RowSel)> {
        sparse::csr_slice(p, sorted, ranges, shape)
    }

    fn sparse_nonzero_rows(
        src: &CpuBuffer,
        off: usize,
        n_rows: usize,
        rl: usize,
        dt: DType,
    ) -> Result<Vec<usize>> {
        sparse::nonzero_rows(src, off, n_rows, rl, dt)
    }

    fn sparse_gather_rows(
        dst: &mut CpuBuffer,
        src: &CpuBuffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()> {
        sparse::gather_rows(dst, src, soff, src_len, sel, rl, dt)
    }

    fn sparse_scatter_rows(
        dst: &mut CpuBuffer,
        dst_len: usize,
        src: &CpuBuffer,
        soff: usize,
        src_len: usize,
        sel: Rows<'_>,
        rl: usize,
        dt: DType,
    ) -> Result<()> {
        sparse::scatter_rows(dst, dst_len, src, soff, src_len, sel, rl, dt)
    }

    fn spmm(
        out: &mut CpuBuffer,
        out_len: usize,
        v: &CpuBuffer,
        voff: usize,
        d: &CpuBuffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()> {
        sparse::spmm(out, out_len, v, voff, d, doff, d_len, s, dt)
    }

    fn sddmm(
        out: &mut CpuBuffer,
        g: &CpuBuffer,
        goff: usize,
        g_len: usize,
        d: &CpuBuffer,
        doff: usize,
        d_len: usize,
        s: &Spmm<'_>,
        dt: DType,
    ) -> Result<()> {
        sparse::sddmm(out, g, goff, g_len, d, doff, d_len, s, dt)
    }

    // ---- elementwise map ----

    #[inline]
    fn buffer(d: &DeviceBuffer) -> &CpuBuffer {
        match d {
            DeviceBuffer::Cpu(b) => b,
        }
    }

    #[inline]
    fn buffer_mut(d: &mut DeviceBuffer) -> &mut CpuBuffer {
        match d {
            DeviceBuffer::Cpu(b) => b,
        }
    }

    #[inline]
    fn storage_for_output(nbytes: usize) -> Result<Storage> {
        // (`from_buffer` is inlined: the buffer is built in place, as the dense path always did)
        Ok(Storage::from_buffer(CpuBuffer::for_overwrite(nbytes)?))
    }

    fn storage_zeroed(nbytes: usize) -> Result<Storage> {
        Storage::zeroed(nbytes)
    }

    #[inline]
    fn flat_map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        f: &F,
    ) {
        map::flat_map1(out, o, n, a, f)
    }

    #[inline]
    fn flat_map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut CpuBuffer,
        o: usize,
        n: usize,
        a: Flat<'_, CpuBuffer>,
        b: Flat<'_, CpuBuffer>,
        f: &F,
    ) {
        map::flat_map2(out, o, n, a, b, f)
    }

    #[inline]
    fn update_owned<T: Element, F: Fn(T) -> T + Sync>(
        buf: &mut CpuBuffer,
        region: &Layout,
        dense: bool,
        f: &F,
    ) {
        map::update_owned(buf, region, dense, f)
    }

    unsafe fn map1<T: Element, U: Element, F: Fn(T) -> U + Sync>(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map::map1(out, ol, a, al, f) }
    }

    unsafe fn map2<T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
        out: &mut CpuBuffer,
        ol: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        b: Source<'_, CpuBuffer>,
        bl: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map::map2(out, ol, a, al, b, bl, f) }
    }

    unsafe fn map3<C: Element, T: Element, U: Element, F: Fn(C, T, T) -> U>(
        out: &mut CpuBuffer,
        ol: &Layout,
        c: Source<'_, CpuBuffer>,
        cl: &Layout,
        a: Source<'_, CpuBuffer>,
        al: &Layout,
        b: Source<'_, CpuBuffer>,
        bl: &Layout,
        f: &F,
    ) {
        // SAFETY: forwarded contract.
        unsafe { map::map3(out, ol, c, cl, a, al, b, bl, f) }
    }

    fn any<T: Element, F: Fn(T) -> bool>(buf: &CpuBuffer, l: &Layout, f: &F) -> Result<bool> {
        map::any(buf, l, f)
    }
}
