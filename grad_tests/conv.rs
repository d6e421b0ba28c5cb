//! Convolutions: values against a direct (loop) reference over every geometry form, f32 and
//! f16 and integer dtypes, gradients against the reference's adjoint, errors (kinds, nothing
//! changed) and node names. PyTorch-recorded values are in the sweep (`conv.json.gz`).

use crate::common::{R, close_rel, f64s};
use tapegrad::{ConvOptions, ConvPadding, ConvTransposeOptions, DType, ErrorKind, Tensor};

/// Deterministic values in [-1, 1).
fn vals(n: usize, seed: u64) -> Vec<f64> {
    let mut s = seed
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (0..n)
        .map(|_| {
            s = s
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            ((s >> 11) as f64 / (1u64 << 53) as f64) * 2.0 - 1.0
        })
        .collect()
}

fn t(shape: &[usize], seed: u64) -> Tensor {
    Tensor::from_vec(vals(shape.iter().product(), seed), shape).unwrap()
}

/// One spatial geometry for the reference: sizes padded to 3 dims.
struct Ref {
    n: usize,
    ci: usize,
    co: usize,
    g: usize,
    i: [usize; 3],
    o: [usize; 3],
    k: [usize; 3],
    s: [usize; 3],
    p: [usize; 3],
    d: [usize; 3],
}

fn pad3(v: &[usize], fill: usize) -> [usize; 3] {
    let mut a = [fill; 3];
    a[3 - v.len()..].copy_from_slice(v);
    a
}

impl Ref {
    /// For each (out position, tap, in position) triple that the convolution connects: calls
    /// `f(n, oc, o_lin, ic, i_lin, w_lin)`.
    fn each(&self, mut f: impl FnMut(usize, usize, usize, usize, usize)) {
        let (cig, cog) = (self.ci / self.g, self.co / self.g);
        for n in 0..self.n {
            for oc in 0..self.co {
                let grp = oc / cog;
                for icg in 0..cig {
                    let ic = grp * cig + icg;
                    for o0 in 0..self.o[0] {
                        for o1 in 0..self.o[1] {
                            for o2 in 0..self.o[2] {
                                for k0 in 0..self.k[0] {
                                    for k1 in 0..self.k[1] {
                                        for k2 in 0..self.k[2] {
                                            let pos = |o: usize, k: usize, j: usize| {
                                                (o * self.s[j] + k * self.d[j]) as i64
                                                    - self.p[j] as i64
                                            };
                                            let (a, b, c) =
                                                (pos(o0, k0, 0), pos(o1, k1, 1), pos(o2, k2, 2));
                                            if a < 0 || b < 0 || c < 0 {
                                                continue;
                                            }
                                            let (a, b, c) = (a as usize, b as usize, c as usize);
                                            if a >= self.i[0] || b >= self.i[1] || c >= self.i[2] {
                                                continue;
                                            }
                                            let ol = ((n * self.co + oc) * self.o[0] + o0)
                                                * self.o[1]
                                                * self.o[2]
                                                + o1 * self.o[2]
                                                + o2;
                                            let il = ((n * self.ci + ic) * self.i[0] + a)
                                                * self.i[1]
                                                * self.i[2]
                                                + b * self.i[2]
                                                + c;
                                            let wl = ((oc * cig + icg) * self.k[0] + k0)
                                                * self.k[1]
                                                * self.k[2]
                                                + k1 * self.k[2]
                                                + k2;
                                            f(ol, il, wl, oc, ic);
                                        }
                                    }
                                }
                            }
                        }
                    }
                }
            }
        }
    }
}

struct Form {
    x: Vec<usize>,
    w: Vec<usize>,
    stride: Vec<usize>,
    pad: Vec<usize>,
    dil: Vec<usize>,
    groups: usize,
    bias: bool,
}

