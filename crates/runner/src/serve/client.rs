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
#[derive(Clone, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
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
    /// Prompt tokens the server served from its prefix cache
    /// (`usage.prompt_tokens_details.cached_tokens`, vLLM and SGLang); `None`: not reported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cached_tokens: Option<u64>,
    /// Token events received (streaming).
    pub chunks: u64,
    /// SHA-256 of the returned text.
    pub output_sha256: String,
    /// SHA-256 of the returned token ids (decimal, comma-separated), when the server returned
    /// ids with every token (vLLM's `token_ids` with `return_token_ids`); `None` otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_ids_sha256: Option<String>,
    /// Reads of the stream the kernel gave no receive time for (some sandboxes take
    /// `SO_TIMESTAMPNS` and send none): timed when the client read them, so they carry its
    /// own queueing. 0 where every read had the kernel's time.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub untimed_reads: u64,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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
    #[serde(default)]
    prompt_tokens_details: Option<PromptDetails>,
}

#[derive(Deserialize)]
struct PromptDetails {
    #[serde(default)]
    cached_tokens: Option<u64>,
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
    /// `usage.prompt_tokens_details.cached_tokens`.
    cached: Option<u64>,
    /// The first choice has a `finish_reason`: the completion is complete.
    finished: bool,
    /// An error the server sent.
    error: Option<String>,
}

/// Reads one JSON chunk (or a whole non-streamed response). The text is `Some` for a token
/// event: a choice with non-empty text, or one not yet finished (a token whose text is held
/// back still arrives, as an event with empty text).
fn chunk_fields(data: &[u8]) -> serde_json::Result<Fields> {
    let c: Chunk<'_> = serde_json::from_slice(data)?;
    let cached = c
        .usage
        .as_ref()
        .and_then(|u| u.prompt_tokens_details.as_ref()?.cached_tokens);
    let mut f = Fields {
        cached,
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

/// Largest SSE event accepted (its bytes up to the blank line that ends it): 16 MiB.
pub const MAX_EVENT_BYTES: usize = 16 << 20;
/// Largest non-streamed response body accepted: 64 MiB.
pub const MAX_RESPONSE_BYTES: usize = 64 << 20;
/// Most bytes of an error response read (the message keeps its first 300 characters).
pub const MAX_ERROR_BODY_BYTES: usize = 4096;
/// Most bytes of one streamed response read: 1 GiB (its events are not kept, only what they
/// say: a stream that never ends fails here, not at the request timeout).
pub const MAX_STREAM_BYTES: u64 = 1 << 30;
/// Most token events, and most token ids, of one streamed response: 2^21, twice the most
/// completion tokens a case may ask for.
pub const MAX_STREAM_TOKENS: usize = 2 * super::range::MAX_TOKENS;
/// Most text of one response, streamed or not: 64 MiB.
pub const MAX_TEXT_BYTES: usize = MAX_RESPONSE_BYTES;

/// An incremental SSE parser: each byte is scanned once however the stream is split into
/// reads, and an event longer than its cap is an error rather than a growing buffer.
#[derive(Debug)]
pub struct SseParser {
    buf: Vec<u8>,
    /// Bytes of `buf` already searched for an event end (less the 3 that may start one).
    scanned: usize,
    max_event: usize,
}

/// An SSE event longer than [`SseParser`]'s cap.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EventTooLarge {
    /// The cap, bytes.
    pub limit: usize,
}

impl std::fmt::Display for EventTooLarge {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "an SSE event is longer than {} bytes", self.limit)
    }
}

impl SseParser {
    /// A parser whose events may be at most `max_event` bytes.
    pub fn new(max_event: usize) -> Self {
        SseParser {
            buf: Vec::new(),
            scanned: 0,
            max_event,
        }
    }

    /// Feeds `bytes`; returns the `data` payload (exact bytes, lines joined by `\n`) of each
    /// event completed by them.
    pub fn push(&mut self, bytes: &[u8]) -> Result<Vec<Vec<u8>>, EventTooLarge> {
        self.buf.extend_from_slice(bytes);
        let mut out = Vec::new();
        let mut start = 0;
        let mut i = self.scanned;
        while let Some(k) = memchr::memchr(b'\n', &self.buf[i..]) {
            let at = i + k;
            // An event ends at "\n\n" or "\r\n\r\n".
            let end = if self.buf.get(at + 1) == Some(&b'\n') {
                Some((at, at + 2))
            } else if at >= 1
                && self.buf.get(at - 1) == Some(&b'\r')
                && self.buf.get(at + 1) == Some(&b'\r')
                && self.buf.get(at + 2) == Some(&b'\n')
            {
                Some((at - 1, at + 3))
            } else {
                None
            };
            match end {
                Some((body_end, next)) => {
                    if body_end - start > self.max_event {
                        return Err(EventTooLarge {
                            limit: self.max_event,
                        });
                    }
                    if let Some(d) = event_data(&self.buf[start..body_end]) {
                        out.push(d);
                    }
                    start = next;
                    i = next;
                }
                None => i = at + 1,
            }
        }
        if start > 0 {
            self.buf.drain(..start);
        }
        // The last 3 bytes may begin a separator completed by the next read.
        self.scanned = self.buf.len().saturating_sub(3);
        if self.buf.len() > self.max_event + 4 {
            return Err(EventTooLarge {
                limit: self.max_event,
            });
        }
        Ok(out)
    }
}

