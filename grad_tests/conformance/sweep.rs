//! The OpInfo-style sweep (issue 21): replays every sample of
//! `grad_tests/fixtures/sweep/*.json.gz` (written by `tools/sweep/sweep.py`, format extensions in
//! `tools/sweep/README.md`) with the conformance replayer, as a ratchet.
//!
//! Usage: `cargo test --release --test sweep [-- NAME_SUBSTRING]`.
//! Env: `TAPEGRAD_SWEEP_BLESS=1` rewrites `grad_tests/fixtures/sweep/divergences.txt` from this
//! run; `TAPEGRAD_SWEEP_VERBOSE=1` also prints one line per diverging case.
//!
//! Every sample ends in exactly one bucket:
//! - **passed**;
//! - **unspecified**: the sample carries an `unspecified` reason (ties in sort/topk, duplicate
//!   indices in scatter/index_put, float -> int casts of nan/inf) and everything the reason leaves
//!   specified matched (see [`super::Unspecified`]); counted per reason, never dropped;
//! - a **library divergence** (tapegrad differs from PyTorch, or has no function / argument form
//!   for the call), by kind;
//! - a **replayer gap** (kinds `replayer_*`: the runner lacks a dispatch arm or argument form for
//!   a function tapegrad has, or could not convert a step).
//!
//! The divergences (library and replayer alike) are checked against the list
//! `divergences.txt`: a case that diverges but is not listed (or is listed with another kind)
//! fails the test, and so does a listed case that now passes: the list only shrinks, a fix deletes
//! its line. The list also holds one `missing_inplace` line per in-place twin PyTorch has
//! (`op_`, recorded by the sweep) of an op tapegrad has, that tapegrad lacks.
//!
//! The completeness check: every public op (the `pub fn` names of `src/ops/**`, `src/view/*.rs`
//! and `src/index/mod.rs`, as `gradcheck_all.rs` scans them) has a sweep sample (under its
//! PyTorch name, see [`ALIASES`]) or is in [`EXCLUDED`] with a reason.

use super::*;
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};
use std::time::Instant;

fn sweep_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("grad_tests/fixtures/sweep")
}

/// tapegrad's public names that are not the PyTorch name of the op they implement: the sweep
/// covers them under the PyTorch name (the dispatch arm that maps one to the other is in
/// `ops_arms.rs` / `sweep_arms.rs` / `index_arms.rs` / `conformance.rs`).
const ALIASES: &[(&str, &str)] = &[
    ("add_alpha", "add"),
    ("clamp_tensor", "clamp"),
    ("clamp_tensor_", "clamp_"),
    ("div_scalar_base", "div"),
    ("elu_", "elu"),
    ("fill_tensor_", "fill_"),
    ("leaky_relu_", "leaky_relu"),
    ("round_decimals", "round"),
    ("round_decimals_", "round_"),
    ("sub_scalar_base", "sub"),
    ("add_alpha_", "add_"),
    ("sub_alpha", "sub"),
    ("sub_alpha_", "sub_"),
    ("copy", "clone"),
    ("div_rounding", "div"),
    ("embedding_with", "embedding"),
    ("index", "getitem"),
    ("i", "getitem"),
    ("index_tensors", "getitem"),
    ("index_set", "setitem"),
    ("i_set", "setitem"),
    ("max_dim", "max"),
    ("min_dim", "min"),
    ("pow_scalar_base", "pow"),
    ("remainder_scalar_base", "remainder"),
    ("scatter_value", "scatter"),
    ("scatter_value_", "scatter_"),
    ("silu_", "silu"),
    ("split_with_sizes", "split"),
    ("squeeze_dim", "squeeze"),
    ("squeeze_dims", "squeeze"),
    ("sum_dims", "sum"),
    ("sum_dims_dtype", "sum"),
    ("to_dtype", "to"),
    ("unsafe_view", "_unsafe_view"),
    ("where_", "where"),
    ("max_pool2d_with_indices", "max_pool2d"),
    ("max_pool1d_with_indices", "max_pool1d"),
    ("adaptive_max_pool2d_with_indices", "adaptive_max_pool2d"),
    ("unfold_blocks", "unfold"),
    ("prod_dtype", "prod"),
];