fn forms() -> Vec<Form> {
    let f = |x: &[usize], w: &[usize], s: &[usize], p: &[usize], d: &[usize], g, b| Form {
        x: x.to_vec(),
        w: w.to_vec(),
        stride: s.to_vec(),
        pad: p.to_vec(),
        dil: d.to_vec(),
        groups: g,
        bias: b,
    };
    vec![
        f(
            &[2, 3, 7, 6],
            &[4, 3, 3, 3],
            &[1, 1],
            &[1, 1],
            &[1, 1],
            1,
            true,
        ),
        f(
            &[1, 4, 9, 8],
            &[6, 2, 3, 2],
            &[2, 3],
            &[1, 0],
            &[2, 1],
            2,
            false,
        ),
        f(
            &[3, 4, 5, 5],
            &[4, 1, 3, 3],
            &[1, 1],
            &[2, 2],
            &[1, 2],
            4,
            true,
        ),
        f(
            &[2, 5, 4, 3],
            &[3, 5, 1, 1],
            &[1, 1],
            &[0, 0],
            &[1, 1],
            1,
            true,
        ),
        f(&[2, 2, 11], &[3, 2, 4], &[3], &[2], &[1], 1, true),
        // unit strides with a kernel wider than one tap (the AVX-512 f32 kernel without a
        // column matrix): two passes over input channels (40 * 9 taps), a part-filled panel of
        // output channels (13 = 6 + 6 + 1), rows wider than a 32-lane tile
        f(
            &[2, 40, 6, 37],
            &[13, 40, 3, 3],
            &[1, 1],
            &[1, 1],
            &[1, 1],
            1,
            true,
        ),
        // ... one dim, dilated, rows narrower than a tile
        f(&[2, 3, 50], &[7, 3, 5], &[1], &[4], &[2], 1, true),
        // ... an image taller than one part's padded block (two blocks of rows), no padding
        f(
            &[1, 8, 300, 70],
            &[2, 8, 3, 2],
            &[1, 1],
            &[0, 0],
            &[1, 3],
            1,
            false,
        ),
        f(
            &[1, 2, 4, 5, 6],
            &[2, 1, 2, 3, 2],
            &[1, 2, 1],
            &[1, 0, 1],
            &[2, 1, 1],
            2,
            true,
        ),
    ]
}

fn opts(f: &Form) -> ConvOptions {
    let i = |v: &[usize]| v.iter().map(|&a| a as i64).collect::<Vec<_>>();
    ConvOptions::default()
        .stride(i(&f.stride))
        .padding(i(&f.pad))
        .dilation(i(&f.dil))
        .groups(f.groups as i64)
}

fn conv(x: &Tensor, w: &Tensor, b: Option<&Tensor>, o: &ConvOptions) -> tapegrad::Result<Tensor> {
    match x.dim() {
        3 => x.conv1d(w, b, o),
        4 => x.conv2d(w, b, o),
        _ => x.conv3d(w, b, o),
    }
}

fn reference(f: &Form) -> Ref {
    let nd = f.x.len() - 2;
    let o: Vec<usize> = (0..nd)
        .map(|j| (f.x[j + 2] + 2 * f.pad[j] - f.dil[j] * (f.w[j + 2] - 1) - 1) / f.stride[j] + 1)
        .collect();
    Ref {
        n: f.x[0],
        ci: f.x[1],
        co: f.w[0],
        g: f.groups,
        i: pad3(&f.x[2..], 1),
        o: pad3(&o, 1),
        k: pad3(&f.w[2..], 1),
        s: pad3(&f.stride, 1),
        p: pad3(&f.pad, 0),
        d: pad3(&f.dil, 1),
    }
}

fn close(a: &[f64], b: &[f64], tol: f64, what: &str) {
    assert_eq!(a.len(), b.len(), "{what}: lengths");
    for (i, (x, y)) in a.iter().zip(b).enumerate() {
        assert!(
            (x - y).abs() <= tol * (1.0 + y.abs()),
            "{what}[{i}]: {x} vs {y}"
        );
    }
}

/// f64 to 1e-12; f32 (whose unit-stride forms run the AVX-512 kernel without a column
/// matrix on CPUs that have it) to 1e-4 of the f64 reference over the f32-rounded operands
/// (the weight gradient of the tall form sums 20,000 f32 products).
#[test]
fn conv_values_and_grads_match_the_direct_reference() -> R {
    for (dt, tol) in [(DType::F64, 1e-12), (DType::F32, 1e-4)] {
        conv_values_match_in(dt, tol)?;
    }
    Ok(())
}

