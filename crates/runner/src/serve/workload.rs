//! The load: seeded prompts of exact token counts, request bodies, and one case at one
//! concurrency (warm-ups, then the measured requests, with a guard on the client's own delay).

use super::client::{open_connections, send, Client, Failure, Measured};
use super::spec::{Arrivals, CaseSpec, PromptKind, Warmup, Workload};
use serde::{Deserialize, Serialize};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

/// splitmix64: a small, fixed, seeded generator (prompts must be the same on every machine).
fn splitmix(state: &mut u64) -> u64 {
    *state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
    let mut z = *state;
    z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
    z ^ (z >> 31)
}

/// The token ids of prompt `index` of case `case`: `n` ids in `[vocab[0], vocab[1])`.
pub fn prompt_ids(seed: u64, case: usize, index: usize, n: usize, vocab: [u32; 2]) -> Vec<u32> {
    let mut s = seed ^ ((case as u64) << 40) ^ (index as u64).wrapping_mul(0x1000_0001);
    let span = u64::from(vocab[1].saturating_sub(vocab[0]).max(1));
    (0..n)
        .map(|_| vocab[0] + (splitmix(&mut s) % span) as u32)
        .collect()
}

/// A trace request's prompt from its block ids (Mooncake's `hash_ids`): block k holds the
/// seeded tokens of id `hash_ids[k]` (`block` of them), so requests sharing a block id share
/// its tokens; the prompt is `own`'s length, its tokens past the blocks `own`'s.
pub fn block_prompt_ids(
    seed: u64,
    hash_ids: &[u64],
    block: usize,
    own: Vec<u32>,
    vocab: [u32; 2],
) -> Vec<u32> {
    let n = own.len();
    let mut ids: Vec<u32> = Vec::with_capacity(n);
    for &h in hash_ids {
        if ids.len() >= n {
            break;
        }
        let take = block.min(n - ids.len());
        // Blocks are their own stream of seeds: case index `usize::MAX`, index the block id.
        ids.extend(prompt_ids(seed, usize::MAX, h as usize, take, vocab));
    }
    let done = ids.len();
    ids.extend_from_slice(&own[done..]);
    ids
}

/// SHA-256 of the prompt ids (little-endian u32s).
pub fn ids_sha256(ids: &[u32]) -> String {
    let bytes: Vec<u8> = ids.iter().flat_map(|i| i.to_le_bytes()).collect();
    kernelab_model::sha256_hex(&bytes)
}

/// One prompt, ready to send.
#[derive(Clone, Debug)]
pub struct Prompt {
    /// The ids it was made from.
    pub ids: Vec<u32>,
    /// The `prompt` field.
    pub value: serde_json::Value,
    /// Hash of the ids.
    pub sha256: String,
    /// Completion tokens asked for (the case's, or its trace request's).
    pub output_tokens: usize,
}

/// Builds the prompts of a case (`count` of them, from index `first`), asking the server's
/// detokenize endpoint for text when the workload sends text.
pub async fn prompts(
    client: &reqwest::Client,
    base_url: &str,
    w: &Workload,
    case_index: usize,
    case: &CaseSpec,
    first: usize,
    count: usize,
) -> Result<Vec<Prompt>, Failure> {
    let mut out = Vec::with_capacity(count);
    for i in first..first + count {
        let (input_tokens, output_tokens) = case.lengths(i);
        let ids = match case.replay.get(i % case.replay.len().max(1)) {
            Some(r) if !r.hash_ids.is_empty() => block_prompt_ids(
                w.seed,
                &r.hash_ids,
                case.block_tokens
                    .unwrap_or(super::spec::DEFAULT_BLOCK_TOKENS),
                prompt_ids(w.seed, case_index, i, input_tokens, w.vocab),
                w.vocab,
            ),
            _ => prompt_ids(w.seed, case_index, i, input_tokens, w.vocab),
        };
        let value = match (w.prompt, &w.detokenize) {
            (PromptKind::TokenIds, _) => serde_json::json!(ids),
            (PromptKind::Text, Some(path)) => {
                let r = client
                    .post(format!("{base_url}{path}"))
                    .json(&serde_json::json!({ "tokens": ids }))
                    .send()
                    .await
                    .map_err(|e| Failure(format!("detokenize: {e}")))?;
                let v: serde_json::Value = r
                    .json()
                    .await
                    .map_err(|e| Failure(format!("detokenize: not JSON: {e}")))?;
                let text = v
                    .get("text")
                    .and_then(|t| t.as_str())
                    .ok_or_else(|| Failure(format!("detokenize: no \"text\" in {v}")))?;
                if let Some(tpath) = &w.tokenize {
                    let n = count_tokens(client, &format!("{base_url}{tpath}"), text).await?;
                    if n != input_tokens {
                        return Err(Failure(format!(
                            "prompt {i}: its text tokenizes to {n} tokens, the case has {input_tokens}"
                        )));
                    }
                }
                serde_json::json!(text)
            }
            (PromptKind::Text, None) => {
                let words: Vec<String> = ids.iter().map(|i| format!("w{i}")).collect();
                serde_json::json!(words.join(" "))
            }
        };
        let sha256 = ids_sha256(&ids);
        out.push(Prompt {
            ids,
            value,
            sha256,
            output_tokens,
        });
    }
    Ok(out)
}

