//! The `visa-lsp` binary over stdio: the features end to end, then hostile traffic. Every
//! test ends with the server still answering and exiting cleanly on `shutdown` + `exit`.

mod common;

use common::*;
use expect_test::expect;
use serde_json::{Value, json};

#[test]
fn a_padding_fix_applies_and_its_diagnostic_goes_away() {
    let (uri, text) = fixture("fixtures/rules/CAP-003.rs");
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    s.notify("textDocument/didOpen", did_open(&uri, 1, &text));
    let diags = s.diagnostics(&uri, 1);
    expect![[r#"
        7:64-7:73 1 CAP-003 Slice size must be 256, got 64: the Slice mapping `m![A / 8]` of this DmTensor has size 64; a cluster has 256 slices: pad it with `# 256` to fill the unused positions (slice-size)
    "#]].assert_eq(&render_diagnostics(&diags));
    let cap = diags
        .as_array()
        .and_then(|d| d.iter().find(|d| d["code"] == "CAP-003"))
        .cloned()
        .expect("a CAP-003 diagnostic");

    let r = s.request(
        "textDocument/codeAction",
        json!({"textDocument": {"uri": uri}, "range": cap["range"], "context": {"diagnostics": [cap]}}),
    );
    let actions = r["result"].as_array().cloned().unwrap_or_default();
    let titles: Vec<String> = actions
        .iter()
        .map(|a| {
            format!(
                "{} {} preferred={}",
                a["kind"], a["title"], a["isPreferred"]
            )
        })
        .collect();
    expect![[r#"
        "quickfix" "pad the Slice mapping to 256" preferred=true
        "quickfix" "Allow CAP-003 on this line" preferred=null"#]]
    .assert_eq(&titles.join("\n"));

    let edits = actions[0]["edit"]["changes"][&uri]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fixed = apply_edits(&text, &edits);
    s.notify("textDocument/didChange", did_change(&uri, 2, &fixed));
    let after = s.diagnostics(&uri, 2);
    assert!(
        after
            .as_array()
            .is_some_and(|d| d.iter().all(|d| d["code"] != "CAP-003")),
        "CAP-003 is gone after its fix: {}",
        render_diagnostics(&after)
    );
    assert_eq!(s.stop(), Some(0));
}
