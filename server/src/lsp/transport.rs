//! The transport: LSP's framing and JSON-RPC, read and written by visa-lsp itself, with the
//! protocol library (tower-lsp-server) given only messages it can take.
//!
//! - **Input**, on a thread of its own: frames are read with a bounded header line and a size
//!   cap ([`MAX_MESSAGE_BYTES`]); each body is decoded and validated as a JSON-RPC message
//!   ([`classify`]) before the library sees it. Whatever cannot be taken is answered with an
//!   error reply (-32700 or -32600, with the message's id when it has a usable one) and the
//!   session goes on. A frame whose length is wrong is recovered from: the reader finds the
//!   next `Content-Length` header, wherever in a line it starts, and a body that holds a whole
//!   message followed by more bytes gives those bytes back to the stream.
//! - **Lifecycle**: a request whose method starts with `$/` is answered MethodNotFound (the
//!   library ignores it); `exit` ends the session with status 0 after `shutdown`, 1 otherwise.
//! - **Output**, on a thread of its own: whole frames through a bounded queue
//!   ([`OUTPUT_QUEUE`]). A client that does not read its input holds the server back (the
//!   queue fills, the server stops taking requests, the input thread stops reading): memory
//!   stays bounded.
//! - **Serving** ([`serve`]): tower-lsp-server's own loop, driven from the decoded messages
//!   (its `Server` decodes bytes itself and ends the session at the first message it cannot
//!   decode); messages that arrive while `initialize` is handled wait for its answer (the
//!   library would drop them).

use futures::channel::mpsc as futures_mpsc;
use futures::{SinkExt, StreamExt, future, stream, stream_select};
use serde::Serialize;
use serde_json::Value;
use std::io::{self, BufRead, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use tokio::sync::mpsc;
use tower::Service;
use tower_lsp_server::jsonrpc::{Error, ErrorCode, Id, Request, Response};
use tower_lsp_server::{ClientSocket, LanguageServer, LspService};

/// The largest message body taken (32 MiB: a 10 MB document, escaped, fits twice). A longer
/// one is answered with an error and skipped by finding the next header.
pub const MAX_MESSAGE_BYTES: u64 = 32 << 20;
/// The longest header line kept; a longer line keeps its last bytes (where the next header
/// of a desynchronised stream is found).
const MAX_HEADER_LINE: usize = 8 << 10;
/// Decoded messages waiting for the server at most.
pub const INPUT_QUEUE: usize = 16;
/// Encoded frames waiting for the client to read them at most.
pub const OUTPUT_QUEUE: usize = 64;
/// Requests the server works on at once (tower-lsp-server's default).
const CONCURRENCY: usize = 4;
/// Requests waiting for one of those places at most.
const TASK_QUEUE: usize = 64;

/// A message the library can take.
pub enum Incoming {
    Request(Request),
    Response(Response),
}

/// What becomes of one body.
enum Decoded {
    /// A message for the server.
    Message(Incoming),
    /// An error reply instead.
    Reply(Box<Response>),
    /// A malformed response from the client: nobody waits for it.
    Dropped,
}

fn reply(response: Response) -> Decoded {
    Decoded::Reply(Box::new(response))
}

/// A frame for the output thread; `None` tells it to flush and end.
pub type OutFrame = Option<Vec<u8>>;

/// What the input thread has seen of the protocol's lifecycle.
#[derive(Default)]
pub struct Lifecycle {
    shutdown: AtomicBool,
    exit: AtomicBool,
}

impl Lifecycle {
    /// The process's exit status: 0 after `shutdown` then `exit`, 1 for `exit` without
    /// `shutdown` or an input that ended without `exit`.
    pub fn exit_code(&self) -> i32 {
        let clean = self.shutdown.load(Ordering::SeqCst) && self.exit.load(Ordering::SeqCst);
        if clean { 0 } else { 1 }
    }
}

/// The input stream with room to give bytes back.
struct Input<R> {
    given_back: Vec<u8>,
    at: usize,
    reader: io::BufReader<R>,
}

impl<R: Read> Input<R> {
    fn new(reader: R) -> Input<R> {
        Input {
            given_back: Vec::new(),
            at: 0,
            // Room for a typical didChange of a large file in a few reads.
            reader: io::BufReader::with_capacity(1 << 16, reader),
        }
    }

    /// Puts `bytes` before whatever has not been read yet.
    fn give_back(&mut self, bytes: &[u8]) {
        let mut joined = bytes.to_vec();
        joined.extend_from_slice(&self.given_back[self.at..]);
        self.given_back = joined;
        self.at = 0;
    }
}

impl<R: Read> Read for Input<R> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let n = {
            let available = self.fill_buf()?;
            let n = available.len().min(buf.len());
            buf[..n].copy_from_slice(&available[..n]);
            n
        };
        self.consume(n);
        Ok(n)
    }
}