/// The `data` lines of one event, joined by `\n`; `None` when it has none (a comment).
fn event_data(event: &[u8]) -> Option<Vec<u8>> {
    let mut data: Option<Vec<u8>> = None;
    for line in event.split(|&b| b == b'\n') {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if let Some(d) = line.strip_prefix(b"data:") {
            let d = d.strip_prefix(b" ").unwrap_or(d);
            match &mut data {
                Some(v) => {
                    v.push(b'\n');
                    v.extend_from_slice(d);
                }
                None => data = Some(d.to_vec()),
            }
        }
    }
    data
}

/// Splits complete SSE events off the front of `buf`; returns each event's `data` payload
/// (invalid UTF-8 replaced: for display only; [`SseParser`] keeps the exact bytes).
pub fn take_events(buf: &mut Vec<u8>) -> Vec<String> {
    let mut p = SseParser::new(usize::MAX / 4);
    let events = p.push(buf).unwrap_or_default();
    *buf = p.buf;
    events
        .into_iter()
        .map(|e| String::from_utf8_lossy(&e).into_owned())
        .collect()
}

/// Reads at most `limit` bytes of a response body, and whether it held more (not read).
async fn body_capped(
    resp: &mut reqwest::Response,
    limit: usize,
) -> Result<(Vec<u8>, bool), reqwest::Error> {
    let mut out = Vec::new();
    while let Some(piece) = resp.chunk().await? {
        let room = limit - out.len();
        if piece.len() > room {
            out.extend_from_slice(&piece[..room]);
            return Ok((out, true));
        }
        out.extend_from_slice(&piece);
    }
    Ok((out, false))
}

/// The serving client: reqwest, and for streamed completions over plain HTTP connections of
/// its own whose reads carry the kernel's receive time ([`super::wire`]), so that a token's
/// time is when it reached the host whatever else the client was doing.
pub struct Client {
    /// The HTTP client of everything but streamed plain-HTTP completions.
    pub http: reqwest::Client,
    wires: super::wire::Pool,
}

impl Client {
    /// A client over `http`.
    pub fn new(http: reqwest::Client) -> Client {
        Client {
            http,
            wires: super::wire::Pool::default(),
        }
    }
}

/// Opens `n` kept-alive connections to a server at once, where the next `n` requests find
/// them warm: sockets of the client's own for streamed plain-HTTP completions to `url`, else
/// `n` concurrent GETs of `health` (its health URL), each read to its end so that its
/// connection goes back to reqwest's pool. Returns how many opened; a connection not opened
/// here is opened by the first request that needs it.
pub async fn open_connections(
    client: &Client,
    url: &str,
    stream: bool,
    health: &str,
    n: usize,
    timeout: Duration,
) -> usize {
    if let Some(to) = super::wire::Plain::of(url).filter(|_| stream) {
        return tokio::time::timeout(timeout, client.wires.open(&to.authority, n))
            .await
            .unwrap_or(0);
    }
    let one = || async {
        let get = async {
            let mut resp = client.http.get(health).send().await.ok()?;
            body_capped(&mut resp, MAX_ERROR_BODY_BYTES).await.ok()
        };
        matches!(tokio::time::timeout(timeout, get).await, Ok(Some(_)))
    };
    futures_util::future::join_all((0..n).map(|_| one()))
        .await
        .into_iter()
        .filter(|&answered| answered)
        .count()
}

/// What a stream's events said so far: its token events' arrival times, text, ids, usage.
struct StreamRead {
    parser: SseParser,
    /// Body bytes taken so far.
    bytes: u64,
    /// Its caps: bytes, token events (and ids), text bytes.
    caps: (u64, usize, usize),
    arrivals: Vec<Instant>,
    output: String,
    ids: Vec<u64>,
    ids_complete: bool,
    /// `[DONE]` arrived, or (servers that send no `[DONE]`, such as `transformers serve`) a
    /// chunk with a `finish_reason` did.
    done: bool,
    m: Measured,
}

