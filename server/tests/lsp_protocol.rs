//! The language server driven in-process through `LspService`: one test per feature, with
//! the protocol output in snapshot files under `tests/snapshots/lsp/`.

mod common;

use common::inproc::InProcess;
use common::*;
use expect_test::{expect, expect_file};
use serde_json::{Value, json};
use std::time::Duration;

/// Portable snapshots: the docs URL of the rules reference as a fixed value.
fn options() -> Value {
    json!({"rulesDocUrl": "https://visa-lint.invalid/docs/rules.md"})
}

fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_default() + "\n"
}

async fn open(c: &mut InProcess, uri: &str, text: &str) -> Value {
    c.notify("textDocument/didOpen", did_open(uri, 1, text))
        .await;
    c.diagnostics(uri, 1).await
}

/// The quick fixes the server offers for diagnostic `d` of the document at `uri`.
async fn quick_fixes(c: &mut InProcess, uri: &str, d: &Value) -> Vec<Value> {
    let r = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri}, "range": d["range"],
                   "context": {"diagnostics": [d], "only": ["quickfix"]}}),
        )
        .await;
    r["result"].as_array().cloned().unwrap_or_default()
}

#[tokio::test]
async fn initialize_announces_the_features() {
    let mut c = InProcess::new();
    let r = c.initialize(Value::Null).await;
    expect_file!["snapshots/lsp/initialize.json"].assert_eq(&pretty(&r["result"]));
}

#[tokio::test]
async fn diagnostics_carry_code_links_related_spans_and_fixes() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("examples/kernels/hardware_mistakes.rs");
    let uri = scratch_uri("hardware_mistakes.rs");
    let diags = open(&mut c, &uri, &text).await;
    expect_file!["snapshots/lsp/diagnostics.json"].assert_eq(&pretty(&diags));
}

#[tokio::test]
async fn code_links_default_to_the_rules_reference_of_the_workspace() {
    let mut c = InProcess::new();
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut params = initialize_params(Value::Null);
    params["rootUri"] = json!(file_uri(&root));
    c.request("initialize", params).await;
    let (uri, text) = fixture("fixtures/rules/CAP-003.rs");
    let diags = open(&mut c, &uri, &text).await;
    let href = diags[0]["codeDescription"]["href"].as_str().unwrap_or("");
    let expected = format!("{}#cap-003", file_uri(&root.join("docs/rules.md")));
    assert_eq!(href, expected);
}

#[tokio::test]
async fn columns_are_utf16_code_units_after_non_ascii_text() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    // 'é' is 2 bytes and one UTF-16 unit; '𝛼' is 4 bytes and two units.
    let text = text.replace("fn kernel(ctx", "fn kernel(/* é𝛼 */ ctx");
    let uri = scratch_uri("utf16.rs");
    let diags = open(&mut c, &uri, &text).await;
    let (line, character) = find(&text, "m![A / 8],");
    assert_eq!(diags[0]["code"], "CAP-003");
    assert_eq!(
        diags[0]["range"],
        json!({"start": {"line": line, "character": character},
               "end": {"line": line, "character": character + 9}})
    );
    // Bytes would have put it 4 further right; Unicode scalars 1 further left.
    let byte_col = text
        .lines()
        .nth(line as usize)
        .and_then(|l| l.find("m![A / 8],"));
    assert_eq!(byte_col, Some(character as usize + 3));
    // And a hover asked for at that UTF-16 position lands on the mapping.
    let h = c
        .request("textDocument/hover", position(&uri, line, character + 5))
        .await;
    assert_eq!(h["result"]["range"], diags[0]["range"]);
}

#[tokio::test]
async fn hovers_explain_mappings_axes_aliases_and_rule_codes() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let text = "\
axes![A = 512, B = 4];
type Tile = m![A % 8, B];

// visa-lint: allow(MAP-007)
fn kernel(ctx: &mut Context, a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], Tile>) {
    let x = ctx.main.begin(a.view()).fetch::<i8, m![1], Tile>();
}
";
    let uri = scratch_uri("hover.rs");
    open(&mut c, &uri, text).await;
    let mut out = String::new();
    for (needle, delta) in [
        ("m![A / 8 # 256]", 5),
        ("A = 512", 0),
        ("Tile =", 1),
        ("B]", 0),
        ("MAP-007", 2),
        ("fetch", 1),
        ("kernel(", 1),
    ] {
        let (line, ch) = find(text, needle);
        let h = c
            .request("textDocument/hover", position(&uri, line, ch + delta))
            .await;
        out.push_str(&format!(
            "## hover at `{needle}` +{delta}: {}\n{}\n\n",
            h["result"]["range"],
            h["result"]["contents"]["value"]
                .as_str()
                .unwrap_or("(none)")
        ));
    }
    expect_file!["snapshots/lsp/hover.md"].assert_eq(&out);
}

