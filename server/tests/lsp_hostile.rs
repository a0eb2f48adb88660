//! `visa-lsp` against hostile and ordinary-but-demanding clients, over stdio (the classes of
//! docs/robustness.md, "The language server"): each test ends with the server alive, every
//! document it had still known, and nothing read outside the workspace.

mod common;

use common::*;
use serde_json::{Value, json};
use std::io::{Read, Write};
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

/// A document with one diagnostic, opened and analysed.
fn open_checked(s: &mut StdioServer, uri: &str) -> String {
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    s.notify("textDocument/didOpen", did_open(uri, 1, &text));
    assert!(!s.diagnostics(uri, 1).as_array().is_some_and(Vec::is_empty));
    text
}

/// The document is still there: a hover on its mapping answers, an edit publishes.
fn still_serves(s: &mut StdioServer, uri: &str, text: &str, version: i32) {
    let (line, ch) = find(text, "m![A / 8],");
    let r = s.request("textDocument/hover", position(uri, line, ch + 4));
    assert!(
        r["result"]["contents"]["value"]
            .as_str()
            .is_some_and(|v| v.contains("A / 8")),
        "{r}"
    );
    s.notify("textDocument/didChange", did_change(uri, version, text));
    s.diagnostics(uri, version);
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

#[test]
fn messages_that_are_json_but_no_json_rpc_are_answered_and_the_session_goes_on() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let uri = scratch_uri("kept.rs");
    let text = open_checked(&mut s, &uri);
    let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
    let deep_params = format!(
        r#"{{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{{"x":{}1{}}}}}"#,
        "[".repeat(200),
        "]".repeat(200)
    );
    let bodies: Vec<Vec<u8>> = vec![
        b"{}".to_vec(),
        b"[]".to_vec(),
        b"42".to_vec(),
        b"null".to_vec(),
        br#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"textDocument/hover"}"#.to_vec(),
        br#"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":["\xff\xfe"]}"#.to_vec(),
        deep.into_bytes(),
        deep_params.into_bytes(),
        br#"{"jsonrpc":"2.0","method":"x","params":[1e400]}"#.to_vec(),
        br#"{"jsonrpc":"1.0","id":2,"method":"x"}"#.to_vec(),
    ];
    for body in &bodies {
        s.send_raw(&frame(body));
    }
    let mut errors = 0;
    while errors < bodies.len() {
        let m = s.wait_for(|m| m.get("error").is_some());
        assert!(m["error"]["code"] == json!(-32700) || m["error"]["code"] == json!(-32600));
        errors += 1;
    }
    still_serves(&mut s, &uri, &text, 2);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn absurd_and_wrong_lengths_are_answered_and_the_framing_recovers() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let uri = scratch_uri("kept.rs");
    let text = open_checked(&mut s, &uri);
    let hover = |id: i64| {
        json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
               "params": position(&uri, 0, 0)})
        .to_string()
    };
    s.send_raw(b"Content-Length: 18446744073709551615\r\n\r\n");
    s.send_raw(b"Content-Length: 99999999999\r\n\r\n");
    let short = hover(100);
    s.send_raw(format!("Content-Length: {}\r\n\r\n{short}", short.len() - 3).as_bytes());
    s.send_raw(frame(hover(101).as_bytes()).as_slice());
    let long = hover(102);
    s.send_raw(format!("Content-Length: {}\r\n\r\n{long}", long.len() + 3).as_bytes());
    s.send_raw(frame(hover(103).as_bytes()).as_slice());
    for id in [101, 102, 103] {
        s.wait_for(|m| m["id"] == json!(id));
    }
    still_serves(&mut s, &uri, &text, 2);
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_document_nested_past_the_limit_answers_every_request() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let uri = scratch_uri("deep.rs");
    let deep = format!(
        "fn f() {{ {}{} }}\n",
        "(".repeat(50_000),
        ")".repeat(50_000)
    );
    s.notify("textDocument/didOpen", did_open(&uri, 1, &deep));
    let diags = s.diagnostics(&uri, 1);
    assert_eq!(diags[0]["code"], "VL-005", "{diags}");
    for method in [
        "textDocument/hover",
        "textDocument/completion",
        "textDocument/definition",
    ] {
        let r = s.request(method, position(&uri, 0, 30_000));
        assert!(r.get("error").is_none(), "{method}: {r}");
    }
    let mut refs = position(&uri, 0, 30_000);
    refs["context"] = json!({"includeDeclaration": true});
    let r = s.request("textDocument/references", refs);
    assert!(r.get("error").is_none(), "{r}");
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn exit_without_shutdown_is_status_1_and_dollar_requests_are_method_not_found() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let r = s.request("$/visa/unknown", json!({}));
    assert_eq!(r["error"]["code"], json!(-32601), "{r}");
    s.notify("$/setTrace", json!({"value": "off"}));
    s.notify("exit", Value::Null);
    assert_eq!(s.wait_exit(), Some(1));
}

