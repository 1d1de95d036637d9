//! Standard input and output, with every line checked before the SDK sees it: a line that is
//! not JSON gets the JSON-RPC parse error (-32700), a `tools/call` whose `arguments` is not an
//! object gets invalid params (-32602) naming `arguments`, and an over-long line is refused;
//! the session goes on after each (the SDK alone would drop the line without an answer, or
//! answer "method not found").

use serde_json::{json, Value};
use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, AsyncWriteExt, BufReader};
use tokio::sync::mpsc;

/// The longest message read (a line of JSON).
pub const MAX_LINE_BYTES: usize = 64 << 20;

/// The error answer of a line the SDK is not given, or `None` when it may pass.
pub fn refusal(line: &[u8]) -> Option<Value> {
    let v: Value = match serde_json::from_slice(line) {
        Ok(v) => v,
        Err(e) => {
            return Some(json!({"jsonrpc": "2.0", "id": null, "error": {
                "code": -32700,
                "message": format!("parse error: not JSON ({e})"),
            }}))
        }
    };
    let id = v.get("id").cloned().unwrap_or(Value::Null);
    if v.get("method").and_then(Value::as_str) == Some("tools/call") {
        let params = v.get("params");
        let name_ok = params
            .and_then(|p| p.get("name"))
            .is_some_and(Value::is_string);
        let args = params.and_then(|p| p.get("arguments"));
        let args_ok = args.is_none_or(|a| a.is_object() || a.is_null());
        if !name_ok || !args_ok {
            let (argument, message) = if name_ok {
                (
                    "arguments",
                    "tools/call: `arguments` must be an object of the tool's arguments",
                )
            } else {
                (
                    "name",
                    "tools/call: `name` must be the tool's name (a string)",
                )
            };
            return Some(json!({"jsonrpc": "2.0", "id": id, "error": {
                "code": -32602, "message": message, "data": {"argument": argument},
            }}));
        }
    }
    None
}

/// Reads one line into `buf` (without the newline): `None` at the end of input, else whether
/// the line was longer than [`MAX_LINE_BYTES`] (then `buf` is empty and the line skipped).
async fn read_line<R: AsyncBufReadExt + Unpin>(
    r: &mut R,
    buf: &mut Vec<u8>,
) -> std::io::Result<Option<bool>> {
    buf.clear();
    let mut too_long = false;
    loop {
        let available = r.fill_buf().await?;
        if available.is_empty() {
            return Ok(if buf.is_empty() && !too_long {
                None
            } else {
                Some(too_long)
            });
        }
        let (chunk, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], Some(i + 1)),
            None => (available, None),
        };
        if !too_long {
            if buf.len() + chunk.len() > MAX_LINE_BYTES {
                too_long = true;
                buf.clear();
            } else {
                buf.extend_from_slice(chunk);
            }
        }
        let used = done.unwrap_or(available.len());
        r.consume(used);
        if done.is_some() {
            return Ok(Some(too_long));
        }
    }
}

/// Proxies `input` to the SDK's reader and the SDK's writer to `output`, answering the lines
/// [`refusal`] refuses itself. Returns the SDK's ends: (what it reads, what it writes).
pub fn checked<I, O>(input: I, output: O) -> (tokio::io::DuplexStream, tokio::io::DuplexStream)
where
    I: AsyncRead + Unpin + Send + 'static,
    O: AsyncWrite + Unpin + Send + 'static,
{
    let (mut to_sdk, sdk_reads) = tokio::io::duplex(1 << 20);
    let (sdk_writes, from_sdk) = tokio::io::duplex(1 << 20);
    let (tx, mut rx) = mpsc::unbounded_channel::<Vec<u8>>();
    let answers = tx.clone();
    tokio::spawn(async move {
        let mut r = BufReader::new(input);
        let mut buf = Vec::new();
        while let Ok(Some(too_long)) = read_line(&mut r, &mut buf).await {
            if too_long {
                let e = json!({"jsonrpc": "2.0", "id": null, "error": {
                    "code": -32700,
                    "message": format!("parse error: a message longer than {MAX_LINE_BYTES} bytes"),
                }});
                let _ = answers.send(e.to_string().into_bytes());
                continue;
            }
            if buf.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            match refusal(&buf) {
                Some(e) => {
                    let _ = answers.send(e.to_string().into_bytes());
                }
                None => {
                    buf.push(b'\n');
                    if to_sdk.write_all(&buf).await.is_err() {
                        break;
                    }
                }
            }
        }
        // End of input: the SDK sees it and ends the session.
        let _ = to_sdk.shutdown().await;
    });
    tokio::spawn(async move {
        let mut lines = BufReader::new(from_sdk).split(b'\n');
        while let Ok(Some(line)) = lines.next_segment().await {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    tokio::spawn(async move {
        let mut out = output;
        while let Some(mut line) = rx.recv().await {
            line.push(b'\n');
            if out.write_all(&line).await.is_err() || out.flush().await.is_err() {
                break;
            }
        }
    });
    (sdk_reads, sdk_writes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_lines_get_errors_good_ones_pass() {
        let e = refusal(b"{not json").expect("refused");
        assert_eq!(e["error"]["code"], -32700);
        assert!(e["id"].is_null());
        let e = refusal(br#"{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"profile","arguments":"x"}}"#)
            .expect("refused");
        assert_eq!(e["id"], 7);
        assert_eq!(e["error"]["code"], -32602);
        assert_eq!(e["error"]["data"]["argument"], "arguments");
        let e = refusal(br#"{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":3}}"#)
            .expect("refused");
        assert_eq!(e["error"]["data"]["argument"], "name");
        assert!(refusal(br#"{"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"profile","arguments":{}}}"#).is_none());
        assert!(refusal(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#).is_none());
    }
}
