//! Request traces for replay (`[[workload.case]] trace`): arrival times and prompt and
//! completion lengths per request, from the column layouts of public LLM serving traces, read
//! by name (case-insensitive):
//!
//! | layout | time | input | output |
//! |---|---|---|---|
//! | Azure LLM inference trace (CSV) | `TIMESTAMP` (date-time) | `ContextTokens` | `GeneratedTokens` |
//! | BurstGPT (CSV) | `Timestamp` (seconds) | `Request tokens` | `Response tokens` |
//! | Mooncake (JSONL) | `timestamp` (milliseconds) | `input_length` | `output_length` |
//! | generic (CSV or JSONL) | `arrival_s`, `time_s` or `timestamp` | `input_tokens` / `prompt_tokens` | `output_tokens` / `completion_tokens` |
//!
//! Mooncake's `hash_ids` (JSONL; one id per block of `block_tokens`, default 512, the block size
//! Mooncake's traces are written with) are kept: requests that share a block id get the same
//! tokens in that block, so shared prefixes reach the server's prefix cache as in the trace.
//!
//! CSV or JSONL is told from the first byte (`{` is JSONL). Times are made relative to the
//! first request; they must not go back. A row of a malformed or missing figure is an error
//! naming the file, the line and the column.

use serde::{Deserialize, Serialize};
use std::path::Path;

/// Largest trace file read: 256 MiB.
pub const MAX_TRACE_BYTES: u64 = 256 << 20;

/// Most block ids of one request (`hash_ids`): 2^16.
pub const MAX_HASH_IDS: usize = 1 << 16;

/// One request of a trace.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TraceRequest {
    /// Seconds after the trace's first request.
    pub at_s: f64,
    /// Prompt tokens.
    pub input_tokens: usize,
    /// Completion tokens.
    pub output_tokens: usize,
    /// Ids of the prompt's blocks (Mooncake's `hash_ids`): equal ids, equal tokens.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub hash_ids: Vec<u64>,
}

/// The unit of a numeric time column.
#[derive(
    Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema,
)]
#[serde(rename_all = "lowercase")]
pub enum TimeUnit {
    /// The layout's own (milliseconds for Mooncake's `timestamp` in JSONL, else seconds).
    #[default]
    Auto,
    /// Seconds.
    S,
    /// Milliseconds.
    Ms,
}

/// A trace that could not be read: where and why.
#[derive(Debug, Clone, PartialEq)]
pub struct TraceError {
    /// 1-based line (0: the file as a whole).
    pub line: u64,
    /// What was expected.
    pub message: String,
}

const TIME: &[&str] = &["arrival_s", "time_s", "timestamp"];
const INPUT: &[&str] = &[
    "input_tokens",
    "prompt_tokens",
    "contexttokens",
    "request tokens",
    "input_length",
];
const OUTPUT: &[&str] = &[
    "output_tokens",
    "completion_tokens",
    "generatedtokens",
    "response tokens",
    "output_length",
];

/// How many of a trace's requests are read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Take {
    /// The first `n` (the spec's `trace_limit`): the rest are not read.
    First(usize),
    /// All of them, at most `n`: a trace of more is an error naming the cap, never cut.
    All(usize),
}

impl Take {
    fn cap(self) -> usize {
        match self {
            Take::First(n) | Take::All(n) => n,
        }
    }
}

/// A request beyond `take`'s cap on `line`: `Ok(true)` stops reading (`Take::First`), an
/// error says the trace holds more than the cap (`Take::All`).
fn beyond(take: Take, line: u64) -> Result<bool, TraceError> {
    match take {
        Take::First(_) => Ok(true),
        Take::All(cap) => Err(TraceError {
            line,
            message: format!(
                "the trace holds more than {cap} requests (this line is request {}); at most {cap} are replayed: set `trace_limit` to replay the first of them",
                cap as u64 + 1
            ),
        }),
    }
}

/// Reads the requests `take` says of the trace at `path` (a regular file of at most
/// [`MAX_TRACE_BYTES`]); `Err((line, message))` names what was wrong.
pub fn read(path: &Path, unit: TimeUnit, take: Take) -> Result<Vec<TraceRequest>, TraceError> {
    let bytes = kernelab_model::read_regular(path, MAX_TRACE_BYTES).map_err(|e| TraceError {
        line: 0,
        message: format!("cannot read the trace: {e}"),
    })?;
    parse(&bytes, unit, take)
}