impl<R: Read> BufRead for Input<R> {
    fn fill_buf(&mut self) -> io::Result<&[u8]> {
        if self.at < self.given_back.len() {
            return Ok(&self.given_back[self.at..]);
        }
        self.reader.fill_buf()
    }

    fn consume(&mut self, n: usize) {
        if self.at < self.given_back.len() {
            self.at += n;
            if self.at >= self.given_back.len() {
                self.given_back.clear();
                self.at = 0;
            }
        } else {
            self.reader.consume(n);
        }
    }
}

/// One line of input without its line break, at most [`MAX_HEADER_LINE`] bytes (a longer one
/// keeps its end); `None` at the end of the input.
fn header_line(input: &mut impl BufRead) -> io::Result<Option<Vec<u8>>> {
    let mut line = Vec::new();
    loop {
        let available = input.fill_buf()?;
        if available.is_empty() {
            return Ok((!line.is_empty()).then_some(line));
        }
        let (taken, done) = match memchr_newline(available) {
            Some(i) => (i + 1, true),
            None => (available.len(), false),
        };
        line.extend_from_slice(&available[..taken]);
        input.consume(taken);
        if line.len() > 2 * MAX_HEADER_LINE {
            line.drain(..line.len() - MAX_HEADER_LINE);
        }
        if done {
            while line.last().is_some_and(|b| *b == b'\n' || *b == b'\r') {
                line.pop();
            }
            return Ok(Some(line));
        }
    }
}

fn memchr_newline(bytes: &[u8]) -> Option<usize> {
    bytes.iter().position(|b| *b == b'\n')
}

/// The value of a `Content-Length` header in `line`, wherever the header starts in it (after
/// the tail of a frame whose length was too short); `Err` for a value that is not a length.
fn content_length(line: &[u8]) -> Option<Result<u64, ()>> {
    const NAME: &[u8] = b"content-length:";
    let start = line
        .windows(NAME.len())
        .rposition(|w| w.eq_ignore_ascii_case(NAME))?;
    let value = String::from_utf8_lossy(&line[start + NAME.len()..]);
    Some(value.trim().parse::<u64>().map_err(|_| ()))
}

/// What the next header block announced.
#[derive(Debug, PartialEq)]
enum Frame {
    Body(Vec<u8>),
    /// Lines without a usable `Content-Length` up to a blank line, or a length that is not a
    /// number.
    NoLength,
    /// A length over [`MAX_MESSAGE_BYTES`]: the body is not read (the next header is found).
    TooLarge(u64),
}

/// The next frame; `None` at the end of the input.
fn next_frame(input: &mut impl BufRead) -> io::Result<Option<Frame>> {
    let mut length: Option<Result<u64, ()>> = None;
    let mut junk = false;
    loop {
        let Some(line) = header_line(input)? else {
            return Ok(None);
        };
        if line.is_empty() {
            if length.is_some() {
                break;
            }
            if junk {
                return Ok(Some(Frame::NoLength));
            }
            continue; // blank lines between messages
        }
        match content_length(&line) {
            Some(found) => length = Some(found),
            None => junk |= length.is_none(),
        }
    }
    Ok(Some(match length {
        Some(Ok(n)) if n > MAX_MESSAGE_BYTES => Frame::TooLarge(n),
        Some(Ok(n)) => {
            // At most the cap: a length that is never sent costs no more than that.
            let mut body = Vec::with_capacity(n as usize);
            input.take(n).read_to_end(&mut body)?;
            if (body.len() as u64) < n {
                return Ok(None); // the input ended inside the body
            }
            Frame::Body(body)
        }
        _ => Frame::NoLength,
    }))
}