/// The number of tokens a tokenize endpoint gives for `text`.
async fn count_tokens(client: &reqwest::Client, url: &str, text: &str) -> Result<usize, Failure> {
    let r = client
        .post(url)
        .json(&serde_json::json!({ "input": text }))
        .send()
        .await
        .map_err(|e| Failure(format!("tokenize: {e}")))?;
    let v: serde_json::Value = r
        .json()
        .await
        .map_err(|e| Failure(format!("tokenize: not JSON: {e}")))?;
    v.get("tokens")
        .and_then(|t| t.as_array())
        .map(Vec::len)
        .ok_or_else(|| Failure(format!("tokenize: no \"tokens\" list in {v}")))
}

/// The request body for one prompt.
pub fn body(w: &Workload, model: Option<&str>, prompt: &Prompt) -> serde_json::Value {
    let mut b = serde_json::json!({
        "prompt": prompt.value,
        "max_tokens": prompt.output_tokens,
        "temperature": 0,
        "stream": w.stream,
    });
    if let Some(o) = b.as_object_mut() {
        if w.stream {
            o.insert(
                "stream_options".into(),
                serde_json::json!({"include_usage": true}),
            );
        }
        if w.ignore_eos {
            o.insert("ignore_eos".into(), serde_json::json!(true));
        }
        if w.min_tokens {
            o.insert("min_tokens".into(), serde_json::json!(prompt.output_tokens));
        }
        if let Some(m) = model {
            o.insert("model".into(), serde_json::json!(m));
        }
        for (k, v) in &w.extra {
            if let Ok(v) = serde_json::to_value(v) {
                o.insert(k.clone(), v);
            }
        }
    }
    b
}

/// A measured request, or why it failed.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct RequestOutcome {
    /// Index of the prompt within the case.
    pub index: usize,
    /// Hash of the prompt ids.
    pub input_sha256: String,
    /// What was measured.
    pub measured: Option<Measured>,
    /// Why it failed (including a token count that differs from the case).
    pub error: Option<String>,
    /// How late it was sent against its scheduled arrival (request-rate load only).
    #[serde(default)]
    pub send_lag_s: Option<f64>,
    /// A warm-up request (`warmup = "steady"`): kept to show the cold start, never measured.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub warmup: bool,
}

/// The client's own delay during a point: how late its timer ticks fired.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct Guard {
    /// Largest lateness of a 1 ms timer tick, seconds.
    pub loop_lag_max_s: f64,
    /// 99th percentile of the lateness.
    pub loop_lag_p99_s: f64,
    /// Largest send lag (request-rate load: how late a request left against its schedule).
    #[serde(default)]
    pub send_lag_max_s: f64,
    /// 99th percentile of the lateness with the client idle, measured just before the point:
    /// the timer's own granularity (tokio rounds a 1 ms sleep up to its millisecond wheel, so
    /// an idle loop already shows 1–2 ms). The guard judges the lateness above this floor.
    #[serde(default)]
    pub idle_lag_p99_s: f64,
}