#[test]
fn a_lone_carriage_return_ends_a_line() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    // Without its comments: a `//` comment runs to the next `\n` whatever comes before it.
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let text: String = text
        .lines()
        .filter(|l| !l.trim_start().starts_with("//"))
        .map(|l| format!("{l}\n"))
        .collect();
    let (lf, cr) = (scratch_uri("lf.rs"), scratch_uri("cr.rs"));
    s.notify("textDocument/didOpen", did_open(&lf, 1, &text));
    s.notify(
        "textDocument/didOpen",
        did_open(&cr, 1, &text.replace('\n', "\r")),
    );
    let (by_lf, by_cr) = (s.diagnostics(&lf, 1), s.diagnostics(&cr, 1));
    assert!(by_lf.as_array().is_some_and(|d| !d.is_empty()));
    let ranges = |d: &Value| -> Vec<Value> {
        d.as_array()
            .into_iter()
            .flatten()
            .map(|d| d["range"].clone())
            .collect()
    };
    assert_eq!(ranges(&by_lf), ranges(&by_cr));
    assert_eq!(s.stop(), Some(0));
}

/// A crate in a temporary workspace: `src/lib.rs` re-exports `src/decls.rs`, which the test
/// may replace, and `src/k.rs` uses the axis `Z` that only `decls.rs` may declare.
fn workspace() -> (tempfile::TempDir, String) {
    let dir = tempfile::tempdir().expect("temp dir");
    let root = dir.path();
    std::fs::create_dir_all(root.join("src")).expect("src");
    let write = |rel: &str, text: &str| std::fs::write(root.join(rel), text).expect("write");
    write(
        "Cargo.toml",
        "[package]\nname = \"ws\"\nversion = \"0.1.0\"\n",
    );
    write("src/lib.rs", "mod decls;\npub use decls::*;\npub mod k;\n");
    write("src/decls.rs", "pub fn nothing() {}\n");
    let k = "use crate::*;\ntype T = m![Z / 2];\n";
    write("src/k.rs", k);
    (dir, k.to_string())
}

/// Whether the diagnostics say `Z` is undeclared.
fn z_unknown(diags: &Value) -> bool {
    diags
        .as_array()
        .into_iter()
        .flatten()
        .any(|d| d["message"].as_str().is_some_and(|m| m.contains('Z')))
}

fn watched(s: &mut StdioServer, path: &Path) {
    let uri = format!("file://{}", path.display());
    s.notify(
        "workspace/didChangeWatchedFiles",
        json!({"changes": [{"uri": uri, "type": 2}]}),
    );
}

