//! The `visa-lsp` binary over stdio: the features end to end, then hostile traffic. Every
//! test ends with the server still answering and exiting cleanly on `shutdown` + `exit`.

mod common;

use common::*;
use expect_test::expect;
use serde_json::{Value, json};
use std::time::Duration;

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

/// The server still answers: a hover on `uri` gets a response with a result.
fn still_answers(s: &mut StdioServer, uri: &str) {
    let r = s.request("textDocument/hover", position(uri, 0, 0));
    assert!(r.get("result").is_some(), "an answer, not an error: {r}");
}

#[test]
fn requests_before_initialize_are_refused_and_the_server_stays_up() {
    let mut s = StdioServer::start();
    let r = s.request("textDocument/hover", position(&scratch_uri("a.rs"), 0, 0));
    assert_eq!(
        r["error"]["code"],
        json!(-32002),
        "ServerNotInitialized: {r}"
    );
    s.initialize(Value::Null);
    still_answers(&mut s, &scratch_uri("a.rs"));
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn malformed_json_wrong_lengths_and_unknown_methods_are_answered_per_the_protocol() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let uri = scratch_uri("hostile.rs");
    s.notify("textDocument/didOpen", did_open(&uri, 1, &text));
    s.diagnostics(&uri, 1);

    // Not JSON: a parse error (-32700) with a null id.
    s.send_raw(b"Content-Length: 9\r\n\r\n{not json");
    let e = s.wait_for(|m| m["error"]["code"] == json!(-32700));
    assert_eq!(e["id"], Value::Null);
    // A Content-Length shorter than the body: the cut body is no JSON (a parse error), and
    // its tail, up to the next blank line, is a header block without a length (another one).
    let body = json!({"jsonrpc": "2.0", "id": 900, "method": "textDocument/hover",
                      "params": position(&uri, 0, 0)})
    .to_string();
    s.send_raw(format!("Content-Length: {}\r\n\r\n{body}\r\n\r\n", body.len() - 5).as_bytes());
    s.wait_for(|m| m["error"]["code"] == json!(-32700));
    s.wait_for(|m| m["error"]["code"] == json!(-32700));
    // A header that is not a number.
    s.send_raw(b"Content-Length: many\r\n\r\n");
    s.wait_for(|m| m["error"]["code"] == json!(-32700));
    still_answers(&mut s, &uri);
    // An unknown request: MethodNotFound; an unknown notification: ignored.
    let r = s.request("visa/unknown", json!({}));
    assert_eq!(r["error"]["code"], json!(-32601), "{r}");
    s.notify("visa/unknownNotification", json!({}));
    still_answers(&mut s, &uri);
    // The document survived all of it.
    let r = s.request("textDocument/hover", position(&uri, 7, 66));
    assert!(
        r["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("m![A / 8]"))
    );
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn out_of_order_and_duplicate_versions_keep_the_newest_text() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let padded = text.replace("m![A / 8],", "m![A / 8 # 256],");
    let uri = scratch_uri("versions.rs");
    s.notify("textDocument/didOpen", did_open(&uri, 1, &text));
    s.diagnostics(&uri, 1);
    s.notify("textDocument/didChange", did_change(&uri, 3, &padded));
    assert_eq!(s.diagnostics(&uri, 3), json!([]));
    // Version 2 arrives late, and version 3 again with other text: both are dropped.
    s.notify("textDocument/didChange", did_change(&uri, 2, &text));
    s.notify("textDocument/didChange", did_change(&uri, 3, &text));
    let r = s.request(
        "textDocument/codeAction",
        json!({
        "textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99, "character": 0}},
        "context": {"diagnostics": []}}),
    );
    assert_eq!(
        r["result"],
        Value::Null,
        "no diagnostics, so no actions: {r}"
    );
    let late = s.drain(Duration::from_millis(300));
    assert!(
        late.iter()
            .all(|m| m["method"] != "textDocument/publishDiagnostics"),
        "nothing published for dropped versions: {late:?}"
    );
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_ten_megabyte_document_is_analysed_and_the_server_stays_responsive() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let mut big = text.clone();
    let filler = "// padding line of a very large kernel file, to reach ten megabytes\n";
    while big.len() < 10 * 1024 * 1024 {
        big.push_str(filler);
    }
    let uri = scratch_uri("big.rs");
    s.notify("textDocument/didOpen", did_open(&uri, 1, &big));
    let diags = s.diagnostics(&uri, 1);
    assert_eq!(diags[0]["code"], "CAP-003");
    still_answers(&mut s, &uri);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_flood_of_edits_ends_with_the_last_versions_diagnostics() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let padded = text.replace("m![A / 8],", "m![A / 8 # 256],");
    let uri = scratch_uri("flood.rs");
    s.notify("textDocument/didOpen", did_open(&uri, 1, &text));
    for v in 2..=300 {
        let t = if v % 2 == 0 { &padded } else { &text };
        s.notify("textDocument/didChange", did_change(&uri, v, t));
        if v % 10 == 0 {
            s.request_async("textDocument/hover", position(&uri, 7, 66));
        }
    }
    assert_eq!(s.diagnostics(&uri, 300), json!([]));
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn shutdown_in_the_middle_of_an_analysis_is_answered_and_exit_ends_the_process() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let mut big = String::new();
    for i in 0..200 {
        big.push_str(&text.replace("fn kernel", &format!("fn kernel{i}")));
    }
    s.notify(
        "textDocument/didOpen",
        did_open(&scratch_uri("busy.rs"), 1, &big),
    );
    // No waiting for the diagnostics: shutdown races the analysis.
    assert_eq!(s.stop(), Some(0));
}

/// Opens, edits and closes take effect in the order the client sent them: a close followed at
/// once by an open and an edit of the same document leaves it open, with its latest text
/// analysed. Run side by side, the close could remove the document the open had just stored
/// (session 42: the server then published nothing more for it).
#[test]
fn a_document_closed_and_opened_again_at_once_keeps_its_latest_text() {
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let uri = "untitled:Reopened-1";
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let mut version = 0;
    for _ in 0..25 {
        s.notify(
            "textDocument/didOpen",
            did_open(uri, version + 1, "fn f() {}"),
        );
        s.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": uri}}),
        );
        s.notify(
            "textDocument/didOpen",
            did_open(uri, version + 2, "fn g() {}"),
        );
        s.notify(
            "textDocument/didChange",
            did_change(uri, version + 3, &text),
        );
        version += 3;
        let diags = s.diagnostics(uri, version);
        assert!(
            render_diagnostics(&diags).contains("CAP-003"),
            "the latest text's diagnostics: {}",
            render_diagnostics(&diags)
        );
    }
    assert_eq!(s.stop(), Some(0));
}