impl Guard {
    /// The loaded p99 lateness above the idle floor.
    pub fn excess_lag_p99_s(&self) -> f64 {
        (self.loop_lag_p99_s - self.idle_lag_p99_s).max(0.0)
    }
}

/// Lateness of one 1 ms timer tick, seconds.
async fn tick_lateness() -> f64 {
    let at = Instant::now();
    tokio::time::sleep(Duration::from_millis(1)).await;
    (at.elapsed().as_secs_f64() - 0.001).max(0.0)
}

/// 99th percentile of sorted values (0 when empty).
fn p99(sorted: &[f64]) -> f64 {
    sorted
        .get((sorted.len() as f64 * 0.99) as usize)
        .or(sorted.last())
        .copied()
        .unwrap_or(0.0)
}

/// The result of one case at one concurrency.
#[derive(Clone, Debug, PartialEq)]
pub struct PointResult {
    /// One outcome per measured request, in index order.
    pub requests: Vec<RequestOutcome>,
    /// Wall time of the measured requests (first send to last end).
    pub wall_s: f64,
    /// The client guard.
    pub guard: Guard,
    /// The warm-up requests of `warmup = "steady"`, in order (empty for a fixed warm-up).
    pub warmup: Vec<RequestOutcome>,
    /// `warmup = "steady"`: whether the warm-up became steady before its cap.
    pub steady: Option<bool>,
}

/// The token counts of `m` checked against what was asked (`input`, `output`);
/// `Some(reason)` on a mismatch.
pub fn check_counts(m: &Measured, (input, output): (usize, usize)) -> Option<String> {
    if let Some(p) = m.prompt_tokens {
        if p != input as u64 {
            return Some(format!(
                "the server counted {p} prompt tokens, the case has {input}"
            ));
        }
    }
    match m.tokens() {
        Some(c) if c != output as u64 => Some(format!(
            "the server returned {c} completion tokens, the case asks for {output}"
        )),
        None => Some("the completion token count is unavailable (no usage, no stream)".into()),
        _ => None,
    }
}

/// Arrival offsets (seconds from the start) of `n` requests at `rate` per second.
pub fn schedule(n: usize, rate: f64, arrivals: Arrivals, seed: u64) -> Vec<f64> {
    let mut s = seed ^ 0xA5A5_5A5A;
    let mut t = 0.0;
    (0..n)
        .map(|i| {
            let at = t;
            let gap = match arrivals {
                Arrivals::Constant => 1.0 / rate,
                Arrivals::Poisson => {
                    // Uniform in (0, 1], then the exponential quantile.
                    let u = ((splitmix(&mut s) >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
                    -u.ln() / rate
                }
            };
            t += gap;
            let _ = i;
            at
        })
        .collect()
}

/// Where requests go.
#[derive(Clone, Copy)]
pub struct Target<'a> {
    /// The HTTP client.
    pub client: &'a Client,
    /// The completion URL.
    pub url: &'a str,
    /// The `model` field, if sent.
    pub model: Option<&'a str>,
    /// The server's health URL: a point at concurrency c opens its c connections there
    /// before it is measured ([`open_connections`]).
    pub health: Option<&'a str>,
}

/// One measured request with its token counts checked.
async fn request(
    target: Target<'_>,
    w: &Workload,
    timeout: Duration,
    index: usize,
    p: &Prompt,
    send_lag_s: Option<f64>,
) -> RequestOutcome {
    let b = body(w, target.model, p);
    let (measured, error) = match send(target.client, target.url, &b, w.stream, timeout).await {
        Ok(m) => {
            let bad = check_counts(&m, (p.ids.len(), p.output_tokens));
            (Some(m), bad)
        }
        Err(e) => (None, Some(e.0)),
    };
    RequestOutcome {
        index,
        input_sha256: p.sha256.clone(),
        measured,
        error,
        send_lag_s,
        warmup: false,
    }
}

/// Whether the last `last` warm-up requests agree: each measured, and on TTFT (E2E when not
/// streamed) and on TPOT (where measured) their spread, max − min, is at most `within` of
/// their median.
pub fn is_steady(warm: &[RequestOutcome], last: usize, within: f64) -> bool {
    if last < 2 || warm.len() < last {
        return false;
    }
    let tail: Option<Vec<&Measured>> = warm[warm.len() - last..]
        .iter()
        .map(|o| o.measured.as_ref().filter(|_| o.error.is_none()))
        .collect();
    let Some(tail) = tail else { return false };
    let agree = |v: Vec<f64>| -> bool {
        let mut v = v;
        v.sort_by(f64::total_cmp);
        let Some(med) = kernelab_stats::rank::median(&v) else {
            return false;
        };
        let (lo, hi) = (v[0], v[v.len() - 1]);
        med > 0.0 && (hi - lo) / med <= within
    };
    let first: Vec<f64> = tail.iter().map(|m| m.ttft_s.unwrap_or(m.e2e_s)).collect();
    let tpot: Vec<f64> = tail.iter().filter_map(|m| m.tpot_s()).collect();
    agree(first) && (tpot.len() < last || agree(tpot))
}

/// The requests of one point: the warm-up prompts, then the measured ones.
pub struct PointPrompts<'a> {
    /// Warm-up prompts (all of them for a fixed warm-up, up to the cap for a steady one).
    pub warmup: &'a [Prompt],
    /// The measured prompts.
    pub measured: &'a [Prompt],
}