#[tokio::test]
async fn allow_this_rule_on_this_line_silences_the_diagnostic() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let uri = scratch_uri("allow.rs");
    let diags = open(&mut c, &uri, &text).await;
    let d = diags[0].clone();
    let actions = quick_fixes(&mut c, &uri, &d).await;
    let allow = actions
        .iter()
        .find(|a| a["title"] == "Allow CAP-003 on this line")
        .cloned()
        .unwrap_or_default();
    let edits = allow["edit"]["changes"][&uri]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let allowed = apply_edits(&text, &edits);
    expect![[r#"

        #[device(chip = 1)]
        // visa-lint: allow(CAP-003)"#]]
    .assert_eq(
        &allowed
            .lines()
            .skip(5)
            .take(3)
            .collect::<Vec<_>>()
            .join("\n"),
    );
    c.notify("textDocument/didChange", did_change(&uri, 2, &allowed))
        .await;
    assert_eq!(c.diagnostics(&uri, 2).await, json!([]));
}

#[tokio::test]
async fn fix_all_applies_every_safe_fix_of_the_file() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("examples/kernels/mapping_mistakes.rs");
    let uri = scratch_uri("mapping_mistakes.rs");
    let before = open(&mut c, &uri, &text).await;
    let r = c
        .request(
            "textDocument/codeAction",
            json!({"textDocument": {"uri": uri},
                   "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                   "context": {"diagnostics": [], "only": ["source.fixAll"]}}),
        )
        .await;
    let actions = r["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(actions.len(), 1, "{actions:?}");
    assert_eq!(actions[0]["kind"], "source.fixAll.visa-lint");
    let edits = actions[0]["edit"]["changes"][&uri]
        .as_array()
        .cloned()
        .unwrap_or_default();
    let fixed = apply_edits(&text, &edits);
    c.notify("textDocument/didChange", did_change(&uri, 2, &fixed))
        .await;
    let after = c.diagnostics(&uri, 2).await;
    let out = format!(
        "before:\n{}\nfixed text:\n{fixed}\nafter:\n{}",
        render_diagnostics(&before),
        render_diagnostics(&after)
    );
    expect_file!["snapshots/lsp/fix_all.txt"].assert_eq(&out);
}

#[tokio::test]
async fn configuration_sets_levels_and_the_perf_severity() {
    let mut c = InProcess::new();
    c.initialize(json!({"perfSeverity": "hint", "rulesDocUrl": "https://visa-lint.invalid/r.md"}))
        .await;
    let (_, text) = fixture("fixtures/manual/1763_fetch_contiguity.rs");
    let uri = scratch_uri("contiguity.rs");
    let diags = open(&mut c, &uri, &text).await;
    let codes = |d: &Value| {
        d.as_array()
            .into_iter()
            .flatten()
            .map(|d| format!("{}={}", d["code"].as_str().unwrap_or(""), d["severity"]))
            .collect::<Vec<_>>()
            .join(" ")
    };
    // Perf (FET-003) is a Hint (4) here; info stays Information (3).
    expect!["FET-003=4 SEQ-005=3"].assert_eq(&codes(&diags));
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"visa-lint": {"rules": {"SEQ": "allow", "FET-003": "deny"}}}}),
    )
    .await;
    let again = c.diagnostics(&uri, 1).await;
    expect!["FET-003=1"].assert_eq(&codes(&again));
    // The library the document's crate is checked against is logged once.
    let logged = |m: &serde_json::Value, start: &str| {
        m["method"] == "window/logMessage"
            && m["params"]["message"]
                .as_str()
                .is_some_and(|s| s.starts_with(start))
    };
    let library = c.wait_for(|m| logged(m, "visa-lsp: ")).await;
    let text = library["params"]["message"].as_str().unwrap_or_default();
    assert!(text.contains("checked against furiosa-visa-std"), "{text}");
    // A key it does not know is reported to the user, not ignored silently.
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"colour": "blue"}}),
    )
    .await;
    let log = c.wait_for(|m| logged(m, "settings:")).await;
    assert_eq!(log["params"]["message"], "settings: unknown key `colour`");
}

