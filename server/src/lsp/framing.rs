//! The transport in front of the protocol library, on two threads of its own.
//!
//! - A guard: tower-lsp-server stops reading its input after the first message it cannot
//!   decode, so a single malformed message would end the session. Here every frame is read and
//!   checked first; a body that is not JSON is answered with a parse error (-32700, id null) and
//!   dropped, a header block without a usable Content-Length is answered the same way and
//!   skipped, and everything else passes through unchanged.
//! - Plain threads: stdin is read, and stdout written, by a thread each with blocking calls.
//!   tokio's own stdin and stdout hand every read and write to its blocking pool and back, a
//!   few thread hand-offs per 65 KB didChange; here a frame crosses one channel each way.

use std::io::{self, BufRead, Write};
use std::pin::Pin;
use std::sync::mpsc as std_mpsc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::mpsc;

/// One frame's body, read from `input`; `Ok(None)` at the end of the input, `Err(())` for a
/// header block without a valid Content-Length.
fn read_frame(input: &mut impl BufRead) -> io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut len: Option<Result<usize, ()>> = None;
    let mut saw_header = false;
    let mut line = Vec::new();
    loop {
        line.clear();
        if input.read_until(b'\n', &mut line)? == 0 {
            return Ok(None);
        }
        let text = String::from_utf8_lossy(&line);
        let text = text.trim_end_matches(['\r', '\n']);
        if text.is_empty() {
            if saw_header {
                break;
            }
            continue; // stray blank lines between messages
        }
        saw_header = true;
        if let Some((name, value)) = text.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            len = Some(value.trim().parse().map_err(|_| ()));
        }
    }
    let Some(Ok(len)) = len else {
        return Ok(Some(Err(())));
    };
    let mut body = vec![0; len];
    input.read_exact(&mut body)?;
    Ok(Some(Ok(body)))
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

const PARSE_ERROR: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// What the output thread writes: the server's bytes, or a reply of the guard.
pub enum Out {
    Server(Vec<u8>),
    Reply(Vec<u8>),
    /// The server has stopped writing: flush and end.
    End,
}

/// Reads frames from `input` until it ends (blocking: run it on a thread of its own); checked
/// frames go to the server, bad ones are answered on `out`.
pub fn filter_input(
    mut input: impl BufRead,
    to_server: mpsc::Sender<Vec<u8>>,
    out: std_mpsc::Sender<Out>,
) {
    while let Ok(Some(frame_body)) = read_frame(&mut input) {
        let sent = match frame_body {
            // Checked for being JSON without building it (the library decodes it next).
            Ok(body) if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok() => {
                // Waits while the server has `INPUT_FRAMES` unread (a flooding client is held
                // back, not buffered without bound).
                to_server.blocking_send(frame(&body)).is_ok()
            }
            _ => out.send(Out::Reply(frame(PARSE_ERROR))).is_ok(),
        };
        if !sent {
            break;
        }
    }
    // Dropping `to_server` ends the server's input.
}

/// How many checked frames wait for the server at most.
pub const INPUT_FRAMES: usize = 64;

/// The server's input: the frames `filter_input` passes on, as a byte stream.
pub struct ChannelReader {
    frames: mpsc::Receiver<Vec<u8>>,
    chunk: Vec<u8>,
    at: usize,
}

impl ChannelReader {
    pub fn new(frames: mpsc::Receiver<Vec<u8>>) -> ChannelReader {
        ChannelReader {
            frames,
            chunk: Vec::new(),
            at: 0,
        }
    }
}

impl AsyncRead for ChannelReader {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let this = &mut *self;
        if this.at >= this.chunk.len() {
            match this.frames.poll_recv(cx) {
                Poll::Ready(Some(chunk)) => {
                    this.chunk = chunk;
                    this.at = 0;
                }
                // The input ended: end of stream.
                Poll::Ready(None) => return Poll::Ready(Ok(())),
                Poll::Pending => return Poll::Pending,
            }
        }
        let rest = &this.chunk[this.at..];
        let n = rest.len().min(buf.remaining());
        buf.put_slice(&rest[..n]);
        this.at += n;
        Poll::Ready(Ok(()))
    }
}

/// The server's output: every write goes to the output thread whole.
pub struct ChannelWriter {
    out: std_mpsc::Sender<Out>,
}