/// Runs `prompts.measured` requests after the warm-up ones: at `concurrency` in flight (each
/// worker takes the next prompt when its request ends), or with a request rate at its
/// scheduled arrivals with `concurrency` as the cap on requests in flight. `measuring` is
/// awaited once, when the warm-up is over and just before the measured requests start (to
/// read counters that must cover the measured requests only).
pub async fn run_point<'a>(
    target: Target<'a>,
    w: &'a Workload,
    case: &'a CaseSpec,
    concurrency: usize,
    prompts: PointPrompts<'a>,
    measuring: impl std::future::Future<Output = ()>,
) -> PointResult {
    let PointPrompts {
        warmup,
        measured: prompts,
    } = prompts;
    let Target {
        client,
        url,
        model,
        health,
    } = target;
    let timeout = kernelab_model::duration_clamped(w.request_timeout_s);
    let (mut warm, mut steady) = (Vec::new(), None);
    match w.warmup {
        Warmup::Requests(_) => {
            for p in warmup {
                let _ = send(client, url, &body(w, model, p), w.stream, timeout).await;
            }
        }
        Warmup::Steady => {
            // One at a time, so that each sees the server alone; the prompts are indexed after
            // the measured ones.
            let mut reached = false;
            for (i, p) in warmup.iter().enumerate() {
                let t = Target {
                    client,
                    url,
                    model,
                    health,
                };
                let mut o = request(t, w, timeout, prompts.len() + i, p, None).await;
                o.warmup = true;
                warm.push(o);
                if is_steady(&warm, w.steady.last, w.steady.within) {
                    reached = true;
                    break;
                }
            }
            steady = Some(reached);
        }
    }
    // The warm-up left one connection open; the point's other streams would open theirs
    // while measured (a TCP and HTTP set-up in their first request's TTFT).
    let workers = concurrency.max(1);
    if let Some(h) = health.filter(|_| workers > 1) {
        let n = workers.min(prompts.len());
        open_connections(client, url, w.stream, h, n, timeout).await;
    }
    let idle_lag_p99_s = idle_floor().await;
    measuring.await;
    let (next, done) = (&AtomicUsize::new(0), &AtomicUsize::new(0));
    let t0 = Instant::now();
    let one = |i: usize, p: &'a Prompt, lag: Option<f64>| {
        let t = Target {
            client,
            url,
            model,
            health,
        };
        request(t, w, timeout, i, p, lag)
    };
    let closed = || async move {
        let mut out = Vec::new();
        loop {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(p) = prompts.get(i) else { break };
            out.push(one(i, p, None).await);
        }
        done.fetch_add(1, Ordering::Relaxed);
        out
    };
    let open = |at: Vec<f64>| async move {
        let cap = tokio::sync::Semaphore::new(workers);
        let out = futures_util::future::join_all(prompts.iter().enumerate().map(|(i, p)| {
            let (cap, when) = (&cap, t0 + kernelab_model::duration_clamped(at[i]));
            async move {
                tokio::time::sleep_until(when.into()).await;
                let _permit = cap.acquire().await.ok();
                let lag = Instant::now().saturating_duration_since(when).as_secs_f64();
                one(i, p, Some(lag)).await
            }
        }))
        .await;
        done.store(workers, Ordering::Relaxed);
        vec![out]
    };
    let load = async {
        // A trace's own arrival times, else a rate's schedule, else fixed concurrency.
        let arrivals = if case.replay.is_empty() {
            case.rate
                .or(w.rate)
                .map(|rate| schedule(prompts.len(), rate, w.arrivals, w.seed))
        } else {
            Some(
                case.replay
                    .iter()
                    .map(|r| r.at_s)
                    .take(prompts.len())
                    .collect(),
            )
        };
        match arrivals {
            Some(at) => open(at).await,
            None => futures_util::future::join_all((0..workers).map(|_| closed())).await,
        }
    };
    let ticker = async {
        let mut lags = Vec::new();
        while done.load(Ordering::Relaxed) < workers {
            lags.push(tick_lateness().await);
        }
        lags
    };
    let (results, mut lags) = tokio::join!(load, ticker);
    let wall_s = t0.elapsed().as_secs_f64();
    let mut requests: Vec<RequestOutcome> = results.into_iter().flatten().collect();
    requests.sort_by_key(|r| r.index);
    let guard = guard_of(&requests, &mut lags, idle_lag_p99_s);
    PointResult {
        requests,
        wall_s,
        guard,
        warmup: warm,
        steady,
    }
}

