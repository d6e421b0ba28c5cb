//! The memcheck subset: small tests over the unsafe core — storage (allocation, growth, sharing,
//! drop order, the pool of large freed buffers), raw kernels (pointwise, broadcast, reductions,
//! matmul, casts), the packed GEMM over every edge tile and stride sign, the kernel team with 2
//! threads (GEMM, elementwise, sums, tiled copies, fills), im2col convolutions and their
//! backward, pools, layer norm, row softmax, fused attention, the vectorised transcendentals
//! over odd lengths, sparse kernels, gather/scatter, fused optimizer steps, strided iteration
//! (transposed, expanded, stepped, offset views), set_/resize_ and aliasing in-place ops, plus a
//! replay of every fuzz target's corpus. They run natively like any test; `under_valgrind`
//! re-runs this binary's `subset::` tests under `valgrind --tool=memcheck --error-exitcode=1`
//! when valgrind is installed (CI), and `tools/memcheck.sh` does the same by hand.

#[path = "../fuzz/logic/mod.rs"]
mod fuzz_logic;

mod subset {
    use tapegrad::{DType, ResizeFill, Storage, Tensor};

    fn f64s(t: &Tensor) -> Vec<f64> {
        t.to_dtype(DType::F64).unwrap().to_vec().unwrap()
    }

    #[test]
    fn storage_alloc_grow_share_drop() {
        let s = Storage::zeroed(0).unwrap();
        assert_eq!(s.nbytes(), 0);
        let x = Tensor::zeros(&[0], DType::F32).unwrap();
        x.set_storage(&s, 0, &[3], None).unwrap(); // grows the shared storage
        assert_eq!((s.nbytes(), f64s(&x)), (12, vec![0.0; 3]));
        let b = Storage::from_bytes(&[1, 0, 0, 0, 2, 0, 0, 0]).unwrap();
        let y = Tensor::zeros(&[0], DType::I32).unwrap();
        y.set_storage(&b, 1, &[1], None).unwrap();
        assert_eq!(y.to_vec::<i32>().unwrap(), vec![2]);
        // views outlive their base; the storage outlives both
        let v = {
            let base = Tensor::arange(0, 10, 1).unwrap();
            base.narrow(0, 2, 3).unwrap()
        };
        assert_eq!(v.to_vec::<i64>().unwrap(), vec![2, 3, 4]);
        drop(v);
        for n in [1usize, 7, 63, 64, 65, 4097] {
            let t = Tensor::ones(&[n], DType::F64).unwrap();
            assert_eq!(t.sum().unwrap().item::<f64>().unwrap(), n as f64);
        }
    }

    #[test]
    fn kernels_over_strided_operands() {
        let a = Tensor::arange_dtype(0, 24, 1, DType::F64)
            .unwrap()
            .view(&[2, 3, 4])
            .unwrap();
        let t = a.permute(&[2, 0, 1]).unwrap();
        let s = a.slice(2, Some(1), None, 2).unwrap();
        let e = a
            .select(0, 1)
            .unwrap()
            .narrow(1, 1, 1)
            .unwrap()
            .expand(&[2, 3, 3])
            .unwrap();
        for (x, y) in [(&t, &t), (&s, &s), (&e, &e)] {
            let r = x
                .add(y)
                .unwrap()
                .mul(x)
                .unwrap()
                .exp()
                .unwrap()
                .sum()
                .unwrap();
            assert!(r.item::<f64>().unwrap().is_finite() || r.item::<f64>().unwrap().is_infinite());
        }
        assert_eq!(f64s(&s.contiguous().unwrap()), f64s(&s));
        assert_eq!(e.contiguous().unwrap().numel(), 18);
        let m = Tensor::arange_dtype(0, 35, 1, DType::F32)
            .unwrap()
            .view(&[5, 7])
            .unwrap();
        let p = m.t().unwrap().matmul(&m).unwrap();
        assert_eq!(p.shape(), vec![7, 7]);
        let big = Tensor::ones(&[70, 90], DType::F64).unwrap();
        let q = big.matmul(&big.t().unwrap()).unwrap();
        assert_eq!(f64s(&q)[0], 90.0);
        let c = m
            .to_dtype(DType::I16)
            .unwrap()
            .to_dtype(DType::F64)
            .unwrap();
        assert_eq!(f64s(&c)[34], 34.0);
        assert_eq!(f64s(&m.sum_dims(&[0], false).unwrap())[0], 70.0);
        assert_eq!(f64s(&m.flip(&[0, 1]).unwrap())[0], 34.0);
        let cat = Tensor::cat(&[&m, &m.mul(2.0).unwrap()], 1).unwrap();
        assert_eq!(cat.shape(), vec![5, 14]);
        let idx = Tensor::from_vec(vec![4i64, 0, 4], &[3]).unwrap();
        assert_eq!(m.index_select(0, &idx).unwrap().shape(), vec![3, 7]);
        m.index_put_(
            &[Some(idx.clone())],
            &Tensor::ones(&[7], DType::F32).unwrap(),
            true,
        )
        .unwrap();
        assert_eq!(m.to_vec::<f32>().unwrap()[28], 30.0);
    }