impl StreamRead {
    fn new() -> StreamRead {
        StreamRead::with_caps((MAX_STREAM_BYTES, MAX_STREAM_TOKENS, MAX_TEXT_BYTES))
    }

    fn with_caps(caps: (u64, usize, usize)) -> StreamRead {
        StreamRead {
            parser: SseParser::new(MAX_EVENT_BYTES),
            bytes: 0,
            caps,
            arrivals: Vec::new(),
            output: String::new(),
            ids: Vec::new(),
            ids_complete: true,
            done: false,
            m: Measured::default(),
        }
    }

    /// Takes the body bytes of one read, which arrived at `at`. What the stream says is kept
    /// within caps checked before it grows ([`MAX_STREAM_BYTES`], [`MAX_STREAM_TOKENS`],
    /// [`MAX_TEXT_BYTES`]): past one, the request fails naming it.
    fn take(&mut self, piece: &[u8], at: Instant) -> Result<(), Failure> {
        let (max_bytes, max_tokens, max_text) = self.caps;
        self.bytes = self.bytes.saturating_add(piece.len() as u64);
        if self.bytes > max_bytes {
            return Err(Failure(format!(
                "the stream is longer than {max_bytes} bytes (the cap of one streamed response)"
            )));
        }
        let events = self
            .parser
            .push(piece)
            .map_err(|e| Failure(e.to_string()))?;
        for data in events {
            if data.trim_ascii() == b"[DONE]" {
                self.done = true;
                continue;
            }
            let f = chunk_fields(&data)
                .map_err(|e| Failure(format!("an SSE event is not JSON: {e}")))?;
            if let Some(err) = f.error {
                return Err(Failure(format!("the server sent an error: {err}")));
            }
            self.done |= f.finished;
            match (&f.text, f.ids) {
                (_, Some(v)) => {
                    if self.ids.len().saturating_add(v.len()) > max_tokens {
                        return Err(Failure(format!(
                            "the stream carried more than {max_tokens} token ids (the cap of one streamed response)"
                        )));
                    }
                    self.ids.extend(v)
                }
                (Some(_), None) => self.ids_complete = false,
                (None, None) => {}
            }
            if let Some(t) = f.text {
                if self.arrivals.len() >= max_tokens {
                    return Err(Failure(format!(
                        "the stream carried more than {max_tokens} token events (the cap of one streamed response)"
                    )));
                }
                if self.output.len().saturating_add(t.len()) > max_text {
                    return Err(Failure(format!(
                        "the stream's text is longer than {max_text} bytes (the cap of one response)"
                    )));
                }
                self.arrivals.push(at);
                self.output.push_str(&t);
            }
            if let Some((p, c)) = f.usage {
                self.m.prompt_tokens = Some(p);
                self.m.completion_tokens = Some(c);
            }
            self.m.cached_tokens = f.cached.or(self.m.cached_tokens);
        }
        Ok(())
    }

    /// The measurement of a stream whose body ended at `end`.
    fn finish(self, t0: Instant, end: Instant) -> Result<Measured, Failure> {
        let StreamRead {
            arrivals,
            output,
            ids,
            ids_complete,
            done,
            mut m,
            ..
        } = self;
        m.e2e_s = end.saturating_duration_since(t0).as_secs_f64();
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
        // The tokens the stream carried (its token ids where every event had them, else its
        // token events) must be the tokens `usage` reports.
        let complete = ids_complete && !ids.is_empty();
        let carried = if complete { ids.len() as u64 } else { m.chunks };
        if let Some(c) = m.completion_tokens {
            if carried != c {
                return Err(Failure(format!(
                    "the stream carried {carried} tokens, its usage says {c} completion tokens"
                )));
            }
        }
        Ok(finish(m, &output, complete.then_some(&ids[..])))
    }
}

/// A measurement with the hashes of its output and (where complete) its token ids.
fn finish(mut m: Measured, output: &str, ids: Option<&[u64]>) -> Measured {
    m.output_sha256 = kernelab_model::sha256_hex(output.as_bytes());
    m.output_ids_sha256 = ids.map(ids_sha256);
    m
}

