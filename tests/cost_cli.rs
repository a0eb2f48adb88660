//! `visa-lint cost FILE [--format json] [--timeline out.svg]`: the per-operation table, the
//! timeline summary, the bottleneck, the assumptions and the hints; JSON; the SVG Gantt chart.

use expect_test::expect_file;
use std::path::Path;
use visa_lint_tests::run_cli as run;

#[test]
fn cost_table_of_the_constant_addition_kernel() {
    // Manual L175-L220: HBM -> DM, one main-context pass of the Vector Engine, DM -> HBM.
    let (code, out) = run(&["cost", "fixtures/manual/0175_constant_addition.rs"]);
    assert_eq!(code, 0);
    expect_file!["snapshots/cost/constant_addition.txt"].assert_eq(&out);
}

#[test]
fn cost_table_of_gemv_shows_sub_then_main() {
    // Manual L378-L465: sub loads the vector into the TRF, main contracts, then DM -> HBM.
    let (code, out) = run(&["cost", "fixtures/manual/0401_gemv.rs"]);
    assert_eq!(code, 0);
    expect_file!["snapshots/cost/gemv.txt"].assert_eq(&out);
}

#[test]
fn cost_json_of_the_padding_packets_example() {
    // Manual L1816-L1834: three kernels, 15, 3 and 1 fetch cycles.
    let (code, out) = run(&[
        "cost",
        "--format",
        "json",
        "fixtures/manual/1816_fetch_padding_packets.rs",
    ]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    let totals: Vec<u64> = v["kernels"]
        .as_array()
        .expect("kernels")
        .iter()
        .filter_map(|k| k["total_cycles"].as_u64())
        .collect();
    assert_eq!(totals, [15, 3, 1]);
    expect_file!["snapshots/cost/fetch_padding_packets.json"].assert_eq(&out);
}

#[test]
fn cost_runs_on_every_manual_fixture() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/manual");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("fixtures/manual")
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|e| e == "rs"))
        .collect();
    files.sort();
    assert!(files.len() > 100, "{} fixtures", files.len());
    let mut costed = 0;
    for f in &files {
        let rel = format!(
            "fixtures/manual/{}",
            f.file_name().and_then(|n| n.to_str()).unwrap_or_default()
        );
        // The report and the timeline of every fixture (the "done when").
        let svg_path = std::env::temp_dir().join(format!(
            "visa-cost-every-{}-{}.svg",
            std::process::id(),
            f.file_stem().and_then(|n| n.to_str()).unwrap_or_default()
        ));
        let svg_arg = svg_path.to_string_lossy().to_string();
        let (code, out) = run(&["cost", "--format", "json", "--timeline", &svg_arg, &rel]);
        assert_eq!(code, 0, "{rel}");
        let v: serde_json::Value =
            serde_json::from_str(&out).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let svg = std::fs::read_to_string(&svg_path).unwrap_or_else(|e| panic!("{rel}: {e}"));
        let _ = std::fs::remove_file(&svg_path);
        let doc = roxmltree::Document::parse(&svg).unwrap_or_else(|e| panic!("{rel}: {e}"));
        assert_eq!(doc.root_element().tag_name().name(), "svg", "{rel}");
        let count = |class: &str| {
            doc.descendants()
                .filter(|n| n.attribute("class") == Some(class))
                .count()
        };
        let kernels = v["kernels"].as_array().expect("kernels");
        // One lane per lane each function uses, one bar per task.
        let lanes: usize = kernels
            .iter()
            .map(|k| k["lanes"].as_array().map_or(0, Vec::len))
            .sum();
        let tasks: usize = kernels
            .iter()
            .map(|k| k["tasks"].as_array().map_or(0, Vec::len))
            .sum();
        assert_eq!((count("lane"), count("bar")), (lanes, tasks), "{rel}");
        for k in kernels {
            costed += 1;
            let total = k["total_cycles"].as_u64().expect("total");
            // Every task lies within the total, and the critical path reaches it.
            let tasks = k["tasks"].as_array().expect("tasks");
            assert!(
                tasks
                    .iter()
                    .all(|t| t["end"].as_u64().is_some_and(|e| e <= total)),
                "{rel}"
            );
            assert!(
                tasks.is_empty()
                    || tasks
                        .iter()
                        .any(|t| t["critical"] == true && t["end"].as_u64() == Some(total)),
                "{rel}"
            );
        }
    }
    assert!(costed > 100, "{costed} kernels costed");
}