    #[test]
    fn strided_iteration_geometries() {
        let x = Tensor::arange_dtype(0, 64, 1, DType::F32).unwrap();
        for (sizes, strides, off) in [
            (vec![4i64, 4], vec![1i64, 4], 0i64),
            (vec![3, 3, 3], vec![16, 4, 1], 5),
            (vec![2, 5], vec![0, 3], 10),
            (vec![8], vec![9], 0),
            (vec![1, 1, 1], vec![100, 100, 100], 63),
            (vec![0, 5], vec![1, 1], 64),
        ] {
            let v = x.as_strided(&sizes, &strides, Some(off)).unwrap();
            let got: Vec<f32> = v.to_vec().unwrap();
            let c: Vec<f32> = v.contiguous().unwrap().to_vec().unwrap();
            assert_eq!(got, c);
            let _ = v.add(1.0).unwrap().sum().unwrap();
        }
    }

    #[test]
    fn set_and_resize_sequences() {
        let x = Tensor::from_vec(vec![1.0f64, 2.0, 3.0], &[3]).unwrap();
        let v = x.view(&[3]).unwrap();
        x.resize_(&[50]).unwrap(); // reallocates the shared storage
        assert_eq!(f64s(&v), vec![1.0, 2.0, 3.0]);
        x.resize_with(&[100], ResizeFill::Nan).unwrap();
        assert!(f64s(&x)[99].is_nan());
        x.resize_(&[2]).unwrap();
        let y = Tensor::zeros(&[4], DType::F64).unwrap();
        y.set_(&x).unwrap();
        y.resize_(&[10, 10]).unwrap();
        y.add_(1.0).unwrap();
        assert_eq!(f64s(&x), vec![2.0, 3.0]);
        y.set_empty().unwrap();
        y.resize_(&[3]).unwrap();
        assert_eq!(f64s(&y), vec![0.0; 3]);
        let z = Tensor::zeros(&[1], DType::F32).unwrap();
        z.set_with(&x.to_dtype(DType::F32).unwrap(), 1, &[1], None)
            .unwrap();
        assert_eq!(z.to_vec::<f32>().unwrap(), vec![3.0]);
    }

    #[test]
    fn aliasing_inplace_ops() {
        let x = Tensor::arange_dtype(0, 16, 1, DType::F64)
            .unwrap()
            .view(&[4, 4])
            .unwrap();
        x.add_(&x).unwrap();
        x.mul_(x.flip(&[0]).unwrap()).unwrap();
        assert!(x.copy_(&x.t().unwrap()).is_err());
        x.copy_(&x).unwrap();
        x.copy_(&x.to_dtype(DType::F32).unwrap()).unwrap();
        let u = x.view(&[16]).unwrap();
        u.narrow(0, 0, 8)
            .unwrap()
            .copy_(&u.narrow(0, 8, 8).unwrap())
            .unwrap();
        x.select(0, 0)
            .unwrap()
            .add_(x.select(0, 3).unwrap())
            .unwrap();
        x.addcmul_(&x, &x, 0.5).unwrap();
        assert!(x.version() >= 7);
    }