/// Parses trace bytes (CSV, or JSONL when the first non-blank byte is `{`).
pub fn parse(bytes: &[u8], unit: TimeUnit, take: Take) -> Result<Vec<TraceRequest>, TraceError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let raw = if first == Some(&b'{') {
        jsonl(bytes, unit, take)?
    } else {
        csv_rows(bytes, unit, take)?
    };
    relative(raw)
}

/// (line, time in nanoseconds, input, output, block ids) per row.
type Raw = Vec<(u64, i128, usize, usize, Vec<u64>)>;

/// Times made relative to the first request; a time that goes back is an error.
fn relative(raw: Raw) -> Result<Vec<TraceRequest>, TraceError> {
    let Some(&(_, t0, ..)) = raw.first() else {
        return Err(TraceError {
            line: 0,
            message: "the trace holds no request".into(),
        });
    };
    let mut last = t0;
    raw.into_iter()
        .map(|(line, t, input_tokens, output_tokens, hash_ids)| {
            if t < last {
                return Err(TraceError {
                    line,
                    message: format!(
                        "the time goes back ({} s after {} s): expected requests in arrival order",
                        t as f64 / 1e9,
                        last as f64 / 1e9
                    ),
                });
            }
            last = t;
            Ok(TraceRequest {
                at_s: (t - t0) as f64 / 1e9,
                input_tokens,
                output_tokens,
                hash_ids,
            })
        })
        .collect()
}

/// Nanoseconds of a time field: a number of `per_s` units a second (at most 10^12 seconds),
/// or a date-time (`2023-11-16 18:15:46.6805900`, as the Azure traces write it), exact to the
/// nanosecond so that differences of date-times keep their digits.
fn nanoseconds(text: &str, per_s: f64) -> Option<i128> {
    let t = text.trim();
    if let Ok(x) = t.parse::<f64>() {
        let s = x / per_s;
        return (s.is_finite() && (0.0..=1e12).contains(&s)).then(|| (s * 1e9).round() as i128);
    }
    let dt: jiff::civil::DateTime = t.replace(' ', "T").parse().ok()?;
    let ts = dt.to_zoned(jiff::tz::TimeZone::UTC).ok()?.timestamp();
    Some(ts.as_nanosecond())
}

/// A token count: a whole number from 1 to 2^20.
fn tokens(text: &str) -> Option<usize> {
    let n: usize = text.trim().parse().ok()?;
    (1..=super::range::MAX_TOKENS).contains(&n).then_some(n)
}

fn missing(line: u64, what: &str, names: &[&str]) -> TraceError {
    TraceError {
        line,
        message: format!("no {what} column: expected one of {}", names.join(", ")),
    }
}

fn bad(line: u64, column: &str, what: &str, text: &str) -> TraceError {
    TraceError {
        line,
        message: format!("{column}: {text:?}: expected {what}"),
    }
}

/// One row from its three fields, each `(column name, text)`; a time in `per_s` units a second.
fn row(
    line: u64,
    (tk, tv): (&str, &str),
    (ik, iv): (&str, &str),
    (ok, ov): (&str, &str),
    per_s: f64,
) -> Result<(u64, i128, usize, usize, Vec<u64>), TraceError> {
    let count = "a token count from 1 to 2^20";
    let t = nanoseconds(tv, per_s)
        .ok_or_else(|| bad(line, tk, "a time (seconds or a date-time)", tv))?;
    let i = tokens(iv).ok_or_else(|| bad(line, ik, count, iv))?;
    let o = tokens(ov).ok_or_else(|| bad(line, ok, count, ov))?;
    Ok((line, t, i, o, Vec::new()))
}