fn conv_values_match_in(dt: DType, tol: f64) -> R {
    for (fi, f) in forms().iter().enumerate() {
        let r = reference(f);
        let leaf = |shape: &[usize], seed| t(shape, seed).to_dtype(dt)?.requires_grad_(true);
        let x = leaf(&f.x, 10 + fi as u64)?;
        let w = leaf(&f.w, 20 + fi as u64)?;
        let b = leaf(&[f.w[0]], 30 + fi as u64)?;
        let y = conv(&x, &w, f.bias.then_some(&b), &opts(f))?;
        let (xv, wv, bv) = (f64s(&x), f64s(&w), f64s(&b));
        let onum = r.n * r.co * r.o.iter().product::<usize>();
        let per = r.o.iter().product::<usize>();
        let mut want = vec![0.0; onum];
        if f.bias {
            for (l, v) in want.iter_mut().enumerate() {
                *v = bv[(l / per) % r.co];
            }
        }
        r.each(|ol, il, wl, _, _| want[ol] += xv[il] * wv[wl]);
        let mut shape = vec![r.n, r.co];
        shape.extend(&r.o[3 - (f.x.len() - 2)..]);
        assert_eq!(y.shape(), shape, "{dt:?} form {fi}");
        close(&f64s(&y), &want, tol, &format!("{dt:?} form {fi} value"));
        // gradients: the adjoint of the reference for a cotangent `gy`
        let gy = t(&shape, 40 + fi as u64).to_dtype(dt)?;
        tapegrad::autograd::backward(
            std::slice::from_ref(&y),
            &[Some(gy.clone())],
            tapegrad::autograd::BackwardOptions::default(),
        )?;
        let gv = f64s(&gy);
        let (mut gx, mut gw) = (vec![0.0; xv.len()], vec![0.0; wv.len()]);
        r.each(|ol, il, wl, _, _| {
            gx[il] += gv[ol] * wv[wl];
            gw[wl] += gv[ol] * xv[il];
        });
        close(
            &f64s(&x.grad().unwrap()),
            &gx,
            tol,
            &format!("{dt:?} form {fi} grad x"),
        );
        close(
            &f64s(&w.grad().unwrap()),
            &gw,
            tol,
            &format!("{dt:?} form {fi} grad w"),
        );
        if f.bias {
            let mut gb = vec![0.0; r.co];
            for (l, g) in gv.iter().enumerate() {
                gb[(l / per) % r.co] += g;
            }
            close(
                &f64s(&b.grad().unwrap()),
                &gb,
                tol,
                &format!("{dt:?} form {fi} grad b"),
            );
        }
        // the transposed convolution is the input gradient: same values through the public op
        if f.x.len() <= 4 {
            let topts = ConvTransposeOptions::default()
                .stride(f.stride.iter().map(|&a| a as i64).collect::<Vec<_>>())
                .padding(f.pad.iter().map(|&a| a as i64).collect::<Vec<_>>())
                .dilation(f.dil.iter().map(|&a| a as i64).collect::<Vec<_>>())
                .groups(f.groups as i64);
            let out_pad: Vec<i64> = (0..f.x.len() - 2)
                .map(|j| {
                    let full = (r.o[3 - (f.x.len() - 2) + j] - 1) * f.stride[j]
                        + f.dil[j] * (f.w[j + 2] - 1)
                        + 1;
                    (f.x[j + 2] + 2 * f.pad[j] - full) as i64
                })
                .collect();
            let topts = topts.output_padding(out_pad);
            let ct = if f.x.len() == 3 {
                gy.conv_transpose1d(&w.detach(), None, &topts)?
            } else {
                gy.conv_transpose2d(&w.detach(), None, &topts)?
            };
            assert_eq!(ct.shape(), f.x, "{dt:?} form {fi} transposed shape");
            close(
                &f64s(&ct),
                &gx,
                tol,
                &format!("{dt:?} form {fi} transposed"),
            );
        }
    }
    Ok(())
}

