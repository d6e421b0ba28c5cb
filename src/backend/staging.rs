//! Host staging: how a device without native kernels implements the closure-taking elementwise
//! family ([`ElementwiseKernels::flat_map1`], [`ElementwiseKernels::flat_map2`],
//! [`ElementwiseKernels::update_owned`], [`ElementwiseKernels::map1`],
//! [`ElementwiseKernels::map2`], [`ElementwiseKernels::map3`], [`ElementwiseKernels::any`]). Those
//! methods take a Rust closure (the op's scalar formula), which a GPU cannot compile. A device
//! implements [`HostStaging`] (copy a buffer to host memory and back) and forwards each of those
//! methods to the function of the same name here, which copies the operands to host buffers, runs
//! the CPU kernel with the closure and copies the written buffer back. Every op then runs on the
//! device, correct but at host speed plus two transfers.
//!
//! Native kernels for hot ops come later without touching op files: a new trait method takes
//! an op code (an enum such as [`ScalarArith`](super::ScalarArith)) for the ops worth it, the
//! front door of the family (`backend/dispatch/elementwise.rs`) tries it first and falls back
//! to the closure form when the device declines by returning `false` (the CPU declines every
//! code, its closure kernels being native already). [`ElementwiseKernels::scalar_update`] and
//! [`ReduceKernels::sum_dense`](crate::backend::ReduceKernels::sum_dense) follow this
//! decline-and-fall-back pattern today.
//!
//! Staging errors (a failed transfer or host allocation) panic: the closure family's methods
//! return nothing, as the CPU kernels cannot fail.

use super::cpu::Cpu;
use super::{ElementwiseKernels, Flat, Source};
use crate::Element;
use crate::layout::Layout;
use crate::storage::CpuBuffer;

/// A device whose buffers can be copied to host memory and back.
pub(crate) trait HostStaging {
    /// The device's buffer type.
    type Buffer;
    /// A host copy of all of `buf`'s bytes.
    fn to_host(buf: &Self::Buffer) -> crate::Result<CpuBuffer>;
    /// Overwrites all of `buf`'s bytes with `host`'s (of the same length).
    fn from_host(buf: &mut Self::Buffer, host: &CpuBuffer) -> crate::Result<()>;
}

fn stage<S: HostStaging>(buf: &S::Buffer) -> CpuBuffer {
    S::to_host(buf).expect("host staging: copy to host")
}

fn unstage<S: HostStaging>(buf: &mut S::Buffer, host: &CpuBuffer) {
    S::from_host(buf, host).expect("host staging: copy back to the device")
}

/// The host copy of an input (`None` for [`Source::Same`]: read through the output's copy).
fn stage_src<S: HostStaging>(s: &Source<'_, S::Buffer>) -> Option<CpuBuffer> {
    match s {
        Source::Other(b) => Some(stage::<S>(b)),
        Source::Same => None,
    }
}

fn host_src(h: &Option<CpuBuffer>) -> Source<'_, CpuBuffer> {
    h.as_ref().map_or(Source::Same, Source::Other)
}

fn host_flat<'a>(f: &Flat<'_, impl Sized>, h: &'a Option<CpuBuffer>) -> Flat<'a, CpuBuffer> {
    Flat {
        src: host_src(h),
        offset: f.offset,
        scalar: f.scalar,
    }
}

/// [`ElementwiseKernels::flat_map1`] through host staging.
pub(crate) fn flat_map1<S: HostStaging, T: Element, U: Element, F: Fn(T) -> U + Sync>(
    out: &mut S::Buffer,
    o: usize,
    n: usize,
    a: Flat<'_, S::Buffer>,
    f: &F,
) {
    let ha = stage_src::<S>(&a.src);
    let mut ho = stage::<S>(out);
    Cpu::flat_map1(&mut ho, o, n, host_flat(&a, &ha), f);
    unstage::<S>(out, &ho);
}

/// [`ElementwiseKernels::flat_map2`] through host staging.
pub(crate) fn flat_map2<S: HostStaging, T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
    out: &mut S::Buffer,
    o: usize,
    n: usize,
    a: Flat<'_, S::Buffer>,
    b: Flat<'_, S::Buffer>,
    f: &F,
) {
    let (ha, hb) = (stage_src::<S>(&a.src), stage_src::<S>(&b.src));
    let mut ho = stage::<S>(out);
    Cpu::flat_map2(&mut ho, o, n, host_flat(&a, &ha), host_flat(&b, &hb), f);
    unstage::<S>(out, &ho);
}

/// [`ElementwiseKernels::update_owned`] through host staging.
pub(crate) fn update_owned<S: HostStaging, T: Element, F: Fn(T) -> T + Sync>(
    buf: &mut S::Buffer,
    region: &Layout,
    dense: bool,
    f: &F,
) {
    let mut h = stage::<S>(buf);
    Cpu::update_owned(&mut h, region, dense, f);
    unstage::<S>(buf, &h);
}

/// [`ElementwiseKernels::map1`] through host staging.
///
/// # Safety
/// The contract of [`ElementwiseKernels::map1`] (the staged copies have the device buffers'
/// lengths).
pub(crate) unsafe fn map1<S: HostStaging, T: Element, U: Element, F: Fn(T) -> U + Sync>(
    out: &mut S::Buffer,
    ol: &Layout,
    a: Source<'_, S::Buffer>,
    al: &Layout,
    f: &F,
) {
    let ha = stage_src::<S>(&a);
    let mut ho = stage::<S>(out);
    // SAFETY: forwarded contract; each host copy holds its device buffer's bytes.
    unsafe { Cpu::map1(&mut ho, ol, host_src(&ha), al, f) };
    unstage::<S>(out, &ho);
}