    /// Small integers in `-3..=3`: every product and sum below stays exact in f32 and f64, so
    /// kernel results equal the naive references bit for bit whatever the summation order.
    fn ints(n: usize, seed: usize) -> Vec<f64> {
        (0..n)
            .map(|i| ((i * 5 + seed * 11) % 7) as f64 - 3.0)
            .collect()
    }

    fn naive_matmul(a: &[f64], b: &[f64], m: usize, k: usize, n: usize) -> Vec<f64> {
        let mut c = vec![0.0; m * n];
        for i in 0..m {
            for j in 0..n {
                c[i * n + j] = (0..k).map(|l| a[i * k + l] * b[l * n + j]).sum();
            }
        }
        c
    }

    /// The packed GEMM (`gemm_x86.rs`, AVX2/AVX-512 microkernels, edge tiles of every size)
    /// over contiguous, transposed and reversed operands, f32 and f64; then the
    /// kernel team (`team.rs`) with 2 threads: a GEMM big enough to split, elementwise ranges,
    /// full sums (`sum.rs`), tiled transposed copies (f64, and f32 through the AVX2 register
    /// blocks) and fills (`copy.rs`).
    #[test]
    fn gemm_and_team_kernels() {
        for (m, k, n) in [
            (1, 1, 1),
            (7, 5, 17),
            (13, 37, 29),
            (6, 300, 16),
            (70, 9, 33),
        ] {
            let (a, b) = (ints(m * k, m), ints(k * n, n));
            let want = naive_matmul(&a, &b, m, k, n);
            for dt in [DType::F32, DType::F64] {
                let ta = Tensor::from_vec(a.clone(), &[m, k])
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap();
                let tb = Tensor::from_vec(b.clone(), &[k, n])
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap();
                assert_eq!(f64s(&ta.matmul(&tb).unwrap()), want, "{m}x{k}x{n} {dt}");
                // the same product from transposed (column-major) views: (B^T A^T)^T
                let c = tb
                    .t()
                    .unwrap()
                    .matmul(&ta.t().unwrap())
                    .unwrap()
                    .t()
                    .unwrap();
                assert_eq!(f64s(&c), want, "transposed {m}x{k}x{n} {dt}");
                // rows of A and columns of B reversed
                let cf = ta
                    .flip(&[0])
                    .unwrap()
                    .matmul(&tb.flip(&[1]).unwrap())
                    .unwrap();
                assert_eq!(
                    f64s(&cf.flip(&[0, 1]).unwrap()),
                    want,
                    "flipped {m}x{k}x{n} {dt}"
                );
            }
        }
        let before = tapegrad::get_num_threads();
        tapegrad::set_num_threads(2).unwrap();
        let (m, k, n) = (96, 80, 72);
        let (a, b) = (ints(m * k, 1), ints(k * n, 2));
        let want = naive_matmul(&a, &b, m, k, n);
        let ta = Tensor::from_vec(a, &[m, k])
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        let tb = Tensor::from_vec(b, &[k, n])
            .unwrap()
            .to_dtype(DType::F32)
            .unwrap();
        assert_eq!(f64s(&ta.matmul(&tb).unwrap()), want);
        let len = 1 << 17;
        let x = Tensor::from_vec(ints(len, 3), &[len]).unwrap();
        let y = x.add(&x).unwrap().mul(3.0).unwrap();
        assert_eq!(
            y.sum().unwrap().item::<f64>().unwrap(),
            6.0 * ints(len, 3).iter().sum::<f64>()
        );
        assert_eq!(
            x.abs().unwrap().sum().unwrap().item::<f64>().unwrap(),
            ints(len, 3).iter().map(|v| v.abs()).sum::<f64>()
        );
        let sq = x.view(&[512, 256]).unwrap();
        let tt = sq.t().unwrap().contiguous().unwrap();
        assert_eq!(f64s(&tt.t().unwrap().contiguous().unwrap()), ints(len, 3));
        // 4-byte elements: the full 16x16 tiles move as AVX2 8x8 register blocks
        // (`transpose8x8_avx2`), the 7-wide and 3-tall edges through the stack buffer
        let s32 = x.to_dtype(DType::F32).unwrap().view(&[512, 256]).unwrap();
        let t32 = s32.t().unwrap().contiguous().unwrap();
        assert_eq!(f64s(&t32.t().unwrap().contiguous().unwrap()), ints(len, 3));
        let odd = s32.narrow(0, 3, 505).unwrap().narrow(1, 0, 247).unwrap();
        let ot = odd.t().unwrap().contiguous().unwrap();
        assert_eq!(f64s(&ot.t().unwrap()), f64s(&odd));
        let f = Tensor::zeros(&[len + 3], DType::F32).unwrap();
        f.narrow(0, 1, len).unwrap().fill_(2.5).unwrap();
        let fv = f64s(&f);
        assert_eq!((fv[0], fv[1], fv[len], fv[len + 1]), (0.0, 2.5, 2.5, 0.0));
        assert_eq!(f.sum().unwrap().item::<f32>().unwrap(), 2.5 * len as f32);
        tapegrad::set_num_threads(before).unwrap();
    }

