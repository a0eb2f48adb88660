//! Helpers for the language server's tests: an in-process client over `LspService` and a
//! stdio client over the built `visa-lsp` binary, both speaking JSON values.

#![allow(dead_code)] // each test file uses its own part

pub mod inproc;

use serde_json::{Value, json};
use std::io::{BufRead, BufReader, Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

pub fn fixture(rel: &str) -> (String, String) {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(rel);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{rel}: {e}"));
    (file_uri(&path), text)
}

pub fn file_uri(path: &Path) -> String {
    let path = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    format!("file://{}", path.display())
}

/// A URI for a document that is not on disk.
pub fn scratch_uri(name: &str) -> String {
    format!("file:///scratch/{name}")
}

pub fn initialize_params(options: Value) -> Value {
    json!({
        "processId": null,
        "rootUri": null,
        "capabilities": {},
        "initializationOptions": options,
    })
}

pub fn did_open(uri: &str, version: i32, text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "languageId": "rust", "version": version, "text": text}})
}

pub fn did_change(uri: &str, version: i32, text: &str) -> Value {
    json!({"textDocument": {"uri": uri, "version": version}, "contentChanges": [{"text": text}]})
}

pub fn position(uri: &str, line: u32, character: u32) -> Value {
    json!({"textDocument": {"uri": uri}, "position": {"line": line, "character": character}})
}

/// The 0-based (line, UTF-16 column) of the first occurrence of `needle` in `text`.
pub fn find(text: &str, needle: &str) -> (u32, u32) {
    let at = text
        .find(needle)
        .unwrap_or_else(|| panic!("`{needle}` not in text"));
    let line_start = text[..at].rfind('\n').map_or(0, |i| i + 1);
    let line = text[..at].matches('\n').count() as u32;
    (line, text[line_start..at].encode_utf16().count() as u32)
}