fn error_reply(id: Id, code: ErrorCode, message: impl Into<String>) -> Response {
    Response::from_error(
        id,
        Error {
            code,
            message: message.into().into(),
            data: None,
        },
    )
}

fn invalid(id: Id, why: &str) -> Response {
    error_reply(
        id,
        ErrorCode::InvalidRequest,
        format!("Invalid request: {why}"),
    )
}

/// A JSON-RPC id the library can take (`None` for anything else).
fn id_of(value: &Value) -> Option<Id> {
    match value {
        Value::Null => Some(Id::Null),
        Value::String(s) => Some(Id::String(s.clone())),
        Value::Number(n) => n.as_i64().map(Id::Number),
        _ => None,
    }
}

/// A decoded body as the library would take it, or the reply it gets instead.
fn classify(value: Value) -> Decoded {
    let Value::Object(map) = value else {
        return reply(invalid(Id::Null, "not a JSON-RPC message object"));
    };
    let id = match map.get("id") {
        None => None,
        Some(v) => match id_of(v) {
            Some(id) => Some(id),
            None => return reply(invalid(Id::Null, "id must be an integer or a string")),
        },
    };
    let reply_id = id.clone().unwrap_or(Id::Null);
    if map.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return reply(invalid(reply_id, "jsonrpc must be \"2.0\""));
    }
    match map.get("method") {
        Some(Value::String(method)) => {
            if method.starts_with("$/") && id.is_some() {
                let why = format!("Method not found: {method}");
                return reply(error_reply(reply_id, ErrorCode::MethodNotFound, why));
            }
            if map
                .get("params")
                .is_some_and(|p| !(p.is_object() || p.is_array() || p.is_null()))
            {
                return reply(invalid(reply_id, "params must be an object or an array"));
            }
            match serde_json::from_value::<Request>(Value::Object(map)) {
                Ok(req) => Decoded::Message(Incoming::Request(req)),
                Err(e) => reply(invalid(reply_id, &e.to_string())),
            }
        }
        Some(_) => reply(invalid(reply_id, "method must be a string")),
        None if id.is_some() && (map.contains_key("result") || map.contains_key("error")) => {
            match serde_json::from_value::<Response>(Value::Object(map)) {
                Ok(res) => Decoded::Message(Incoming::Response(res)),
                Err(_) => Decoded::Dropped,
            }
        }
        None => reply(invalid(reply_id, "neither a request nor a response")),
    }
}

/// Decodes one body: the message, or the reply it gets instead, and the bytes after the first
/// JSON value when there are any (a length that was too long took them from the next frame).
fn decode(body: &[u8]) -> (Decoded, &[u8]) {
    let mut values = serde_json::Deserializer::from_slice(body).into_iter::<Value>();
    let parse_error = |message: String| {
        let message = format!("Parse error: {message}");
        reply(error_reply(Id::Null, ErrorCode::ParseError, message))
    };
    match values.next() {
        Some(Ok(value)) => {
            let rest = &body[values.byte_offset()..];
            (classify(value), rest.trim_ascii_start())
        }
        // A length that was too long may have taken the start of the next frame: it goes back.
        Some(Err(e)) => (parse_error(e.to_string()), next_header(body)),
        None => (parse_error("empty body".to_string()), &[]),
    }
}

/// The bytes of `body` from where a `Content-Length` header starts in it on, whole or cut by
/// the body's end (none if no header starts in it).
fn next_header(body: &[u8]) -> &[u8] {
    const NAME: &[u8] = b"content-length:";
    let starts_header = |at: usize| {
        let rest = &body[at..];
        let n = rest.len().min(NAME.len());
        rest[..n].eq_ignore_ascii_case(&NAME[..n])
    };
    (0..body.len())
        .find(|&at| starts_header(at))
        .map_or(&[], |at| &body[at..])
}

/// Encodes a message as one frame.
pub fn frame(message: &impl Serialize) -> Vec<u8> {
    let body = serde_json::to_vec(message).unwrap_or_default();
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(&body);
    out
}