    /// Naive 2-D cross-correlation (`[n, ci, h, w]` * `[co, ci/g, kh, kw]`).
    #[allow(clippy::too_many_arguments)]
    fn naive_conv2d(
        x: &[f64],
        xs: [usize; 4],
        w: &[f64],
        ws: [usize; 4],
        s: usize,
        p: usize,
        d: usize,
        g: usize,
    ) -> (Vec<f64>, [usize; 4]) {
        let [n, ci, h, wd] = xs;
        let [co, cig, kh, kw] = ws;
        let oh = (h + 2 * p - d * (kh - 1) - 1) / s + 1;
        let ow = (wd + 2 * p - d * (kw - 1) - 1) / s + 1;
        let mut out = vec![0.0; n * co * oh * ow];
        for b in 0..n {
            for o in 0..co {
                let grp = o / (co / g);
                for i in 0..oh {
                    for j in 0..ow {
                        let mut acc = 0.0;
                        for c in 0..cig {
                            for u in 0..kh {
                                for v in 0..kw {
                                    let (y, z) = (
                                        (i * s + u * d) as i64 - p as i64,
                                        (j * s + v * d) as i64 - p as i64,
                                    );
                                    if y < 0 || z < 0 || y >= h as i64 || z >= wd as i64 {
                                        continue;
                                    }
                                    let xc = grp * cig + c;
                                    acc += x[((b * ci + xc) * h + y as usize) * wd + z as usize]
                                        * w[((o * cig + c) * kh + u) * kw + v];
                                }
                            }
                        }
                        out[((b * co + o) * oh + i) * ow + j] = acc;
                    }
                }
            }
        }
        let _ = ci;
        (out, [n, co, oh, ow])
    }

