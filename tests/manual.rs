//! The manual's complete examples (fixtures/manual): model snapshots, robustness of every
//! prefix, and spot checks of resolved types against the manual's own annotations.

use ra_ap_syntax::{AstNode, Edition, SourceFile};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};
use visa_analysis::db::analyse_text;
use visa_server::dump::model_json;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn rs_files(dir: &Path) -> Vec<PathBuf> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    out.sort();
    out
}

/// `UPDATE_SNAPSHOTS=1 cargo test --test manual` rewrites them; review the diff before committing.
#[test]
fn model_dumps_match_their_snapshots() {
    let update = std::env::var_os("UPDATE_SNAPSHOTS").is_some();
    let snap_dir = root().join("tests/snapshots/model");
    std::fs::create_dir_all(&snap_dir).expect("snapshot dir");
    let mut stale = Vec::new();
    let files = rs_files(&root().join("fixtures/manual"));
    assert!(
        files.len() >= 110,
        "expected the manual's ~120 complete examples, found {}",
        files.len()
    );
    for f in &files {
        let text = std::fs::read_to_string(f).expect("UTF-8 fixture");
        let doc = model_json(&text, &analyse_text(&text));
        let got = serde_json::to_string_pretty(&doc).expect("JSON") + "\n";
        let stem = f.file_stem().and_then(|s| s.to_str()).unwrap_or("fixture");
        let path = snap_dir.join(format!("{stem}.json"));
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        if got != want {
            if update {
                std::fs::write(&path, &got).expect("write snapshot");
            } else {
                stale.push(stem.to_string());
            }
        }
    }
    assert!(
        stale.is_empty(),
        "model snapshots differ for {} fixture(s): {:?}\nrun `UPDATE_SNAPSHOTS=1 cargo test --test manual` and review the diff",
        stale.len(),
        stale
    );
}

/// Half-typed files: every prefix of every fixture, cut at every token boundary, is analysed
/// without a panic. The slowest prefix is printed (timing targets live in the benchmarks).
/// One cut in this many of each fixture is analysed (see below).
const PREFIX_STRIDE: usize = 8;

#[test]
fn prefixes_of_every_fixture_are_analysed() {
    let mut files = rs_files(&root().join("fixtures/manual"));
    files.extend(rs_files(&root().join("fixtures/rules")));
    files.extend(rs_files(&root().join("fixtures/ok")));
    // Except the VL-007 pair: generated kernels of 400+ chains (600 lines), whose 10,000
    // prefixes would each be a whole large function; tests/fuzz.rs and tests/robustness.rs
    // cover large functions.
    files.retain(|f| {
        !f.file_name()
            .is_some_and(|n| n.to_string_lossy().starts_with("VL-007"))
    });
    // Files are shared out over the available cores (the test dominates the suite's time).
    let workers = std::thread::available_parallelism().map_or(1, |n| n.get());
    let results: Vec<(usize, (Duration, String))> = std::thread::scope(|scope| {
        let handles: Vec<_> = (0..workers)
            .map(|w| {
                let files = &files;
                scope.spawn(move || {
                    let (mut prefixes, mut slowest) = (0usize, (Duration::ZERO, String::new()));
                    for (i, f) in files.iter().enumerate().skip(w).step_by(workers) {
                        let text = std::fs::read_to_string(f).expect("UTF-8 fixture");
                        let tree = SourceFile::parse(&text, Edition::Edition2024).tree();
                        let ends: Vec<usize> = tree
                            .syntax()
                            .descendants_with_tokens()
                            .filter_map(|e| e.into_token())
                            .filter(|t| !t.kind().is_trivia())
                            .map(|t| u32::from(t.text_range().end()) as usize)
                            .collect();
                        // Every PREFIX_STRIDE-th cut, starting at a different token in
                        // each file (so the fixtures together cut at every kind of place),
                        // and the whole file: every cut of every fixture was 200,000
                        // analyses, a third of the suite's time in a debug build.
                        let last = ends.len().saturating_sub(1);
                        let cuts = ends
                            .iter()
                            .enumerate()
                            .filter(|(k, _)| (k + i) % PREFIX_STRIDE == 0 || *k == last)
                            .map(|(_, end)| *end);
                        for end in cuts {
                            let start = Instant::now();
                            let result = std::panic::catch_unwind(|| {
                                visa_analysis::check_text(&text[..end])
                            });
                            let took = start.elapsed();
                            assert!(
                                result.is_ok(),
                                "{} panics when cut at byte {end}",
                                f.display()
                            );
                            prefixes += 1;
                            if took > slowest.0 {
                                slowest = (took, format!("{}:{end}", f.display()));
                            }
                        }
                    }
                    (prefixes, slowest)
                })
            })
            .collect();
        handles
            .into_iter()
            .map(|h| h.join().expect("a prefix worker panicked"))
            .collect()
    });
    let prefixes: usize = results.iter().map(|r| r.0).sum();
    let slowest = results
        .into_iter()
        .map(|r| r.1)
        .max_by_key(|s| s.0)
        .unwrap_or_default();
    eprintln!(
        "{prefixes} prefixes of {} fixtures; slowest {:?} at {}",
        files.len(),
        slowest.0,
        slowest.1
    );
    assert!(prefixes > 10_000);
}

