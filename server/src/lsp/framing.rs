//! A guard in front of the protocol library: tower-lsp-server stops reading its input after
//! the first message it cannot decode, so a single malformed message would end the session.
//! Here every frame is read and checked first; a body that is not JSON is answered with a
//! parse error (-32700, id null) and dropped, a header block without a usable Content-Length
//! is answered the same way and skipped, and everything else passes through unchanged.

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// One frame's body, read from `input`; `Ok(None)` at the end of the input, `Err(())` for a
/// header block without a valid Content-Length.
async fn read_frame<R: AsyncRead + Unpin>(
    input: &mut BufReader<R>,
) -> std::io::Result<Option<Result<Vec<u8>, ()>>> {
    let mut len: Option<Result<usize, ()>> = None;
    let mut saw_header = false;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).await? == 0 {
            return Ok(None);
        }
        let line = line.trim_end_matches(['\r', '\n']);
        if line.is_empty() {
            if saw_header {
                break;
            }
            continue; // stray blank lines between messages
        }
        saw_header = true;
        if let Some((name, value)) = line.split_once(':')
            && name.trim().eq_ignore_ascii_case("content-length")
        {
            len = Some(value.trim().parse().map_err(|_| ()));
        }
    }
    let Some(Ok(len)) = len else {
        return Ok(Some(Err(())));
    };
    let mut body = vec![0; len];
    input.read_exact(&mut body).await?;
    Ok(Some(Ok(body)))
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut out = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out
}

const PARSE_ERROR: &[u8] =
    br#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}"#;

/// Copies checked frames from `input` to `to_server`; answers bad ones on `replies`.
pub async fn filter_input<R, W>(input: R, mut to_server: W, replies: mpsc::UnboundedSender<Vec<u8>>)
where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut input = BufReader::new(input);
    while let Ok(Some(frame_body)) = read_frame(&mut input).await {
        match frame_body {
            // Checked for being JSON without building it (the library decodes it next).
            Ok(body) if serde_json::from_slice::<serde::de::IgnoredAny>(&body).is_ok() => {
                if to_server.write_all(&frame(&body)).await.is_err() {
                    break;
                }
                let _ = to_server.flush().await;
            }
            _ => {
                if replies.send(frame(PARSE_ERROR)).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to_server.shutdown().await;
}

/// Copies whole frames from the server to `output`, interleaved with `replies` (never inside a
/// frame).
pub async fn merge_output<R, W>(
    from_server: R,
    mut output: W,
    mut replies: mpsc::UnboundedReceiver<Vec<u8>>,
) where
    R: AsyncRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut from_server = BufReader::new(from_server);
    loop {
        let bytes = tokio::select! {
            f = read_frame(&mut from_server) => match f {
                Ok(Some(Ok(body))) => frame(&body),
                _ => break,
            },
            Some(r) = replies.recv() => r,
        };
        if output.write_all(&bytes).await.is_err() {
            break;
        }
        let _ = output.flush().await;
    }
}