#[test]
fn conv_dtypes_follow_pytorch() -> R {
    let x = t(&[2, 3, 5, 5], 1);
    let w = t(&[4, 3, 3, 3], 2);
    let o = ConvOptions::default().padding(1);
    let y64 = x
        .conv2d(&w, None, &o)?
        .to_dtype(DType::F64)?
        .to_vec::<f64>()?;
    let y32 = x
        .to_dtype(DType::F32)?
        .conv2d(&w.to_dtype(DType::F32)?, None, &o)?;
    assert_eq!(y32.dtype(), DType::F32);
    close(&f64s(&y32), &y64, 1e-5, "f32");
    let y16 = x
        .to_dtype(DType::BF16)?
        .conv2d(&w.to_dtype(DType::BF16)?, None, &o)?;
    assert_eq!(y16.dtype(), DType::BF16);
    close(&f64s(&y16), &y64, 5e-2, "bf16");
    // integers wrap like PyTorch's int64 kernel; bool is not implemented
    let xi = Tensor::from_vec((0..18i64).collect::<Vec<_>>(), &[1, 2, 3, 3])?;
    let wi = Tensor::from_vec(vec![1i64, -1, 2, 3, 0, 1, 1, 1], &[1, 2, 2, 2])?;
    let yi = xi.conv2d(&wi, None, &ConvOptions::default())?;
    // PyTorch: F.conv2d(torch.arange(18).reshape(1, 2, 3, 3), w) == [52, 60, 76, 84]
    assert_eq!(yi.to_vec::<i64>()?, vec![52, 60, 76, 84]);
    let e = xi
        .to_dtype(DType::I32)?
        .conv2d(
            &wi.to_dtype(DType::I32)?,
            None,
            &ConvOptions::default().dilation(2).padding(1),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    let e = xi
        .to_dtype(DType::Bool)?
        .conv2d(&wi.to_dtype(DType::Bool)?, None, &ConvOptions::default())
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::DTypeMismatch);
    Ok(())
}

#[test]
fn conv_errors_have_pytorch_kinds_and_change_nothing() -> R {
    let x = t(&[1, 4, 5, 5], 3).requires_grad_(true)?;
    let w = t(&[6, 4, 3, 3], 4).requires_grad_(true)?;
    let o = ConvOptions::default;
    let kind = |r: tapegrad::Result<Tensor>| r.unwrap_err().kind();
    assert_eq!(
        kind(x.conv2d(&t(&[6, 3, 3, 3], 5), None, &o())),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(x.conv2d(&t(&[6, 4, 7, 7], 5), None, &o())),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, None, &o().stride(2).padding(ConvPadding::Same))),
        ErrorKind::InvalidArgument
    );
    // groups=3 with a [6, 4, ..] weight expects 12 input channels: PyTorch's channel message
    assert_eq!(
        kind(x.conv2d(&w, None, &o().groups(3))),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(x.conv2d(&t(&[5, 2, 3, 3], 6), None, &o().groups(2))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, None, &o().stride(0))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, None, &o().padding(-1))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, None, &o().dilation(0))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, None, &o().stride([1, 1, 1]))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv2d(&w, Some(&t(&[5], 7)), &o())),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(kind(x.conv1d(&w, None, &o())), ErrorKind::InvalidArgument);
    assert_eq!(
        kind(x.conv2d(&w.to_dtype(DType::F32)?, None, &o())),
        ErrorKind::DTypeMismatch
    );
    assert_eq!(
        kind(x.conv2d(&w, Some(&t(&[6], 7).to_dtype(DType::F32)?), &o())),
        ErrorKind::DTypeMismatch
    );
    let wt = t(&[4, 3, 3, 3], 8);
    let to = ConvTransposeOptions::default;
    assert_eq!(
        kind(x.conv_transpose2d(&wt, None, &to().output_padding(1))),
        ErrorKind::InvalidArgument
    );
    assert_eq!(
        kind(x.conv_transpose2d(&t(&[3, 3, 3, 3], 9), None, &to())),
        ErrorKind::ShapeMismatch
    );
    assert_eq!(
        kind(x.conv_transpose2d(&wt, None, &to().padding(5))),
        ErrorKind::InvalidArgument
    );
    assert!("foo".parse::<ConvPadding>().is_err());
    // nothing changed: no grad_fn recorded, versions untouched
    assert_eq!(x.version(), 0);
    assert_eq!(w.version(), 0);
    assert!(x.grad().is_none());
    Ok(())
}

#[test]
fn conv_nodes_and_unbatched_inputs() -> R {
    let x = t(&[3, 5, 4], 11).requires_grad_(true)?;
    let w = t(&[2, 3, 2, 2], 12).requires_grad_(true)?;
    let y = x.conv2d(&w, None, &ConvOptions::default())?;
    assert_eq!(y.shape(), vec![2, 4, 3]);
    let yb = x.unsqueeze(0)?.conv2d(&w, None, &ConvOptions::default())?;
    assert_eq!(yb.grad_fn().unwrap().name(), "ConvolutionBackward0");
    assert_eq!(f64s(&y), f64s(&yb));
    let xb = x.detach().unsqueeze(0)?.requires_grad_(true)?;
    let yb = xb.conv2d(&w, None, &ConvOptions::default())?;
    let g = tapegrad::autograd::grad(
        &[yb.sum()?],
        &[xb],
        &[None],
        tapegrad::autograd::GradOptions::default().create_graph(true),
    )?;
    let gx = g[0].as_ref().unwrap();
    assert_eq!(gx.grad_fn().unwrap().name(), "ConvolutionBackwardBackward0");
    Ok(())
}

