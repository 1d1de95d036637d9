//! The HTTP client: one completion request, streamed (SSE) or not, timed from the moment the
//! request is handed to the connection to each content chunk and to the end of the response.
//!
//! Definitions (all in seconds, `t0` = just before the request is sent):
//! - a token event: an SSE chunk whose first choice has non-empty text, or is not finished
//!   (`finish_reason` null: a token whose text the server holds back arrives with empty text);
//! - TTFT: first token event − `t0` (streaming only);
//! - time to second token: second token event − `t0`;
//! - ITL: each gap between consecutive token events;
//! - E2E: end of the response body − `t0`;
//! - TPOT: (E2E − TTFT) / (completion tokens − 1), for 2 or more tokens (streaming only).

use serde::{Deserialize, Serialize};
use std::borrow::Cow;
use std::time::{Duration, Instant};

/// What one request measured.
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize)]
pub struct Measured {
    /// Time to first token (streaming only).
    pub ttft_s: Option<f64>,
    /// Time to second token (streaming, 2 or more chunks).
    pub tt2t_s: Option<f64>,
    /// Each inter-token latency (streaming).
    pub itl_s: Vec<f64>,
    /// End to end.
    pub e2e_s: f64,
    /// Prompt tokens from `usage`.
    pub prompt_tokens: Option<u64>,
    /// Completion tokens from `usage`.
    pub completion_tokens: Option<u64>,
    /// Token events received (streaming).
    pub chunks: u64,
    /// SHA-256 of the returned text.
    pub output_sha256: String,
}

impl Measured {
    /// Completion tokens: `usage`'s, else (streaming) the number of content chunks.
    pub fn tokens(&self) -> Option<u64> {
        self.completion_tokens
            .or((self.ttft_s.is_some() && self.chunks > 0).then_some(self.chunks))
    }

    /// TPOT = (E2E − TTFT) / (tokens − 1); `None` without TTFT or with fewer than 2 tokens.
    pub fn tpot_s(&self) -> Option<f64> {
        tpot(self.e2e_s, self.ttft_s?, self.tokens()?)
    }
}

/// TPOT = (E2E − TTFT) / (tokens − 1); `None` for fewer than 2 tokens.
pub fn tpot(e2e_s: f64, ttft_s: f64, tokens: u64) -> Option<f64> {
    (tokens >= 2).then(|| (e2e_s - ttft_s) / (tokens - 1) as f64)
}

/// TTFT, time to second token and the ITLs from the send time and the content chunk arrivals.
pub fn chunk_timing(t0: Instant, arrivals: &[Instant]) -> (Option<f64>, Option<f64>, Vec<f64>) {
    let since = |t: &Instant| t.duration_since(t0).as_secs_f64();
    let ttft = arrivals.first().map(since);
    let tt2t = arrivals.get(1).map(since);
    let itl = arrivals
        .windows(2)
        .map(|w| w[1].duration_since(w[0]).as_secs_f64())
        .collect();
    (ttft, tt2t, itl)
}

/// Why a request failed.
#[derive(Clone, Debug, PartialEq)]
pub struct Failure(pub String);

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

/// One JSON chunk of a completion stream (or a whole response), read without building a tree.
#[derive(Deserialize)]
struct Chunk<'a> {
    #[serde(default, borrow)]
    choices: Vec<Choice<'a>>,
    #[serde(default)]
    usage: Option<Usage>,
    #[serde(default, borrow)]
    error: Option<&'a serde_json::value::RawValue>,
}

#[derive(Deserialize)]
struct Choice<'a> {
    #[serde(default, borrow)]
    text: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    delta: Option<Delta<'a>>,
    #[serde(default, borrow)]
    finish_reason: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Delta<'a> {
    #[serde(default, borrow)]
    content: Option<Cow<'a, str>>,
}

#[derive(Deserialize)]
struct Usage {
    prompt_tokens: Option<u64>,
    completion_tokens: Option<u64>,
}