/// Public names the sweep has no sample for, each with the reason.
const EXCLUDED: &[(&str, &str)] = &[
    (
        "set_",
        "storage re-pointing: hand-written set_resize fixtures (the sweep does not generate it)",
    ),
    ("set_empty", "set_() with no source: set_resize fixtures"),
    (
        "set_with",
        "set_(storage, offset, size, stride): set_resize fixtures",
    ),
    ("set_storage", "set_(Storage): set_resize fixtures"),
    ("is_set_to", "a storage-identity query: set_resize fixtures"),
    (
        "resize_with",
        "resize_ with a fill policy: tapegrad-only (set_resize tests)",
    ),
    (
        "alias",
        "aten::alias has no public PyTorch spelling: views fixtures",
    ),
    (
        "add_out",
        "out= variants are not in the sweep (tools/sweep/README.md, Known limits)",
    ),
    (
        "maximum_",
        "PyTorch's Tensor has no maximum_: a tapegrad extra",
    ),
    (
        "from_name",
        "not an op: parses a name (DType / ScatterReduce)",
    ),
    // builder setters of the options structs (the integer rule, issue 23/27): not ops
    (
        "stride",
        "not an op: ConvOptions/ConvTransposeOptions builder setter",
    ),
    (
        "padding",
        "not an op: ConvOptions/ConvTransposeOptions builder setter",
    ),
    (
        "dilation",
        "not an op: ConvOptions/ConvTransposeOptions builder setter",
    ),
    (
        "output_padding",
        "not an op: ConvTransposeOptions builder setter",
    ),
    (
        "groups",
        "not an op: ConvOptions/ConvTransposeOptions builder setter",
    ),
    ("size", "not an op: InterpolateOptions builder setter"),
    (
        "ignore_index",
        "not an op: CrossEntropyOptions/NllLossOptions builder setter",
    ),
];

// ------------------------------------------------------------------ names in src/

use super::op_names::{pub_fn_names, public_op_names, rs_files_under, src_root};

/// Every public function name of the library (all of src/): "tapegrad has a function of that
/// name" tells a replayer gap from a missing op.
fn library_names() -> BTreeSet<String> {
    let mut files = vec![];
    rs_files_under(&src_root(), &mut files);
    pub_fn_names(&files)
}

// ------------------------------------------------------------------ classification

/// The PyTorch op name without the `F.` prefix.
fn base_name(op: &str) -> &str {
    op.strip_prefix("F.").unwrap_or(op)
}

struct Divergence {
    kind: String,
    detail: String,
}

fn is_replayer_kind(kind: &str) -> bool {
    kind.starts_with("replayer_")
}

fn one_line(s: &str, max: usize) -> String {
    let s: String = s
        .chars()
        .map(|c| if c.is_whitespace() { ' ' } else { c })
        .collect();
    if s.chars().count() > max {
        let cut: String = s.chars().take(max).collect();
        format!("{cut}...")
    } else {
        s
    }
}