/// The recorder's `Net` (tools/record_conv_modules.py), field for field.
#[derive(tapegrad::nn::Module)]
struct Net {
    c1: tapegrad::nn::Conv2d,
    c2: tapegrad::nn::Conv2d,
    up: tapegrad::nn::ConvTranspose2d,
    seq: tapegrad::nn::Conv1d,
}

#[test]
fn conv_modules_load_a_pytorch_state_dict_and_give_its_outputs() -> R {
    use tapegrad::nn::{self, Conv1d, Conv2d, ConvTranspose2d, Forward, Module};
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/grad_tests/fixtures/conv_modules"
    );
    let text = std::fs::read_to_string(format!("{dir}/expected.json")).expect("fixture");
    let e: serde_json::Value = serde_json::from_str(&text).expect("json");
    let floats = |v: &serde_json::Value| -> Vec<f64> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_f64().unwrap())
            .collect()
    };
    let usizes = |v: &serde_json::Value| -> Vec<usize> {
        v.as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_u64().unwrap() as usize)
            .collect()
    };
    let f32 = DType::F32;
    let net = Net {
        c1: Conv2d::new(2, 4, &[3], ConvOptions::default().padding(1), true, f32)?,
        c2: Conv2d::new(
            4,
            6,
            &[3, 2],
            ConvOptions::default().stride(2).padding([1, 0]).groups(2),
            false,
            f32,
        )?,
        up: ConvTranspose2d::new(
            6,
            3,
            &[3],
            ConvTransposeOptions::default()
                .stride(2)
                .padding(1)
                .output_padding(1),
            true,
            f32,
        )?,
        seq: Conv1d::new(
            3,
            2,
            &[5],
            ConvOptions::default()
                .padding(ConvPadding::Same)
                .dilation(2),
            true,
            f32,
        )?,
    };
    let keys: Vec<String> = net
        .state_dict()?
        .names()
        .iter()
        .map(|k| k.to_string())
        .collect();
    let want: Vec<String> = e["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| k.as_str().unwrap().to_string())
        .collect();
    assert_eq!(keys, want);
    for (name, child) in [
        ("c1", net.c1.to_string()),
        ("c2", net.c2.to_string()),
        ("up", net.up.to_string()),
        ("seq", net.seq.to_string()),
    ] {
        assert_eq!(child, e["repr"][name].as_str().unwrap(), "repr of {name}");
    }
    nn::load_into(format!("{dir}/model.safetensors"), &net)?;
    let x = Tensor::from_vec(floats(&e["input"]), &usizes(&e["input_shape"]))?.to_dtype(f32)?;
    let y = net.c1.forward(&x)?.relu()?;
    let y = net.up.forward(&net.c2.forward(&y)?.relu()?)?;
    let s = y.shape();
    let y = net
        .seq
        .forward(&y.reshape(&[s[0] as i64, s[1] as i64, (s[2] * s[3]) as i64])?)?;
    assert_eq!(y.shape(), usizes(&e["output_shape"]));
    close(&f64s(&y), &floats(&e["output"]), 1e-5, "module output");
    Ok(())
}

