//! The client-overhead benchmark of `kernelab serve` (docs/benchmarks.md): the streaming
//! client on one core (a current-thread runtime) against the scripted SSE server, whose true
//! TPOT is the time between its own token writes. Reports the client's TPOT over the true TPOT
//! at 2,000 tokens/s per stream, and at 256 concurrent streams.
//!
//! `cargo run --release -p kernelab-runner --example serve_client_bench [STREAMS...]`
//! (`BENCH_TOKENS`, default 400 tokens per stream; `BENCH_INTERVAL_US`, default 500 µs between
//! tokens, i.e. 2,000 tokens/s per stream).

use kernelab_runner::serve::client::send;
use kernelab_runner::serve::scripted::{Script, Scripted};
use std::time::{Duration, Instant};

fn main() {
    let streams: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let streams = if streams.is_empty() {
        vec![1, 16, 64, 256]
    } else {
        streams
    };
    let env = |k: &str, d: u64| {
        std::env::var(k)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(d)
    };
    let tokens = env("BENCH_TOKENS", 400);
    let interval_us = env("BENCH_INTERVAL_US", 500);
    let server = match Scripted::start(Script {
        ttft: Duration::from_millis(10),
        interval: Duration::from_micros(interval_us),
    }) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("cannot start the scripted server: {e}");
            std::process::exit(2);
        }
    };
    let url = format!("http://127.0.0.1:{}/v1/completions", server.port);
    let rt = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("cannot start the runtime: {e}");
            std::process::exit(2);
        }
    };
    let client = reqwest::Client::new();
    let body = serde_json::json!({"prompt": [1, 2, 3], "max_tokens": tokens, "stream": true});
    println!("streams | tokens/s per stream (true) | client TPOT | true TPOT | client − true | failed | wall");
    for &n in &streams {
        let before = server.truths().len();
        let t0 = Instant::now();
        let results = rt.block_on(futures_util::future::join_all(
            (0..n).map(|_| send(&client, &url, &body, true, Duration::from_secs(60))),
        ));
        let wall = t0.elapsed().as_secs_f64();
        let truths = server.truths();
        let truth: Vec<f64> = truths[before..].iter().map(|t| t.tpot_s).collect();
        let ok: Vec<f64> = results
            .iter()
            .filter_map(|r| r.as_ref().ok())
            .filter_map(|m| m.tpot_s())
            .collect();
        let failed = results.iter().filter(|r| r.is_err()).count();
        let mean = |v: &[f64]| v.iter().sum::<f64>() / v.len().max(1) as f64;
        let (c, t) = (mean(&ok), mean(&truth));
        println!(
            "{n:>7} | {:>19.0} | {:>8.2} µs | {:>6.2} µs | {:>+12.3}% | {failed:>6} | {wall:.2} s",
            1.0 / t,
            c * 1e6,
            t * 1e6,
            (c / t - 1.0) * 100.0
        );
    }
}
