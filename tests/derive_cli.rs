//! `visa-lint derive FILE [--format json]`: the sequencer configurations of the manual's
//! Sequencer, Fetch and Commit pages, in the manual's notation and as JSON.

use visa_lint_tests::run_cli as run;

#[test]
fn derive_prints_the_manual_notation() {
    // L1443-L1458: "[B -> 8 : 32, A -> 8 : 256, C # 16 -> 16 : 1] : 16".
    let (code, out) = run(&["derive", "fixtures/manual/1429_read_rearranging.rs"]);
    assert_eq!(code, 0);
    assert!(out.contains("read [8 : 32, 8 : 256, 16 : 1] : 16"), "{out}");
    // L1584-L1627: nine entries term by term, merged to six; the packet grows from 8 to 16.
    let (_, out) = run(&["derive", "fixtures/manual/1570_read_merging.rs"]);
    assert!(
        out.contains("read [2 : 16, 2 : 32, 4 : 64, 8 : 256, 8 : 2048, 16 : 1] : 16"),
        "{out}"
    );
    // L1394: the NCHW -> WHCN read.
    let (_, out) = run(&["derive", "fixtures/manual/1358_read_nchw_whcn.rs"]);
    assert!(out.contains("[8 : 1, 8 : 8, 3 : 64, 4 : 192] : 1"), "{out}");
}

#[test]
fn derive_json_has_sizes_and_cycles() {
    // L2061-L2105 (fetch_batch_1..4): cycles 48, 24, 12, 12; i4 packed (constraints.md §22 A-3).
    let (code, out) = run(&[
        "derive",
        "--format",
        "json",
        "fixtures/manual/2061_fetch_batching.rs",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ops = v["ops"].as_array().expect("ops");
    let cycles: Vec<u64> = ops.iter().filter_map(|o| o["cycles"].as_u64()).collect();
    assert_eq!(cycles, [48, 24, 12, 12]);
    let first = &ops[0];
    assert_eq!(first["op"], "fetch");
    assert_eq!(
        first["entries"],
        serde_json::json!([[4, 96], [3, 32], [4, 8], [8, 1]])
    );
    assert_eq!(first["packet_size"], 8);
    assert_eq!(first["contiguous_bytes"], 192);
    assert_eq!(first["fetch_size"], 4);
    assert!(first["commit_size"].is_null());
    assert!(first["line"].as_u64().is_some());
}

#[test]
fn derive_json_commit_sizes() {
    // L2263-L2310: commit_size 8, 32, 16, 8.
    let (_, out) = run(&[
        "derive",
        "--format",
        "json",
        "fixtures/manual/2249_commit_sequencer.rs",
    ]);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let sizes: Vec<u64> = v["ops"]
        .as_array()
        .expect("ops")
        .iter()
        .filter(|o| o["op"] == "commit")
        .filter_map(|o| o["commit_size"].as_u64())
        .collect();
    assert_eq!(sizes, [8, 32, 16, 8]);
}

#[test]
fn derive_reports_configuration_failures() {
    let (code, out) = run(&["derive", "fixtures/manual/1641_read_insufficient_err.rs"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("no configuration") && out.contains("Insufficient"),
        "{out}"
    );
}

#[test]
fn derive_json_collect_flits() {
    // L3655-L3668: bf16, B = 32: a 64-byte packet becomes two flits, Time2 m![A, B / 16].
    let (code, out) = run(&[
        "derive",
        "--format",
        "json",
        "fixtures/manual/3655_collect_multi_flit.rs",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let ops = v["ops"].as_array().expect("ops");
    let c = ops.iter().find(|o| o["op"] == "collect").expect("collect");
    assert_eq!(c["packet_bytes"], 64);
    assert_eq!(c["flits"], 2);
    assert_eq!(c["pad_bytes"], 0);
    assert_eq!(c["time2"], "m![A, B / 16]");
    assert_eq!(c["packet2"], "m![B % 16]");
}

/// `model`, `derive` and `cost` read the crate around the file, as `visa-lint FILE` does: the
/// kernel's axes (`S`, `D`) and its commit address (`OUT`) are declared in a sibling file.
#[test]
fn model_derive_and_cost_read_the_crate_around_the_file() {
    let file = "fixtures/crates/split_module/src/attention/kernel.rs";
    let (code, out) = run(&["derive", file]);
    assert_eq!(code, 0);
    assert!(out.contains("fetch [4 : 64, 2 : 32, 32 : 1] : 32"), "{out}");
    assert!(
        out.contains("commit [4 : 64, 2 : 32, 32 : 1] : 32"),
        "{out}"
    );
    let (code, out) = run(&["model", "--format", "json", file]);
    assert_eq!(code, 0);
    let model: serde_json::Value = serde_json::from_str(&out).expect("json");
    let commit = model["functions"][0]["chains"][0]["steps"]
        .as_array()
        .and_then(|steps| steps.iter().find(|s| s["method"] == "commit"))
        .cloned()
        .unwrap_or_default();
    assert_eq!(commit["address"], 8192, "{out}");
    let (code, out) = run(&["cost", file]);
    assert_eq!(code, 0);
    assert!(out.contains("fn scores: 8 cycles"), "{out}");
}