/// An infinite input element reaches exactly the outputs and weight-gradient entries whose
/// products read it, in f32 (the AVX-512 kernel computes lanes past each output row and must
/// keep them out of the weight gradient) as in f64: the left taps never read the last column.
#[test]
fn conv_non_finite_input_reaches_only_its_products() -> R {
    let mut xv = vals(2 * 3 * 4 * 5, 7);
    xv[(4 + 1) * 5 + 4] = f64::INFINITY; // image 0, channel 1 (rows of 5), row 1, last column
    let run = |dt: DType| -> tapegrad::Result<(Vec<f64>, Vec<f64>)> {
        let x = Tensor::from_vec(xv.clone(), &[2, 3, 4, 5])?.to_dtype(dt)?;
        let w = t(&[8, 3, 3, 3], 8).to_dtype(dt)?.requires_grad_(true)?;
        let y = x.conv2d(&w, None, &ConvOptions::default().padding(vec![1, 1]))?;
        y.sum()?.backward()?;
        Ok((f64s(&y), f64s(&w.grad().unwrap())))
    };
    let ((y32, gw32), (y64, gw64)) = (run(DType::F32)?, run(DType::F64)?);
    for (what, a, b) in [("value", &y32, &y64), ("grad w", &gw32, &gw64)] {
        for (i, (&a, &b)) in a.iter().zip(b.iter()).enumerate() {
            assert!(close_rel(a, b, 1e-4), "{what}[{i}]: f32 {a} vs f64 {b}");
        }
    }
    // finite unless the tap reads channel 1 and the last column (kw = 1 or 2)
    for (i, g) in gw32.iter().enumerate() {
        assert_eq!(
            g.is_finite(),
            i / 9 % 3 != 1 || i % 3 == 0,
            "grad w[{i}] = {g}"
        );
    }
    Ok(())
}

/// `padding = "same"` with an even reach pads one more on the right than on the left: f32
/// (the AVX-512 kernel without a column matrix, whose padded rows must reach the last output
/// column's last tap) agrees with f64 (the column matrix) in values and both gradients.
#[test]
fn conv_same_padding_with_an_even_reach_agrees_across_kernels() -> R {
    let forms: [(&[usize], &[usize], Vec<i64>); 3] = [
        (&[2, 2, 7], &[2, 2, 2], vec![1]),
        (&[2, 3, 9], &[4, 3, 4], vec![2]),
        (&[2, 3, 6, 7], &[5, 3, 2, 4], vec![1, 2]),
    ];
    for (fi, (xs, ws, dil)) in forms.into_iter().enumerate() {
        let o = ConvOptions::default()
            .padding(ConvPadding::Same)
            .dilation(dil);
        let run = |dt: DType| -> tapegrad::Result<[Vec<f64>; 3]> {
            let x = t(xs, 50 + fi as u64).to_dtype(dt)?.requires_grad_(true)?;
            let w = t(ws, 60 + fi as u64).to_dtype(dt)?.requires_grad_(true)?;
            let y = conv(&x, &w, None, &o)?;
            assert_eq!(y.shape()[2..], xs[2..], "form {fi}: same size");
            y.mul(&t(&y.shape(), 70 + fi as u64).to_dtype(dt)?)?
                .sum()?
                .backward()?;
            Ok([f64s(&y), f64s(&x.grad().unwrap()), f64s(&w.grad().unwrap())])
        };
        let (a, b) = (run(DType::F32)?, run(DType::F64)?);
        for (what, (a, b)) in ["value", "grad x", "grad w"]
            .into_iter()
            .zip(a.iter().zip(&b))
        {
            close(a, b, 1e-4, &format!("form {fi} {what}"));
        }
    }
    Ok(())
}