fn step<'a>(
    doc: &'a serde_json::Value,
    func: &str,
    binding: &str,
    method: &str,
) -> &'a serde_json::Value {
    let f = doc["functions"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["name"] == func))
        .unwrap_or_else(|| panic!("no function {func}"));
    f["chains"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|c| c["binding"] == binding)
        .filter_map(|c| c["steps"].as_array())
        .flatten()
        .find(|s| s["method"] == method)
        .unwrap_or_else(|| panic!("no step {method} in {func}::{binding}"))
}

fn model_of(name: &str) -> serde_json::Value {
    let text = std::fs::read_to_string(root().join("fixtures/manual").join(name)).expect("fixture");
    model_json(&text, &analyse_text(&text))
}

#[test]
fn l0822_tile_views_have_the_commented_types() {
    // L822-L824: `view()` is `HbmTensorView<'_, bf16, m![1], m![A, B]>`, each tile's Element is
    // `m![A, B = 2 # 4]`.
    let doc = model_of("0815_tile_views.rs");
    let view = step(&doc, "tiles", "view", "view");
    assert_eq!(
        (view["type"].as_str(), view["element"].as_str()),
        (Some("HbmTensorView"), Some("m![A, B]"))
    );
    for tile in ["tile01", "tile23"] {
        let t = step(&doc, "tiles", tile, "tile");
        assert_eq!(
            (t["type"].as_str(), t["dtype"].as_str()),
            (Some("HbmTensorView"), Some("bf16"))
        );
        assert_eq!(t["element"].as_str(), Some("m![A, B = 2 # 4]"));
    }
}

#[test]
fn l0307_dot_product_types_flow_both_ways() {
    let doc = model_of("0307_dot_product.rs");
    // to_dm's generics come from the `let` annotation (L341-L342).
    let lhs = step(&doc, "kernel", "lhs", "to_dm");
    assert_eq!(lhs["slice"].as_str(), Some("Slice"));
    assert_eq!(lhs["address"].as_u64(), Some(0));
    let rhs = step(&doc, "kernel", "rhs", "to_dm");
    assert_eq!(rhs["address"].as_u64(), Some(1 << 12));
    // align's `_` Row comes from the TRF tensor; contract widens bf16 to f32 (L4388-L4392).
    let align = step(&doc, "kernel", "result", "align");
    assert_eq!(align["row"].as_str(), Some("Row"));
    let contract = step(&doc, "kernel", "result", "contract");
    assert_eq!(contract["dtype"].as_str(), Some("f32"));
    let cast = step(&doc, "kernel", "result", "cast");
    assert_eq!(
        (cast["dtype"].as_str(), cast["packet"].as_str()),
        (Some("bf16"), Some("m![1 # 16]"))
    );
    let commit = step(&doc, "kernel", "result", "commit");
    assert_eq!(
        (commit["element"].as_str(), commit["address"].as_u64()),
        (Some("m![1 # 8]"), Some(1 << 13))
    );
    // The sub context loads the TRF, the main context computes.
    assert_eq!(
        step(&doc, "kernel", "rhs", "to_trf")["context"].as_str(),
        Some("sub")
    );
    assert_eq!(commit["context"].as_str(), Some("main"));
}