/// A streamed request over a connection of the client's own, each event timed by the
/// kernel's receive time of the read that completed it (never before `t0`).
async fn stream_wire(
    client: &Client,
    to: &super::wire::Plain,
    body: &serde_json::Value,
) -> Result<Measured, Failure> {
    let bytes = serde_json::to_vec(body).map_err(|e| Failure(format!("request failed: {e}")))?;
    let t0 = Instant::now();
    let mut x = super::wire::post(&client.wires, to, &bytes)
        .await
        .map_err(|e| Failure(format!("request failed: {}", e.message)))?;
    let mut piece = Vec::new();
    let status = x.head.status;
    if !(200..300).contains(&status) {
        while piece.len() < MAX_ERROR_BODY_BYTES {
            match x.next(&mut piece).await {
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        let text: String = String::from_utf8_lossy(&piece).chars().take(300).collect();
        let status = reqwest::StatusCode::from_u16(status)
            .map_or_else(|_| status.to_string(), |s| s.to_string());
        return Err(Failure(format!("HTTP {status}: {text}")));
    }
    let mut read = StreamRead::new();
    while let Some(at) = x.next(&mut piece).await.map_err(|e| Failure(e.message))? {
        read.take(&piece, at.max(t0))?;
        piece.clear();
    }
    let mut m = read.finish(t0, x.last_read().max(t0))?;
    m.untimed_reads = x.untimed_reads();
    Ok(m)
}

/// Sends one completion request and times it.
pub async fn send(
    client: &Client,
    url: &str,
    body: &serde_json::Value,
    stream: bool,
    timeout: Duration,
) -> Result<Measured, Failure> {
    let work = async {
        if let Some(to) = super::wire::Plain::of(url).filter(|_| stream) {
            return stream_wire(client, &to, body).await;
        }
        let t0 = Instant::now();
        let resp = client
            .http
            .post(url)
            .json(body)
            .send()
            .await
            .map_err(|e| Failure(format!("request failed: {e}")))?;
        let mut resp = resp;
        let status = resp.status();
        if !status.is_success() {
            // The first bytes only: an endless error body is not read to its end.
            let (bytes, _) = body_capped(&mut resp, MAX_ERROR_BODY_BYTES)
                .await
                .unwrap_or_default();
            let text: String = String::from_utf8_lossy(&bytes).chars().take(300).collect();
            return Err(Failure(format!("HTTP {status}: {text}")));
        }
        if stream {
            use futures_util::StreamExt;
            let mut read = StreamRead::new();
            let mut body = resp.bytes_stream();
            while let Some(piece) = body.next().await {
                let piece = piece.map_err(|e| Failure(format!("stream broken: {e}")))?;
                read.take(&piece, Instant::now())?;
            }
            return read.finish(t0, Instant::now());
        }
        let (bytes, cut) = body_capped(&mut resp, MAX_RESPONSE_BYTES)
            .await
            .map_err(|e| Failure(format!("reading the response: {e}")))?;
        if cut {
            return Err(Failure(format!(
                "the response is longer than {MAX_RESPONSE_BYTES} bytes"
            )));
        }
        let mut m = Measured {
            e2e_s: t0.elapsed().as_secs_f64(),
            ..Measured::default()
        };
        let f =
            chunk_fields(&bytes).map_err(|e| Failure(format!("the response is not JSON: {e}")))?;
        if let Some(err) = f.error {
            return Err(Failure(format!("the server sent an error: {err}")));
        }
        if let Some((p, c)) = f.usage {
            m.prompt_tokens = Some(p);
            m.completion_tokens = Some(c);
        }
        m.cached_tokens = f.cached;
        let ids = f.ids.filter(|v| !v.is_empty());
        Ok(finish(m, &f.text.unwrap_or_default(), ids.as_deref()))
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
    fn the_sse_parser_is_linear_and_capped() {
        // A 20 MB event fed in 1 KiB reads: scanned once, refused at the cap.
        let mut p = SseParser::new(MAX_EVENT_BYTES);
        let t = Instant::now();
        let piece = vec![b'x'; 1024];
        assert_eq!(p.push(b"data: ").expect("start"), Vec::<Vec<u8>>::new());
        let mut refused = false;
        for _ in 0..20_000 {
            if p.push(&piece).is_err() {
                refused = true;
                break;
            }
        }
        assert!(refused, "an event past the cap is refused");
        assert!(t.elapsed() < Duration::from_secs(2), "{:?}", t.elapsed());
        // 200k small events split at every byte.
        let mut p = SseParser::new(MAX_EVENT_BYTES);
        let stream = b"data: {\"a\":1}\r\n\r\n".repeat(1000);
        let mut n = 0;
        for b in stream.chunks(1) {
            n += p.push(b).expect("small").len();
        }
        assert_eq!(n, 1000);
        // Exact bytes are kept.
        let mut p = SseParser::new(64);
        assert_eq!(p.push(b"data: \xff\n\n").expect("one"), vec![vec![0xff]]);
        assert_eq!(
            p.push(b"data: a\ndata: b\n\n").expect("two lines"),
            vec![b"a\nb".to_vec()]
        );
    }

    #[test]
    fn a_stream_past_its_caps_fails_naming_the_cap() {
        // The caps as they are, and (to run fast) scaled down by 2^10.
        assert_eq!(
            (MAX_STREAM_BYTES, MAX_STREAM_TOKENS, MAX_TEXT_BYTES),
            (1 << 30, 1 << 21, 64 << 20)
        );
        let caps = (
            MAX_STREAM_BYTES >> 10,
            MAX_STREAM_TOKENS >> 10,
            MAX_TEXT_BYTES >> 10,
        );
        let at = Instant::now();
        // Feeds `piece` until refused; the message.
        let feed = |r: &mut StreamRead, piece: &[u8]| {
            for _ in 0..1 << 20 {
                if let Err(f) = r.take(piece, at) {
                    return f.0;
                }
            }
            panic!("never refused");
        };
        // A stream that never ends: refused once past the byte cap, its events never kept.
        let mut r = StreamRead::with_caps(caps);
        let e = feed(&mut r, &b": keep-alive\n\n".repeat(1024));
        assert!(e.contains(&format!("longer than {} bytes", caps.0)), "{e}");
        assert!(r.arrivals.is_empty() && r.output.capacity() == 0);
        // Token events past the cap.
        let mut r = StreamRead::with_caps(caps);
        let e = feed(&mut r, b"data: {\"choices\":[{\"text\":\"\"}]}\n\n");
        assert!(
            e.contains(&format!("more than {} token events", caps.1)),
            "{e}"
        );
        assert_eq!(r.arrivals.len(), caps.1);
        // Token ids past the cap, in one event: refused before they are kept.
        let mut r = StreamRead::with_caps(caps);
        let ids = vec!["1"; caps.1 + 1].join(",");
        let event = format!("data: {{\"choices\":[{{\"text\":\"a\",\"token_ids\":[{ids}]}}]}}\n\n");
        let e = r.take(event.as_bytes(), at).expect_err("too many ids").0;
        assert!(
            e.contains(&format!("more than {} token ids", caps.1)),
            "{e}"
        );
        assert!(r.ids.is_empty());
        // Text past the cap.
        let mut r = StreamRead::with_caps(caps);
        let event = format!(
            "data: {{\"choices\":[{{\"text\":\"{}\"}}]}}\n\n",
            "x".repeat(1000)
        );
        let e = feed(&mut r, event.as_bytes());
        assert!(e.contains(&format!("longer than {} bytes", caps.2)), "{e}");
        assert!(r.output.len() <= caps.2);
    }

    #[test]
    fn fields_of_completion_and_chat_chunks() {
        let f = |v: &serde_json::Value| chunk_fields(v.to_string().as_bytes()).expect("chunk");
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
        // vLLM's and SGLang's prefix-cache count (OpenAI's usage layout).
        let v = serde_json::json!({"choices":[],"usage":{"prompt_tokens":64,"completion_tokens":8,"prompt_tokens_details":{"cached_tokens":48}}});
        assert_eq!((f(&v).usage, f(&v).cached), (Some((64, 8)), Some(48)));
        let v = serde_json::json!({"choices":[],"usage":{"prompt_tokens":64,"completion_tokens":8,"prompt_tokens_details":null}});
        assert_eq!(f(&v).cached, None);
        let v = serde_json::json!({"error":{"message":"boom"}});
        assert_eq!(f(&v).error.as_deref(), Some("{\"message\":\"boom\"}"));
        // vLLM's token ids (return_token_ids).
        let v = serde_json::json!({"choices":[{"text":" a","token_ids":[264, 7]}]});
        assert_eq!(f(&v).ids, Some(vec![264, 7]));
        assert!(chunk_fields(b"not json").is_err());
        // Invalid UTF-8 is not JSON text: never replaced by U+FFFD and hashed alike.
        assert!(chunk_fields(b"{\"choices\":[{\"text\":\"\xff\"}]}").is_err());
        assert!(chunk_fields(b"{\"choices\":[{\"text\":\"\xfe\"}]}").is_err());
    }

    #[test]
    fn ids_hash_is_of_the_decimal_list() {
        assert_eq!(ids_sha256(&[1, 23]), kernelab_model::sha256_hex(b"1,23"));
        assert_ne!(ids_sha256(&[1, 23]), ids_sha256(&[12, 3]));
    }
}