#[test]
fn conv_without_input_channels_follows_pytorch() -> R {
    // torch 2.15 (its `Empty` backend): conv1d([2, 0, 5], [3, 0, 2], bias[3]) -> [2, 0, 4]
    // (no output channels, whatever the weight), the bias gradient zeros(3); conv2d ->
    // [2, 0, 4, 4], conv3d -> [2, 0, 4, 4, 4], groups=2 -> [2, 0, 4], stride 2 padding 1
    // dilation 2 -> [2, 0, 3], "same" -> [2, 0, 5], unbatched [0, 5] -> [0, 4], an empty
    // batch too [0, 0, 5] -> [0, 0, 4], int64 accepted; node ConvolutionBackward0 and every
    // gradient under create_graph ConvolutionBackwardBackward0, requiring grad
    use tapegrad::autograd::{GradOptions, grad};
    let mk = |stride: i64, padding: ConvPadding, dilation: i64, groups: i64| ConvOptions {
        stride: stride.into(),
        padding,
        dilation: dilation.into(),
        groups,
    };
    let plain = ConvOptions::default();
    let bias = t(&[3], 3).requires_grad_(true)?;
    // (input shape, weight shape, options, output shape)
    type Case = (Vec<usize>, Vec<usize>, ConvOptions, Vec<usize>);
    let cases: Vec<Case> = vec![
        (vec![2, 0, 5], vec![3, 0, 2], plain.clone(), vec![2, 0, 4]),
        (
            vec![2, 0, 5, 5],
            vec![3, 0, 2, 2],
            plain.clone(),
            vec![2, 0, 4, 4],
        ),
        (
            vec![2, 0, 5, 5, 5],
            vec![3, 0, 2, 2, 2],
            plain.clone(),
            vec![2, 0, 4, 4, 4],
        ),
        (
            vec![2, 0, 5],
            vec![3, 0, 2],
            mk(2, ConvPadding::Explicit(1i64.into()), 2, 1),
            vec![2, 0, 3],
        ),
        (
            vec![2, 0, 5],
            vec![3, 0, 2],
            mk(1, ConvPadding::Same, 1, 1),
            vec![2, 0, 5],
        ),
        (vec![0, 5], vec![3, 0, 2], plain.clone(), vec![0, 4]),
        (vec![0, 0, 5], vec![3, 0, 2], plain.clone(), vec![0, 0, 4]),
    ];
    for (xs, ws, o, want) in cases {
        let x = Tensor::zeros(&xs, DType::F64)?.requires_grad_(true)?;
        let w = Tensor::zeros(&ws, DType::F64)?.requires_grad_(true)?;
        // by the weight's dims (an unbatched input has one dim less)
        let conv = |b: Option<&Tensor>| match w.dim() {
            3 => x.conv1d(&w, b, &o),
            4 => x.conv2d(&w, b, &o),
            _ => x.conv3d(&w, b, &o),
        };
        let y = conv(Some(&bias))?;
        assert_eq!(y.shape(), want, "{xs:?} {ws:?}");
        assert!(y.is_contiguous());
        // (an unbatched input's output is the squeezed batched one, as PyTorch's)
        if xs.len() == ws.len() {
            assert_eq!(y.grad_fn().unwrap().name(), "ConvolutionBackward0");
        }
        let g = grad(
            &[y.sum()?],
            &[x.clone(), w.clone(), bias.clone()],
            &[None],
            GradOptions::default().create_graph(true),
        )?;
        let g: Vec<Tensor> = g.into_iter().map(Option::unwrap).collect();
        assert_eq!(g[0].shape(), xs);
        assert_eq!(g[1].shape(), ws);
        assert_eq!(f64s(&g[2]), vec![0.0; 3]);
        for (i, gi) in g.iter().enumerate() {
            assert!(gi.requires_grad());
            // an unbatched input's gradient passes the unsqueeze's backward last
            if i > 0 || xs.len() == ws.len() {
                assert_eq!(gi.grad_fn().unwrap().name(), "ConvolutionBackwardBackward0");
            }
        }
        // without a bias: no channels either
        assert_eq!(conv(None)?.shape(), want);
    }
    // groups=2: weight [4, 0, 2] (bias 4) -> [2, 0, 4]
    let x = Tensor::zeros(&[2, 0, 5], DType::F64)?;
    let w = Tensor::zeros(&[4, 0, 2], DType::F64)?;
    let b4 = t(&[4], 4).requires_grad_(true)?;
    let y = x.conv1d(
        &w,
        Some(&b4),
        &mk(1, ConvPadding::Explicit(0i64.into()), 1, 2),
    )?;
    assert_eq!(y.shape(), vec![2, 0, 4]);
    y.sum()?.backward()?;
    assert_eq!(f64s(&b4.grad().unwrap()), vec![0.0; 4]);
    // int64 and f32 keep their dtype
    for dt in [DType::I64, DType::F32] {
        let x = Tensor::zeros(&[2, 0, 5], dt)?;
        let w = Tensor::zeros(&[3, 0, 2], dt)?;
        let y = x.conv1d(&w, None, &plain)?;
        assert_eq!((y.shape(), y.dtype()), (vec![2, 0, 4], dt));
    }
    // a transposed convolution without input channels has a weight without rows: PyTorch's
    // error "Given groups=1, expected weight to be at least 1 at dimension 0"
    let e = Tensor::zeros(&[2, 0, 5], DType::F64)?
        .conv_transpose1d(
            &Tensor::zeros(&[0, 3, 2], DType::F64)?,
            None,
            &ConvTransposeOptions::default(),
        )
        .unwrap_err();
    assert_eq!(e.kind(), ErrorKind::InvalidArgument);
    assert!(e.to_string().contains("at least 1 at dimension 0"), "{e}");
    Ok(())
}