#[cfg(unix)]
#[test]
fn links_out_of_the_workspace_and_dotted_paths_are_not_read() {
    let (dir, k) = workspace();
    let root = dir.path().canonicalize().expect("root");
    let outside = tempfile::tempdir().expect("outside");
    let secret = outside.path().join("secret.rs");
    std::fs::write(&secret, "axes![Z = 4];\n").expect("write");
    let secret_probe = AccessProbe::new(&secret);
    let mut s = StdioServer::start();
    s.initialize_at(&root);
    let uri = file_uri(&root.join("src/k.rs"));
    s.notify("textDocument/didOpen", did_open(&uri, 1, &k));
    assert!(z_unknown(&s.diagnostics(&uri, 1)));
    // A link to the outside file, and a path that climbs out of the package to it.
    let decls = root.join("src/decls.rs");
    std::fs::remove_file(&decls).expect("rm");
    std::os::unix::fs::symlink(&secret, &decls).expect("symlink");
    watched(&mut s, &decls);
    let climbing = root.join("src/../../").join(
        secret
            .strip_prefix("/")
            .expect("absolute")
            .to_string_lossy()
            .as_ref(),
    );
    watched(&mut s, &climbing);
    s.notify("textDocument/didChange", did_change(&uri, 2, &k));
    assert!(z_unknown(&s.diagnostics(&uri, 2)), "the secret was used");
    if AccessProbe::works(outside.path()) {
        assert!(!secret_probe.read_since(), "the secret was read");
    }
    // The same text in a regular file of the package is read (the test can fail).
    std::fs::remove_file(&decls).expect("rm");
    std::fs::write(&decls, "axes![Z = 4];\n").expect("write");
    watched(&mut s, &decls);
    s.notify("textDocument/didChange", did_change(&uri, 3, &k));
    // Notifications are handled concurrently: the edit may be published before the file
    // event is applied, and the document is published again after it.
    s.wait_for(|m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri.as_str()
            && m["params"]["version"] == json!(3)
            && !z_unknown(&m["params"]["diagnostics"])
    });
    assert_eq!(s.stop(), Some(0));
}

/// Whether `path` was read since [`AccessProbe::new`] (by its access time, which the file
/// system updates on the first read after the time is set back). `None` where the file system
/// does not keep access times.
struct AccessProbe(std::path::PathBuf);

const LONG_AGO: Duration = Duration::from_secs(1_000_000_000);

impl AccessProbe {
    fn new(path: &Path) -> AccessProbe {
        let file = std::fs::File::options()
            .write(true)
            .open(path)
            .expect("open");
        let then = std::time::SystemTime::UNIX_EPOCH + LONG_AGO;
        file.set_times(std::fs::FileTimes::new().set_accessed(then))
            .expect("set atime");
        AccessProbe(path.to_path_buf())
    }

    fn read_since(&self) -> bool {
        let accessed = std::fs::metadata(&self.0).and_then(|m| m.accessed());
        accessed.is_ok_and(|t| t > std::time::SystemTime::UNIX_EPOCH + LONG_AGO)
    }

    /// Whether reads show at all here (a file of our own, read by us).
    fn works(dir: &Path) -> bool {
        let control = dir.join("control.txt");
        std::fs::write(&control, "x").expect("write");
        let probe = AccessProbe::new(&control);
        let _ = std::fs::read(&control);
        probe.read_since()
    }
}

#[test]
fn an_untitled_document_is_never_looked_for_on_disk() {
    // The server's working directory holds a crate that declares `Z`.
    let (dir, k) = workspace();
    std::fs::write(dir.path().join("src/decls.rs"), "axes![Z = 4];\n").expect("write");
    let probes: Vec<AccessProbe> = ["Cargo.toml", "src/lib.rs", "src/decls.rs"]
        .iter()
        .map(|f| AccessProbe::new(&dir.path().join(f)))
        .collect();
    let mut s = StdioServer::start_in(dir.path());
    s.initialize(Value::Null);
    let uri = "untitled:Untitled-1";
    s.notify("textDocument/didOpen", did_open(uri, 1, &k));
    assert!(
        z_unknown(&s.diagnostics(uri, 1)),
        "the working directory's crate was used"
    );
    assert_eq!(s.stop(), Some(0));
    if AccessProbe::works(dir.path()) {
        for p in &probes {
            assert!(!p.read_since(), "{} was read", p.0.display());
        }
    } else {
        eprintln!("this file system keeps no access times: reads not checked");
    }
}