#[test]
fn cost_timeline_is_an_svg_gantt_chart() {
    // GEMV: the host function `run` (its PCIe transfers on its dma lane), then the kernel
    // (lanes main, sub and dma); one bar per task, labelled with its source line; the critical
    // path outlined.
    let svg_path = std::env::temp_dir().join(format!("visa-cost-{}.svg", std::process::id()));
    let svg_arg = svg_path.to_string_lossy().to_string();
    let (code, _) = run(&[
        "cost",
        "--timeline",
        &svg_arg,
        "fixtures/manual/0401_gemv.rs",
    ]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&svg_path).expect("SVG written");
    let _ = std::fs::remove_file(&svg_path);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let root = doc.root_element();
    assert_eq!(root.tag_name().name(), "svg");
    let lanes: Vec<&str> = root
        .descendants()
        .filter(|n| n.attribute("class") == Some("lane"))
        .filter_map(|n| n.attribute("data-lane"))
        .collect();
    assert_eq!(lanes, ["dma", "main", "sub", "dma"]);
    let bars: Vec<roxmltree::Node> = root
        .descendants()
        .filter(|n| n.attribute("class") == Some("bar"))
        .collect();
    assert_eq!(
        bars.len(),
        8,
        "three host transfers; two loads, sub, main, the store"
    );
    let labels: Vec<&str> = bars
        .iter()
        .filter_map(|b| b.attribute("data-label"))
        .collect();
    // Function by function, lane by lane (main, sub, dma), in time order.
    assert_eq!(
        labels,
        [
            "L31 pcie",
            "L32 pcie",
            "L36 pcie",
            "L63 fetch+collect+contraction+cast+commit",
            "L53 fetch+collect+to_trf",
            "L46 dma_read+dma_write",
            "L47 dma_read+dma_write",
            "L74 dma_read+dma_write",
        ]
    );
    // The drawn text is the label, or its line when the bar is too narrow for it.
    for b in &bars {
        let drawn = b
            .children()
            .find(|c| c.has_tag_name("text"))
            .and_then(|t| t.text())
            .unwrap_or("");
        let label = b.attribute("data-label").unwrap_or("");
        let line = format!("L{}", b.attribute("data-line").unwrap_or(""));
        assert!(
            drawn == label || drawn == line || drawn.is_empty(),
            "{drawn}"
        );
    }
    assert!(
        bars.iter()
            .all(|b| b.attribute("data-critical") == Some("true"))
    );
    // Every bar stays inside the chart.
    let width: f64 = root
        .attribute("width")
        .and_then(|w| w.parse().ok())
        .expect("width");
    for b in &bars {
        let r = b
            .children()
            .find(|c| c.has_tag_name("rect"))
            .expect("bar rect");
        let x: f64 = r.attribute("x").and_then(|v| v.parse().ok()).expect("x");
        let w: f64 = r
            .attribute("width")
            .and_then(|v| v.parse().ok())
            .expect("w");
        assert!(x >= 0.0 && x + w <= width, "{x} + {w} > {width}");
    }
}

#[test]
fn cost_of_a_missing_file_is_status_2() {
    let (code, _) = run(&["cost", "fixtures/manual/no_such_file.rs"]);
    assert_eq!(code, 2);
}

/// `text` with every axis of its `axes![...]` declarations set to `size`.
fn with_axis_sizes(text: &str, size: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("axes![") {
        let (head, tail) = rest.split_at(i + "axes![".len());
        out.push_str(head);
        let end = tail.find(']').unwrap_or(tail.len());
        let decls: Vec<String> = tail[..end]
            .split(',')
            .map(|d| match d.split_once('=') {
                Some((name, v)) if v.trim().chars().all(|c| c.is_ascii_digit()) => {
                    format!("{}= {size}", name)
                }
                _ => d.to_string(),
            })
            .collect();
        out.push_str(&decls.join(","));
        rest = &tail[end..];
    }
    out.push_str(rest);
    out
}

#[test]
fn cost_never_panics_with_huge_axes() {
    // Axes of 2^40 and 2^64 - 1 on every manual kernel: cycle counts saturate, nothing panics,
    // and the reports and the timeline still render.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/manual");
    let mut n = 0;
    for e in std::fs::read_dir(&dir).expect("fixtures/manual").flatten() {
        let Ok(text) = std::fs::read_to_string(e.path()) else {
            continue;
        };
        for size in ["1099511627776", "18446744073709551615"] {
            let t = with_axis_sizes(&text, size);
            let ks = visa_server::cost::kernels(&t);
            n += ks.len();
            let _ = visa_server::cost::human_report("f.rs", &t, &ks);
            let _ = visa_server::cost::json_report(&t, &ks);
            let svg = visa_server::cost::timeline_svg(&t, &ks);
            assert!(roxmltree::Document::parse(&svg).is_ok());
        }
    }
    assert!(n > 100, "{n} kernels");
}

#[test]
fn cost_timeline_marks_a_task_that_holds_the_dma_lane() {
    // BNK-001's fetch makes 128 same-bank accesses, so it is scheduled as if it held the DMA
    // (L2909): the dma lane shows a dashed "held" outline over the fetch's time.
    let svg_path = std::env::temp_dir().join(format!("visa-cost-bnk-{}.svg", std::process::id()));
    let svg_arg = svg_path.to_string_lossy().to_string();
    let (code, _) = run(&["cost", "--timeline", &svg_arg, "fixtures/rules/BNK-001.rs"]);
    assert_eq!(code, 0);
    let text = std::fs::read_to_string(&svg_path).expect("SVG written");
    let _ = std::fs::remove_file(&svg_path);
    let doc = roxmltree::Document::parse(&text).expect("well-formed XML");
    let held: Vec<roxmltree::Node> = doc
        .descendants()
        .filter(|n| n.attribute("class") == Some("held"))
        .collect();
    assert_eq!(held.len(), 1);
    let lane = held[0]
        .ancestors()
        .find(|a| a.attribute("class") == Some("lane"))
        .and_then(|a| a.attribute("data-lane"));
    assert_eq!(lane, Some("dma"));
}