    /// im2col + GEMM convolutions (`conv/`, forward and backward, transposed), max/avg/adaptive
    /// pools, layer norm and the row-wise softmax kernels, fused attention.
    #[test]
    fn conv_pool_norm_attention_kernels() {
        use tapegrad::{ConvOptions, ConvTransposeOptions, SdpaOptions};
        let (xs, ws) = ([2, 4, 7, 6], [6, 2, 3, 3]);
        let (xv, wv) = (ints(2 * 4 * 7 * 6, 4), ints(6 * 2 * 3 * 3, 5));
        for (s, p, d) in [(1, 0, 1), (2, 1, 1), (1, 2, 2), (3, 1, 2)] {
            let (want, shape) = naive_conv2d(&xv, xs, &wv, ws, s, p, d, 2);
            for dt in [DType::F32, DType::F64] {
                let x = Tensor::from_vec(xv.clone(), &xs)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap()
                    .requires_grad_(true)
                    .unwrap();
                let w = Tensor::from_vec(wv.clone(), &ws)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap()
                    .requires_grad_(true)
                    .unwrap();
                let o = ConvOptions {
                    stride: (s as i64).into(),
                    padding: (p as i64).into(),
                    dilation: (d as i64).into(),
                    groups: 2,
                };
                let y = x.conv2d(&w, None, &o).unwrap();
                assert_eq!(y.shape(), shape.to_vec());
                assert_eq!(f64s(&y), want, "conv2d s{s} p{p} d{d} {dt}");
                y.sum().unwrap().backward().unwrap();
                assert_eq!(x.grad().unwrap().shape(), xs.to_vec());
                assert_eq!(w.grad().unwrap().shape(), ws.to_vec());
            }
        }
        // transposed: the adjoint of conv2d (<conv(x), y> = <x, conv_t(y)>)
        let x = Tensor::from_vec(ints(2 * 4 * 7 * 6, 6), &xs).unwrap();
        let w = Tensor::from_vec(ints(6 * 2 * 3 * 3, 7), &ws).unwrap();
        let o = ConvOptions {
            stride: 2.into(),
            padding: 1.into(),
            dilation: 1.into(),
            groups: 2,
        };
        let y = x.conv2d(&w, None, &o).unwrap();
        let r = Tensor::from_vec(ints(y.numel(), 8), &y.shape()).unwrap();
        let ot = ConvTransposeOptions {
            stride: 2.into(),
            padding: 1.into(),
            output_padding: [0, 1].into(),
            groups: 2,
            dilation: 1.into(),
        };
        let xt = r.conv_transpose2d(&w, None, &ot).unwrap();
        assert_eq!(xt.shape(), xs.to_vec());
        let lhs = y.mul(&r).unwrap().sum().unwrap().item::<f64>().unwrap();
        let rhs = x.mul(&xt).unwrap().sum().unwrap().item::<f64>().unwrap();
        assert_eq!(lhs, rhs);
        // conv1d "same" with an even kernel (extra padding after)
        let x1 = Tensor::from_vec(ints(3 * 11, 9), &[1, 3, 11]).unwrap();
        let w1 = Tensor::from_vec(ints(2 * 3 * 4, 10), &[2, 3, 4]).unwrap();
        let y1 = x1
            .conv1d(
                &w1,
                None,
                &ConvOptions {
                    padding: tapegrad::ConvPadding::Same,
                    ..Default::default()
                },
            )
            .unwrap();
        assert_eq!(y1.shape(), vec![1, 2, 11]);
        // pools over a 7x7 plane: max against a naive window scan, avg = adaptive avg
        let pv = ints(2 * 3 * 7 * 7, 11);
        let xp = Tensor::from_vec(pv.clone(), &[2, 3, 7, 7])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let mp = xp
            .max_pool2d(&[3, 3], &[2, 2], &[1, 1], &[1, 1], true)
            .unwrap();
        assert_eq!(mp.shape(), vec![2, 3, 4, 4]);
        let got = f64s(&mp);
        for (q, g) in got.iter().enumerate() {
            let (plane, i, j) = (q / 16, q / 4 % 4, q % 4);
            let mut m = f64::NEG_INFINITY;
            for u in 0..3 {
                for v in 0..3 {
                    let (y, z) = ((2 * i + u) as i64 - 1, (2 * j + v) as i64 - 1);
                    if (0..7).contains(&y) && (0..7).contains(&z) {
                        m = m.max(pv[plane * 49 + y as usize * 7 + z as usize]);
                    }
                }
            }
            assert_eq!(*g, m, "max_pool2d at {q}");
        }
        mp.sum().unwrap().backward().unwrap();
        assert_eq!(
            f64s(&xp.grad().unwrap()).iter().sum::<f64>(),
            got.len() as f64
        );
        let x6 = Tensor::from_vec(ints(2 * 3 * 6 * 6, 12), &[2, 3, 6, 6]).unwrap();
        let a = x6
            .avg_pool2d(&[2, 2], &[2, 2], &[0, 0], false, true, None)
            .unwrap();
        assert_eq!(f64s(&a), f64s(&x6.adaptive_avg_pool2d(&[3, 3]).unwrap()));
        let am = x6.adaptive_max_pool2d(&[2, 4]).unwrap();
        assert_eq!(am.shape(), vec![2, 3, 2, 4]);
        // layer norm and softmax rows (f64) against their formulas
        let xl = Tensor::from_vec(ints(5 * 37, 13), &[5, 37]).unwrap();
        let ln = xl.layer_norm(&[37], None, None, 1e-5).unwrap();
        let mean = xl.mean(&[1], true, None).unwrap();
        let c = xl.sub(&mean).unwrap();
        let var = c.mul(&c).unwrap().mean(&[1], true, None).unwrap();
        let want = c.div(&var.add(1e-5).unwrap().sqrt().unwrap()).unwrap();
        for (g, w) in f64s(&ln).iter().zip(f64s(&want)) {
            assert!((g - w).abs() < 1e-12, "layer_norm {g} {w}");
        }
        let sm = xl.softmax(1).unwrap();
        let e = xl.exp().unwrap();
        let want = e.div(&e.sum_dims(&[1], true).unwrap()).unwrap();
        for (g, w) in f64s(&sm).iter().zip(f64s(&want)) {
            assert!((g - w).abs() < 1e-14, "softmax {g} {w}");
        }
        let ls = xl.log_softmax(1).unwrap();
        for (g, w) in f64s(&ls).iter().zip(f64s(&want)) {
            assert!((g - w.ln()).abs() < 1e-13, "log_softmax {g} {}", w.ln());
        }
        // fused causal attention (no grad) against its composition
        for dt in [DType::F32, DType::F64] {
            let (b, h, l, dh) = (2, 3, 19, 8);
            let mk = |seed| {
                Tensor::from_vec(ints(b * h * l * dh, seed), &[b, h, l, dh])
                    .unwrap()
                    .div(4.0)
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap()
            };
            let (q, k, v) = (mk(14), mk(15), mk(16));
            let y = {
                let _g = tapegrad::autograd::no_grad();
                Tensor::scaled_dot_product_attention(
                    &q,
                    &k,
                    &v,
                    SdpaOptions {
                        is_causal: true,
                        ..Default::default()
                    },
                )
                .unwrap()
            };
            let mask = Tensor::ones(&[l, l], DType::Bool).unwrap().triu(1).unwrap();
            let sc = q
                .matmul(&k.transpose(2, 3).unwrap())
                .unwrap()
                .div((dh as f64).sqrt())
                .unwrap();
            let sc = sc.masked_fill(&mask, f64::NEG_INFINITY).unwrap();
            let want = sc.softmax(-1).unwrap().matmul(&v).unwrap();
            let tol = if dt == DType::F32 { 1e-5 } else { 1e-12 };
            for (g, w) in f64s(&y).iter().zip(f64s(&want)) {
                assert!((g - w).abs() < tol, "sdpa {dt}: {g} {w}");
            }
        }
    }

