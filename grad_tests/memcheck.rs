//! The memcheck subset: small tests over the unsafe core — storage (allocation, growth, sharing,
//! drop order), raw kernels (pointwise, broadcast, reductions, matmul, casts), strided iteration
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
    assert!(stdout.contains("test result: ok. 6 passed"), "{stdout}");
}