/// The idle floor of the guard: the p99 lateness of 100 ticks with nothing else on the loop.
async fn idle_floor() -> f64 {
    let mut idle = Vec::with_capacity(100);
    for _ in 0..100 {
        idle.push(tick_lateness().await);
    }
    idle.sort_by(f64::total_cmp);
    p99(&idle)
}

/// The guard of a point from its requests' send lags and the loop's tick lateness.
fn guard_of(requests: &[RequestOutcome], lags: &mut [f64], idle_lag_p99_s: f64) -> Guard {
    lags.sort_by(f64::total_cmp);
    Guard {
        send_lag_max_s: requests
            .iter()
            .filter_map(|r| r.send_lag_s)
            .fold(0.0, f64::max),
        loop_lag_max_s: lags.last().copied().unwrap_or(0.0),
        loop_lag_p99_s: p99(lags),
        idle_lag_p99_s,
    }
}

/// The order of the two sides for the `i`-th request of a paired point: A B, then B A, …
/// (`first` is the side that goes first at request 0).
pub fn pair_order(i: usize, first: usize) -> [usize; 2] {
    if (i % 2 == 0) == (first == 0) {
        [0, 1]
    } else {
        [1, 0]
    }
}

/// One point on two servers that are both running (`[placement] mode = "together"`, one
/// request in flight): the warm-ups alternate between the sides, then measured request `i`
/// goes to both in the order [`pair_order`] gives (A B B A …), one at a time, so that both see
/// the same host state. Index 0 of `targets`, `prompts` and the result is the baseline.
/// A side's `wall_s` is the sum of its own requests' times (its busy time: the other side's
/// requests run in between). `measuring` is awaited once, just before the measured requests.
pub async fn run_pair_point<'a>(
    targets: [Target<'a>; 2],
    w: &'a Workload,
    prompts: [PointPrompts<'a>; 2],
    first: usize,
    measuring: impl std::future::Future<Output = ()>,
) -> [PointResult; 2] {
    let timeout = kernelab_model::duration_clamped(w.request_timeout_s);
    let n = prompts[0].measured.len().min(prompts[1].measured.len());
    let mut warm: [Vec<RequestOutcome>; 2] = [Vec::new(), Vec::new()];
    let mut steady = [None, None];
    match w.warmup {
        Warmup::Requests(_) => {
            let most = prompts[0].warmup.len().max(prompts[1].warmup.len());
            for i in 0..most {
                for s in pair_order(i, first) {
                    if let Some(p) = prompts[s].warmup.get(i) {
                        let t = targets[s];
                        let b = body(w, t.model, p);
                        let _ = send(t.client, t.url, &b, w.stream, timeout).await;
                    }
                }
            }
        }
        Warmup::Steady => {
            let mut reached = [false, false];
            let most = prompts[0].warmup.len().max(prompts[1].warmup.len());
            for i in 0..most {
                for s in pair_order(i, first) {
                    let Some(p) = prompts[s].warmup.get(i).filter(|_| !reached[s]) else {
                        continue;
                    };
                    let mut o = request(targets[s], w, timeout, n + i, p, None).await;
                    o.warmup = true;
                    warm[s].push(o);
                    reached[s] = is_steady(&warm[s], w.steady.last, w.steady.within);
                }
                if reached == [true, true] {
                    break;
                }
            }
            steady = [Some(reached[0]), Some(reached[1])];
        }
    }
    let idle_lag_p99_s = idle_floor().await;
    measuring.await;
    let done = &std::sync::atomic::AtomicBool::new(false);
    let load = async {
        let mut out: [Vec<RequestOutcome>; 2] = [Vec::with_capacity(n), Vec::with_capacity(n)];
        let mut busy = [0.0f64; 2];
        for i in 0..n {
            for s in pair_order(i, first) {
                let t0 = Instant::now();
                let p = &prompts[s].measured[i];
                out[s].push(request(targets[s], w, timeout, i, p, None).await);
                busy[s] += t0.elapsed().as_secs_f64();
            }
        }
        done.store(true, Ordering::Relaxed);
        (out, busy)
    };
    let ticker = async {
        let mut lags = Vec::new();
        while !done.load(Ordering::Relaxed) {
            lags.push(tick_lateness().await);
        }
        lags
    };
    let (([a, b], busy), mut lags) = tokio::join!(load, ticker);
    let guard = guard_of(&[], &mut lags, idle_lag_p99_s);
    let [wa, wb] = warm;
    [(a, wa, 0), (b, wb, 1)].map(|(requests, warmup, s)| PointResult {
        requests,
        wall_s: busy[s],
        guard,
        warmup,
        steady: steady[s],
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prompts_are_seeded_exact_and_in_range() {
        let a = prompt_ids(7, 0, 3, 100, [100, 200]);
        assert_eq!(a.len(), 100);
        assert_eq!(a, prompt_ids(7, 0, 3, 100, [100, 200]));
        assert_ne!(a, prompt_ids(7, 0, 4, 100, [100, 200]));
        assert_ne!(a, prompt_ids(8, 0, 3, 100, [100, 200]));
        assert!(a.iter().all(|&i| (100..200).contains(&i)));
        assert_eq!(ids_sha256(&[1]), kernelab_model::sha256_hex(&[1, 0, 0, 0]));
    }

    #[test]
    fn arrival_schedules() {
        let c = schedule(4, 2.0, Arrivals::Constant, 1);
        assert_eq!(c, vec![0.0, 0.5, 1.0, 1.5]);
        let p = schedule(20_000, 4.0, Arrivals::Poisson, 1);
        assert_eq!(p, schedule(20_000, 4.0, Arrivals::Poisson, 1));
        let mean_gap = p[p.len() - 1] / (p.len() - 1) as f64;
        assert!((mean_gap - 0.25).abs() < 0.01, "{mean_gap}");
        assert!(p.windows(2).all(|w| w[1] > w[0]));
    }

    #[test]
    fn paired_requests_alternate_a_b_b_a() {
        let order: Vec<[usize; 2]> = (0..4).map(|i| pair_order(i, 0)).collect();
        assert_eq!(order, vec![[0, 1], [1, 0], [0, 1], [1, 0]]);
        let order: Vec<[usize; 2]> = (0..3).map(|i| pair_order(i, 1)).collect();
        assert_eq!(order, vec![[1, 0], [0, 1], [1, 0]]);
    }

    #[test]
    fn counts_are_checked() {
        let case = (4, 3);
        let mut m = Measured {
            prompt_tokens: Some(4),
            completion_tokens: Some(3),
            ..Default::default()
        };
        assert_eq!(check_counts(&m, case), None);
        m.completion_tokens = Some(2);
        let e = check_counts(&m, case).expect("mismatch");
        assert!(e.contains("returned 2 completion tokens"), "{e}");
        m.completion_tokens = Some(3);
        m.prompt_tokens = Some(5);
        assert!(check_counts(&m, case).is_some());
    }
}