    /// The vectorised transcendentals (`math/`, AVX2/AVX-512 loops with scalar tails) over
    /// lengths around the lane counts and strided inputs: every element matches the same value
    /// computed alone, and std's function within a few ulps.
    #[test]
    fn simd_transcendentals_over_odd_lengths() {
        type Op = fn(&Tensor) -> tapegrad::Result<Tensor>;
        type Case = (&'static str, Op, fn(f64) -> f64);
        let ops: [Case; 5] = [
            ("exp", |t| t.exp(), f64::exp),
            ("log", |t| t.log(), f64::ln),
            ("log1p", |t| t.log1p(), f64::ln_1p),
            ("tanh", |t| t.tanh(), f64::tanh),
            ("sigmoid", |t| t.sigmoid(), |x| 1.0 / (1.0 + (-x).exp())),
        ];
        for len in [1usize, 3, 8, 15, 17, 33, 65, 1000] {
            let vals: Vec<f64> = (0..len).map(|i| 0.05 + (i as f64 * 0.37) % 4.0).collect();
            for dt in [DType::F32, DType::F64] {
                let x = Tensor::from_vec(vals.clone(), &[len])
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap();
                let xr: Vec<f64> = f64s(&x);
                for (name, op, reference) in ops {
                    let got = f64s(&op(&x).unwrap());
                    let strided = Tensor::from_vec(
                        vals.iter().flat_map(|&v| [v, -1.0]).collect::<Vec<f64>>(),
                        &[len, 2],
                    )
                    .unwrap()
                    .to_dtype(dt)
                    .unwrap()
                    .select(1, 0)
                    .unwrap();
                    assert_eq!(
                        f64s(&op(&strided).unwrap()),
                        got,
                        "{name} strided {len} {dt}"
                    );
                    let tol = if dt == DType::F32 { 4e-7 } else { 4e-15 };
                    for (i, (&g, &v)) in got.iter().zip(&xr).enumerate() {
                        let w = reference(v);
                        assert!(
                            (g - w).abs() <= tol * w.abs().max(1e-30),
                            "{name}({v}) = {g}, want {w} ({dt}, {len})"
                        );
                        if i % 7 == 0 {
                            let one = f64s(&op(&x.narrow(0, i as i64, 1).unwrap()).unwrap())[0];
                            assert_eq!(
                                one.to_bits(),
                                g.to_bits(),
                                "{name} alone at {i} ({dt}, {len})"
                            );
                        }
                    }
                }
            }
        }
    }

    /// Sparse kernels (COO build and coalesce, CSR conversion, sparse @ dense, to_dense), the
    /// gather/scatter kernels, fused optimizer steps and the storage pool's reuse of large
    /// freed buffers, on exact integer values.
    #[test]
    fn sparse_gather_optim_and_pooled_storage() {
        use tapegrad::optim::{Adam, AdamConfig, Optimizer, Sgd, SgdConfig};
        // entry (0, 2) twice: coalesce sums it
        let (rows, cols, vals) = (
            [0i64, 2, 0, 3, 0],
            [2i64, 1, 1, 2, 2],
            [1.0f64, 2.0, 3.0, 4.0, 5.0],
        );
        let idx = Tensor::from_vec([rows, cols].concat(), &[2, 5]).unwrap();
        let val = Tensor::from_vec(vals.to_vec(), &[5]).unwrap();
        let coo = Tensor::sparse_coo(&idx, &val, &[4, 3]).unwrap();
        let mut dense = vec![0.0; 12];
        for e in 0..5 {
            dense[rows[e] as usize * 3 + cols[e] as usize] += vals[e];
        }
        assert_eq!(f64s(&coo.to_dense().unwrap()), dense);
        let c = coo.coalesce().unwrap();
        assert_eq!(f64s(&c.to_dense().unwrap()), dense);
        let csr = c.to_sparse_csr().unwrap();
        assert_eq!(f64s(&csr.to_dense().unwrap()), dense);
        let b = ints(3 * 5, 17);
        let want = naive_matmul(&dense, &b, 4, 3, 5);
        let bt = Tensor::from_vec(b, &[3, 5]).unwrap();
        assert_eq!(f64s(&tapegrad::sparse::matmul(&c, &bt).unwrap()), want);
        assert_eq!(f64s(&tapegrad::sparse::matmul(&csr, &bt).unwrap()), want);
        // gather / scatter_add with repeated targets
        let src = Tensor::from_vec(ints(12, 18), &[3, 4]).unwrap();
        let gi = Tensor::from_vec(vec![0i64, 3, 3, 1, 2, 2, 0, 0, 1], &[3, 3]).unwrap();
        let g = src.gather(1, &gi).unwrap();
        let sv = ints(12, 18);
        let gv: Vec<f64> = (0..9)
            .map(|q| sv[(q / 3) * 4 + [0, 3, 3, 1, 2, 2, 0, 0, 1][q] as usize])
            .collect();
        assert_eq!(f64s(&g), gv);
        let acc = Tensor::zeros(&[3, 4], DType::F64)
            .unwrap()
            .scatter_add(1, &gi, &g)
            .unwrap();
        assert_eq!(f64s(&acc).iter().sum::<f64>(), gv.iter().sum::<f64>());
        // fused optimizer steps (SGD with momentum: exact halves; Adam: finite, moved)
        let p = Tensor::from_vec(vec![4.0f64; 37], &[37])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let q = Tensor::from_vec(vec![1.0f32; 37], &[37])
            .unwrap()
            .requires_grad_(true)
            .unwrap();
        let mut sgd = Sgd::new(vec![p.clone()], SgdConfig::new(0.5).momentum(0.5)).unwrap();
        let mut adam = Adam::new(vec![q.clone()], AdamConfig::adamw(1e-2)).unwrap();
        for _ in 0..3 {
            sgd.zero_grad().unwrap();
            adam.zero_grad().unwrap();
            p.sum().unwrap().backward().unwrap();
            q.mul(&q).unwrap().sum().unwrap().backward().unwrap();
            sgd.step().unwrap();
            adam.step().unwrap();
        }
        // momentum buffers 1, 1.5, 1.75: p = 4 - 0.5 * 4.25
        assert_eq!(f64s(&p), vec![1.875; 37]);
        assert!(f64s(&q).iter().all(|&v| v < 1.0 && v > 0.9));
        // pooled storage: a large buffer freed and reused comes back zeroed when asked to
        for round in 0..4 {
            let n = 300_000 + round;
            let t = Tensor::full(&[n], 7.0, DType::F32).unwrap();
            assert_eq!(t.sum().unwrap().item::<f32>().unwrap(), 7.0 * n as f32);
            drop(t);
            let z = Tensor::zeros(&[n], DType::F32).unwrap();
            assert_eq!(z.abs().unwrap().sum().unwrap().item::<f32>().unwrap(), 0.0);
            let e = Tensor::from_vec(ints(n, round), &[n])
                .unwrap()
                .add(1.0)
                .unwrap();
            assert_eq!(f64s(&e)[n - 1], ints(n, round)[n - 1] + 1.0);
        }
    }

    #[test]
    fn fuzz_corpora_replay() {
        for (name, run) in super::fuzz_logic::TARGETS {
            let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("fuzz/corpus")
                .join(name);
            for e in std::fs::read_dir(dir).unwrap() {
                run(&std::fs::read(e.unwrap().path()).unwrap());
            }
        }
    }
}

/// Re-runs the `subset::` tests of this binary under valgrind memcheck (skipped with a notice
/// when valgrind is missing or when already running under it).
#[test]
fn under_valgrind() {
    if std::env::var_os("TAPEGRAD_UNDER_VALGRIND").is_some() {
        return;
    }
    let have = std::process::Command::new("valgrind")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !have {
        println!("NOTICE: valgrind is not installed; memcheck subset skipped");
        return;
    }
    let exe = std::env::current_exe().unwrap();
    let out = std::process::Command::new("valgrind")
        .args([
            "--tool=memcheck",
            "--error-exitcode=1",
            "--leak-check=full",
            "--errors-for-leak-kinds=definite",
            "--quiet",
        ])
        .arg(&exe)
        .args(["subset::", "--test-threads=1"])
        .env("TAPEGRAD_UNDER_VALGRIND", "1")
        .env("RAYON_NUM_THREADS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "valgrind memcheck failed:\n{stdout}\n{stderr}"
    );
    assert!(stdout.contains("test result: ok. 10 passed"), "{stdout}");
}