#[cfg(unix)]
fn mkfifo(path: &Path) {
    let status = Command::new("mkfifo").arg(path).status().expect("mkfifo");
    assert!(status.success());
}

#[cfg(unix)]
#[test]
fn fifos_and_endless_files_in_the_workspace_block_and_grow_nothing() {
    let (dir, k) = workspace();
    let root = dir.path().canonicalize().expect("root");
    mkfifo(&root.join("visa-lint.toml"));
    mkfifo(&root.join("src/pipe.rs"));
    std::os::unix::fs::symlink("/dev/zero", root.join("src/zero.rs")).expect("symlink");
    let mut s = StdioServer::start();
    let started = Instant::now();
    s.initialize_at(&root);
    let uri = file_uri(&root.join("src/k.rs"));
    s.notify("textDocument/didOpen", did_open(&uri, 1, &k));
    s.diagnostics(&uri, 1);
    for name in ["src/pipe.rs", "src/zero.rs", "visa-lint.toml"] {
        let path = root.join(name);
        watched(&mut s, &path);
        let other = format!("file://{}", path.display());
        s.notify("textDocument/didOpen", did_open(&other, 1, "fn f() {}\n"));
        s.notify(
            "textDocument/didClose",
            json!({"textDocument": {"uri": other}}),
        );
    }
    s.notify("workspace/didChangeConfiguration", json!({"settings": {}}));
    s.notify("textDocument/didChange", did_change(&uri, 2, &k));
    s.diagnostics(&uri, 2);
    assert!(started.elapsed() < Duration::from_secs(20));
    let rss = s.rss_kb().unwrap_or(0);
    assert!(rss < 300_000, "{rss} kB");
    assert_eq!(s.stop(), Some(0));
}

/// The rule fixtures, sorted.
fn rule_fixtures() -> Vec<std::path::PathBuf> {
    let mut sources: Vec<_> =
        std::fs::read_dir(Path::new(env!("CARGO_MANIFEST_DIR")).join("../fixtures/rules"))
            .expect("fixtures")
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| p.extension().is_some_and(|e| e == "rs"))
            .collect();
    sources.sort();
    sources
}

/// A 2,000-line file of the rule fixtures, each in a module of its own: many diagnostics, and
/// a whole-file code action of about 0.1 MB.
fn big_file() -> String {
    let sources = rule_fixtures();
    let mut big = String::new();
    let mut i = 0;
    while big.lines().count() < 2000 {
        let t = std::fs::read_to_string(&sources[i % sources.len()]).expect("read");
        big.push_str(&format!("mod m{i} {{\n{t}}}\n"));
        i += 1;
    }
    big
}

fn rss_kb(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        })
        .unwrap_or(0)
}

/// Reads `stdout` until `needle` has been seen (keeping only a tail of what was read).
fn read_until(stdout: &mut impl Read, needle: &str, deadline: Instant) {
    let mut seen = Vec::new();
    let mut buf = vec![0; 1 << 16];
    while !String::from_utf8_lossy(&seen).contains(needle) {
        assert!(Instant::now() < deadline, "`{needle}` never came");
        let n = stdout.read(&mut buf).expect("read");
        assert!(n > 0, "the server ended");
        seen.extend_from_slice(&buf[..n]);
        if seen.len() > 1 << 20 {
            seen.drain(..seen.len() - (1 << 16));
        }
    }
}