fn classify(r: &CaseResult, lib: &BTreeSet<String>) -> Option<Divergence> {
    let d = |kind: &str, detail: String| {
        Some(Divergence {
            kind: kind.to_string(),
            detail: one_line(&detail, 140),
        })
    };
    match r {
        CaseResult::Pass => None,
        CaseResult::Skip(what) => {
            if what.contains('(') {
                return d("replayer_arg_form", what.clone());
            }
            let base = base_name(what);
            if lib.contains(base) {
                return d(
                    "replayer_unknown_op",
                    format!("{what}: tapegrad has `{base}`"),
                );
            }
            match base.strip_suffix('_') {
                Some(plain) if lib.contains(plain) => d(
                    "missing_inplace",
                    format!("{what}: tapegrad has `{plain}` but not `{base}`"),
                ),
                _ => d("missing_op", format!("{what}: tapegrad has no `{base}`")),
            }
        }
        CaseResult::NoApi(what) => d("missing_form", what.clone()),
        CaseResult::Fail(i, label, f) => {
            let text = format!(
                "step {i} {label}: {}: expected {} got {}",
                f.field, f.expected, f.got
            );
            let kind = match f.field.as_str() {
                "harness" => "replayer_harness",
                "panic" => "panic",
                _ if label == "autograd.grad" => "second_order",
                _ if label.starts_with("grad(") || label == "backward" => "gradient",
                fl if fl.starts_with("values") => "value",
                "stride" | "offset" => "stride",
                "error" if f.expected == "success" => "lib_raises",
                "error" if f.got == "success" => "torch_raises",
                "error" => "error_kind",
                "requires_grad" | "is_leaf" | "grad_fn_error" => "requires_grad",
                "is_view" => "is_view",
                "dtype" => "dtype",
                "shape" => "shape",
                "storage_of" => "storage_of",
                "version" => "version",
                _ => "other",
            };
            d(kind, text)
        }
    }
}

// ------------------------------------------------------------------ the checked-in list

fn list_path() -> PathBuf {
    sweep_dir().join("divergences.txt")
}

/// `name -> kind` of the checked-in list (`#` lines are comments).
fn read_list() -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(list_path()).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let mut it = l.split_whitespace();
            let name = it.next().unwrap_or("").to_string();
            let kind = it.next().unwrap_or("").to_string();
            (name, kind)
        })
        .collect()
}

fn write_list(rows: &BTreeMap<String, Divergence>) {
    let mut out = String::from(
        "# Sweep divergences (issue 21): one line per case that diverges from PyTorch 2.15.\n\
         # Format: CASE KIND DETAIL. Generated by `TAPEGRAD_SWEEP_BLESS=1 cargo test --release\n\
         # --test sweep`; the sweep test fails when a case not listed here diverges, and when a\n\
         # listed case passes (a fix deletes its line). Kinds `replayer_*` are gaps of the\n\
         # replayer (grad_tests/conformance/), every other kind is the library's.\n",
    );
    for (name, d) in rows {
        out.push_str(&format!("{name} {} {}\n", d.kind, d.detail));
    }
    std::fs::write(list_path(), out).expect("write divergences.txt");
}

// ------------------------------------------------------------------ driver

fn load(path: &Path) -> Value {
    let f = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let mut text = String::new();
    flate2::read::GzDecoder::new(f)
        .read_to_string(&mut text)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let data: Value = serde_json::from_str(&text).expect("parse sweep fixture");
    assert_eq!(data["format"], 1, "{}: unsupported format", path.display());
    data
}

#[derive(Default)]
struct OpCounts {
    samples: usize,
    passed: usize,
    unspecified: usize,
    library: usize,
    replayer: usize,
}