/// Reads, decodes and checks messages from `input` until it ends or `exit` arrives
/// (blocking: run it on a thread of its own). Messages go to the server, replies to `out`.
pub fn read_input(
    input: impl Read,
    to_server: mpsc::Sender<Incoming>,
    out: mpsc::Sender<OutFrame>,
    lifecycle: Arc<Lifecycle>,
) {
    let mut input = Input::new(input);
    while let Ok(Some(next)) = next_frame(&mut input) {
        let decoded = match next {
            Frame::Body(body) => {
                let (decoded, rest) = decode(&body);
                if !rest.is_empty() {
                    input.give_back(rest);
                }
                decoded
            }
            Frame::NoLength => reply(error_reply(
                Id::Null,
                ErrorCode::ParseError,
                "Parse error: a header without a usable Content-Length",
            )),
            Frame::TooLarge(n) => reply(error_reply(
                Id::Null,
                ErrorCode::InvalidRequest,
                format!("Invalid request: a message of {n} bytes (at most {MAX_MESSAGE_BYTES})"),
            )),
        };
        let sent = match decoded {
            Decoded::Message(Incoming::Request(req)) => {
                let method = req.method().to_string();
                if method == "shutdown" && req.id().is_some() {
                    lifecycle.shutdown.store(true, Ordering::SeqCst);
                }
                let exit = method == "exit";
                if exit {
                    lifecycle.exit.store(true, Ordering::SeqCst);
                }
                // Waits while the server has `INPUT_QUEUE` messages unread.
                let sent = to_server.blocking_send(Incoming::Request(req)).is_ok();
                sent && !exit
            }
            Decoded::Message(response) => to_server.blocking_send(response).is_ok(),
            Decoded::Reply(response) => out.blocking_send(Some(frame(&response))).is_ok(),
            Decoded::Dropped => true,
        };
        if !sent {
            break;
        }
    }
    // Dropping `to_server` ends the server's input.
}

/// Writes frames to `output` until told to end or the client stops reading (blocking: run it
/// on a thread of its own); flushes whenever the queue is empty.
pub fn write_output(mut frames: mpsc::Receiver<OutFrame>, mut output: impl Write) {
    while let Some(Some(first)) = frames.blocking_recv() {
        if output.write_all(&first).is_err() {
            return;
        }
        loop {
            match frames.try_recv() {
                Ok(Some(next)) => {
                    if output.write_all(&next).is_err() {
                        return;
                    }
                }
                Ok(None) => {
                    let _ = output.flush();
                    return;
                }
                Err(_) => break,
            }
        }
        if output.flush().is_err() {
            return;
        }
    }
    let _ = output.flush();
}

#[derive(Serialize)]
#[serde(untagged)]
enum Outgoing {
    Response(Response),
    Request(Request),
}

/// The notifications handled one after another, in the client's order: those that change
/// a document's text or the files read from disk. Their handlers only store what changed
/// (the analysis runs on) and never wait for the client.
const ORDERED: [&str; 5] = [
    "textDocument/didOpen",
    "textDocument/didChange",
    "textDocument/didClose",
    "textDocument/didSave",
    "workspace/didChangeWatchedFiles",
];

fn is_ordered(method: &str) -> bool {
    ORDERED.contains(&method)
}