fn csv_rows(bytes: &[u8], unit: TimeUnit, take: Take) -> Result<Raw, TraceError> {
    let mut r = csv::ReaderBuilder::new().flexible(false).from_reader(bytes);
    let headers = r
        .headers()
        .map_err(|e| TraceError {
            line: 1,
            message: format!("not a CSV header: {e}"),
        })?
        .clone();
    let find = |names: &[&str]| {
        headers
            .iter()
            .position(|h| names.contains(&h.trim().to_ascii_lowercase().as_str()))
    };
    let time = find(TIME).ok_or_else(|| missing(1, "time", TIME))?;
    let input = find(INPUT).ok_or_else(|| missing(1, "input length", INPUT))?;
    let output = find(OUTPUT).ok_or_else(|| missing(1, "output length", OUTPUT))?;
    let scale = if unit == TimeUnit::Ms { 1e3 } else { 1.0 };
    let mut out = Vec::new();
    for rec in r.records() {
        let rec = rec.map_err(|e| TraceError {
            line: e.position().map_or(0, |p| p.line()),
            message: format!("not a CSV row: {e}"),
        })?;
        let line = rec.position().map_or(0, |p| p.line());
        if out.len() >= take.cap() && beyond(take, line)? {
            break;
        }
        let field = |i: usize| (headers.get(i).unwrap_or(""), rec.get(i).unwrap_or(""));
        out.push(row(line, field(time), field(input), field(output), scale)?);
    }
    Ok(out)
}

