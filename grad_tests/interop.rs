//! Interop (issue 24): `torch.save` files and NumPy files.
//!
//! * `grad_tests/fixtures/interop/*.pt` and `npy/*` were written by torch 2.15 / NumPy
//!   (`python3 tools/make_interop_fixtures.py`); `expected.json` records what PyTorch itself
//!   loads from them (values, shapes, strides, offsets, which tensors share a storage, versions).
//!   They must load here identically, sharing included.
//! * Files written here must load in PyTorch (`torch.load(weights_only=True)`) and NumPy with
//!   equal values and sharing (`tools/check_interop.py`, run when `python3 -c "import torch"`
//!   works, otherwise the test prints why it did not run it).
//! * Untrusted bytes: every truncation, byte flips and lying headers give errors, never panics.

use serde_json::Value as J;
use std::collections::HashMap;
use std::path::PathBuf;
use tapegrad::checkpoint::StateDict;
use tapegrad::interop::{fuzzing, npy, pt, pt::Value};
use tapegrad::{DType, ErrorKind, Tensor};

fn fixture(name: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("grad_tests/fixtures/interop")
        .join(name)
}

fn expected() -> J {
    let text = std::fs::read_to_string(fixture("expected.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

fn tmp(name: &str) -> PathBuf {
    let dir = PathBuf::from(env!("CARGO_TARGET_TMPDIR"));
    std::fs::create_dir_all(&dir).unwrap();
    dir.join(format!("tapegrad_interop_{name}"))
}

/// A tensor's values in row-major order as JSON numbers/bools (complex as [re, im]).
fn json_values(t: &Tensor) -> Vec<J> {
    match t.dtype() {
        DType::Bool => t
            .to_vec::<bool>()
            .unwrap()
            .into_iter()
            .map(J::from)
            .collect(),
        DType::C64 | DType::C128 => {
            let v = t.to_dtype(DType::C128).unwrap();
            v.to_vec::<tapegrad::dtype::C128>()
                .unwrap()
                .into_iter()
                .map(|c| J::from(vec![c.re, c.im]))
                .collect()
        }
        d if d.is_float() => t
            .to_dtype(DType::F64)
            .unwrap()
            .to_vec::<f64>()
            .unwrap()
            .into_iter()
            .map(J::from)
            .collect(),
        _ => t
            .to_dtype(DType::I64)
            .unwrap()
            .to_vec::<i64>()
            .unwrap()
            .into_iter()
            .map(J::from)
            .collect(),
    }
}

/// Same values, exactly, compared in the tensor's precision: `f32` for float32, float16,
/// bfloat16 and complex64 (the JSON holds their exact values as decimal f64, which serde_json
/// may parse one f64 ulp off), `f64` otherwise.
fn same_values(got: &[J], want: &[J], single: bool) -> bool {
    got.len() == want.len()
        && got.iter().zip(want).all(|(g, w)| match (g, w) {
            (J::Array(a), J::Array(b)) => same_values(a, b, single),
            (J::Bool(a), J::Bool(b)) => a == b,
            (g, w) if single => g.as_f64().map(|x| x as f32) == w.as_f64().map(|x| x as f32),
            (g, w) => g.as_f64() == w.as_f64(),
        })
}

/// True for the dtypes whose values are compared in f32 by [`same_values`].
fn single(d: DType) -> bool {
    matches!(d, DType::F32 | DType::F16 | DType::BF16 | DType::C64)
}

/// Compares a loaded value with PyTorch's description of it; `groups` maps storage groups
/// to the storage id first seen for them.
fn check_tree(v: &Value, j: &J, groups: &mut HashMap<u64, u64>, path: &str) {
    let (tag, body) = j.as_object().unwrap().iter().next().unwrap();
    match (tag.as_str(), v) {
        ("tensor", Value::Tensor(t)) => {
            let s = |k: &str| -> Vec<usize> {
                body[k]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|x| x.as_u64().unwrap() as usize)
                    .collect()
            };
            assert_eq!(t.dtype().name(), body["dtype"].as_str().unwrap(), "{path}");
            assert_eq!(t.shape(), s("shape"), "{path} shape");
            assert_eq!(t.strides(), s("strides"), "{path} strides");
            assert_eq!(
                t.storage_offset() as u64,
                body["offset"].as_u64().unwrap(),
                "{path}"
            );
            assert_eq!(
                t.requires_grad(),
                body["requires_grad"].as_bool().unwrap(),
                "{path}"
            );
            assert_eq!(
                t.version(),
                body["version"].as_u64().unwrap(),
                "{path} version"
            );
            assert!(!t.is_view(), "{path}: torch.load gives bases, not views");
            let group = body["group"].as_u64().unwrap();
            let id = t.storage().id();
            match groups.get(&group) {
                Some(&g) => assert_eq!(g, id, "{path} must share its group's storage"),
                None => {
                    assert!(
                        !groups.values().any(|&g| g == id),
                        "{path} shares a storage it must not"
                    );
                    groups.insert(group, id);
                }
            }
            let want = body["values"].as_array().unwrap();
            assert!(
                same_values(&json_values(t), want, single(t.dtype())),
                "{path} values"
            );
        }
        ("dict", Value::Dict(items)) => {
            let want = body.as_array().unwrap();
            assert_eq!(items.len(), want.len(), "{path} length");
            for ((k, x), w) in items.iter().zip(want) {
                let Value::Str(k) = k else {
                    panic!("{path}: non-str key")
                };
                assert_eq!(k, w[0].as_str().unwrap(), "{path} key order");
                check_tree(x, &w[1], groups, &format!("{path}.{k}"));
            }
        }
        ("list", Value::List(items)) | ("tuple", Value::Tuple(items)) => {
            let want = body.as_array().unwrap();
            assert_eq!(items.len(), want.len(), "{path} length");
            for (i, (x, w)) in items.iter().zip(want).enumerate() {
                check_tree(x, w, groups, &format!("{path}[{i}]"));
            }
        }
        ("none", Value::None) => {}
        ("bool", Value::Bool(b)) => assert_eq!(Some(*b), body.as_bool(), "{path}"),
        ("int", Value::Int(i)) => assert_eq!(Some(*i), body.as_i64(), "{path}"),
        ("float", Value::Float(f)) => assert_eq!(Some(*f), body.as_f64(), "{path}"),
        ("str", Value::Str(s)) => assert_eq!(Some(s.as_str()), body.as_str(), "{path}"),
        (tag, v) => panic!("{path}: expected {tag}, loaded {v:?}"),
    }
}

#[test]
fn torch_fixtures_load_with_values_geometry_and_sharing() {
    let exp = expected();
    for name in ["dtypes.pt", "model.pt", "views.pt", "nested.pt"] {
        let v = pt::load(fixture(name)).unwrap();
        check_tree(&v, &exp[name], &mut HashMap::new(), name);
    }
}

#[test]
fn torch_fixture_views_write_through() {
    let v = pt::load(fixture("views.pt")).unwrap();
    let get = |k: &str| v.get(k).unwrap().tensor().unwrap().clone();
    let (base, t, corner, window) = (get("base"), get("t"), get("corner"), get("flat_window"));
    // base[1, 4] sits at storage element 10: t[4, 1], corner[0, 1], flat_window[1, 1]
    base.select(0, 1)
        .unwrap()
        .select(0, 4)
        .unwrap()
        .fill_(-1.0)
        .unwrap();
    for (x, at) in [(&t, [4, 1]), (&corner, [0, 1]), (&window, [1, 1])] {
        let e = x.select(0, at[0]).unwrap().select(0, at[1]).unwrap();
        assert_eq!(e.item::<f32>().unwrap(), -1.0);
    }
    // each loaded tensor counts its own versions, as in PyTorch (set_ to a shared storage)
    assert_eq!((base.version(), t.version()), (2, 1));
    assert!(!get("other").shares_storage(&base));
}

#[test]
fn torch_parameter_and_state_dict() {
    let v = pt::load(fixture("nested.pt")).unwrap();
    let Some(Value::List(layers)) = v.get("layers") else {
        panic!()
    };
    let w = layers[0].get("w").unwrap().tensor().unwrap();
    assert!(w.requires_grad() && w.is_leaf());
    let sd = StateDict::load_pt(fixture("model.pt")).unwrap();
    assert_eq!(
        sd.names(),
        [
            "0.weight",
            "0.bias",
            "1.weight",
            "1.bias",
            "1.running_mean",
            "1.running_var",
            "1.num_batches_tracked",
            "2.weight",
            "2.bias"
        ]
    );
    assert_eq!(
        sd.get("1.num_batches_tracked")
            .unwrap()
            .item::<i64>()
            .unwrap(),
        7
    );
    let back = StateDict::from_pt_bytes(&sd.to_pt_bytes().unwrap()).unwrap();
    for (k, t) in sd.iter() {
        assert_eq!(json_values(back.get(k).unwrap()), json_values(t), "{k}");
    }
    // a file that is not a dict of tensors is not a state dict
    let e = StateDict::load_pt(fixture("nested.pt")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
}

#[test]
fn torch_dtype_without_tapegrad_dtype_is_refused() {
    let e = pt::load(fixture("uint16.pt")).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
    assert!(e.message().contains("uint16"), "{e}");
}

/// One storage record read as two dtypes (`tools/make_pt_alias_fixtures.py`): torch writes it
/// for an empty tensor and its `.view(torch.int32)`, and reads a record with data as both dtypes
/// when the byte counts agree. tapegrad storages have one dtype: refused, naming key and dtypes.
#[test]
fn storage_read_as_two_dtypes_is_refused() {
    for name in ["alias_empty.pt", "alias_data.pt"] {
        let e = pt::load(fixture(name)).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{name}: {e}");
        let m = e.message();
        assert!(
            m.contains("storage \"0\"") && m.contains("float32") && m.contains("int32"),
            "{name}: {e}"
        );
        let bytes = std::fs::read(fixture(name)).unwrap();
        assert_eq!(
            pt::from_bytes(&bytes).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
    }
}

/// The value tree written to PyTorch by `ours_load_in_torch_and_numpy` (see
/// tools/check_interop.py for what it must hold there).
fn torch_check_value() -> Value {
    let base = Tensor::arange_dtype(0, 24, 1, DType::F32)
        .unwrap()
        .view(&[4, 6])
        .unwrap();
    let corner = base
        .slice(0, Some(1), None, 1)
        .unwrap()
        .slice(1, Some(3), None, 1)
        .unwrap();
    let step = base
        .slice(0, None, None, 2)
        .unwrap()
        .slice(1, Some(1), None, 3)
        .unwrap();
    let dtypes = Value::dict(DType::ALL.iter().map(|&d| {
        let t = Tensor::arange(0, 6, 1)
            .unwrap()
            .sub(2i64)
            .unwrap()
            .to_dtype(d)
            .unwrap();
        (d.name(), Value::from(t))
    }));
    let s = Tensor::arange(0, 10, 1).unwrap();
    let w = Tensor::from_vec(vec![1.5f32, -2.0], &[2])
        .unwrap()
        .requires_grad_(true)
        .unwrap();
    let plain = Value::dict([
        ("epoch", Value::Int(3)),
        ("lr", Value::Float(0.5)),
        ("name", Value::Str("x".into())),
        ("none", Value::None),
        ("flag", Value::Bool(true)),
        ("neg", Value::Int(-70000)),
        ("big", Value::Int(1 << 40)),
    ]);
    let shared = Value::Tuple(vec![
        Value::from(&s),
        Value::from(s.slice(0, Some(2), None, 1).unwrap()),
    ]);
    Value::dict([
        ("base", Value::from(&base)),
        ("t", Value::from(base.t().unwrap())),
        ("corner", Value::from(corner)),
        ("step", Value::from(step)),
        ("dtypes", dtypes),
        ("nested", Value::List(vec![plain, shared])),
        ("w", Value::from(w)),
    ])
}

#[test]
fn ours_round_trip_keeps_values_geometry_and_sharing() {
    let v = torch_check_value();
    let bytes = pt::to_bytes(&v).unwrap();
    let back = pt::from_bytes(&bytes).unwrap();
    let get = |v: &Value, k: &str| v.get(k).unwrap().tensor().unwrap().clone();
    for k in ["base", "t", "corner", "step", "w"] {
        let (a, b) = (get(&v, k), get(&back, k));
        assert_eq!(
            (a.shape(), a.strides(), a.storage_offset()),
            (b.shape(), b.strides(), b.storage_offset()),
            "{k}"
        );
        assert_eq!(json_values(&a), json_values(&b), "{k}");
        assert_eq!(a.requires_grad(), b.requires_grad(), "{k}");
    }
    let base = get(&back, "base");
    for k in ["t", "corner", "step"] {
        assert!(get(&back, k).shares_storage(&base), "{k}");
    }
    assert_eq!(
        base.storage().nbytes(),
        96,
        "one storage record for base and its views"
    );
    let (Some(Value::Dict(d0)), Some(Value::Dict(d1))) = (v.get("dtypes"), back.get("dtypes"))
    else {
        panic!()
    };
    for ((k, a), (_, b)) in d0.iter().zip(d1) {
        let (a, b) = (a.tensor().unwrap(), b.tensor().unwrap());
        assert_eq!(
            (a.dtype(), json_values(a)),
            (b.dtype(), json_values(b)),
            "{k:?}"
        );
    }
    // the file's bytes are deterministic
    assert_eq!(pt::to_bytes(&back).unwrap().len(), bytes.len());
    // two dtypes over one storage cannot be written (torch.save refuses them too)
    let x = Tensor::zeros(&[4], DType::F32).unwrap();
    let y = Tensor::zeros(&[0], DType::I32).unwrap();
    y.set_storage(&x.storage(), 0, &[4], None).unwrap();
    let e = pt::to_bytes(&Value::List(vec![Value::from(&x), Value::from(&y)])).unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Unsupported);
}

fn torch_available() -> Result<(), String> {
    match std::process::Command::new("python3")
        .args(["-c", "import torch, numpy"])
        .output()
    {
        Ok(o) if o.status.success() => Ok(()),
        Ok(o) => Err(String::from_utf8_lossy(&o.stderr)
            .trim()
            .lines()
            .last()
            .unwrap_or("")
            .to_string()),
        Err(e) => Err(format!("cannot run python3: {e}")),
    }
}

#[test]
fn ours_load_in_torch_and_numpy() {
    if let Err(why) = torch_available() {
        println!(
            "ours_load_in_torch_and_numpy: not run, python3 cannot import torch and numpy ({why})"
        );
        return;
    }
    let pt_path = tmp("check.pt");
    pt::save(&torch_check_value(), &pt_path).unwrap();
    let c = Tensor::arange_dtype(0, 6, 1, DType::F64)
        .unwrap()
        .mul(0.5)
        .unwrap()
        .view(&[2, 3])
        .unwrap();
    let f = Tensor::arange_dtype(0, 6, 1, DType::I32)
        .unwrap()
        .view(&[2, 3])
        .unwrap()
        .t()
        .unwrap();
    let flags = Tensor::from_vec(vec![true, false, true], &[3]).unwrap();
    let npz_path = tmp("check.npz");
    npy::save_npz(&[("c", &c), ("f", &f), ("flags", &flags)], &npz_path, true).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/check_interop.py");
    let out = std::process::Command::new("python3")
        .arg(script)
        .arg(&pt_path)
        .arg(&npz_path)
        .output()
        .unwrap();
    println!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "tools/check_interop.py failed");
}

/// The automatic round trip with a live PyTorch (skipped with a printed reason without one):
/// a file tapegrad writes loads in `torch.load(weights_only=True)` exactly as tapegrad loads it
/// (values, geometry, sharing, requires_grad); torch saves what it loaded again and tapegrad
/// loads that identically; a tree torch builds on the spot (views with offsets, a diagonal, an
/// expanded row, every dtype transposed, a storage shared across nesting, a Parameter) loads
/// here as torch loads it. `tools/torch_round_trip.py` is the torch half.
#[test]
fn torch_round_trip_both_ways() {
    if let Err(why) = torch_available() {
        println!("torch_round_trip_both_ways: not run, python3 cannot import torch ({why})");
        return;
    }
    let (ours, resaved, fresh, out) = (
        tmp("rt_ours.pt"),
        tmp("rt_resaved.pt"),
        tmp("rt_fresh.pt"),
        tmp("rt_desc.json"),
    );
    pt::save(&torch_check_value(), &ours).unwrap();
    let script = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tools/torch_round_trip.py");
    let run = std::process::Command::new("python3")
        .arg(script)
        .args([&ours, &resaved, &fresh, &out])
        .output()
        .unwrap();
    assert!(
        run.status.success(),
        "tools/torch_round_trip.py failed: {}",
        String::from_utf8_lossy(&run.stderr)
    );
    let desc: J = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    // what torch read from our file is what we read from it, and what torch saved of it
    for file in [&ours, &resaved] {
        check_tree(
            &pt::load(file).unwrap(),
            &desc["ours"],
            &mut HashMap::new(),
            "ours",
        );
    }
    // torch's own tree
    let got = pt::load(&fresh).unwrap();
    check_tree(&got, &desc["fresh"], &mut HashMap::new(), "fresh");
    // and a write through `base` reaches the views that share its storage
    let base = got.get("base").unwrap().tensor().unwrap();
    base.select(0, 1).unwrap().fill_(-1.0).unwrap();
    let e = got.get("expanded").unwrap().tensor().unwrap();
    assert!(e.to_vec::<f64>().unwrap().iter().all(|&v| v == -1.0));
    let t = got.get("t").unwrap().tensor().unwrap();
    assert_eq!(
        t.select(1, 1).unwrap().to_vec::<f64>().unwrap(),
        vec![-1.0; 6]
    );
}

#[test]
fn numpy_fixtures_load_and_write_back_byte_identical() {
    let exp = expected();
    let npy_exp = exp["npy"].as_object().unwrap();
    let mut count = 0;
    for (name, want) in npy_exp {
        if name.ends_with(".npz") {
            continue;
        }
        let path = fixture(&format!("npy/{name}"));
        let t = npy::load(&path).unwrap();
        check_npy(&t, want, name);
        if !name.starts_with("be_") {
            // NumPy's own bytes (little-endian files): the writer reproduces them exactly
            assert_eq!(
                npy::to_bytes(&t).unwrap(),
                std::fs::read(&path).unwrap(),
                "{name}"
            );
        }
        let back = npy::from_bytes(&npy::to_bytes(&t).unwrap()).unwrap();
        check_npy(&back, want, name);
        count += 1;
    }
    assert_eq!(count, 25, "11 dtypes x 2 orders + 3");
    for file in ["arrays.npz", "arrays_compressed.npz"] {
        let arrays = npy::load_npz(fixture(&format!("npy/{file}"))).unwrap();
        let want = npy_exp["arrays.npz"].as_object().unwrap();
        assert_eq!(
            arrays.iter().map(|(k, _)| k.as_str()).collect::<Vec<_>>(),
            ["x", "mask", "yt"]
        );
        for (k, t) in &arrays {
            check_npy(t, &want[k.as_str()], file);
        }
        let refs: Vec<(&str, &Tensor)> = arrays.iter().map(|(k, t)| (k.as_str(), t)).collect();
        for compress in [false, true] {
            let again = npy::npz_from_bytes(&npy::npz_to_bytes(&refs, compress).unwrap()).unwrap();
            for (k, t) in &again {
                check_npy(t, &want[k.as_str()], file);
            }
        }
    }
}

fn check_npy(t: &Tensor, want: &J, name: &str) {
    assert_eq!(t.dtype().name(), want["dtype"].as_str().unwrap(), "{name}");
    let shape: Vec<usize> = want["shape"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_u64().unwrap() as usize)
        .collect();
    assert_eq!(t.shape(), shape, "{name}");
    let fortran = want["fortran"].as_bool().unwrap();
    assert_eq!(
        !t.is_contiguous(),
        fortran,
        "{name}: Fortran order loads with column-major strides"
    );
    assert!(
        same_values(
            &json_values(t),
            want["values"].as_array().unwrap(),
            single(t.dtype())
        ),
        "{name} values"
    );
}

/// An array that is both C- and Fortran-contiguous (size-1 dims) is written in C order, as
/// `numpy.save` writes it (`fortran_order = f_contiguous and not c_contiguous`): a Fortran-order
/// `(1, 1, 2)` complex64 file loads with element strides `[1, 1, 1]` and reloads after a save
/// with `[2, 2, 1]`, numpy's own strides both times (checked with numpy 2: `(8, 8, 8)` bytes,
/// then `(16, 16, 8)`). The npy fuzz target's round trip found the difference in its own check.
#[test]
fn numpy_order_of_an_array_both_c_and_fortran_contiguous() {
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    let mut h = b"{'descr': '<c8', 'fortran_order': True, 'shape': (1, 1, 2), }".to_vec();
    while !(10 + h.len() + 1).is_multiple_of(64) {
        h.push(b' ');
    }
    h.push(b'\n');
    f.extend((h.len() as u16).to_le_bytes());
    f.extend(&h);
    for v in [1.0f32, 2.0, 3.0, 4.0] {
        f.extend(v.to_le_bytes());
    }
    let t = npy::from_bytes(&f).unwrap();
    assert_eq!((t.shape(), t.strides()), (vec![1, 1, 2], vec![1, 1, 1]));
    let bytes = npy::to_bytes(&t).unwrap();
    let text = String::from_utf8_lossy(&bytes[10..70]).to_string();
    assert!(text.contains("'fortran_order': False"), "{text}");
    let back = npy::from_bytes(&bytes).unwrap();
    assert_eq!(
        (back.shape(), back.strides()),
        (vec![1, 1, 2], vec![2, 2, 1])
    );
    assert_eq!(json_values(&back), json_values(&t));
}

#[test]
fn numpy_refuses_bfloat16_and_foreign_descrs() {
    let t = Tensor::zeros(&[2], DType::BF16).unwrap();
    assert_eq!(
        npy::to_bytes(&t).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
    let mut f = std::fs::read(fixture("npy/int32_c.npy")).unwrap();
    let at = f.windows(3).position(|w| w == b"<i4").unwrap();
    f[at + 1] = b'u'; // '<u4': uint32, which tapegrad lacks
    assert_eq!(
        npy::from_bytes(&f).unwrap_err().kind(),
        ErrorKind::Unsupported
    );
}

/// Every prefix of a real file, and every single-byte corruption of its headers, is an error or
/// a valid load — never a panic.
fn hammer(bytes: &[u8], read: impl Fn(&[u8]) -> tapegrad::Result<()>) -> (usize, usize) {
    let mut errs = 0;
    for cut in 0..bytes.len() {
        let e = read(&bytes[..cut]).expect_err("a truncated file cannot load");
        assert!(
            matches!(e.kind(), ErrorKind::Malformed | ErrorKind::Unsupported),
            "{e}"
        );
        errs += 1;
    }
    let mut flips = 0;
    for at in 0..bytes.len() {
        for mask in [0x01u8, 0x80, 0xFF] {
            let mut b = bytes.to_vec();
            b[at] ^= mask;
            if read(&b).is_err() {
                flips += 1;
            }
        }
    }
    (errs, flips)
}

#[test]
fn untrusted_bytes_give_errors_not_panics() {
    let views = std::fs::read(fixture("views.pt")).unwrap();
    let (cuts, flips) = hammer(&views, |b| pt::from_bytes(b).map(drop));
    assert!(cuts == views.len() && flips > 0);
    let npy_f = std::fs::read(fixture("npy/complex64_f.npy")).unwrap();
    hammer(&npy_f, |b| npy::from_bytes(b).map(drop));
    let npz = std::fs::read(fixture("npy/arrays_compressed.npz")).unwrap();
    hammer(&npz, |b| npy::npz_from_bytes(b).map(drop));
}

#[test]
fn lying_headers_are_malformed_without_huge_allocations() {
    // npy: a shape of 2^60 elements over 8 bytes of data
    let mut h =
        b"{'descr': '<f8', 'fortran_order': False, 'shape': (1152921504606846976,), }".to_vec();
    h.resize(118, b' ');
    h.push(b'\n');
    let mut f = b"\x93NUMPY\x01\x00".to_vec();
    f.extend_from_slice(&(h.len() as u16).to_le_bytes());
    f.extend_from_slice(&h);
    f.extend_from_slice(&[0; 8]);
    assert_eq!(
        npy::from_bytes(&f).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    // npy: a header length past the end
    let e = npy::from_bytes(b"\x93NUMPY\x02\x00\xff\xff\xff\xff{").unwrap_err();
    assert_eq!(e.kind(), ErrorKind::Malformed);
    // pt: a storage that claims 2^40 elements with a 16-byte record
    let pkl = b"\x80\x02ctorch._utils\n_rebuild_tensor_v2\n((X\x07\x00\x00\x00storagectorch\nFloatStorage\nX\x01\x00\x00\x000X\x03\x00\x00\x00cpu\x8a\x06\x00\x00\x00\x00\x00\x01tQK\x00K\x04\x85K\x01\x85\x89ccollections\nOrderedDict\n)RtR.";
    let file = fuzzing::pt_archive(pkl, &[("data/0", &[0u8; 16])]).unwrap();
    assert_eq!(
        pt::from_bytes(&file).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    // pt: the same tensor over 4 elements loads; at storage offset 1 it reaches past them
    let p = pkl.iter().position(|&b| b == 0x8a).unwrap();
    let pkl4 = [&pkl[..p], b"K\x04", &pkl[p + 8..]].concat();
    let ok = fuzzing::pt_archive(&pkl4, &[("data/0", &[0u8; 16])]).unwrap();
    assert_eq!(
        pt::from_bytes(&ok).unwrap().tensor().unwrap().shape(),
        vec![4]
    );
    let at = pkl4.windows(4).position(|w| w == b"tQK\x00").unwrap() + 3;
    let mut off1 = pkl4.clone();
    off1[at] = 1;
    let bad = fuzzing::pt_archive(&off1, &[("data/0", &[0u8; 16])]).unwrap();
    assert_eq!(
        pt::from_bytes(&bad).unwrap_err().kind(),
        ErrorKind::Malformed
    );
    // zip: torch writes a zip64 end record too; an end record whose count is saturated
    // (0xFFFF) defers to it, and there it claims 2^64 - 1 entries
    let mut z = std::fs::read(fixture("views.pt")).unwrap();
    let eocd = z.len() - 22;
    z[eocd + 10..eocd + 12].fill(0xFF);
    let z64 = z.windows(4).rposition(|w| w == b"PK\x06\x06").unwrap();
    z[z64 + 32..z64 + 40].fill(0xFF);
    assert_eq!(pt::from_bytes(&z).unwrap_err().kind(), ErrorKind::Malformed);
    // zip: a plain end record (ours) claiming 65535 entries
    let t = Tensor::zeros(&[2], DType::F32).unwrap();
    let mut z = npy::npz_to_bytes(&[("a", &t)], false).unwrap();
    let eocd = z.len() - 22;
    z[eocd + 10..eocd + 12].fill(0xFF);
    assert_eq!(
        npy::npz_from_bytes(&z).unwrap_err().kind(),
        ErrorKind::Malformed
    );
}

#[test]
fn unpickler_refuses_foreign_globals_without_running_them() {
    for pkl in [
        &b"\x80\x02cos\nsystem\nX\x02\x00\x00\x00lsq\x00\x85R."[..],
        b"\x80\x02cbuiltins\neval\n.",
        b"\x80\x02ctorch\nload\n.",
        b"\x80\x02c__builtin__\nset\n]\x85R.",
    ] {
        let e = fuzzing::unpickle(pkl).unwrap_err();
        assert_eq!(e.kind(), ErrorKind::Unsupported, "{e}");
        assert!(e.message().contains("never executed"), "{e}");
        let file = fuzzing::pt_archive(pkl, &[]).unwrap();
        assert_eq!(
            pt::from_bytes(&file).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
    }
    // opcodes torch.save never writes (INST, OBJ, NEWOBJ) are refused as well
    for pkl in [
        &b"\x80\x02(ios\nsystem\n."[..],
        b"\x80\x02(o.",
        b"\x80\x02)\x81.",
    ] {
        assert_eq!(
            fuzzing::unpickle(pkl).unwrap_err().kind(),
            ErrorKind::Unsupported
        );
    }
    // a self-containing list and an exponential DAG of shared references
    assert_eq!(
        fuzzing::unpickle(b"\x80\x02]q\x00h\x00a.")
            .unwrap_err()
            .kind(),
        ErrorKind::Malformed
    );
    let mut dag = b"\x80\x02N".to_vec();
    for _ in 0..40 {
        dag.extend_from_slice(b"q\x00h\x00\x86"); // x = (x, x)
    }
    dag.push(b'.');
    assert_eq!(
        fuzzing::unpickle(&dag).unwrap_err().kind(),
        ErrorKind::Malformed
    );
}