pub(crate) fn main() {
    let start = Instant::now();
    let filter: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with("--"))
        .collect();
    let bless = std::env::var("TAPEGRAD_SWEEP_BLESS").is_ok_and(|v| v == "1");
    let verbose = std::env::var("TAPEGRAD_SWEEP_VERBOSE").is_ok_and(|v| v == "1");
    std::panic::set_hook(Box::new(|_| {}));
    let lib = library_names();

    let mut files: Vec<PathBuf> = std::fs::read_dir(sweep_dir())
        .expect("read grad_tests/fixtures/sweep")
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.to_string_lossy().ends_with(".json.gz"))
        .collect();
    files.sort();
    assert!(!files.is_empty(), "no sweep fixtures");

    let mut per_op: BTreeMap<String, OpCounts> = BTreeMap::new();
    let mut found: BTreeMap<String, Divergence> = BTreeMap::new();
    let mut unspec_reasons: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut all_ops: BTreeSet<String> = BTreeSet::new();
    let mut run_names: BTreeSet<String> = BTreeSet::new();
    let mut total = 0;
    let mut load_time = std::time::Duration::ZERO;
    for path in &files {
        let t0 = Instant::now();
        let data = load(path);
        load_time += t0.elapsed();
        for case in data["cases"].as_array().into_iter().flatten() {
            let name = case["name"].as_str().unwrap_or("?");
            let op = case["op"].as_str().unwrap_or("?").to_string();
            all_ops.insert(op.clone());
            if !filter.is_empty() && !filter.iter().any(|x| name.contains(x.as_str())) {
                continue;
            }
            total += 1;
            run_names.insert(name.to_string());
            let counts = per_op.entry(op.clone()).or_default();
            counts.samples += 1;
            let r = run_case(case);
            let reason = case.get("unspecified").and_then(|v| v.as_str());
            match classify(&r, &lib) {
                None => match reason {
                    Some(why) => {
                        counts.unspecified += 1;
                        let e = unspec_reasons.entry(why.to_string()).or_default();
                        e.0 += 1;
                        if RELAX.with(|r| r.used.get()) {
                            e.1 += 1;
                        }
                    }
                    None => counts.passed += 1,
                },
                Some(mut d) => {
                    if is_replayer_kind(&d.kind) {
                        counts.replayer += 1;
                    } else {
                        counts.library += 1;
                    }
                    if reason.is_some() {
                        d.detail = format!("[unspecified sample] {}", d.detail);
                    }
                    if verbose {
                        println!("DIVERGES {name} {} {}", d.kind, d.detail);
                    }
                    found.insert(name.to_string(), d);
                }
            }
        }
    }
    let replay_time = start.elapsed();

    // Missing in-place twins: PyTorch has `op_` (the sweep recorded it), tapegrad has `op` but
    // not `op_`. One list line each, besides the per-case lines.
    let mut twins = vec![];
    for op in &all_ops {
        let base = base_name(op);
        if let Some(plain) = base.strip_suffix('_')
            && !plain.is_empty()
            && lib.contains(plain)
            && !lib.contains(base)
        {
            twins.push(base.to_string());
        }
    }
    if filter.is_empty() {
        for t in &twins {
            found.insert(
                format!("inplace:{t}"),
                Divergence {
                    kind: "missing_inplace".into(),
                    detail: format!(
                        "PyTorch's Tensor has `{t}`; tapegrad has `{}` only",
                        t.trim_end_matches('_')
                    ),
                },
            );
        }
    }

    // ---------------------------------------------------------------- report
    println!("sweep: per op (samples: passed / unspecified / library divergences / replayer gaps)");
    for (op, c) in &per_op {
        println!(
            "  {op}: {} samples: {} passed, {} unspecified, {} library, {} replayer",
            c.samples, c.passed, c.unspecified, c.library, c.replayer
        );
    }
    let sum = |f: fn(&OpCounts) -> usize| per_op.values().map(f).sum::<usize>();
    let (passed, unspec, library, replayer) = (
        sum(|c| c.passed),
        sum(|c| c.unspecified),
        sum(|c| c.library),
        sum(|c| c.replayer),
    );
    let mut kinds: BTreeMap<&str, usize> = BTreeMap::new();
    for (name, d) in &found {
        if !name.starts_with("inplace:") {
            *kinds.entry(d.kind.as_str()).or_default() += 1;
        }
    }
    println!("sweep: divergences per kind (cases):");
    for (k, n) in &kinds {
        let side = if is_replayer_kind(k) {
            "replayer"
        } else {
            "library"
        };
        println!("  {k}: {n} ({side})");
    }
    println!("sweep: unspecified samples per reason (checked on what is specified):");
    for (why, (n, used)) in &unspec_reasons {
        println!("  {n} ({used} needed the relaxation): {why}");
    }
    println!(
        "sweep: missing in-place twins ({}): {}",
        twins.len(),
        twins.join(" ")
    );

    // ---------------------------------------------------------------- completeness
    let sampled: BTreeSet<&str> = all_ops.iter().map(|o| base_name(o)).collect();
    let aliases: BTreeMap<&str, &str> = ALIASES.iter().copied().collect();
    let excluded: BTreeMap<&str, &str> = EXCLUDED.iter().copied().collect();
    let public = public_op_names();
    let mut problems = vec![];
    let uncovered: Vec<&String> = public
        .iter()
        .filter(|n| {
            !sampled.contains(n.as_str())
                && !aliases.get(n.as_str()).is_some_and(|t| sampled.contains(t))
                && !excluded.contains_key(n.as_str())
        })
        .collect();
    if !uncovered.is_empty() {
        problems.push(format!(
            "public ops with no sweep sample and no exclusion: {uncovered:?}"
        ));
    }
    let stale: Vec<&str> = ALIASES
        .iter()
        .filter(|(r, t)| !public.contains(*r) || !sampled.contains(t))
        .map(|(r, _)| *r)
        .chain(
            EXCLUDED
                .iter()
                .filter(|(r, _)| !public.contains(*r) || sampled.contains(r))
                .map(|(r, _)| *r),
        )
        .collect();
    if !stale.is_empty() {
        problems.push(format!("stale ALIASES/EXCLUDED entries: {stale:?}"));
    }
    println!(
        "sweep: completeness: {} public ops, {} sampled under their name, {} via an alias, {} excluded",
        public.len(),
        public
            .iter()
            .filter(|n| sampled.contains(n.as_str()))
            .count(),
        public
            .iter()
            .filter(|n| !sampled.contains(n.as_str()) && aliases.contains_key(n.as_str()))
            .count(),
        public
            .iter()
            .filter(|n| excluded.contains_key(n.as_str()))
            .count(),
    );

    // ---------------------------------------------------------------- the ratchet
    if bless {
        assert!(
            filter.is_empty(),
            "TAPEGRAD_SWEEP_BLESS=1 needs the whole sweep (no filter)"
        );
        write_list(&found);
        println!(
            "sweep: wrote {} lines to {}",
            found.len(),
            list_path().display()
        );
    } else {
        let listed = read_list();
        let mut new = vec![];
        for (name, d) in &found {
            match listed.get(name) {
                Some(k) if *k == d.kind => {}
                Some(k) => new.push(format!(
                    "{name}: listed as {k}, now {} {}",
                    d.kind, d.detail
                )),
                None => new.push(format!("{name}: {} {}", d.kind, d.detail)),
            }
        }
        let fixed: Vec<&String> = listed
            .keys()
            .filter(|n| {
                !found.contains_key(*n)
                    && (filter.is_empty() || run_names.contains(n.as_str()))
                    && (filter.is_empty() || !n.starts_with("inplace:"))
            })
            .collect();
        if !new.is_empty() {
            problems.push(format!(
                "{} new divergences (not in divergences.txt, or another kind):\n  {}",
                new.len(),
                new.join("\n  ")
            ));
        }
        if !fixed.is_empty() {
            problems.push(format!(
                "{} listed divergences now pass: delete their lines (or re-bless): {fixed:?}",
                fixed.len()
            ));
        }
    }

    println!(
        "sweep: {total} samples: {passed} passed, {unspec} unspecified, {library} library divergences, {replayer} replayer gaps"
    );
    println!(
        "sweep: {} files in {:.2?} (gunzip + parse {:.2?}, whole run {:.2?})",
        files.len(),
        replay_time,
        load_time,
        start.elapsed()
    );
    if !problems.is_empty() {
        for p in &problems {
            println!("sweep: FAILED: {p}");
        }
        std::process::exit(1);
    }
}