fn jsonl(bytes: &[u8], unit: TimeUnit, take: Take) -> Result<Raw, TraceError> {
    let mut out = Vec::new();
    for (n, raw) in bytes.split(|&b| b == b'\n').enumerate() {
        let line = n as u64 + 1;
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        if out.len() >= take.cap() && beyond(take, line)? {
            break;
        }
        let v: serde_json::Map<String, serde_json::Value> =
            serde_json::from_slice(raw).map_err(|e| TraceError {
                line,
                message: format!("not a JSON object: {e}"),
            })?;
        let get = |names: &[&str]| {
            v.iter()
                .find(|(k, _)| names.contains(&k.to_ascii_lowercase().as_str()))
        };
        let text = |x: &serde_json::Value| match x {
            serde_json::Value::String(s) => s.clone(),
            other => other.to_string(),
        };
        let (tk, tv) = get(TIME).ok_or_else(|| missing(line, "time", TIME))?;
        let (ik, iv) = get(INPUT).ok_or_else(|| missing(line, "input length", INPUT))?;
        let (ok, ov) = get(OUTPUT).ok_or_else(|| missing(line, "output length", OUTPUT))?;
        // Mooncake writes `timestamp` in milliseconds.
        let ms = match unit {
            TimeUnit::Ms => true,
            TimeUnit::S => false,
            TimeUnit::Auto => tk == "timestamp" && ik == "input_length",
        };
        let (tv, iv, ov) = (text(tv), text(iv), text(ov));
        let per_s = if ms { 1e3 } else { 1.0 };
        let mut r = row(line, (tk, &tv), (ik, &iv), (ok, &ov), per_s)?;
        if let Some(h) = v.get("hash_ids") {
            let what = "an array of at most 2^16 block ids (whole numbers)";
            let ids: Option<Vec<u64>> = h
                .as_array()
                .filter(|a| a.len() <= MAX_HASH_IDS)
                .and_then(|a| a.iter().map(serde_json::Value::as_u64).collect());
            r.4 = ids.ok_or_else(|| bad(line, "hash_ids", what, &text(h)))?;
        }
        out.push(r);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn date_times_and_numbers_are_seconds() {
        let a = nanoseconds("2023-11-16 18:15:46.6805900", 1.0).expect("date-time");
        let b = nanoseconds("2023-11-16 18:15:50.9951690", 1.0).expect("date-time");
        assert_eq!(b - a, 4_314_579_000);
        assert_eq!(nanoseconds("3000", 1e3), Some(3_000_000_000));
        assert_eq!(nanoseconds("-1", 1.0), None);
        assert_eq!(nanoseconds("NaN", 1.0), None);
        assert_eq!(nanoseconds("1e300", 1.0), None);
    }

    fn fixture(name: &str) -> std::path::PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("../../tests/fixtures/serve/traces")
            .join(name)
    }

    #[test]
    fn the_azure_and_mooncake_traces_read_by_their_column_names() {
        let a = read(
            &fixture("azure_llm_conv_2023_head.csv"),
            TimeUnit::Auto,
            Take::All(1000),
        )
        .expect("azure");
        assert_eq!(a.len(), 40);
        assert_eq!(
            (a[0].at_s, a[0].input_tokens, a[0].output_tokens),
            (0.0, 374, 44)
        );
        assert_eq!(a[1].at_s, 4.314579);
        // 2023-11-16 18:16:10.8268860 − 18:15:46.6805900
        assert_eq!(a[39].at_s, 24.146296);
        assert_eq!((a[39].input_tokens, a[39].output_tokens), (28, 175));
        let m = read(
            &fixture("mooncake_conversation_head.jsonl"),
            TimeUnit::Auto,
            Take::All(1000),
        )
        .expect("mooncake");
        assert_eq!(m.len(), 20);
        assert_eq!((m[0].input_tokens, m[0].output_tokens), (6758, 500));
        assert_eq!(m[0].hash_ids, (0..14).collect::<Vec<u64>>());
        assert_eq!(m[1].hash_ids[..2], [0, 14]);
        // Milliseconds in Mooncake's layout: 5999 ms is 5.999 s.
        assert_eq!(m[10].at_s, 5.999);
        assert_eq!(m[19].at_s, 12.0);
        // A limit keeps the first requests; an explicit unit overrides the layout's.
        let m = read(
            &fixture("mooncake_conversation_head.jsonl"),
            TimeUnit::S,
            Take::First(8),
        )
        .expect("mooncake");
        assert_eq!((m.len(), m[7].at_s), (8, 3000.0));
    }

    #[test]
    fn bad_rows_name_the_line_and_column() {
        let e = parse(
            b"arrival_s,input_tokens,output_tokens\n0,5,5\n1,x,5\n",
            TimeUnit::Auto,
            Take::All(10),
        )
        .expect_err("bad");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("input_tokens"), "{}", e.message);
        let e = parse(b"a,b\n1,2\n", TimeUnit::Auto, Take::All(10)).expect_err("no columns");
        assert!(e.message.contains("no time column"), "{}", e.message);
        let e = parse(
            b"arrival_s,input_tokens,output_tokens\n2,5,5\n1,5,5\n",
            TimeUnit::S,
            Take::All(10),
        )
        .expect_err("back");
        assert_eq!(e.line, 3);
        let e = parse(
            b"{\"timestamp\": 1, \"input_length\": 0, \"output_length\": 1}\n",
            TimeUnit::Auto,
            Take::All(10),
        )
        .expect_err("zero");
        assert!(e.message.contains("input_length"), "{}", e.message);
        assert!(parse(b"", TimeUnit::Auto, Take::All(10)).is_err());
        let e = parse(
            b"{\"timestamp\": 1, \"input_length\": 5, \"output_length\": 1, \"hash_ids\": [1, -2]}\n",
            TimeUnit::Auto,
            Take::All(10),
        )
        .expect_err("negative id");
        assert!(e.message.contains("hash_ids"), "{}", e.message);
    }

    #[test]
    fn a_trace_beyond_the_cap_is_an_error_unless_a_limit_asks_for_its_first_requests() {
        let csv = b"arrival_s,input_tokens,output_tokens\n0,5,5\n1,5,5\n2,5,5\n\n";
        assert_eq!(
            parse(csv, TimeUnit::S, Take::All(3)).expect("fits").len(),
            3
        );
        let e = parse(csv, TimeUnit::S, Take::All(2)).expect_err("beyond the cap");
        assert_eq!(e.line, 4);
        assert!(
            e.message
                .starts_with("the trace holds more than 2 requests (this line is request 3)"),
            "{}",
            e.message
        );
        assert_eq!(
            parse(csv, TimeUnit::S, Take::First(2))
                .expect("first")
                .len(),
            2
        );
        let jsonl = b"{\"arrival_s\": 0, \"input_tokens\": 5, \"output_tokens\": 5}\n\n{\"arrival_s\": 1, \"input_tokens\": 5, \"output_tokens\": 5}\n\n";
        assert_eq!(
            parse(jsonl, TimeUnit::S, Take::All(2)).expect("fits").len(),
            2
        );
        let e = parse(jsonl, TimeUnit::S, Take::All(1)).expect_err("beyond the cap");
        assert_eq!(e.line, 3);
        assert!(e.message.contains("set `trace_limit`"), "{}", e.message);
    }
}