impl ChannelWriter {
    pub fn new(out: std_mpsc::Sender<Out>) -> ChannelWriter {
        ChannelWriter { out }
    }
}

impl AsyncWrite for ChannelWriter {
    fn poll_write(
        self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Poll::Ready(match self.out.send(Out::Server(buf.to_vec())) {
            Ok(()) => Ok(buf.len()),
            Err(_) => Err(io::ErrorKind::BrokenPipe.into()),
        })
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_shutdown(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

impl Drop for ChannelWriter {
    fn drop(&mut self) {
        let _ = self.out.send(Out::End);
    }
}

/// The length of the first whole frame at the start of `bytes`, if it is all there (a header
/// block without a Content-Length counts as a frame of its own, passed on as it is).
fn whole_frame(bytes: &[u8]) -> Option<usize> {
    let end = bytes.windows(4).position(|w| w == b"\r\n\r\n")? + 4;
    let len = String::from_utf8_lossy(&bytes[..end])
        .lines()
        .filter_map(|l| l.split_once(':'))
        .find(|(name, _)| name.trim().eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.trim().parse::<usize>().ok())
        .unwrap_or(0);
    let total = end.checked_add(len)?;
    (bytes.len() >= total).then_some(total)
}

/// Writes the server's frames to `output`, with the guard's replies between them (never inside
/// a frame), until the server stops writing (blocking: run it on a thread of its own).
pub fn merge_output(out: std_mpsc::Receiver<Out>, mut output: impl Write) {
    let mut pending: Vec<u8> = Vec::new();
    'serve: while let Ok(first) = out.recv() {
        // Everything already queued, then one flush.
        let mut next = Some(first);
        while let Some(message) = next {
            match write_out(message, &mut pending, &mut output) {
                Ok(true) => {}
                _ => break 'serve,
            }
            next = out.try_recv().ok();
        }
        if output.flush().is_err() {
            return;
        }
    }
    let _ = output.write_all(&pending);
    let _ = output.flush();
}

/// Writes one message (the server's whole frames so far, or a reply); `false` at the end.
fn write_out(message: Out, pending: &mut Vec<u8>, output: &mut impl Write) -> io::Result<bool> {
    match message {
        Out::Server(bytes) => {
            pending.extend_from_slice(&bytes);
            let mut at = 0;
            while let Some(n) = whole_frame(&pending[at..]) {
                at += n;
            }
            output.write_all(&pending[..at])?;
            pending.drain(..at);
        }
        Out::Reply(bytes) => output.write_all(&bytes)?,
        Out::End => return Ok(false),
    }
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replies_go_between_frames_never_inside_one() {
        let (tx, rx) = std_mpsc::channel();
        let whole = frame(br#"{"a":1}"#);
        let (head, tail) = whole.split_at(10);
        tx.send(Out::Server(head.to_vec())).ok();
        tx.send(Out::Reply(frame(PARSE_ERROR))).ok();
        tx.send(Out::Server(tail.to_vec())).ok();
        tx.send(Out::End).ok();
        let mut written = Vec::new();
        merge_output(rx, &mut written);
        let mut expected = frame(PARSE_ERROR);
        expected.extend_from_slice(&whole);
        assert_eq!(
            String::from_utf8_lossy(&written),
            String::from_utf8_lossy(&expected)
        );
    }

    #[test]
    fn bad_frames_are_answered_and_good_ones_passed_on() {
        let input = b"Content-Length: 7\r\n\r\n{\"a\":1}Content-Length: 3\r\n\r\n{{{X-Other: 1\r\n\r\nContent-Length: 2\r\n\r\n[]";
        let (to_server, mut frames) = mpsc::channel(INPUT_FRAMES);
        let (out, replies) = std_mpsc::channel();
        filter_input(&input[..], to_server, out);
        let mut passed = Vec::new();
        while let Ok(f) = frames.try_recv() {
            passed.push(String::from_utf8_lossy(&f).into_owned());
        }
        assert_eq!(
            passed,
            [
                "Content-Length: 7\r\n\r\n{\"a\":1}",
                "Content-Length: 2\r\n\r\n[]"
            ]
        );
        assert_eq!(replies.try_iter().count(), 2);
    }
}