#[tokio::test]
async fn inlay_hints_show_estimated_cycles_only_when_turned_on() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("fixtures/manual/1763_fetch_contiguity.rs");
    let uri = scratch_uri("hints.rs");
    open(&mut c, &uri, &text).await;
    let whole = json!({"textDocument": {"uri": uri}, "range": {"start": {"line": 0, "character": 0}, "end": {"line": 9999, "character": 0}}});
    // Off by default (as rust-analyzer's are on, ours would crowd a kernel).
    let off = c.request("textDocument/inlayHint", whole.clone()).await;
    assert_eq!(off["result"], Value::Null);
    c.notify(
        "workspace/didChangeConfiguration",
        json!({"settings": {"visa-lint": {"inlayHints": true}}}),
    )
    .await;
    c.diagnostics(&uri, 1).await;
    let on = c.request("textDocument/inlayHint", whole).await;
    let labels: Vec<String> = on["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|h| {
            format!(
                "{}:{}",
                h["position"]["line"],
                h["label"].as_str().unwrap_or("")
            )
        })
        .collect();
    // One per engine call and one for the kernel, each where the simulator puts it.
    assert!(
        labels.iter().any(|l| l.ends_with("cycles in all")),
        "{labels:?}"
    );
    assert!(
        labels.iter().filter(|l| !l.ends_with("in all")).count() >= 1,
        "{labels:?}"
    );
}

#[tokio::test]
async fn axes_and_aliases_inside_mappings_complete_and_navigate() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let text = "\
axes![A = 512, Bee = 4];
type Tile = m![A % 8, Bee];

fn kernel(a: &DmTensor<i8, m![1], m![1 # 2], m![A / 8 # 256], m![Tile]>) {
    // visa-lint: allow(MAP-00
}
";
    let uri = scratch_uri("navigate.rs");
    open(&mut c, &uri, text).await;
    let labels = |r: &Value| {
        r["result"]
            .as_array()
            .into_iter()
            .flatten()
            .map(|i| i["label"].as_str().unwrap_or("").to_string())
            .collect::<Vec<_>>()
    };
    let (line, ch) = find(text, "A / 8 #");
    let r = c
        .request("textDocument/completion", position(&uri, line, ch))
        .await;
    assert_eq!(labels(&r), ["A", "Bee", "Tile"]);
    let (line, ch) = find(text, "MAP-00\n");
    let r = c
        .request("textDocument/completion", position(&uri, line, ch + 6))
        .await;
    assert!(labels(&r).iter().any(|l| l == "MAP-007"));
    // Outside `m![...]` and comments: nothing to offer (rust-analyzer completes Rust).
    let r = c
        .request("textDocument/completion", position(&uri, 3, 3))
        .await;
    assert_eq!(r["result"], Value::Null);

    let (line, ch) = find(text, "Bee]");
    let r = c
        .request("textDocument/definition", position(&uri, line, ch + 1))
        .await;
    assert_eq!(
        r["result"]["range"]["start"],
        json!({"line": 0, "character": 15})
    );
    let mut p = position(&uri, 0, 1 + 6);
    p["context"] = json!({"includeDeclaration": true});
    let r = c.request("textDocument/references", p).await;
    let starts: Vec<String> = r["result"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| {
            format!(
                "{}:{}",
                l["range"]["start"]["line"], l["range"]["start"]["character"]
            )
        })
        .collect();
    // A's declaration, its use in the alias and in the Slice mapping.
    assert_eq!(starts, ["0:6", "1:15", "3:48"]);
}

#[tokio::test]
async fn requests_on_unknown_documents_answer_null() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let r = c
        .request(
            "textDocument/hover",
            position(&scratch_uri("never-opened.rs"), 0, 0),
        )
        .await;
    assert_eq!(r["result"], Value::Null);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_of_edits_and_hovers_ends_with_the_last_versions_diagnostics() {
    let mut c = InProcess::new();
    c.initialize(options()).await;
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let uri = scratch_uri("flood.rs");
    open(&mut c, &uri, &text).await;
    let (line, ch) = find(&text, "m![A / 8],");
    let mut pending = Vec::new();
    let last = 201;
    for v in 2..=last {
        // Alternate between the broken and the padded kernel; the last version is padded.
        let t = if v % 2 == 1 {
            text.replace("m![A / 8],", "m![A / 8 # 256],")
        } else {
            text.clone()
        };
        pending.push(tokio::spawn(
            c.start("textDocument/didChange", did_change(&uri, v, &t), false)
                .await,
        ));
        pending.push(tokio::spawn(
            c.start("textDocument/hover", position(&uri, line, ch + 4), true)
                .await,
        ));
    }
    let mut modified = 0;
    for p in pending {
        let r = tokio::time::timeout(Duration::from_secs(60), p)
            .await
            .expect("no deadlock")
            .expect("handler finished");
        if let Some(r) = r
            && r["error"]["code"] == json!(-32801)
        {
            modified += 1;
        }
    }
    let diags = c.diagnostics(&uri, last).await;
    assert_eq!(diags, json!([]), "the padded last version is clean");
    // Nothing is published after the last version's diagnostics (no stale overwrite).
    let late: Vec<Value> = c
        .drain_new(Duration::from_millis(300))
        .await
        .into_iter()
        .filter(|m| m["method"] == "textDocument/publishDiagnostics")
        .collect();
    assert_eq!(
        late,
        Vec::<Value>::new(),
        "{}",
        serde_json::to_string(
            &late
                .iter()
                .map(|m| &m["params"]["version"])
                .collect::<Vec<_>>()
        )
        .unwrap_or_default()
    );
    eprintln!("{modified} hovers answered ContentModified");
}