/// What one chunk says: the text of a token event, the usage, an error the server sent.
type Fields = (Option<String>, Option<(u64, u64)>, Option<String>);

/// Reads one JSON chunk (or a whole non-streamed response). The text is `Some` for a token
/// event: a choice with non-empty text, or one not yet finished (a token whose text is held
/// back still arrives, as an event with empty text).
fn chunk_fields(data: &str) -> serde_json::Result<Fields> {
    let c: Chunk<'_> = serde_json::from_str(data)?;
    let text = c.choices.into_iter().next().and_then(|ch| {
        let t = ch.text.or_else(|| ch.delta.and_then(|d| d.content));
        let unfinished = ch.finish_reason.is_none();
        match t {
            Some(t) if !t.is_empty() || unfinished => Some(t.into_owned()),
            None if unfinished => None,
            _ => None,
        }
    });
    let usage = c
        .usage
        .and_then(|u| Some((u.prompt_tokens?, u.completion_tokens?)));
    Ok((text, usage, c.error.map(|e| e.get().to_string())))
}

/// Splits complete SSE events off the front of `buf`; returns each event's `data` payload.
pub fn take_events(buf: &mut Vec<u8>) -> Vec<String> {
    let mut out = Vec::new();
    loop {
        let end = buf
            .windows(2)
            .position(|w| w == b"\n\n")
            .map(|i| (i, 2))
            .into_iter()
            .chain(
                buf.windows(4)
                    .position(|w| w == b"\r\n\r\n")
                    .map(|i| (i, 4)),
            )
            .min_by_key(|&(i, _)| i);
        let Some((i, sep)) = end else { break };
        let event: Vec<u8> = buf.drain(..i + sep).collect();
        let text = String::from_utf8_lossy(&event[..i]);
        let data: Vec<&str> = text
            .lines()
            .filter_map(|l| l.strip_prefix("data:"))
            .map(|d| d.strip_prefix(' ').unwrap_or(d))
            .collect();
        if !data.is_empty() {
            out.push(data.join("\n"));
        }
    }
    out
}