/// Serves `service` with the messages of `input` until `exit` or the end of the input:
/// requests run up to [`CONCURRENCY`] at a time; replies and the server's own requests and
/// notifications go to `output` as frames. The [`ORDERED`] notifications are awaited before
/// the next message is taken.
pub async fn serve<S: LanguageServer>(
    mut service: LspService<S>,
    socket: ClientSocket,
    mut input: mpsc::Receiver<Incoming>,
    output: mpsc::Sender<OutFrame>,
) {
    let (client_requests, mut client_responses) = socket.split();
    let (client_requests, client_abort) = stream::abortable(client_requests);
    let (mut tasks, queued) = futures_mpsc::channel(TASK_QUEUE);
    let replies = queued
        .buffer_unordered(CONCURRENCY)
        .filter_map(future::ready)
        .map(Outgoing::Response);
    let printing = async {
        let mut outgoing = stream_select!(replies, client_requests.map(Outgoing::Request));
        let mut open = true;
        while let Some(message) = outgoing.next().await {
            // Once the client stops reading for good (stdout closed), replies are still
            // taken and dropped, so that the requests waiting behind them end too.
            open = open && output.send(Some(frame(&message))).await.is_ok();
        }
    };
    let reading = async {
        while let Some(message) = input.recv().await {
            match message {
                Incoming::Request(req) => {
                    if future::poll_fn(|cx| service.poll_ready(cx)).await.is_err() {
                        break; // exited
                    }
                    let (exit, initialize) = (req.method() == "exit", req.method() == "initialize");
                    let in_order = initialize || (req.id().is_none() && is_ordered(req.method()));
                    let reply = service.call(req);
                    let reply: futures::future::BoxFuture<'static, Option<Response>> = if in_order {
                        // Nothing else is handed over before `initialize` is answered: the
                        // library drops what arrives meanwhile (a client that sends
                        // `initialized` and its documents at once would lose them). Nor
                        // before a document's open, edit or close has taken effect: run side
                        // by side, a close could undo the open that followed it.
                        let done = reply.await.ok().flatten();
                        Box::pin(future::ready(done))
                    } else {
                        Box::pin(async move { reply.await.ok().flatten() })
                    };
                    if tasks.send(reply).await.is_err() || exit {
                        break;
                    }
                }
                Incoming::Response(res) => {
                    if client_responses.send(res).await.is_err() {
                        break;
                    }
                }
            }
        }
        tasks.disconnect();
        client_abort.abort();
    };
    futures::join!(printing, reading);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn framed(body: &str) -> String {
        format!("Content-Length: {}\r\n\r\n{body}", body.len())
    }

    /// Runs the input thread's loop over `input`: what reached the server (methods, or
    /// `response` for a response) and the replies' error codes.
    fn run(input: &[u8]) -> (Vec<String>, Vec<i64>, i32) {
        let (to_server, mut server) = mpsc::channel(1024);
        let (out, mut replies) = mpsc::channel(1024);
        let lifecycle = Arc::new(Lifecycle::default());
        read_input(input, to_server, out, lifecycle.clone());
        let mut passed = Vec::new();
        while let Ok(m) = server.try_recv() {
            passed.push(match m {
                Incoming::Request(r) => r.method().to_string(),
                Incoming::Response(_) => "response".to_string(),
            });
        }
        let mut codes = Vec::new();
        while let Ok(Some(f)) = replies.try_recv() {
            let text = String::from_utf8_lossy(&f).into_owned();
            let body = &text[text.find("\r\n\r\n").map_or(0, |i| i + 4)..];
            let v: Value = serde_json::from_str(body).unwrap_or_default();
            codes.push(v["error"]["code"].as_i64().unwrap_or(0));
        }
        (passed, codes, lifecycle.exit_code())
    }

    const HOVER: &str = r#"{"jsonrpc":"2.0","id":1,"method":"textDocument/hover","params":{}}"#;

    #[test]
    fn valid_json_that_is_no_json_rpc_message_is_answered_invalid_request() {
        let mut input = String::new();
        for body in [
            "{}",
            "[]",
            "42",
            "null",
            r#"{"jsonrpc":"2.0","id":9223372036854775808,"method":"x"}"#,
            r#"{"jsonrpc":"1.0","id":1,"method":"x"}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":"x","params":3}"#,
            r#"{"jsonrpc":"2.0","id":[1],"method":"x"}"#,
        ] {
            input.push_str(&framed(body));
        }
        input.push_str(&framed(HOVER));
        let (passed, codes, _) = run(input.as_bytes());
        assert_eq!(passed, ["textDocument/hover"]);
        assert_eq!(codes, [-32600; 9]);
    }

    #[test]
    fn undecodable_bodies_are_answered_parse_error() {
        let deep = format!("{}{}", "[".repeat(5000), "]".repeat(5000));
        let mut input = Vec::new();
        for body in [deep.as_bytes(), b"{not json", b"", b"[1e400]"] {
            input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
            input.extend_from_slice(body);
        }
        let bad_utf8 = b"{\"jsonrpc\":\"2.0\",\"method\":\"x\",\"params\":[\"\xff\xfe\"]}";
        input.extend_from_slice(format!("Content-Length: {}\r\n\r\n", bad_utf8.len()).as_bytes());
        input.extend_from_slice(bad_utf8);
        input.extend_from_slice(framed(HOVER).as_bytes());
        let (passed, codes, _) = run(&input);
        assert_eq!(passed, ["textDocument/hover"]);
        assert_eq!(codes, [-32700; 5]);
    }

    #[test]
    fn wrong_lengths_are_recovered_from_at_the_next_header() {
        let mut input = String::new();
        // Three bytes short: the cut body is answered, its tail skipped up to the next header.
        input.push_str(&format!(
            "Content-Length: {}\r\n\r\n{HOVER}",
            HOVER.len() - 3
        ));
        input.push_str(&framed(HOVER));
        // Too long, and no JSON: what it took from the next frame goes back.
        input.push_str(&format!("Content-Length: {}\r\n\r\nnot json", 8 + 3));
        input.push_str(&framed(HOVER));
        // Three bytes long: the message is served and the bytes it took go back.
        input.push_str(&format!(
            "Content-Length: {}\r\n\r\n{HOVER}",
            HOVER.len() + 3
        ));
        input.push_str(&framed(HOVER));
        // No length, a length that is no number, an absurd one.
        input.push_str("X-Other: 1\r\n\r\n");
        input.push_str("Content-Length: many\r\n\r\n");
        input.push_str("Content-Length: 18446744073709551615\r\n\r\n");
        input.push_str(&framed(HOVER));
        let (passed, codes, _) = run(input.as_bytes());
        assert_eq!(passed, ["textDocument/hover"; 5]);
        assert_eq!(codes, [-32700, -32700, -32700, -32700, -32600]);
    }

    #[test]
    fn a_header_line_that_never_ends_keeps_only_its_tail() {
        let mut input = vec![b'x'; 10 * MAX_HEADER_LINE];
        input.extend_from_slice(framed(HOVER).as_bytes());
        let (passed, codes, _) = run(&input);
        assert_eq!(passed, ["textDocument/hover"]);
        assert!(codes.is_empty());
    }

    #[test]
    fn dollar_requests_are_method_not_found_and_dollar_notifications_pass() {
        let input = [
            framed(r#"{"jsonrpc":"2.0","id":3,"method":"$/unknown"}"#),
            framed(r#"{"jsonrpc":"2.0","method":"$/cancelRequest","params":{"id":1}}"#),
        ]
        .concat();
        let (passed, codes, _) = run(input.as_bytes());
        assert_eq!(passed, ["$/cancelRequest"]);
        assert_eq!(codes, [-32601]);
    }

    #[test]
    fn exit_status_is_zero_only_after_shutdown() {
        let shutdown = framed(r#"{"jsonrpc":"2.0","id":1,"method":"shutdown"}"#);
        let exit = framed(r#"{"jsonrpc":"2.0","method":"exit"}"#);
        let (passed, _, code) = run([shutdown.clone(), exit.clone(), framed(HOVER)]
            .concat()
            .as_bytes());
        assert_eq!((passed.len(), code), (2, 0), "nothing is read after exit");
        assert_eq!(run(exit.as_bytes()).2, 1);
        assert_eq!(
            run(shutdown.as_bytes()).2,
            1,
            "the input ended without exit"
        );
    }

    #[test]
    fn responses_from_the_client_pass_and_malformed_ones_are_dropped() {
        let input = [
            framed(r#"{"jsonrpc":"2.0","id":0,"result":null}"#),
            framed(r#"{"jsonrpc":"2.0","id":0,"error":{"code":"x"}}"#),
        ]
        .concat();
        let (passed, codes, _) = run(input.as_bytes());
        assert_eq!(passed, ["response"]);
        assert!(codes.is_empty());
    }

    #[test]
    fn the_output_thread_writes_whole_frames_and_ends_when_told() {
        let (tx, rx) = mpsc::channel(4);
        tx.try_send(Some(b"one".to_vec())).ok();
        tx.try_send(Some(b"two".to_vec())).ok();
        tx.try_send(None).ok();
        tx.try_send(Some(b"never".to_vec())).ok();
        let mut written = Vec::new();
        write_output(rx, &mut written);
        assert_eq!(written, b"onetwo");
    }
}