#[test]
fn replies_a_client_does_not_read_are_held_back_not_buffered() {
    let mut child = Command::new(binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("visa-lsp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let uri = scratch_uri("unread.rs");
    let message = |id: Option<i64>, method: &str, params: Value| {
        let mut m = json!({"jsonrpc": "2.0", "method": method, "params": params});
        if let Some(id) = id {
            m["id"] = json!(id);
        }
        frame(m.to_string().as_bytes())
    };
    // A deadline against a hang, not a timing: a debug build on a loaded two-core machine
    // has taken over two minutes for the 1,500 replies.
    let deadline = Instant::now() + Duration::from_secs(600);
    let mut start = message(Some(0), "initialize", initialize_params(Value::Null));
    start.extend(message(None, "initialized", json!({})));
    start.extend(message(
        None,
        "textDocument/didOpen",
        did_open(&uri, 1, &big_file()),
    ));
    stdin.write_all(&start).expect("write");
    read_until(&mut stdout, "publishDiagnostics", deadline);
    let before = rss_kb(child.id());
    // 1,500 whole-file code actions (about 180 MB of replies), by a writer that may block:
    // the server stops reading when its replies are not read.
    let whole = json!({"textDocument": {"uri": uri},
        "range": {"start": {"line": 0, "character": 0}, "end": {"line": 99999, "character": 0}},
        "context": {"diagnostics": []}});
    let writer = std::thread::spawn(move || {
        for id in 1..=1500 {
            let m = message(Some(id), "textDocument/codeAction", whole.clone());
            if stdin.write_all(&m).is_err() {
                break;
            }
        }
        stdin
    });
    let mut peak = before;
    for _ in 0..100 {
        std::thread::sleep(Duration::from_millis(100));
        peak = peak.max(rss_kb(child.id()));
    }
    // Now read everything: every request is answered, and the writer finishes.
    read_until(&mut stdout, "\"id\":1500", deadline);
    let stdin = writer.join().expect("writer");
    drop(stdin);
    let _ = child.kill();
    let _ = child.wait();
    assert!(
        peak < before + 100_000,
        "resident memory grew from {before} kB to {peak} kB while replies were not read"
    );
}

#[test]
fn two_hundred_documents_opened_at_once_each_end_with_their_latest_diagnostics() {
    let mut s = StdioServer::start();
    s.initialize(Value::Null);
    let sources = rule_fixtures();
    let mut docs = vec![(scratch_uri("big.rs"), big_file())];
    for n in 0..200 {
        let t = std::fs::read_to_string(&sources[n % sources.len()]).expect("read");
        docs.push((scratch_uri(&format!("doc{n}.rs")), t));
    }
    for (uri, text) in &docs {
        s.notify("textDocument/didOpen", did_open(uri, 1, text));
    }
    // A second round: the first twenty edited at once, before anything was published.
    for (uri, text) in docs.iter().take(20) {
        s.notify("textDocument/didChange", did_change(uri, 2, text));
    }
    for (n, (uri, _)) in docs.iter().enumerate() {
        s.diagnostics(uri, if n < 20 { 2 } else { 1 });
    }
    assert_eq!(s.stop(), Some(0));
}

#[test]
fn a_client_that_goes_away_ends_the_session() {
    let mut child = Command::new(binary())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("visa-lsp starts");
    let mut stdin = child.stdin.take().expect("stdin");
    let mut stdout = child.stdout.take().expect("stdout");
    let init = json!({"jsonrpc": "2.0", "id": 0, "method": "initialize",
                      "params": initialize_params(Value::Null)});
    stdin
        .write_all(&frame(init.to_string().as_bytes()))
        .expect("write");
    read_until(
        &mut stdout,
        "capabilities",
        Instant::now() + Duration::from_secs(30),
    );
    // The client stops reading for good, sends more, then closes its end.
    drop(stdout);
    let (_, text) = fixture("fixtures/rules/CAP-003.rs");
    let uri = scratch_uri("gone.rs");
    let mut more = frame(
        json!({"jsonrpc": "2.0", "method": "initialized", "params": {}})
            .to_string()
            .as_bytes(),
    );
    more.extend(frame(
        json!({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": did_open(&uri, 1, &text)})
            .to_string()
            .as_bytes(),
    ));
    for id in 1..2000 {
        let hover = json!({"jsonrpc": "2.0", "id": id, "method": "textDocument/hover",
                           "params": position(&uri, 0, 0)});
        more.extend(frame(hover.to_string().as_bytes()));
    }
    let _ = stdin.write_all(&more);
    drop(stdin);
    let deadline = Instant::now() + Duration::from_secs(20);
    while child.try_wait().ok().flatten().is_none() {
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("visa-lsp did not end after its client went away");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}