#[test]
fn l0175_constant_addition_chain() {
    // L199-L219: begin's Packet is the DM Element; fetch fixes Time and Packet.
    let doc = model_of("0175_constant_addition.rs");
    let f = doc["functions"]
        .as_array()
        .and_then(|fs| fs.iter().find(|f| f["kind"]["device"].is_object()));
    let f = f.expect("a #[device] kernel");
    assert_eq!(f["kind"]["device"]["chip"].as_u64(), Some(1));
    let chain = f["chains"]
        .as_array()
        .and_then(|cs| {
            cs.iter()
                .find(|c| c["steps"].as_array().is_some_and(|s| s.len() > 5))
        })
        .expect("the Tensor Unit chain");
    let methods: Vec<&str> = chain["steps"].as_array().map_or(Vec::new(), |s| {
        s.iter().filter_map(|s| s["method"].as_str()).collect()
    });
    assert_eq!(
        methods,
        [
            "begin",
            "fetch",
            "collect",
            "vector_init",
            "vector_intra_slice_branch",
            "vector_fxp",
            "vector_final",
            "commit"
        ]
    );
    let begin = &chain["steps"][0];
    assert_eq!(begin["time"].as_str(), Some("m![1]"));
}

/// `text` with every size in its `axes![..]` declarations replaced by `size`.
fn with_axis_sizes(text: &str, size: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("axes![") {
        let (head, tail) = rest.split_at(at);
        out.push_str(head);
        let end = tail.find(']').map_or(tail.len(), |e| e + 1);
        let (decl, after) = tail.split_at(end);
        let mut chars = decl.chars().peekable();
        while let Some(c) = chars.next() {
            out.push(c);
            if c == '=' {
                while chars.peek() == Some(&' ') {
                    out.push(' ');
                    chars.next();
                }
                if chars.peek().is_some_and(|c| c.is_ascii_digit()) {
                    while chars
                        .peek()
                        .is_some_and(|c| c.is_ascii_digit() || *c == '_')
                    {
                        chars.next();
                    }
                    out.push_str(size);
                }
            }
        }
        rest = after;
    }
    out.push_str(rest);
    out
}

/// Every fixture with every axis of size 0, 1, 2^32 + 1, 2^63 and 2^64 - 1 (and 2^64, which
/// does not fit): analysed without a panic (diagnostics for the sizes are expected).
#[test]
fn extreme_axis_sizes_never_panic() {
    let mut files = rs_files(&root().join("fixtures/manual"));
    files.extend(rs_files(&root().join("fixtures/rules")));
    files.extend(rs_files(&root().join("fixtures/ok")));
    let sizes = [
        "0",
        "1",
        "4294967297",
        "9223372036854775808",
        "18446744073709551615",
        "18446744073709551616",
    ];
    let mut checked = 0;
    for f in &files {
        let text = std::fs::read_to_string(f).expect("UTF-8 fixture");
        if !text.contains("axes![") {
            continue;
        }
        for size in sizes {
            let t = with_axis_sizes(&text, size);
            let result = std::panic::catch_unwind(|| visa_analysis::check_text(&t));
            assert!(
                result.is_ok(),
                "{} panics with every axis of size {size}",
                f.display()
            );
            checked += 1;
        }
    }
    assert!(checked > 1000, "{checked}");
}

#[test]
fn axis_sizes_are_replaced_inside_axes_declarations_only() {
    assert_eq!(
        with_axis_sizes("axes![A = 8, B = 1_024]; m![A / 8]", "0"),
        "axes![A = 0, B = 0]; m![A / 8]"
    );
}