/// A kernel module whose axes are in its parent's file: the server reads the crate's other
/// files from disk, resolves `use super::*` across them, and follows their changes.
#[tokio::test]
async fn files_are_analysed_within_their_crate_and_follow_changes_on_disk() {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    let write = |rel: &str, text: &str| {
        let p = root.join(rel);
        std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
        std::fs::write(p, text).expect("write");
    };
    write(
        "Cargo.toml",
        "[package]\nname = \"kernels\"\nversion = \"0.1.0\"\nedition = \"2024\"\n",
    );
    write("src/lib.rs", "pub mod vector;\n");
    write(
        "src/vector.rs",
        "use furiosa_visa_std::prelude::*;\naxes![A = 512];\nmod normal;\n",
    );
    let child = "use super::*;\ntype Shrunk = m![A # 256];\n";
    write("src/vector/normal.rs", child);

    let mut c = InProcess::new();
    c.initialize(options()).await;
    let uri = file_uri(&root.join("src/vector/normal.rs"));
    let diags = open(&mut c, &uri, child).await;
    let codes: Vec<&str> = diags
        .as_array()
        .expect("diagnostics")
        .iter()
        .filter_map(|d| d["code"].as_str())
        .collect();
    assert_eq!(codes, vec!["MAP-003"], "the parent's `A` (512) is found");

    // The parent changes on disk (A = 128: padding to 256 is now fine): the client says so.
    write(
        "src/vector.rs",
        "use furiosa_visa_std::prelude::*;\naxes![A = 128];\nmod normal;\n",
    );
    let parent_uri = file_uri(&root.join("src/vector.rs"));
    c.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": parent_uri, "type": 2}]}),
    )
    .await;
    let diags = c.diagnostics(&uri, 1).await;
    assert_eq!(diags, json!([]), "{diags}");
}

/// The quick fixes of CAP-003 in `kernels` (at `uri`, version 1) from a server whose client
/// does or does not take `documentChanges`, with `layouts` (URI, text) open at version 7 first
/// when given.
async fn cap_003_actions(
    uri: &str,
    kernels: &str,
    document_changes: bool,
    layouts: Option<(&str, &str)>,
) -> Vec<Value> {
    let mut c = InProcess::new();
    let mut params = initialize_params(options());
    params["capabilities"] =
        json!({"workspace": {"workspaceEdit": {"documentChanges": document_changes}}});
    c.request("initialize", params).await;
    c.notify("initialized", json!({})).await;
    if let Some((layouts_uri, text)) = layouts {
        c.notify("textDocument/didOpen", did_open(layouts_uri, 7, text))
            .await;
    }
    let diags = open(&mut c, uri, kernels).await;
    let d = diags
        .as_array()
        .and_then(|a| a.iter().find(|d| d["code"] == "CAP-003"))
        .cloned()
        .expect("CAP-003 on the use of Slice");
    quick_fixes(&mut c, uri, &d).await
}