/// Sends one completion request and times it.
pub async fn send(
    client: &reqwest::Client,
    url: &str,
    body: &serde_json::Value,
    stream: bool,
    timeout: Duration,
) -> Result<Measured, Failure> {
    let work = async {
        let t0 = Instant::now();
        let resp = client
            .post(url)
            .json(body)
            .send()
            .await
            .map_err(|e| Failure(format!("request failed: {e}")))?;
        let status = resp.status();
        if !status.is_success() {
            let text = resp.text().await.unwrap_or_default();
            let text: String = text.chars().take(300).collect();
            return Err(Failure(format!("HTTP {status}: {text}")));
        }
        let mut m = Measured::default();
        let mut output = String::new();
        if !stream {
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| Failure(format!("reading the response: {e}")))?;
            m.e2e_s = t0.elapsed().as_secs_f64();
            let text = String::from_utf8_lossy(&bytes);
            let (text, usage, _) = chunk_fields(&text)
                .map_err(|e| Failure(format!("the response is not JSON: {e}")))?;
            output = text.unwrap_or_default();
            if let Some((p, c)) = usage {
                m.prompt_tokens = Some(p);
                m.completion_tokens = Some(c);
            }
        } else {
            use futures_util::StreamExt;
            let mut arrivals = Vec::new();
            let mut buf = Vec::new();
            let mut body = resp.bytes_stream();
            let mut done = false;
            while let Some(piece) = body.next().await {
                let piece = piece.map_err(|e| Failure(format!("stream broken: {e}")))?;
                let now = Instant::now();
                buf.extend_from_slice(&piece);
                for data in take_events(&mut buf) {
                    if data.trim() == "[DONE]" {
                        done = true;
                        continue;
                    }
                    let (text, usage, error) = chunk_fields(&data)
                        .map_err(|e| Failure(format!("an SSE event is not JSON: {e}")))?;
                    if let Some(err) = error {
                        return Err(Failure(format!("the server sent an error: {err}")));
                    }
                    if let Some(t) = text {
                        arrivals.push(now);
                        output.push_str(&t);
                    }
                    if let Some((p, c)) = usage {
                        m.prompt_tokens = Some(p);
                        m.completion_tokens = Some(c);
                    }
                }
            }
            m.e2e_s = t0.elapsed().as_secs_f64();
            if !done {
                return Err(Failure("the stream ended without [DONE]".into()));
            }
            let (ttft, tt2t, itl) = chunk_timing(t0, &arrivals);
            m.ttft_s = ttft;
            m.tt2t_s = tt2t;
            m.itl_s = itl;
            m.chunks = arrivals.len() as u64;
        }
        m.output_sha256 = kernelab_model::sha256_hex(output.as_bytes());
        Ok(m)
    };
    match tokio::time::timeout(timeout, work).await {
        Ok(r) => r,
        Err(_) => Err(Failure(format!(
            "no complete response within {:.0} s",
            timeout.as_secs_f64()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn timing_arithmetic() {
        let t0 = Instant::now();
        let at = |ms: u64| t0 + Duration::from_millis(ms);
        let (ttft, tt2t, itl) = chunk_timing(t0, &[at(100), at(110), at(130)]);
        assert_eq!(ttft, Some(0.1));
        assert_eq!(tt2t, Some(0.11));
        assert_eq!(itl.len(), 2);
        assert!((itl[0] - 0.01).abs() < 1e-9 && (itl[1] - 0.02).abs() < 1e-9);
        assert_eq!(tpot(0.13, 0.1, 3), Some(0.015));
        assert_eq!(tpot(0.13, 0.1, 1), None);
        let m = Measured {
            ttft_s: Some(0.1),
            e2e_s: 0.5,
            chunks: 5,
            ..Default::default()
        };
        assert_eq!(m.tokens(), Some(5));
        assert_eq!(m.tpot_s(), Some(0.1));
    }

    #[test]
    fn sse_events_split_across_reads() {
        let mut buf = b"data: {\"a\":1}\n\ndata: {\"b\"".to_vec();
        assert_eq!(take_events(&mut buf), vec!["{\"a\":1}"]);
        buf.extend_from_slice(b":2}\r\n\r\n: comment\n\ndata: [DONE]\n\n");
        assert_eq!(take_events(&mut buf), vec!["{\"b\":2}", "[DONE]"]);
        assert!(buf.is_empty());
    }

    #[test]
    fn fields_of_completion_and_chat_chunks() {
        let f = |v: &serde_json::Value| chunk_fields(&v.to_string()).expect("chunk");
        let v = serde_json::json!({"choices":[{"text":"hi"}],"usage":{"prompt_tokens":3,"completion_tokens":2}});
        assert_eq!(f(&v), (Some("hi".into()), Some((3, 2)), None));
        let v = serde_json::json!({"choices":[{"delta":{"content":"yo"}}]});
        assert_eq!(f(&v), (Some("yo".into()), None, None));
        // A held-back token is an event; a final empty chunk is not.
        let v = serde_json::json!({"choices":[{"text":"","finish_reason":null}]});
        assert_eq!(f(&v), (Some(String::new()), None, None));
        let v = serde_json::json!({"choices":[{"text":"","finish_reason":"length"}]});
        assert_eq!(f(&v), (None, None, None));
        let v = serde_json::json!({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}});
        assert_eq!(f(&v), (None, Some((1, 1)), None));
        let v = serde_json::json!({"error":{"message":"boom"}});
        assert_eq!(f(&v).2.as_deref(), Some("{\"message\":\"boom\"}"));
        assert!(chunk_fields("not json").is_err());
    }
}
