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
    /// SHA-256 of the returned token ids (decimal, comma-separated), when the server returned
    /// ids with every token (vLLM's `token_ids` with `return_token_ids`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_ids_sha256: Option<String>,
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
    #[serde(default)]
    token_ids: Option<Vec<u64>>,
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

/// What one chunk (or a whole non-streamed response) says.
#[derive(Debug, Default, PartialEq)]
struct Fields {
    /// The text of a token event (`None`: not a token event).
    text: Option<String>,
    /// Token ids the chunk carries (vLLM's `token_ids`).
    ids: Option<Vec<u64>>,
    /// `usage`: prompt and completion tokens.
    usage: Option<(u64, u64)>,
    /// The first choice has a `finish_reason`: the completion is complete.
    finished: bool,
    /// An error the server sent.
    error: Option<String>,
}

/// Reads one JSON chunk (or a whole non-streamed response). The text is `Some` for a token
/// event: a choice with non-empty text, or one not yet finished (a token whose text is held
/// back still arrives, as an event with empty text).
fn chunk_fields(data: &str) -> serde_json::Result<Fields> {
    let c: Chunk<'_> = serde_json::from_str(data)?;
    let mut f = Fields {
        usage: c
            .usage
            .and_then(|u| Some((u.prompt_tokens?, u.completion_tokens?))),
        error: c.error.map(|e| e.get().to_string()),
        ..Fields::default()
    };
    if let Some(ch) = c.choices.into_iter().next() {
        let t = ch.text.or_else(|| ch.delta.and_then(|d| d.content));
        let unfinished = ch.finish_reason.is_none();
        f.finished = !unfinished;
        f.ids = ch.token_ids;
        f.text = match t {
            Some(t) if !t.is_empty() || unfinished => Some(t.into_owned()),
            _ => None,
        };
    }
    Ok(f)
}

/// SHA-256 of token ids written as decimal numbers separated by commas.
pub fn ids_sha256(ids: &[u64]) -> String {
    let text: Vec<String> = ids.iter().map(u64::to_string).collect();
    kernelab_model::sha256_hex(text.join(",").as_bytes())
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
        // Token ids: every token event must carry them for the ids to be hashed.
        let mut ids: Vec<u64> = Vec::new();
        let mut ids_complete = true;
        if !stream {
            let bytes = resp
                .bytes()
                .await
                .map_err(|e| Failure(format!("reading the response: {e}")))?;
            m.e2e_s = t0.elapsed().as_secs_f64();
            let text = String::from_utf8_lossy(&bytes);
            let f = chunk_fields(&text)
                .map_err(|e| Failure(format!("the response is not JSON: {e}")))?;
            if let Some(err) = f.error {
                return Err(Failure(format!("the server sent an error: {err}")));
            }
            output = f.text.unwrap_or_default();
            match f.ids {
                Some(v) => ids = v,
                None => ids_complete = false,
            }
            if let Some((p, c)) = f.usage {
                m.prompt_tokens = Some(p);
                m.completion_tokens = Some(c);
            }
        } else {
            use futures_util::StreamExt;
            let mut arrivals = Vec::new();
            let mut buf = Vec::new();
            let mut body = resp.bytes_stream();
            // Complete: `[DONE]` arrived, or (servers that send no `[DONE]`, such as
            // `transformers serve`) a chunk with a `finish_reason` did before the body ended.
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
                    let f = chunk_fields(&data)
                        .map_err(|e| Failure(format!("an SSE event is not JSON: {e}")))?;
                    if let Some(err) = f.error {
                        return Err(Failure(format!("the server sent an error: {err}")));
                    }
                    done |= f.finished;
                    match (&f.text, f.ids) {
                        (_, Some(v)) => ids.extend(v),
                        (Some(_), None) => ids_complete = false,
                        (None, None) => {}
                    }
                    if let Some(t) = f.text {
                        arrivals.push(now);
                        output.push_str(&t);
                    }
                    if let Some((p, c)) = f.usage {
                        m.prompt_tokens = Some(p);
                        m.completion_tokens = Some(c);
                    }
                }
            }
            m.e2e_s = t0.elapsed().as_secs_f64();
            if !done {
                return Err(Failure(
                    "the stream ended with neither a finish_reason nor [DONE]".into(),
                ));
            }
            let (ttft, tt2t, itl) = chunk_timing(t0, &arrivals);
            m.ttft_s = ttft;
            m.tt2t_s = tt2t;
            m.itl_s = itl;
            m.chunks = arrivals.len() as u64;
        }
        m.output_sha256 = kernelab_model::sha256_hex(output.as_bytes());
        if ids_complete && !ids.is_empty() {
            m.output_ids_sha256 = Some(ids_sha256(&ids));
        }
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
        let r = f(&v);
        assert_eq!(
            (r.text.as_deref(), r.usage, r.finished),
            (Some("hi"), Some((3, 2)), false)
        );
        let v = serde_json::json!({"choices":[{"delta":{"content":"yo"}}]});
        assert_eq!(f(&v).text.as_deref(), Some("yo"));
        // A held-back token is an event; a final empty chunk is not, but it finishes.
        let v = serde_json::json!({"choices":[{"text":"","finish_reason":null}]});
        assert_eq!(f(&v).text.as_deref(), Some(""));
        let v = serde_json::json!({"choices":[{"text":"","finish_reason":"length"}]});
        let r = f(&v);
        assert_eq!((r.text, r.finished), (None, true));
        let v = serde_json::json!({"choices":[],"usage":{"prompt_tokens":1,"completion_tokens":1}});
        let r = f(&v);
        assert_eq!((r.text, r.usage, r.finished), (None, Some((1, 1)), false));
        let v = serde_json::json!({"error":{"message":"boom"}});
        assert_eq!(f(&v).error.as_deref(), Some("{\"message\":\"boom\"}"));
        // vLLM's token ids (return_token_ids).
        let v = serde_json::json!({"choices":[{"text":" a","token_ids":[264, 7]}]});
        assert_eq!(f(&v).ids, Some(vec![264, 7]));
        assert!(chunk_fields("not json").is_err());
    }

    #[test]
    fn ids_hash_is_of_the_decimal_list() {
        assert_eq!(ids_sha256(&[1, 23]), kernelab_model::sha256_hex(b"1,23"));
        assert_ne!(ids_sha256(&[1, 23]), ids_sha256(&[12, 3]));
    }
}