/// [`ElementwiseKernels::map2`] through host staging.
///
/// # Safety
/// The contract of [`ElementwiseKernels::map2`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn map2<S: HostStaging, T: Element, U: Element, F: Fn(T, T) -> U + Sync>(
    out: &mut S::Buffer,
    ol: &Layout,
    a: Source<'_, S::Buffer>,
    al: &Layout,
    b: Source<'_, S::Buffer>,
    bl: &Layout,
    f: &F,
) {
    let (ha, hb) = (stage_src::<S>(&a), stage_src::<S>(&b));
    let mut ho = stage::<S>(out);
    // SAFETY: forwarded contract; each host copy holds its device buffer's bytes.
    unsafe { Cpu::map2(&mut ho, ol, host_src(&ha), al, host_src(&hb), bl, f) };
    unstage::<S>(out, &ho);
}

/// [`ElementwiseKernels::map3`] through host staging.
///
/// # Safety
/// The contract of [`ElementwiseKernels::map3`].
#[allow(clippy::too_many_arguments)]
pub(crate) unsafe fn map3<S: HostStaging, C: Element, T: Element, U: Element, F>(
    out: &mut S::Buffer,
    ol: &Layout,
    c: Source<'_, S::Buffer>,
    cl: &Layout,
    a: Source<'_, S::Buffer>,
    al: &Layout,
    b: Source<'_, S::Buffer>,
    bl: &Layout,
    f: &F,
) where
    F: Fn(C, T, T) -> U + Sync,
{
    let (hc, ha, hb) = (stage_src::<S>(&c), stage_src::<S>(&a), stage_src::<S>(&b));
    let mut ho = stage::<S>(out);
    // SAFETY: forwarded contract; each host copy holds its device buffer's bytes.
    unsafe {
        Cpu::map3(
            &mut ho,
            ol,
            host_src(&hc),
            cl,
            host_src(&ha),
            al,
            host_src(&hb),
            bl,
            f,
        )
    };
    unstage::<S>(out, &ho);
}

/// [`ElementwiseKernels::any`] through host staging.
pub(crate) fn any<S: HostStaging, T: Element, F: Fn(T) -> bool>(
    buf: &S::Buffer,
    l: &Layout,
    f: &F,
) -> crate::Result<bool> {
    Cpu::any(&S::to_host(buf)?, l, f)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stand-in device whose buffers are byte vectors.
    struct Bytes;

    impl HostStaging for Bytes {
        type Buffer = Vec<u8>;
        fn to_host(buf: &Vec<u8>) -> crate::Result<CpuBuffer> {
            let mut h = CpuBuffer::for_overwrite(buf.len())?;
            h.as_bytes_mut().copy_from_slice(buf);
            Ok(h)
        }
        fn from_host(buf: &mut Vec<u8>, host: &CpuBuffer) -> crate::Result<()> {
            buf.copy_from_slice(host.as_bytes());
            Ok(())
        }
    }

    fn bytes(v: &[f32]) -> Vec<u8> {
        v.iter().flat_map(|x| x.to_ne_bytes()).collect()
    }

    fn floats(b: &[u8]) -> Vec<f32> {
        b.chunks_exact(4)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect()
    }

    #[test]
    fn staged_maps_match_the_cpu_kernels() {
        let a = bytes(&[1.0, 2.0, 3.0, 4.0]);
        let b = bytes(&[10.0, 20.0]);
        // out[i, j] = a[i, j] + b[j] (b broadcast over rows), into an output with a prefix
        let mut out = bytes(&[-1.0; 5]);
        let ol = Layout::new(&[2usize, 2][..], &[2usize, 1][..], 1);
        let al = Layout::contiguous(&[2, 2]);
        let bl = Layout::new(&[2usize, 2][..], &[0usize, 1][..], 0);
        // SAFETY: every geometry lies inside its buffer; the output has no internal overlap.
        unsafe {
            map2::<Bytes, f32, f32, _>(
                &mut out,
                &ol,
                Source::Other(&a),
                &al,
                Source::Other(&b),
                &bl,
                &|x: f32, y: f32| x + y,
            )
        };
        assert_eq!(floats(&out), vec![-1.0, 11.0, 22.0, 13.0, 24.0]);
        // an in-place update through the output's own copy
        let l = Layout::contiguous(&[5]);
        // SAFETY: as above; the input geometry is the output's.
        unsafe { map1::<Bytes, f32, f32, _>(&mut out, &l, Source::Same, &l, &|x: f32| x * 2.0) };
        assert_eq!(floats(&out), vec![-2.0, 22.0, 44.0, 26.0, 48.0]);
        flat_map1::<Bytes, f32, f32, _>(
            &mut out,
            0,
            2,
            Flat {
                src: Source::Other(&a),
                offset: 2,
                scalar: false,
            },
            &|x: f32| -x,
        );
        assert_eq!(floats(&out), vec![-3.0, -4.0, 44.0, 26.0, 48.0]);
        assert!(any::<Bytes, f32, _>(&out, &l, &|x: f32| x > 45.0).unwrap());
    }
}