/// An alias of another module padded where it is defined: the quick fix is one workspace edit
/// of `layouts.rs`; with `documentChanges` each document names its version (the open one its
/// editor's, a file only on disk none), without them it is a `changes` map.
#[tokio::test]
async fn an_alias_fix_edits_the_module_that_defines_it_with_versions_when_the_client_takes_them() {
    let dir = tempfile::tempdir().expect("temp dir");
    let from =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/crates/alias_fixes");
    for rel in [
        "Cargo.toml",
        "src/lib.rs",
        "src/kernels.rs",
        "src/layouts.rs",
    ] {
        let to = dir.path().join(rel);
        std::fs::create_dir_all(to.parent().expect("parent")).expect("mkdir");
        std::fs::copy(from.join(rel), &to).expect("copy");
    }
    let kernels = std::fs::read_to_string(dir.path().join("src/kernels.rs")).expect("read");
    let layouts_path = dir.path().join("src/layouts.rs");
    let layouts = std::fs::read_to_string(&layouts_path).expect("read");
    let uri = file_uri(&dir.path().join("src/kernels.rs"));
    let layouts_uri = file_uri(&layouts_path);

    for document_changes in [true, false] {
        let actions = cap_003_actions(&uri, &kernels, document_changes, None).await;
        let first = actions[0].clone();
        assert_eq!(
            first["title"],
            "pad `Slice` where it is defined, for every use"
        );
        assert_eq!(first["isPreferred"], true);
        let edits = if document_changes {
            let docs = first["edit"]["documentChanges"]
                .as_array()
                .cloned()
                .expect("documentChanges");
            assert_eq!(docs.len(), 1, "{docs:?}");
            assert_eq!(docs[0]["textDocument"]["uri"], layouts_uri.as_str());
            assert_eq!(
                docs[0]["textDocument"]["version"],
                Value::Null,
                "not open: no version"
            );
            docs[0]["edits"].as_array().cloned().unwrap_or_default()
        } else {
            assert_eq!(first["edit"]["documentChanges"], Value::Null);
            first["edit"]["changes"][&layouts_uri]
                .as_array()
                .cloned()
                .expect("changes")
        };
        assert!(
            apply_edits(&layouts, &edits).contains("pub type Slice = m![A / 8 # 256];"),
            "{edits:?}"
        );
    }

    // Open in the editor, layouts.rs is named with its version.
    let open_layouts = Some((layouts_uri.as_str(), layouts.as_str()));
    let actions = cap_003_actions(&uri, &kernels, true, open_layouts).await;
    let docs = actions[0]["edit"]["documentChanges"].clone();
    assert_eq!(docs[0]["textDocument"]["version"], 7, "{docs}");
    // The fix at the use names this document's version.
    let at_use = actions[1]["edit"]["documentChanges"].clone();
    assert_eq!(at_use[0]["textDocument"]["uri"], uri.as_str());
    assert_eq!(at_use[0]["textDocument"]["version"], 1, "{at_use}");
}

/// A helper's body is checked with each caller's values and reported at the call: editing the
/// helper in another file re-publishes its callers with what the new body gives with their
/// values.
#[tokio::test]
async fn a_helper_edited_in_another_file_is_checked_again_with_each_callers_values() {
    let src = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../fixtures/crates/helper_values/src")
        .canonicalize()
        .expect("the fixture crate");
    let read = |name: &str| std::fs::read_to_string(src.join(name)).expect("fixture");
    let (kernels, helpers) = (read("kernels.rs"), read("helpers.rs"));
    let line_of = |needle: &str| find(&kernels, needle).0;
    let odd = line_of("stage(ctx, a, consts::ODD)");
    let even = line_of("stage(ctx, a, consts::BASE)");
    // The lines of the ALN-001s a publication of `kernels.rs` holds.
    let misaligned = |m: &Value| -> Vec<u64> {
        let diags = m["params"]["diagnostics"]
            .as_array()
            .cloned()
            .unwrap_or_default();
        diags
            .iter()
            .filter(|d| d["code"] == "ALN-001")
            .filter_map(|d| d["range"]["start"]["line"].as_u64())
            .collect()
    };
    let kernels_uri = file_uri(&src.join("kernels.rs"));
    let mut c = InProcess::new();
    c.initialize(options()).await;
    c.notify("textDocument/didOpen", did_open(&kernels_uri, 1, &kernels))
        .await;
    let first = c
        .wait_for(|m| m["params"]["uri"] == kernels_uri.as_str())
        .await;
    assert!(misaligned(&first).contains(&u64::from(odd)), "{first}");
    assert!(!misaligned(&first).contains(&u64::from(even)), "{first}");

    // `stage` now commits one byte past `at`: ODD + 1 is aligned, BASE + 1 is not.
    let helpers_uri = file_uri(&src.join("helpers.rs"));
    c.notify("textDocument/didOpen", did_open(&helpers_uri, 1, &helpers))
        .await;
    let moved = helpers.replace(".commit(at)", ".commit(at + 1)");
    assert_ne!(moved, helpers);
    c.notify(
        "textDocument/didChange",
        did_change(&helpers_uri, 2, &moved),
    )
    .await;
    let again = c
        .wait_for(|m| {
            m["params"]["uri"] == kernels_uri.as_str() && misaligned(m).contains(&u64::from(even))
        })
        .await;
    assert!(!misaligned(&again).contains(&u64::from(odd)), "{again}");
}