/// Applies LSP text edits (UTF-16 ranges) to a text.
pub fn apply_edits(text: &str, edits: &[Value]) -> String {
    let offset = |pos: &Value| -> usize {
        let line = pos["line"].as_u64().unwrap_or(0) as usize;
        let ch = pos["character"].as_u64().unwrap_or(0) as usize;
        let start: usize = text.split_inclusive('\n').take(line).map(str::len).sum();
        let mut units = 0;
        for (i, c) in text[start..].char_indices() {
            if units >= ch || c == '\n' {
                return start + i;
            }
            units += c.len_utf16();
        }
        text.len()
    };
    let mut spans: Vec<(usize, usize, String)> = edits
        .iter()
        .map(|e| {
            (
                offset(&e["range"]["start"]),
                offset(&e["range"]["end"]),
                e["newText"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect();
    spans.sort_by_key(|s| std::cmp::Reverse(s.0));
    let mut out = text.to_string();
    for (s, e, t) in spans {
        out.replace_range(s..e, &t);
    }
    out
}

/// Diagnostics as one line each: `line:col-line:col SEVERITY CODE message`.
pub fn render_diagnostics(diags: &Value) -> String {
    let mut out = String::new();
    for d in diags.as_array().into_iter().flatten() {
        let r = &d["range"];
        out.push_str(&format!(
            "{}:{}-{}:{} {} {} {}\n",
            r["start"]["line"],
            r["start"]["character"],
            r["end"]["line"],
            r["end"]["character"],
            d["severity"],
            d["code"].as_str().unwrap_or("?"),
            d["message"].as_str().unwrap_or("")
        ));
    }
    out
}

/// A `visa-lsp` process spoken to over stdio, with a thread reading its messages.
pub struct StdioServer {
    pub child: Child,
    stdin: ChildStdin,
    messages: mpsc::Receiver<Value>,
    /// Messages read but not yet asked for.
    backlog: Vec<Value>,
    next_id: i64,
}

pub fn binary() -> PathBuf {
    std::env::var_os("VISA_LSP_TEST_BIN").map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_visa-lsp")),
        PathBuf::from,
    )
}

impl StdioServer {
    pub fn start() -> StdioServer {
        StdioServer::start_in(Path::new("."))
    }

    /// A server started with `dir` as its working directory.
    pub fn start_in(dir: &Path) -> StdioServer {
        let mut child = Command::new(binary())
            .current_dir(dir)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("visa-lsp starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let mut r = BufReader::new(stdout);
            loop {
                let mut len = None;
                loop {
                    let mut line = String::new();
                    if r.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let line = line.trim_end();
                    if line.is_empty() {
                        break;
                    }
                    if let Some(v) = line.strip_prefix("Content-Length:") {
                        len = v.trim().parse::<usize>().ok();
                    }
                }
                let Some(len) = len else { return };
                let mut body = vec![0; len];
                if r.read_exact(&mut body).is_err() {
                    return;
                }
                match serde_json::from_slice(&body) {
                    Ok(v) => {
                        if tx.send(v).is_err() {
                            return;
                        }
                    }
                    Err(_) => return,
                }
            }
        });
        StdioServer {
            child,
            stdin,
            messages: rx,
            backlog: Vec::new(),
            next_id: 1,
        }
    }

    /// Writes raw bytes to the server.
    pub fn send_raw(&mut self, bytes: &[u8]) {
        self.stdin.write_all(bytes).expect("write to visa-lsp");
        self.stdin.flush().expect("flush");
    }

    pub fn send(&mut self, msg: &Value) {
        let body = msg.to_string();
        let framed = format!("Content-Length: {}\r\n\r\n{body}", body.len());
        self.send_raw(framed.as_bytes());
    }

    pub fn notify(&mut self, method: &str, params: Value) {
        self.send(&json!({"jsonrpc": "2.0", "method": method, "params": params}));
    }

    /// Sends a request; returns its id.
    pub fn request_async(&mut self, method: &str, params: Value) -> i64 {
        let id = self.next_id;
        self.next_id += 1;
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}));
        id
    }

    /// Sends a request and waits for its response (the whole response object).
    pub fn request(&mut self, method: &str, params: Value) -> Value {
        let id = self.request_async(method, params);
        self.wait_for(|m| m["id"] == json!(id) && m.get("method").is_none())
    }

    /// The next message satisfying `pred` (others stay in the backlog), within 30 s.
    pub fn wait_for(&mut self, pred: impl Fn(&Value) -> bool) -> Value {
        self.wait_for_what("a message", pred)
    }

    /// [`Self::wait_for`], naming `what` it waits for when it times out.
    pub fn wait_for_what(&mut self, what: &str, pred: impl Fn(&Value) -> bool) -> Value {
        if let Some(i) = self.backlog.iter().position(&pred) {
            return self.backlog.remove(i);
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.messages.recv_timeout(left) {
                Ok(m) if pred(&m) => return m,
                Ok(m) => self.backlog.push(m),
                Err(e) => panic!(
                    "no {what} from visa-lsp: {e}; backlog {}",
                    Value::from(self.backlog.clone())
                ),
            }
        }
    }

    /// The diagnostics published for `uri` at `version`.
    pub fn diagnostics(&mut self, uri: &str, version: i32) -> Value {
        let what = format!("the diagnostics of {uri} at version {version}");
        let m = self.wait_for_what(&what, |m| {
            m["method"] == "textDocument/publishDiagnostics"
                && m["params"]["uri"] == uri
                && m["params"]["version"] == json!(version)
        });
        m["params"]["diagnostics"].clone()
    }

    /// Every message received so far that satisfies `pred`, waiting `quiet` for more.
    pub fn drain(&mut self, quiet: Duration) -> Vec<Value> {
        while let Ok(m) = self.messages.recv_timeout(quiet) {
            self.backlog.push(m);
        }
        std::mem::take(&mut self.backlog)
    }

    pub fn initialize(&mut self, options: Value) -> Value {
        let r = self.request("initialize", initialize_params(options));
        self.notify("initialized", json!({}));
        r
    }

    /// `initialize` with `root` as the workspace folder.
    pub fn initialize_at(&mut self, root: &Path) -> Value {
        let mut params = initialize_params(Value::Null);
        params["rootUri"] = json!(file_uri(root));
        let r = self.request("initialize", params);
        self.notify("initialized", json!({}));
        r
    }

    /// Waits up to 10 s for the process to end by itself; its exit status's code.
    pub fn wait_exit(mut self) -> Option<i32> {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return status.code();
            }
            if Instant::now() > deadline {
                let _ = self.child.kill();
                panic!("visa-lsp did not exit");
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// Whether the process is still running.
    pub fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// `shutdown` then `exit`; returns the exit status's code.
    pub fn stop(mut self) -> Option<i32> {
        let r = self.request("shutdown", Value::Null);
        assert_eq!(r["result"], Value::Null, "shutdown answers null: {r}");
        self.notify("exit", Value::Null);
        self.wait_exit()
    }

    /// The resident memory of the process in kB (Linux).
    pub fn rss_kb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }
}

impl Drop for StdioServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
